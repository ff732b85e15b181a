"""sql/006-decay.sql: a memory's Ebbinghaus strength from its age and its ring's half-life."""

import pytest

from tests.conftest import one


@pytest.mark.parametrize(
    ("age", "half_life", "strength"),
    [
        ("0", "7 days", 1.0),
        ("7 days", "7 days", 0.5),
        ("14 days", "7 days", 0.25),
        ("21 days", "7 days", 0.125),
        ("-3 days", "7 days", 1.0),  # a clock that runs behind never makes a memory stronger than new
        ("3650 days", None, 1.0),  # rings that never decay
    ],
)
def test_strength_halves_with_each_half_life(db, age, half_life, strength):
    value = one(db, "SELECT cogmem.strength(%s::interval, %s::interval)", (age, half_life))
    assert value == pytest.approx(strength, rel=1e-12)


def test_strength_is_inlined_into_the_queries_that_rank_by_it(db):
    """No SET clause and IMMUTABLE SQL: PostgreSQL inlines it per row instead of calling a function."""
    plan = "\n".join(
        r[0]
        for r in db.execute(
            "EXPLAIN (VERBOSE) SELECT cogmem.strength(g * interval '1 day', interval '7 days')"
            " FROM generate_series(1, 3) AS g"
        )
    )
    assert "strength" not in plan and "exp(" in plan
