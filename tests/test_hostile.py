"""Hostile input over the public API (hypothesis): every call ends in a result or a clear error with a
specific SQLSTATE, a refused call writes nothing, and the audit chain still verifies afterwards."""

import math

import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import one

# Specific, documented outcomes. Never XX000 (internal error), P0001 (an error without a code) or
# 42883/42P18 (the call itself was ill-typed: a test bug, not an answer).
CLEAR = {"22", "23", "42704", "42501", "P0002", "02000", "55000", "54000"}

HOSTILE_TEXT = st.one_of(
    st.none(),
    st.just(""),
    st.just("   "),
    # (NUL is refused by the driver before it reaches the server: PostgreSQL text cannot hold it; lone
    # surrogates are not Unicode text, and the driver cannot encode them as UTF-8 to send.)
    st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]), max_size=200),
    st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=31), max_size=50),  # control characters
    st.sampled_from(
        [
            "'; DROP TABLE cogmem.memories; --",
            "acme' OR '1'='1",
            "$$ SELECT 1 $$",
            "%s %(x)s {0} \\\\x00",
            "Robert'); DELETE FROM cogmem.audit_log;--",
            "x" * 1_000_000,  # 1 MB
            "ğüşıöç İSTANBUL ß ﬁ 😀",
            "acme",
        ]
    ),
)
TEXT_ARRAY = st.one_of(
    st.none(), st.just([]), st.lists(HOSTILE_TEXT.filter(lambda s: s is None or len(s) < 300), max_size=4)
)
FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=32)
VECTOR = st.one_of(
    st.none(),
    st.lists(FLOATS, min_size=0, max_size=5),  # wrong dimensions
    st.lists(st.sampled_from([0.1, math.nan, math.inf, -math.inf, 1e38]), min_size=384, max_size=384),
    st.just([0.0] * 384),  # a zero vector has no direction
)
# Drivers send what fits: int2, int4, or int8 past 2^31 (and numeric past 2^63, which no API takes).
BUDGET = st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.sampled_from([2**31, 2**40]))

CHECK = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def vec(v):
    return None if v is None else "[" + ",".join(repr(float(x)).replace("inf", "Infinity") for x in v) + "]"


def state(db):
    return db.execute(
        """SELECT (SELECT count(*) FROM cogmem.memories), (SELECT count(*) FROM cogmem.memory_stats),
                  (SELECT count(*) FROM cogmem.recalls), (SELECT count(*) FROM cogmem.vault_items),
                  (SELECT count(*) FROM cogmem.sensory_turns), (SELECT count(*) FROM cogmem.tenants),
                  (SELECT coalesce(sum(outcome_count), 0) FROM cogmem.memory_overview)"""
    ).fetchone()


def attempt(db, sql, params):
    """Runs one call; a refusal must be clear and must leave everything as it was."""
    before = state(db)
    try:
        db.execute(sql, params).fetchall()
    except psycopg.Error as exc:
        assert exc.sqlstate is not None
        assert exc.sqlstate in CLEAR or exc.sqlstate[:2] in CLEAR, (exc.sqlstate, str(exc)[:300], sql)
        assert exc.diag.message_primary, sql
        assert state(db) == before, f"a refused call wrote something: {sql}"
        return False
    return True


@pytest.fixture
def hostile_db(db, tenant):
    db.execute("SELECT cogmem.add_bios_rule('server', 'Run a configuration test before any restart.')")
    db.execute("SELECT cogmem.remember(%s, 'The staging server runs nginx')", (tenant,))
    yield db
    db.execute("SELECT cogmem.seal_audit()")
    assert {r[0] for r in db.execute("SELECT ok FROM cogmem.verify_audit()")} <= {True}


@CHECK
@given(
    tenant=HOSTILE_TEXT,
    content=HOSTILE_TEXT,
    ring=HOSTILE_TEXT,
    topics=TEXT_ARRAY,
    embedding=VECTOR,
    source=st.sampled_from([None, "{}", "[]", '"x"', '{"who": "ayse"}', "null"]),
)
def test_remember(hostile_db, tenant, content, ring, topics, embedding, source):
    attempt(
        hostile_db,
        "SELECT * FROM cogmem.remember(%s, %s, %s, %s, %s::vector, %s::jsonb)",
        (tenant, content, ring, topics, vec(embedding), source),
    )


@CHECK
@given(
    tenant=HOSTILE_TEXT,
    message=HOSTILE_TEXT,
    embedding=VECTOR,
    topics=TEXT_ARRAY,
    budget=BUDGET,
    conversation=HOSTILE_TEXT,
)
def test_recall(hostile_db, tenant, message, embedding, topics, budget, conversation):
    attempt(
        hostile_db,
        "SELECT * FROM cogmem.recall(%s, %s, %s::vector, %s, %s, %s)",
        (tenant, message, vec(embedding), topics, budget, conversation),
    )


@CHECK
@given(
    outcome=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
    again=st.booleans(),
    known=st.booleans(),
)
def test_feedback(hostile_db, outcome, again, known):
    recall_id = one(hostile_db, "SELECT recall_id FROM cogmem.recall('acme', 'staging server') LIMIT 1")
    target = recall_id if known else "00000000-0000-0000-0000-000000000000"
    attempt(hostile_db, "SELECT cogmem.feedback(%s::uuid, %s::double precision)", (target, outcome))
    if again:  # duplicate feedback replaces: the outcome count moves by at most one per cycle
        before = one(hostile_db, "SELECT sum(outcome_count) FROM cogmem.memory_overview")
        attempt(hostile_db, "SELECT cogmem.feedback(%s::uuid, %s::double precision)", (target, 0.5))
        assert one(hostile_db, "SELECT sum(outcome_count) FROM cogmem.memory_overview") <= before + 2


@CHECK
@given(a=HOSTILE_TEXT, b=HOSTILE_TEXT, c=HOSTILE_TEXT, d=HOSTILE_TEXT, embedding=VECTOR)
def test_observe_vault_erasure_and_helpers(hostile_db, a, b, c, d, embedding):
    calls = [
        ("SELECT * FROM cogmem.observe(%s, %s, %s, %s, %s::vector)", (a, b, c, d, vec(embedding))),
        ("SELECT cogmem.vault_put(%s, %s, %s, %s)", (a, b, c, d)),
        ("SELECT cogmem.vault_get(%s, %s)", (a, b)),
        ("SELECT * FROM cogmem.erase_subject(%s, %s, %s)", (a, b, c)),
        ("SELECT cogmem.erase(%s, 1, %s)", (a, b)),
        ("SELECT cogmem.detect_topics(%s, %s)", (a, b)),
        ("SELECT cogmem.route(%s)", (a,)),
        ("SELECT * FROM cogmem.redact(%s)", (a,)),
        ("SELECT cogmem.create_tenant(%s, %s)", (a, b)),
        ("SELECT cogmem.add_bios_rule(%s, %s, %s)", (a, b, c)),
        ("SELECT cogmem.grant_tenant(%s, %s)", (a, b)),
        ("SELECT * FROM cogmem.siblings(%s, 1)", (a,)),
        ("SELECT * FROM cogmem.verify_audit(%s)", (a,)),
        ("SELECT * FROM cogmem.consolidate(now(), %s)", (a,)),
        ("SELECT cogmem.set_topic(%s, %s, ARRAY[%s, %s])", (a, b, c, d)),
        ("SELECT cogmem.retire_bios_rule(1, %s)", (a,)),
        ("SELECT * FROM cogmem.vault_list(%s)", (a,)),
        ("SELECT cogmem.vault_delete(%s, %s)", (a, b)),
        ("SELECT cogmem.attention(%s, %s)", (a, b)),
        ("SELECT cogmem.revoke_tenant(%s, %s)", (a, b)),
        ("SELECT cogmem.audit_mark_exported(%s, %s)", (a, b)),
    ]
    for sql, params in calls:
        attempt(hostile_db, sql, params)


@CHECK
@given(a=HOSTILE_TEXT, b=HOSTILE_TEXT, c=HOSTILE_TEXT, lists=TEXT_ARRAY, embedding=VECTOR, budget=BUDGET)
def test_metacognition_episodes_and_identity(hostile_db, a, b, c, lists, embedding, budget):
    calls = [
        ("SELECT * FROM cogmem.guard_check(%s, %s, %s, %s::vector)", (a, b, c, vec(embedding))),
        ("SELECT * FROM cogmem.guard_check('acme', %s, %s, %s::vector)", (b, c, vec(embedding))),
        ("SELECT * FROM cogmem.report_error(%s, %s, %s, %s)", (a, b, c, a)),
        ("SELECT * FROM cogmem.report_error('acme', %s, %s, embedding => %s::vector)", (b, c, vec(embedding))),
        ("SELECT * FROM cogmem.acknowledge(%s, 1, %s)", (a, b)),
        ("SELECT cogmem.trust_event(%s, %s, %s)", (a, b, c)),
        ("SELECT cogmem.trust_event('acme', %s, %s)", (b, c)),
        ("SELECT cogmem.polarity(%s)", (a,)),
        ("SELECT cogmem.contradicts(%s, %s)", (a, b)),
        ("SELECT * FROM cogmem.open_conflicts(%s)", (a,)),
        ("SELECT * FROM cogmem.resolve_conflict(1, %s, %s)", (a, b)),
        ("SELECT * FROM cogmem.remember('acme', %s, contradicts => %s::bigint[])", (a, [1, 2])),
        ("SELECT cogmem.start_session(%s, %s, %s)", (a, b, c)),
        (
            "SELECT * FROM cogmem.end_session(cogmem.start_session('acme'), %s, %s, %s, %s, %s, %s, %s)",
            (a, lists, lists, lists, lists, lists, b),
        ),
        ("SELECT * FROM cogmem.briefing(%s, %s, %s)", (a, b, budget)),
        ("SELECT cogmem.briefing_text('acme', %s, %s)", (b, budget)),
        ("SELECT * FROM cogmem.analyze(%s, %s)", (a, b)),
        ("SELECT * FROM cogmem.analyze('acme', %s)", (b,)),
        ("SELECT cogmem.set_core_identity(%s, %s, %s, %s)", (a, b, c, lists)),
        ("SELECT cogmem.set_core_identity('acme', %s, %s, %s)", (b, c, lists)),
        ("SELECT * FROM cogmem.core_identity(%s)", (a,)),
    ]
    for sql, params in calls:
        attempt(hostile_db, sql, params)


@pytest.mark.parametrize("magnitude", [0.0, 1e-30, 1e30], ids=["zero", "tiny", "huge"])
def test_a_vector_without_direction_is_refused_everywhere(db, tenant, magnitude):
    """Its cosine to anything is NaN, which PostgreSQL orders above every threshold: refused at every
    entry with 22023, and nothing is written."""
    vector = np.full(384, magnitude, dtype=np.float32)
    calls = [
        ("SELECT * FROM cogmem.remember(%s, 'the zero vector fact', embedding => %s)", (tenant, vector)),
        ("SELECT * FROM cogmem.remember_many(%s, '[\"the zero vector fact\"]', ARRAY[%s])", (tenant, vector)),
        ("SELECT * FROM cogmem.recall(%s, 'anything', %s)", (tenant, vector)),
        ("SELECT * FROM cogmem.guard_check(%s, 'server', 'restart it', %s)", (tenant, vector)),
        ("SELECT * FROM cogmem.report_error(%s, 'server', 'restarted it', embedding => %s)", (tenant, vector)),
        ("SELECT * FROM cogmem.related(%s, 'anything', %s)", (tenant, vector)),
        ("SELECT * FROM cogmem.observe(%s, 'c', 'user', 'I prefer tea', %s)", (tenant, vector)),
        ("SELECT * FROM cogmem.classify('anything', %s)", (vector,)),
    ]
    before = state(db)
    for sql, params in calls:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
            db.execute(sql, params)
        assert "cannot be compared" in err.value.diag.message_primary, sql
    assert state(db) == before


@pytest.mark.parametrize(
    ("args", "sqlstate", "message"),
    [
        ({"topics": [f"t{n}" for n in range(33)]}, "22023", '33 topics, the limit for tenant "acme" is 32'),
        ({"topics": ["x" * 101]}, "22001", 'a topic has 101 characters, the limit for tenant "acme" is 100'),
        ({"source": {"blob": "x" * 20000}}, "22001", 'source has 20012 bytes, the limit for tenant "acme" is 16384'),
    ],
)
def test_topics_and_sources_have_limits(db, tenant, args, sqlstate, message):
    import json

    before = state(db)
    params = {"t": tenant, "topics": args.get("topics"), "source": json.dumps(args.get("source", {}))}
    with pytest.raises(psycopg.Error) as err:
        db.execute("SELECT * FROM cogmem.remember(%(t)s, 'a fact', topics => %(topics)s, source => %(source)s)", params)
    assert (err.value.sqlstate, err.value.diag.message_primary) == (sqlstate, message)
    item = {"content": "a fact", **args}
    with pytest.raises(psycopg.Error) as err:
        db.execute("SELECT * FROM cogmem.remember_many(%s, %s)", (tenant, json.dumps([item])))
    assert err.value.sqlstate in ("22001", "22023") and err.value.diag.message_primary.startswith("item 1 has ")
    assert state(db) == before
    db.execute('SELECT cogmem.configure_tenant(%s, \'{"max_topics": 40, "max_source_bytes": 30000}\')', (tenant,))
    if "source" in args or len(args.get("topics", [])) == 33:
        db.execute("SELECT * FROM cogmem.remember(%(t)s, 'a fact', topics => %(topics)s, source => %(source)s)", params)


def test_tenant_names_are_one_spelling_without_control_characters(db):
    composed, decomposed = "\u00e9cole", "e\u0301cole"
    db.execute("SELECT cogmem.create_tenant(%s)", (composed,))
    db.execute("SELECT cogmem.create_tenant(%s)", (decomposed,))  # the same tenant: idempotent
    assert [r[0] for r in db.execute("SELECT tenant FROM cogmem.tenants")] == [composed]
    with pytest.raises(psycopg.errors.UndefinedObject) as err:
        db.execute("SELECT * FROM cogmem.recall(%s, 'x')", (decomposed,))
    assert "NFC" in err.value.diag.message_hint
    for name in ("tab\there", "new\nline", "nul\x07bell"):
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            db.execute("SELECT cogmem.create_tenant(%s)", (name,))


@pytest.mark.parametrize(
    ("sql", "value", "sqlstate", "message"),
    [
        ("SELECT * FROM cogmem.related('acme', 'nginx', NULL, %s)", 2**40, "22023",
         "limit must be between 1 and 100, got 1099511627776"),
        ("SELECT * FROM cogmem.briefing('acme', NULL, %s)", -(2**40), "22023",
         "budget must be a positive number of tokens, got -1099511627776"),
        ("SELECT cogmem.briefing_text('acme', NULL, %s)", -(2**40), "22023",
         "budget must be a positive number of tokens, got -1099511627776"),
        ("SELECT cogmem.seal_audit(%s)", 2**40, "22023",
         "max_rows must be between 1 and 1000000000, got 1099511627776"),
        ("SELECT cogmem.seal_audit(%s)", 2**63 - 1, "22023",
         "max_rows must be between 1 and 1000000000, got 9223372036854775807"),
    ],
)  # fmt: skip
def test_a_number_a_driver_sends_as_bigint_gets_a_range_error(db, tenant, sql, value, sqlstate, message):
    """Past 2^31 drivers send bigint, which PostgreSQL does not narrow to integer when it picks a function:
    the API takes bigint and answers with its range (before: 42883, function does not exist)."""
    with pytest.raises(psycopg.Error) as err:
        db.execute(sql, (value,))
    assert (err.value.sqlstate, err.value.diag.message_primary) == (sqlstate, message)
    assert err.value.diag.message_hint


def test_a_large_briefing_budget_is_a_budget(db, tenant):
    db.execute("SELECT cogmem.set_core_identity(%s, 'Ops assistant')", (tenant,))
    assert [r[0] for r in db.execute("SELECT section FROM cogmem.briefing(%s, NULL, %s)", (tenant, 2**40))] == ["core"]
