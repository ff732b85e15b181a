"""sql/021-experiment-arms.sql: which value of a setting a tenant, or a session of it, sees in an experiment."""

from datetime import timedelta

from psycopg.types.json import Jsonb

from tests.conftest import blend, one, unit_vector
from tests.test_consolidation import night, recall_with_outcome, remember


def tenants(db, *names: str) -> list[str]:
    for name in names:
        db.execute("SELECT cogmem.create_tenant(%s)", (name,))
    return list(names)


def create(db, name, parameter, arms, **options) -> dict[str, int]:
    """Starts an experiment; each tenant's arm."""
    args = "".join(f", {k} => %({k})s" for k in options)
    rows = db.execute(
        f"SELECT tenant, arm FROM cogmem.experiment_create(%(name)s, %(parameter)s, %(arms)s{args})",
        {"name": name, "parameter": parameter, "arms": Jsonb(arms), **options},
    ).fetchall()
    return dict(rows)


def setting(db, tenant, column, session=None):
    return one(db, f"SELECT (cogmem._tenant_settings(%s, %s)).{column}", (tenant, session))


def test_tenants_are_dealt_to_the_arms_at_random_stably_and_evenly(db):
    names = tenants(db, *(f"t{n:02}" for n in range(21)))
    db.execute("SELECT setseed(0.25)")
    arms = create(db, "thresholds", "promote_min_recalls", [2, 3, 5], tenants=names)
    assert sorted(arms) == names
    assert sorted(list(arms.values()).count(a) for a in (1, 2, 3)) == [7, 7, 7]
    # Each sees its arm's value, call after call; the table's own row is unchanged.
    assert {t: setting(db, t, "promote_min_recalls") for t in names} == {t: [2, 3, 5][a - 1] for t, a in arms.items()}
    assert {t: setting(db, t, "promote_min_recalls") for t in names} == {t: [2, 3, 5][a - 1] for t, a in arms.items()}
    assert one(db, "SELECT array_agg(DISTINCT promote_min_recalls) FROM cogmem.tenants") == [3]
    # Another experiment draws another salt, and another deal: not the alphabetical order, not the last one.
    db.execute("SELECT cogmem.experiment_stop('thresholds')")
    again = create(db, "thresholds-2", "promote_min_recalls", [2, 3, 5], tenants=names)
    assert again != arms and list(again.values()) != [1, 2, 3] * 7


def test_a_session_hashes_to_its_arm_stably_and_about_evenly(db):
    counts = dict(
        db.execute(
            "SELECT cogmem._experiment_arm(42, 'session-' || n, 2), count(*) FROM generate_series(1, 4000) AS n"
            " GROUP BY 1"
        ).fetchall()
    )
    assert set(counts) == {1, 2} and all(1900 <= c <= 2100 for c in counts.values())  # 5 standard deviations
    same = "SELECT cogmem._experiment_arm(42, 's', 3) = cogmem._experiment_arm(42, 's', 3)"
    assert one(db, same) is True
    salts = {one(db, "SELECT cogmem._experiment_arm(%s, 'a session', 2)", (salt,)) for salt in range(20)}
    assert salts == {1, 2}  # the salt decides, not the name alone


def test_outsiders_see_their_own_settings_exactly(db):
    tenants(db, "in1", "in2", "outside")
    plain = "SELECT to_jsonb(x) FROM cogmem.tenants AS x WHERE tenant = 'outside'"
    assert one(db, "SELECT to_jsonb(cogmem._tenant_settings('outside'))") == one(db, plain)
    create(db, "radius", "duplicate_similarity", [0.5, 0.99], tenants=["in1", "in2"])
    create(db, "fusion", "fusion_k", [5, 40], unit="session", tenants=["in1"])
    assert one(db, "SELECT to_jsonb(cogmem._tenant_settings('outside'))") == one(db, plain)
    assert one(db, "SELECT to_jsonb(cogmem._tenant_settings('outside', 'any session'))") == one(db, plain)


def test_a_session_holds_its_own_arm_only_in_recall(db):
    tenants(db, "acme")
    create(db, "fusion", "fusion_k", [5, 40], unit="session", tenants=["acme"])
    salt = one(db, "SELECT salt FROM cogmem.experiments WHERE name = 'fusion'")
    # Twenty sessions: with six, the random salt put all in one arm 3% of the time.
    arm = {s: one(db, "SELECT cogmem._experiment_arm(%s, %s, 2)", (salt, s)) for s in (f"s{n}" for n in range(1, 21))}
    assert set(arm.values()) == {1, 2}
    assert {s: setting(db, "acme", "fusion_k", s) for s in arm} == {s: [5, 40][a - 1] for s, a in arm.items()}
    assert setting(db, "acme", "fusion_k") == 10  # without a session (the night, the store): its own value
    db.execute("SELECT cogmem.experiment_stop('fusion')")
    assert {setting(db, "acme", "fusion_k", s) for s in arm} == {10}


def test_the_night_promotes_by_the_arms_threshold(db):
    """promote_min_recalls of 1 in one arm, 5 in the other: a memory recalled once with success is promoted
    by the first tenant's night only; the outsider keeps its own 3."""
    names = tenants(db, "eager", "strict", "outside")
    arms = create(db, "promote", "promote_min_recalls", [1, 5], tenants=["eager", "strict"])
    eager = next(t for t in arms if arms[t] == 1)
    start = one(db, "SELECT now()")
    facts = {t: remember(db, t, "Invoices are sent on the first working day", topics=["billing"]) for t in names}
    for t in names:
        recall_with_outcome(db, t, "when are invoices sent", ["billing"], 1.0)
    for t in names:
        night(db, start, 1, t)
    rings = {t: one(db, "SELECT ring::text FROM cogmem.memories WHERE memory_id = %s", (facts[t],)) for t in names}
    assert rings == {t: "long_term" if t == eager else "fresh" for t in names}


def remember_with(db, tenant, content, embedding) -> str:
    return one(db, "SELECT action FROM cogmem.remember(%s, %s, embedding => %s::vector)", (tenant, content, embedding))


def test_remember_rehearses_by_the_arms_duplicate_radius(db):
    tenants(db, "wide", "narrow")
    arms = create(db, "radius", "duplicate_similarity", [0.5, 0.99], tenants=["wide", "narrow"])
    base, other = unit_vector(1), unit_vector(2)
    near = blend(base, other, 0.3)  # about 0.9 alike: a duplicate within 0.5, not within 0.99
    actions = {}
    for t in arms:
        remember_with(db, t, "Restart nginx only after a config test", base)
        actions[t] = remember_with(db, t, "Only restart nginx once the config test passed", near)
    assert {arms[t]: a for t, a in actions.items()} == {1: "duplicate", 2: "created"}


def test_recall_reads_the_sessions_arm(db):
    """recall_min_strength 0.9 hides a week-old fresh memory (half strength) in one session, 0.05 shows it."""
    tenants(db, "acme")
    fact = remember(db, "acme", "The staging database listens on port 5433", ring="fresh")
    db.execute(
        "UPDATE cogmem.memories SET created_at = created_at - %s WHERE memory_id = %s", (timedelta(days=7), fact)
    )
    create(db, "strength", "recall_min_strength", [0.9, 0.05], unit="session", tenants=["acme"])
    salt = one(db, "SELECT salt FROM cogmem.experiments WHERE name = 'strength'")
    sessions = {one(db, "SELECT cogmem._experiment_arm(%s, %s, 2)", (salt, f"c{n}")): f"c{n}" for n in range(20)}
    found = {
        arm: fact
        in [
            r[0]
            for r in db.execute(
                "SELECT memory_id FROM cogmem.recall('acme', 'staging database port', conversation => %s)", (session,)
            )
        ]
        for arm, session in sorted(sessions.items())  # arm 1 first: a recall rehearses what it injects
    }
    assert found == {1: False, 2: True}


def test_a_stopped_experiment_leaves_every_tenant_its_own_settings(db):
    names = tenants(db, "a", "b")
    create(db, "forget", "forget_after", ["7 days", "60 days"], tenants=names)
    assert {setting(db, t, "forget_after") for t in names} == {timedelta(days=7), timedelta(days=60)}
    db.execute("SELECT cogmem.experiment_stop('forget')")
    assert {setting(db, t, "forget_after") for t in names} == {timedelta(days=30)}


def test_an_unlisted_setting_in_the_table_is_not_laid_over(db):
    """Even written around the API, an experiment on a never-cut setting changes nothing."""
    tenants(db, "acme")
    db.execute(
        "INSERT INTO cogmem.experiments (name, parameter, arms, salt) VALUES ('x', 'turn_never_cut_probability', "
        "'[0.1, 0.2]', 1)"
    )
    db.execute("INSERT INTO cogmem.experiment_tenants (tenant, experiment, arm) VALUES ('acme', 'x', 1)")
    assert abs(setting(db, "acme", "turn_never_cut_probability") - 0.99) < 1e-6
