"""The Gut across shards: one shard key on every node, so that a release one node draws is taken on the
others, and the nights scheduled to collect on every node and release through the router."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import psycopg

from cogmem_pg.shards.router import partitions_of


def share_gut_key(partitions: Sequence[str], admin: str = "user=postgres") -> int:
    """Writes one Gut shard key onto every node of PARTITIONS (each node once), keeping the one they all
    hold already, and returns how many nodes hold it. With it, a release one node draws is imported on
    the others and a node's exported contributions are released on another; without it, nothing is
    (sql/068-gut.sql). ADMIN is added to the connection strings: the installer's role, which owns the
    key's table (no application role reads it, not even cogmem_gut)."""
    nodes = list(dict.fromkeys(partitions))
    held: set[bytes | None] = set()
    for node in nodes:
        with psycopg.connect(f"{node} {admin}", autocommit=True) as conn:
            row = conn.execute("SELECT shard_key FROM cogmem.gut_shard_key").fetchone()
            held.add(bytes(row[0]) if row else None)
    shared = next(iter(held)) if len(held) == 1 else None
    key = shared or secrets.token_bytes(32)
    for node in nodes:
        with psycopg.connect(f"{node} {admin}", autocommit=True) as conn:
            conn.execute(
                "INSERT INTO cogmem.gut_shard_key (shard_key) VALUES (%s) ON CONFLICT (only_row) DO UPDATE "
                "SET shard_key = excluded.shard_key, shared_at = now() "
                "WHERE gut_shard_key.shard_key IS DISTINCT FROM excluded.shard_key",
                (key,),
            )
    return len(nodes)


GUT_COLLECT = "CALL cogmem.gut_nightly(release => false)"
GUT_RELEASE = "SELECT count(*) FROM cogmem.gut_release()"


def schedule_gut(router_dsn: str, release_cron: str = "30 4 * * *", collect_cron: str = "0 4 * * *",
                 admin: str = "user=postgres") -> list[str]:  # fmt: skip
    """Schedules the Gut across shards with pg_cron, and returns where: each node collects its tenants'
    contributions (job "cogmem-gut", which must not release from one shard's tenants alone), then the
    router releases from all of them together (job "cogmem-gut-release" in the pg_cron database of the
    router's server, run in the router's database). ADMIN is added to the connection strings: a role
    that may schedule jobs (the jobs run as it)."""
    done = []
    for node in dict.fromkeys(partitions_of(router_dsn)):  # each node once
        with psycopg.connect(f"{node} {admin}", autocommit=True) as conn:
            conn.execute("SELECT cogmem._cron_schedule('cogmem-gut', %s, %s)", (collect_cron, GUT_COLLECT))
        done.append(f"cogmem-gut on {node}: {GUT_COLLECT} at {collect_cron}")
    with psycopg.connect(f"{router_dsn} {admin}", autocommit=True) as router:
        database, cron_database = router.execute(
            "SELECT current_database(), current_setting('cron.database_name', true)"
        ).fetchone()  # type: ignore[misc]
    if not cron_database:
        raise ValueError("the router's server has no pg_cron (cron.database_name is not set)")
    with psycopg.connect(f"{router_dsn} {admin} dbname={cron_database}", autocommit=True) as conn:
        conn.execute(
            "SELECT cron.schedule_in_database('cogmem-gut-release', %s, %s, %s)", (release_cron, GUT_RELEASE, database)
        )
    done.append(f"cogmem-gut-release in {database}: {GUT_RELEASE} at {release_cron}")
    return done
