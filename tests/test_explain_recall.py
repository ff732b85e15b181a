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


def test_an_auditor_reads_why_and_no_text(db, tenant, login):
    # A judged turn that names a person, and a document's title, heading and source: the application that
    # recalled may read them; an auditor of the tenant gets the trail's ids, hashes and reasons only.
    db.execute("SELECT cogmem.configure_tenant(%s, '{\"implicit_feedback\": true}')", (tenant,))
    db.execute(
        "SELECT * FROM cogmem.add_resource(%s, 'Vault rotation runbook', %s, source => '{\"url\": \"wiki/vault\"}')",
        (tenant, "# Rotation\n\n## Staging\n\nRotate the staging vault keys every month with the rotate job."),
    )
    recall_id = one(
        db, "SELECT recall_id FROM cogmem.recall(%s, 'how do we rotate staging vault keys', conversation => 'c1')"
        " LIMIT 1", (tenant,)
    )  # fmt: skip
    db.execute(
        "SELECT * FROM cogmem.remember(%s, 'works now, thanks! Zeynep from accounting says hi', conversation => 'c1')",
        (tenant,),
    )
    app, auditor = login("cogmem_app"), login("cogmem_auditor")
    for conn in (app, auditor):
        db.execute("SELECT cogmem.grant_tenant(%s, %s)", (one(conn, "SELECT current_user"), tenant))
    seen = {}
    for name, conn in (("app", app), ("auditor", auditor)):
        seen[name] = conn.execute(
            "SELECT layer, provenance, outcomes FROM cogmem.explain_recall(%s)", (recall_id,)
        ).fetchall()
    app_text, auditor_text = str(seen["app"]), str(seen["auditor"])
    for text in ("Zeynep", "Vault rotation runbook", "Staging", "wiki/vault"):
        assert text in app_text and text not in auditor_text, text
    document = next(p for layer, p, _ in seen["auditor"] if layer == "resources")
    assert document["kind"] == "resource" and document["version"] == 1 and "title" not in document
    outcome = seen["auditor"][0][2][0]
    assert outcome["verdict"] == "confirmed" and "turn" not in outcome and len(outcome["turn_sha256"]) == 64
