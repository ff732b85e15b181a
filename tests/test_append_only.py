"""sql/003-append-only.sql: append-only tables refuse change, even for the owner, and say what to do."""

import re

import psycopg
import pytest

AUDIT_HINT = (
    "The audit trail is append-only. Erasure leaves a tombstone instead: cogmem.erase(tenant, memory_id, reason)."
)
HINTS = {
    "audit_chain": "The audit trail is append-only; cogmem.verify_audit() checks it.",
    "audit_log": AUDIT_HINT,
    "bios_preset_loads": "Load a new version of the preset: cogmem.load_bios_preset(...).",
    "bios_rules": "Retire a rule with cogmem.retire_bios_rule(rule_id, reason) and add a new one.",
    "bios_rule_events": "These rows are append-only.",
}
# What each table refuses: rows that are records (identity versions, episodes) may still be erased.
REFUSED = {
    "audit_chain": {"UPDATE", "DELETE", "TRUNCATE"},
    "audit_log": {"UPDATE", "DELETE"},  # each partition refuses TRUNCATE (tests/test_audit_chain.py)
    "bios_preset_loads": {"UPDATE", "DELETE", "TRUNCATE"},
    "bios_rule_events": {"UPDATE", "DELETE", "TRUNCATE"},
    "bios_rules": {"UPDATE", "DELETE", "TRUNCATE"},
    "core_identity": {"UPDATE"},
    "episodes": {"UPDATE"},
}


def test_the_append_only_tables_and_what_each_refuses(db):
    rows = db.execute(
        """SELECT c.relname, t.tgtype FROM pg_trigger AS t JOIN pg_class AS c ON c.oid = t.tgrelid
           WHERE t.tgfoid = 'cogmem._refuse_change()'::regprocedure AND NOT c.relispartition"""
    ).fetchall()
    refused: dict[str, set[str]] = {}
    for table, kinds in rows:  # pg_trigger.tgtype bits: 8 DELETE, 16 UPDATE, 32 TRUNCATE
        refused.setdefault(table, set()).update(
            op for bit, op in ((8, "DELETE"), (16, "UPDATE"), (32, "TRUNCATE")) if kinds & bit
        )
    assert refused == REFUSED


@pytest.mark.parametrize("table", sorted(t for t, ops in REFUSED.items() if "TRUNCATE" in ops))
def test_truncate_is_refused_even_for_the_owner(db, table):
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
        db.execute(f"TRUNCATE cogmem.{table} CASCADE")
    assert err.value.diag.message_primary == f"TRUNCATE on cogmem.{table} is not allowed: {table} rows are immutable"
    assert err.value.diag.message_hint == HINTS[table]


@pytest.mark.parametrize("statement", ["UPDATE cogmem.{t} SET tenant = tenant", "DELETE FROM cogmem.{t}"])
@pytest.mark.parametrize("table", ["audit_log", "audit_chain", "bios_rules"])
def test_a_row_cannot_be_changed_or_deleted(db, tenant, table, statement):
    db.execute("SELECT * FROM cogmem.remember(%s, 'Backups run at night')", (tenant,))
    db.execute("SELECT cogmem.seal_audit()")
    db.execute("SELECT cogmem.add_bios_rule('server', 'Test the configuration before any restart.')")
    before = db.execute(f"SELECT count(*) FROM cogmem.{table}").fetchone()[0]
    assert before > 0
    operation = statement.split()[0]
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
        db.execute(statement.format(t=table))
    # A partitioned table's rows are refused by the partition that holds them.
    part = rf"{table}(?:_\d{{4}}_\d{{2}}|_default)?"
    assert re.fullmatch(
        rf"{operation} on cogmem\.({part}) is not allowed: \1 rows are immutable", err.value.diag.message_primary
    )
    assert err.value.diag.message_hint == HINTS[table]
    assert db.execute(f"SELECT count(*) FROM cogmem.{table}").fetchone()[0] == before
