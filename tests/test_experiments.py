"""sql/190-experiments.sql: experiments on a setting, their report and sequential test, stop and adopt."""

from datetime import timedelta

import psycopg
import pytest
from psycopg.types.json import Jsonb

from tests.conftest import one
from tests.test_experiment_arms import create, tenants

VERDICT_COLUMNS = "arm, value, units, observations, estimate, verdict"


def recall_with_feedback(db, tenant: str, outcome: float, conversation: str | None = None, used=None) -> None:
    """One recall cycle of TENANT through the API, and its feedback."""
    recall_id = one(
        db, "SELECT recall_id FROM cogmem.recall(%s, 'invoices', conversation => %s) LIMIT 1", (tenant, conversation)
    )
    db.execute("SELECT cogmem.feedback(%s, %s::real, %s)", (recall_id, outcome, used))


def arm_tenants(db, names: list[str], experiment: str) -> dict[int, list[str]]:
    rows = db.execute(
        "SELECT arm, array_agg(tenant ORDER BY tenant) FROM cogmem.experiment_tenants WHERE experiment = %s"
        " GROUP BY arm",
        (experiment,),
    ).fetchall()
    return dict(rows)


def enrol(db, n: int, arms=(2, 5), **options) -> dict[int, list[str]]:
    """N tenants that each remember one fact, in experiment 'e' on promote_min_recalls."""
    names = tenants(db, *(f"t{i:02}" for i in range(n)))
    for t in names:
        db.execute(
            "SELECT cogmem.remember(%s, 'Invoices are sent on the first working day', topics => '{billing}')", (t,)
        )
    create(db, "e", "promote_min_recalls", list(arms), tenants=names, **options)
    return arm_tenants(db, names, "e")


def report(db, name="e", as_of=None) -> list[tuple]:
    return db.execute(
        f"SELECT {VERDICT_COLUMNS} FROM cogmem.experiment_report(%s, coalesce(%s, now()))", (name, as_of)
    ).fetchall()


def test_a_clear_winner_is_found(db):
    arms = enrol(db, 8)
    for arm, names in arms.items():
        for t in names:
            for _ in range(5):
                recall_with_feedback(db, t, 1.0 if arm == 1 else 0.0)
    rows = report(db)
    verdict = "arm 1 (promote_min_recalls = 2) is better"
    assert rows == [(1, 2, 4, 20.0, 1.0, verdict), (2, 5, 4, 20.0, 0.0, verdict)]
    full = db.execute("SELECT * FROM cogmem.experiment_report('e') ORDER BY arm").fetchall()
    (low1, high1, p1, decided), (low2, high2, p2, _) = [(r[5], r[6], r[7], r[9]) for r in full]
    assert low1 < 1.0 < high1 and low2 < 0.0 < high2 and high2 < low1  # the intervals part
    assert p1 < 0.05 and p2 == 1.0 and decided is not None


def test_one_busy_tenant_does_not_decide_its_arm(db):
    # Four tenants an arm, every one at 0.5 but one of arm 1, which sends 1,500 recalls rated 1: pooled, arm 1
    # looked better (p = 0.009); per tenant, it is one tenant of four.
    arms = enrol(db, 8)
    busy, *others = arms[1]
    for t in others + arms[2]:
        for outcome in (1.0, 0.0) * 5:
            recall_with_feedback(db, t, outcome)
    db.execute(
        "SELECT cogmem.feedback(r.recall_id, 1) FROM generate_series(1, 1500) AS g (i) CROSS JOIN LATERAL"
        " (SELECT recall_id FROM cogmem.recall(%s, 'invoices', budget => 3200 + 0 * g.i) LIMIT 1) AS r",
        (busy,),
    )
    rows = report(db)
    assert rows == [(1, 2, 4, 1530.0, 0.625, "no difference yet"), (2, 5, 4, 40.0, 0.5, "no difference yet")]
    assert all(p == 1 or p > 0.05 for (p,) in db.execute("SELECT p_better FROM cogmem.experiment_report('e')"))


def test_equal_arms_say_no_difference_yet(db):
    arms = enrol(db, 8)
    for names in arms.values():
        for t in names:
            for outcome in (1.0, 0.0, 1.0, 0.0):
                recall_with_feedback(db, t, outcome)
    rows = db.execute("SELECT estimate, p_better, verdict, decided_at FROM cogmem.experiment_report('e')").fetchall()
    assert rows == [(0.5, 1.0, "no difference yet", None)] * 2


def test_three_units_an_arm_decide_nothing(db):
    """Their variance cannot be told from three values: the test waits for a fourth unit."""
    arms = enrol(db, 6)
    for arm, names in arms.items():
        for t in names:
            for _ in range(10):
                recall_with_feedback(db, t, 1.0 if arm == 1 else 0.0)
    assert {r[-1] for r in report(db)} == {
        "too few tenants yet: arm 1 has 3, arm 2 has 3; a verdict needs 4 an arm, as the spread between fewer"
        " tells too little of how far arms differ by chance"
    }
    assert {r[0] for r in db.execute("SELECT p_better FROM cogmem.experiment_report('e')")} == {1.0}


def test_an_experiment_that_cannot_decide_is_told_so_when_it_starts(db):
    names = tenants(db, *(f"t{i}" for i in range(7)))
    notices = []
    db.add_notice_handler(lambda d: notices.append((d.severity, d.message_primary, d.message_hint)))
    create(db, "e", "promote_min_recalls", [2, 5], tenants=names)
    assert notices == [
        (
            "WARNING",
            'experiment "e" can reach no verdict: 7 tenants over 2 arms leave 3 in an arm, a verdict needs 4',
            "Stop it and enrol at least 8 tenants; the spread between fewer tells too little.",
        )
    ]
    create(db, "f", "forget_after", ["7 days", "60 days"], tenants=[*names, *tenants(db, "t7")])
    assert len(notices) == 1  # 8 tenants, 4 an arm


def test_recalls_without_feedback_before_the_start_or_after_the_stop_do_not_count(db):
    arms = enrol(db, 8)
    first = arms[1][0]
    one(db, "SELECT recall_id FROM cogmem.recall(%s, 'invoices') LIMIT 1", (first,))  # no feedback
    recall_with_feedback(db, first, 1.0)
    db.execute("UPDATE cogmem.experiments SET created_at = created_at - interval '1 hour'")  # the start, earlier
    db.execute("UPDATE cogmem.recalls SET created_at = created_at - interval '2 hours'")  # now before it
    recall_with_feedback(db, first, 0.0)
    assert [r[2:5] for r in report(db)] == [(1, 1.0, 0.0), (0, 0.0, None)]
    db.execute("SELECT cogmem.experiment_stop('e')")
    recall_with_feedback(db, first, 1.0)  # after the stop
    assert [r[2:5] for r in report(db)] == [(1, 1.0, 0.0), (0, 0.0, None)]


def synthetic(db, tenant: str, at, outcomes: list[float]) -> None:
    """Recall cycles with their outcomes at AT, as the log holds them (the bench's path)."""
    db.execute(
        "INSERT INTO cogmem.recalls (tenant, message_sha256, topics, budget, tokens_used, outcome, outcome_source,"
        " feedback_at, created_at)"
        " SELECT %s, '\\x00', '{}', 3200, 0, o, 'explicit', %s, %s FROM unnest(%s::real[]) AS o",
        (tenant, at, at, outcomes),
    )


def test_the_report_looks_daily_and_a_verdict_once_reached_stays(db):
    arms = enrol(db, 8)
    start = one(db, "SELECT created_at FROM cogmem.experiments")
    for day in range(1, 11):  # equal for three days, then arm 2 wins every time
        for arm, names in arms.items():
            for t in names:
                good = arm == 2 or day <= 3
                synthetic(db, t, start + timedelta(days=day - 0.5), [1.0, 0.0] if day <= 3 else [float(good)] * 2)
    day = lambda n: start + timedelta(days=n)  # noqa: E731
    assert {r[-1] for r in report(db, as_of=day(3))} == {"no difference yet"}
    decided = db.execute("SELECT DISTINCT verdict, decided_at FROM cogmem.experiment_report('e', %s)", (day(10),))
    (verdict, decided_at), *_ = decided.fetchall()
    assert verdict == "arm 2 (promote_min_recalls = 5) is better" and day(4) <= decided_at <= day(10)
    assert (decided_at - start) % timedelta(days=1) == timedelta(0)  # at a daily look
    # Later, arm 1 wins everything: the verdict reached first stands (the running minimum of the p-value).
    for n in range(11, 30):
        for t in arms[1]:
            synthetic(db, t, start + timedelta(days=n - 0.5), [1.0] * 20)
    rows = db.execute("SELECT DISTINCT verdict, decided_at FROM cogmem.experiment_report('e', %s)", (day(30),))
    assert rows.fetchall() == [(verdict, decided_at)]


def test_the_share_of_injected_items_used(db):
    arms = enrol(db, 8, metric="items_used")
    for arm, names in arms.items():
        for t in names:
            memory = one(db, "SELECT memory_id FROM cogmem.memories WHERE tenant = %s", (t,))
            for _ in range(3):
                recall_with_feedback(db, t, 1.0, used=[memory] if arm == 1 else [])
            recall_with_feedback(db, t, 1.0)  # names nothing used: not counted
    assert [r[2:5] for r in report(db)] == [(4, 12.0, 1.0), (4, 12.0, 0.0)]
    assert report(db)[0][-1] == "arm 1 (promote_min_recalls = 2) is better"


def test_corrections_per_session_fewer_is_better(db):
    """A session counts at its first recall, a correction when its next turn is judged one (here by the
    caller's judge, cogmem.judge_recall); recalls outside a conversation do not count."""
    arms = enrol(db, 8, metric="corrections")
    for arm, names in arms.items():
        for t in names:
            for session in range(20):  # in arm 1 the first answer of each session is corrected
                for n in range(2 if session < 2 else 1):
                    recall_id = one(
                        db, "SELECT recall_id FROM cogmem.recall(%s, 'invoices', conversation => %s) LIMIT 1",
                        (t, f"{t}-{session}"),
                    )  # fmt: skip
                    verdict = "corrected" if arm == 1 and n == 0 else "confirmed"
                    db.execute("SELECT cogmem.judge_recall(%s, %s, %s, 0.9, 'test-judge')", (t, recall_id, verdict))
            recall_with_feedback(db, t, 1.0)  # no conversation
    rows = db.execute("SELECT arm, units, observations, estimate, verdict FROM cogmem.experiment_report('e')")
    better = "arm 2 (promote_min_recalls = 5) is better"
    assert rows.fetchall() == [(1, 4, 80.0, 1.0, better), (2, 4, 80.0, 0.0, better)]


def test_sessions_are_the_units_of_a_session_experiment(db):
    tenants(db, "acme")
    db.execute("SELECT cogmem.remember('acme', 'Invoices are sent on the first working day', topics => '{billing}')")
    create(db, "s", "fusion_k", [5, 40], unit="session", tenants=["acme"])
    salt = one(db, "SELECT salt FROM cogmem.experiments")
    for n in range(16):
        arm = one(db, "SELECT cogmem._experiment_arm(%s, %s, 2)", (salt, f"c{n}"))
        recall_with_feedback(db, "acme", 1.0 if arm == 1 else 0.0, conversation=f"c{n}")
    recall_with_feedback(db, "acme", 1.0)  # outside any session: no arm
    rows = report(db, "s")
    assert sum(r[2] for r in rows) == 16 and sum(r[3] for r in rows) == 16.0
    assert [r[4] for r in rows] == [1.0, 0.0]


def test_status_lists_experiments_and_their_tenants(db):
    enrol(db, 5, arms=(2, 3, 5))
    row = db.execute("SELECT experiment, parameter, arms, unit, metric, state, tenants FROM cogmem.experiment_status()")
    assert row.fetchall() == [("e", "promote_min_recalls", [2, 3, 5], "tenant", "success_rate", "running",
                               {"1": 2, "2": 2, "3": 1})]  # fmt: skip
    db.execute("SELECT cogmem.experiment_stop('e')")
    assert one(db, "SELECT state FROM cogmem.experiment_status('e')") == "stopped"
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match='experiment "e" stopped at'):
        db.execute("SELECT cogmem.experiment_stop('e')")
    with pytest.raises(psycopg.errors.UndefinedObject, match='unknown experiment "nope"'):
        db.execute("SELECT cogmem.experiment_stop('nope')")
    with pytest.raises(psycopg.errors.UndefinedObject, match='unknown experiment "nope"'):
        db.execute("SELECT * FROM cogmem.experiment_report('nope')")


def refusal(db, sql: str, params=None) -> tuple[str, str, str]:
    with pytest.raises(psycopg.Error) as err:
        db.execute(sql, params)
    return err.value.sqlstate, err.value.diag.message_primary, err.value.diag.message_hint


def test_never_cut_bios_and_unknown_settings_are_refused(db):
    tenants(db, "a", "b")
    refused = ["turn_never_cut_probability", "candidate_min_successes", "reinforce_min_success",
               "dissonance_similarity", "guard_similarity", "max_content_chars", "gut_receive", "language"]  # fmt: skip
    for setting in refused:
        state, message, hint = refusal(db, "SELECT cogmem.experiment_create('x', %s, '[1, 2]')", (setting,))
        assert (state, message) == ("22023", f"setting {setting} may not be experimented on")
        assert hint.startswith("Experiments never change never-cut or BIOS behaviour") and "promote_min_recalls" in hint
    state, message, _ = refusal(db, "SELECT cogmem.experiment_create('x', 'token_allocation', '[100, 200]')")
    assert (state, message) == ("42703", "no setting named token_allocation")  # a layer's: not yet
    assert one(db, "SELECT count(*) FROM cogmem.experiments") == 0


REFUSED = "is out of range"
BAD = [
    ("promote_min_recalls", [3], {}, ("22023", "arms must be a JSON array of 2 to 10 values, got [3]")),
    ("promote_min_recalls", {"a": 1}, {}, ("22023", 'arms must be a JSON array of 2 to 10 values, got {"a": 1}')),
    ("promote_min_recalls", [2, "two"], {}, ("22023", 'arm "two" is not a value of promote_min_recalls (integer)')),
    ("promote_min_recalls", [2, 2.5], {}, ("22023", "arm 2.5 is not a value of promote_min_recalls (integer)")),
    ("promote_min_recalls", [2, None], {}, ("22023", "arm null is not a value of promote_min_recalls (integer)")),
    ("promote_min_recalls", [0, 2], {},
     ("23514", f"arm 0 of promote_min_recalls {REFUSED}: (promote_min_recalls >= 1)")),
    ("promote_min_success", [0.9, 0.90], {}, ("22023", "arm 0.9 is given twice")),
    ("forget_after", ["7 days", "-1 day"], {},
     ("23514", f"arm \"-1 day\" of forget_after {REFUSED}: (forget_after > '00:00:00'::interval)")),
    ("promote_min_recalls", [2, 3], {"unit": "session"}, ("22023", "unit session cannot hold promote_min_recalls")),
    ("promote_min_recalls", [2, 3], {"metric": "clicks"}, ("22023", "unknown metric clicks")),
    ("promote_min_recalls", [2, 3, 5], {},
     ("22023", "an experiment with 3 arms needs at least as many tenants, got 2")),
    ("promote_min_recalls", [2, 3], {"tenants": ["a", "ghost"]}, ("42704", 'unknown tenant "ghost"')),
]  # fmt: skip


@pytest.mark.parametrize(("parameter", "arms", "options", "expected"), BAD)
def test_bad_experiments_are_refused_with_what_is_wrong(db, parameter, arms, options, expected):
    tenants(db, "a", "b")
    args = "".join(f", {k} => %({k})s" for k in options)
    state, message, hint = refusal(
        db,
        f"SELECT cogmem.experiment_create('x', %(parameter)s, %(arms)s{args})",
        {"parameter": parameter, "arms": Jsonb(arms), **options},
    )
    assert (state, message) == expected and hint


def test_too_few_tenants_are_told_the_unit_that_can_hold_the_setting(db):
    """A session holds only what recall reads: the HINT offers that unit only where experiment_create takes it."""
    tenants(db, "a", "b")
    message = "an experiment with 3 arms needs at least as many tenants, got 2"
    for setting, hint in (
        ("promote_min_recalls", "Enrol at least 3 tenants: a session cannot hold promote_min_recalls."),
        ("fusion_k", "Enrol at least 3 tenants, or use unit 'session'."),
    ):
        got = refusal(db, "SELECT cogmem.experiment_create('x', %s, '[2, 3, 5]')", (setting,))
        assert got == ("22023", message, hint)
    create(db, "x", "fusion_k", [2, 3, 5], unit="session")  # as the HINT said


def test_one_running_experiment_per_setting_and_tenant(db):
    tenants(db, "a", "b", "c")
    create(db, "first", "promote_min_recalls", [2, 3], tenants=["a", "b"])
    state, message, hint = refusal(
        db, "SELECT cogmem.experiment_create('second', 'promote_min_recalls', '[4, 5]', tenants => '{b,c}')"
    )
    assert (state, message, hint) == ("55006", 'tenant "b" is in running experiment "first" on promote_min_recalls',
                                      "Stop it first: SELECT cogmem.experiment_stop('first');")  # fmt: skip
    create(db, "other-setting", "forget_after", ["7 days", "60 days"], tenants=["b", "c"])
    state, message, _ = refusal(db, "SELECT cogmem.experiment_create('first', 'fusion_k', '[5, 40]')")
    assert (state, message) == ("23505", 'experiment "first" exists')
    db.execute("SELECT cogmem.experiment_stop('first')")
    create(db, "second", "promote_min_recalls", [4, 5], tenants=["b", "c"])


def test_adopt_writes_the_arm_into_the_enrolled_tenants_and_is_audited(db):
    arms = enrol(db, 8)
    tenants(db, "outside")
    for arm, names in arms.items():
        for t in names:
            for _ in range(5):
                recall_with_feedback(db, t, 1.0 if arm == 2 else 0.0)
    assert one(db, "SELECT cogmem.experiment_adopt('e', 2)") == 8
    assert dict(db.execute("SELECT tenant, promote_min_recalls FROM cogmem.tenants").fetchall()) == {
        **{t: 5 for names in arms.values() for t in names},
        "outside": 3,
    }
    assert one(db, "SELECT state FROM cogmem.experiment_status('e')") == "adopted"
    seen = "SELECT array_agg(DISTINCT (cogmem._tenant_settings(tenant)).promote_min_recalls) FROM cogmem.tenants"
    assert one(db, seen + " WHERE tenant <> 'outside'") == [5]
    adopted = one(db, "SELECT detail FROM cogmem.audit_log WHERE event = 'experiment_adopted'")
    assert adopted == {"experiment": "e", "parameter": "promote_min_recalls", "arm": 2, "value": 5, "tenants": 8,
                       "verdict": "arm 2 (promote_min_recalls = 5) is better"}  # fmt: skip
    changed = db.execute(
        "SELECT tenant, detail -> 'changed', detail -> 'previous' FROM cogmem.audit_log WHERE event = 'tenants_changed'"
    ).fetchall()
    assert sorted(changed) == sorted((t, {"promote_min_recalls": 5}, {"promote_min_recalls": 3})
                                     for names in arms.values() for t in names)  # fmt: skip
    events = [r[0] for r in db.execute("SELECT event FROM cogmem.audit_log WHERE tenant = '*' ORDER BY audit_id")]
    assert events[-3:] == ["experiments_added", "experiments_changed", "experiment_adopted"]
    assert one(db, "SELECT count(*) FROM cogmem.audit_log WHERE event = 'experiment_tenants_added'") == 8
    state, message, _ = refusal(db, "SELECT cogmem.experiment_adopt('e', 1)")
    assert (state, message) == ("55000", 'experiment "e" adopted arm 2 already')


def test_only_an_existing_arm_is_adopted(db):
    enrol(db, 4)
    state, message, hint = refusal(db, "SELECT cogmem.experiment_adopt('e', 3)")
    assert (state, message, hint) == ("22023", 'experiment "e" has no arm 3', "Its arms are 1 to 2: [2, 5].")
    assert one(db, "SELECT state FROM cogmem.experiment_status('e')") == "running"


def test_application_roles_cannot_experiment_and_administrators_can(db, login):
    tenants(db, "a", "b")
    create(db, "e", "promote_min_recalls", [2, 3])
    for role in ("cogmem_app", "cogmem_auditor", "cogmem_bi"):
        conn = login(role)
        for sql in ("SELECT cogmem.experiment_create('x', 'fusion_k', '[5, 40]')", "SELECT cogmem.experiment_stop('e')",
                    "SELECT cogmem.experiment_adopt('e', 1)", "SELECT * FROM cogmem.experiment_report('e')",
                    "SELECT * FROM cogmem.experiment_status()", "SELECT * FROM cogmem.experiments",
                    "INSERT INTO cogmem.experiments (name, parameter, arms, salt) VALUES ('x', 'fusion_k', '[1,2]', 1)",
                    "SELECT cogmem._tenant_settings('a')"):  # fmt: skip
            state, message, _ = refusal(conn, sql)
            assert state == "42501" and message.startswith("permission denied"), (role, sql)
    admin = login("cogmem_admin")
    assert len(admin.execute("SELECT * FROM cogmem.experiment_create('x', 'fusion_k', '[5, 40]')").fetchall()) == 2
    assert len(admin.execute("SELECT * FROM cogmem.experiment_report('x')").fetchall()) == 2
    admin.execute("SELECT cogmem.experiment_stop('x')")
    assert one(admin, "SELECT actor FROM cogmem.audit_log WHERE event = 'experiments_changed'") == one(
        admin, "SELECT current_user"
    )


def test_the_mixture_test_and_its_interval():
    """The closed forms, against values worked out by hand (tau 0.05, alpha 0.05)."""
    import math

    def log_lambda(theta, v, tau=0.05):
        return 0.5 * math.log(v / (v + tau**2)) + theta**2 * tau**2 / (2 * v * (v + tau**2))

    def halfwidth(v, alpha=0.05, tau=0.05):
        return math.sqrt(v * (v + tau**2) / tau**2 * (math.log((v + tau**2) / v) - 2 * math.log(alpha)))

    # At the interval's edge the statistic is exactly 1/alpha: the interval is the test, inverted.
    v = 0.0004
    assert math.isclose(log_lambda(halfwidth(v), v), math.log(1 / 0.05))
    assert log_lambda(0, v) < 0  # no difference: no evidence


def test_the_sql_forms_match(db):
    rows = db.execute(
        "SELECT cogmem._msprt_log_lambda(0.03, 0.0004, 0.05), cogmem._msprt_halfwidth(0.0004, 0.05, 0.05),"
        " cogmem._msprt_log_lambda(0.1, 0, 0.05), cogmem._msprt_log_lambda(0.1, NULL, 0.05)"
    ).fetchone()
    assert rows[0] == pytest.approx(
        0.5 * __import__("math").log(0.0004 / 0.0029) + 0.0009 * 0.0025 / (2 * 0.0004 * 0.0029)
    )
    assert one(db, "SELECT cogmem._msprt_log_lambda(%s, 0.0004, 0.05)", (rows[1],)) == pytest.approx(
        __import__("math").log(20)
    )
    assert rows[2:] == (None, None)
