"""sql/000-helpers.sql: input checks and small pure helpers."""

import psycopg
import pytest

from tests.conftest import one


def test_embedding_dimensions_come_from_the_column(db):
    assert one(db, "SELECT cogmem.embedding_dimensions()") == 384


def test_wrong_embedding_dimension_is_refused_with_hint(db):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        db.execute("SELECT cogmem._check_embedding('[1,2,3]'::vector)")
    assert err.value.diag.message_primary == "embedding has 3 dimensions, expected 384"
    assert err.value.diag.message_hint.startswith("Embed with the model this schema was installed for")


def test_normalize_topics(db):
    assert one(db, "SELECT cogmem._normalize_topics(ARRAY[' Server', 'dns', '', NULL, 'server'])") == ["dns", "server"]
    assert one(db, "SELECT cogmem._normalize_topics(NULL)") is None
    assert one(db, "SELECT cogmem._normalize_topics('{}')") == []


def test_details_are_what_tells_siblings_apart(db):
    assert one(db, "SELECT cogmem._details('web-2 at 10.0.0.6 runs nginx 1.24 on Debian in production')") == [
        "1.24",
        "10.0.0.6",
        "debian",
        "production",
        "web-2",
    ]
    assert one(db, "SELECT cogmem._details('restart the server')") == []


@pytest.mark.parametrize(
    ("tenant", "sqlstate", "message"),
    [
        (None, "22004", "tenant must not be NULL"),
        ("  ", "22023", "tenant must not be empty"),
        ("nobody", "42704", 'unknown tenant "nobody"'),
    ],
)
def test_tenant_checks(db, tenant, sqlstate, message):
    with pytest.raises(psycopg.Error) as err:
        db.execute("SELECT cogmem._reach(%s)", (tenant,))
    assert err.value.sqlstate == sqlstate
    assert err.value.diag.message_primary == message
    assert err.value.diag.message_hint


@pytest.mark.parametrize(
    ("text", "words", "shared"),
    [
        ("Don't restart web-1 at night, restart web-2 instead", "Restart web-1 tonight", 3),  # each lexeme once
        ("The billing contact is Ayse", "restart the servers", 0),
        ("Backups run at night", "", 0),
    ],
)
def test_shared_words_counts_lexemes_in_common(db, text, words, shared):
    query = "SELECT cogmem._shared_words(to_tsvector('english', %s), tsvector_to_array(to_tsvector('english', %s)))"
    assert one(db, query, (text, words)) == shared
    # The same as counting the lexemes one by one.
    assert (
        one(
            db,
            """SELECT count(*) FROM unnest(tsvector_to_array(to_tsvector('english', %s))) AS w
           WHERE w = ANY (tsvector_to_array(to_tsvector('english', %s)))""",
            (text, words),
        )
        == shared
    )


def test_recall_and_session_ids_begin_with_the_tenants_routing_key(db, tenant):
    key = one(db, "SELECT lpad(to_hex(cogmem._tenant_key(%s)), 8, '0')", (tenant,))
    assert one(db, "SELECT cogmem._tenant_key(%s) = hashtext(%s) & 2147483647", (tenant, tenant))
    db.execute("SELECT * FROM cogmem.remember(%s, 'Deploys go out on Tuesdays')", (tenant,))
    recall_id = one(db, "SELECT recall_id FROM cogmem.recall(%s, 'when do deploys go out?') LIMIT 1", (tenant,))
    session_id = one(db, "SELECT cogmem.start_session(%s)", (tenant,))
    for made in (recall_id, session_id, one(db, "SELECT cogmem._keyed_uuid(%s)", (tenant,))):
        assert str(made).startswith(key) and str(made)[14] == "4"  # still a version-4 UUID
    assert one(db, "SELECT count(DISTINCT cogmem._keyed_uuid(%s)) FROM generate_series(1, 1000)", (tenant,)) == 1000
