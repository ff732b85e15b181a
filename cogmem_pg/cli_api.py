"""The `cogmem` commands for the agent-facing API: guard, conflicts, sessions, briefing, observe, trust,
the vault, identity, and doctor. Each runs on the one Client of the invocation (Context.client()); SQL
errors print their message, SQLSTATE and HINT and exit 1; `--json` prints what a script reads."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from uuid import UUID

import click

from cogmem_pg.cli import Context, _emit, json_option, main, pass_context, sql_errors
from cogmem_pg.client import store_text


@main.group()
def guard() -> None:
    """Before acting: what applies; after a mistake: a learning."""


@guard.command("check")
@click.argument("tenant")
@click.argument("area")
@click.argument("action")
@json_option
@pass_context
def guard_check(ctx: Context, tenant: str, area: str, action: str, as_json: bool) -> None:
    """What applies before ACTION in AREA; exits 2 when something blocks it."""
    with sql_errors():
        items = ctx.client().guard_check(tenant, area, action)
    _emit(items, as_json, lambda i: f"{'BLOCKS ' if i.blocking else ''}[{i.kind}] {i.content}")
    if any(i.blocking for i in items):
        ctx.exit_code = 2


@guard.command("report")
@click.argument("tenant")
@click.argument("area")
@click.argument("description")
@click.option("--action", default=None, help="What was done that went wrong.")
@click.option("--repeat-of", type=int, default=None, help="The learning this repeats.")
@json_option
@pass_context
def guard_report(
    ctx: Context, tenant: str, area: str, description: str, action: str | None, repeat_of: int | None, as_json: bool
) -> None:
    """Report a mistake in AREA: it becomes (or strengthens) a learning."""
    with sql_errors():
        report = ctx.client().report_error(tenant, area, description, action=action, repeat_of=repeat_of)
    _emit(
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


@main.group()
def conflicts() -> None:
    """What was held because it contradicts what the tenant holds."""


@conflicts.command("list")
@click.argument("tenant")
@json_option
@pass_context
def conflicts_list(ctx: Context, tenant: str, as_json: bool) -> None:
    with sql_errors():
        rows = ctx.client().open_conflicts(tenant)
    _emit(rows, as_json, lambda c: f"{c.conflict_id:>5} {c.verdict:12} {c.content}  (contradicts {c.conflicts_with})")


@conflicts.command("resolve")
@click.argument("conflict_id", type=int)
@click.argument("resolution", type=click.Choice(["paradigm_shift", "exception", "override"]))
@click.option("--note", default=None)
@json_option
@pass_context
def conflicts_resolve(ctx: Context, conflict_id: int, resolution: str, note: str | None, as_json: bool) -> None:
    with sql_errors():
        resolved = ctx.client().resolve_conflict(conflict_id, resolution, note)
    _emit([resolved], as_json, lambda r: f"conflict {conflict_id}: {r.status}, memory {r.memory_id or '-'}")


@main.group()
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
    _emit(rows, as_json, lambda r: f"{r.memory_id:>6} {r.ring:14} {r.question}")


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


@main.group()
def session() -> None:
    """Working sessions: start one, end it with what happened (an episode)."""


@session.command("start")
@click.argument("tenant")
@click.option("--project", default=None)
@click.option("--goal", default=None)
@pass_context
def session_start(ctx: Context, tenant: str, project: str | None, goal: str | None) -> None:
    """Prints the session id (pass it as recall's and observe's conversation)."""
    with sql_errors():
        click.echo(ctx.client().start_session(tenant, project, goal))


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
    _emit([episode], as_json, lambda e: f"episode {e.episode}: remembered {len(e.remembered)} facts")


@main.command()
@click.argument("tenant")
@click.option("--project", default=None)
@click.option("--budget", default=800, show_default=True)
@json_option
@pass_context
def briefing(ctx: Context, tenant: str, project: str | None, budget: int, as_json: bool) -> None:
    """Where things stand: the last episodes, open items and next steps, in a budget."""
    with sql_errors():
        if as_json:
            _emit(ctx.client().briefing(tenant, project, budget), True, str)
        else:
            click.echo(ctx.client().briefing_text(tenant, project, budget) or "(nothing to brief yet)")


@main.command()
@click.argument("tenant")
@click.argument("conversation")
@click.argument("role")
@click.argument("content")
@json_option
@pass_context
def observe(ctx: Context, tenant: str, conversation: str, role: str, content: str, as_json: bool) -> None:
    """Pass a conversation turn through attention: it is kept, or stays in the sensory register."""
    with sql_errors():
        seen = ctx.client().observe(tenant, conversation, role, content)
    _emit(
        [seen],
        as_json,
        lambda o: f"turn {o.turn_id}: {o.reason}" + (f" (memory {o.memory_id} in {o.ring})" if o.memory_id else ""),
    )


@main.command()
@click.argument("tenant")
@click.option("--event", type=click.Choice(["praise", "delegation", "caught_error", "correction"]), default=None)
@click.option("--cause", default=None)
@pass_context
def trust(ctx: Context, tenant: str, event: str | None, cause: str | None) -> None:
    """The agent's trust score in TENANT, after recording an --event if given."""
    with sql_errors():
        score = ctx.client().trust_event(tenant, event, cause) if event else ctx.client().trust(tenant)
    click.echo(f"{score:.3f}")


@main.group()
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
    _emit(rows, as_json, lambda v: f"{v.name:24} v{v.version} {v.description or ''}")


@vault.command("rm")
@click.argument("tenant")
@click.argument("name")
@pass_context
def vault_rm(ctx: Context, tenant: str, name: str) -> None:
    with sql_errors():
        gone = ctx.client().vault_delete(tenant, name)
    click.echo(f"{name}: {'deleted' if gone else 'not there'}")


@main.group()
def store() -> None:
    """The keyed store (LangGraph's BaseStore): NAMESPACE is dotted, e.g. memories.user-1."""


def _namespace(dotted: str, what: str = "NAMESPACE") -> list[str]:
    """A dotted namespace as its labels ('' is none); an empty label is refused, not dropped, so that
    a..b never names a.b."""
    labels = dotted.split(".") if dotted else []
    if "" in labels:
        raise click.BadParameter(
            f"{dotted!r} has an empty label (labels are joined by single periods)", param_hint=what
        )
    return labels


def parse_json(text: str, what: str) -> Any:
    """TEXT as JSON, or a usage error that names the parameter WHAT."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint=what) from exc


def _json_object(text: str | None, what: str) -> dict | None:
    if text is None:
        return None
    value = parse_json(text, what)
    if not isinstance(value, dict):
        raise click.BadParameter('must be a JSON object, e.g. \'{"content": "..."}\'', param_hint=what)
    return value


@store.command("put")
@click.argument("tenant")
@click.argument("namespace")
@click.argument("key")
@click.argument("value")
@click.option("--text", "index_text", default=None, help="The text to remember it by (default: the value's strings).")
@click.option("--no-index", is_flag=True, help="Store the value without a memory.")
@click.option("--ttl", type=float, default=None, help="Minutes to live (the memory goes to the fresh ring).")
@json_option
@pass_context
def store_put(
    ctx: Context,
    tenant: str,
    namespace: str,
    key: str,
    value: str,
    index_text: str | None,
    no_index: bool,
    ttl: float | None,
    as_json: bool,
) -> None:
    """Put VALUE (a JSON object) under NAMESPACE and KEY."""
    data = _json_object(value, "VALUE")
    assert data is not None
    if index_text is None and not no_index:
        index_text = store_text(data)
    with sql_errors():
        done = ctx.client().store_put(tenant, _namespace(namespace), key, data, None if no_index else index_text, ttl)
    _emit(
        [done],
        as_json,
        lambda d: (
            f"{d.action}: memory {d.memory_id or '-'}"
            + (f", redacted {', '.join(d.redactions)}" if d.redactions else "")
        ),
    )


@store.command("get")
@click.argument("tenant")
@click.argument("namespace")
@click.argument("key")
@pass_context
def store_get(ctx: Context, tenant: str, namespace: str, key: str) -> None:
    """Print the value under NAMESPACE and KEY (exit 1 if there is none)."""
    with sql_errors():
        item = ctx.client().store_get(tenant, _namespace(namespace), key)
    if item is None:
        raise click.ClickException(f"no item {key!r} in {namespace!r}")
    click.echo(json.dumps(item.value, ensure_ascii=False))


@store.command("rm")
@click.argument("tenant")
@click.argument("namespace")
@click.argument("key")
@pass_context
def store_rm(ctx: Context, tenant: str, namespace: str, key: str) -> None:
    """Delete the item (and erase the memory it created)."""
    with sql_errors():
        gone = ctx.client().store_delete(tenant, _namespace(namespace), key)
    click.echo("deleted" if gone else "no such item")


@store.command("search")
@click.argument("tenant")
@click.argument("prefix", default="")
@click.option("--query", default=None, help="Rank by this text with recall's signals.")
@click.option("--filter", "filter_json", default=None, help='Filter on the value, e.g. \'{"stars": {"$gte": 4}}\'.')
@click.option("--limit", default=10, show_default=True)
@click.option("--offset", default=0, show_default=True)
@json_option
@pass_context
def store_search(
    ctx: Context,
    tenant: str,
    prefix: str,
    query: str | None,
    filter_json: str | None,
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """Items under PREFIX (a dotted namespace; all when empty)."""
    with sql_errors():
        items = ctx.client().store_search(
            tenant, _namespace(prefix, "PREFIX"), query, _json_object(filter_json, "--filter"), limit, offset
        )
    _emit(
        items,
        as_json,
        lambda i: (
            f"{'.'.join(i.namespace)} {i.key}"
            + (f"  {i.score:.4f}" if i.score is not None else "")
            + f"  {json.dumps(i.value, ensure_ascii=False)}"
        ),
    )


@store.command("ls")
@click.argument("tenant")
@click.option("--prefix", default=None, help="Dotted; '*' matches any label.")
@click.option("--suffix", default=None, help="Dotted; '*' matches any label.")
@click.option("--depth", "max_depth", type=int, default=None, help="Cut namespaces to this many labels.")
@click.option("--limit", default=100, show_default=True)
@json_option
@pass_context
def store_ls(
    ctx: Context, tenant: str, prefix: str | None, suffix: str | None, max_depth: int | None, limit: int, as_json: bool
) -> None:
    """The namespaces holding items."""
    with sql_errors():
        names = ctx.client().store_namespaces(
            tenant,
            None if prefix is None else _namespace(prefix, "--prefix"),
            None if suffix is None else _namespace(suffix, "--suffix"),
            max_depth,
            limit,
        )
    _emit([list(n) for n in names], as_json, lambda n: ".".join(n))


@main.command()
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
    _emit(
        [current],
        as_json,
        lambda c: (
            f"v{c['version']} agent: {c['agent'] or '-'}\n   user: {c['user_profile'] or '-'}\n"
            f"   goals: {'; '.join(c['goals'] or []) or '-'}"
        ),
    )


_ROLES = ("cogmem_app", "cogmem_admin", "cogmem_auditor", "cogmem_bi", "cogmem_gut", "cogmem_owner")


def _doctor_checks(conn) -> Iterable[tuple[str, str, str, str]]:
    """(status, check, finding, fix): status ok, warn or fail."""
    from cogmem_pg.migrate import current_revision, head_revision

    q = lambda sql, *a: conn.execute(sql, a).fetchone()[0]  # noqa: E731
    version = int(q("SHOW server_version_num"))
    yield (
        "ok" if version >= 150000 else "fail",
        "server",
        q("SELECT version()").split(",")[0],
        "" if version >= 150000 else "cogmem-pg needs PostgreSQL 15 or later",
    )
    extensions = {r[0]: r[1] for r in conn.execute("SELECT extname, extversion FROM pg_extension")}
    for name in ("vector", "plpython3u"):
        yield (
            ("ok", "extension", f"{name} {extensions[name]}", "")
            if name in extensions
            else ("fail", "extension", f"{name} missing", f"CREATE EXTENSION {name}; (cogmem migrate does it)")
        )
    revision, head = current_revision(conn.info.dsn), head_revision()
    yield (
        "ok" if revision == head else "fail",
        "schema",
        f"revision {revision} (head {head})",
        "" if revision == head else "cogmem migrate",
    )
    cron = q("SELECT to_regclass('cron.job') IS NOT NULL")
    yield (
        "ok" if cron else "warn",
        "pg_cron",
        "installed" if cron else "not in this database",
        "" if cron else "add pg_cron to shared_preload_libraries and CREATE EXTENSION pg_cron here",
    )
    if cron:
        jobs = {r[0] for r in conn.execute("SELECT jobname FROM cron.job WHERE jobname LIKE 'cogmem-%%'")}
        for job, fix in (
            ("cogmem-nightly", "SELECT cogmem.schedule_nightly();"),
            ("cogmem-audit-seal", "SELECT cogmem.schedule_audit();"),
        ):
            yield (
                ("ok", "schedule", f"{job} scheduled", "")
                if job in jobs
                else ("warn", "schedule", f"{job} not scheduled", fix)
            )
    embeds = q("SELECT cogmem.server_can_embed()")
    yield (
        "ok" if embeds else "warn",
        "embedding",
        "in the database" if embeds else "not in the database (the client embeds)",
        "" if embeds else "install cogmem-pg[embed] for the server's Python, or embed on the client",
    )
    missing = [r for r in _ROLES if not q("SELECT count(*) FROM pg_roles WHERE rolname = %s", r)]
    yield (
        ("fail", "roles", f"missing {', '.join(missing)}", "cogmem migrate")
        if missing
        else ("ok", "roles", "all present", "")
    )
    sealed = q("SELECT coalesce(extract(epoch FROM now() - sealed_at)::integer, -1) FROM cogmem.audit_seal_state")
    yield (
        ("ok", "audit", f"sealed {sealed} s ago", "")
        if 0 <= sealed < 3600
        else (
            "warn",
            "audit",
            "never sealed" if sealed < 0 else f"last sealed {sealed // 3600} h ago",
            "cogmem audit seal, or SELECT cogmem.schedule_audit();",
        )
    )
    over = conn.execute("SELECT tenant, layer, over FROM cogmem.never_cut_overflow ORDER BY over DESC").fetchall()
    yield (
        ("ok", "never-cut", "within their allocations", "")
        if not over
        else (
            "warn",
            "never-cut",
            "; ".join(f"{t} {layer} +{n} tokens" for t, layer, n in over[:5]),
            "review those rings (cogmem.memory_overview): every recall pays for them",
        )
    )


@main.command()
@json_option
@pass_context
def doctor(ctx: Context, as_json: bool) -> None:
    """Check the server, extensions, schedule, embedding, roles, audit sealing and never-cut rings; say what to fix."""
    import psycopg

    with psycopg.connect(ctx.dsn(), autocommit=True) as conn, sql_errors():
        checks = list(_doctor_checks(conn))
    keys = ("status", "check", "finding", "fix")
    _emit(
        [dict(zip(keys, c, strict=True)) for c in checks],
        as_json,
        lambda c: f"{c['status']:4} {c['check']:10} {c['finding']}" + (f"\n     fix: {c['fix']}" if c["fix"] else ""),
    )
    if any(c[0] == "fail" for c in checks):
        ctx.exit_code = 1


@main.command("mcp")
@click.option("--tenant", envvar="COGMEM_TENANT", required=True, help="The tenant the server is bound to.")
@click.option("--project", default=None, help="The project of the briefing resource and new sessions.")
@click.option(
    "--http",
    "http",
    default=None,
    metavar="HOST:PORT",
    help="Serve streamable HTTP (e.g. 127.0.0.1:8765) instead of stdio.",
)
@pass_context
def mcp_command(ctx: Context, tenant: str, project: str | None, http: str | None) -> None:
    """An MCP server for TENANT's memory: stdio by default, streamable HTTP on loopback with --http."""
    try:
        from cogmem_pg.mcp_server import build_server
    except ImportError as exc:
        raise click.ClickException(f"the MCP server needs the mcp extra: pip install 'cogmem-pg[mcp]' ({exc})") from exc
    try:
        server = build_server(ctx.client(), tenant, project)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if http is None:
        server.run("stdio")
        return
    host, _, port = http.rpartition(":")
    server.run("streamable-http", host=host or "127.0.0.1", port=int(port))
