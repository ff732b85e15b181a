"""The guard: what applies before an action, a learning after a mistake, and its acknowledgement."""

from __future__ import annotations

import click

from cogmem_pg.cli.common import Context, emit, json_option, pass_context, scope_options, sql_errors


@click.group()
def guard() -> None:
    """Before acting: what applies; after a mistake: a learning."""


@guard.command("check")
@click.argument("tenant")
@click.argument("area")
@click.argument("action")
@scope_options
@json_option
@pass_context
def guard_check(
    ctx: Context, tenant: str, area: str, action: str, person: str | None, agent: str | None, as_json: bool
) -> None:
    """What applies before ACTION in AREA; exits 2 when something blocks it."""
    with sql_errors():
        items = ctx.client().guard_check(tenant, area, action, person=person, agent=agent)
    emit(items, as_json, lambda i: f"{'BLOCKS ' if i.blocking else ''}[{i.kind}] {i.content}")
    if any(i.blocking for i in items):
        ctx.exit_code = 2


@guard.command("report")
@click.argument("tenant")
@click.argument("area")
@click.argument("description")
@click.option("--action", default=None, help="What was done that went wrong.")
@click.option("--repeat-of", type=int, default=None, help="The learning this repeats.")
@scope_options
@json_option
@pass_context
def guard_report(
    ctx: Context,
    tenant: str,
    area: str,
    description: str,
    action: str | None,
    repeat_of: int | None,
    person: str | None,
    agent: str | None,
    as_json: bool,
) -> None:
    """Report a mistake in AREA: it becomes (or strengthens) a learning."""
    with sql_errors():
        report = ctx.client().report_error(
            tenant, area, description, action=action, repeat_of=repeat_of, person=person, agent=agent
        )
    emit(
        [report],
        as_json,
        lambda r: f"learning {r.learning_id}: {r.errors} errors" + (", blocking" if r.blocking else ""),
    )


@guard.command("ack")
@click.argument("tenant")
@click.argument("learning_id", type=int)
@click.option("--note", default=None)
@pass_context
def guard_ack(ctx: Context, tenant: str, learning_id: int, note: str | None) -> None:
    """Acknowledge a learning (it stops blocking until it repeats)."""
    with sql_errors():
        ctx.client().acknowledge(tenant, learning_id, note)
    click.echo(f"learning {learning_id} acknowledged")


COMMANDS = (guard,)
