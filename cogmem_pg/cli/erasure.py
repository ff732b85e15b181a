"""Erasure: one memory and what quotes it, or everything about a person; the audit trail keeps tombstones."""

from __future__ import annotations

import json

import click

from cogmem_pg.cli.common import Context, json_option, pass_context, sql_errors


@click.command()
@click.argument("tenant")
@click.argument("memory_id", type=int)
@click.option("--reason", required=True, help="Why (kept in the tombstone, e.g. 'GDPR request 2026/17').")
@pass_context
def erase(ctx: Context, tenant: str, memory_id: int, reason: str) -> None:
    """Erase one memory and what quotes it; the audit trail keeps a tombstone."""
    with sql_errors():
        gone = ctx.client().erase(tenant, memory_id, reason)
    click.echo(f"memory {memory_id} erased" if gone else f"no memory {memory_id}")


@click.command("erase-subject")
@click.argument("tenant")
@click.argument("subject")
@click.option("--reason", required=True, help="Why (kept in the tombstones).")
@json_option
@pass_context
def erase_subject(ctx: Context, tenant: str, subject: str, reason: str, as_json: bool) -> None:
    """Erase everything about a person (KVKK art. 7, GDPR art. 17)."""
    with sql_errors():
        counts = ctx.client().erase_subject(tenant, subject, reason)
    if as_json:
        click.echo(json.dumps(counts))
        return
    for kind, count in counts.items():
        click.echo(f"{kind:14} {count}")


@click.command("erase-person")
@click.argument("tenant")
@click.argument("person")
@click.option("--reason", required=True, help="Why (kept in the tombstones).")
@json_option
@pass_context
def erase_person(ctx: Context, tenant: str, person: str, reason: str, as_json: bool) -> None:
    """Erase everything remembered for PERSON (their scope), whatever it says."""
    with sql_errors():
        counts = ctx.client().erase_person(tenant, person, reason)
    if as_json:
        click.echo(json.dumps(counts))
        return
    for kind, count in counts.items():
        click.echo(f"{kind:14} {count}")


COMMANDS = (erase, erase_subject, erase_person)
