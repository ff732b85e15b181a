"""sql/170-episodes.sql: sessions archived as episodes, briefed back, and analysed over a period."""

import psycopg
import pytest

from tests.conftest import named, one


def start(db, tenant, project="shop-migration", goal=None):
    return one(db, "SELECT cogmem.start_session(%s, %s, %s)", (tenant, project, goal))


def end(db, session, summary, **kw):
    return db.execute(
        f"SELECT episode, touched, remembered FROM cogmem.end_session(%(session)s, %(summary)s{named(kw)})",
        {"session": session, "summary": summary, **kw},
    ).fetchone()


def test_a_session_is_archived_and_briefed_back(db, tenant):
    rule = one(
        db,
        "SELECT memory_id FROM cogmem.remember(%s, 'Never restart the servers at night', 'dos_and_donts')",
        (tenant,),
    )
    session = start(db, tenant, goal="move the shop to the new cluster")
    recalled = db.execute(
        "SELECT memory_id FROM cogmem.recall(%s, 'restart the servers?', conversation => %s)", (tenant, str(session))
    ).fetchall()
    assert (rule,) in recalled
    episode, touched, remembered = end(
        db,
        session,
        "Moved the shop database to db-2; DNS still points to the old cluster.",
        decisions=["Keep db-1 as a read replica until Friday", " "],
        open_items=["Switch the DNS record of shop.example to the new cluster"],
        next_steps=["Lower the DNS TTL to 300 first", "Then switch the record"],
        facts=["The shop database now runs on db-2."],
        procedures=["To fail over the shop: 1. stop writes 2. promote db-1 3. switch DNS"],
        phase="cut-over",
    )
    assert episode == session and len(remembered) == 2
    assert touched == sorted([rule, *remembered])
    stored = db.execute(
        "SELECT ring::text, source ->> 'via' FROM cogmem.memories WHERE memory_id = ANY (%s) ORDER BY memory_id",
        (remembered,),
    ).fetchall()
    assert stored == [("fresh", "end_session"), ("procedures", "end_session")]
    archived = db.execute(
        "SELECT project, phase, decisions, topics FROM cogmem.episodes WHERE session_id = %s", (session,)
    ).fetchone()
    assert archived[:3] == ("shop-migration", "cut-over", ["Keep db-1 as a read replica until Friday"])
    assert "dns" in archived[3] and "database" in archived[3]

    briefing = db.execute("SELECT section, content FROM cogmem.briefing(%s, 'shop-migration')", (tenant,)).fetchall()
    assert briefing == [
        ("last_session", "Moved the shop database to db-2; DNS still points to the old cluster."),
        ("phase", "cut-over"),
        ("open_items", "Switch the DNS record of shop.example to the new cluster"),
        ("next_steps", "Lower the DNS TTL to 300 first"),
        ("next_steps", "Then switch the record"),
        ("decisions", "Keep db-1 as a read replica until Friday"),
        ("procedures", "To fail over the shop: 1. stop writes 2. promote db-1 3. switch DNS"),
    ]
    text = one(db, "SELECT cogmem.briefing_text(%s, 'shop-migration')", (tenant,))
    assert text.startswith("## Last session (ended ")
    assert "## Open items\n- Switch the DNS record of shop.example to the new cluster" in text
    assert "## Next steps\n- Lower the DNS TTL to 300 first\n- Then switch the record" in text


def test_episodes_are_immutable_and_sessions_end_once(db, tenant):
    session = start(db, tenant)
    end(db, session, "Did the thing.")
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
        db.execute("UPDATE cogmem.episodes SET summary = 'Did something else.'")
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
        end(db, session, "Again.")
    assert err.value.diag.message_hint


def test_the_briefing_keeps_to_its_budget_and_shows_open_sessions(db, tenant):
    first = start(db, tenant)
    end(db, first, "Old session.", decisions=["Old decision"])
    second = start(db, tenant)
    end(db, second, "x" * 400, open_items=["short item"])
    start(db, tenant, goal="upgrade nginx")  # left open
    rows = db.execute(
        "SELECT section, content, tokens FROM cogmem.briefing(%s, 'shop-migration', 60)", (tenant,)
    ).fetchall()
    # The 100-token summary does not fit 60 tokens; what follows does, in order.
    assert [r[0] for r in rows] == ["open_items", "decisions", "open_sessions"]
    assert sum(r[2] for r in rows) <= 60 and "upgrade nginx" in rows[2][1]
    assert db.execute("SELECT * FROM cogmem.briefing(%s, 'another-project')", (tenant,)).fetchall() == []
    assert one(db, "SELECT cogmem.briefing_text(%s, 'another-project')", (tenant,)) is None


def test_analyze_gathers_a_topic_over_a_period(db, tenant):
    old = one(db, "SELECT memory_id FROM cogmem.remember(%s, 'Globex web-1 ran out of disk space')", (tenant,))
    db.execute("UPDATE cogmem.memories SET created_at = now() - interval '200 days' WHERE memory_id = %s", (old,))
    incident = one(
        db,
        "SELECT memory_id FROM cogmem.remember(%s, %s, 'shocks')",
        (tenant, "Outage: Globex web-2 was down for 2 hours, customers lost orders."),
    )
    one(db, "SELECT memory_id FROM cogmem.remember(%s, 'Invoices for Initech go out on the 1st.')", (tenant,))
    session = start(db, tenant, project="globex")
    end(db, session, "Replaced the disk of Globex web-2.", decisions=["Monitor disk usage on all Globex servers"])
    rows = db.execute(
        "SELECT kind, ref FROM cogmem.analyze(%s, 'Globex', now() - interval '180 days', now() + interval '1 minute')",
        (tenant,),
    ).fetchall()
    assert rows == [("incident", str(incident)), ("episode", str(session))]
    everything = db.execute("SELECT kind FROM cogmem.analyze(%s, 'globex')", (tenant,)).fetchall()
    assert [r[0] for r in everything] == ["memory", "incident", "episode"]


@pytest.mark.parametrize(
    ("call", "sqlstate"),
    [
        ("SELECT cogmem.start_session('nobody')", "42704"),
        ("SELECT * FROM cogmem.end_session('00000000-0000-0000-0000-000000000000', 'x')", "P0002"),
        ("SELECT * FROM cogmem.briefing('acme', NULL, 0)", "22023"),
        ("SELECT * FROM cogmem.analyze('acme', ' ')", "22023"),
    ],
)
def test_bad_input_is_refused_with_a_hint(db, tenant, call, sqlstate):
    with pytest.raises(psycopg.Error) as err:
        db.execute(call)
    assert err.value.sqlstate == sqlstate and err.value.diag.message_hint


def test_an_empty_or_oversized_episode_is_refused(db, tenant):
    session = start(db, tenant)
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        end(db, session, "  ")
    with pytest.raises(psycopg.errors.StringDataRightTruncation) as err:
        end(db, session, "Fine.", decisions=["x" * 8001])
    assert "max_content_chars" in err.value.diag.message_hint
    assert one(db, "SELECT count(*) FROM cogmem.episodes") == 0
    with pytest.raises(psycopg.errors.StringDataRightTruncation):
        start(db, tenant, goal="x" * 1001)
