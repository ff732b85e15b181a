"""sql/085-observe.sql: the sensory register and the attention filter of observe()."""

from datetime import timedelta

import psycopg
import pytest

from tests.conftest import one


def observe(db, tenant, content, role="user", conversation="c1", at=None):
    return db.execute(
        "SELECT turn_id, memory_id, ring, topics, action, reason FROM cogmem.observe(%s, %s, %s, %s, at => %s)",
        (tenant, conversation, role, content, at or one(db, "SELECT now()")),
    ).fetchone()


@pytest.mark.parametrize(
    ("content", "role", "reason"),
    [
        ("Never restart production servers during business hours.", "user", "routed to dos_and_donts"),
        ("I prefer short answers with links", "user", "explicit preference"),
        ("No, that's the staging box, not production", "user", "correction of the agent"),
        ("No, I will check it", "assistant", None),
        ("We decided to keep Postgres instead of moving to MySQL", "user", "decision with trade-offs"),
        ("Hayır, yanlış sunucuya baktın", "user", "correction of the agent"),
        ("Thanks, that helps", "user", None),
    ],
)
def test_attention(db, content, role, reason):
    assert one(db, "SELECT cogmem.attention(%s, %s)", (content, role)) == reason


def test_turns_that_pass_become_memories_and_the_rest_stay_in_the_register(db, tenant):
    chit_chat = observe(db, tenant, "Good morning!")
    assert chit_chat[1:] == (None, None, None, None, None)
    rule = observe(db, tenant, "Never restart production servers during business hours.")
    assert rule[2:] == ("dos_and_donts", ["server"], "created", "routed to dos_and_donts")
    source = one(db, "SELECT source FROM cogmem.memories WHERE memory_id = %s", (rule[1],))
    assert source == {
        "conversation": "c1",
        "role": "user",
        "turn_id": rule[0],
        "via": "observe",
        "attention": "routed to dos_and_donts",
    }
    assert db.execute("SELECT turn_id, memory_id FROM cogmem.sensory_turns ORDER BY turn_id").fetchall() == [
        (chit_chat[0], None),
        (rule[0], rule[1]),
    ]


def test_something_referred_to_again_in_the_conversation_is_kept(db, tenant):
    first = observe(db, tenant, "The release checklist lives in the wiki under ops")
    assert first[1] is None
    again = observe(db, tenant, "where in the wiki was the release checklist again")
    assert again[5] == "referred to again in this conversation" and again[4] == "created"
    elsewhere = observe(db, tenant, "the release checklist is long", conversation="c2")
    assert elsewhere[1] is None


def test_secrets_never_reach_the_register(db, tenant):
    observe(db, tenant, "my card is 4111 1111 1111 1111, password=hunter2")
    assert one(db, "SELECT content FROM cogmem.sensory_turns") == "my card is [REDACTED:PAN], password=[REDACTED]"


def test_the_register_expires_at_night(db, tenant):
    now = one(db, "SELECT now()")
    observe(db, tenant, "old small talk", at=now - timedelta(hours=49))
    observe(db, tenant, "recent small talk", at=now - timedelta(hours=47))
    decisions = dict(db.execute("SELECT decision, memories FROM cogmem.consolidate(%s)", (now,)).fetchall())
    assert decisions["expire"] == 1
    assert db.execute("SELECT content FROM cogmem.sensory_turns").fetchall() == [("recent small talk",)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("acme", "", "user", "hi"), "conversation must not be NULL or empty"),
        (("acme", "c1", None, "hi"), "role must not be NULL or empty"),
        (("acme", "c1", "user", "  "), "content must not be NULL or empty"),
    ],
)
def test_observe_errors(db, tenant, args, message):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        db.execute("SELECT * FROM cogmem.observe(%s, %s, %s, %s)", args)
    assert err.value.diag.message_primary == message
    assert one(db, "SELECT count(*) FROM cogmem.sensory_turns") == 0
