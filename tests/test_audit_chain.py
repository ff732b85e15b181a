"""sql/100-audit-chain.sql: the five-level, append-only, hash-chained audit trail."""

import psycopg
import pytest

from tests.conftest import named, one


def remember(db, tenant, content, **kw):
    sql = f"SELECT memory_id FROM cogmem.remember(%(tenant)s, %(content)s{named(kw)})"
    return one(db, sql, {"tenant": tenant, "content": content, **kw})


def activity(db, tenant):
    """A little of everything: writes, a recall with feedback, a consolidation night, governance."""
    db.execute(
        "SELECT cogmem.add_bios_rule('server', 'Run a configuration test before any restart.', requirement => 'OPS-1')"
    )
    memory = remember(db, tenant, "The staging server IP is 192.168.1.50", topics=["server"])
    remember(db, tenant, "The staging server IP is 192.168.1.50", topics=["server"])  # a rehearsal
    remember(db, tenant, "Card 4111 1111 1111 1111 was charged twice", topics=["billing"])
    recall_id = one(db, "SELECT recall_id FROM cogmem.recall(%s, 'restart the staging server') LIMIT 1", (tenant,))
    db.execute("SELECT cogmem.feedback(%s, 1.0)", (recall_id,))
    db.execute("SELECT cogmem.feedback(%s, 0.5)", (recall_id,))
    db.execute("SELECT * FROM cogmem.consolidate(now() + interval '1 day')")
    db.execute("UPDATE cogmem.tenants SET max_content_chars = 4000 WHERE tenant = %s", (tenant,))
    return memory, recall_id


def test_every_level_is_recorded(db, tenant):
    _memory, recall_id = activity(db, tenant)
    events = db.execute(
        "SELECT level, event FROM cogmem.audit_trail WHERE tenant = %s ORDER BY audit_id", (tenant,)
    ).fetchall()
    assert {level for level, _ in events} == {"write", "recall", "outcome", "lifecycle", "governance"}
    assert ("write", "created") in events and ("write", "rehearsed") in events and ("write", "redacted") in events
    assert ("recall", "recalled") in events and ("lifecycle", "night_consolidated") in events
    assert ("governance", "tenants_added") in events and ("governance", "tenants_changed") in events
    outcomes = db.execute("SELECT outcome, replaces FROM cogmem.audit_outcomes ORDER BY audit_id").fetchall()
    assert outcomes == [(1.0, None), (0.5, 1.0)]
    changed = one(db, "SELECT detail FROM cogmem.audit_governance WHERE event = 'tenants_changed'")
    assert changed["changed"] == {"max_content_chars": 4000} and changed["previous"] == {"max_content_chars": 8000}
    recalled = one(db, "SELECT detail FROM cogmem.audit_log WHERE recall_id = %s AND level = 'recall'", (recall_id,))
    assert recalled["budget"] == 3200 and len(recalled["message_sha256"]) == 64
    assert recalled["items"]["layer"][:1] == ["bios"]
    # Global acts are filed under '*': the BIOS rule, the schema upgrade that installed cogmem.
    assert {"bios_rules_added", "schema_upgraded"} <= {
        r[0] for r in db.execute("SELECT event FROM cogmem.audit_governance WHERE tenant = '*'")
    }
    # The trail holds no memory text and no secrets.
    # Every column but the numbers a transaction or a sequence gives (an xid can read 4111 too).
    everything = one(db, "SELECT string_agg((to_jsonb(t) - 'xid' - 'audit_id')::text, ' ') FROM cogmem.audit_log AS t")
    assert "192.168.1.50" not in everything and "4111" not in everything


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE cogmem.audit_log SET event = 'x'",
        "DELETE FROM cogmem.audit_log",
        "TRUNCATE cogmem.audit_log",
        "UPDATE cogmem.audit_chain SET row_hash = '\\x00'",
        "DELETE FROM cogmem.audit_chain",
        "TRUNCATE cogmem.audit_chain",
    ],
)
def test_the_trail_is_append_only_even_for_the_owner(db, tenant, statement):
    activity(db, tenant)
    db.execute("SELECT cogmem.seal_audit()")
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
        db.execute(statement)  # as the superuser that owns it
    assert "append-only" in err.value.diag.message_hint


def test_each_partition_refuses_truncate(db, tenant):
    activity(db, tenant)
    partition = one(db, "SELECT tableoid::regclass::text FROM cogmem.audit_log LIMIT 1")
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
        db.execute(f"TRUNCATE {partition}")


def sealed_rows(db, tenant):
    return [
        r[0] for r in db.execute("SELECT audit_id FROM cogmem.audit_chain WHERE tenant = %s ORDER BY seq", (tenant,))
    ]


def tamper(db, partition_of: int, statement: str, params=()):
    """As a superuser with the append-only triggers switched off, the way an insider would."""
    partition = one(db, "SELECT tableoid::regclass::text FROM cogmem.audit_log WHERE audit_id = %s", (partition_of,))
    db.execute(f"ALTER TABLE {partition} DISABLE TRIGGER USER")
    db.execute(statement, params)
    db.execute(f"ALTER TABLE {partition} ENABLE TRIGGER USER")


@pytest.mark.parametrize("kind", ["altered", "removed", "reordered", "slipped_in"])
def test_verify_finds_tampering_at_the_exact_row(db, tenant, kind):
    activity(db, tenant)
    assert one(db, "SELECT cogmem.seal_audit()") > 0
    rows = sealed_rows(db, tenant)
    assert db.execute("SELECT ok, rows_checked, first_bad_id FROM cogmem.verify_audit(%s)", (tenant,)).fetchall() == [
        (True, len(rows), None)
    ]
    victim = rows[len(rows) // 2]
    if kind == "altered":
        tamper(
            db,
            victim,
            "UPDATE cogmem.audit_log SET detail = detail || '{\"outcome\": 1}' WHERE audit_id = %s",
            (victim,),
        )
        expected = victim
    elif kind == "removed":
        tamper(db, victim, "DELETE FROM cogmem.audit_log WHERE audit_id = %s", (victim,))
        expected = victim
    elif kind == "reordered":  # two rows swap what they say
        other = rows[len(rows) // 2 + 1]
        tamper(
            db,
            victim,
            """UPDATE cogmem.audit_log AS l SET event = o.event, detail = o.detail, level = o.level
               FROM cogmem.audit_log AS o
               WHERE (l.audit_id, o.audit_id) IN ((%s, %s), (%s, %s))""",
            (victim, other, other, victim),
        )
        expected = victim
    else:  # a row written with an old transaction id, so the sealer never picks it up
        horizon_minus = one(db, "SELECT (horizon::text::bigint - 5)::text FROM cogmem.audit_seal_state")
        db.execute("ALTER TABLE cogmem.audit_log_default DISABLE TRIGGER USER")
        db.execute(
            "INSERT INTO cogmem.audit_log (tenant, level, event, xid, logged_at)"
            " VALUES (%s, 'write', 'created', %s::xid8, '2001-01-01')",
            (tenant, horizon_minus),
        )
        expected = one(db, "SELECT max(audit_id) FROM cogmem.audit_log")
    ok, _, first_bad = db.execute(
        "SELECT ok, rows_checked, first_bad_id FROM cogmem.verify_audit(%s)", (tenant,)
    ).fetchone()
    assert (ok, first_bad) == (False, expected)
    # Other tenants' chains are independent.
    assert all(r[0] for r in db.execute("SELECT ok FROM cogmem.verify_audit() WHERE tenant <> %s", (tenant,)))


def test_rows_committed_late_are_sealed_later(db, dsn, tenant):
    other = psycopg.connect(dsn)
    try:
        other.execute("SELECT cogmem.remember(%s, 'The late memory about the backup server')", (tenant,))
        remember(db, tenant, "An early memory about invoices")
        db.execute("SELECT cogmem.seal_audit()")
        sealed_before = len(sealed_rows(db, tenant))
        other.commit()  # a smaller audit_id than some sealed rows, committed after the seal
        assert one(db, "SELECT cogmem.seal_audit()") >= 1
        assert len(sealed_rows(db, tenant)) > sealed_before
        assert one(db, "SELECT count(*) FROM cogmem.audit_trail WHERE NOT sealed AND tenant = %s", (tenant,)) == 0
        assert db.execute("SELECT ok FROM cogmem.verify_audit(%s)", (tenant,)).fetchall() == [(True,)]
    finally:
        other.close()


def test_sealing_in_batches_and_heads(db, tenant):
    activity(db, tenant)
    total = one(db, "SELECT count(*) FROM cogmem.audit_log")
    sealed = 0
    while (n := one(db, "SELECT cogmem.seal_audit(3)")) > 0:
        assert n <= 3
        sealed += n
    assert sealed == total
    head = db.execute("SELECT seq, head_sha256 FROM cogmem.audit_heads WHERE tenant = %s", (tenant,)).fetchone()
    assert head[0] == len(sealed_rows(db, tenant)) and len(head[1]) == 64
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        db.execute("SELECT cogmem.seal_audit(0)")


def test_grants_and_access_changes_are_governance_events(db, tenant, login):
    app = login(None)
    role = one(app, "SELECT current_user")
    db.execute(f"GRANT SELECT ON cogmem.memory_census TO {role}")
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (role, tenant))
    db.execute("SELECT cogmem.revoke_tenant(%s, %s)", (role, tenant))
    db.execute(f"REVOKE SELECT ON cogmem.memory_census FROM {role}")
    events = [r[0] for r in db.execute("SELECT event FROM cogmem.audit_governance ORDER BY audit_id")]
    assert events[-4:] == ["grant", "tenant_access_added", "tenant_access_removed", "revoke"]


def test_a_month_is_dropped_only_after_it_was_sealed_and_exported(db, tenant, tmp_path):
    from click.testing import CliRunner

    from cogmem_pg.cli import main

    activity(db, tenant)
    db.execute(
        "CREATE TABLE cogmem.audit_log_2026_01 PARTITION OF cogmem.audit_log"
        " FOR VALUES FROM ('2026-01-01') TO ('2026-02-01')"
    )
    db.execute(  # an old month, written (as the superuser may) with its own timestamps
        """INSERT INTO cogmem.audit_log (tenant, level, event, memory_id, logged_at, at)
           SELECT %s, 'lifecycle', 'weakened', g, '2026-01-10'::timestamptz + g * interval '1 hour', '2026-01-10'
           FROM generate_series(1, 20) AS g""",
        (tenant,),
    )
    db.execute("UPDATE cogmem.audit_settings SET retention = '3 months'")
    assert one(db, "SELECT cogmem.audit_apply_retention()") == 0  # not exported yet
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):  # not sealed yet
        db.execute("SELECT cogmem.audit_mark_exported('audit_log_2026_01', '/archive')")
    db.execute("SELECT cogmem.seal_audit()")
    result = CliRunner().invoke(main, ["--dsn", db.info.dsn, "audit", "export", "audit_log_2026_01", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "audit_log_2026_01.jsonl").read_text().splitlines()) == 20
    assert one(db, "SELECT cogmem.audit_apply_retention()") == 1
    assert one(db, "SELECT to_regclass('cogmem.audit_log_2026_01')") is None
    # The chain still verifies: the dropped month counts as archived, what follows is checked against it.
    remember(db, tenant, "A memory after the archive")
    db.execute("SELECT cogmem.seal_audit()")
    assert db.execute("SELECT ok FROM cogmem.verify_audit(%s)", (tenant,)).fetchall() == [(True,)]
    assert {"audit_exported", "audit_partition_dropped"} <= {
        r[0] for r in db.execute("SELECT event FROM cogmem.audit_governance WHERE tenant = '*'")
    }
    with pytest.raises(psycopg.errors.UndefinedObject):
        db.execute("SELECT cogmem.audit_mark_exported('audit_log_default', '/x')")
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):  # this month is still being written
        db.execute(
            "SELECT cogmem.audit_mark_exported(%s, '/x')",
            (one(db, "SELECT 'audit_log_' || to_char(now(), 'YYYY_MM')"),),
        )
