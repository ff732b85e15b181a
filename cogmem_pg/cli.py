"""The `cogmem` command line. With DATABASE_URL (or --dsn) it uses that server; without, the embedded
cluster under .cogmem/ (started, and the schema installed, on first use)."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

import click
import psycopg
import psycopg.sql

from cogmem_pg import bios as bios_presets
from cogmem_pg.cluster import Cluster, ClusterError
from cogmem_pg.migrate import current_revision, head_revision, install


def start_embedded() -> Cluster:
    """Starts the embedded cluster (a no-op when it runs), turning its failures into CLI errors."""
    cluster = Cluster.default()
    try:
        cluster.start()
    except ClusterError as exc:
        raise click.ClickException(str(exc)) from exc
    return cluster


class Context:
    def __init__(self, dsn: str | None) -> None:
        self.explicit_dsn = dsn
        self.exit_code = 0  # a command's verdict (guard check: 2 when something blocks), applied at the end
        self._client: Any = None

    def client(self):
        """The invocation's one Client (a small pool), created on first use and closed at the end."""
        if self._client is None:
            from cogmem_pg.client import Client

            self._client = Client(self.dsn())
            click.get_current_context().find_root().call_on_close(self._client.close)
        return self._client

    def server_dsn(self) -> str:
        """The server to use: the given DSN, or the embedded cluster, started if needed."""
        return self.explicit_dsn or start_embedded().dsn()

    def dsn(self) -> str:
        """server_dsn(), with the schema installed first on the embedded cluster when it is not at head."""
        dsn = self.server_dsn()
        if not self.explicit_dsn and current_revision(dsn) != head_revision():
            install(dsn)
        return dsn


pass_context = click.make_pass_decorator(Context)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")


def _emit(rows: Iterable[Any], as_json: bool, line) -> None:
    """One JSON object per row with --json, else line(row) per row."""
    for row in rows:
        if as_json:
            data = dataclasses.asdict(row) if dataclasses.is_dataclass(row) and not isinstance(row, type) else row
            click.echo(json.dumps(data, default=str, ensure_ascii=False))
        else:
            click.echo(line(row))


@contextmanager
def sql_errors() -> Iterator[None]:
    """Bad input and SQL errors end the command with their message, SQLSTATE and HINT, exit status 1."""
    try:
        yield
    except (ValueError, psycopg.Error) as exc:
        raise click.ClickException(_sql_error_text(exc)) from exc


def _sql_error_text(exc: Exception) -> str:
    if isinstance(exc, psycopg.Error) and exc.diag.message_primary:
        hint = f"\nHINT: {exc.diag.message_hint}" if exc.diag.message_hint else ""
        return f"{exc.diag.message_primary} ({exc.sqlstate}){hint}"
    return str(exc).strip()


@click.group()
@click.option("--dsn", envvar="DATABASE_URL", help="PostgreSQL connection string (default: embedded cluster).")
@click.version_option(package_name="cogmem-pg")
@click.pass_context
def main(ctx: click.Context, dsn: str | None) -> None:
    """cogmem-pg: cognitive memory for AI agents, inside PostgreSQL."""
    ctx.obj = Context(dsn)


@main.result_callback()
@click.pass_context
def _finish(ctx: click.Context, *_: Any, **__: Any) -> None:
    if ctx.obj.exit_code:
        ctx.exit(ctx.obj.exit_code)


@main.command()
def up() -> None:
    """Start the embedded cluster and install or upgrade the schema."""
    cluster = start_embedded()
    revision = install(cluster.dsn())
    click.echo(f"cogmem is up: {cluster.dsn()} (schema {revision})")


@main.command()
def down() -> None:
    """Stop the embedded cluster (its data stays under .cogmem/)."""
    cluster = Cluster.default()
    try:
        cluster.stop()
    except ClusterError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo("cogmem is down")


@main.command()
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
            "send embeddings from the client (cogmem_pg.Client embeds) or see README, Inbound attention"
        )


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("psql_args", nargs=-1, type=click.UNPROCESSED)
@pass_context
def psql(ctx: Context, psql_args: tuple[str, ...]) -> None:
    """Open psql on the cogmem database (the embedded cluster unless --dsn); extra arguments go to psql."""
    from cogmem_pg.cluster import pg_bindir

    try:
        binary = str(pg_bindir() / "psql")
    except ClusterError:
        binary = "psql"
    dsn = ctx.dsn()
    try:
        os.execvp(binary, [binary, dsn, *psql_args])
    except OSError as exc:
        raise click.ClickException(f"cannot run psql ({exc}): install postgresql-client") from exc


@main.command()
@pass_context
def migrate(ctx: Context) -> None:
    """Install or upgrade the cogmem schema (alembic revisions, then sql/)."""
    click.echo(f"cogmem schema at revision {install(ctx.server_dsn())}")


@main.group()
def bios() -> None:
    """BIOS rules: presets, versions, subscriptions."""


def _bios_call(ctx: Context, action):
    """Runs action(conn) on a connection of the invocation's client; errors exit non-zero, clearly."""
    with ctx.client().connection() as conn, sql_errors():
        return action(conn)


def _changes_json(preset: bios_presets.Preset, changes: list[bios_presets.Change], show_kept: bool) -> str:
    shown = [c.__dict__ for c in changes if c.change != "keep" or show_kept]
    return json.dumps(
        {"preset": preset.name, "version": preset.version, **bios_presets.counts(changes), "changes": shown}
    )


def _echo_changes(changes: list[bios_presets.Change], show_kept: bool) -> None:
    for c in changes:
        if c.change != "keep" or show_kept:
            mark = {"retire": "-", "add": "+", "reinstate": "^", "keep": "="}[c.change]
            click.echo(f"{mark} {c.change:9} {c.category:13} {c.severity:6} {c.requirement or '':30} {c.rule}")


@bios.command("load")
@click.argument("name")
@click.option("--tenant", default=None, help="Load as one tenant's own rules (default: global rules).")
@click.option(
    "--subscribe",
    "subscribe_to",
    default=None,
    metavar="TENANT|all",
    help="Also subscribe a tenant ('all': every tenant) to the preset.",
)
@click.option("--downgrade", is_flag=True, help="Allow loading a version older than the one loaded.")
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
@pass_context
def bios_load(
    ctx: Context, name: str, tenant: str | None, subscribe_to: str | None, downgrade: bool, as_json: bool
) -> None:
    """Load (or upgrade to) a preset by name (see `cogmem bios list`) or from a TOML file."""

    def load(conn):
        with conn.transaction():
            preset, changes = bios_presets.load_preset(conn, name, tenant, downgrade=downgrade)
            if subscribe_to:
                bios_presets.subscribe(conn, preset.name, None if subscribe_to == "all" else subscribe_to)
        return preset, changes

    preset, changes = _bios_call(ctx, load)
    n = bios_presets.counts(changes)
    if as_json:
        click.echo(_changes_json(preset, changes, show_kept=False))
        return
    click.echo(
        f"{preset.title} ({preset.name} {preset.version}): {n['add']} new of {len(preset.rules)} rules, "
        f"{n['retire']} retired, {n['reinstate']} reinstated, {n['keep']} unchanged"
    )
    _echo_changes(changes, show_kept=False)


@bios.command("diff")
@click.argument("name")
@click.option("--tenant", default=None, help="Compare with one tenant's own rules of the preset.")
@click.option("--all", "show_kept", is_flag=True, help="Show the unchanged rules too.")
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
@pass_context
def bios_diff(ctx: Context, name: str, tenant: str | None, show_kept: bool, as_json: bool) -> None:
    """Show what `cogmem bios load NAME` would change, changing nothing."""
    preset, changes = _bios_call(ctx, lambda conn: bios_presets.diff_preset(conn, name, tenant))
    n = bios_presets.counts(changes)
    if as_json:
        click.echo(_changes_json(preset, changes, show_kept))
        return
    click.echo(
        f"{preset.name} {preset.version}: {n['add']} to add, {n['retire']} to retire, "
        f"{n['reinstate']} to reinstate, {n['keep']} unchanged"
    )
    _echo_changes(changes, show_kept)


def _bios_subscriptions(ctx: Context, preset: str, tenants: tuple[str, ...], change, said: tuple[str, str]) -> None:
    """change(conn, preset, tenant) for each tenant (none: every tenant) in one transaction; said[changed]."""

    def run(conn):
        with conn.transaction():
            return [change(conn, preset, t) for t in tenants or (None,)]

    for tenant, changed in zip(tenants or ("every tenant",), _bios_call(ctx, run), strict=True):
        click.echo(f"{tenant}: {said[changed]} {preset}")


@bios.command("subscribe")
@click.argument("preset")
@click.argument("tenants", nargs=-1)
@pass_context
def bios_subscribe(ctx: Context, preset: str, tenants: tuple[str, ...]) -> None:
    """TENANTS take PRESET (none given: every tenant), so its rules are injected for them."""
    _bios_subscriptions(ctx, preset, tenants, bios_presets.subscribe, ("already takes", "subscribed to"))


@bios.command("unsubscribe")
@click.argument("preset")
@click.argument("tenants", nargs=-1)
@pass_context
def bios_unsubscribe(ctx: Context, preset: str, tenants: tuple[str, ...]) -> None:
    """TENANTS stop taking PRESET (none given: the subscription for every tenant)."""
    _bios_subscriptions(ctx, preset, tenants, bios_presets.unsubscribe, ("did not take", "unsubscribed from"))


_COVERAGE = """
SELECT preset, category, rules, must, should, always_on, in_turkish, with_rationale, taken_by
FROM cogmem.bios_coverage ORDER BY preset, category
"""


@bios.command("list")
@click.option("--rules", is_flag=True, help="List the rules in force instead of the coverage.")
@click.option("--tenant", default=None, help="With --rules: the rules in force for this tenant, in its language.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
@pass_context
def bios_list(ctx: Context, rules: bool, tenant: str | None, as_json: bool) -> None:
    """Presets shipped and loaded, and their coverage per category (or, with --rules, the rules)."""
    if rules:
        _bios_rules(ctx, tenant, as_json)
        return

    def read(conn):
        loaded = {
            r[0]: r
            for r in conn.execute("SELECT preset, version, loaded_at FROM cogmem.bios_presets WHERE tenant IS NULL")
        }
        return loaded, conn.execute(_COVERAGE).fetchall()

    loaded, coverage = _bios_call(ctx, read)
    shipped = {n: bios_presets.read_preset(n) for n in bios_presets.available_presets()}
    if as_json:
        for name in sorted(shipped.keys() | loaded.keys()):
            p = shipped.get(name)
            click.echo(
                json.dumps(
                    {
                        "preset": name,
                        "shipped_version": p.version if p else None,
                        "loaded_version": loaded[name][1] if name in loaded else None,
                        "coverage": [
                            dict(
                                zip(
                                    (
                                        "category",
                                        "rules",
                                        "must",
                                        "should",
                                        "always_on",
                                        "in_turkish",
                                        "with_rationale",
                                        "taken_by",
                                    ),
                                    row[1:],
                                    strict=True,
                                )
                            )
                            for row in coverage
                            if row[0] == name
                        ],
                    },
                    default=str,
                )
            )
        return
    for name in sorted(shipped.keys() | loaded.keys()):
        p = shipped.get(name)
        state = f"v{loaded[name][1]} loaded {loaded[name][2]:%Y-%m-%d %H:%M}" if name in loaded else "not loaded"
        newer = p is not None and name in loaded and p.version != loaded[name][1]
        click.echo(
            f"{name:16} {p.title if p else '(own preset)'}: shipped v{p.version if p else '-'}, {state}"
            + (" (a new version is shipped: cogmem bios diff " + name + ")" if newer else "")
        )
        for row in coverage:
            if row[0] == name:
                click.echo(
                    f"    {row[1]:13} {row[2]:3} rules ({row[3]} must, {row[4]} should, {row[5]} always on), "
                    f"{row[6]} in Turkish, taken by {row[8] or 'no tenant'}"
                )


def _bios_rules(ctx: Context, tenant: str | None, as_json: bool) -> None:
    # A tenant's rules in force, in its language; without one, every rule in force.
    source = "cogmem.bios_rules_in_force WHERE tenant = %s" if tenant else "cogmem.active_bios_rules"
    query = (
        "SELECT rule_id, coalesce(preset, ''), category, severity::text, coalesce(requirement, ''), rule"
        f" FROM {source} ORDER BY category, rule_id"
    )
    rows = _bios_call(ctx, lambda conn: conn.execute(query, (tenant,) if tenant else ()).fetchall())
    for row in rows:
        if as_json:
            keys = ("rule_id", "preset", "category", "severity", "requirement", "rule")
            click.echo(json.dumps(dict(zip(keys, row, strict=True))))
        else:
            click.echo(f"{row[0]:>5} {row[1]:15} {row[2]:13} {row[3]:6} {row[4]:30} {row[5]}")


@main.command()
@click.argument("tenant")
@click.option("--language", default="english", show_default=True)
@pass_context
def tenant(ctx: Context, tenant: str, language: str) -> None:
    """Create a tenant (idempotent)."""
    with psycopg.connect(ctx.dsn(), autocommit=True) as conn:
        try:
            conn.execute("SELECT cogmem.create_tenant(%s, %s)", (tenant, language))
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc
    click.echo(f"tenant {tenant} ({language}) ready")


def _client(ctx: Context):
    return nullcontext(ctx.client())


@main.command()
@click.argument("tenant")
@click.argument("content")
@click.option("--ring", default=None, help="Ring (default: routed automatically).")
@click.option("--topic", "topics", multiple=True, help="Topic (default: detected).")
@click.option("--source", default="{}", help='Provenance as JSON, e.g. \'{"who": "ayse"}\'.')
@click.option("--conversation", default=None, help="The conversation (thread, session) it was said in.")
@click.option("--speaker", default=None, help="Who said it.")
@click.option("--said-at", "said_at", type=click.DateTime(), default=None, help="When it was said (ISO 8601).")
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
    as_json: bool,
) -> None:
    """Remember CONTENT for TENANT (a turn of a conversation with --conversation, --speaker, --said-at)."""
    with _client(ctx) as client:
        try:
            memory = client.remember(
                tenant,
                content,
                ring=ring,
                topics=list(topics) or None,  # type: ignore[arg-type]
                source=json.loads(source),
                conversation=conversation,
                speaker=speaker,
                said_at=said_at,
            )
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc
    if as_json:
        _emit([memory], True, str)
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


@main.command()
@click.argument("tenant")
@click.argument("message")
@click.option("--budget", default=3200, show_default=True)
@click.option("--topic", "topics", multiple=True, help="Topic (default: detected).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
@pass_context
def recall(ctx: Context, tenant: str, message: str, budget: int, topics: tuple[str, ...], as_json: bool) -> None:
    """Recall what TENANT's agent should know about MESSAGE."""
    from cogmem_pg.render import render_recall

    with _client(ctx) as client:
        try:
            result = client.recall(tenant, message, topics=list(topics) or None, budget=budget)
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc
    if as_json:
        for item in result.items:
            click.echo(json.dumps({**item.__dict__, "recall_id": str(item.recall_id)}, ensure_ascii=False))
    else:
        click.echo(render_recall(result, budget))


@main.command()
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
                try:
                    rows = conn.execute(
                        "SELECT decision, memories FROM cogmem.consolidate(%s, %s)", (moment, name)
                    ).fetchall()
                except psycopg.Error as exc:
                    raise click.ClickException(_sql_error_text(exc)) from exc
                for decision, count in rows:
                    totals[decision] = totals.get(decision, 0) + count
    if as_json:
        click.echo(json.dumps({"as_of": moment.isoformat(), "tenants": len(names), "decisions": totals}))
        return
    if not totals:
        click.echo("nothing to do: this night is already consolidated")
    for decision in sorted(totals):
        click.echo(f"{decision:10} {totals[decision]}")


@main.group()
def gut() -> None:
    """The Gut: patterns shared across tenants under k-anonymity and a privacy budget (docs/gut.md)."""


@gut.command("opt-in")
@click.argument("tenant")
@click.option("--receive/--no-receive", default=None, help="Also switch receiving patterns on or off.")
@pass_context
def gut_opt_in(ctx: Context, tenant: str, receive: bool | None) -> None:
    """Let TENANT's proven memories, de-identified, contribute to the Gut (administrators)."""
    _gut_switch(ctx, tenant, True, receive)


@gut.command("opt-out")
@click.argument("tenant")
@click.option("--receive/--no-receive", default=None, help="Also switch receiving patterns on or off.")
@pass_context
def gut_opt_out(ctx: Context, tenant: str, receive: bool | None) -> None:
    """Stop TENANT contributing and remove what it contributed (administrators)."""
    _gut_switch(ctx, tenant, False, receive)


def _gut_switch(ctx: Context, tenant: str, contribute: bool, receive: bool | None) -> None:
    with _client(ctx) as client:
        try:
            switches = client.gut_configure(tenant, contribute=contribute, receive=receive)
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc
    click.echo(
        f"{tenant}: contributes {'yes' if switches.gut_contribute else 'no'}, "
        f"receives {'yes' if switches.gut_receive else 'no'}, {switches.contributions} contributions"
    )


@gut.command("release")
@click.option("--epsilon", type=float, default=None, help="Privacy budget to spend (default: what is left).")
@json_option
@pass_context
def gut_release(ctx: Context, epsilon: float | None, as_json: bool) -> None:
    """Publish patterns from every opted-in tenant's contributions (the cogmem_gut role)."""
    with _client(ctx) as client:
        try:
            done = client.gut_release(epsilon)
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc
    _emit(
        [done],
        as_json,
        lambda d: (
            f"release {d.release_id}: epsilon {d.epsilon_spent:g} (delta {d.delta_spent:.1e}), "
            f"threshold {d.threshold} tenants, {d.published} published, {d.withdrawn} withdrawn, "
            f"{d.remaining:g} left this period"
        ),
    )


@gut.command("patterns")
@click.argument("tenant")
@json_option
@pass_context
def gut_patterns(ctx: Context, tenant: str, as_json: bool) -> None:
    """The patterns TENANT receives, with their noisy support and success."""
    with _client(ctx) as client:
        try:
            patterns = client.gut_patterns(tenant)
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc
    if as_json:
        _emit(patterns, True, str)
        return
    for p in patterns:
        success = "-" if p.success is None else f"{p.success:.1f}"
        click.echo(f"#{p.pattern_id:<5} ~{p.support:>4} teams  success {success:>3}  {p.content}")
    if not patterns:
        click.echo(f"{tenant} receives no patterns")


@gut.command("ledger")
@json_option
@pass_context
def gut_ledger(ctx: Context, as_json: bool) -> None:
    """Epsilon spent and left per budget period."""
    with _client(ctx) as client:
        try:
            periods = client.gut_ledger()
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc
    if as_json:
        _emit(periods, True, str)
        return
    for p in periods:
        click.echo(
            f"{p.period_start:%Y-%m-%d}  spent {p.spent:g} of {p.budget:g} ({p.remaining:g} left)  "
            f"{p.releases} releases, {p.published} published, {p.withdrawn} withdrawn"
        )
    if not periods:
        click.echo("no releases yet")


@main.group()
def audit() -> None:
    """The audit trail: seal it, verify it, explain a recall."""


@audit.command("seal")
@pass_context
def audit_seal(ctx: Context) -> None:
    """Append new audit rows to their tenants' hash chains (pg_cron does this every minute)."""
    with _client(ctx) as client:
        try:
            click.echo(f"sealed {client.seal_audit()} rows")
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc


@audit.command("verify")
@click.option("--tenant", default=None, help="Only this tenant.")
@json_option
@pass_context
def audit_verify(ctx: Context, tenant: str | None, as_json: bool) -> None:
    """Recompute the hash chains; exit status 1 when any was tampered with."""
    with _client(ctx) as client:
        try:
            checks = client.verify_audit(tenant)
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc
    for check in checks:
        verdict = "ok" if check.ok else f"TAMPERED at audit_id {check.first_bad_id}"
        _emit([check], as_json, lambda c, verdict=verdict: f"{c.tenant:20} {c.rows_checked:>10} rows  {verdict}")
    if not all(check.ok for check in checks):
        sys.exit(1)


@audit.command("export")
@click.argument("partition")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@pass_context
def audit_export(ctx: Context, partition: str, directory: Path) -> None:
    """Write a finished month (PARTITION, e.g. audit_log_2026_01) to DIRECTORY as JSON lines with its chain
    hashes and a manifest, then record the export (only exported months are ever dropped)."""
    import hashlib

    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{partition}.jsonl"
    digest = hashlib.sha256()
    rows = 0
    with psycopg.connect(ctx.dsn()) as conn:
        try:
            exists = conn.execute(
                "SELECT 1 FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid"
                " WHERE i.inhparent = 'cogmem.audit_log'::regclass AND c.relname = %s",
                (partition,),
            ).fetchone()
            if not exists:
                raise click.ClickException(f"no audit partition named {partition!r}")
            query = psycopg.sql.SQL(
                "SELECT row_to_json(r)::text FROM (SELECT l.*, c.seq, encode(c.row_hash, 'hex') AS row_hash"
                " FROM cogmem.{} AS l LEFT JOIN cogmem.audit_chain AS c USING (tenant, audit_id)"
                " ORDER BY l.tenant, c.seq) AS r"
            ).format(psycopg.sql.Identifier(partition))
            with target.open("w", encoding="utf-8") as out, conn.cursor(name="audit_export") as cur:
                for (line,) in cur.execute(query):
                    out.write(line + "\n")
                    digest.update((line + "\n").encode())
                    rows += 1
            marked = conn.execute(
                "SELECT cogmem.audit_mark_exported(%s, %s)", (partition, str(target.resolve()))
            ).fetchone()
            conn.commit()
        except psycopg.Error as exc:
            target.unlink(missing_ok=True)
            raise click.ClickException(_sql_error_text(exc)) from exc
    manifest = {"partition": partition, "rows": rows, "sha256": digest.hexdigest(), "file": target.name}
    (directory / f"{partition}.manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    click.echo(f"exported {rows} rows of {partition} to {target} (recorded: {marked[0] if marked else 0} rows)")


@audit.command("explain")
@click.argument("recall_id")
@json_option
@pass_context
def audit_explain(ctx: Context, recall_id: str, as_json: bool) -> None:
    """Why RECALL_ID injected what it did: per item its layer, score, reason, provenance and history."""
    from uuid import UUID

    try:
        wanted = UUID(recall_id)
    except ValueError as exc:
        raise click.BadParameter(f"{recall_id!r} is not a UUID", param_hint="RECALL_ID") from exc
    with _client(ctx) as client:
        try:
            items = client.explain_recall(wanted)
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc
    if as_json:
        _emit(items, True, str)
        return
    for it in items:
        what = f"BIOS rule {it.rule_id}" if it.rule_id is not None else f"memory {it.memory_id}"
        click.echo(f"{it.item}. [{it.layer}] {what}  score {it.score:.4f}  {it.tokens} tokens")
        click.echo(f"   why:  {it.reason}")
        prov = it.provenance or {}
        if prov.get("kind") == "bios":
            req = f" ({prov.get('preset')} {prov.get('requirement')})" if prov.get("requirement") else ""
            click.echo(f"   from: {prov.get('severity')} rule in {prov.get('category')}{req}: {prov.get('rule')}")
        elif prov:
            click.echo(
                f"   from: created {str(prov.get('created_at', '?'))[:19]} by {prov.get('created_by', '?')} "
                f"in {prov.get('ring', '?')}{' (routed)' if prov.get('routed') else ''}"
            )
        else:
            click.echo("   from: erased or unknown")
        events = [
            f"{str(h['at'])[:10]} {h['event']}{' (after)' if h.get('after_this_recall') else ''}" for h in it.history
        ]
        if events:
            click.echo(f"   life: {', '.join(events)}")


@main.command("export")
@click.option(
    "--markdown",
    "directory",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write: one sub-folder per tenant, one file per memory and episode (an Obsidian vault).",
)
@click.option("--tenant", default=None, help="Only this tenant (default: every tenant you reach).")
@pass_context
def export_cmd(ctx: Context, directory: Path, tenant: str | None) -> None:
    """Write memories and episodes as Markdown with front-matter and [[wikilinks]]."""
    from cogmem_pg.markdown import export_markdown

    with psycopg.connect(ctx.dsn(), autocommit=True) as conn:
        try:
            tenants = (
                [tenant] if tenant else [r[0] for r in conn.execute("SELECT tenant FROM cogmem.tenants ORDER BY 1")]
            )
            for name in tenants:
                if conn.execute("SELECT FROM cogmem.tenants WHERE tenant = %s", (name,)).fetchone() is None:
                    raise click.ClickException(f'unknown tenant "{name}" (or not one you may read)')
                memories, episodes = export_markdown(conn, name, directory / name)
                click.echo(f"{name}: {memories} memories, {episodes} episodes -> {directory / name}")
        except psycopg.Error as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc


@main.command("import")
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
    """Read memories and episodes back from Markdown (the same text already stored is not duplicated)."""
    from cogmem_pg.embed import default_embedder
    from cogmem_pg.markdown import import_markdown

    folders = [directory / tenant] if tenant else sorted(p for p in directory.iterdir() if (p / "index.md").exists())
    if not folders or not all((f / "index.md").exists() for f in folders):
        raise click.ClickException(f"no exported tenant under {directory} (each has an index.md)")
    embedder = default_embedder()
    with psycopg.connect(ctx.dsn(), autocommit=True) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        try:
            for folder in folders:
                memories, episodes = import_markdown(
                    conn, folder.name, folder, embedder.embed if embedder is not None else None
                )
                click.echo(f"{folder.name}: {memories} memories, {episodes} episodes imported")
        except (psycopg.Error, ValueError, KeyError) as exc:
            raise click.ClickException(_sql_error_text(exc)) from exc


@main.command()
@pass_context
def demo(ctx: Context) -> None:
    """Run the Monday/Wednesday story end to end."""
    from cogmem_pg.demo import run_demo

    sys.exit(run_demo(ctx.dsn(), echo=click.echo))


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()


# The agent-facing commands (guard, conflicts, session, briefing, observe, trust, vault, identity, doctor),
# then feedback, plain reads, attention and the administrative verbs.
from cogmem_pg import cli_api, cli_more  # noqa: E402, F401
