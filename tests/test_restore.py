"""sql/175-restore.sql: what an export had earned is restored onto memories just stored, by administrators."""

import json

import psycopg
import pytest

from tests.conftest import one


def test_statistics_and_dates_are_restored_and_audited(db, tenant):
    memory_id = one(db, "SELECT memory_id FROM cogmem.remember(%s, 'Deploys go out on Tuesdays')", (tenant,))
    restored = [
        {
            "memory_id": memory_id,
            "confidence": 0.9,
            "reinforced": True,
            "recall_count": 7,
            "outcome_count": 3,
            "outcome_sum": 2.5,
            "created_at": "2025-01-02T03:04:05+00:00",
        }
    ]
    assert one(db, "SELECT cogmem.restore_memory_stats(%s, %s)", (tenant, json.dumps(restored))) == 1
    stats = db.execute(
        "SELECT confidence, reinforced, recall_count, outcome_count, outcome_sum, last_recalled_at"
        " FROM cogmem.memory_stats WHERE tenant = %s AND memory_id = %s",
        (tenant, memory_id),
    ).fetchone()
    assert stats == (pytest.approx(0.9), True, 7, 3, 2.5, None)
    assert str(
        one(db, "SELECT created_at AT TIME ZONE 'UTC' FROM cogmem.memories WHERE memory_id = %s", (memory_id,))
    ) == ("2025-01-02 03:04:05")
    assert db.execute(
        "SELECT level, event, detail FROM cogmem.audit_log WHERE tenant = %s AND memory_id = %s AND event = 'restored'",
        (tenant, memory_id),
    ).fetchall() == [("lifecycle", "restored", {"via": "import"})]


def test_restoring_onto_memories_that_are_not_there_stores_nothing(db, tenant):
    memory_id = one(db, "SELECT memory_id FROM cogmem.remember(%s, 'Deploys go out on Tuesdays')", (tenant,))
    rows = json.dumps([{"memory_id": memory_id, "recall_count": 5}, {"memory_id": memory_id + 1000, "recall_count": 5}])
    with pytest.raises(psycopg.errors.NoDataFound) as err:
        db.execute("SELECT cogmem.restore_memory_stats(%s, %s)", (tenant, rows))
    assert err.value.diag.message_primary == 'tenant "acme" has no memories for 1 of the restored rows'
    assert err.value.diag.message_hint == "Store the memories with remember_many() first, then restore."
    assert one(db, "SELECT recall_count FROM cogmem.memory_stats WHERE memory_id = %s", (memory_id,)) == 0


@pytest.mark.parametrize(
    "call",
    [
        "SELECT cogmem.restore_memory_stats('acme', '[]')",
        "SELECT cogmem.restore_siblings('acme', '[]')",
    ],
)
def test_applications_cannot_restore(db, tenant, login, call):
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, 'acme')", (app.info.user,))
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as err:
        app.execute(call)
    assert err.value.diag.message_primary == f"permission denied for function {call.split('.')[1].split('(')[0]}"
