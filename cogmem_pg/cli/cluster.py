"""Running cogmem: the embedded cluster (up, down, status, psql), the schema (migrate), what to fix
(doctor), the demo, and the MCP server for one tenant (mcp)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import click
import psycopg

from cogmem_pg.cli.common import Context, emit, json_option, pass_context, sql_errors, start_embedded
from cogmem_pg.cluster import Cluster, ClusterError, pg_bindir
from cogmem_pg.embed import BUILT_IN_MODELS, default_embedder
from cogmem_pg.migrate import current_revision, head_revision, install, installed_revision


@click.command()
def up() -> None:
    """Start the embedded cluster and install or upgrade the schema."""
    cluster = start_embedded()
    revision = install(cluster.dsn())
    click.echo(f"cogmem is up: {cluster.dsn()} (schema {revision})")


@click.command()
def down() -> None:
    """Stop the embedded cluster (its data stays under .cogmem/)."""
    cluster = Cluster.default()
    try:
        cluster.stop()
    except ClusterError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo("cogmem is down")


@click.command()
@json_option
@pass_context
def status(ctx: Context, as_json: bool) -> None:
    """Show where cogmem runs and which schema revision is installed."""
    if ctx.explicit_dsn:
        info: dict[str, object] = {"dsn": ctx.explicit_dsn, "embedded": False}
        try:
            info["revision"] = current_revision(ctx.explicit_dsn)
        except psycopg.Error as exc:
            info["error"] = str(exc).strip()
    else:
        cluster = Cluster.default()
        info = {"embedded": True, **cluster.status()}
        if cluster.running():
            info["revision"] = current_revision(cluster.dsn())
    info["head"] = head_revision()
    _routing_status(info, ctx.explicit_dsn or (cluster.dsn() if info.get("revision") else None))
    if as_json:
        click.echo(json.dumps(info, default=str))
    else:
        for key, value in info.items():
            click.echo(f"{key:18} {value}")
    if "error" in info:  # a status that cannot reach its database is a failure, for scripts too
        raise click.ClickException(f"cannot use the database of --dsn (or DATABASE_URL): {info['error']}")


def _routing_status(info: dict[str, object], dsn: str | None) -> None:
    """Whether a text remembered from plain SQL is routed with an embedding; a warning when it is not."""
    if dsn is None or "error" in info or info.get("revision") is None:
        return
    try:
        with psycopg.connect(dsn, connect_timeout=10) as conn:
            row = conn.execute("SELECT cogmem.server_can_embed()").fetchone()
    except psycopg.Error:
        return
    info["server_can_embed"] = bool(row and row[0])
    if not info["server_can_embed"]:
        info["warning"] = (
            "this server cannot embed: a text remembered from plain SQL without an embedding is routed by the "
            "cues model alone, and fewer stated rules reach their never-cut ring (more wait as candidates); "
            "send embeddings from the client (cogmem_pg.Client embeds) or see docs/model.md, Inbound attention"
        )


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("psql_args", nargs=-1, type=click.UNPROCESSED)
@pass_context
def psql(ctx: Context, psql_args: tuple[str, ...]) -> None:
    """Open psql on the cogmem database (the embedded cluster unless --dsn); extra arguments go to psql."""
    try:
        binary = str(pg_bindir() / "psql")
    except ClusterError:
        binary = "psql"
    dsn = ctx.dsn()
    try:
        os.execvp(binary, [binary, dsn, *psql_args])
    except OSError as exc:
        raise click.ClickException(f"cannot run psql ({exc}): install postgresql-client") from exc


@click.command()
@click.option("--sql", "as_sql", is_flag=True, help="Write the install as one SQL file for psql -f; apply nothing.")
@click.option("--from", "from_revision", default=None, metavar="REVISION", help="With --sql: upgrade from REVISION.")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False), default=None, help="With --sql: the file (else stdout)."
)
@pass_context
def migrate(ctx: Context, as_sql: bool, from_revision: str | None, output: str | None) -> None:
    """Install or upgrade the cogmem schema (alembic revisions, then sql/), or write it as SQL (--sql)."""
    if not as_sql:
        if from_revision or output:
            raise click.UsageError("--from and --output go with --sql")
        click.echo(f"cogmem schema at revision {install(ctx.server_dsn())}")
        return
    from cogmem_pg.install_script import install_script

    try:
        script = install_script(from_revision)
    except KeyError as exc:
        raise click.BadParameter(f"no revision {from_revision!r}", param_hint="--from") from exc
    if output is None:
        click.echo(script, nl=False)
    else:
        Path(output).write_text(script, encoding="utf-8")
        click.echo(f"wrote {output}: psql -v ON_ERROR_STOP=1 -f {output}", err=True)


_ROLES = ("cogmem_app", "cogmem_admin", "cogmem_auditor", "cogmem_bi", "cogmem_gut", "cogmem_owner")


def _doctor_checks(conn) -> Iterable[tuple[str, str, str, str]]:
    """(status, check, finding, fix): status ok, warn or fail."""
    q = lambda sql, *a: conn.execute(sql, a).fetchone()[0]  # noqa: E731
    version = int(q("SHOW server_version_num"))
    yield (
        "ok" if version >= 150000 else "fail",
        "server",
        q("SELECT version()").split(",")[0],
        "" if version >= 150000 else "cogmem-pg needs PostgreSQL 15 or later",
    )
    extensions = {r[0]: r[1] for r in conn.execute("SELECT extname, extversion FROM pg_extension")}
    yield (
        ("ok", "extension", f"vector {extensions['vector']}", "")
        if "vector" in extensions
        else ("fail", "extension", "vector missing", "CREATE EXTENSION vector; (cogmem migrate does it where it may)")
    )
    # A managed server offers no PL/Python: only the server's embedding and the Gut's release need it.
    yield (
        ("ok", "extension", f"plpython3u {extensions['plpython3u']}", "")
        if "plpython3u" in extensions
        else (
            "warn",
            "extension",
            "plpython3u missing: the server does not embed and the Gut's release is off; everything else works",
            "a superuser: CREATE EXTENSION plpython3u; then cogmem migrate (managed servers offer none)",
        )
    )
    revision, head = installed_revision(conn), head_revision()
    yield (
        "ok" if revision == head else "fail",
        "schema",
        f"revision {revision} (head {head})",
        "" if revision == head else "cogmem migrate",
    )
    # pg_cron's schema is its creator's: on a managed server the platform must grant the scheduler USAGE.
    cron = "pg_cron" in extensions
    usable = cron and q("SELECT has_schema_privilege('cron', 'USAGE')")
    if not cron:
        yield (
            "warn",
            "pg_cron",
            "not in this database",
            "CREATE EXTENSION pg_cron here (shared_preload_libraries), or run `cogmem consolidate` nightly from cron",
        )
    elif not usable:
        role, quoted = conn.execute("SELECT current_user::text, quote_ident(current_user)").fetchone()
        yield (
            "warn",
            "pg_cron",
            f"installed, but role {role} may not use it",
            f"the platform's administrator: GRANT USAGE ON SCHEMA cron TO {quoted}; "
            "or run `cogmem consolidate` nightly from cron",
        )
    else:
        yield ("ok", "pg_cron", "installed", "")
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
    client = getattr(default_embedder(), "model_id", None)
    yield (
        "ok" if embeds else "warn",
        "embedding",
        ("in the database, each tenant by its model" if embeds else "not in the database")
        + (
            f"; this client embeds each tenant by its model ({', '.join(BUILT_IN_MODELS)} built in)"
            if client
            else "; this client has no embedder ([embed] extra)"
        ),
        "" if embeds else "install cogmem-pg[embed] for the server's Python, or embed on the client",
    )
    models = conn.execute(
        "SELECT embedding_model, count(*) FROM cogmem.tenants GROUP BY 1 ORDER BY 2 DESC, 1"
    ).fetchall()
    yield (
        "ok",
        "vectors",
        "; ".join(f"{n} tenant{'s' * (n != 1)} of {m}" for m, n in models) or "no tenants yet",
        "",
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

    yield from _large_tenant_checks(conn)


def _large_tenant_checks(conn: psycopg.Connection) -> Iterator[tuple[str, str, str, str]]:
    """A tenant of 20,000 memories or more is recalled in one pass until it has its own indexes."""
    if not conn.execute("SELECT pg_has_role(cogmem.caller(), 'cogmem_admin', 'USAGE')").fetchone()[0]:  # type: ignore[index]
        return
    rows = conn.execute("SELECT tenant, state FROM cogmem.tenant_indexes() WHERE state <> 'ready'").fetchall()
    pending = sorted({t or "(gone)" for t, _ in rows})
    yield (
        ("ok", "large", "every large tenant has its own indexes", "")
        if not rows
        else ("warn", "large", f"indexes to build or drop: {', '.join(pending[:5])}", "cogmem index-tenants --apply")
    )


@click.command()
@json_option
@pass_context
def doctor(ctx: Context, as_json: bool) -> None:
    """Check the server, extensions, schedule, embedding, roles, audit sealing and never-cut rings; say what to fix."""
    with psycopg.connect(ctx.dsn(), autocommit=True) as conn, sql_errors():
        checks = list(_doctor_checks(conn))
    keys = ("status", "check", "finding", "fix")
    emit(
        [dict(zip(keys, c, strict=True)) for c in checks],
        as_json,
        lambda c: f"{c['status']:4} {c['check']:10} {c['finding']}" + (f"\n     fix: {c['fix']}" if c["fix"] else ""),
    )
    if any(c[0] == "fail" for c in checks):
        ctx.exit_code = 1


@click.command()
@pass_context
def demo(ctx: Context) -> None:
    """Run the Monday/Wednesday story end to end."""
    from cogmem_pg.demo import run_demo

    sys.exit(run_demo(ctx.dsn(), echo=click.echo))


@click.command("mcp")
@click.option("--tenant", envvar="COGMEM_TENANT", required=True, help="The tenant the server is bound to.")
@click.option("--project", default=None, help="The project of the briefing resource and new sessions.")
@click.option(
    "--agent",
    envvar="COGMEM_AGENT",
    default=None,
    help="The agent the server speaks for: what it remembers is this agent's, and it recalls what this agent heard.",
)
@click.option(
    "--http",
    "http",
    default=None,
    metavar="HOST:PORT",
    help="Serve streamable HTTP (e.g. 127.0.0.1:8765) instead of stdio.",
)
@pass_context
def mcp_command(ctx: Context, tenant: str, project: str | None, agent: str | None, http: str | None) -> None:
    """An MCP server for TENANT's memory: stdio by default, streamable HTTP on loopback with --http."""
    try:
        from cogmem_pg.mcp_server import build_server
    except ImportError as exc:
        raise click.ClickException(f"the MCP server needs the mcp extra: pip install 'cogmem-pg[mcp]' ({exc})") from exc
    try:
        server = build_server(ctx.client(), tenant, project, agent)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if http is None:
        server.run("stdio")
        return
    host, _, port = http.rpartition(":")
    server.run("streamable-http", host=host or "127.0.0.1", port=int(port))


COMMANDS = (up, down, status, psql, migrate, doctor, demo, mcp_command)
