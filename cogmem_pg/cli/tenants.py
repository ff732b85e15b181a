"""Tenants: create one (and re-embed it), who reaches it (grant, revoke), its settings and topics, its core
identity, and the agent's trust in it."""

from __future__ import annotations

import json

import click
import psycopg

from cogmem_pg.cli.common import Context, emit, json_option, parse_json, pass_context, sql_errors
from cogmem_pg.embed import EmbeddingUnavailable
from cogmem_pg.reembed import ReembedProgress


@click.command()
@click.argument("tenant")
@click.option("--language", default="english", show_default=True)
@click.option(
    "--embedding-model",
    default=None,
    help="The model of its vectors (default: the database's; all-MiniLM-L6-v2-onnx-int8 or multilingual-e5-small-q4).",
)
@pass_context
def tenant(ctx: Context, tenant: str, language: str, embedding_model: str | None) -> None:
    """Create a tenant (idempotent)."""
    with psycopg.connect(ctx.dsn(), autocommit=True) as conn, sql_errors():
        conn.execute("SELECT cogmem.create_tenant(%s, %s, %s)", (tenant, language, embedding_model))
        row = conn.execute("SELECT embedding_model FROM cogmem.tenants WHERE tenant = %s", (tenant,)).fetchone()
    click.echo(f"tenant {tenant} ({language}, vectors of {row[0] if row else embedding_model}) ready")


@click.command()
@click.argument("tenant")
@click.option("--model", required=True, help="The model to embed with, e.g. multilingual-e5-small-q4.")
@click.option("--batch", default=128, show_default=True, type=click.IntRange(1, 10000), help="Texts per batch.")
@click.option("--cancel", is_flag=True, help="Drop the re-embedding under way instead (the old vectors stay).")
@pass_context
def reembed(ctx: Context, tenant: str, model: str, batch: int, cancel: bool) -> None:
    """Re-embed TENANT's memories, chunks, turns and conflicts with MODEL, online (recall reads the old
    vectors until the swap, one transaction at the end); run it again to resume."""
    client = ctx.client()
    if cancel:
        with sql_errors():
            click.echo(f"re-embedding of {tenant} cancelled" if client.reembed_cancel(tenant) else "none under way")
        return
    shown = [0]

    def show(p: ReembedProgress) -> None:
        if p.finished or p.done - shown[0] >= 10 * batch:
            shown[0] = p.done
            click.echo(f"{p.tenant}: {p.done}/{p.total} texts embedded with {p.to_model}", err=True)

    with sql_errors():
        try:
            done = client.reembed(tenant, model, batch=batch, on_progress=show)
        except (EmbeddingUnavailable, ValueError) as error:
            raise click.ClickException(str(error)) from error
    click.echo(f"tenant {tenant}: {done.total} vectors of {done.to_model} (were {done.from_model})")


@click.command()
@click.argument("role")
@click.argument("tenant")
@click.option("--vault", is_flag=True, help="Also the tenant's vault.")
@click.option("--person", default=None, help="Only this person of the tenant (and what the tenant shares).")
@pass_context
def grant(ctx: Context, role: str, tenant: str, vault: bool, person: str | None) -> None:
    """Let ROLE reach TENANT (row-level security and the API's reach checks)."""
    with sql_errors():
        ctx.client().grant_tenant(role, tenant, vault=vault, person=person)
    whom = f" for {person} only" if person else ""
    click.echo(f"{role} reaches {tenant}{whom}{' and its vault' if vault else ''}")


@click.command()
@click.argument("role")
@click.argument("tenant")
@pass_context
def revoke(ctx: Context, role: str, tenant: str) -> None:
    with sql_errors():
        gone = ctx.client().revoke_tenant(role, tenant)
    click.echo(f"{role} no longer reaches {tenant}" if gone else f"{role} did not reach {tenant}")


@click.command()
@click.argument("tenant")
@click.argument("settings")
@click.option("--layer", default=None, help="Settings of one layer (allocation, half-life, priority).")
@pass_context
def configure(ctx: Context, tenant: str, settings: str, layer: str | None) -> None:
    """Change TENANT's settings, given as a JSON object; prints them as they now are."""
    wanted = parse_json(settings, "SETTINGS")
    with sql_errors():
        click.echo(json.dumps(ctx.client().configure_tenant(tenant, wanted, layer), default=str))


@click.command()
@click.argument("tenant")
@click.option("--agent", default=None, help="Set: who the agent is.")
@click.option("--user", "user_profile", default=None, help="Set: who the user is.")
@click.option("--goal", "goals", multiple=True, help="Set: a standing goal (repeat for more).")
@json_option
@pass_context
def identity(ctx: Context, tenant: str, agent: str | None, user_profile: str | None, goals, as_json: bool) -> None:
    """The core identity (the first thing every recall injects); with --agent, --user or --goal a new version."""
    with sql_errors():
        if agent is not None or user_profile is not None or goals:
            ctx.client().set_core_identity(tenant, agent, user_profile, list(goals) or None)
        current = ctx.client().core_identity(tenant)
    if current is None or current.get("version") is None:
        click.echo("(no core identity yet: cogmem identity TENANT --agent ... --user ...)")
        return
    emit(
        [current],
        as_json,
        lambda c: (
            f"v{c['version']} agent: {c['agent'] or '-'}\n   user: {c['user_profile'] or '-'}\n"
            f"   goals: {'; '.join(c['goals'] or []) or '-'}"
        ),
    )


@click.command()
@click.argument("tenant")
@click.option("--event", type=click.Choice(["praise", "delegation", "caught_error", "correction"]), default=None)
@click.option("--cause", default=None)
@click.option(
    "--agent", envvar="COGMEM_AGENT", default=None, help="The agent whose trust it is (default: the tenant's)."
)
@pass_context
def trust(ctx: Context, tenant: str, event: str | None, cause: str | None, agent: str | None) -> None:
    """The agent's trust score in TENANT, after recording an --event if given."""
    client = ctx.client()
    with sql_errors():
        score = client.trust_event(tenant, event, cause, agent=agent) if event else client.trust(tenant, agent=agent)
    click.echo(f"{score:.3f}")


@click.group()
def topics() -> None:
    """Topics: what a message is about, and the keywords that say so."""


@topics.command("detect")
@click.argument("tenant")
@click.argument("message")
@pass_context
def topics_detect(ctx: Context, tenant: str, message: str) -> None:
    with sql_errors():
        click.echo(" ".join(ctx.client().detect_topics(tenant, message)) or "(none)")


@topics.command("list")
@click.argument("tenant")
@json_option
@pass_context
def topics_list(ctx: Context, tenant: str, as_json: bool) -> None:
    with sql_errors():
        rows = ctx.client().topic_keywords(tenant)
    emit(rows, as_json, lambda t: f"{t.topic:14}{' *' if t.overridden else '  '} {', '.join(t.keywords)}")


@topics.command("set")
@click.argument("tenant")
@click.argument("topic")
@click.argument("keywords", nargs=-1, required=True)
@pass_context
def topics_set(ctx: Context, tenant: str, topic: str, keywords: tuple[str, ...]) -> None:
    """Give TENANT its own KEYWORDS for TOPIC (they replace the default ones)."""
    with sql_errors():
        ctx.client().set_topic(tenant, topic, keywords)
    click.echo(f"{tenant}: {topic} = {', '.join(keywords)}")


COMMANDS = (tenant, reembed, grant, revoke, configure, identity, trust, topics)
