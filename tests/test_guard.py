"""sql/150-guard.sql: guard checks before risky actions, learnings from errors, blocking and acknowledgement."""

import numpy as np
import psycopg
import pytest

from tests.conftest import named, one, unit_vector

LESSON = "Restarted web-1 during the night and checkout broke: do not restart web servers at night."


def vector(values):
    return None if values is None else np.asarray(values, dtype=np.float32)


def remember(db, tenant, content, ring, topics, embedding=None):
    return one(
        db,
        "SELECT memory_id FROM cogmem.remember(%s, %s, %s, %s, %s, contradicts => '{}')",
        (tenant, content, ring, topics, vector(embedding)),
    )


def guard(db, tenant, area="server", action="restart web-1 tonight", embedding=None):
    return db.execute(
        "SELECT kind, memory_id, content, strength, times_referenced, blocking FROM cogmem.guard_check(%s, %s, %s, %s)",
        (tenant, area, action, vector(embedding)),
    ).fetchall()


def report(db, tenant, description=LESSON, **kw):
    return db.execute(
        "SELECT learning_id, errors, repeats_since_ack, blocking, repeated "
        f"FROM cogmem.report_error(%(tenant)s, 'server', %(description)s{named(kw)})",
        {"tenant": tenant, "description": description, **kw},
    ).fetchone()


def test_guard_returns_what_applies_to_the_area(db, tenant):
    rule = remember(db, tenant, "Never restart production servers during business hours.", "dos_and_donts", ["server"])
    shock = remember(db, tenant, "web-2 went down for 3 hours after a kernel update.", "shocks", ["server"])
    remember(db, tenant, "Never send invoices before the 1st.", "dos_and_donts", ["billing"])
    remember(db, tenant, "The staging server runs Debian 12.", "long_term", ["server"])  # a fact, not a rule
    db.execute(
        "SELECT cogmem.add_bios_rule('server', 'Test the configuration before any restart.', requirement => 'OPS-1')"
    )
    db.execute("SELECT cogmem.add_bios_rule('billing', 'Invoices carry the VAT number.', requirement => 'FIN-2')")
    rows = guard(db, tenant)
    assert {(kind, memory_id) for kind, memory_id, *_ in rows} == {("rule", rule), ("shock", shock), ("bios", None)}
    bios = next(r for r in rows if r[0] == "bios")
    assert bios[2] == "[server OPS-1] Test the configuration before any restart." and bios[3] == 1.0
    assert all(not r[5] for r in rows)
    # Brought up by a guard is referenced: counted.
    assert next(r for r in guard(db, tenant) if r[1] == rule)[4] == 1
    logged = db.execute(
        "SELECT detail FROM cogmem.audit_log WHERE event = 'guard_checked' ORDER BY audit_id"
    ).fetchall()
    assert len(logged) == 2 and logged[0][0]["area"] == "server"
    assert sorted(m for m in logged[0][0]["memory_ids"] if m is not None) == sorted([rule, shock])
    assert "restart web-1" not in str(logged)  # the action is hashed, not kept


def test_the_third_repeat_blocks_until_acknowledged(db, tenant):
    first = report(db, tenant)
    learning = first[0]
    assert first == (learning, 1, 0, False, False)
    assert db.execute(
        "SELECT ring::text, topics FROM cogmem.memories WHERE memory_id = %s", (learning,)
    ).fetchone() == ("dos_and_donts", ["server"])
    # The same mistake in other words is a repeat (half of the words in common).
    assert report(db, tenant, "Restarted web-1 during the night again and checkout broke.") == (
        learning,
        2,
        1,
        False,
        True,
    )
    assert report(db, tenant, repeat_of=learning) == (learning, 3, 2, False, True)
    assert report(db, tenant, repeat_of=learning) == (learning, 4, 3, True, True)
    rows = guard(db, tenant, action="deploy the new nginx config")
    assert rows[0][:2] == ("learning", learning) and rows[0][5] is True
    assert one(db, "SELECT cogmem.trust(%s)", (tenant,)) == 50 - 3 * 7  # each repeat cost trust

    db.execute("SELECT * FROM cogmem.acknowledge(%s, %s, 'we added a maintenance window')", (tenant, learning))
    assert not any(r[5] for r in guard(db, tenant))
    acked = db.execute(
        """SELECT blocking, repeats_since_ack, acknowledged_by, acknowledgement FROM cogmem.learnings
           WHERE memory_id = %s""",
        (learning,),
    ).fetchone()
    assert acked == (False, 0, "postgres", "we added a maintenance window")
    # Counting starts again: one more repeat is not yet blocking.
    assert report(db, tenant, repeat_of=learning)[2:4] == (1, False)
    events = [
        r[0] for r in db.execute("SELECT event FROM cogmem.audit_log WHERE level = 'metacognition' ORDER BY audit_id")
    ]
    assert events.count("error_reported") == 5 and events.count("acknowledged") == 1


def test_a_different_mistake_in_the_area_is_a_new_learning(db, tenant):
    first = report(db, tenant)[0]
    other = report(db, tenant, "Deleted the backup bucket while cleaning up old snapshots.")
    assert other[0] != first and other[4] is False


def at_cosine(a, seed, cosine):
    """A unit vector at exactly this cosine from the unit vector a."""
    a = np.asarray(a)
    b = np.asarray(unit_vector(seed))
    b = b - (a @ b) * a
    b /= np.linalg.norm(b)
    return list(cosine * a + (1 - cosine**2) ** 0.5 * b)


def test_trust_tunes_how_much_the_guard_returns(db, tenant):
    action = unit_vector(1)
    # Six rules about another area, 0.05 below the threshold of the tenant's model (MiniLM's 0.35, E5's 0.82)
    # in cosine with the action: out unless trust is low (the threshold drops by 0.1), so they show only then.
    below = one(db, "SELECT guard_similarity FROM cogmem.tenants WHERE tenant = %s", (tenant,)) - 0.05
    for n in range(6):
        remember(
            db,
            tenant,
            f"Rule number {n} about the cdn.",
            "dos_and_donts",
            ["cdn"],
            at_cosine(action, 10 + n, below),
        )
    assert guard(db, tenant, embedding=action) == []
    for _ in range(3):
        db.execute("SELECT cogmem.trust_event(%s, 'correction')", (tenant,))
    db.execute("SELECT cogmem.trust_event(%s, 'correction')", (tenant,))
    assert one(db, "SELECT cogmem.trust(%s)", (tenant,)) == 38
    assert len(guard(db, tenant, embedding=action)) == 6
    # High trust: a stricter threshold and at most five.
    for n in range(6):
        remember(db, tenant, f"Server rule number {n}.", "dos_and_donts", ["server"])
    for _ in range(15):
        db.execute("SELECT cogmem.trust_event(%s, 'praise')", (tenant,))
    assert one(db, "SELECT cogmem.trust(%s)", (tenant,)) > 80
    rows = guard(db, tenant, embedding=action)
    assert len(rows) == 5 and {r[2].startswith("Server rule") for r in rows} == {True}


@pytest.mark.parametrize(
    ("call", "sqlstate"),
    [
        ("SELECT * FROM cogmem.guard_check('acme', '', 'restart')", "22023"),
        ("SELECT * FROM cogmem.guard_check('acme', 'server', NULL)", "22004"),
        ("SELECT * FROM cogmem.guard_check('nobody', 'server', 'restart')", "42704"),
        ("SELECT * FROM cogmem.report_error('acme', 'server', ' ')", "22023"),
        ("SELECT * FROM cogmem.report_error('acme', NULL, 'x')", "22023"),
        ("SELECT * FROM cogmem.report_error('acme', 'server', 'x', repeat_of => 4242)", "P0002"),
        ("SELECT * FROM cogmem.acknowledge('acme', 4242)", "P0002"),
    ],
)
def test_bad_input_is_refused_with_a_hint(db, tenant, call, sqlstate):
    with pytest.raises(psycopg.Error) as err:
        db.execute(call)
    assert err.value.sqlstate == sqlstate and err.value.diag.message_hint


def test_the_description_is_redacted(db, tenant):
    learning = report(db, tenant, "Pasted password=hunter2 into the ticket; never paste credentials.")[0]
    assert "hunter2" not in one(db, "SELECT content FROM cogmem.memories WHERE memory_id = %s", (learning,))
