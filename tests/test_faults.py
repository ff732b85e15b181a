"""Faults: the server killed (SIGKILL, as a crash or the OOM killer would) under writers and during a night.

A private cluster of its own, with synchronous commit on: what a call acknowledged must survive, and
nothing may be half-written. Durability of the disk itself (fsync) is not under test: a killed process
leaves the operating system's page cache intact.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from cogmem_pg.cluster import Cluster
from cogmem_pg.migrate import install
from tests.conftest import CLUSTER

_HOME = Path(tempfile.mkdtemp(prefix="cogmem-faults-"))
os.chmod(_HOME, 0o755)


@pytest.fixture(scope="module")
def server() -> Iterator[Cluster]:
    cluster = Cluster(home=_HOME / "cluster", port=CLUSTER.port + 2, settings={"fsync": "off"}, server_python=False)
    cluster.start()
    install(cluster.dsn())
    with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
        conn.execute("ALTER DATABASE cogmem SET cogmem.embed = off")
    yield cluster
    cluster.stop()
    shutil.rmtree(_HOME, ignore_errors=True)


def _parent(stat: Path) -> int | None:
    try:
        return int(stat.read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def crash(cluster: Cluster) -> None:
    """SIGKILL the postmaster and every backend at once, then start the server again (crash recovery)."""
    postmaster = int((cluster.datadir / "postmaster.pid").read_text().splitlines()[0])
    children = [int(stat.parent.name) for stat in Path("/proc").glob("[0-9]*/stat") if _parent(stat) == postmaster]
    for pid in [postmaster, *children]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while cluster.running() and time.monotonic() < deadline:
        time.sleep(0.1)
    cluster.start()


def test_every_acknowledged_remember_survives_a_crash(server):
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute("SELECT cogmem.create_tenant('crash_day')")
    acked: list[str] = []
    lock = threading.Lock()

    def writer(n: int) -> None:
        try:
            with psycopg.connect(server.dsn(), autocommit=True) as conn:
                for i in range(100_000):
                    content = f"writer {n} noted fact number {i} about the shop"
                    conn.execute("SELECT * FROM cogmem.remember('crash_day', %s, 'long_term')", (content,))
                    with lock:
                        acked.append(content)
        except psycopg.Error:
            return  # the server went away mid-call: that call was never acknowledged

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60  # enough writes acknowledged first, however slow the machine
    while len(acked) < 60 and time.monotonic() < deadline:
        time.sleep(0.05)
    crash(server)
    for t in threads:
        t.join()
    assert len(acked) > 50
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        stored = {r[0] for r in conn.execute("SELECT content FROM cogmem.memories WHERE tenant = 'crash_day'")}
        assert set(acked) <= stored
        # Nothing half-written: every memory has its statistics and its audit row, and nothing else exists.
        assert conn.execute(
            """SELECT count(*) FILTER (WHERE s.memory_id IS NULL), count(*) FILTER (WHERE a.audit_id IS NULL)
               FROM cogmem.memories AS m
               LEFT JOIN cogmem.memory_stats AS s USING (tenant, memory_id)
               LEFT JOIN LATERAL (SELECT l.audit_id FROM cogmem.audit_log AS l WHERE l.tenant = m.tenant
                                  AND l.memory_id = m.memory_id AND l.event = 'created' LIMIT 1) AS a ON true
               WHERE m.tenant = 'crash_day'"""
        ).fetchone() == (0, 0)
        assert conn.execute("SELECT ok FROM cogmem.verify_audit('crash_day')").fetchall() in ([], [(True,)])


def test_a_crash_between_recall_and_apply_loses_no_rehearsal(server):
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute("SELECT cogmem.create_tenant('crash_recall')")
        for n in range(5):
            conn.execute("SELECT * FROM cogmem.remember('crash_recall', %s, 'long_term', '{server}')",
                         (f"Server rule {n}: restart web-{n} one at a time",))  # fmt: skip
        conn.execute("SET cogmem.rehearsal_backlog = 1000000")  # nothing applied before the crash
        cycles = [
            conn.execute(
                "SELECT recall_id FROM cogmem.recall('crash_recall', 'restart the servers') LIMIT 1"
            ).fetchone()
            for _ in range(12)
        ]
        conn.execute("SELECT cogmem.feedback(%s, 1.0)", cycles[0])
    crash(server)
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        assert conn.execute(
            "SELECT count(*) FROM cogmem.recalls WHERE tenant = 'crash_recall' AND pending"
        ).fetchone() == (12,)
        assert conn.execute("SELECT cogmem.apply_rehearsals('crash_recall')").fetchone() == (12,)
        assert conn.execute(
            "SELECT sum(recall_count), sum(outcome_count) FROM cogmem.memory_stats WHERE tenant = 'crash_recall'"
        ).fetchone() == (60, 5)


def test_a_night_killed_halfway_leaves_each_tenant_done_or_untouched(server):
    tenants = [f"night_{n:03d}" for n in range(150)]
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        for t in tenants:
            conn.execute("SELECT cogmem.create_tenant(%s)", (t,))
            conn.execute(
                "SELECT count(*) FROM cogmem.remember_many(%s, %s, skip => '{near_duplicates,conflicts}')",
                (t, '["' + '", "'.join(f"stale fact {i} of {t}" for i in range(20)) + '"]'),
            )
    as_of = "now() + interval '31 days'"

    def night() -> None:
        try:
            with psycopg.connect(server.dsn(), autocommit=True) as conn:
                conn.execute(f"CALL cogmem.consolidate_nightly({as_of})")
        except psycopg.Error:
            return

    runner = threading.Thread(target=night)
    runner.start()
    with psycopg.connect(server.dsn(), autocommit=True) as watch:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # Counted on this test's tenants: the run's tenants_done also counts the earlier tests' tenants.
            done = watch.execute(
                "SELECT count(*) FROM cogmem.consolidation_nights"
                " WHERE tenant LIKE 'night_%' AND finished_at IS NOT NULL"
            ).fetchone()[0]
            if done >= 10:
                break
            time.sleep(0.01)
    crash(server)
    runner.join()

    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        nights = dict(
            conn.execute(
                "SELECT tenant, finished_at IS NOT NULL FROM cogmem.consolidation_nights WHERE tenant LIKE 'night_%'"
            ).fetchall()
        )
        assert 10 <= len(nights) < len(tenants), "the crash came before the night ended"
        assert all(nights.values()), "a tenant's night is whole or absent"
        decided = {
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT tenant FROM cogmem.consolidation_decisions WHERE tenant LIKE 'night_%'"
            )
        }
        assert decided == set(nights)
        faded = conn.execute(
            "SELECT count(DISTINCT tenant) FROM cogmem.memory_stats WHERE forget_steps > 0 AND tenant LIKE 'night_%'"
        ).fetchone()[0]
        assert faded == len(nights)  # untouched tenants were not faded either
        # The next run says the killed one was interrupted and how far it got, then finishes the night.
        conn.execute(f"CALL cogmem.consolidate_nightly({as_of})")
        runs = conn.execute("SELECT status, tenants_done FROM cogmem.consolidation_runs ORDER BY run_id").fetchall()
        assert [s for s, _ in runs] == ["interrupted", "finished"] and runs[0][1] >= 10
        assert conn.execute("SELECT count(*) FROM cogmem.consolidation_nights WHERE tenant LIKE 'night_%'").fetchone()[
            0
        ] == len(tenants)
        # A third run changes nothing.
        before = conn.execute("SELECT count(*), sum(memories) FROM cogmem.consolidation_decisions").fetchone()
        stats = conn.execute("SELECT sum(confidence), count(*) FROM cogmem.memory_stats").fetchone()
        conn.execute(f"CALL cogmem.consolidate_nightly({as_of})")
        assert conn.execute("SELECT count(*), sum(memories) FROM cogmem.consolidation_decisions").fetchone() == before
        assert conn.execute("SELECT sum(confidence), count(*) FROM cogmem.memory_stats").fetchone() == stats
