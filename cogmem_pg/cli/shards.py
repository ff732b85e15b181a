"""Sharding (cogmem_pg.shards, docs/scaling.md): local shard clusters behind a PL/Proxy router, their
status, the Gut's schedule across them, and moving a tenant."""

from __future__ import annotations

import click
import psycopg

from cogmem_pg.cli.common import emit, json_option, sql_errors
from cogmem_pg.cluster import Cluster


@click.group()
def shards() -> None:
    """Tenants across PostgreSQL nodes with PL/Proxy: a router database in front of shard clusters."""


@shards.command("init")
@click.option("--shards", "nodes", type=click.IntRange(1, 16), default=2, show_default=True, help="Shard clusters.")
@click.option("--partitions", type=int, default=4, show_default=True, help="A power of two, spread over them.")
def shards_init(nodes: int, partitions: int) -> None:
    """Start local shard clusters beside the embedded one and make its router database."""
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
    emit(
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
    from cogmem_pg.shards import ROUTER_DATABASE, schedule_gut

    with sql_errors(verbatim=True):
        done = schedule_gut(Cluster.default().dsn(ROUTER_DATABASE), release_cron, collect_cron)
    for line in done:
        click.echo(line)


@shards.command("move")
@click.argument("tenant")
@click.option("--to", "target", type=int, required=True, help="The partition to move it to.")
def shards_move(tenant: str, target: int) -> None:
    """Move TENANT to partition --to with its memories, statistics, episodes, vault and audit chain.
    Safe to run again after an interruption: it finishes the move."""
    from cogmem_pg.shards import ROUTER_DATABASE, move_tenant

    with sql_errors(RuntimeError, verbatim=True):
        moved = move_tenant(Cluster.default().dsn(ROUTER_DATABASE), tenant, target)
    click.echo(f"moved {', '.join(moved)} to partition {target}; audit chains verified")


COMMANDS = (shards,)
