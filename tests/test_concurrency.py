"""Many clients at once, and a backup restored elsewhere: nothing lost, counts exact, the chain verifies."""

import random
import subprocess
import threading

import psycopg
from pgvector.psycopg import register_vector

from cogmem_pg.cluster import pg_bindir
from tests.conftest import CLUSTER, one, unit_vector

CLIENTS = 8
ROUNDS = 25
TENANTS = ["acme", "globex"]


def client(dsn: str, number: int, created: list, errors: list, recalls: list) -> None:
    rng = random.Random(number)
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET cogmem.embed = 'off'")
        for n in range(ROUNDS):
            tenant = rng.choice(TENANTS)
            try:
                # Every client also repeats a fact all of them know: concurrent duplicates.
                text = f"client {number} fact {n}: server web-{n} runs nginx" if n % 5 else "The VPN gateway is vpn-1"
                row = conn.execute(
                    "SELECT memory_id, action FROM cogmem.remember(%s, %s, topics => '{server}',"
                    " embedding => %s::vector)",
                    (tenant, text, str(unit_vector(number * 1000 + n))),
                ).fetchone()
                created.append((tenant, row[0]))
                rows = conn.execute(
                    "SELECT recall_id, memory_id FROM cogmem.recall(%s, 'which server runs nginx',"
                    " embedding => %s::vector)",
                    (tenant, str(unit_vector(rng.randrange(10_000)))),
                ).fetchall()
                recalls.append(rows[0][0])
                conn.execute("SELECT cogmem.feedback(%s, %s)", (rows[0][0], rng.random()))
                if rng.random() < 0.3:  # sometimes the same feedback again: it must replace, not add
                    conn.execute("SELECT cogmem.feedback(%s, %s)", (rows[0][0], rng.random()))
            except psycopg.Error as exc:
                errors.append(f"client {number}: {exc.sqlstate} {exc}")


def night_shift(dsn: str, stop: threading.Event, errors: list) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        day = 1
        while not stop.is_set():
            try:
                conn.execute("CALL cogmem.consolidate_nightly(now() + make_interval(days => %s))", (day,))
                conn.execute("SELECT cogmem.seal_audit()")
            except psycopg.Error as exc:
                errors.append(f"night {day}: {exc.sqlstate} {exc}")
            day += 1


def test_eight_clients_during_consolidation(db, dsn):
    for t in TENANTS:
        db.execute("SELECT cogmem.create_tenant(%s)", (t,))
    created: list = []
    errors: list = []
    recalls: list = []
    stop = threading.Event()
    night = threading.Thread(target=night_shift, args=(dsn, stop, errors))
    night.start()
    workers = [threading.Thread(target=client, args=(dsn, i, created, errors, recalls)) for i in range(CLIENTS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
    stop.set()
    night.join(timeout=300)
    assert errors == []
    assert len(created) == CLIENTS * ROUNDS and len(recalls) == CLIENTS * ROUNDS
    # Nothing lost: every memory a client was told about exists (duplicates were rehearsals of one).
    missing = [
        (t, m)
        for t, m in set(created)
        if not one(db, "SELECT count(*) FROM cogmem.memories WHERE tenant = %s AND memory_id = %s", (t, m))
    ]
    assert missing == []
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE content = 'The VPN gateway is vpn-1'") == len(TENANTS)
    # Recall counts are exact: one per injected memory per cycle; outcomes counted once per cycle, for what
    # it credited (a failure without used: its best match only, sql/070-recall.sql). Nights
    # applied some cycles while the clients ran; readers add the rest, and applying it changes nothing.
    injected = one(db, "SELECT count(*) FROM cogmem.recall_items WHERE memory_id IS NOT NULL")
    credited = one(
        db,
        """SELECT count(*) FROM cogmem.recall_items AS i JOIN cogmem.recalls AS r USING (tenant, recall_id)
           WHERE i.memory_id IS NOT NULL AND r.outcome IS NOT NULL
             AND (r.feedback_used IS NULL OR i.memory_id = ANY (r.feedback_used))""",
    )
    for view in ("memory_overview", "memory_stats"):
        if view == "memory_stats":
            db.execute("SELECT cogmem.apply_rehearsals()")
            assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE pending") == 0
        assert one(db, f"SELECT sum(recall_count) FROM cogmem.{view}") == injected, view
        assert one(db, f"SELECT sum(outcome_count) FROM cogmem.{view}") == credited, view
    assert one(db, "SELECT count(*) FROM cogmem.audit_recalls") == CLIENTS * ROUNDS
    db.execute("SELECT cogmem.seal_audit()")
    assert {r[0] for r in db.execute("SELECT ok FROM cogmem.verify_audit()")} == {True}
    assert one(db, "SELECT count(*) FROM cogmem.audit_trail WHERE NOT sealed") == 0


def test_backup_and_restore(db, dsn, tenant):
    db.execute("SELECT cogmem.add_bios_rule('server', 'Run a configuration test before any restart.')")
    for n in range(20):
        db.execute(
            "SELECT cogmem.remember(%s, %s, embedding => %s::vector)",
            (tenant, f"Server web-{n} runs nginx {n}", str(unit_vector(n))),
        )
    recall_id = one(db, "SELECT recall_id FROM cogmem.recall(%s, 'which server runs nginx') LIMIT 1", (tenant,))
    db.execute("SELECT cogmem.feedback(%s, 1)", (recall_id,))
    db.execute("SELECT cogmem.vault_put(%s, 'db/prod', 'pw')", (tenant,))
    db.execute("SELECT cogmem.seal_audit()")
    db.execute("SELECT cogmem.remember(%s, 'Written after the last seal')", (tenant,))

    restored = "cogmem_restored"
    with psycopg.connect(CLUSTER.dsn("postgres"), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {restored}")
        admin.execute(f"CREATE DATABASE {restored} TEMPLATE template0")
    try:
        dump = subprocess.run(
            [str(pg_bindir() / "pg_dump"), "--format=custom", "--dbname", dsn],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(
            [str(pg_bindir() / "pg_restore"), "--exit-on-error", "--dbname", CLUSTER.dsn(restored)],
            input=dump,
            capture_output=True,
            check=True,
        )
        with psycopg.connect(CLUSTER.dsn(restored), autocommit=True) as copy:
            copy.execute("SET cogmem.embed = 'off'")
            assert one(copy, "SELECT cogmem.vault_get(%s, 'db/prod')", (tenant,)) == "pw"
            copy.execute("SELECT cogmem.seal_audit()")
            assert {r[0] for r in copy.execute("SELECT ok FROM cogmem.verify_audit()")} == {True}
            query = """SELECT layer, memory_id, content, tokens, round(score::numeric, 4), reason
                       FROM cogmem.recall(%s, 'which server runs nginx web-3')"""
            assert copy.execute(query, (tenant,)).fetchall() == db.execute(query, (tenant,)).fetchall()
            assert one(copy, "SELECT count(*) FROM cogmem.audit_log") > one(copy, "SELECT count(*) FROM cogmem.tenants")
    finally:
        with psycopg.connect(CLUSTER.dsn("postgres"), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {restored} WITH (FORCE)")
