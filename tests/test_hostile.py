"""Hostile input over the public API (hypothesis): every call ends in a result or a clear error with a
specific SQLSTATE, a refused call writes nothing, and the audit chain still verifies afterwards."""

import json
import math
import random
import re
import unicodedata

import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.redaction_corpus import FULL_WIDTH, grouped, luhn_card
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
                  (SELECT coalesce(sum(outcome_count), 0) FROM cogmem.memory_overview),
                  (SELECT count(*) FROM cogmem.store_items),
                  (SELECT count(*) FROM cogmem.gut_releases), (SELECT count(*) FROM cogmem.gut_patterns)"""
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


JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    HOSTILE_TEXT.filter(lambda s: s is not None and len(s) < 300),
)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(HOSTILE_TEXT.filter(lambda s: s is not None and len(s) < 50), inner, max_size=4),
    ),
    max_leaves=12,
)


@CHECK
@given(
    tenant=st.one_of(st.just("acme"), HOSTILE_TEXT),
    namespace=TEXT_ARRAY,
    key=HOSTILE_TEXT,
    value=st.one_of(st.none(), JSON_VALUE, st.dictionaries(st.text(max_size=20), JSON_VALUE, max_size=5)),
    text=HOSTILE_TEXT,
    ttl=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
    limit=BUDGET,
)
def test_store(hostile_db, tenant, namespace, key, value, text, ttl, limit):
    """The keyed store (sql/180-store.sql): any path, value, text, time to live or filter."""
    payload = None if value is None else json.dumps(value)
    calls = [
        ("SELECT * FROM cogmem.store_put(%s, %s, %s, %s::jsonb, %s, %s)", (tenant, namespace, key, payload, text, ttl)),
        ("SELECT * FROM cogmem.store_get(%s, %s, %s)", (tenant, namespace, key)),
        ("SELECT * FROM cogmem.store_search(%s, %s, %s, %s::jsonb, %s)", (tenant, namespace, text, payload, limit)),
        ("SELECT * FROM cogmem.store_search('acme', '{}', %s)", (text,)),
        ("SELECT * FROM cogmem.store_namespaces(%s, %s, %s, %s)", (tenant, namespace, namespace, limit)),
        ("SELECT cogmem.store_delete(%s, %s, %s)", (tenant, namespace, key)),
    ]
    for sql, params in calls:
        attempt(hostile_db, sql, params)


@CHECK
@given(value=st.dictionaries(HOSTILE_TEXT.filter(lambda s: s is not None and len(s) < 50), JSON_VALUE, max_size=6))
def test_a_value_reads_back_exactly_as_put_unless_something_was_redacted(hostile_db, value):
    """The store writes a value back as JSON text and parses it once: no escape, order, number or empty
    container may change on the way."""
    payload = json.dumps(value)
    if len(payload) > 1_048_576:
        return
    redactions = one(hostile_db, "SELECT redactions FROM cogmem.store_put('acme', '{x}', 'k', %s::jsonb)", (payload,))
    got = one(hostile_db, "SELECT value FROM cogmem.store_get('acme', '{x}', 'k')")
    if redactions == []:
        assert got == one(hostile_db, "SELECT %s::jsonb", (payload,))


SEPARATORS = ["", " ", "-", ".", "\u00a0", "\u200b", "\u2060"]


def _gut_shaped(draw_release: dict, signature: str) -> dict:
    return {"releases": [draw_release], "patterns": [], "signature": signature}


GUT_STATE = st.one_of(
    JSON_VALUE,
    st.builds(
        _gut_shaped,
        st.fixed_dictionaries(
            {
                "release_id": st.integers(),
                "epsilon": FLOATS.filter(math.isfinite),
                "period_start": HOSTILE_TEXT,
                "released_by": HOSTILE_TEXT,
            }
        ),
        st.text(alphabet="0123456789abcdef", min_size=0, max_size=64),
    ),
)


@CHECK
@given(
    digits=st.integers(min_value=13, max_value=19),
    separator=st.sampled_from(SEPARATORS),
    full_width=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**32),
    where=st.sampled_from(["string", "object key", "number", "label", "item key", "secret-named field"]),
)
def test_a_card_in_any_disguise_anywhere_in_the_store_is_never_kept(
    hostile_db, digits, separator, full_width, seed, where
):
    rng = random.Random(seed)
    number = luhn_card(rng, digits, rng.choice("23456"))
    shown = grouped(number, separator, rng.randrange(3, 7))
    if full_width:
        shown = shown.translate(FULL_WIDTH)
    label = shown.replace(".", "-")  # a label cannot hold a period
    namespace, key, value = ["cards", "x"], "k", {"note": "nothing"}
    if where == "string":
        value = {"note": f"card {shown} end", "list": [f"({shown})"]}
    elif where == "object key":
        value = {f"card {shown}": True}
    elif where == "number":
        value = {"card": int(number)}
    elif where == "label":
        namespace = ["cards", f"card {label}"]
    elif where == "item key":
        key = f"card {shown}"
    else:
        value = {"card_pwd": number}
    hostile_db.execute(
        "SELECT * FROM cogmem.store_put('acme', %s, %s, %s::jsonb, %s)", (namespace, key, json.dumps(value), shown)
    )
    kept = one(
        hostile_db,
        "SELECT string_agg(x, ' ') FROM (SELECT i.namespace::text || i.key || i.value::text"
        " FROM cogmem.store_items AS i UNION ALL"
        " SELECT m.content || m.source::text FROM cogmem.memories AS m) AS d (x)",
    )
    assert number not in re.sub(r"\D", "", unicodedata.normalize("NFKC", kept))
    hostile_db.execute("SELECT cogmem.store_delete('acme', %s, %s)", (namespace, key))


@CHECK
@given(
    state=GUT_STATE,
    epsilon=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e-300, 1e300])),
    keyed=st.booleans(),
)
def test_gut_import_and_release_take_nothing_they_did_not_draw(hostile_db, state, epsilon, keyed):
    """Issue 37: whatever the Gut's role sends, a release or gathered rows are imported only when a node
    of the cluster signed them, and an epsilon is drawn only within its range: otherwise a clear error."""
    from psycopg.types.json import Jsonb

    hostile_db.execute("DELETE FROM cogmem.gut_shard_key")
    if keyed:
        hostile_db.execute("INSERT INTO cogmem.gut_shard_key (shard_key) VALUES (%s)", (bytes(32),))
    assert not attempt(hostile_db, "SELECT cogmem.gut_import(%s)", (Jsonb(state),))
    assert not attempt(hostile_db, "SELECT * FROM cogmem.gut_release(1.0, gathered => %s)", (Jsonb([state]),))
    attempt(hostile_db, "SELECT * FROM cogmem.gut_release(%s::double precision)", (epsilon,))


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


def bios_state(db):
    return db.execute(
        "SELECT (SELECT count(*) FROM cogmem.bios_rules), (SELECT count(*) FROM cogmem.bios_rule_events),"
        " (SELECT count(*) FROM cogmem.bios_preset_loads)"
    ).fetchone()


RULE = {"category": "server", "rule": "Run a configuration test before any restart.", "requirement": "OPS-1"}


@pytest.mark.parametrize(
    ("rules", "version", "preset", "title", "sqlstate", "message"),
    [
        ([{**RULE, "rule": 123}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule text must be a string, got number 123'),
        ([{**RULE, "topics": [1, 2]}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule topics[1] must be a string, got number 1'),
        ([{**RULE, "topics": ["server", None]}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule topics[2] must not be NULL or empty'),
        ([{**RULE, "topics": ["server", "a b"]}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule topics[2] "a b" is not a name of lower-case letters, digits, ".", "_" '
         'and "-"'),
        ([{**RULE, "topics": [f"t{i}" for i in range(33)]}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule has 33 topics, the limit is 32'),
        ([{**RULE, "topics": "server"}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule topics must be an array of topic names, got string'),
        ([{**RULE, "always_on": "yes"}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule always_on must be true or false, got string "yes"'),
        ([{**RULE, "always_on": 1}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule always_on must be true or false, got number 1'),
        ([{**RULE, "rule": "x" * 200_000}], "1", "own", "Own", "22001",
         'rule 1 of preset "own": BIOS rule text has 200000 characters, the limit is 1200'),
        ([{**RULE, "translations": {"turkish": "y" * 1201}}], "1", "own", "Own", "22001",
         'rule 1 of preset "own": BIOS rule translations.turkish has 1201 characters, the limit is 1200'),
        ([{**RULE, "rationale": "z" * 501}], "1", "own", "Own", "22001",
         'rule 1 of preset "own": BIOS rule rationale has 501 characters, the limit is 500'),
        ([{**RULE, "requirement": "OPS-1\nOPS-2"}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule requirement holds control character U+000A'),
        ([{**RULE, "rule": "Restart\u0007 now"}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule text holds control character U+0007'),
        ([{**RULE, "rule": "Restart\u009b now"}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule text holds control character U+009B'),
        ([{**RULE, "translations": {"turkish": "bir\u001bkural"}}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule translations.turkish holds control character U+001B'),
        ([{**RULE, "category": "Access Control"}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule category "access control" is not a name of lower-case letters, digits, '
         '".", "_" and "-"'),
        ([{**RULE, "category": "c" * 65}], "1", "own", "Own", "22001",
         'rule 1 of preset "own": BIOS rule category has 65 characters, the limit is 64'),
        ([{**RULE, "severity": ["must"]}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule severity must be a string, got array ["must"]'),
        ([{**RULE, "colour": "red"}], "1", "own", "Own", "22023",
         'rule 1 of preset "own": BIOS rule has unknown keys colour'),
        (["abc"], "1", "own", "Own", "22023", 'rule 1 of preset "own": a BIOS rule must be an object, got string'),
        ([RULE] * 1001, "1", "own", "Own", "22023", 'preset "own" brings 1001 rules, the limit is 1000'),
        ([RULE], "[1, 2]", "own", "Own", "22023", 'preset "own" version "[1, 2]" is not dotted numbers or a date'),
        ([RULE], "2026-13-01", "own", "Own", "22023",
         'preset "own" version "2026-13-01" is not dotted numbers or a date'),
        ([RULE], "1.2.3.4.5", "own", "Own", "22023",
         'preset "own" version "1.2.3.4.5" is not dotted numbers or a date'),
        ([RULE], "1", "own\u0007", "Own", "22023", "preset name holds control character U+0007"),
        ([RULE], "1", "Own Preset", "Own", "22023",
         'preset name "Own Preset" is not a name of lower-case letters, digits, ".", "_" and "-"'),
        ([RULE], "1", "o" * 65, "Own", "22001", "preset name has 65 characters, the limit is 64"),
        ([RULE], "1", "own", "T" * 201, "22001", "preset title has 201 characters, the limit is 200"),
        ([RULE], "1", "own", "Own\r\nInjected", "22023", "preset title holds control character U+000D"),
    ],
)  # fmt: skip
def test_a_preset_passed_as_json_is_checked_field_by_field_and_writes_nothing(
    db, rules, version, preset, title, sqlstate, message
):
    """What cogmem_pg.bios refuses in a file, load_bios_preset refuses from a caller who passes JSON
    directly: specific SQLSTATE, the place and the field, a HINT, nothing written."""
    import json

    before = bios_state(db)
    with pytest.raises(psycopg.Error) as err:
        db.execute(
            "SELECT * FROM cogmem.load_bios_preset(%s, %s, %s, 'x', %s::jsonb)",
            (preset, version, title, json.dumps(rules)),
        )
    assert (err.value.sqlstate, err.value.diag.message_primary) == (sqlstate, message)
    assert err.value.diag.message_hint
    assert bios_state(db) == before


@pytest.mark.parametrize(
    ("args", "sqlstate", "message"),
    [
        ({"rule": "x" * 1201}, "22001", "BIOS rule text has 1201 characters, the limit is 1200"),
        ({"preset": "My Preset"}, "22023",
         'preset name "My Preset" is not a name of lower-case letters, digits, ".", "_" and "-"'),
        ({"topics": ["server", None]}, "22023", "BIOS rule topics[2] must not be NULL or empty"),
        ({"requirement": "R" * 201}, "22001", "BIOS rule requirement has 201 characters, the limit is 200"),
        ({"translations": {"turkish": "y" * 1201}}, "22001",
         "BIOS rule translations.turkish has 1201 characters, the limit is 1200"),
        ({"rationale": "why\u0085"}, "22023", "BIOS rule rationale holds control character U+0085"),
    ],
)  # fmt: skip
def test_add_bios_rule_checks_the_same_schema(db, args, sqlstate, message):
    import json

    from tests.conftest import named

    params = {"rule": "Run a configuration test before any restart.", **args}
    if "translations" in params:
        params["translations"] = json.dumps(params["translations"])
    before = bios_state(db)
    with pytest.raises(psycopg.Error) as err:
        db.execute(
            f"SELECT cogmem.add_bios_rule('server'{named(params)})".replace(
                "translations => %(translations)s", "translations => %(translations)s::jsonb"
            ),
            params,
        )
    assert (err.value.sqlstate, err.value.diag.message_primary) == (sqlstate, message)
    assert err.value.diag.message_hint
    assert bios_state(db) == before


def test_a_version_that_is_not_a_version_retires_nothing(db):
    """A version compared as arbitrary text ("[2, 1]") once counted as newer and retired rules."""
    import json

    rules = [RULE, {**RULE, "rule": "Keep a rollback plan for every change.", "requirement": "OPS-2"}]
    db.execute("SELECT * FROM cogmem.load_bios_preset('own', '2.0', 'Own', 'a', %s::jsonb)", (json.dumps(rules),))
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        db.execute(
            "SELECT * FROM cogmem.load_bios_preset('own', '[2, 1]', 'Own', 'b', %s::jsonb)", (json.dumps(rules[:1]),)
        )
    assert one(db, "SELECT count(*) FROM cogmem.active_bios_rules WHERE preset = 'own'") == 2


def test_the_longest_rule_takes_at_most_the_bios_allocation(db, tenant):
    """A rule is at most 1200 characters, so one rule injects at most 300 tokens: the bios layer's share of
    the default budget. The 3,200-token recall of issue 37 injected 50,004 BIOS tokens from one rule."""
    db.execute("SELECT cogmem.add_bios_rule('server', %s, always_on => true)", ("r" * 1200,))
    rows = db.execute("SELECT layer, tokens FROM cogmem.recall(%s, 'hello', budget => 3200)", (tenant,)).fetchall()
    allocation = one(
        db, "SELECT token_allocation FROM cogmem.tenant_layers WHERE tenant = %s AND layer = 'bios'", (tenant,)
    )
    assert rows == [("bios", 300)] and allocation == 300
    with pytest.raises(psycopg.errors.StringDataRightTruncation):
        db.execute("SELECT cogmem.add_bios_rule('server', %s, always_on => true)", ("r" * 1201,))


JSON_VALUE = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=30),
        st.sampled_from(["server", "must", "turkish", "x" * 1300, "2.0", "yes"]),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)
RULE_KEYS = ["requirement", "category", "severity", "topics", "always_on", "rationale", "rule", "translations", "x"]


@CHECK
@given(
    rules=st.one_of(
        JSON_VALUE, st.lists(st.dictionaries(st.sampled_from(RULE_KEYS), JSON_VALUE, max_size=6), max_size=3)
    ),
    version=HOSTILE_TEXT,
    preset=HOSTILE_TEXT,
    title=HOSTILE_TEXT,
)
def test_load_bios_preset(hostile_db, rules, version, preset, title):
    """Whatever a caller passes as a preset: a load or a clear refusal that writes nothing."""
    from psycopg.types.json import Jsonb

    before = bios_state(hostile_db)
    try:
        hostile_db.execute(
            "SELECT * FROM cogmem.load_bios_preset(%s, %s, %s, 'x', %s)", (preset, version, title, Jsonb(rules))
        ).fetchall()
    except psycopg.Error as exc:
        assert exc.sqlstate in CLEAR or exc.sqlstate[:2] in CLEAR, (exc.sqlstate, str(exc)[:300])
        assert exc.diag.message_primary
        assert bios_state(hostile_db) == before


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
