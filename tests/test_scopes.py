"""sql/015-scopes.sql: persons and agents inside a tenant, and who sees what.

A recall for (person P, agent A) injects what the tenant shares, what is P's and what A heard with no
person; never another person's. The same text, conflicts, merges and siblings stay within one scope; a
grant can be narrowed to one person; a person's erasure takes what was remembered for them.
"""

from __future__ import annotations

import json

import psycopg
import pytest

from tests.conftest import blend, one, unit_vector

SCOPED = [
    # (content, ring, person, agent)
    ("The office closes at 18:00 on Fridays.", "long_term", None, None),
    ("Never share invoice PDFs over chat.", "dos_and_donts", None, None),
    ("Ayla prefers calls after 18:00.", "habits", "ayla", None),
    ("Ayla asked us never to call her on weekends.", "dos_and_donts", "ayla", "support"),
    ("Ben prefers e-mail to calls.", "habits", "ben", None),
    ("Ben said never phone him before noon.", "dos_and_donts", "ben", "support"),
    ("Refunds over 500 EUR need a second approver.", "procedures", None, "billing"),
    ("Restart the queue worker with systemctl restart qw.", "procedures", None, "ops"),
]


@pytest.fixture
def scoped(db, tenant) -> dict[str, int]:
    ids = {}
    for content, ring, person, agent in SCOPED:
        ids[content] = one(
            db,
            "SELECT memory_id FROM cogmem.remember(%s, %s, %s, person => %s, agent => %s)",
            (tenant, content, ring, person, agent),
        )
    return ids


def recalled(db, tenant: str, message: str, person: str | None = None, agent: str | None = None, **kw) -> list[str]:
    rows = db.execute(
        "SELECT content FROM cogmem.recall(%s, %s, person => %s, agent => %s, budget => %s)"
        " WHERE memory_id IS NOT NULL",
        (tenant, message, person, agent, kw.get("budget", 3200)),
    ).fetchall()
    return [r[0] for r in rows]


def visible(person: str | None, agent: str | None) -> set[str]:
    """The default policy, written out: the tenant's, the person's, the agent's without a person."""
    return {
        c
        for c, _, p, a in SCOPED
        if (p is None and a is None) or (p is not None and p == person) or (p is None and a is not None and a == agent)
    }


QUESTION = "calls e-mail invoice refunds office queue worker weekends noon approver restart"


@pytest.mark.parametrize(
    ("person", "agent"),
    [(None, None), ("ayla", None), ("ayla", "support"), ("ben", "billing"), (None, "ops"), ("carl", "support")],
)
def test_a_recall_sees_the_shared_the_persons_and_the_agents_and_nothing_else(db, tenant, scoped, person, agent):
    got = set(recalled(db, tenant, QUESTION, person, agent))
    assert got <= visible(person, agent)
    # Never-cut rings of the scope are injected whole, whatever the message.
    never_cut = {c for c, ring, p, a in SCOPED if ring == "dos_and_donts"} & visible(person, agent)
    assert never_cut <= got


def test_a_person_rule_binds_that_persons_conversations_and_a_team_rule_binds_all(db, tenant, scoped):
    for person, own in (("ayla", "Ayla asked us never to call her on weekends."),
                        ("ben", "Ben said never phone him before noon.")):  # fmt: skip
        got = recalled(db, tenant, "Can I call tomorrow?", person, "support")
        assert own in got
        assert "Never share invoice PDFs over chat." in got
        other = {"ayla": "Ben said never phone him before noon.", "ben": "Ayla asked us never to call her on weekends."}
        assert other[person] not in got


def test_the_policy_keeps_a_persons_memories_with_the_agent_that_heard_them(db, tenant, scoped):
    assert "Ayla asked us never to call her on weekends." in recalled(db, tenant, "call", "ayla", "billing")
    db.execute("SELECT cogmem.configure_tenant(%s, '{\"scope_person_across_agents\": false}')", (tenant,))
    got = recalled(db, tenant, "call", "ayla", "billing")
    assert "Ayla asked us never to call her on weekends." not in got
    assert "Ayla prefers calls after 18:00." in got  # heard by no agent: every agent's
    assert "Ayla asked us never to call her on weekends." in recalled(db, tenant, "call", "ayla", "support")


def test_the_policy_shares_one_agents_procedures_with_every_agent(db, tenant, scoped):
    refunds = "Refunds over 500 EUR need a second approver."
    assert refunds not in recalled(db, tenant, "refunds approver", None, "support")
    db.execute(
        "SELECT cogmem.configure_tenant(%s, %s)",
        (tenant, json.dumps({"scope_shared_agents": ["billing"], "scope_shared_rings": ["procedures"]})),
    )
    assert refunds in recalled(db, tenant, "refunds approver", None, "support")
    assert refunds in recalled(db, tenant, "refunds approver", "ayla", None)
    assert "Restart the queue worker with systemctl restart qw." not in recalled(
        db, tenant, "restart queue", None, "support"
    )
    db.execute('SELECT cogmem.configure_tenant(%s, \'{"scope_shared_agents": ["*"]}\')', (tenant,))
    assert "Restart the queue worker with systemctl restart qw." in recalled(
        db, tenant, "restart queue", None, "support"
    )


def test_the_same_text_is_one_memory_per_scope(db, tenant):
    text = "Prefers the dark theme."
    a = db.execute("SELECT memory_id, action FROM cogmem.remember(%s, %s, person => 'ayla')", (tenant, text)).fetchone()
    b = db.execute("SELECT memory_id, action FROM cogmem.remember(%s, %s, person => 'ben')", (tenant, text)).fetchone()
    again = db.execute(
        "SELECT memory_id, action FROM cogmem.remember(%s, %s, person => ' ayla ')", (tenant, text)
    ).fetchone()
    shared = db.execute("SELECT memory_id, action FROM cogmem.remember(%s, %s)", (tenant, text)).fetchone()
    assert a[1] == b[1] == shared[1] == "created"
    assert len({a[0], b[0], shared[0]}) == 3
    assert again == (a[0], "duplicate")
    rows = db.execute(
        "SELECT person, agent FROM cogmem.memories WHERE tenant = %s ORDER BY memory_id", (tenant,)
    ).fetchall()
    assert rows == [("ayla", None), ("ben", None), (None, None)]


def test_a_batch_takes_its_scope_and_each_items_own(db, tenant):
    items = [
        "Likes short answers.",
        {"content": "Likes short answers.", "person": "ben"},
        {"content": "Works from Izmir.", "source": {"person": "carl"}},
        {"content": "Works from Izmir.", "agent": "ops"},
    ]
    rows = db.execute(
        "SELECT item, action FROM cogmem.remember_many(%s, %s, person => 'ayla', agent => 'support')",
        (tenant, json.dumps(items)),
    ).fetchall()
    assert [r[1] for r in rows] == ["created"] * 4
    scopes = db.execute(
        "SELECT content, person, agent FROM cogmem.memories WHERE tenant = %s ORDER BY memory_id", (tenant,)
    ).fetchall()
    assert scopes == [
        ("Likes short answers.", "ayla", "support"),
        ("Likes short answers.", "ben", "support"),
        ("Works from Izmir.", "carl", "support"),
        ("Works from Izmir.", "ayla", "ops"),
    ]
    # The same text again in the same scope, set-based too.
    rows = db.execute(
        "SELECT action FROM cogmem.remember_many(%s, %s, skip => '{near_duplicates,conflicts}', person => 'ayla',"
        " agent => 'support')",
        (tenant, json.dumps(["Likes short answers.", "Likes long answers."])),
    ).fetchall()
    assert [r[0] for r in rows] == ["duplicate", "created"]


@pytest.mark.parametrize(
    ("person", "agent", "message"),
    [
        (
            "",
            None,
            "the scope has a person that is not a name of 1 to 200 characters without control or invisible characters",
        ),
        (
            None,
            "x" * 201,
            "the scope has a agent that is not a name of 1 to 200 characters without control or invisible characters",
        ),
        (
            "a\tb",
            None,
            "the scope has a person that is not a name of 1 to 200 characters without control or invisible characters",
        ),
    ],
)
def test_a_bad_scope_name_is_refused(db, tenant, person, agent, message):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
        db.execute("SELECT * FROM cogmem.recall(%s, 'x', person => %s, agent => %s)", (tenant, person, agent))
    assert e.value.diag.message_primary == message
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        db.execute("SELECT * FROM cogmem.remember(%s, 'x y', person => %s, agent => %s)", (tenant, person, agent))


def test_a_named_contradiction_must_be_in_the_same_scope(db, tenant, scoped):
    bens = scoped["Ben said never phone him before noon."]
    with pytest.raises(psycopg.errors.NoDataFound, match="does not have in this scope"):
        db.execute(
            "SELECT * FROM cogmem.remember(%s, 'Always phone before noon.', contradicts => %s, person => 'ayla',"
            " agent => 'support')",
            (tenant, [bens]),
        )
    row = db.execute(
        "SELECT action, conflicts_with FROM cogmem.remember(%s, 'Always phone him before noon.', 'dos_and_donts',"
        " contradicts => %s, person => 'ben', agent => 'support')",
        (tenant, [bens]),
    ).fetchone()
    assert row == ("conflict", [bens])
    assert one(db, "SELECT person FROM cogmem.conflicts WHERE tenant = %s", (tenant,)) == "ben"


def test_detection_and_merging_stay_within_a_scope(db, tenant):
    """Near-duplicates by meaning are rehearsed in one scope, and stay apart across two."""
    base = unit_vector(7)
    near = blend(base, unit_vector(8), 0.02)
    first = one(db, "SELECT memory_id FROM cogmem.remember(%s, 'Deploys go out on Tuesday.', 'long_term',"
                    " embedding => %s::vector, person => 'ayla')", (tenant, str(base)))  # fmt: skip
    other = db.execute(
        "SELECT memory_id, action FROM cogmem.remember(%s, 'Deploys go out on Tuesdays.', 'long_term',"
        " embedding => %s::vector, person => 'ben')",
        (tenant, str(near)),
    ).fetchone()
    same = db.execute(
        "SELECT memory_id, action FROM cogmem.remember(%s, 'Deploys go out on Tuesdays!', 'long_term',"
        " embedding => %s::vector, person => 'ayla')",
        (tenant, str(near)),
    ).fetchone()
    assert other[1] == "created" and other[0] != first
    assert same == (first, "duplicate")
    # Stored set-based and merged by the night: still one memory per scope.
    db.execute(
        "SELECT cogmem.remember_many(%s, %s, %s::vector[], skip => '{near_duplicates,conflicts}', person => 'carl')",
        (tenant, json.dumps([{"content": "Deploys happen on Tuesday.", "ring": "long_term"}]), [str(near)]),
    )
    db.execute("SELECT cogmem.consolidate(now() + interval '1 minute', %s)", (tenant,))
    people = db.execute(
        "SELECT person, count(*) FROM cogmem.memories WHERE tenant = %s GROUP BY person ORDER BY person", (tenant,)
    ).fetchall()
    assert people == [("ayla", 1), ("ben", 1), ("carl", 1)]
    assert one(db, "SELECT count(*) FROM cogmem.memory_siblings WHERE tenant = %s", (tenant,)) == 0


def test_erase_person_takes_everything_scoped_to_them(db, tenant, scoped):
    session = one(db, "SELECT cogmem.start_session(%s, 'care', person => 'ayla')", (tenant,))
    db.execute("SELECT cogmem.observe(%s, %s, 'user', 'I decided to switch to the yearly plan.', person => 'ayla')",
               (tenant, str(session)))  # fmt: skip
    db.execute(
        "SELECT cogmem.store_put(%s, '{profile,ayla}', 'plan', '{\"plan\": \"yearly\"}', 'Ayla is on the yearly plan.',"
        " person => 'ayla')",
        (tenant,),
    )
    db.execute("SELECT cogmem.end_session(%s, 'Moved Ayla to the yearly plan.')", (session,))
    db.execute("SELECT * FROM cogmem.recall(%s, 'plan', person => 'ayla', conversation => 'c1')", (tenant,))
    counts = dict(db.execute("SELECT * FROM cogmem.erase_person(%s, 'ayla', 'customer request')", (tenant,)).fetchall())
    assert counts["memories"] >= 4 and counts["sensory_turns"] == 1  # the store item went with its memory
    assert counts["episodes"] == 1 and counts["sessions"] == 1
    for table in ("memories", "sensory_turns", "store_items", "episodes", "sessions", "conflicts"):
        assert one(db, f"SELECT count(*) FROM cogmem.{table} WHERE person = 'ayla'") == 0, table
    assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE person = 'ayla' AND message_embedding IS NOT NULL") == 0
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE person = 'ben'") == 2
    detail = one(db, "SELECT detail FROM cogmem.audit_log WHERE event = 'erasure_requested'")
    assert "ayla" not in json.dumps(detail) and len(detail["person_sha256"]) == 64
    assert one(db, "SELECT count(*) FROM cogmem.verify_audit(%s) WHERE NOT ok", (tenant,)) == 0


def test_the_gut_never_takes_a_persons_memory(db, tenant, scoped):
    db.execute("SELECT cogmem.gut_configure(%s, contribute => true)", (tenant,))
    for content in ("Ayla prefers calls after 18:00.", "Refunds over 500 EUR need a second approver."):
        db.execute("UPDATE cogmem.memory_stats SET reinforced = true WHERE memory_id = %s", (scoped[content],))
        db.execute("UPDATE cogmem.memories SET embedding = %s::vector WHERE memory_id = %s",
                   (str(unit_vector(len(content))), scoped[content]))  # fmt: skip
    db.execute("SELECT cogmem._gut_collect(%s)", (tenant,))
    taken = {r[0] for r in db.execute("SELECT memory_id FROM cogmem.gut_contributions WHERE tenant = %s", (tenant,))}
    assert taken == {scoped["Refunds over 500 EUR need a second approver."]}


def test_a_briefing_is_of_its_scope(db, tenant):
    for person, summary in (("ayla", "Helped Ayla with her invoice."), ("ben", "Helped Ben reset his password.")):
        session = one(db, "SELECT cogmem.start_session(%s, 'care', person => %s)", (tenant, person))
        db.execute("SELECT cogmem.end_session(%s, %s)", (session, summary))
    text = one(db, "SELECT cogmem.briefing_text(%s, 'care', person => 'ayla')", (tenant,))
    assert "Ayla" in text and "Ben" not in text
    assert one(db, "SELECT cogmem.briefing_text(%s, 'care')", (tenant,)) is None


@pytest.fixture
def narrowed(db, tenant, scoped, login) -> psycopg.Connection:
    conn = login("cogmem_app")
    role = one(conn, "SELECT current_user")
    db.execute("SELECT cogmem.grant_tenant(%s, %s, person => 'ayla')", (role, tenant))
    return conn


def test_a_grant_narrowed_to_a_person_sees_them_and_what_is_shared(db, tenant, narrowed):
    rows = {r[0] for r in narrowed.execute("SELECT content FROM cogmem.memories")}
    assert rows == {c for c, _, p, a in SCOPED if p in (None, "ayla")}
    got = set(recalled(narrowed, tenant, QUESTION, "ayla", "support"))
    assert got <= visible("ayla", "support") and "Ayla asked us never to call her on weekends." in got
    assert one(narrowed, "SELECT memory_id FROM cogmem.remember(%s, 'Ayla moved to Ankara.', person => 'ayla')",
               (tenant,)) is not None  # fmt: skip


@pytest.mark.parametrize(
    "call",
    [
        "SELECT * FROM cogmem.recall(%s, 'calls')",
        "SELECT * FROM cogmem.recall(%s, 'calls', person => 'ben')",
        "SELECT * FROM cogmem.remember(%s, 'A shared fact.')",
        "SELECT * FROM cogmem.remember(%s, 'A fact.', source => '{\"person\": \"ben\"}')",
        'SELECT * FROM cogmem.remember_many(%s, \'[{"content": "x y", "person": "ben"}]\', person => \'ayla\')',
        "SELECT * FROM cogmem.observe(%s, 'c', 'user', 'Never call Ben.', person => 'ben')",
        "SELECT cogmem.start_session(%s, 'x')",
        "SELECT * FROM cogmem.store_put(%s, '{a}', 'k', '{}', person => 'ben')",
        "SELECT * FROM cogmem.briefing(%s, person => 'ben')",
    ],
)
def test_a_narrowed_grant_acts_for_no_one_else(tenant, narrowed, call):
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
        narrowed.execute(call, (tenant,))
    assert "only for the person 'ayla'" in e.value.diag.message_primary
    assert e.value.diag.message_hint.startswith("Pass person => that person")


def test_a_narrowed_grant_cannot_touch_another_persons_memory_by_id(db, tenant, scoped, narrowed):
    bens = scoped["Ben said never phone him before noon."]
    assert narrowed.execute("SELECT * FROM cogmem.siblings(%s, %s)", (tenant, bens)).fetchall() == []
    with pytest.raises(psycopg.errors.NoDataFound):
        narrowed.execute(
            "SELECT * FROM cogmem.remember(%s, 'Phone anytime.', contradicts => %s, person => 'ayla')", (tenant, [bens])
        )
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE memory_id = %s", (bens,)) == 1


def test_a_grant_of_every_tenant_cannot_be_narrowed(db, login):
    conn = login("cogmem_app")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="cannot be narrowed"):
        db.execute("SELECT cogmem.grant_tenant(%s, '*', person => 'ayla')", (one(conn, "SELECT current_user"),))


def test_a_guard_check_shows_the_scopes_rules_and_a_lesson_stays_in_its_scope(db, tenant, scoped):
    shown = {
        r[0]
        for r in db.execute(
            "SELECT content FROM cogmem.guard_check(%s, 'calls', 'phone the customer', person => %s, agent => %s)",
            (tenant, "ayla", "support"),
        )
    }
    assert "Ayla asked us never to call her on weekends." in shown
    assert "Ben said never phone him before noon." not in shown
    report = (
        "SELECT learning_id, repeated FROM cogmem.report_error(%s, 'calls', 'Called Ayla on a Sunday.', person => %s)"
    )
    first = db.execute(report, (tenant, "ayla")).fetchone()
    other = db.execute(report, (tenant, "ben")).fetchone()
    again = db.execute(report, (tenant, "ayla")).fetchone()
    assert first[1] is False and other[1] is False and other[0] != first[0]
    assert again == (first[0], True)
    assert one(db, "SELECT person FROM cogmem.memories WHERE memory_id = %s", (first[0],)) == "ayla"
    with pytest.raises(psycopg.errors.NoDataFound):
        db.execute(
            "SELECT * FROM cogmem.report_error(%s, 'calls', 'x', repeat_of => %s, person => 'ben')", (tenant, first[0])
        )


def test_trust_is_in_an_agent(db, tenant):
    db.execute("SELECT cogmem.trust_event(%s, 'praise', agent => 'billing')", (tenant,))
    db.execute("SELECT cogmem.trust_event(%s, 'correction', agent => 'support')", (tenant,))
    scores = [one(db, "SELECT cogmem.trust(%s, %s)", (tenant, agent)) for agent in ("billing", "support", None)]
    assert scores == [53, 47, 50]


def test_the_review_lists_take_a_scope(db, tenant, scoped):
    bens = scoped["Ben said never phone him before noon."]
    db.execute(
        "SELECT * FROM cogmem.remember(%s, 'Always phone him before noon.', 'dos_and_donts', contradicts => %s,"
        " person => 'ben', agent => 'support')",
        (tenant, [bens]),
    )
    text_first = one(
        db, "SELECT memory_id FROM cogmem.remember(%s, 'Text me first.', 'fresh', person => 'ayla')", (tenant,)
    )
    db.execute("SELECT cogmem._mark_candidate(%s, %s, 'dos_and_donts', 0.8)", (tenant, text_first))
    conflicts = "SELECT count(*) FROM cogmem.open_conflicts(%s, person => %s)"
    pending = "SELECT count(*) FROM cogmem.pending_rules(%s, person => %s)"
    assert [one(db, conflicts, (tenant, p)) for p in ("ben", "ayla", None)] == [1, 0, 1]
    assert [one(db, pending, (tenant, p)) for p in ("ben", "ayla", None)] == [0, 1, 1]


def test_a_narrowed_grant_keeps_to_its_person_beyond_memories(db, tenant, scoped, narrowed, login):
    # It checks before acting like anyone (its trust is the agent's, not a person's) ...
    assert narrowed.execute(
        "SELECT * FROM cogmem.guard_check(%s, 'calls', 'call her', person => 'ayla', agent => 'support')", (tenant,)
    ).fetchall()
    # ... but what every person shares is not its to change, and the audit trail is not its to read.
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only for some persons"):
        narrowed.execute("SELECT cogmem.set_core_identity(%s, 'a new agent')", (tenant,))
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only for some persons"):
        narrowed.execute("SELECT * FROM cogmem.acknowledge(%s, 1)", (tenant,))
    assert one(narrowed, "SELECT count(*) FROM cogmem.audit_log") == 0
    assert one(db, "SELECT count(*) FROM cogmem.audit_log WHERE tenant = %s", (tenant,)) > 0
    role = one(login("cogmem_app"), "SELECT current_user")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="cannot hold the vault"):
        db.execute("SELECT cogmem.grant_tenant(%s, %s, vault => true, person => 'ayla')", (role, tenant))


def test_a_narrowed_grant_moves_no_trust_that_another_persons_guard_reads(db, tenant, scoped, narrowed):
    guard = "SELECT count(*) FROM cogmem.guard_check(%s, 'calls', 'call him', person => 'ben')"
    before = one(db, guard, (tenant,))
    for _ in range(20):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only for some persons") as e:
            narrowed.execute("SELECT cogmem.trust_event(%s, 'praise', 'great job')", (tenant,))
    assert e.value.diag.message_hint.startswith("This changes what every person of the tenant shares")
    assert one(db, "SELECT cogmem.trust(%s)", (tenant,)) == 50
    assert one(db, guard, (tenant,)) == before


def test_a_narrowed_grant_reads_what_is_kept_beside_a_memory_only_where_it_reads_the_memory(
    db, tenant, scoped, narrowed
):
    bens = scoped["Ben said never phone him before noon."]
    ayla = scoped["Ayla asked us never to call her on weekends."]
    db.execute("SELECT * FROM cogmem.recall(%s, 'calls', person => 'ben')", (tenant,))
    db.execute("SELECT cogmem.apply_rehearsals()")
    db.execute(
        "INSERT INTO cogmem.memory_siblings (tenant, memory_id, sibling_id, similarity) VALUES (%s, %s, %s, 0.9)",
        (tenant, min(bens, ayla), max(bens, ayla)),
    )
    db.execute(
        "INSERT INTO cogmem.memory_contradictions (tenant, memory_id, contradicts_id, verdict, weakened)"
        " VALUES (%s, %s, %s, 'detected', false)",
        (tenant, ayla, bens),
    )
    stats = {r[0] for r in narrowed.execute("SELECT memory_id FROM cogmem.memory_stats")}
    assert bens not in stats and ayla in stats
    assert stats == {r[0] for r in narrowed.execute("SELECT memory_id FROM cogmem.memories")}
    assert one(db, "SELECT count(*) FROM cogmem.memory_stats WHERE memory_id = %s", (bens,)) == 1
    assert one(narrowed, "SELECT count(*) FROM cogmem.memory_siblings") == 0
    assert one(narrowed, "SELECT count(*) FROM cogmem.memory_contradictions") == 0
    assert one(db, "SELECT count(*) FROM cogmem.memory_siblings WHERE tenant = %s", (tenant,)) == 1
    assert one(narrowed, "SELECT count(*) FROM cogmem.memory_overview WHERE memory_id = %s", (bens,)) == 0


def test_an_agent_sees_no_other_persons_candidates_unless_it_asks_for_everyone(db, tenant):
    memory = one(
        db, "SELECT memory_id FROM cogmem.remember(%s, 'Text me first.', 'fresh', person => 'ayla')", (tenant,)
    )
    db.execute("SELECT cogmem._mark_candidate(%s, %s, 'dos_and_donts', 0.8)", (tenant, memory))
    assert one(db, "SELECT count(*) FROM cogmem.pending_rules(%s, everyone => false)", (tenant,)) == 0
    assert one(db, "SELECT count(*) FROM cogmem.pending_rules(%s)", (tenant,)) == 1


def test_an_erased_persons_recalls_keep_no_name(db, tenant, scoped):
    db.execute("SELECT * FROM cogmem.recall(%s, 'calls', person => 'ayla', conversation => 'ayla-+905551234567')",
               (tenant,))  # fmt: skip
    db.execute("SELECT * FROM cogmem.recall(%s, 'calls', person => 'ben', conversation => 'ben-1')", (tenant,))
    db.execute("SELECT * FROM cogmem.erase_person(%s, 'ayla')", (tenant,))
    assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE person = 'ayla'") == 0
    assert db.execute("SELECT person, conversation FROM cogmem.recalls ORDER BY person").fetchall() == [
        ("(erased)", None), ("ben", "ben-1")
    ]  # fmt: skip
    # The audit, append-only, never held the conversation's id: only its hash, as the person's.
    audited = db.execute("SELECT detail::text FROM cogmem.audit_log WHERE tenant = %s", (tenant,)).fetchall()
    assert not [d for (d,) in audited if "905551234567" in d or "ayla" in d.lower()]
    assert one(db, "SELECT count(DISTINCT conversation) FROM cogmem.audit_recalls WHERE length(conversation) = 64") == 2


def test_a_store_key_is_its_persons_and_a_narrowed_grant_finds_no_other_persons_keys(db, tenant, narrowed):
    put = "SELECT action FROM cogmem.store_put(%s, '{profile}', 'plan', %s::jsonb, person => %s)"
    db.execute(put, (tenant, '{"plan": "monthly"}', "ben"))
    # Ayla's grant writes her own item under the same namespace and key: no squatting, no 42501 to read.
    assert one(narrowed, put, (tenant, '{"plan": "yearly"}', "ayla")) == "stored"
    get = "SELECT value FROM cogmem.store_get(%s, '{profile}', 'plan', person => %s)"
    assert one(db, get, (tenant, "ben")) == {"plan": "monthly"}
    assert one(narrowed, get, (tenant, "ayla")) == {"plan": "yearly"}
    assert db.execute("SELECT value FROM cogmem.store_get(%s, '{profile}', 'plan')", (tenant,)).fetchall() == []
    # Another person's key is refused the same way whether it exists or not: no oracle.
    errors = set()
    for key in ("plan", "no-such-key"):
        for call in (
            "SELECT * FROM cogmem.store_get(%s, '{profile}', %s, person => 'ben')",
            "SELECT cogmem.store_delete(%s, '{profile}', %s, person => 'ben')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
                narrowed.execute(call, (tenant, key))
            errors.add((e.value.diag.message_primary, e.value.diag.message_hint))
    assert len(errors) == 1 and "only for the person 'ayla'" in errors.pop()[0]
    listed = "SELECT key, value FROM cogmem.store_search(%s, '{profile}')"
    assert narrowed.execute(listed, (tenant,)).fetchall() == [("plan", {"plan": "yearly"})]
    assert len(db.execute(listed, (tenant,)).fetchall()) == 2
    ben_only = "SELECT value FROM cogmem.store_search(%s, '{profile}', person => 'ben')"
    assert db.execute(ben_only, (tenant,)).fetchall() == [({"plan": "monthly"},)]
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        narrowed.execute(ben_only, (tenant,))
    assert one(narrowed, "SELECT cogmem.store_delete(%s, '{profile}', 'plan', person => 'ayla')", (tenant,)) is True
    assert one(db, get, (tenant, "ben")) == {"plan": "monthly"}
