"""What waits for a person: conflicts held because they contradict what a tenant holds, and candidate
rules and incidents for the never-cut rings (the rules group)."""

from __future__ import annotations

import click

from cogmem_pg.cli.common import Context, emit, json_option, pass_context, sql_errors


@click.group()
def conflicts() -> None:
    """What was held because it contradicts what the tenant holds."""


@conflicts.command("list")
@click.argument("tenant")
@json_option
@pass_context
def conflicts_list(ctx: Context, tenant: str, as_json: bool) -> None:
    with sql_errors():
        rows = ctx.client().open_conflicts(tenant)
    emit(rows, as_json, lambda c: f"{c.conflict_id:>5} {c.verdict:12} {c.content}  (contradicts {c.conflicts_with})")


@conflicts.command("resolve")
@click.argument("conflict_id", type=int)
@click.argument("resolution", type=click.Choice(["paradigm_shift", "exception", "override"]))
@click.option("--note", default=None)
@json_option
@pass_context
def conflicts_resolve(ctx: Context, conflict_id: int, resolution: str, note: str | None, as_json: bool) -> None:
    with sql_errors():
        resolved = ctx.client().resolve_conflict(conflict_id, resolution, note)
    emit([resolved], as_json, lambda r: f"conflict {conflict_id}: {r.status}, memory {r.memory_id or '-'}")


@click.group()
def rules() -> None:
    """Candidate rules and incidents: what may belong in a never-cut ring, waiting for a person."""


@rules.command("pending")
@click.argument("tenant")
@json_option
@pass_context
def rules_pending(ctx: Context, tenant: str, as_json: bool) -> None:
    """The candidates, newest first, with the question to ask."""
    with sql_errors():
        rows = ctx.client().pending_rules(tenant)
    emit(rows, as_json, lambda r: f"{r.memory_id:>6} {r.ring:14} {r.question}")


@rules.command("confirm")
@click.argument("tenant")
@click.argument("memory_id", type=int)
@click.argument("ring", type=click.Choice(["dos_and_donts", "shocks", "long_term", "habits", "procedures", "fresh"]))
@pass_context
def rules_confirm(ctx: Context, tenant: str, memory_id: int, ring: str) -> None:
    """Confirm a memory (a candidate) into RING."""
    with sql_errors():
        ctx.client().confirm_ring(tenant, memory_id, ring)
    click.echo(f"memory {memory_id} is in {ring}")


@rules.command("dismiss")
@click.argument("tenant")
@click.argument("memory_id", type=int)
@pass_context
def rules_dismiss(ctx: Context, tenant: str, memory_id: int) -> None:
    """Say a candidate is no rule or incident (it becomes an ordinary fresh memory)."""
    with sql_errors():
        ctx.client().dismiss_candidate(tenant, memory_id)
    click.echo(f"memory {memory_id} is no candidate any more")


COMMANDS = (conflicts, rules)
