"""`cogmem memory get|list|update|delete|history`: one memory at a time, within a scope (sql/185-app-verbs.sql),
as an application reaches them (Mem0's get, get_all, update, delete and history)."""

from __future__ import annotations

import json
from datetime import datetime

import click

from cogmem_pg.cli.common import Context, emit, json_option, parse_json, pass_context, scope_options, sql_errors


@click.group("memory")
def memory_group() -> None:
    """One memory at a time within a scope (--person, --agent): get, list, update, delete, history."""


def _line(m) -> str:
    """A memory as one line: id, ring, scope, what replaced it, its text."""
    scope = "/".join(x for x in (m.person, m.agent) if x) or "shared"
    replaced = f" superseded by {m.superseded_by}" if m.valid_until is not None else ""
    return f"{m.memory_id:>6} [{m.ring}] ({scope}){replaced}  {m.content}"


@memory_group.command("get")
@click.argument("tenant")
@click.argument("memory_id", type=int)
@scope_options
@json_option
@pass_context
def get_cmd(ctx: Context, tenant: str, memory_id: int, person: str | None, agent: str | None, as_json: bool) -> None:
    """Show MEMORY_ID, as the scope sees it."""
    with sql_errors():
        memory = ctx.client().get_memory(tenant, memory_id, person=person, agent=agent)
    emit([memory], as_json, _line)


@memory_group.command("list")
@click.argument("tenant")
@click.option("--ring", default=None, help="Only this ring (or kind: rule, fact, ...).")
@click.option("--since", type=click.DateTime(), default=None, help="Remembered at or after this moment.")
@click.option("--until", type=click.DateTime(), default=None, help="Remembered before this moment.")
@click.option("--after-id", "after_id", type=int, default=None, help="The last memory_id of the previous page.")
@click.option("--page-size", type=int, default=100, show_default=True, help="At most this many (1 to 1000).")
@click.option("--superseded", is_flag=True, help="The versions replaced too.")
@click.option("--own", is_flag=True, help="Only what this scope may change (the person's own), not what is shared.")
@scope_options
@json_option
@pass_context
def list_cmd(
    ctx: Context,
    tenant: str,
    ring: str | None,
    since: datetime | None,
    until: datetime | None,
    after_id: int | None,
    page_size: int,
    superseded: bool,
    own: bool,
    person: str | None,
    agent: str | None,
    as_json: bool,
) -> None:
    """A page of the memories the scope sees, newest first (the next: --after-id the last id shown)."""
    with sql_errors():
        page = ctx.client().list_memories(
            tenant, ring, person=person, agent=agent, since=since, until=until, after_id=after_id,
            page_size=page_size, superseded=superseded, shared=not own,
        )  # fmt: skip
    emit(page, as_json, _line)


@memory_group.command("update")
@click.argument("tenant")
@click.argument("memory_id", type=int)
@click.argument("content")
@click.option("--ring", default=None, help="Its ring, or a kind (default: the old version's ring).")
@click.option("--topic", "topics", multiple=True, help="Topic (default: detected).")
@click.option("--source", default="{}", help='Provenance as JSON, e.g. \'{"who": "ayse"}\'.')
@scope_options
@json_option
@pass_context
def update_cmd(
    ctx: Context,
    tenant: str,
    memory_id: int,
    content: str,
    ring: str | None,
    topics: tuple[str, ...],
    source: str,
    person: str | None,
    agent: str | None,
    as_json: bool,
) -> None:
    """Replace MEMORY_ID by CONTENT: a new version that supersedes it (the old stays for history)."""
    with sql_errors():
        done = ctx.client().update_memory(
            tenant, memory_id, content, ring, list(topics) or None, source=parse_json(source, "--source"),
            person=person, agent=agent,
        )  # fmt: skip
    if as_json:
        emit([done], True, str)
    elif done.action == "conflict":
        click.echo(
            f"held as conflict {done.conflict_id}: contradicts memory "
            f"{', '.join(map(str, done.conflicts_with or []))}; memory {memory_id} stays current"
        )
    elif done.memory_id == memory_id:
        click.echo(f"memory {memory_id} unchanged: the same text")
    else:
        click.echo(f"memory {done.memory_id} supersedes memory {memory_id} ({done.action}, in {done.ring})")


@memory_group.command("delete")
@click.argument("tenant")
@click.argument("memory_id", type=int)
@click.option("--reason", default=None, help="Why, for the audit (default: delete_memory).")
@scope_options
@pass_context
def delete_cmd(
    ctx: Context, tenant: str, memory_id: int, reason: str | None, person: str | None, agent: str | None
) -> None:
    """Erase MEMORY_ID, of the scope's own (the audit keeps a tombstone)."""
    with sql_errors():
        ctx.client().delete_memory(tenant, memory_id, reason, person=person, agent=agent)
    click.echo(f"memory {memory_id} erased")


@memory_group.command("history")
@click.argument("tenant")
@click.argument("memory_id", type=int)
@scope_options
@json_option
@pass_context
def history_cmd(
    ctx: Context, tenant: str, memory_id: int, person: str | None, agent: str | None, as_json: bool
) -> None:
    """MEMORY_ID's versions, oldest first, then what happened to each (the audit trail)."""
    with sql_errors():
        rows = ctx.client().memory_history(tenant, memory_id, person=person, agent=agent)
    emit(
        rows,
        as_json,
        lambda h: (
            f"{h.at:%Y-%m-%d %H:%M:%S} {h.kind:7} {h.memory_id:>6} {h.event:19} "
            + (h.content if h.kind == "version" else json.dumps(h.detail, ensure_ascii=False, default=str))
        ),
    )


COMMANDS = (memory_group,)
