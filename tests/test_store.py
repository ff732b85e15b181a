"""sql/180-store.sql and cogmem_pg/langgraph.py: the keyed store, and LangGraph's BaseStore on it.

The first tests follow the behaviour LangGraph's own store tests check (batch order, basic operations,
namespaces, search, non-ASCII, validation); then what cogmem adds (memories, redaction, TTL, erasure,
tenants and roles); a differential test against InMemoryStore; and a StateGraph that remembers, recalls
and gives feedback through the store.
"""

from __future__ import annotations

import asyncio
import json
import math
import operator
import random
import re
import threading
import unicodedata
from typing import Annotated, TypedDict

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from bench.redaction_corpus import FULL_WIDTH, NBSP, WJ, ZWSP, grouped
from cogmem_pg.client import Client, store_text
from cogmem_pg.langgraph import CogmemStore
from tests.conftest import one


@pytest.fixture
def client(dsn, tenant):
    with Client(dsn, embedder=False) as c:
        yield c


@pytest.fixture
def store(client, tenant):
    return CogmemStore(client, tenant)


def test_batch_reads_see_the_store_before_the_batch_and_results_keep_their_order(store):
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2 changed"}),
            SearchOp(("test",), filter={"data": "value1"}, limit=10),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("test",)),), limit=10),
            GetOp(("test", "bar"), "key2"),
            GetOp(("test",), "missing"),
            PutOp(("test", "new"), "key3", {"data": "first"}),
            PutOp(("test", "new"), "key3", {"data": "last"}),
        ]
    )
    assert len(results) == 8
    assert results[0].value == {"data": "value1"}
    assert results[1] is None and results[6] is None and results[7] is None
    assert [(i.namespace, i.key) for i in results[2]] == [(("test", "foo"), "key1")]
    assert results[3] == [("test", "bar"), ("test", "foo")]
    assert results[4].value == {"data": "value2"}  # the put comes after the batch's reads
    assert results[5] is None
    assert store.get(("test", "bar"), "key2").value == {"data": "value2 changed"}
    assert store.get(("test", "new"), "key3").value == {"data": "last"}  # the last write to a key wins


def test_put_get_update_delete(store):
    namespace = ("users", "u-1")
    store.put(namespace, "profile", {"name": "Ada", "langs": ["en", "tr"], "stars": 4.5, "meta": {"vip": True}})
    first = store.get(namespace, "profile")
    assert first.value == {"name": "Ada", "langs": ["en", "tr"], "stars": 4.5, "meta": {"vip": True}}
    assert first.namespace == namespace and first.key == "profile"
    assert first.created_at == first.updated_at
    store.put(namespace, "profile", {"name": "Ada Lovelace"})
    second = store.get(namespace, "profile")
    assert second.value == {"name": "Ada Lovelace"}  # replaced, not merged
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    store.delete(namespace, "profile")
    assert store.get(namespace, "profile") is None
    store.delete(namespace, "profile")  # deleting what is gone is not an error
    assert store.get(("users", "nobody"), "profile") is None


def test_list_namespaces_by_prefix_suffix_wildcard_and_depth(store):
    for namespace in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]:
        store.put(namespace, "k", {"x": 1})
    assert store.list_namespaces(prefix=("a", "b")) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("*", "f")) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("admin",), ("b",), ("users",)]
    assert store.list_namespaces(prefix=("users",), limit=1, offset=1) == [("users", "456", "settings")]
    assert store.list_namespaces(prefix=("nothing",)) == []
    store.delete(("users", "123"), "k")
    assert store.list_namespaces(prefix=("users",)) == [("users", "456", "settings")]  # an emptied one goes


def test_search_filters_with_langgraph_operators(store):
    items = {
        "a": {"color": "red", "score": 4.5, "meta": {"kind": "x", "n": 1}},
        "b": {"color": "blue", "score": 3.0, "meta": {"kind": "y"}},
        "c": {"color": "red", "score": 1.0, "tags": ["p", "q"]},
        "d": {"score": 5},
    }
    for key, value in items.items():
        store.put(("docs",), key, value, index=False)

    def keys(**kwargs):
        return sorted(i.key for i in store.search(("docs",), **kwargs))

    assert keys(filter={"color": "red"}) == ["a", "c"]
    assert keys(filter={"color": {"$eq": "red"}}) == ["a", "c"]
    assert keys(filter={"color": {"$ne": "red"}}) == ["b", "d"]
    assert keys(filter={"score": {"$gt": 3.0}}) == ["a", "d"]
    assert keys(filter={"score": {"$gte": 3.0}}) == ["a", "b", "d"]
    assert keys(filter={"score": {"$lt": 3.0}}) == ["c"]
    assert keys(filter={"score": {"$lte": 3.0}}) == ["b", "c"]
    assert keys(filter={"score": {"$gte": 1, "$lt": 4.5}}) == ["b", "c"]
    assert keys(filter={"color": "red", "score": {"$gt": 2}}) == ["a"]
    assert keys(filter={"meta": {"kind": "x"}}) == ["a"]  # a nested object matches by its fields
    assert keys(filter={"tags": ["p", "q"]}) == ["c"]
    assert keys(filter={"missing": "field"}) == []
    assert keys(limit=2) == ["a", "b"] and keys(limit=2, offset=3) == ["d"]
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="unsupported filter operator"):
        store.search(("docs",), filter={"score": {"$regex": "x"}})


def test_search_with_a_query_scores_by_the_similarity_of_the_memories_vectors(store, db):
    # Issue 51: the score was recall's rank fusion (times confidence and strength); LangGraph's stores, and
    # its users, read it as the similarity of the query and the item.
    namespace = ("notes", "ops")
    store.put(namespace, "deploy", {"content": "Production deploys go out on Tuesday mornings after the review."})
    store.put(namespace, "tea", {"content": "Selin drinks green tea in the afternoon."})
    store.put(namespace, "backup", {"content": "The nightly database backup runs at two o'clock."})
    store.put(namespace, "raw", {"content": "an unindexed deploy checklist"}, index=False)
    query = "when do production deploys go out?"
    hits = store.search(("notes",), query=query)
    assert hits[0].key == "deploy" and hits[0].score > 0
    assert hits[-1].key == "raw" and hits[-1].score is None  # no memory, no score: after those that have one
    assert [h.score for h in hits[:-1]] == sorted((h.score for h in hits[:-1]), reverse=True)
    db.execute("RESET cogmem.embed")  # the server's MiniLM embedded the memories and the query
    cosine = dict(
        db.execute(
            "SELECT i.key, 1 - (m.embedding <=> cogmem.embed(%s)) FROM cogmem.store_items AS i"
            " JOIN cogmem.memories AS m USING (tenant, memory_id)",
            (query,),
        ).fetchall()
    )
    assert {h.key: h.score for h in hits[:-1]} == pytest.approx(cosine, abs=1e-6)
    assert [
        h.key for h in store.search(("notes",), query="backup at night", filter={"content": {"$ne": "x"}}, limit=1)
    ] == ["backup"]
    assert all(h.score is None for h in store.search(("notes",)))  # no query, no score


def test_non_ascii_values_keys_and_namespaces(store):
    namespace = ("kullanıcılar", "şükrü", "日本")
    value = {"içerik": "Çarşamba günü ağ bakımı var, ğüşıöç ĞÜŞİÖÇ", "emoji": "🚀✨", "中文": "你好"}
    store.put(namespace, "ayarlar-ğ", value)
    assert store.get(namespace, "ayarlar-ğ").value == value
    assert store.list_namespaces(prefix=("kullanıcılar",)) == [namespace]
    assert [i.key for i in store.search(("kullanıcılar",), query="ağ bakımı ne zaman?")] == ["ayarlar-ğ"]
    assert [i.key for i in store.search(("kullanıcılar",), filter={"emoji": "🚀✨"})] == ["ayarlar-ğ"]


@pytest.mark.parametrize(
    "namespace", [(), ("langgraph", "x"), ("a.b",), ("a", ""), ("ok", 5)], ids=["empty", "root", "dot", "blank", "int"]
)
def test_invalid_namespaces_are_refused_through_every_path(store, namespace):
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"x": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(namespace, "k", {"x": 1})])


def test_the_database_refuses_what_the_store_would(client, tenant):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="invalid namespace"):
        client.store_put(tenant, ["a.b"], "k", {"x": 1})
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="key must not be empty"):
        client.store_put(tenant, ["a"], "", {"x": 1})
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="JSON object"):
        client._scalar(None, "SELECT memory_id FROM cogmem.store_put(%s, '{a}', 'k', '[1]')", (tenant,))
    with pytest.raises(psycopg.errors.UndefinedObject):
        client.store_get("no-such-tenant", ["a"], "k")


def test_an_indexed_value_is_a_memory_that_recall_injects(store, client, db, tenant):
    store.put(("prefs",), "lang", {"content": "Ahmet wants every answer in Turkish."})
    memory_id = one(db, "SELECT memory_id FROM cogmem.store_items WHERE key = 'lang'")
    assert (
        one(db, "SELECT source -> 'store' ->> 'key' FROM cogmem.memories WHERE memory_id = %s", (memory_id,)) == "lang"
    )
    recall = store.recall(("prefs",), "Which language should answers to Ahmet be in?")
    assert memory_id in [i.memory_id for i in recall.items]
    assert store.feedback(recall.recall_id, 1.0, used=[(("prefs",), "lang")]) >= 1
    # The same value again keeps the memory (and what feedback taught it); a new text replaces it.
    store.put(("prefs",), "lang", {"content": "Ahmet wants every answer in Turkish."})
    assert one(db, "SELECT memory_id FROM cogmem.store_items WHERE key = 'lang'") == memory_id
    store.put(("prefs",), "lang", {"content": "Ahmet now wants answers in English."})
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE memory_id = %s", (memory_id,)) == 0
    assert (
        one(db, "SELECT event FROM cogmem.audit_log WHERE memory_id = %s ORDER BY audit_id DESC LIMIT 1", (memory_id,))
        == "erased"
    )


def test_a_namespace_label_names_the_person_and_the_store_its_agent(client, tenant, db):
    store = CogmemStore(client, tenant, person_label=1, agent="support")
    store.put(("memories", "ayla"), "calls", {"content": "Ayla wants calls only after six."})
    store.put(("memories", "ben"), "calls", {"content": "Ben wants no calls at all, e-mail only."})
    store.put(("team",), "hours", {"content": "Support answers calls from nine to six."})
    scopes = db.execute("SELECT person, agent FROM cogmem.memories ORDER BY memory_id").fetchall()
    assert scopes == [("ayla", "support"), ("ben", "support"), (None, "support")]
    recalled = " ".join(i.content for i in store.recall(("memories", "ayla"), "When can I call?").items)
    assert "Ayla" in recalled and "Ben" not in recalled and "nine to six" in recalled
    with pytest.raises(ValueError, match="not both"):
        CogmemStore(client, tenant, agent="a", agent_label=2)


def test_fields_choose_the_text_and_index_false_stores_none(client, tenant, db):
    store = CogmemStore(client, tenant, index=["title", "body.text"])
    store.put(("kb",), "one", {"title": "Rotating keys", "body": {"text": "Rotate the signing key yearly."}, "id": 7})
    assert (
        one(
            db,
            "SELECT m.content FROM cogmem.memories AS m JOIN cogmem.store_items AS i USING (tenant, memory_id) "
            "WHERE i.key = 'one'",
        )
        == "Rotating keys\nRotate the signing key yearly."
    )
    store.put(("kb",), "two", {"title": "No memory"}, index=False)
    assert one(db, "SELECT memory_id FROM cogmem.store_items WHERE key = 'two'") is None
    store.put(("kb",), "three", {"title": "Only the body", "body": {"text": "Body text."}}, index=["body.text"])
    assert (
        one(
            db,
            "SELECT m.content FROM cogmem.memories AS m JOIN cogmem.store_items AS i USING (tenant, memory_id) "
            "WHERE i.key = 'three'",
        )
        == "Body text."
    )


def test_secrets_in_a_value_read_back_redacted_and_never_reach_the_database(store, db):
    store.put(
        ("billing",),
        "card",
        {
            "note": "Pay with 4111 1111 1111 1111 tomorrow",
            "password": "hunter22",
            "nested": [{"token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}],
        },
    )
    value = store.get(("billing",), "card").value
    assert value == {
        "note": "Pay with [REDACTED:PAN] tomorrow",
        "password": "[REDACTED]",
        "nested": [{"token": "[REDACTED]"}],
    }
    dumped = one(db, "SELECT string_agg(value::text, ' ') FROM cogmem.store_items") + one(
        db, "SELECT string_agg(content, ' ') FROM cogmem.memories"
    )
    for secret in ("4111", "hunter22", "ghp_abc"):
        assert secret not in dumped


# -- secrets and bounds (issue 37) ---------------------------------------------------------------------

CARD = "4111111111111111"
# The disguises of tests/test_redaction.py and bench/redaction_corpus.py, for a card in values, keys and labels.
CARDS = {
    "plain": CARD,
    "spaces": grouped(CARD, " "),
    "dashes": grouped(CARD, "-"),
    "dots": grouped(CARD, "."),
    "no-break spaces": grouped(CARD, NBSP),
    "zero-width spaces": grouped(CARD, ZWSP),
    "word joiners in the digits": WJ.join(CARD),
    "full-width digits": CARD.translate(FULL_WIDTH),
}


def everything_stored(db) -> str:
    """The store's and the memories' texts, as redaction reads them (NFKC), digits only."""
    dump = one(
        db,
        "SELECT string_agg(x, ' ') FROM (SELECT i.namespace::text || i.key || i.value::text"
        " FROM cogmem.store_items AS i UNION ALL"
        " SELECT m.content || m.source::text FROM cogmem.memories AS m) AS d (x)",
    )
    return re.sub(r"\D", "", unicodedata.normalize("NFKC", dump or ""))


@pytest.mark.parametrize("disguise", CARDS)
def test_a_card_in_a_value_an_object_key_a_label_or_an_item_key_is_kept_redacted(store, db, disguise):
    shown = CARDS[disguise]
    # A label cannot hold a period at all: dotted, the card goes in with dashes there.
    namespace, key = ("billing", f"card {shown.replace('.', '-')}"), f"card {shown}"
    store.put(namespace, key, {"note": f"pay with {shown}", shown: "on file", "nested": [{"k": f"x {shown}"}]})
    [item] = store.search(("billing",))
    assert (item.namespace, item.key) == (("billing", "card [REDACTED:PAN]"), "card [REDACTED:PAN]")
    assert item.value == {
        "note": "pay with [REDACTED:PAN]",
        "[REDACTED:PAN]": "on file",
        "nested": [{"k": "x [REDACTED:PAN]"}],
    }
    assert store.get(namespace, key).value == item.value  # a read by the name it was put under finds it
    assert store.list_namespaces() == [("billing", "card [REDACTED:PAN]")]
    assert one(db, "SELECT source FROM cogmem.memories") == {
        "store": {"namespace": ["billing", "card [REDACTED:PAN]"], "key": "card [REDACTED:PAN]"}
    }
    assert CARD not in everything_stored(db)
    assert store.delete(namespace, key) is None and store.search(("billing",)) == []


def test_numbers_keys_and_fields_named_for_secrets_are_redacted_whatever_their_type(client, store, db, tenant):
    value = {
        "card": 4111111111111111,
        "4111111111111111": "on file",
        "password=hunter5": True,
        "pass": 1234,
        "pwd": True,
        "secret": "s3",
        "apiKey": "abc",
        "token": 5.5,
        "db": {"dbPassword": ["hunter6", 7]},
        "login": "admin:Sup3rS3cret",
        "url": "postgres://app:hunter7@db:5432/app",
        "n": 12,
        "ok": None,
        "max_tokens": 1024,
        "bypass": False,
    }
    done = client.store_put(tenant, ["vault"], "k", value, store_text(value))
    assert done.redactions == ["credential", "pan", "password"]
    assert store.get(("vault",), "k").value == {
        "card": "[REDACTED:PAN]",
        "[REDACTED:PAN]": "on file",
        "password=[REDACTED]": True,
        "pass": "[REDACTED]",
        "pwd": "[REDACTED]",
        "secret": "[REDACTED]",
        "apiKey": "[REDACTED]",
        "token": "[REDACTED]",
        "db": {"dbPassword": ["[REDACTED]", "[REDACTED]"]},
        "login": "admin:[REDACTED]",
        "url": "postgres://app:[REDACTED]@db:5432/app",
        "n": 12,
        "ok": None,
        "max_tokens": 1024,
        "bypass": False,
    }
    assert one(db, "SELECT content FROM cogmem.memories WHERE memory_id = %s", (done.memory_id,)) == (
        "[REDACTED:PAN]: on file\nsecret: [REDACTED]\napiKey: [REDACTED]\ndb.dbPassword[0]: [REDACTED]\n"
        "login: admin:[REDACTED]\nurl: postgres://app:[REDACTED]@db:5432/app"
    )
    stored = one(
        db, "SELECT value::text || (SELECT string_agg(content, ' ') FROM cogmem.memories) FROM cogmem.store_items"
    )
    for secret in ("4111", "hunter5", "1234", "s3", "abc", "5.5", "hunter6", "Sup3rS3cret", "hunter7"):
        assert secret not in stored


def test_the_memory_holds_no_more_than_the_value(client, db, tenant):
    value = {"pass": "hunter5", "note": "the db pass is hunter5, not hunter55"}
    done = client.store_put(tenant, ["n"], "k", value, store_text(value))
    assert one(db, "SELECT content FROM cogmem.memories WHERE memory_id = %s", (done.memory_id,)) == (
        "pass: [REDACTED]\nnote: the db pass is [REDACTED], not hunter55"
    )
    # The same text again keeps its memory: it is compared as it would be stored.
    assert client.store_put(tenant, ["n"], "k", value, store_text(value)).action == "unchanged"


def test_a_value_without_secrets_reads_back_exactly(store):
    """Redaction writes the value back as JSON text: escapes, order, numbers and empty containers survive."""
    value = {
        'quo"te': 'a "b" \\ c\n\td\u0001',
        "ünï 日本 😀": ["", [], {}, [[1, -2.5e-7, 2.5e10, 123456789012345678901234567890]], True, None],
        "": {"nested": {"deeper": [{"a": [0, 0.0, -0.0]}]}},
        "order": list(range(20)),
    }
    store.put(("exact",), "k", value, index=False)
    assert store.get(("exact",), "k").value == value


def test_a_text_that_only_its_placeholders_lengthen_past_the_limit_is_refused_as_such(client, db, tenant):
    with pytest.raises(psycopg.errors.StringDataRightTruncation) as err:
        client.store_put(tenant, ["n"], "k", {"pass": "ab"}, "ab " * 2500)
    assert err.value.diag.message_primary == (
        'the text to remember has 27500 characters once the value\'s secrets are replaced, the limit for tenant "acme" '
        "is 8000"
    )
    assert err.value.diag.message_hint == (
        "Remember a shorter text (index fields), or raise cogmem.tenants.max_content_chars."
    )
    assert one(db, "SELECT count(*) FROM cogmem.store_items") == 0


def test_keys_that_redaction_would_make_one_are_refused_and_nothing_is_stored(store, db):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        store.put(("a",), "k", {"x": {CARD: 1, grouped("5555555555554444", " "): 2}})
    assert err.value.diag.message_primary == 'two keys of a store value read "[REDACTED:PAN]" once redacted'
    assert err.value.diag.message_hint == (
        "A secret in a key is redacted, and keys that differ only in their secret would become one: "
        "keep secrets out of keys."
    )
    assert one(db, "SELECT count(*) FROM cogmem.store_items") == 0


def test_item_keys_that_differ_only_in_a_secret_name_one_item(client, store, tenant):
    assert client.store_put(tenant, ["p"], f"card {CARD}", {"v": 1}).redactions == ["pan"]
    client.store_put(tenant, ["p"], "card 5555 5555 5555 4444", {"v": 2})
    assert store.get(("p",), f"card {CARD}").value == {"v": 2}
    assert [(i.key, i.value) for i in store.search(("p",))] == [("card [REDACTED:PAN]", {"v": 2})]


def test_a_value_over_the_tenants_limit_is_refused_whole_never_cut(client, db, tenant):
    at_limit = {"blob": "x" * (1048576 - 12)}  # {"blob": "..."} as JSON text: 12 bytes besides the x's
    client.store_put(tenant, ["big"], "k", at_limit)
    assert client.store_get(tenant, ["big"], "k").value == at_limit
    over = {"blob": "x" * (1048576 - 11)}
    with pytest.raises(psycopg.errors.StringDataRightTruncation) as err:
        client.store_put(tenant, ["big"], "k", over)
    assert err.value.diag.message_primary == 'a store value has 1048577 bytes, the limit for tenant "acme" is 1048576'
    assert err.value.diag.message_hint == (
        "Keep large content elsewhere and store a reference to it; or raise "
        "cogmem.tenants.max_store_value_bytes (configure_tenant)."
    )
    assert client.store_get(tenant, ["big"], "k").value == at_limit
    db.execute("SELECT cogmem.configure_tenant(%s, '{\"max_store_value_bytes\": 2097152}')", (tenant,))
    client.store_put(tenant, ["big"], "k", over)
    assert client.store_get(tenant, ["big"], "k").value == over


def test_a_value_of_thirty_two_thousand_strings_is_redacted_whole(client, tenant):
    """The value that held a backend for 25 s (one concatenation per string); bench/store.py times it."""
    strings = [f"note {n} about the deploy" for n in range(32_000)]
    strings[17_000] = f"card {grouped(CARD, ' ')}"
    client.store_put(tenant, ["big"], "many", {"items": strings})
    got = client.store_get(tenant, ["big"], "many").value["items"]
    assert len(got) == 32_000 and got[17_000] == "card [REDACTED:PAN]"
    assert got[:17_000] == strings[:17_000] and got[17_001:] == strings[17_001:]


@pytest.mark.parametrize(("depth", "stored"), [(64, True), (65, False)])
def test_values_nest_at_most_64_levels(client, tenant, depth, stored):
    value: dict = {"a": 1}
    for _ in range(depth - 1):
        value = {"x": value}
    if stored:
        client.store_put(tenant, ["deep"], "k", value)
        assert client.store_get(tenant, ["deep"], "k").value == value
        return
    with pytest.raises(psycopg.errors.ProgramLimitExceeded) as err:
        client.store_put(tenant, ["deep"], "k", value)
    assert err.value.diag.message_primary == "a store value nests more than 64 levels deep"
    assert err.value.diag.message_hint == "Flatten it: 64 levels of objects and arrays at most."


@pytest.mark.parametrize(
    ("namespace", "key", "message"),
    [
        (["日本語" * 112], "k", "a store namespace has 1008 bytes, the limit is 1000"),
        # Four labels of 200 characters: taken before, then refused by the index (54000).
        (["漢" * 200] * 4, "k", "a store namespace has 2400 bytes, the limit is 1000"),
        (["a"], "鍵" * 167, "a store key has 501 bytes, the limit is 500"),
        (["a"], "k" * 1000, "a store key has 1000 bytes, the limit is 500"),
    ],
    ids=["cjk label", "four long labels", "cjk key", "long key"],
)
def test_labels_and_keys_are_limited_in_bytes(client, db, tenant, namespace, key, message):
    with pytest.raises(psycopg.errors.StringDataRightTruncation) as err:
        client.store_put(tenant, namespace, key, {"x": 1})
    assert err.value.diag.message_primary == message
    assert err.value.diag.message_hint.startswith("Labels are names (ids), not content" if "namespace" in message
                                                  else "Keys are names (ids), not content")  # fmt: skip
    with pytest.raises(psycopg.errors.StringDataRightTruncation):
        client.store_get(tenant, namespace, key)
    assert one(db, "SELECT count(*) FROM cogmem.store_items") == 0


def test_the_longest_path_fits_the_index_with_the_longest_tenant(client, db):
    tenant = "🚀" * 200  # 800 bytes: the longest tenant name
    db.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
    # 32 labels of 1,000 bytes in all, each but one padded to 4 bytes in the array (29 + 3).
    namespace = ["ü" * 14 + "x"] * 31 + ["x" * 101]
    assert sum(len(label.encode()) for label in namespace) == 1000
    key = "鍵" * 166 + "kk"  # 500 bytes
    client.store_put(tenant, namespace, key, {"x": 1})
    assert client.store_get(tenant, namespace, key).value == {"x": 1}


@pytest.mark.parametrize(
    ("namespace", "message"),
    [
        (["a", "", "b"], "invalid namespace: label 2 is empty"),
        (["a", None], "invalid namespace: label 2 is empty"),
        (["a.b"], "invalid namespace: label 1 holds a period"),
        ([f"l{n}" for n in range(33)], "invalid namespace: 33 labels, the limit is 32"),
    ],
)
def test_an_empty_label_is_refused_not_collapsed(client, tenant, namespace, message):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        client.store_put(tenant, namespace, "k", {"x": 1})
    assert err.value.diag.message_primary == message


def test_nul_in_a_label_or_key_is_refused_before_it_is_sent(store, client, tenant):
    with pytest.raises(InvalidNamespaceError, match="NUL"):  # LangGraph's own check, or ours before it had one
        store.put(("a\x00b",), "k", {"x": 1})
    with pytest.raises(InvalidNamespaceError, match="NUL"):
        store.batch([PutOp(("a\x00b",), "k", {"x": 1})])
    with pytest.raises(InvalidNamespaceError, match="NUL"):
        store.search(("a\x00",))
    with pytest.raises(ValueError, match=r"a store key holds NUL \(\\u0000\)"):
        store.get(("a",), "k\x00")
    for call in (
        lambda: client.store_put(tenant, ["a"], "k\x00", {"x": 1}),
        lambda: client.store_get(tenant, ["a\x00"], "k"),
        lambda: client.store_delete(tenant, ["a"], "\x00"),
        lambda: client.store_search(tenant, ["a"], "what\x00"),
        lambda: client.store_namespaces(tenant, ["a\x00"]),
    ):
        with pytest.raises(ValueError, match="cannot hold NUL"):
            call()
    with pytest.raises(ValueError, match="cannot hold NUL"):
        store.put(("a",), "k", {"x": "a\x00b"})  # the text it would be remembered by holds it
    # In a value alone, JSON carries it as \u0000; the server refuses what text cannot hold, with its SQLSTATE.
    with pytest.raises(psycopg.errors.UntranslatableCharacter) as err:
        store.put(("a",), "k", {"x": "a\x00b"}, index=False)
    assert err.value.sqlstate == "22P05"


def test_a_query_of_seventeen_thousand_words_ranks_by_its_first(store):
    store.put(("notes",), "deploy", {"content": "Production deploys go out on Tuesday mornings."})
    store.put(("notes",), "tea", {"content": "Selin drinks green tea in the afternoon."})
    rng = random.Random(37)
    filler = " ".join("".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(7)) for _ in range(17_000))
    hits = store.search(("notes",), query="production deploys " + filler)
    assert hits[0].key == "deploy" and len(hits) == 2


@pytest.mark.parametrize(
    ("ttl", "shown"),
    [
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (0.0, "0"),
        (-1.0, "-1"),
        (52560001.0, "52560001"),
    ],
)
def test_a_time_to_live_is_a_finite_number_of_minutes(store, client, db, tenant, ttl, shown):
    for put in (
        lambda: client.store_put(tenant, ["s"], "k", {"x": 1}, ttl_minutes=ttl),
        lambda: store.put(("s",), "k", {"x": 1}, ttl=ttl),
    ):
        with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
            put()
        assert (
            err.value.diag.message_primary
            == f"ttl_minutes must be above 0 and at most 52560000 (100 years), got {shown}"
        )
        assert err.value.diag.message_hint == "Pass NULL for an item that does not expire."
    assert one(db, "SELECT count(*) FROM cogmem.store_items") == 0
    client.store_put(tenant, ["s"], "k", {"x": 1}, ttl_minutes=52560000)


def test_a_time_to_live_files_the_memory_as_fresh_and_expires(store, db):
    store.put(("scratch",), "lunch", {"content": "Lunch order: two pides"}, ttl=30)
    assert (
        one(
            db,
            "SELECT m.ring::text FROM cogmem.memories AS m JOIN cogmem.store_items AS i "
            "USING (tenant, memory_id) WHERE i.key = 'lunch'",
        )
        == "fresh"
    )
    before = one(db, "SELECT expires_at FROM cogmem.store_items WHERE key = 'lunch'")
    assert store.get(("scratch",), "lunch", refresh_ttl=False) is not None
    assert one(db, "SELECT expires_at FROM cogmem.store_items WHERE key = 'lunch'") == before
    store.get(("scratch",), "lunch")  # a read restarts the clock
    assert one(db, "SELECT expires_at FROM cogmem.store_items WHERE key = 'lunch'") > before
    memory_id = one(db, "SELECT memory_id FROM cogmem.store_items WHERE key = 'lunch'")
    db.execute("UPDATE cogmem.store_items SET expires_at = now() - interval '1 second' WHERE key = 'lunch'")
    assert store.get(("scratch",), "lunch") is None
    assert store.search(("scratch",)) == [] and store.list_namespaces() == []
    store.put(("other",), "k", {"x": 1}, index=False)  # the next write sweeps the expired item
    assert one(db, "SELECT count(*) FROM cogmem.store_items WHERE key = 'lunch'") == 0
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE memory_id = %s", (memory_id,)) == 0


def test_default_ttl_from_the_config(client, tenant, db):
    store = CogmemStore(client, tenant, ttl={"default_ttl": 60, "refresh_on_read": False})
    store.put(("s",), "a", {"content": "short-lived note"})
    assert one(db, "SELECT ttl_minutes FROM cogmem.store_items WHERE key = 'a'") == 60
    before = one(db, "SELECT expires_at FROM cogmem.store_items WHERE key = 'a'")
    store.get(("s",), "a")
    assert one(db, "SELECT expires_at FROM cogmem.store_items WHERE key = 'a'") == before


def test_erasure_takes_the_item_with_its_memory(store, client, tenant, db):
    store.put(("people",), "p1", {"content": "Zeynep Kaya's phone is on the desk"})
    store.put(("people",), "p2", {"name": "Zeynep Kaya", "role": "buyer"}, index=False)
    store.put(("people",), "p3", {"content": "Unrelated note about printers"})
    memory_id = one(db, "SELECT memory_id FROM cogmem.store_items WHERE key = 'p3'")
    client.erase(tenant, memory_id, "test")
    assert store.get(("people",), "p3") is None
    counts = client.erase_subject(tenant, "Zeynep Kaya")
    assert counts["store_items"] >= 1
    assert store.get(("people",), "p1") is None and store.get(("people",), "p2") is None


def test_a_merged_memory_keeps_its_item_linked(store, db, tenant):
    store.put(("m",), "a", {"content": "The VPN gateway is vpn-2 in Frankfurt."})
    store.put(("m",), "b", {"content": "The VPN gateway is vpn-2 in Frankfurt."})  # a near-duplicate: shares
    a, b = (one(db, "SELECT memory_id FROM cogmem.store_items WHERE key = %s", (k,)) for k in "ab")
    assert a == b and one(db, "SELECT owns_memory FROM cogmem.store_items WHERE key = 'b'") is False
    store.delete(("m",), "a")  # b still refers to it: the memory stays
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE memory_id = %s", (a,)) == 1
    assert store.get(("m",), "b").value == {"content": "The VPN gateway is vpn-2 in Frankfurt."}


def test_tenant_label_maps_namespaces_to_tenants_under_the_roles_reach(dsn, db, login):
    db.execute("SELECT cogmem.create_tenant('t-one'), cogmem.create_tenant('t-two')")
    app = login("cogmem_app")
    role = one(app, "SELECT current_user")
    db.execute("SELECT cogmem.grant_tenant(%s, 't-one')", (role,))
    with Client(dsn.replace("user=postgres", f"user={role}"), embedder=False) as c:
        store = CogmemStore(c, tenant_label=0)
        store.put(("t-one", "memories"), "k", {"content": "Team one ships on Fridays."})
        assert store.get(("t-one", "memories"), "k").value == {"content": "Team one ships on Fridays."}
        with pytest.raises(psycopg.errors.UndefinedObject):
            store.put(("t-two", "memories"), "k", {"content": "not reachable"})
        with pytest.raises(InvalidNamespaceError, match="name its tenant"):
            store.put(("*",), "k", {"x": 1})
        assert store.list_namespaces() == [("t-one", "memories")]  # across the tenants the role reaches
        assert [i.key for i in store.search((), query="when does team one ship?")] == ["k"]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c._scalar(
                None,
                "INSERT INTO cogmem.store_items (tenant, namespace, key, value) "
                "VALUES ('t-one', '{x}', 'k', '{}') RETURNING 1",
                (),
            )
    assert one(db, "SELECT count(*) FROM cogmem.store_items WHERE tenant = 't-two'") == 0


def test_async_operations(store):
    async def main():
        await store.aput(("async",), "k", {"content": "async note"})
        item = await store.aget(("async",), "k")
        found = await store.asearch(("async",), query="note")
        names = await store.alist_namespaces()
        await store.adelete(("async",), "k")
        return item, found, names, await store.aget(("async",), "k")

    item, found, names, gone = asyncio.run(main())
    assert item.value == {"content": "async note"} and [f.key for f in found] == ["k"]
    assert names == [("async",)] and gone is None


def test_a_memory_the_night_forgets_leaves_the_value_readable(store, db):
    store.put(("facts",), "office", {"content": "The office plant needs water on Mondays."})
    memory_id = one(db, "SELECT memory_id FROM cogmem.store_items WHERE key = 'office'")
    db.execute("DELETE FROM cogmem.memories WHERE memory_id = %s", (memory_id,))  # as the night forgets
    assert store.get(("facts",), "office").value == {"content": "The office plant needs water on Mondays."}
    assert [(h.key, h.score) for h in store.search(("facts",), query="office plant")] == [("office", None)]
    db.execute("TRUNCATE cogmem.memories CASCADE")  # a DBA's truncate unlinks too
    assert store.get(("facts",), "office") is not None


# -- differential: random operation sequences against InMemoryStore --------------------------------------

LABELS = st.sampled_from(["a", "b", "c", "ğüş"])
NAMESPACES = st.lists(LABELS, min_size=1, max_size=3).map(tuple)
KEYS = st.sampled_from(["k1", "k2", "k3"])
WORDS = st.text(alphabet="abcdefgh çığ", min_size=0, max_size=12)
VALUES = st.fixed_dictionaries({"n": st.integers(-3, 3), "word": WORDS}, optional={"tag": st.sampled_from(["x", "y"])})
FILTERS = st.one_of(
    st.none(),
    st.fixed_dictionaries({"tag": st.sampled_from(["x", "y"])}),
    st.fixed_dictionaries(
        {
            "n": st.fixed_dictionaries(
                {}, optional={"$gt": st.integers(-3, 3), "$lte": st.integers(-3, 3), "$ne": st.integers(-3, 3)}
            )
        }
    ),
)
OPS = st.one_of(
    st.builds(
        lambda ns, k, v, index: PutOp(ns, k, v, index=index), NAMESPACES, KEYS, VALUES, st.sampled_from([False, None])
    ),
    st.builds(lambda ns, k: PutOp(ns, k, None), NAMESPACES, KEYS),
    st.builds(GetOp, NAMESPACES, KEYS),
    st.builds(
        lambda ns, f, q: SearchOp(ns, f, limit=100, query=q),
        st.lists(LABELS, max_size=2).map(tuple),
        FILTERS,
        st.one_of(st.none(), WORDS),
    ),
    st.builds(
        lambda prefix, depth: ListNamespacesOp(
            match_conditions=(MatchCondition("prefix", prefix),) if prefix else None, max_depth=depth, limit=100
        ),
        st.lists(LABELS, max_size=2).map(tuple),
        st.one_of(st.none(), st.integers(1, 3)),
    ),
)


def comparable(result):
    """A result without timestamps; searches as sets (orders differ by design), namespaces without the
    empty ones InMemoryStore keeps after their last item is deleted."""
    if result is None:
        return None
    if isinstance(result, list) and result and isinstance(result[0], tuple):
        return result
    if isinstance(result, list):
        return sorted((i.namespace, i.key, repr(sorted(i.value.items()))) for i in result)
    return (result.namespace, result.key, result.value)


def live_namespaces(reference: InMemoryStore) -> InMemoryStore:
    """A copy of REFERENCE without the empty namespaces it keeps after their last item is deleted."""
    kept = InMemoryStore()
    kept._data.update({ns: dict(items) for ns, items in reference._data.items() if items})
    return kept


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(OPS, min_size=1, max_size=6), min_size=1, max_size=6))
def test_random_operation_sequences_match_the_in_memory_store(client, db, batches):
    tenant = f"diff-{one(db, 'SELECT gen_random_uuid()')}"
    db.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
    ours, reference = CogmemStore(client, tenant), InMemoryStore()
    for ops in batches:
        before = live_namespaces(reference)
        expected = reference.batch(ops)
        got = ours.batch(ops)
        for op, mine, theirs in zip(ops, got, expected, strict=True):
            if isinstance(op, ListNamespacesOp):
                theirs = before.batch([op])[0]
            assert comparable(mine) == comparable(theirs), op


# -- a graph -------------------------------------------------------------------------------------------


class Turn(TypedDict):
    user: str
    message: str
    notes: Annotated[list[str], operator.add]


def test_a_state_graph_remembers_recalls_and_gives_feedback_through_the_store(store, db):
    def remember(state: Turn, *, store) -> dict:
        store.put(("users", state["user"]), f"turn-{len(state['notes'])}", {"content": state["message"]})
        return {"notes": ["remembered"]}

    def answer(state: Turn, *, store) -> dict:
        recall = store.recall(("users", state["user"]), "What does Defne prefer for meetings?")
        items = store.search(("users", state["user"]), query="Defne meetings")
        store.feedback(recall.recall_id, 1.0, used=[(items[0].namespace, items[0].key)])
        return {"notes": [recall.as_prompt(), items[0].value["content"]]}

    graph = StateGraph(Turn)
    graph.add_node("remember", remember)
    graph.add_node("answer", answer)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "answer")
    graph.add_edge("answer", END)
    app = graph.compile(store=store)
    out = app.invoke({"user": "defne", "message": "Defne prefers short morning meetings.", "notes": []})
    assert out["notes"][0] == "remembered"
    assert "Defne prefers short morning meetings." in out["notes"][1]
    assert out["notes"][2] == "Defne prefers short morning meetings."
    assert (
        one(
            db,
            "SELECT outcome_count FROM cogmem.memory_overview AS s JOIN cogmem.store_items AS i "
            "USING (tenant, memory_id) WHERE i.key = 'turn-0'",
        )
        == 1
    )


def test_concurrent_puts_and_deletes_of_the_same_keys_never_deadlock(db, tenant, dsn):
    # LangGraph's test_large_batches met DeadlockDetected between store_put and store_delete of one key: ten
    # threads of put, put, delete over three shared keys, each value remembered (its memory is shared when
    # two texts are the same), as that test does.
    errors: list[str] = []

    def worker(number: int) -> None:
        rng = random.Random(number)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SET cogmem.embed = 'off'")
            for n in range(12):
                key = f"k{rng.randrange(3)}"
                try:
                    for text in (f"note {n % 2} of {key}", f"note {number} of {key}"):
                        conn.execute(
                            "SELECT * FROM cogmem.store_put(%s, '{docs}', %s, %s, %s)",
                            (tenant, key, json.dumps({"text": text}), text),
                        )
                    conn.execute("SELECT cogmem.store_delete(%s, '{docs}', %s)", (tenant, key))
                except psycopg.Error as exc:
                    errors.append(f"{exc.sqlstate} {exc.diag.message_primary}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    # What is left is consistent: every item's memory exists, and no memory an item owned outlived it.
    assert one(db, "SELECT count(*) FROM cogmem.store_items AS i LEFT JOIN cogmem.memories AS m"
                   " USING (tenant, memory_id) WHERE i.memory_id IS NOT NULL AND m.memory_id IS NULL") == 0  # fmt: skip


def test_a_value_that_says_its_kind_is_filed_there(store, db, tenant):
    """{"kind": "rule"} is the caller's judgement (sql/180-store.sql); another kind is the app's own field."""
    store.put(("prefs",), "contact", {"content": "Email Dana, never phone her.", "kind": "preference"})
    store.put(("notes",), "lunch", {"content": "Dana had pasta for lunch today.", "kind": "note"})
    rings = db.execute(
        "SELECT i.key, m.ring::text FROM cogmem.store_items AS i JOIN cogmem.memories AS m USING (tenant, memory_id)"
        " WHERE i.tenant = %s ORDER BY i.key",
        (tenant,),
    ).fetchall()
    assert rings == [("contact", "dos_and_donts"), ("lunch", "fresh")]
    assert store.get(("notes",), "lunch").value["kind"] == "note"


# -- the items' own vectors, LangGraph's index (issue 51) ------------------------------------------------


def test_a_put_carries_the_items_own_vectors_and_a_search_scores_by_the_best_of_them(client, db, tenant):
    put = "SELECT * FROM cogmem.store_put(%s, '{v}', %s, '{}', embedded_fields => %s, embeddings => %s::vector[])"
    db.execute(put, (tenant, "two", ["title", "body"], ["[1,0,0]", "[0,1,0]"]))
    db.execute(put, (tenant, "one", ["title"], ["[0.6,0.8,0]"]))
    db.execute(put, (tenant, "wide", ["title"], ["[1,0,0,0]"]))  # another function's: never compared with [x,y,z]
    db.execute("SELECT * FROM cogmem.store_put(%s, '{v}', 'none', '{}')", (tenant,))
    search = (
        "SELECT key, round(score::numeric, 6)::float8 FROM cogmem.store_search(%s, '{v}', 'q', embedding => %s,"
        " vectors => 'fields', distance => %s)"
    )
    assert db.execute(search, (tenant, "[0,2,0]", "cosine")).fetchall() == [
        ("two", 1), ("one", 0.8), ("none", None), ("wide", None),
    ]  # fmt: skip
    assert db.execute(search, (tenant, "[0,2,0]", "inner_product")).fetchall()[:2] == [("two", 2), ("one", 1.6)]
    assert db.execute(search, (tenant, "[0,2,0]", "l2")).fetchall()[:2] == [
        ("two", -1),
        ("one", round(-((0.36 + 1.44) ** 0.5), 6)),
    ]
    # A zero vector has no direction: no cosine, not NaN ahead of every number.
    assert db.execute(search, (tenant, "[0,0,0]", "cosine")).fetchall()[0] == ("none", None)
    # A put without vectors leaves the item none (index=False, or a value its fields find nothing in).
    db.execute("SELECT * FROM cogmem.store_put(%s, '{v}', 'two', '{}')", (tenant,))
    assert one(db, "SELECT embeddings IS NULL AND embedded_fields IS NULL FROM cogmem.store_items WHERE key = 'two'")
    # Its memory's vector is the tenant's model's: vectors => 'memories' (the default) compares with that.
    assert db.execute("SELECT key, score FROM cogmem.store_search(%s, '{v}', 'q', embedding => %s::vector)",
                      (tenant, "[1,0,0]")).fetchall()[0][1] is None  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "vectors", "sqlstate", "message", "hint"),
    [
        (["a"], [], "22023", "a store put has 1 embedded fields and 0 embeddings",
         "Pass one field name for each vector, in the same order (or neither)."),
        (None, ["[1,2]"], "22023", "a store put has 0 embedded fields and 1 embeddings",
         "Pass one field name for each vector, in the same order (or neither)."),
        (["a", ""], ["[1,2]", "[3,4]"], "22004", "a store put has an embedded field without a name or without a vector",
         "Name each vector by the path it was made from."),
        (["a", "b"], ["[1,2]", None], "22004", "a store put has an embedded field without a name or without a vector",
         "Name each vector by the path it was made from."),
        (["a", "b"], ["[1,2]", "[1,2,3]"], "22000", "a store put has embeddings of 2 and 3 dimensions",
         "Embed all of an item's fields with one function."),
        ([f"f{n}" for n in range(1001)], ["[1]"] * 1001, "54000", "a store put has 1001 embeddings, the limit is 1000",
         "Index fewer fields of the value (LangGraph's index fields, or index=[...] per put)."),
    ],
    ids=["fewer vectors", "no names", "empty name", "null vector", "two dimensions", "over the limit"],
)  # fmt: skip
def test_a_puts_vectors_are_checked_before_anything_is_stored(db, tenant, fields, vectors, sqlstate, message, hint):
    with pytest.raises(psycopg.Error) as err:
        db.execute(
            "SELECT * FROM cogmem.store_put(%s, '{v}', 'k', '{}', embedded_fields => %s, embeddings => %s::vector[])",
            (tenant, fields, vectors),
        )
    assert (err.value.sqlstate, err.value.diag.message_primary, err.value.diag.message_hint) == (
        sqlstate,
        message,
        hint,
    )
    assert one(db, "SELECT count(*) FROM cogmem.store_items") == 0


@pytest.mark.parametrize(
    ("arguments", "sqlstate", "message", "hint"),
    [
        ("vectors => 'items'", "22023", 'unknown store vectors "items"',
         "Use 'memories' (the tenant's model) or 'fields' (the vectors put with the items)."),
        ("distance => 'hamming'", "22023", 'unknown store distance "hamming"', "Use cosine, inner_product or l2."),
        ("query => 'q', vectors => 'fields'", "22004", "a search by the items' own vectors needs the query's embedding",
         "Embed the query with the function the items were put with, or search vectors => 'memories'."),
    ],
    ids=["vectors", "distance", "no embedding"],
)  # fmt: skip
def test_a_search_is_refused_what_it_cannot_compare(db, tenant, arguments, sqlstate, message, hint):
    with pytest.raises(psycopg.Error) as err:
        db.execute(f"SELECT * FROM cogmem.store_search(%s, '{{v}}', {arguments})", (tenant,))
    assert (err.value.sqlstate, err.value.diag.message_primary, err.value.diag.message_hint) == (
        sqlstate,
        message,
        hint,
    )
    # Without a query there is nothing to embed: every item, by namespace and key, no score.
    assert db.execute("SELECT * FROM cogmem.store_search(%s, '{v}', vectors => 'fields')", (tenant,)).fetchall() == []


def test_order_filters_compare_numbers_as_numbers_and_texts_by_code_point(store):
    for key, value in {
        "a": {"v": 9},
        "b": {"v": 10},
        "c": {"v": "apple"},
        "d": {"v": "Banana"},
        "e": {"v": "é"},
    }.items():
        store.put(("f",), key, value, index=False)

    def keys(condition):
        return sorted(i.key for i in store.search(("f",), filter={"v": condition}))

    assert keys({"$gt": 9}) == ["b"]  # 10 > 9, not "10" < "9"
    assert keys({"$gt": "apple"}) == ["e"]  # é is past z; "Banana" < "apple" (B before a), as Python says
    assert keys({"$lt": "apple"}) == ["d"]
    assert keys({"$gte": "9"}) == ["c", "d", "e"]  # a text and a number do not compare: 9 and 10 fail
    assert keys({"$lte": 10, "$gt": 9.5}) == ["b"]


def test_the_index_configuration_is_checked_when_the_store_is_made(client, tenant):
    embed = lambda texts: [[1.0, 0.0] for _ in texts]  # noqa: E731
    with pytest.raises(ValueError, match="not bit by hamming"):
        CogmemStore(client, tenant, index={"dims": 2, "embed": embed, "ann_index_config": {"vector_type": "bit"},
                                           "distance_type": "hamming"})  # fmt: skip
    with pytest.raises(ValueError, match="not vector by jaccard"):
        CogmemStore(client, tenant, index={"dims": 2, "embed": embed, "distance_type": "jaccard"})
    store = CogmemStore(client, tenant, index={"dims": 3, "embed": embed})
    with pytest.raises(ValueError, match="returned vectors of 2 dimensions, its dims is 3"):
        store.put(("a",), "k", {"text": "x"})
    assert store.get(("a",), "k") is None  # nothing was sent


def test_a_caller_function_of_any_dimension_scores_while_the_memory_keeps_the_tenants_model(client, db, tenant):
    """The items' own vectors are the caller's (here 2 dimensions, made by a lambda); the text is also a
    memory, embedded by the tenant's model (384), recalled like any other."""
    vectors = {"tea": [1.0, 0.0], "coffee": [0.0, 1.0]}
    embed = lambda texts: [vectors.get(t, [0.6, 0.8]) for t in texts]  # noqa: E731
    store = CogmemStore(client, tenant, index={"dims": 2, "embed": embed, "fields": ["drink"]})
    store.put(("prefs",), "ayla", {"drink": "tea", "note": "Ayla drinks tea."})
    store.put(("prefs",), "ben", {"drink": "coffee"})
    hits = store.search(("prefs",), query="tea")
    assert [(h.key, round(h.score, 6)) for h in hits] == [("ayla", 1.0), ("ben", 0.0)]
    assert db.execute(
        "SELECT i.key, i.embedded_fields, vector_dims(i.embeddings[1]), m.content, vector_dims(m.embedding)"
        " FROM cogmem.store_items AS i JOIN cogmem.memories AS m USING (tenant, memory_id) ORDER BY i.key"
    ).fetchall() == [("ayla", ["drink"], 2, "tea", 384), ("ben", ["drink"], 2, "coffee", 384)]
    store.put(("prefs",), "ayla", {"drink": "tea"}, index=False)  # no index: no vectors, no memory
    assert [(h.key, h.score) for h in store.search(("prefs",), query="tea")] == [("ben", 0.0), ("ayla", None)]


def test_store_sweep_deletes_expired_items_within_the_callers_reach(dsn, db, login):
    db.execute("SELECT cogmem.create_tenant('t-one'), cogmem.create_tenant('t-two')")
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, 't-one')", (one(app, "SELECT current_user"),))
    for t in ("t-one", "t-two"):
        db.execute(
            "SELECT * FROM cogmem.store_put(%s, '{n}', 'k', %s::jsonb, 'Lunch at noon', 30)",
            (t, '{"content": "Lunch at noon"}'),
        )
    db.execute("UPDATE cogmem.store_items SET expires_at = now() - interval '1 second'")
    memory = one(db, "SELECT memory_id FROM cogmem.store_items WHERE tenant = 't-one'")
    with pytest.raises(psycopg.errors.UndefinedObject, match='unknown tenant "t-two"'):
        app.execute("SELECT cogmem.store_sweep('t-two')")
    assert one(app, "SELECT cogmem.store_sweep('t-one')") == 1
    assert one(app, "SELECT cogmem.store_sweep('t-one')") == 0
    assert db.execute("SELECT tenant FROM cogmem.store_items").fetchall() == [("t-two",)]
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE memory_id = %s", (memory,)) == 0
    with Client(dsn.replace("user=postgres", f"user={one(app, 'SELECT current_user')}"), embedder=False) as c:
        store = CogmemStore(c, tenant_label=0, ttl={"default_ttl": 30})
        assert store.sweep_ttl() == 0  # every tenant the role reaches: t-one, swept already


def test_the_async_store_on_a_pool_of_the_callers_own(dsn, db, tenant):
    """AsyncCogmemStore on an AsyncConnectionPool it did not make (pgvector's types registered on first use),
    with the tenant's own model (the server's, here): the same answers as CogmemStore."""
    from psycopg_pool import AsyncConnectionPool

    from cogmem_pg.langgraph import AsyncCogmemStore

    async def main():
        async with AsyncConnectionPool(dsn, kwargs={"autocommit": True}, open=False) as pool:
            store = AsyncCogmemStore(pool, tenant, person_label=1, embedder=False)
            await store.aput(("notes", "ayla"), "deploy", {"content": "Production deploys go out on Tuesdays."})
            await store.aput(("notes", "ayla"), "tea", {"content": "Ayla drinks green tea."})
            await store.aput(("notes", "ayla"), "raw", {"content": "a deploy checklist"}, index=False)
            found = await store.asearch(("notes",), query="when do deploys go out?")
            got = await store.aget(("notes", "ayla"), "tea")
            names = await store.alist_namespaces()
            await store.adelete(("notes", "ayla"), "raw")
            return found, got, names, await store.aget(("notes", "ayla"), "raw")

    found, got, names, gone = asyncio.run(main())
    assert [f.key for f in found] == ["deploy", "tea", "raw"] and found[2].score is None
    assert got.value == {"content": "Ayla drinks green tea."} and names == [("notes", "ayla")] and gone is None
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE person = 'ayla'") == 2
    with Client(dsn, embedder=False) as client:
        same = CogmemStore(client, tenant, person_label=1).search(("notes",), query="when do deploys go out?")
    assert [(f.key, f.score) for f in same] == [(f.key, pytest.approx(f.score)) for f in found[:2]]
