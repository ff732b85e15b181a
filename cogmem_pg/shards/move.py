"""Moving a tenant to another partition with its ids and its audit chain (``move_tenant``)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from cogmem_pg.shards.router import partitions_of

_TENANT_TABLES = """
SELECT c.relname, c.relkind = 'p',
       ARRAY(SELECT a.attname::text FROM pg_attribute AS a
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
             ORDER BY a.attnum)
FROM pg_class AS c
WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND EXISTS (SELECT FROM pg_attribute AS a WHERE a.attrelid = c.oid AND a.attname = 'tenant' AND NOT a.attisdropped)
ORDER BY c.relname = 'tenants' DESC, c.relname
"""


# Tables whose key is not the tenant's: the target numbers their rows anew (nothing refers to them).
RENUMBERED = {"consolidation_runs": "run_id", "bios_subscriptions": "subscription_id"}
# A tenant's own BIOS rules and preset loads keep their ids, which carry the tenant's key
# (cogmem._keyed_bios_id); the rules' events, which have no tenant column, go with them.
KEYED_IDS = {"bios_rules": "rule_id", "bios_preset_loads": "load_id"}
_RULE_EVENTS = """
FROM cogmem.bios_rule_events AS e
WHERE e.rule_id IN (SELECT r.rule_id FROM cogmem.bios_rules AS r WHERE r.tenant = ANY ({names}))"""
# What a move cannot carry: a tenant's own rules or loads made before revision 0024 (ids of the global
# range, which may be taken on the target).
_NOT_MOVABLE = """
SELECT 'BIOS preset loads of its own made before revision 0024' FROM cogmem.bios_preset_loads
WHERE tenant = ANY (%(names)s) AND load_id < (1::bigint << 62)
UNION ALL
SELECT 'BIOS rules of its own made before revision 0024' FROM cogmem.bios_rules
WHERE tenant = ANY (%(names)s) AND rule_id < (1::bigint << 62)
LIMIT 1"""


class MoveInterrupted(RuntimeError):
    """Raised by a test's fail_after, as if the mover died right after that step."""


def move_tenant(router_dsn: str, tenant: str, target: int, admin: str = "user=postgres",
                fail_after: str | None = None) -> list[str]:  # fmt: skip
    """Moves TENANT (and any tenant of the same routing key) to partition TARGET, with its ids, and
    returns the tenants moved. The state is read from the shards, so running it again after any
    interruption finishes the move: copy (one transaction on the target), remove the old copy (one
    transaction on the source, which holds the tenant's row lock from before the copy, so no call
    writes there meanwhile), then switch the routing. Removing before switching means a call in
    between fails (the tenant is gone from the old shard) instead of writing to a copy about to go.
    ADMIN is added to the partitions' connection strings (a role that may bypass triggers)."""
    partitions = partitions_of(router_dsn)
    if not 0 <= target < len(partitions):
        raise ValueError(f"no partition {target}: the router has {len(partitions)}")
    with psycopg.connect(router_dsn, autocommit=True) as router:
        key, source = router.execute(
            "SELECT cogmem_router.tenant_hash(%s), cogmem_router.partition_of(%s) & %s",
            (tenant, tenant, len(partitions) - 1),
        ).fetchone()  # type: ignore[misc]
    old, new = f"{partitions[source]} {admin}", f"{partitions[target]} {admin}"
    moved = [tenant]
    if partitions[source] != partitions[target]:
        moved = _copy_and_remove(old, new, key, tenant, fail_after)
    with psycopg.connect(router_dsn, autocommit=True) as router:
        router.execute(
            "INSERT INTO cogmem_router.placements (tenant_hash, partition) VALUES (%s, %s) "
            "ON CONFLICT (tenant_hash) DO UPDATE SET partition = excluded.partition, moved_at = now()",
            (key, target),
        )
    if fail_after == "switch":
        raise MoveInterrupted("switch")
    with psycopg.connect(new, autocommit=True) as shard:
        for name in moved:
            checks = shard.execute("SELECT ok FROM cogmem.verify_audit(%s)", (name,)).fetchall()
            if not all(ok for (ok,) in checks):
                raise RuntimeError(f"the audit chain of {name} does not verify on partition {target}")
    return moved


def _copy_and_remove(old: str, new: str, key: int, tenant: str, fail_after: str | None) -> list[str]:
    with psycopg.connect(old) as source, psycopg.connect(new) as target:
        names = [r[0] for r in source.execute(
            "SELECT tenant FROM cogmem.tenants WHERE cogmem._tenant_key(tenant) = %s ORDER BY tenant FOR UPDATE",
            (key,)).fetchall()]  # fmt: skip
        there = [r[0] for r in target.execute(
            "SELECT tenant FROM cogmem.tenants WHERE cogmem._tenant_key(tenant) = %s", (key,)).fetchall()]  # fmt: skip
        target.commit()
        if not names:
            if tenant in there:  # copied and removed before: only the switch is left
                return sorted(there)
            raise ValueError(f'tenant "{tenant}" is on neither shard')
        unmovable = source.execute(_NOT_MOVABLE, {"names": names}).fetchone()
        if unmovable:
            raise ValueError(f"{', '.join(names)} has {unmovable[0]}, which a move cannot carry yet (docs/scaling.md)")
        tables = [(t, p, [c for c in cols if c != RENUMBERED.get(t)])
                  for t, p, cols in source.execute(_TENANT_TABLES).fetchall()]  # fmt: skip
        with target.transaction():
            _remove(target, tables, names)  # a copy left by an interrupted move goes first
            for table, partitioned, columns in tables:
                if partitioned:
                    _same_partitions(source, target, table)
                _copy_rows(source, target, table, columns, names)
                _catch_up_sequences(target, table, columns)
            _copy(source, target, sql.SQL("SELECT e.rule_id, e.event, e.reason, e.at, e.load_id {} ORDER BY e.event_id")
                  .format(sql.SQL(_RULE_EVENTS).format(names=sql.Literal(names))),
                  sql.SQL("cogmem.bios_rule_events (rule_id, event, reason, at, load_id)"))  # fmt: skip
        if fail_after == "copy":
            raise MoveInterrupted("copy")
        _remove(source, tables, names)
        source.commit()
        if fail_after == "remove":
            raise MoveInterrupted("remove")
        return names


def _remove(conn: psycopg.Connection, tables: list[tuple[str, bool, list[str]]], names: list[str]) -> None:
    """Deletes the tenants' rows as they are (no triggers), their own BIOS rules' events included."""
    conn.execute("SET LOCAL session_replication_role = replica")
    conn.execute(sql.SQL("DELETE {}").format(sql.SQL(_RULE_EVENTS).format(names=sql.Literal(names))))
    for table, _, _ in reversed(tables):
        conn.execute(sql.SQL("DELETE FROM cogmem.{} WHERE tenant = ANY (%s)").format(sql.Identifier(table)), (names,))


def _copy_rows(source: psycopg.Connection, target: psycopg.Connection, table: str, columns: list[str],
               names: list[str]) -> None:  # fmt: skip
    cols = sql.SQL(", ").join(map(sql.Identifier, columns))
    query = sql.SQL("SELECT {} FROM cogmem.{} WHERE tenant = ANY ({})").format(
        cols, sql.Identifier(table), sql.Literal(names)
    )
    _copy(source, target, query, sql.SQL("cogmem.{} ({})").format(sql.Identifier(table), cols))


def _copy(source: psycopg.Connection, target: psycopg.Connection, query: sql.Composable, into: sql.Composable) -> None:
    """The rows of QUERY on the source, added on the target to INTO (a table and its columns)."""
    with (
        source.cursor().copy(sql.SQL("COPY ({}) TO STDOUT (FORMAT binary)").format(query)) as out,
        target.cursor().copy(sql.SQL("COPY {} FROM STDIN (FORMAT binary)").format(into)) as writer,
    ):
        for block in out:
            writer.write(block)


def _catch_up_sequences(target: psycopg.Connection, table: str, columns: list[str]) -> None:
    """Ids the target makes from now on come after those copied (the audit chain is in id order). A
    tenant's own BIOS rule and load ids are keyed: their low bits count on in the target's sequence."""
    if table in KEYED_IDS:
        target.execute(sql.SQL("SELECT setval('cogmem.bios_tenant_id_seq', greatest((SELECT last_value FROM "
                               "cogmem.bios_tenant_id_seq), (SELECT max({id} & 2147483647) FROM cogmem.{table} "
                               "WHERE {id} >= (1::bigint << 62))))").format(
            id=sql.Identifier(KEYED_IDS[table]), table=sql.Identifier(table)))  # fmt: skip
        return
    for column in columns:
        sequence = target.execute("SELECT pg_get_serial_sequence(%s, %s)", (f"cogmem.{table}", column)).fetchone()
        if sequence and sequence[0]:
            target.execute(
                sql.SQL("SELECT setval(%s, greatest((SELECT max({}) FROM cogmem.{}), "
                        "(SELECT last_value FROM {})), true)").format(
                    sql.Identifier(column), sql.Identifier(table), sql.SQL(sequence[0])),
                (sequence[0],),
            )  # fmt: skip


def _same_partitions(source: psycopg.Connection, target: psycopg.Connection, table: str) -> None:
    """The target gets any partition of TABLE it lacks (an older month of the audit trail)."""
    query = ("SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits AS i "
             "JOIN pg_class AS c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass")  # fmt: skip
    have = {name for name, _ in target.execute(query, (f"cogmem.{table}",)).fetchall()}
    for name, bound in source.execute(query, (f"cogmem.{table}",)).fetchall():
        if name not in have:
            target.execute(sql.SQL("CREATE TABLE cogmem.{} PARTITION OF cogmem.{} {}").format(
                sql.Identifier(name), sql.Identifier(table), sql.SQL(bound)))  # fmt: skip
