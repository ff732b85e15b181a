"""sql/160-conflicts.sql: a contradicting instruction is held as a conflict, resolved three ways; a fact is stored."""

import numpy as np
import psycopg
import pytest

from tests.conftest import blend, named, one, unit_vector


def remember(db, tenant, content, **kw):
    if "embedding" in kw:
        kw["embedding"] = np.asarray(kw["embedding"], dtype=np.float32)
    return db.execute(
        "SELECT memory_id, action, conflict_id, conflicts_with "
        f"FROM cogmem.remember(%(tenant)s, %(content)s{named(kw)})",
        {"tenant": tenant, "content": content, **kw},
    ).fetchone()


def count(db, tenant):
    return one(db, "SELECT count(*) FROM cogmem.memories WHERE tenant = %s", (tenant,))


def test_a_contradicting_instruction_is_held_not_stored(db, tenant):
    rule, *_ = remember(db, tenant, "Don't restart web-1 at night.", ring="dos_and_donts")
    before = count(db, tenant)
    memory_id, action, conflict_id, conflicts_with = remember(db, tenant, "Restart web-1 tonight.")
    assert (memory_id, action, conflicts_with) == (None, "conflict", [rule])
    assert count(db, tenant) == before  # neither obeyed into memory nor stored over the rule
    held = db.execute(
        "SELECT content, status, verdict FROM cogmem.conflicts WHERE conflict_id = %s", (conflict_id,)
    ).fetchone()
    assert held == ("Restart web-1 tonight.", "open", "detected")
    assert db.execute(
        "SELECT conflict_id, conflicts_with, established FROM cogmem.open_conflicts(%s)", (tenant,)
    ).fetchall() == [(conflict_id, [rule], ["Don't restart web-1 at night."])]
    logged = one(db, "SELECT detail FROM cogmem.audit_log WHERE event = 'conflict_opened'")
    assert logged["conflict_id"] == conflict_id and logged["conflicts_with"] == [rule]


def test_similar_in_meaning_and_opposite_is_a_conflict_not_a_duplicate(db, tenant):
    # Cosine 0.97: remember would rehearse the old rule as a near-duplicate if dissonance came second.
    old = unit_vector(1)
    rule, *_ = remember(db, tenant, "Sunucuyu gece yeniden başlatma.", ring="dos_and_donts", embedding=old)
    _, action, _, conflicts_with = remember(
        db, tenant, "Sunucuyu bu gece yeniden başlat.", embedding=blend(old, unit_vector(2), 0.2)
    )
    assert (action, conflicts_with) == ("conflict", [rule])
    assert one(db, "SELECT rehearsal_count FROM cogmem.memory_stats WHERE memory_id = %s", (rule,)) == 0
    # Unrelated in meaning (cosine ~0), opposite in polarity: no conflict.
    _, action, *_ = remember(db, tenant, "Deploy the billing service now.", embedding=unit_vector(3))
    assert action == "created"


def test_a_runbook_step_is_no_answer_to_a_rule(db, tenant):
    # Close in meaning (cosine 0.83), opposite in polarity, but about other things: few words in common.
    base = unit_vector(5)
    rule = "Don't restart the server at night, last time everything went sideways."
    remember(db, tenant, rule, ring="dos_and_donts", embedding=base)
    step = "To rotate the web servers: 1. drain the node 2. restart nginx 3. check health."
    _, action, *_ = remember(db, tenant, step, embedding=blend(base, unit_vector(6), 0.4))
    assert action == "created"


def test_only_established_memories_are_contradicted(db, tenant):
    remember(db, tenant, "Don't restart web-1 at night.", ring="fresh")
    _, action, *_ = remember(db, tenant, "Restart web-1 tonight.")
    assert action == "created"


def test_incidents_neither_contradict_nor_are_contradicted(db, tenant):
    remember(db, tenant, "Outage: restarting db-1 at night took the shop down for 2 hours.", ring="shocks")
    _, action, *_ = remember(db, tenant, "Never restart db-1 at night.", ring="dos_and_donts")
    assert action == "created"
    _, action, *_ = remember(db, tenant, "Outage again: a restart of db-1 at night took the shop down.")
    assert action == "created"


def test_the_callers_verdict_decides(db, tenant):
    rule, *_ = remember(db, tenant, "Always use Tailwind for styling.", ring="dos_and_donts")
    other, *_ = remember(db, tenant, "Use the design tokens from the brand kit.", ring="long_term")
    conflict = remember(
        db, tenant, "Go with plain CSS for the landing page.", ring="dos_and_donts", contradicts=[other, rule, rule]
    )
    assert conflict[1:2] == ("conflict",) and conflict[3] == sorted([rule, other])
    assert one(db, "SELECT verdict FROM cogmem.conflicts WHERE conflict_id = %s", (conflict[2],)) == "caller"
    # '{}': the caller judged there is none, even against polarity.
    _, action, *_ = remember(db, tenant, "Don't use Tailwind for the email templates.", contradicts=[])
    assert action == "created"
    with pytest.raises(psycopg.errors.NoDataFound):
        remember(db, tenant, "Use Bootstrap.", contradicts=[999999])


def open_conflict(db, tenant):
    rule, *_ = remember(db, tenant, "Don't restart web-1 at night.", ring="dos_and_donts")
    *_, conflict_id, _ = remember(db, tenant, "Restart web-1 tonight.")
    return rule, conflict_id


def resolve(db, conflict_id, resolution):
    return db.execute(
        "SELECT status, memory_id, weakened FROM cogmem.resolve_conflict(%s, %s, 'we have failover now')",
        (conflict_id, resolution),
    ).fetchone()


def test_paradigm_shift_weakens_the_old_and_stores_the_new(db, tenant):
    rule, conflict_id = open_conflict(db, tenant)
    status, stored, weakened = resolve(db, conflict_id, "paradigm_shift")
    assert (status, weakened) == ("paradigm_shift", [rule])
    assert db.execute(
        """SELECT m.ring::text, s.confidence
           FROM cogmem.memories AS m JOIN cogmem.memory_stats AS s USING (tenant, memory_id)
           WHERE m.memory_id = %s""",
        (rule,),
    ).fetchone() == ("fresh", pytest.approx(0.1))
    assert one(db, "SELECT content FROM cogmem.memories WHERE memory_id = %s", (stored,)) == "Restart web-1 tonight."
    assert one(db, "SELECT cogmem.trust(%s)", (tenant,)) == 47  # a correction
    assert db.execute("SELECT * FROM cogmem.open_conflicts(%s)", (tenant,)).fetchall() == []
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
        resolve(db, conflict_id, "exception")


def test_exception_keeps_the_old_and_stores_nothing(db, tenant):
    rule, conflict_id = open_conflict(db, tenant)
    before = count(db, tenant)
    assert resolve(db, conflict_id, "exception") == ("exception", None, [])
    assert count(db, tenant) == before
    assert one(db, "SELECT ring::text FROM cogmem.memories WHERE memory_id = %s", (rule,)) == "dos_and_donts"
    assert one(db, "SELECT note FROM cogmem.conflicts WHERE conflict_id = %s", (conflict_id,)) == "we have failover now"


def test_override_keeps_both_and_the_night_reviews_it(db, tenant):
    rule, conflict_id = open_conflict(db, tenant)
    status, stored, weakened = resolve(db, conflict_id, "override")
    assert (status, weakened) == ("override", [])
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE memory_id IN (%s, %s)", (rule, stored)) == 2
    assert one(db, "SELECT reviewed_at FROM cogmem.conflicts WHERE conflict_id = %s", (conflict_id,)) is None
    decisions = dict(db.execute("SELECT decision, memories FROM cogmem.consolidate(now(), %s)", (tenant,)).fetchall())
    assert decisions["review"] == 1
    assert one(db, "SELECT reviewed_at FROM cogmem.conflicts WHERE conflict_id = %s", (conflict_id,)) is not None
    reviewed = one(db, "SELECT detail FROM cogmem.audit_log WHERE event = 'conflicts_reviewed'")
    assert reviewed["conflicts"][0]["kept"] == stored and reviewed["conflicts"][0]["contradicted"] == [rule]


def test_recall_notes_open_conflicts_until_resolved(db, tenant):
    rule, conflict_id = open_conflict(db, tenant)
    reasons = dict(
        db.execute("SELECT memory_id, reason FROM cogmem.recall(%s, 'restart web-1?')", (tenant,)).fetchall()
    )
    assert f"contradicted by open conflict #{conflict_id}" in reasons[rule]
    resolve(db, conflict_id, "exception")
    reasons = dict(
        db.execute("SELECT memory_id, reason FROM cogmem.recall(%s, 'restart web-1?')", (tenant,)).fetchall()
    )
    assert "conflict" not in reasons[rule]


@pytest.mark.parametrize(
    ("conflict", "resolution", "sqlstate"),
    [(True, "obey", "22023"), (True, None, "22023"), (False, "exception", "P0002")],
)
def test_resolve_refuses_bad_input(db, tenant, conflict, resolution, sqlstate):
    conflict_id = open_conflict(db, tenant)[1] if conflict else 424242
    with pytest.raises(psycopg.Error) as err:
        resolve(db, conflict_id, resolution)
    assert err.value.sqlstate == sqlstate and err.value.diag.message_hint


def test_resolve_with_the_tenant_named_checks_the_conflict_is_the_tenants(db, tenant):
    conflict_id = open_conflict(db, tenant)[1]
    db.execute("SELECT cogmem.create_tenant('globex')")
    with pytest.raises(psycopg.errors.NoDataFound, match=r'unknown conflict \d+ in tenant "globex"'):
        db.execute("SELECT * FROM cogmem.resolve_conflict('globex', %s, 'exception')", (conflict_id,))
    with pytest.raises(psycopg.errors.UndefinedObject):
        db.execute("SELECT * FROM cogmem.resolve_conflict('nobody', %s, 'exception')", (conflict_id,))
    status = db.execute("SELECT status FROM cogmem.resolve_conflict(%s, %s, 'exception')", (tenant, conflict_id))
    assert status.fetchone() == ("exception",)


def test_a_fact_that_contradicts_an_older_one_is_stored_linked_and_weakens_it(db, tenant):
    old, *_ = remember(db, tenant, "db-1 runs PostgreSQL 15.", ring="long_term")
    rule, *_ = remember(db, tenant, "Never upgrade db-1 during business hours.", ring="dos_and_donts", contradicts=[])
    # supersedes => '{}': the upgrade also replaces the version (sql/036-supersession.sql, which would take
    # the old fact out of recall); here the contradiction's own marks are the subject.
    new, action, conflict_id, conflicts_with = remember(
        db, tenant, "db-1 was upgraded to PostgreSQL 17 last night.", contradicts=[old, rule], supersedes=[]
    )
    # Stored, never held: only an instruction can be held.
    assert (action, conflict_id, conflicts_with) == ("created", None, [old, rule])
    links = db.execute(
        "SELECT contradicts_id, verdict, weakened FROM cogmem.memory_contradictions WHERE memory_id = %s ORDER BY 1",
        (new,),
    ).fetchall()
    assert links == [(old, "caller", True), (rule, "caller", False)]  # a rule is protected
    confidence = dict(db.execute("SELECT memory_id, confidence FROM cogmem.memory_stats").fetchall())
    assert confidence == {old: 0.25, rule: 0.5, new: 0.5}
    logged = one(db, "SELECT detail FROM cogmem.audit_log WHERE event = 'contradiction_stored'")
    assert logged == {"contradicts": [old, rule], "weakened": [old], "verdict": "caller"}
    reasons = dict(
        db.execute("SELECT memory_id, reason FROM cogmem.recall(%s, 'which PostgreSQL runs on db-1?')", (tenant,))
    )
    assert f"contradicted by newer memory #{new}" in reasons[old]
    assert f"contradicts older memory #{old}, #{rule}" in reasons[new]
    # The links go with their memories.
    db.execute("SELECT cogmem.erase(%s, %s)", (tenant, new))
    assert one(db, "SELECT count(*) FROM cogmem.memory_contradictions") == 0
