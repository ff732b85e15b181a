"""sql/140-trust.sql: the per-tenant trust score, moved by recorded events."""

import psycopg
import pytest

from tests.conftest import one


def event(db, tenant, kind, cause=None, memory_id=None):
    return one(db, "SELECT cogmem.trust_event(%s, %s, %s, %s)", (tenant, kind, cause, memory_id))


def test_trust_arithmetic(db, tenant):
    assert one(db, "SELECT cogmem.trust(%s)", (tenant,)) == 50
    assert event(db, tenant, "praise", "thanks, exactly right") == 53
    assert event(db, tenant, "delegation", "just handle the DNS") == 55
    assert event(db, tenant, "caught_error", "the guard stopped a night restart") == 58
    assert event(db, tenant, "correction", "no, the IP changed") == 55
    rows = db.execute(
        "SELECT kind, delta, score, cause FROM cogmem.trust_events WHERE tenant = %s ORDER BY event_id", (tenant,)
    ).fetchall()
    assert rows == [
        ("praise", 3, 53, "thanks, exactly right"),
        ("delegation", 2, 55, "just handle the DNS"),
        ("caught_error", 3, 58, "the guard stopped a night restart"),
        ("correction", -3, 55, "no, the IP changed"),
    ]
    # The audit keeps the change and a hash of the cause, not its words.
    logged = db.execute(
        "SELECT detail FROM cogmem.audit_log WHERE event = 'trust_changed' ORDER BY audit_id"
    ).fetchall()
    assert [d[0]["score"] for d in logged] == [53, 55, 58, 55]
    assert "DNS" not in str(logged)


def test_the_score_stays_between_0_and_100(db, tenant):
    for _ in range(20):
        event(db, tenant, "praise")
    assert one(db, "SELECT cogmem.trust(%s)", (tenant,)) == 100
    assert one(db, "SELECT delta FROM cogmem.trust_events ORDER BY event_id DESC LIMIT 1") == 0
    for _ in range(40):
        event(db, tenant, "correction")
    assert one(db, "SELECT cogmem.trust(%s)", (tenant,)) == 0


def test_a_memory_corrected_three_times_in_a_week_costs_ten_more_once(db, tenant):
    memory = one(db, "SELECT memory_id FROM cogmem.remember(%s, 'The billing contact is Ayse.')", (tenant,))
    event(db, tenant, "correction", memory_id=memory)
    event(db, tenant, "correction", memory_id=memory)
    # An old correction does not count towards the week.
    db.execute(
        """UPDATE cogmem.trust_events SET at = at - interval '8 days'
           WHERE event_id = (SELECT min(event_id) FROM cogmem.trust_events)"""
    )
    assert event(db, tenant, "correction", memory_id=memory) == 41  # 50 - 3 * 3
    assert event(db, tenant, "correction", memory_id=memory) == 28  # the third in 7 days: -3, then -10
    assert event(db, tenant, "correction", memory_id=memory) == 25  # churn counted once a week
    kinds = [r[0] for r in db.execute("SELECT kind FROM cogmem.trust_events ORDER BY event_id")]
    assert kinds.count("memory_churn") == 1


@pytest.mark.parametrize(
    ("kind", "memory_id", "sqlstate"),
    [("bribe", None, "22023"), (None, None, "22023"), ("memory_churn", None, "22023"), ("praise", 4242, "P0002")],
)
def test_bad_events_are_refused(db, tenant, kind, memory_id, sqlstate):
    with pytest.raises(psycopg.Error) as err:
        event(db, tenant, kind, memory_id=memory_id)
    assert err.value.sqlstate == sqlstate and err.value.diag.message_hint
    assert one(db, "SELECT count(*) FROM cogmem.trust_events") == 0


def test_an_unknown_tenant_has_no_trust(db):
    with pytest.raises(psycopg.errors.UndefinedObject):
        one(db, "SELECT cogmem.trust('nobody')")
