"""sql/058-rehearsal.sql: rehearsal and feedback credit applied from the cycle log, exact for every reader."""

import random
import threading

import psycopg
import pytest

from tests.conftest import one

SERVER_MSG = "Let's open a maintenance window tonight and restart the servers"


def add(db, tenant, content, ring="long_term", topics=("server",)):
    return one(db, "SELECT memory_id FROM cogmem.remember(%s, %s, %s, %s)", (tenant, content, ring, list(topics)))


def recall_id(db, tenant, message=SERVER_MSG):
    return one(db, "SELECT recall_id FROM cogmem.recall(%s, %s) LIMIT 1", (tenant, message))


def stats(db, view="memory_stats"):
    return dict(
        (r[0], r[1:])
        for r in db.execute(f"SELECT memory_id, recall_count, outcome_count, last_recalled_at FROM cogmem.{view}")
    )


def test_a_recall_is_pending_until_applied_and_applied_once(db, tenant):
    a = add(db, tenant, "Restart the servers one at a time.")
    b = add(db, tenant, "Drain a server before restarting it.")
    first = recall_id(db, tenant)
    recall_id(db, tenant)
    assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE pending") == 2
    assert {m: s[:2] for m, s in stats(db).items()} == {a: (0, 0), b: (0, 0)}
    pending = stats(db, "memory_overview")
    assert {m: s[:2] for m, s in pending.items()} == {a: (2, 0), b: (2, 0)}
    assert db.execute("SELECT recall_count FROM cogmem.pending_stats WHERE memory_id = %s", (a,)).fetchone() == (2,)
    # The clock restarts at the last recall: the cycle row's own time.
    last = one(db, "SELECT max(created_at) FROM cogmem.recalls")
    assert pending[a][2] == last

    assert one(db, "SELECT cogmem.feedback(%s, 1.0)", (first,)) == 2
    assert stats(db, "memory_overview")[a][:2] == (2, 1)
    assert one(db, "SELECT cogmem.apply_rehearsals()") == 2
    assert stats(db) == stats(db, "memory_overview") == {a: (2, 1, last), b: (2, 1, last)}
    assert one(db, "SELECT count(*) FROM cogmem.pending_stats") == 0
    assert one(db, "SELECT cogmem.apply_rehearsals()") == 0
    assert stats(db) == {a: (2, 1, last), b: (2, 1, last)}  # applying again changes nothing


def test_feedback_after_its_rehearsal_was_applied_credits_without_counting_again(db, tenant):
    a = add(db, tenant, "Restart the servers one at a time.")
    cycle = recall_id(db, tenant)
    db.execute("SELECT cogmem.apply_rehearsals()")
    db.execute("SELECT cogmem.feedback(%s, 0.5)", (cycle,))
    db.execute("SELECT cogmem.feedback(%s, 0.25)", (cycle,))  # replaces, before it was applied
    assert one(db, "SELECT cogmem.apply_rehearsals(%s)", (tenant,)) == 1
    assert db.execute(
        "SELECT recall_count, outcome_count, outcome_sum FROM cogmem.memory_stats WHERE memory_id = %s", (a,)
    ).fetchone() == (1, 1, 0.25)


def test_recall_strength_counts_the_rehearsal_still_pending(db, tenant):
    a = add(db, tenant, "Restart the servers one at a time.", ring="fresh")
    db.execute("UPDATE cogmem.memories SET created_at = now() - interval '7 days' WHERE memory_id = %s", (a,))

    def strength():
        reason = one(db, "SELECT reason FROM cogmem.recall(%s, %s) WHERE memory_id = %s", (tenant, SERVER_MSG, a))
        return reason.rsplit("strength ", 1)[1]

    assert strength() == "0.50"  # a week of the fresh ring's 7-day half-life
    assert strength() == "1.00"  # the first recall, still pending, restarted the clock
    assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE pending") == 2


def test_a_recall_applies_its_tenants_backlog_beyond_the_setting(db, tenant):
    a = add(db, tenant, "Restart the servers one at a time.")
    db.execute("SET cogmem.rehearsal_backlog = 3")
    recall_id(db, tenant)
    recall_id(db, tenant)
    assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE pending") == 2
    recall_id(db, tenant)  # the third pending cycle: this recall applies all three
    assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE pending") == 0
    assert one(db, "SELECT recall_count FROM cogmem.memory_stats WHERE memory_id = %s", (a,)) == 3


def test_the_night_applies_the_days_cycles_before_deciding(db, tenant):
    a = add(db, tenant, "Restart the servers one at a time.")
    for _ in range(3):
        db.execute("SELECT cogmem.feedback(%s, 1.0)", (recall_id(db, tenant),))
    db.execute("SELECT * FROM cogmem.consolidate(now() + interval '1 day', %s)", (tenant,))
    assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE pending") == 0
    assert one(db, "SELECT reinforced FROM cogmem.memory_stats WHERE memory_id = %s", (a,)) is True


def test_apply_skips_a_tenant_its_night_holds_and_a_cycle_in_feedback(db, dsn, tenant):
    add(db, tenant, "Restart the servers one at a time.")
    cycle = recall_id(db, tenant)
    other = recall_id(db, tenant)
    with psycopg.connect(dsn) as night:  # a night holds the tenant
        night.execute("SELECT FROM cogmem.tenants WHERE tenant = %s FOR UPDATE", (tenant,))
        assert one(db, "SELECT cogmem.apply_rehearsals()") == 0
    with psycopg.connect(dsn) as feedback:  # a feedback in progress holds its cycle
        feedback.execute("SELECT cogmem.feedback(%s, 1.0)", (cycle,))
        assert one(db, "SELECT cogmem.apply_rehearsals()") == 1  # the other cycle
        feedback.commit()
    assert one(db, "SELECT cogmem.apply_rehearsals()") == 1
    assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE pending") == 0
    assert other != cycle


def test_concurrent_applies_and_recalls_count_exactly(dsn, db, tenant):
    ids = [add(db, tenant, f"Server rule number {n}: restart web-{n} one at a time.") for n in range(20)]
    errors: list = []

    def work(k: int) -> None:
        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("SET cogmem.rehearsal_backlog = 5")
                for n in range(15):
                    conn.execute("SELECT count(*) FROM cogmem.recall(%s, %s)", (tenant, SERVER_MSG)).fetchone()
                    if n % 4 == k % 4:
                        conn.execute("SELECT cogmem.apply_rehearsals()")
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    injected = one(db, "SELECT count(*) FROM cogmem.recall_items WHERE memory_id IS NOT NULL")
    assert injected == 6 * 15 * len(ids)
    assert one(db, "SELECT sum(recall_count) FROM cogmem.memory_overview") == injected
    db.execute("SELECT cogmem.apply_rehearsals()")
    assert one(db, "SELECT sum(recall_count) FROM cogmem.memory_stats") == injected


def test_an_application_role_applies_only_its_own_tenants(db, login, tenant):
    db.execute("SELECT cogmem.create_tenant('globex')")
    add(db, tenant, "Restart the servers one at a time.")
    add(db, "globex", "Restart the servers one at a time.")
    recall_id(db, tenant)
    recall_id(db, "globex")
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (app.info.user, tenant))
    assert one(app, "SELECT cogmem.apply_rehearsals()") == 1
    with pytest.raises(psycopg.errors.UndefinedObject):  # as every verb: a tenant out of reach is not there
        app.execute("SELECT cogmem.apply_rehearsals('globex')")
    assert db.execute("SELECT tenant FROM cogmem.recalls WHERE pending").fetchall() == [("globex",)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_order_of_recalls_feedback_and_applies_ends_where_immediate_credit_would(db, tenant, seed):
    """An oracle: each memory's recalls are the cycles that injected it, and its credit is the last
    feedback of each cycle that named it, however the applies fell in between."""
    rng = random.Random(seed)
    ids = [add(db, tenant, f"Server rule {n}: restart web-{n} one at a time.") for n in range(6)]
    db.execute("SET cogmem.rehearsal_backlog = 5")
    cycles: dict = {}  # recall_id -> (injected, outcome, used)
    best: dict = {}  # recall_id -> its best-scored memory of a ranked ring
    for _ in range(60):
        step = rng.random()
        if step < 0.45 or not cycles:
            budget = rng.choice([40, 80, 3200])  # small budgets inject some rules, not all
            rows = db.execute("SELECT recall_id, memory_id, layer::text, score"
                              " FROM cogmem.recall(%s, %s, budget => %s)",
                              (tenant, SERVER_MSG, budget)).fetchall()  # fmt: skip
            if rows:
                ranked = [r for r in rows if r[2] in ("long_term", "habits", "procedures", "fresh")]
                best[rows[0][0]] = max(ranked, key=lambda r: r[3])[1] if ranked else None
                cycles[rows[0][0]] = ([r[1] for r in rows], None, None)
        elif step < 0.85:
            cycle = rng.choice(sorted(cycles))
            injected = cycles[cycle][0]
            used = None if rng.random() < 0.5 else rng.sample(injected, rng.randint(0, len(injected)))
            outcome = rng.choice([0.0, 0.25, 0.5, 1.0])
            db.execute("SELECT cogmem.feedback(%s, %s, %s)", (cycle, outcome, used))
            if used is None and outcome < 0.5 and best[cycle] is not None:
                used = [best[cycle]]  # a failure without used is charged to the best match only
            cycles[cycle] = (injected, outcome, None if used is None else sorted(set(used)))
        else:
            db.execute("SELECT cogmem.apply_rehearsals()")
    expected = {m: [0, 0, 0.0] for m in ids}
    for injected, outcome, used in cycles.values():
        for m in injected:
            expected[m][0] += 1
            if outcome is not None and (used is None or m in used):
                expected[m][1] += 1
                expected[m][2] += outcome
    overview = {r[0]: (r[1], r[2]) for r in db.execute(
        "SELECT memory_id, recall_count, outcome_count FROM cogmem.memory_overview")}  # fmt: skip
    assert overview == {m: (e[0], e[1]) for m, e in expected.items()}
    db.execute("SELECT cogmem.apply_rehearsals()")
    stats = {r[0]: (r[1], r[2], r[3]) for r in db.execute(
        "SELECT memory_id, recall_count, outcome_count, outcome_sum FROM cogmem.memory_stats")}  # fmt: skip
    assert stats == {m: (e[0], e[1], pytest.approx(e[2], abs=1e-5)) for m, e in expected.items()}


def test_a_backlog_setting_that_is_not_a_count_is_refused_clearly(db, tenant):
    add(db, tenant, "Restart the servers one at a time.")
    db.execute("SET cogmem.rehearsal_backlog = 'lots'")
    with pytest.raises(psycopg.errors.InvalidParameterValue) as caught:
        recall_id(db, tenant)
    assert (
        caught.value.diag.message_primary
        == 'cogmem.rehearsal_backlog must be a whole number of cycles from 1, got "lots"'
    )
    assert caught.value.diag.message_hint == "SET cogmem.rehearsal_backlog = 8 (the default), or RESET it."
    db.execute("SET cogmem.rehearsal_backlog = 0")
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        recall_id(db, tenant)
    db.execute("RESET cogmem.rehearsal_backlog")
    assert one(db, "SELECT count(*) FROM cogmem.recalls") == 0  # nothing of the refused calls was kept
    recall_id(db, tenant)
    assert one(db, "SELECT count(*) FROM cogmem.recalls WHERE pending") == 1
