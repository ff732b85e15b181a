"""The vault: secrets kept encrypted, apart from memory; listed by name, never by value."""

from __future__ import annotations

import click

from cogmem_pg.cli.common import Context, emit, json_option, pass_context, sql_errors


@click.group()
def vault() -> None:
    """Secrets kept encrypted, apart from memory (a separate grant: cogmem.grant_tenant(..., vault => true))."""


@vault.command("put")
@click.argument("tenant")
@click.argument("name")
@click.option("--secret", prompt=True, hide_input=True, help="The secret (asked for when not given).")
@click.option("--description", default=None)
@click.option("--subject", default=None, help="Whose it is (erase_subject removes it with the rest).")
@pass_context
def vault_put(ctx: Context, tenant: str, name: str, secret: str, description: str | None, subject: str | None) -> None:
    with sql_errors():
        version = ctx.client().vault_put(tenant, name, secret, description or "", subject)
    click.echo(f"{name}: version {version}")


@vault.command("get")
@click.argument("tenant")
@click.argument("name")
@pass_context
def vault_get(ctx: Context, tenant: str, name: str) -> None:
    with sql_errors():
        click.echo(ctx.client().vault_get(tenant, name))


@vault.command("list")
@click.argument("tenant")
@json_option
@pass_context
def vault_list(ctx: Context, tenant: str, as_json: bool) -> None:
    """Names and descriptions, never the secrets."""
    with sql_errors():
        rows = ctx.client().vault_list(tenant)
    emit(rows, as_json, lambda v: f"{v.name:24} v{v.version} {v.description or ''}")


@vault.command("rm")
@click.argument("tenant")
@click.argument("name")
@pass_context
def vault_rm(ctx: Context, tenant: str, name: str) -> None:
    with sql_errors():
        gone = ctx.client().vault_delete(tenant, name)
    click.echo(f"{name}: {'deleted' if gone else 'not there'}")


COMMANDS = (vault,)
