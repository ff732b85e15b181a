"""sql/102-explain-recall.sql: why a recall injected what it did, from the trail alone."""

import psycopg
import pytest

from tests.conftest import one
from tests.test_audit_chain import activity


def test_explain_recall_says_why_from_where_and_what_happened_since(db, tenant):
    memory, _ = activity(db, tenant)
    db.execute("SELECT cogmem.remember(%s, 'Back up the staging server nightly', topics => '{server}')", (tenant,))
    recall_id = one(db, "SELECT recall_id FROM cogmem.recall(%s, 'staging server IP') LIMIT 1", (tenant,))
    db.execute("SELECT * FROM cogmem.consolidate(now() + interval '2 days')")
    rows = db.execute(
        "SELECT item, layer, memory_id, rule_id, reason, provenance, history FROM cogmem.explain_recall(%s)",
        (recall_id,),
    ).fetchall()
    bios = next(r for r in rows if r[3] is not None)
    assert bios[1] == "bios" and bios[5]["requirement"] == "OPS-1" and bios[5]["kind"] == "bios"
    fact = next(r for r in rows if r[2] == memory)
    assert fact[5]["kind"] == "memory" and fact[5]["ring"] == "fresh" and "source_sha256" in fact[5]
    assert [h["event"] for h in fact[6]][:2] == ["created", "rehearsed"]
    assert "topic server" in fact[4]
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
    with pytest.raises(psycopg.errors.NoDataFound):
        db.execute("SELECT * FROM cogmem.explain_recall(gen_random_uuid())")
    with pytest.raises(psycopg.errors.NullValueNotAllowed):
        db.execute("SELECT * FROM cogmem.explain_recall(NULL)")
