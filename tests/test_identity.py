"""sql/055-identity.sql: the core identity, versioned and always injected first."""

import psycopg
import pytest

from tests.conftest import named, one


def set_identity(db, tenant, **kw):
    return one(db, f"SELECT cogmem.set_core_identity(%(tenant)s{named(kw)})", {"tenant": tenant, **kw})


def current(db, tenant):
    return db.execute("SELECT version, agent, user_profile, goals FROM cogmem.core_identity(%s)", (tenant,)).fetchone()


def test_versions(db, tenant):
    assert current(db, tenant) is None
    assert set_identity(db, tenant, agent="Ops assistant of Acme", user_profile="Ayse, the on-call engineer") == 1
    assert set_identity(db, tenant, goals=["Keep the shop up", "  ", "Move to the new cluster by Friday"]) == 2
    assert current(db, tenant) == (
        2,
        "Ops assistant of Acme",
        "Ayse, the on-call engineer",
        ["Keep the shop up", "Move to the new cluster by Friday"],
    )
    assert set_identity(db, tenant, agent="Ops assistant of Acme") == 2  # nothing changed: no new version
    assert set_identity(db, tenant, user_profile="") == 3  # '' clears a part
    assert current(db, tenant)[2] is None
    assert one(db, "SELECT count(*) FROM cogmem.core_identity WHERE tenant = %s", (tenant,)) == 3
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
        db.execute("UPDATE cogmem.core_identity SET agent = 'someone else'")
    changed = [
        r[0]["changed"]
        for r in db.execute("SELECT detail FROM cogmem.audit_log WHERE event = 'core_identity_set' ORDER BY audit_id")
    ]
    assert changed == [["agent", "user_profile"], ["goals"], ["user_profile"]]
    assert "Ayse" not in str(changed)


def test_recall_injects_it_first_within_the_budget(db, tenant):
    db.execute("SELECT * FROM cogmem.remember(%s, 'Never restart the servers at night', 'dos_and_donts')", (tenant,))
    before = db.execute("SELECT layer FROM cogmem.recall(%s, 'restart the servers?')", (tenant,)).fetchall()
    assert before == [("dos_and_donts",)]
    set_identity(db, tenant, agent="Ops assistant of Acme", goals=["Keep the shop up"])
    rows = db.execute(
        "SELECT recall_id, layer, content, tokens, reason FROM cogmem.recall(%s, 'restart the servers?')", (tenant,)
    ).fetchall()
    assert [r[1] for r in rows] == ["core", "dos_and_donts"]
    assert rows[0][2] == "Agent: Ops assistant of Acme\nGoals: Keep the shop up"
    assert rows[0][4] == "core identity v1, always injected"
    recall_id = rows[0][0]
    logged = db.execute(
        "SELECT core_version, tokens_used FROM cogmem.recalls WHERE recall_id = %s", (recall_id,)
    ).fetchone()
    assert logged == (1, sum(r[3] for r in rows))
    assert one(db, "SELECT detail ->> 'core_version' FROM cogmem.audit_log WHERE recall_id = %s", (recall_id,)) == "1"
    # Only memories are credited by feedback: the identity is not one.
    assert one(db, "SELECT cogmem.feedback(%s, 1.0)", (recall_id,)) == 1
    # It comes out of the budget first: with 20 tokens, the rule (never cut) follows, over the budget.
    rows = db.execute(
        "SELECT layer, tokens FROM cogmem.recall(%s, 'restart the servers?', budget => 20)", (tenant,)
    ).fetchall()
    assert rows[0] == ("core", 13)


def test_briefing_starts_with_it(db, tenant):
    set_identity(db, tenant, agent="Ops assistant of Acme")
    assert db.execute("SELECT section, content FROM cogmem.briefing(%s)", (tenant,)).fetchall() == [
        ("core", "Agent: Ops assistant of Acme")
    ]
    assert one(db, "SELECT cogmem.briefing_text(%s)", (tenant,)) == "## Core identity\nAgent: Ops assistant of Acme"


def test_it_stays_small(db, tenant):
    with pytest.raises(psycopg.errors.StringDataRightTruncation) as err:
        set_identity(db, tenant, agent="x" * 1300)
    assert "every recall" in err.value.diag.message_hint
    assert current(db, tenant) is None
