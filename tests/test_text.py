"""sql/004-text.sql: the checks and helpers of text: topics, details, shared words."""

import pytest

from tests.conftest import one


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


@pytest.mark.parametrize(
    ("kind", "ring"),
    [
        ("rule", "dos_and_donts"),
        ("Preference", "dos_and_donts"),
        ("incident", "shocks"),
        ("procedure", "procedures"),
        ("habit", "habits"),
        ("fact", "long_term"),
        ("chat", "fresh"),
        ("long_term", "long_term"),
        ("note", None),
        ("bios", None),
    ],
)
def test_a_kind_names_its_ring(db, kind, ring):
    assert one(db, "SELECT cogmem._ring_of(%s)", (kind,)) == ring
