"""Memories: remember one or a file of them, recall and feedback (explicit, or a judge's verdict), plain
reads (search, siblings, related, analyze), inbound attention on a text (classify), rehearsals, the night
(consolidate), and Markdown export and import."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from uuid import UUID

import click
import psycopg

from cogmem_pg.cli.common import Context, emit, json_option, pass_context, scope_options, sql_errors


@click.command()
@click.argument("tenant")
@click.argument("content")
@click.option(
    "--ring",
    default=None,
    help="Ring, or a kind: rule, preference, incident, procedure, habit, fact, chat (default: routed automatically).",
)
@click.option("--topic", "topics", multiple=True, help="Topic (default: detected).")
@click.option("--source", default="{}", help='Provenance as JSON, e.g. \'{"who": "ayse"}\'.')
@click.option("--conversation", default=None, help="The conversation (thread, session) it was said in.")
@click.option("--speaker", default=None, help="Who said it.")
@click.option("--said-at", "said_at", type=click.DateTime(), default=None, help="When it was said (ISO 8601).")
@click.option(
    "--supersedes",
    "supersedes",
    type=int,
    multiple=True,
    help="A memory it replaces (a correction, a changed fact); repeat for more (default: detected).",
)
@scope_options
@json_option
@pass_context
def remember(
    ctx: Context,
    tenant: str,
    content: str,
    ring: str | None,
    topics: tuple[str, ...],
    source: str,
    conversation: str | None,
    speaker: str | None,
    said_at: datetime | None,
    supersedes: tuple[int, ...],
    person: str | None,
    agent: str | None,
    as_json: bool,
) -> None:
    """Remember CONTENT for TENANT (a turn of a conversation with --conversation, --speaker, --said-at; a
    person's or an agent's with --person, --agent)."""
    with sql_errors():
        memory = ctx.client().remember(
            tenant,
            content,
            ring=ring,
            topics=list(topics) or None,  # type: ignore[arg-type]
            source=json.loads(source),
            conversation=conversation,
            speaker=speaker,
            said_at=said_at,
            person=person,
            agent=agent,
            supersedes=list(supersedes) or None,
        )
    if as_json:
        emit([memory], True, str)
        return
    redacted = f", redacted {','.join(memory.redactions)}" if memory.redactions else ""
    if memory.action == "conflict":
        click.echo(
            f"held as conflict {memory.conflict_id}: contradicts memory "
            f"{', '.join(map(str, memory.conflicts_with or []))}; nothing stored "
            f"(resolve it: cogmem.resolve_conflict({memory.conflict_id}, 'paradigm_shift'|'exception'|'override'))"
        )
        return
    click.echo(
        f"{memory.action} memory {memory.memory_id} in {memory.ring} "
        f"(topics: {', '.join(memory.topics) or '-'}{redacted})"
    )


@click.command("remember-many")
@click.argument("tenant")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@scope_options
@json_option
@pass_context
def remember_many(ctx: Context, tenant: str, file, person: str | None, agent: str | None, as_json: bool) -> None:
    """Remember every line of FILE (JSON lines: a string, or {"content", "ring", "topics", "source", "person",
    "agent", "supersedes", ...} as remember_many's items); --person and --agent scope the lines that name
    none."""
    items = []
    for n, line in enumerate(file, start=1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise click.BadParameter(f"line {n} is not JSON: {exc}", param_hint="FILE") from exc
    with sql_errors():
        stored = ctx.client().remember_many(tenant, items, person=person, agent=agent)
    emit(stored, as_json, lambda s: f"{s.item:>5} {s.action:9} {s.memory_id or '-':>6} in {s.ring}")


@click.command()
@click.argument("tenant")
@click.argument("message")
@click.option("--budget", default=3200, show_default=True)
@click.option("--topic", "topics", multiple=True, help="Topic (default: detected).")
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
@pass_context
def recall(
    ctx: Context,
    tenant: str,
    message: str,
    budget: int,
    topics: tuple[str, ...],
    person: str | None,
    agent: str | None,
    as_json: bool,
) -> None:
    """Recall what TENANT's agent should know about MESSAGE (for --person, as --agent)."""
    from cogmem_pg.render import render_recall

    with sql_errors():
        result = ctx.client().recall(
            tenant, message, topics=list(topics) or None, budget=budget, person=person, agent=agent
        )
    if as_json:
        for item in result.items:
            click.echo(json.dumps({**item.__dict__, "recall_id": str(item.recall_id)}, ensure_ascii=False))
    else:
        click.echo(render_recall(result, budget))


@click.command()
@click.argument("recall_id", type=click.UUID)
@click.argument("outcome", type=click.FloatRange(0, 1))
@click.option("--used", "used", type=int, multiple=True, help="A memory the answer used (default: all injected).")
@pass_context
def feedback(ctx: Context, recall_id: UUID, outcome: float, used: tuple[int, ...]) -> None:
    """Record how the answer built on RECALL_ID went: OUTCOME from 0 (it failed) to 1 (it worked), as in SQL."""
    with sql_errors():
        credited = ctx.client().feedback(recall_id, outcome, list(used) or None)
    click.echo(f"{credited} memories credited")


@click.command()
@click.argument("turn")
@json_option
@pass_context
def judge(ctx: Context, turn: str, as_json: bool) -> None:
    """What TURN says of the answer before it: confirmed, corrected, repeated, or neutral (it abstains)."""
    with sql_errors():
        verdict = ctx.client().judge_followup(turn)
    emit(
        [verdict],
        as_json,
        lambda v: f"{v.verdict} {v.confidence or 0:.3f} by {v.model}; cues: {', '.join(v.cues) or 'none'}",
    )


@click.command("judge-recall")
@click.argument("tenant")
@click.argument("recall_id", type=click.UUID)
@click.argument("verdict", type=click.Choice(["confirmed", "corrected", "repeated", "neutral"]))
@click.option("--confidence", type=click.FloatRange(0, 1), default=1.0, show_default=True)
@click.option("--by", "judged_by", default="caller", show_default=True, help="Your judge's name, for the audit.")
@pass_context
def judge_recall(ctx: Context, tenant: str, recall_id: UUID, verdict: str, confidence: float, judged_by: str) -> None:
    """Record your own judge's VERDICT on RECALL_ID as implicit feedback (explicit feedback is never replaced)."""
    with sql_errors():
        click.echo(ctx.client().judge_recall(tenant, recall_id, verdict, confidence, judged_by))


@click.command()
@click.argument("tenant")
@click.argument("query")
@click.option("--limit", default=10, show_default=True)
@scope_options
@json_option
@pass_context
def search(
    ctx: Context, tenant: str, query: str, limit: int, person: str | None, agent: str | None, as_json: bool
) -> None:
    """Memories nearest to QUERY, every ring, of the scope; a plain read that logs and strengthens nothing."""
    with sql_errors():
        found = ctx.client().search(tenant, query, limit, person=person, agent=agent)
    emit(found, as_json, lambda f: f"{f.memory_id:>6} [{f.ring}] {f.score:.3f}  {f.content}")


@click.command()
@click.argument("tenant")
@click.argument("memory_id", type=int)
@json_option
@pass_context
def siblings(ctx: Context, tenant: str, memory_id: int, as_json: bool) -> None:
    """Memories that look like MEMORY_ID but differ in a detail (a host, a number)."""
    with sql_errors():
        rows = ctx.client().siblings(tenant, memory_id)
    emit(
        rows, as_json, lambda s: f"{s.sibling_id:>6} {s.similarity:.2f} differs in {', '.join(s.differs)}: {s.content}"
    )


@click.command()
@click.argument("tenant")
@click.argument("text")
@click.option("--limit", default=5, show_default=True)
@json_option
@pass_context
def related(ctx: Context, tenant: str, text: str, limit: int, as_json: bool) -> None:
    """The established memories TEXT might contradict (what a classifier is shown)."""
    with sql_errors():
        rows = ctx.client().related(tenant, text, limit=limit)
    emit(rows, as_json, lambda r: f"{r.memory_id:>6} [{r.ring}] {r.similarity:.2f}  {r.content}")


@click.command()
@click.argument("tenant")
@click.argument("topic")
@click.option("--since", type=click.DateTime(), default=None)
@click.option("--until", type=click.DateTime(), default=None)
@json_option
@pass_context
def analyze(
    ctx: Context, tenant: str, topic: str, since: datetime | None, until: datetime | None, as_json: bool
) -> None:
    """Everything about TOPIC over time: memories, learnings, episodes, in order."""
    with sql_errors():
        rows = ctx.client().analyze(tenant, topic, since, until)
    emit(rows, as_json, lambda f: f"{f.at:%Y-%m-%d %H:%M} {f.kind:9} {f.content}")


@click.command()
@click.argument("text")
@click.option("--tenant", default=None, help="Also detect the tenant's topics.")
@json_option
@pass_context
def classify(ctx: Context, text: str, tenant: str | None, as_json: bool) -> None:
    """Where remember would route TEXT, and why: try inbound attention without storing anything."""
    client = ctx.client()
    with sql_errors():
        verdict = client.classify(text)
        verdict["redacted"], verdict["redactions"] = client.redact(text)
        verdict["polarity"] = client.polarity(text)
        verdict["attention"] = client.attention(text)
        verdict["deidentified"] = client.gut_deidentify(text)  # as the Gut would take it
        if tenant is not None:
            verdict["topics"] = client.detect_topics(tenant, text)
    if as_json:
        click.echo(json.dumps(verdict, default=str, ensure_ascii=False))
        return
    for key, value in verdict.items():
        click.echo(f"{key:14} {value}")


@click.command()
@click.argument("tenant", required=False)
@pass_context
def rehearse(ctx: Context, tenant: str | None) -> None:
    """Apply logged rehearsals to the statistics now (pg_cron does it every minute)."""
    with sql_errors():
        click.echo(f"{ctx.client().apply_rehearsals(tenant)} rehearsals applied")


@click.command()
@click.option("--as-of", "as_of", default=None, help="Consolidate up to this moment (ISO timestamp; default now).")
@click.option("--tenant", default=None, help="Only this tenant.")
@json_option
@pass_context
def consolidate(ctx: Context, as_of: str | None, tenant: str | None, as_json: bool) -> None:
    """Run the nightly consolidation now, one tenant per transaction, with a progress bar."""
    totals: dict[str, int] = {}
    with psycopg.connect(ctx.dsn(), autocommit=True) as conn:
        moment = conn.execute("SELECT coalesce(%s::timestamptz, now())", (as_of,)).fetchone()[0]  # type: ignore[index]
        if tenant is not None:
            names = [tenant]
        else:
            names = [r[0] for r in conn.execute("SELECT tenant FROM cogmem.tenants ORDER BY tenant")]
        label = f"consolidating up to {moment:%Y-%m-%d %H:%M}"
        with click.progressbar(names, label=label, file=sys.stderr if as_json else None) as bar:
            for name in bar:
                with sql_errors():
                    rows = conn.execute(
                        "SELECT decision, memories FROM cogmem.consolidate(%s, %s)", (moment, name)
                    ).fetchall()
                for decision, count in rows:
                    totals[decision] = totals.get(decision, 0) + count
    if as_json:
        click.echo(json.dumps({"as_of": moment.isoformat(), "tenants": len(names), "decisions": totals}))
        return
    if not totals:
        click.echo("nothing to do: this night is already consolidated")
    for decision in sorted(totals):
        click.echo(f"{decision:10} {totals[decision]}")


@click.command("export")
@click.option(
    "--markdown",
    "directory",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write: one sub-folder per tenant, one file per memory and episode (an Obsidian vault).",
)
@click.option("--tenant", default=None, help="Only this tenant (default: every tenant you reach).")
@click.option("--person", default=None, help="Only what is scoped to this person (a subject access request).")
@pass_context
def export_cmd(ctx: Context, directory: Path, tenant: str | None, person: str | None) -> None:
    """Write a tenant's memory as Markdown in MIRIX's six types (core, episodic, semantic, procedural,
    resource, knowledge vault: names only), with front-matter and [[wikilinks]]."""
    from cogmem_pg.markdown import export_markdown

    with psycopg.connect(ctx.dsn(), autocommit=True) as conn, sql_errors():
        tenants = [tenant] if tenant else [r[0] for r in conn.execute("SELECT tenant FROM cogmem.tenants ORDER BY 1")]
        for name in tenants:
            if conn.execute("SELECT FROM cogmem.tenants WHERE tenant = %s", (name,)).fetchone() is None:
                raise click.ClickException(f'unknown tenant "{name}" (or not one you may read)')
            counts = export_markdown(conn, name, directory / name, person=person)
            click.echo(
                f"{name}: {counts['memories']} memories, {counts['episodes']} episodes, {counts['resources']} resources"
                f" -> {directory / name}"
            )


@click.command("import")
@click.option(
    "--markdown",
    "directory",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A folder written by `cogmem export --markdown`: one sub-folder per tenant.",
)
@click.option("--tenant", default=None, help="Only this tenant's sub-folder.")
@pass_context
def import_cmd(ctx: Context, directory: Path, tenant: str | None) -> None:
    """Read a tenant's memory back from Markdown (the same text already stored is not duplicated)."""
    from cogmem_pg.embed import default_embedder
    from cogmem_pg.markdown import import_markdown

    folders = [directory / tenant] if tenant else sorted(p for p in directory.iterdir() if (p / "index.md").exists())
    if not folders or not all((f / "index.md").exists() for f in folders):
        raise click.ClickException(f"no exported tenant under {directory} (each has an index.md)")
    embedder = default_embedder()
    with psycopg.connect(ctx.dsn(), autocommit=True) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        with sql_errors(KeyError):
            for folder in folders:
                got = import_markdown(conn, folder.name, folder, embedder.embed if embedder is not None else None)
                click.echo(
                    f"{folder.name}: {got['memories']} memories, {got['episodes']} episodes, "
                    f"{got['resources']} resources imported"
                )
                if got["vault_names"]:
                    names = ", ".join(got["vault_names"])
                    click.echo(f"{folder.name}: the vault's secrets are never exported; put back: {names}")


@click.command("index-tenants")
@click.option("--above", default=20000, show_default=True, help="Index tenants holding at least this many memories.")
@click.option("--apply", "apply", is_flag=True, help="Run the statements (else: only list them).")
@click.option(
    "--memory",
    default=None,
    help="maintenance_work_mem for the builds, e.g. 4GB: a tenant's graph builds in memory while it fits "
    "(about 1.6 KB a memory), several times slower beyond.",
)
@json_option
@pass_context
def index_tenants(ctx: Context, above: int, apply: bool, memory: str | None, as_json: bool) -> None:
    """Give each large tenant its own indexes, so that its recall reads only what they reach
    (docs/scaling.md, "One large tenant"); drop those of tenants that shrank. Safe to run from cron."""
    with psycopg.connect(ctx.dsn(), autocommit=True) as conn, sql_errors():
        if memory:
            conn.execute("SELECT pg_catalog.set_config('maintenance_work_mem', %s, false)", (memory,))
        rows = conn.execute(
            "SELECT tenant, memories, index_name, state, statement FROM cogmem.tenant_indexes(%s)", (above,)
        ).fetchall()
        for tenant, memories, index_name, state, statement in rows:
            if not as_json:
                click.echo(f"{index_name}  {tenant or '-'}  {memories or 0:>9,} memories  {state}")
            if apply and statement:
                _run_as_owner(conn, statement.split("; "))
    if as_json:
        keys = ("tenant", "memories", "index_name", "state", "statement")
        click.echo(json.dumps([dict(zip(keys, r, strict=True)) for r in rows]))


def _run_as_owner(conn: psycopg.Connection, statements: list[str]) -> None:
    """Index DDL needs the table's owner: a superuser is, an installer takes cogmem_owner's role when it may.
    CREATE INDEX CONCURRENTLY cannot run in a transaction, so each statement runs on its own."""
    owner = conn.execute(
        "SELECT NOT rolsuper AND pg_has_role(current_user, 'cogmem_owner', 'MEMBER') FROM pg_roles "
        "WHERE rolname = current_user"
    ).fetchone()
    if owner and owner[0]:
        conn.execute("SET ROLE cogmem_owner")
    try:
        for statement in statements:
            conn.execute(statement)  # type: ignore[arg-type]
    finally:
        conn.execute("RESET ROLE")


COMMANDS = (
    remember,
    remember_many,
    recall,
    feedback,
    judge,
    judge_recall,
    search,
    siblings,
    related,
    analyze,
    classify,
    rehearse,
    consolidate,
    export_cmd,
    import_cmd,
    index_tenants,
)
