"""sql/002-locks.sql: a night has its tenant alone, and a day call that waits too long says why."""

import psycopg
import pytest


def test_a_day_call_waits_for_the_night_and_says_why_when_it_gives_up(db, dsn, tenant):
    with psycopg.connect(dsn) as night:
        night.execute("SELECT cogmem._lock_tenant(%s, true)", (tenant,))  # as consolidate() does
        db.execute("SET cogmem.lock_wait = '200ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable) as err:
            db.execute("SELECT * FROM cogmem.remember(%s, 'Backups run at night')", (tenant,))
        assert err.value.diag.message_primary == f'tenant "{tenant}" is busy: its night held it for 200ms'
        assert err.value.diag.message_hint == "Retry shortly: a night consolidates a tenant in seconds."
    assert db.execute("SELECT count(*) FROM cogmem.memories WHERE tenant = %s", (tenant,)).fetchone()[0] == 0
    db.execute("SELECT * FROM cogmem.remember(%s, 'Backups run at night')", (tenant,))  # the night is over


def test_day_calls_share_the_tenant(db, dsn, tenant):
    with psycopg.connect(dsn) as day:
        day.execute("SELECT cogmem._lock_tenant(%s, false)", (tenant,))
        db.execute("SET cogmem.lock_wait = '200ms'")
        db.execute("SELECT * FROM cogmem.remember(%s, 'Backups run at night')", (tenant,))
        with psycopg.connect(dsn) as other_night:
            other_night.execute("SET cogmem.lock_wait = '200ms'")
            with pytest.raises(psycopg.errors.LockNotAvailable) as err:
                other_night.execute("SELECT cogmem._lock_tenant(%s, true)", (tenant,))
            assert err.value.diag.message_primary == f'tenant "{tenant}" is busy: its calls held it for 200ms'
            assert err.value.diag.message_hint == "The night skips it and takes it next time."


def test_statistics_rows_are_locked_for_the_transaction_and_only_those_named(db, dsn, tenant):
    ids = [
        db.execute("SELECT memory_id FROM cogmem.remember(%s, %s)", (tenant, text)).fetchone()[0]
        for text in ("Backups run at night", "Deploys go out on Tuesdays", "The VPN gateway is vpn-1")
    ]
    with psycopg.connect(dsn) as holder:
        holder.execute("SELECT cogmem._lock_stats(%s, %s)", (tenant, [ids[2], ids[0]]))
        locked = []
        for memory_id in ids:
            try:
                db.execute(
                    "SELECT FROM cogmem.memory_stats WHERE tenant = %s AND memory_id = %s FOR UPDATE NOWAIT",
                    (tenant, memory_id),
                )
            except psycopg.errors.LockNotAvailable:
                locked.append(memory_id)
        assert locked == [ids[0], ids[2]]
        holder.rollback()
    db.execute("SELECT FROM cogmem.memory_stats WHERE tenant = %s FOR UPDATE NOWAIT", (tenant,))
