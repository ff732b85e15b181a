"""The rest of the API on the command line: feedback and plain reads for agents and scripts, inbound
attention to try a text, and the administrative verbs (reach, settings, topics, BIOS rules, erasure).
Like cli_api, each runs on the invocation's one Client, prints SQL errors with SQLSTATE and HINT and
exits 1, and takes --json where a script reads the answer."""

from __future__ import annotations

import json
from datetime import datetime
from uuid import UUID

import click

from cogmem_pg.cli import Context, _emit, bios, json_option, main, pass_context, sql_errors
from cogmem_pg.cli_api import parse_json

# -- the loop and plain reads ----------------------------------------------------------------------------


@main.command()
@click.argument("recall_id", type=click.UUID)
@click.argument("outcome", type=click.FloatRange(-1, 1))
@click.option("--used", "used", type=int, multiple=True, help="A memory the answer used (default: all injected).")
@pass_context
def feedback(ctx: Context, recall_id: UUID, outcome: float, used: tuple[int, ...]) -> None:
    """Record how the answer built on RECALL_ID went: OUTCOME from -1 (harmful) to 1 (it worked)."""
    with sql_errors():
        credited = ctx.client().feedback(recall_id, outcome, list(used) or None)
    click.echo(f"{credited} memories credited")


@main.command()
@click.argument("tenant")
@click.argument("query")
@click.option("--limit", default=10, show_default=True)
@json_option
@pass_context
def search(ctx: Context, tenant: str, query: str, limit: int, as_json: bool) -> None:
    """Memories nearest to QUERY, every ring; a plain read that logs and strengthens nothing."""
    with sql_errors():
        found = ctx.client().search(tenant, query, limit)
    _emit(found, as_json, lambda f: f"{f.memory_id:>6} [{f.ring}] {f.score:.3f}  {f.content}")


@main.command()
@click.argument("tenant")
@click.argument("memory_id", type=int)
@json_option
@pass_context
def siblings(ctx: Context, tenant: str, memory_id: int, as_json: bool) -> None:
    """Memories that look like MEMORY_ID but differ in a detail (a host, a number)."""
    with sql_errors():
        rows = ctx.client().siblings(tenant, memory_id)
    _emit(
        rows, as_json, lambda s: f"{s.sibling_id:>6} {s.similarity:.2f} differs in {', '.join(s.differs)}: {s.content}"
    )


@main.command()
@click.argument("tenant")
@click.argument("text")
@click.option("--limit", default=5, show_default=True)
@json_option
@pass_context
def related(ctx: Context, tenant: str, text: str, limit: int, as_json: bool) -> None:
    """The established memories TEXT might contradict (what a classifier is shown)."""
    with sql_errors():
        rows = ctx.client().related(tenant, text, limit=limit)
    _emit(rows, as_json, lambda r: f"{r.memory_id:>6} [{r.ring}] {r.similarity:.2f}  {r.content}")


@main.command()
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
    _emit(rows, as_json, lambda f: f"{f.at:%Y-%m-%d %H:%M} {f.kind:9} {f.content}")


@main.command("remember-many")
@click.argument("tenant")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@json_option
@pass_context
def remember_many(ctx: Context, tenant: str, file, as_json: bool) -> None:
    """Remember every line of FILE (JSON lines: a string, or {"content", "ring", "topics", "source"})."""
    items = []
    for n, line in enumerate(file, start=1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise click.BadParameter(f"line {n} is not JSON: {exc}", param_hint="FILE") from exc
    with sql_errors():
        stored = ctx.client().remember_many(tenant, items)
    _emit(stored, as_json, lambda s: f"{s.item:>5} {s.action:9} {s.memory_id or '-':>6} in {s.ring}")


@main.command()
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


@main.command()
@click.argument("tenant", required=False)
@pass_context
def rehearse(ctx: Context, tenant: str | None) -> None:
    """Apply logged rehearsals to the statistics now (pg_cron does it every minute)."""
    with sql_errors():
        click.echo(f"{ctx.client().apply_rehearsals(tenant)} rehearsals applied")


# -- administrators ----------------------------------------------------------------------------------------


@main.command()
@click.argument("role")
@click.argument("tenant")
@click.option("--vault", is_flag=True, help="Also the tenant's vault.")
@pass_context
def grant(ctx: Context, role: str, tenant: str, vault: bool) -> None:
    """Let ROLE reach TENANT (row-level security and the API's reach checks)."""
    with sql_errors():
        ctx.client().grant_tenant(role, tenant, vault=vault)
    click.echo(f"{role} reaches {tenant}{' and its vault' if vault else ''}")


@main.command()
@click.argument("role")
@click.argument("tenant")
@pass_context
def revoke(ctx: Context, role: str, tenant: str) -> None:
    with sql_errors():
        gone = ctx.client().revoke_tenant(role, tenant)
    click.echo(f"{role} no longer reaches {tenant}" if gone else f"{role} did not reach {tenant}")


@main.command()
@click.argument("tenant")
@click.argument("settings")
@click.option("--layer", default=None, help="Settings of one layer (allocation, half-life, priority).")
@pass_context
def configure(ctx: Context, tenant: str, settings: str, layer: str | None) -> None:
    """Change TENANT's settings, given as a JSON object; prints them as they now are."""
    wanted = parse_json(settings, "SETTINGS")
    with sql_errors():
        click.echo(json.dumps(ctx.client().configure_tenant(tenant, wanted, layer), default=str))


@main.group()
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
    _emit(rows, as_json, lambda t: f"{t.topic:14}{' *' if t.overridden else '  '} {', '.join(t.keywords)}")


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


@main.command()
@click.argument("tenant")
@click.argument("memory_id", type=int)
@click.option("--reason", required=True, help="Why (kept in the tombstone, e.g. 'GDPR request 2026/17').")
@pass_context
def erase(ctx: Context, tenant: str, memory_id: int, reason: str) -> None:
    """Erase one memory and what quotes it; the audit trail keeps a tombstone."""
    with sql_errors():
        gone = ctx.client().erase(tenant, memory_id, reason)
    click.echo(f"memory {memory_id} erased" if gone else f"no memory {memory_id}")


@main.command("erase-subject")
@click.argument("tenant")
@click.argument("subject")
@click.option("--reason", required=True, help="Why (kept in the tombstones).")
@json_option
@pass_context
def erase_subject(ctx: Context, tenant: str, subject: str, reason: str, as_json: bool) -> None:
    """Erase everything about a person (KVKK art. 7, GDPR art. 17)."""
    with sql_errors():
        counts = ctx.client().erase_subject(tenant, subject, reason)
    if as_json:
        click.echo(json.dumps(counts))
        return
    for kind, count in counts.items():
        click.echo(f"{kind:14} {count}")


# -- sharding (cogmem_pg/shards.py, docs/scaling.md) -------------------------------------------------------


@main.group()
def shards() -> None:
    """Tenants across PostgreSQL nodes with PL/Proxy: a router database in front of shard clusters."""


@shards.command("init")
@click.option("--shards", "nodes", type=click.IntRange(1, 16), default=2, show_default=True, help="Shard clusters.")
@click.option("--partitions", type=int, default=4, show_default=True, help="A power of two, spread over them.")
def shards_init(nodes: int, partitions: int) -> None:
    """Start local shard clusters beside the embedded one and make its router database."""
    from cogmem_pg.cluster import Cluster
    from cogmem_pg.shards import ROUTER_DATABASE, init_local

    default = Cluster.default()
    try:
        _, dsns, routed = init_local(default, nodes, partitions)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--partitions") from exc
    for n, dsn in enumerate(dsns):
        click.echo(f"partition {n}: {dsn}")
    click.echo(f"router: {default.dsn(ROUTER_DATABASE)} ({routed} API functions routed)")


@shards.command("status")
@json_option
def shards_status(as_json: bool) -> None:
    """Each local shard: where it is, whether it runs, its tenants."""
    import psycopg

    from cogmem_pg.cluster import Cluster
    from cogmem_pg.shards import LocalShards

    rows = []
    for n, node in enumerate(LocalShards.beside(Cluster.default()).nodes()):
        row = {"node": n, "dsn": node.dsn(), "running": node.running(), "tenants": None}
        if row["running"]:
            with psycopg.connect(node.dsn(), autocommit=True) as conn:
                row["tenants"] = conn.execute("SELECT count(*) FROM cogmem.tenants").fetchone()[0]  # type: ignore[index]
        rows.append(row)
    if not rows:
        raise click.ClickException("no local shards: run `cogmem shards init` first")
    _emit(
        rows,
        as_json,
        lambda r: (
            f"node {r['node']}: {'up' if r['running'] else 'down'}, "
            f"{r['tenants'] if r['tenants'] is not None else '?'} tenants  {r['dsn']}"
        ),
    )


@shards.command("schedule-gut")
@click.option("--release", "release_cron", default="30 4 * * *", show_default=True, help="When the router releases.")
@click.option("--collect", "collect_cron", default="0 4 * * *", show_default=True, help="When each shard collects.")
def shards_schedule_gut(release_cron: str, collect_cron: str) -> None:
    """Schedule the Gut across the local shards: each collects, then the router releases from all."""
    import psycopg

    from cogmem_pg.cluster import Cluster
    from cogmem_pg.shards import ROUTER_DATABASE, schedule_gut

    try:
        done = schedule_gut(Cluster.default().dsn(ROUTER_DATABASE), release_cron, collect_cron)
    except (ValueError, psycopg.Error) as exc:
        raise click.ClickException(str(exc)) from exc
    for line in done:
        click.echo(line)


@shards.command("move")
@click.argument("tenant")
@click.option("--to", "target", type=int, required=True, help="The partition to move it to.")
def shards_move(tenant: str, target: int) -> None:
    """Move TENANT to partition --to with its memories, statistics, episodes, vault and audit chain.
    Safe to run again after an interruption: it finishes the move."""
    import psycopg

    from cogmem_pg.cluster import Cluster
    from cogmem_pg.shards import ROUTER_DATABASE, move_tenant

    try:
        moved = move_tenant(Cluster.default().dsn(ROUTER_DATABASE), tenant, target)
    except (ValueError, RuntimeError, psycopg.Error) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"moved {', '.join(moved)} to partition {target}; audit chains verified")
