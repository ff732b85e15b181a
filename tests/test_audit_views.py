"""sql/101-audit-views.sql: the trail by level, per memory and per day."""

import psycopg
import pytest

from tests.conftest import one
from tests.test_audit_chain import activity


def test_recall_items_read_back_item_by_item_in_either_format(db, tenant):
    _memory, recall_id = activity(db, tenant)
    logged = db.execute(
        """SELECT item, layer, memory_id, rule_id, score, tokens, reason FROM cogmem.audit_recall_items
           WHERE recall_id = %s ORDER BY item""",
        (recall_id,),
    ).fetchall()
    kept = db.execute(
        """SELECT position, layer::text, memory_id, rule_id, score, tokens, reason FROM cogmem.recall_items
           WHERE recall_id = %s ORDER BY position""",
        (recall_id,),
    ).fetchall()
    assert logged == kept and [r[1] for r in logged] == ["bios", "fresh"]
    assert one(db, "SELECT items FROM cogmem.audit_recalls WHERE recall_id = %s", (recall_id,)) == 2
    # A row logged before migration 0007 (an array of objects) still reads the same way.
    old = "00000000-0000-4000-8000-000000000007"
    db.execute(
        """INSERT INTO cogmem.audit_log (tenant, level, event, recall_id, detail)
           VALUES (%s, 'recall', 'recalled', %s, jsonb_build_object('items', jsonb_build_array(
               jsonb_build_object('item', 1, 'layer', 'fresh', 'memory_id', 7, 'rule_id', NULL,
                                  'score', 0.5, 'tokens', 9, 'reason', 'topic server'))))""",
        (tenant, old),
    )
    assert db.execute(
        """SELECT item, layer, memory_id, rule_id, score, tokens, reason FROM cogmem.audit_recall_items
           WHERE recall_id = %s""",
        (old,),
    ).fetchall() == [(1, "fresh", 7, None, 0.5, 9, "topic server")]
    assert one(db, "SELECT items FROM cogmem.audit_recalls WHERE recall_id = %s", (old,)) == 1


def test_bi_aggregates_and_partitions(db, tenant):
    activity(db, tenant)
    assert one(db, "SELECT sum(events) FROM cogmem.audit_daily WHERE tenant = %s AND level = 'write'", (tenant,)) >= 3
    assert one(db, "SELECT sum(memories) FROM cogmem.memory_census WHERE tenant = %s", (tenant,)) == 2
    assert one(db, "SELECT cogmem.audit_partitions_ensure(6)") == 3  # three more months beyond the default three
    assert one(db, "SELECT cogmem.audit_partitions_ensure(6)") == 0
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        db.execute("SELECT cogmem.audit_partitions_ensure(0)")
