"""sql/095-schedule.sql: the nightly consolidation as a pg_cron job."""

import time

import psycopg
import pytest

from cogmem_pg.migrate import install
from tests.conftest import CLUSTER, one


def test_schedule_outside_the_pg_cron_database_explains_what_to_do(db):
    with pytest.raises(psycopg.errors.UndefinedObject) as err:
        db.execute("SELECT cogmem.schedule_nightly()")
    assert err.value.diag.message_primary == f'pg_cron is not installed in database "{db.info.dbname}"'
    assert "cron.schedule_in_database('cogmem-nightly', '0 3 * * *'" in err.value.diag.message_hint
    assert one(db, "SELECT cogmem.unschedule_nightly()") is False


def test_pg_cron_runs_the_nightly_job():
    dsn = CLUSTER.dsn("cogmem")  # the database pg_cron serves in this cluster (cron.database_name)
    install(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            job_id = one(conn, "SELECT cogmem.schedule_nightly('* * * * *')")
            assert one(conn, "SELECT cogmem.schedule_nightly('* * * * *')") == job_id  # same job, rescheduled
            assert conn.execute("SELECT schedule, command FROM cron.job WHERE jobid = %s", (job_id,)).fetchone() == (
                "* * * * *",
                "CALL cogmem.consolidate_nightly()",
            )
            # A recall of a tenant whose night is done today: only the rehearsal job can apply it.
            conn.execute("SELECT cogmem.create_tenant('cron_day')")  # idempotent: the database outlives a run
            conn.execute("SELECT * FROM cogmem.remember('cron_day', 'Restart the servers one at a time', 'long_term')")
            conn.execute("SELECT * FROM cogmem.consolidate(now(), 'cron_day')")
            conn.execute("SELECT * FROM cogmem.recall('cron_day', 'restart the servers')").fetchall()
            rehearsals = one(conn, "SELECT cogmem.schedule_rehearsals()")
            assert conn.execute(
                "SELECT schedule, command FROM cron.job WHERE jobid = %s", (rehearsals,)
            ).fetchone() == (
                "* * * * *",
                "SELECT cogmem.apply_rehearsals()",
            )
            gut = one(conn, "SELECT cogmem.schedule_gut('* * * * *')")
            assert one(conn, "SELECT command FROM cron.job WHERE jobid = %s", (gut,)) == "CALL cogmem.gut_nightly()"
            deadline = time.monotonic() + 75  # the next minute boundary
            status = None
            while time.monotonic() < deadline and status != ("succeeded",) * 3:
                time.sleep(2)
                status = conn.execute(
                    "SELECT max(status) FILTER (WHERE jobid = %s), max(status) FILTER (WHERE jobid = %s),"
                    " max(status) FILTER (WHERE jobid = %s) FROM cron.job_run_details",
                    (job_id, rehearsals, gut),
                ).fetchone()
            failed = "SELECT return_message FROM cron.job_run_details WHERE status = 'failed'"
            failures = conn.execute(failed).fetchall()
            assert status == ("succeeded",) * 3, failures
            # The Gut run, as the job owner: recorded, with the period release (OpenDP in the server).
            assert one(conn, "SELECT count(*) FROM cogmem.gut_runs WHERE finished_at IS NOT NULL") >= 1
            assert one(conn, "SELECT count(*) FROM cogmem.gut_releases") == 1
            assert one(conn, "SELECT count(*) FROM cogmem.consolidation_runs WHERE status = 'finished'") >= 1
            # The rehearsal job skips a tenant the night holds at that moment (both start on the same minute)
            # and takes it on its next run.
            pending = "SELECT count(*) FROM cogmem.recalls WHERE tenant = 'cron_day' AND pending"
            deadline = time.monotonic() + 75
            while one(conn, pending) and time.monotonic() < deadline:
                time.sleep(2)
            assert one(conn, pending) == 0
            assert one(conn, "SELECT sum(recall_count) FROM cogmem.memory_stats WHERE tenant = 'cron_day'") >= 1
        finally:
            conn.execute("SELECT cogmem.unschedule_nightly(), cogmem.unschedule_rehearsals(), cogmem.unschedule_gut()")
            assert one(conn, "SELECT cogmem.unschedule_rehearsals()") is False
            assert one(conn, "SELECT cogmem.unschedule_gut()") is False


def test_workers_and_the_audit_jobs():
    dsn = CLUSTER.dsn("cogmem")
    install(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            conn.execute("SELECT cogmem.schedule_nightly('0 3 * * *', workers => 2)")
            jobs = dict(conn.execute("SELECT jobname, command FROM cron.job WHERE jobname LIKE 'cogmem-nightly%'"))
            assert jobs == {
                "cogmem-nightly": "CALL cogmem.consolidate_nightly(worker => 1, workers => 2)",
                "cogmem-nightly-2": "CALL cogmem.consolidate_nightly(worker => 2, workers => 2)",
            }
            conn.execute("SELECT cogmem.schedule_nightly('0 3 * * *')")  # back to one worker
            assert [
                r[0] for r in conn.execute("SELECT jobname FROM cron.job WHERE jobname LIKE 'cogmem-nightly%'")
            ] == ["cogmem-nightly"]
            with pytest.raises(psycopg.errors.InvalidParameterValue):
                conn.execute("SELECT cogmem.schedule_nightly('0 3 * * *', workers => 0)")
            conn.execute("SELECT cogmem.schedule_audit()")
            audit_jobs = dict(conn.execute("SELECT jobname, schedule FROM cron.job WHERE jobname LIKE 'cogmem-audit%'"))
            assert audit_jobs == {"cogmem-audit-seal": "* * * * *", "cogmem-audit-partitions": "10 0 * * *"}
            assert one(conn, "SELECT cogmem.unschedule_audit()") is True
            assert one(conn, "SELECT cogmem.unschedule_nightly()") is True
            assert one(conn, "SELECT count(*) FROM cron.job WHERE jobname LIKE 'cogmem-%'") == 0
        finally:
            conn.execute("SELECT cogmem.unschedule_nightly(), cogmem.unschedule_audit()")
