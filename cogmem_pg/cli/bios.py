"""BIOS rules: shipped presets (load, diff, list), subscriptions, and rules of one's own (add, retire)."""

from __future__ import annotations

import json

import click

from cogmem_pg import bios as bios_presets
from cogmem_pg.cli.common import Context, pass_context, sql_errors


@click.group()
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


@bios.command("add")
@click.argument("category")
@click.argument("rule")
@click.option("--severity", type=click.Choice(["must", "should", "may"]), default="must", show_default=True)
@click.option("--tenant", default=None, help="One tenant's own rule (default: every tenant).")
@click.option("--requirement", default=None, help="The clause it implements, e.g. 'SOC2 CC6.1'.")
@click.option("--topic", "topic_list", multiple=True)
@click.option("--always-on", is_flag=True, help="Injected into every recall, whatever the topic.")
@click.option("--rationale", default=None)
@pass_context
def bios_add(
    ctx: Context,
    category: str,
    rule: str,
    severity: str,
    tenant: str | None,
    requirement: str | None,
    topic_list: tuple[str, ...],
    always_on: bool,
    rationale: str | None,
) -> None:
    """Add one immutable rule of your own (administrators)."""
    with sql_errors():
        rule_id = ctx.client().add_bios_rule(
            category,
            rule,
            severity,
            tenant=tenant,
            requirement=requirement,
            topics=list(topic_list) or None,
            always_on=always_on,
            rationale=rationale,
        )
    click.echo(f"rule {rule_id} added")


@bios.command("retire")
@click.argument("rule_id", type=int)
@click.argument("reason")
@pass_context
def bios_retire(ctx: Context, rule_id: int, reason: str) -> None:
    """Retire a rule (it stays in the trail; recall stops injecting it)."""
    with sql_errors():
        ctx.client().retire_bios_rule(rule_id, reason)
    click.echo(f"rule {rule_id} retired")


COMMANDS = (bios,)
