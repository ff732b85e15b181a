"""Working sessions and their episodes, the briefing that sums them up, and conversation turns passed
through attention (observe)."""

from __future__ import annotations

from uuid import UUID

import click

from cogmem_pg.cli.common import Context, emit, json_option, pass_context, scope_options, sql_errors


@click.group()
def session() -> None:
    """Working sessions: start one, end it with what happened (an episode)."""


@session.command("start")
@click.argument("tenant")
@click.option("--project", default=None)
@click.option("--goal", default=None)
@scope_options
@pass_context
def session_start(
    ctx: Context, tenant: str, project: str | None, goal: str | None, person: str | None, agent: str | None
) -> None:
    """Prints the session id (pass it as recall's and observe's conversation)."""
    with sql_errors():
        click.echo(ctx.client().start_session(tenant, project, goal, person=person, agent=agent))


@session.command("end")
@click.argument("session_id", type=click.UUID)
@click.argument("summary")
@click.option("--decision", "decisions", multiple=True)
@click.option("--open", "open_items", multiple=True, help="An item still open.")
@click.option("--next", "next_steps", multiple=True, help="A next step.")
@click.option("--fact", "facts", multiple=True, help="A fact learned, remembered as a memory.")
@json_option
@pass_context
def session_end(
    ctx: Context, session_id: UUID, summary: str, decisions, open_items, next_steps, facts, as_json: bool
) -> None:
    with sql_errors():
        episode = ctx.client().end_session(
            session_id, summary, decisions=decisions, open_items=open_items, next_steps=next_steps, facts=facts
        )
    emit([episode], as_json, lambda e: f"episode {e.episode}: remembered {len(e.remembered)} facts")


@click.command()
@click.argument("tenant")
@click.option("--project", default=None)
@click.option("--budget", default=800, show_default=True)
@scope_options
@json_option
@pass_context
def briefing(
    ctx: Context, tenant: str, project: str | None, budget: int, person: str | None, agent: str | None, as_json: bool
) -> None:
    """Where things stand: the last episodes, open items and next steps, in a budget."""
    client = ctx.client()
    with sql_errors():
        if as_json:
            emit(client.briefing(tenant, project, budget, person=person, agent=agent), True, str)
        else:
            text = client.briefing_text(tenant, project, budget, person=person, agent=agent)
            click.echo(text or "(nothing to brief yet)")


@click.command()
@click.argument("tenant")
@click.argument("conversation")
@click.argument("role")
@click.argument("content")
@scope_options
@json_option
@pass_context
def observe(
    ctx: Context,
    tenant: str,
    conversation: str,
    role: str,
    content: str,
    person: str | None,
    agent: str | None,
    as_json: bool,
) -> None:
    """Pass a conversation turn through attention: it is kept, or stays in the sensory register."""
    with sql_errors():
        seen = ctx.client().observe(tenant, conversation, role, content, person=person, agent=agent)
    emit(
        [seen],
        as_json,
        lambda o: f"turn {o.turn_id}: {o.reason}" + (f" (memory {o.memory_id} in {o.ring})" if o.memory_id else ""),
    )


COMMANDS = (session, briefing, observe)
