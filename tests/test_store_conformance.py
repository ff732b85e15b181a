"""LangGraph's own store tests, run against CogmemStore and AsyncCogmemStore (cogmem_pg/langgraph.py,
sql/180-store.sql), and a differential test against InMemoryStore and PostgresStore.

The test functions below are copied from the langgraph repository, libs/checkpoint-postgres/tests/
test_store.py (commit 15874cab8a85bf3604adabfdb6b0f5849c24a277) and test_async_store.py (commit
0a51438510ec87154470a4f5685daf00f3010dda), and CharacterEmbeddings from tests/embed_test_utils.py, with only
the fixtures changed: the stores are cogmem's, on this test's database, for the tenant "acme", instead of
PostgresStore and AsyncPostgresStore on a database of their own. Left out, as docs/clients.md says why:
test_nonnull_migrations (PostgresStore.MIGRATIONS, its private schema list) and test_large_batches_async
(60,000 operations; test_large_batches, 6,000 of them through threads, stays). The functions keep their
names and bodies; the annotations name our stores. Those files carry this notice:

    MIT License

    Copyright (c) 2024 LangChain, Inc.

    Permission is hereby granted, free of charge, to any person obtaining a copy
    of this software and associated documentation files (the "Software"), to deal
    in the Software without restriction, including without limitation the rights
    to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
    copies of the Software, and to permit persons to whom the Software is
    furnished to do so, subject to the following conditions:

    The above copyright notice and this permission notice shall be included in all
    copies or substantial portions of the Software.

    THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
    IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
    FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
    AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
    LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
    OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
    SOFTWARE.

The fixtures' stores run with cogmem's own embedding off (cogmem.embed = off, no client embedder): these
tests either give an index with an embedding function, which scores the search, or check no score, and a
put that embeds its memory inside a busy server can take longer than the six seconds LangGraph's TTL tests
give an item; tests/test_store.py searches with cogmem's own embedder.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from cogmem_pg.client import Client
from cogmem_pg.langgraph import AsyncCogmemStore, CogmemStore
from tests.conftest import one

TTL_SECONDS = 6
TTL_MINUTES = TTL_SECONDS / 60

VECTOR_TYPES = ["vector", "halfvec"]


# anyio's pytest plugin (anyio comes with httpx) runs the async tests and fixtures in one event loop.
@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class CharacterEmbeddings(Embeddings):
    """Simple character-frequency based embeddings using random projections."""

    def __init__(self, dims: int = 50, seed: int = 42):
        """Initialize with embedding dimensions and random seed."""
        self._rng = random.Random(seed)
        self.dims = dims
        # Create projection vector for each character lazily
        self._char_projections: defaultdict[str, list[float]] = defaultdict(
            lambda: [self._rng.gauss(0, 1 / math.sqrt(self.dims)) for _ in range(self.dims)]
        )

    def _embed_one(self, text: str) -> list[float]:
        """Embed a single text."""
        counts = Counter(text)
        total = sum(counts.values())

        if total == 0:
            return [0.0] * self.dims

        embedding = [0.0] * self.dims
        for char, count in counts.items():
            weight = count / total
            char_proj = self._char_projections[char]
            for i, proj in enumerate(char_proj):
                embedding[i] += weight * proj

        norm = math.sqrt(sum(x * x for x in embedding))
        if norm > 0:
            embedding = [x / norm for x in embedding]

        return embedding

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a list of documents."""
        return [self._embed_one(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query string."""
        return self._embed_one(text)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, CharacterEmbeddings) and self.dims == other.dims


@pytest.fixture
def fake_embeddings() -> CharacterEmbeddings:
    return CharacterEmbeddings(dims=500)


# -- the fixtures: cogmem's stores in place of PostgresStore's ------------------------------------------

DATABASE: dict[str, str] = {}


@pytest.fixture(autouse=True)
def _database(dsn, tenant) -> Iterator[None]:
    """This test's database and tenant, for _create_vector_store (LangGraph's tests call it without them)."""
    DATABASE.update(dsn=dsn, tenant=tenant)
    yield
    DATABASE.clear()


def quiet(dsn: str) -> str:
    """This test's DSN, cogmem's own embedding off (see the module's docstring)."""
    return f"{dsn} options='-c cogmem.embed=off'"


# LangGraph's sync tests enter it with `with`, its async ones with `async with`.
class _create_vector_store:
    """Create a store with vector search enabled: CogmemStore (`with`) or AsyncCogmemStore (`async with`,
    without a TTL, as the async file's)."""

    def __init__(
        self,
        vector_type: str,
        distance_type: str,
        fake_embeddings: Embeddings,
        text_fields: list[str] | None = None,
        enable_ttl: bool = True,
    ) -> None:
        self.index_config = {
            "dims": fake_embeddings.dims,
            "embed": fake_embeddings,
            "ann_index_config": {
                "vector_type": vector_type,
            },
            "distance_type": distance_type,
            "fields": text_fields,
        }
        self.ttl = {"default_ttl": 2, "refresh_on_read": True} if enable_ttl else None

    def __enter__(self) -> CogmemStore:
        self.client = Client(quiet(DATABASE["dsn"]), embedder=False)
        return CogmemStore(self.client, DATABASE["tenant"], index=self.index_config, ttl=self.ttl)

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    async def __aenter__(self) -> AsyncCogmemStore:
        self.opened = AsyncCogmemStore.from_conn_string(
            quiet(DATABASE["dsn"]), DATABASE["tenant"], index=self.index_config, embedder=False
        )
        return await self.opened.__aenter__()

    async def __aexit__(self, *exc: Any) -> None:
        await self.opened.__aexit__(*exc)


_vector_params = [
    (vector_type, distance_type, True)
    for vector_type in VECTOR_TYPES
    for distance_type in (["hamming"] if vector_type == "bit" else ["l2", "inner_product", "cosine"])
]
_vector_params += [(*_vector_params[-1][:2], False)]


# == test_store.py ====================================================================================


class TestStore:
    """LangGraph's test_store.py: its functions as methods, the fixtures CogmemStore's."""

    @pytest.fixture
    def store(self, dsn, tenant) -> Iterator[CogmemStore]:
        ttl_config = {
            "default_ttl": TTL_MINUTES,
            "refresh_on_read": True,
            "sweep_interval_minutes": TTL_MINUTES / 2,
        }
        with Client(quiet(dsn), embedder=False) as client:
            store = CogmemStore(client, tenant, ttl=ttl_config)
            store.start_ttl_sweeper()
            yield store

            store.stop_ttl_sweeper()

    @pytest.fixture(scope="function", params=_vector_params, ids=lambda p: f"{p[0]}_{p[1]}")
    def vector_store(self, request, fake_embeddings: Embeddings) -> Iterator[CogmemStore]:
        """Create a store with vector search enabled."""
        vector_type, distance_type, enable_ttl = request.param
        with _create_vector_store(vector_type, distance_type, fake_embeddings, enable_ttl=enable_ttl) as store:
            yield store

    def test_batch_order(self, store: CogmemStore) -> None:
        # Setup test data
        store.put(("test", "foo"), "key1", {"data": "value1"})
        store.put(("test", "bar"), "key2", {"data": "value2"})

        ops = [
            GetOp(namespace=("test", "foo"), key="key1"),
            PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
            SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            GetOp(namespace=("test",), key="key3"),
        ]

        results = store.batch(ops)
        assert len(results) == 5
        assert isinstance(results[0], Item)
        assert isinstance(results[0].value, dict)
        assert results[0].value == {"data": "value1"}
        assert results[0].key == "key1"
        assert results[1] is None  # Put operation returns None
        assert isinstance(results[2], list)
        assert len(results[2]) == 1
        assert isinstance(results[3], list)
        assert len(results[3]) > 0  # Should contain at least our test namespaces
        assert results[4] is None  # Non-existent key returns None

        # Test reordered operations
        ops_reordered = [
            SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
            GetOp(namespace=("test", "bar"), key="key2"),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
            PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
            GetOp(namespace=("test", "foo"), key="key1"),
        ]

        results_reordered = store.batch(ops_reordered)
        assert len(results_reordered) == 5
        assert isinstance(results_reordered[0], list)
        assert len(results_reordered[0]) >= 2  # Should find at least our two test items
        assert isinstance(results_reordered[1], Item)
        assert results_reordered[1].value == {"data": "value2"}
        assert results_reordered[1].key == "key2"
        assert isinstance(results_reordered[2], list)
        assert len(results_reordered[2]) > 0
        assert results_reordered[3] is None  # Put operation returns None
        assert isinstance(results_reordered[4], Item)
        assert results_reordered[4].value == {"data": "value1"}
        assert results_reordered[4].key == "key1"

    def test_batch_get_ops(self, store: CogmemStore) -> None:
        # Setup test data
        store.put(("test",), "key1", {"data": "value1"})
        store.put(("test",), "key2", {"data": "value2"})

        ops = [
            GetOp(namespace=("test",), key="key1"),
            GetOp(namespace=("test",), key="key2"),
            GetOp(namespace=("test",), key="key3"),  # Non-existent key
        ]

        results = store.batch(ops)

        assert len(results) == 3
        assert results[0] is not None
        assert results[1] is not None
        assert results[2] is None
        assert results[0].key == "key1"
        assert results[1].key == "key2"

    def test_batch_put_ops(self, store: CogmemStore) -> None:
        ops = [
            PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
            PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
            PutOp(namespace=("test",), key="key3", value=None),  # Delete operation
        ]

        results = store.batch(ops)
        assert len(results) == 3
        assert all(result is None for result in results)

        # Verify the puts worked
        item1 = store.get(("test",), "key1")
        item2 = store.get(("test",), "key2")
        item3 = store.get(("test",), "key3")

        assert item1 and item1.value == {"data": "value1"}
        assert item2 and item2.value == {"data": "value2"}
        assert item3 is None

    def test_batch_search_ops(self, store: CogmemStore) -> None:
        # Setup test data
        test_data = [
            (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
            (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
            (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
        ]
        for namespace, key, value in test_data:
            store.put(namespace, key, value)

        ops = [
            SearchOp(namespace_prefix=("test",), filter={"tag": "a"}, limit=10, offset=0),
            SearchOp(namespace_prefix=("test",), filter=None, limit=2, offset=0),
            SearchOp(namespace_prefix=("test", "foo"), filter=None, limit=10, offset=0),
        ]

        results = store.batch(ops)
        assert len(results) == 3

        # First search should find items with tag "a"
        assert len(results[0]) == 2
        assert all(item.value["tag"] == "a" for item in results[0])

        # Second search should return first 2 items
        assert len(results[1]) == 2

        # Third search should only find items in test/foo namespace
        assert len(results[2]) == 1
        assert results[2][0].namespace == ("test", "foo")

    def test_batch_list_namespaces_ops(self, store: CogmemStore) -> None:
        # Setup test data with various namespaces
        test_data = [
            (("test", "documents", "public"), "doc1", {"content": "public doc"}),
            (("test", "documents", "private"), "doc2", {"content": "private doc"}),
            (("test", "images", "public"), "img1", {"content": "public image"}),
            (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
        ]
        for namespace, key, value in test_data:
            store.put(namespace, key, value)

        ops = [
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
            ListNamespacesOp(
                match_conditions=[MatchCondition("suffix", "public")],
                max_depth=None,
                limit=10,
                offset=0,
            ),
        ]

        results = store.batch(ops)
        assert len(results) == 3

        # First operation should list all namespaces
        assert len(results[0]) == len(test_data)

        # Second operation should only return namespaces up to depth 2
        assert all(len(ns) <= 2 for ns in results[1])

        # Third operation should only return namespaces ending with "public"
        assert all(ns[-1] == "public" for ns in results[2])

    def test_basic_store_ops(self, store) -> None:
        namespace = ("test", "documents")
        item_id = "doc1"
        item_value = {"title": "Test Document", "content": "Hello, World!"}

        store.put(namespace, item_id, item_value)
        item = store.get(namespace, item_id)

        assert item
        assert item.namespace == namespace
        assert item.key == item_id
        assert item.value == item_value

        # Test update
        updated_value = {"title": "Updated Document", "content": "Hello, Updated!"}
        store.put(namespace, item_id, updated_value)
        updated_item = store.get(namespace, item_id)

        assert updated_item.value == updated_value
        assert updated_item.updated_at > item.updated_at

        # Test get from non-existent namespace
        different_namespace = ("test", "other_documents")
        item_in_different_namespace = store.get(different_namespace, item_id)
        assert item_in_different_namespace is None

        # Test delete
        store.delete(namespace, item_id)
        deleted_item = store.get(namespace, item_id)
        assert deleted_item is None

    def test_list_namespaces(self, store) -> None:
        # Create test data with various namespaces
        test_namespaces = [
            ("test", "documents", "public"),
            ("test", "documents", "private"),
            ("test", "images", "public"),
            ("test", "images", "private"),
            ("prod", "documents", "public"),
            ("prod", "documents", "private"),
        ]

        # Insert test data
        for namespace in test_namespaces:
            store.put(namespace, "dummy", {"content": "dummy"})

        # Test listing with various filters
        all_namespaces = store.list_namespaces()
        assert len(all_namespaces) == len(test_namespaces)

        # Test prefix filtering
        test_prefix_namespaces = store.list_namespaces(prefix=["test"])
        assert len(test_prefix_namespaces) == 4
        assert all(ns[0] == "test" for ns in test_prefix_namespaces)

        # Test suffix filtering
        public_namespaces = store.list_namespaces(suffix=["public"])
        assert len(public_namespaces) == 3
        assert all(ns[-1] == "public" for ns in public_namespaces)

        # Test max depth
        depth_2_namespaces = store.list_namespaces(max_depth=2)
        assert all(len(ns) <= 2 for ns in depth_2_namespaces)

        # Test pagination
        paginated_namespaces = store.list_namespaces(limit=3)
        assert len(paginated_namespaces) == 3

        # Cleanup
        for namespace in test_namespaces:
            store.delete(namespace, "dummy")

    def test_search(self, store) -> None:
        # Create test data
        test_data = [
            (
                ("test", "docs"),
                "doc1",
                {"title": "First Doc", "author": "Alice", "tags": ["important"]},
            ),
            (
                ("test", "docs"),
                "doc2",
                {"title": "Second Doc", "author": "Bob", "tags": ["draft"]},
            ),
            (
                ("test", "images"),
                "img1",
                {"title": "Image 1", "author": "Alice", "tags": ["final"]},
            ),
        ]

        for namespace, key, value in test_data:
            store.put(namespace, key, value)

        # Test basic search
        all_items = store.search(["test"])
        assert len(all_items) == 3

        # Test namespace filtering
        docs_items = store.search(["test", "docs"])
        assert len(docs_items) == 2
        assert all(item.namespace == ("test", "docs") for item in docs_items)

        # Test value filtering
        alice_items = store.search(["test"], filter={"author": "Alice"})
        assert len(alice_items) == 2
        assert all(item.value["author"] == "Alice" for item in alice_items)

        # Test pagination
        paginated_items = store.search(["test"], limit=2)
        assert len(paginated_items) == 2

        offset_items = store.search(["test"], offset=2)
        assert len(offset_items) == 1

        # Cleanup
        for namespace, key, _ in test_data:
            store.delete(namespace, key)

    def test_numeric_comparison_filters(self, store) -> None:
        # Regression test for #7684: `value->>key` extracts JSON as text, so the
        # comparison operators compared lexicographically ("9" >= "10" is true).
        # They must compare numerically for int/float values.
        namespace = ("test", "scores")
        for key, score in [("a", 2), ("b", 9), ("c", 10), ("d", 11)]:
            store.put(namespace, key, {"score": score})

        def scores(filter: dict) -> list:
            return sorted(item.value["score"] for item in store.search(namespace, filter=filter))

        assert scores({"score": {"$gte": 10}}) == [10, 11]  # not [9, 10, 11]
        assert scores({"score": {"$gt": 9}}) == [10, 11]
        assert scores({"score": {"$lt": 10}}) == [2, 9]
        assert scores({"score": {"$lte": 9}}) == [2, 9]

        # Floats compare numerically too.
        store.put(namespace, "e", {"score": 9.5})
        assert scores({"score": {"$gt": 9}}) == [9.5, 10, 11]

        # String comparisons remain lexicographic (unchanged behavior).
        str_namespace = ("test", "names")
        for key, name in [("a", "apple"), ("b", "banana")]:
            store.put(str_namespace, key, {"name": name})
        names = sorted(item.value["name"] for item in store.search(str_namespace, filter={"name": {"$gt": "apple"}}))
        assert names == ["banana"]

        # Cleanup
        for key in ["a", "b", "c", "d", "e"]:
            store.delete(namespace, key)
        for key in ["a", "b"]:
            store.delete(str_namespace, key)

    def test_vector_store_initialization(self, vector_store: CogmemStore, fake_embeddings: CharacterEmbeddings) -> None:
        """Test store initialization with embedding config."""
        # Store should be initialized with embedding config
        assert vector_store.index_config is not None
        assert vector_store.index_config["dims"] == fake_embeddings.dims
        assert vector_store.index_config["embed"] == fake_embeddings

    def test_vector_insert_with_auto_embedding(self, vector_store: CogmemStore) -> None:
        """Test inserting items that get auto-embedded."""
        docs = [
            ("doc1", {"text": "short text"}),
            ("doc2", {"text": "longer text document"}),
            ("doc3", {"text": "longest text document here"}),
            ("doc4", {"description": "text in description field"}),
            ("doc5", {"content": "text in content field"}),
            ("doc6", {"body": "text in body field"}),
        ]

        for key, value in docs:
            vector_store.put(("test",), key, value)

        results = vector_store.search(("test",), query="long text")
        assert len(results) > 0

        doc_order = [r.key for r in results]
        assert "doc2" in doc_order
        assert "doc3" in doc_order

    def test_vector_update_with_embedding(self, vector_store: CogmemStore) -> None:
        """Test that updating items properly updates their embeddings."""
        vector_store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
        vector_store.put(("test",), "doc2", {"text": "something about dogs"})
        vector_store.put(("test",), "doc3", {"text": "text about birds"})

        results_initial = vector_store.search(("test",), query="Zany Xerxes")
        assert len(results_initial) > 0
        assert results_initial[0].key == "doc1"
        initial_score = results_initial[0].score

        vector_store.put(("test",), "doc1", {"text": "new text about dogs"})

        results_after = vector_store.search(("test",), query="Zany Xerxes")
        after_score = next((r.score for r in results_after if r.key == "doc1"), 0.0)
        assert after_score < initial_score

        results_new = vector_store.search(("test",), query="new text about dogs")
        for r in results_new:
            if r.key == "doc1":
                assert r.score > after_score

        # Don't index this one
        vector_store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
        results_new = vector_store.search(("test",), query="new text about dogs", limit=3)
        assert not any(r.key == "doc4" for r in results_new)

    @pytest.mark.parametrize("refresh_ttl", [True, False])
    def test_vector_search_with_filters(self, vector_store: CogmemStore, refresh_ttl: bool) -> None:
        """Test combining vector search with filters."""
        # Insert test documents
        docs = [
            ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
            ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
            ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
            ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
        ]

        for key, value in docs:
            vector_store.put(("test",), key, value)

        results = vector_store.search(("test",), query="apple", filter={"color": "red"}, refresh_ttl=refresh_ttl)
        assert len(results) == 2
        assert results[0].key == "doc1"

        results = vector_store.search(("test",), query="car", filter={"color": "red"}, refresh_ttl=refresh_ttl)
        assert len(results) == 2
        assert results[0].key == "doc2"

        results = vector_store.search(
            ("test",),
            query="bbbbluuu",
            filter={"score": {"$gt": 3.2}},
            refresh_ttl=refresh_ttl,
        )
        assert len(results) == 3
        assert results[0].key == "doc4"

        # Multiple filters
        results = vector_store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
        assert len(results) == 1
        assert results[0].key == "doc3"

    def test_vector_search_pagination(self, vector_store: CogmemStore) -> None:
        """Test pagination with vector search."""
        # Insert multiple similar documents
        for i in range(5):
            vector_store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})

        # Test with different page sizes
        results_page1 = vector_store.search(("test",), query="test", limit=2)
        results_page2 = vector_store.search(("test",), query="test", limit=2, offset=2)

        assert len(results_page1) == 2
        assert len(results_page2) == 2
        assert results_page1[0].key != results_page2[0].key

        # Get all results
        all_results = vector_store.search(("test",), query="test", limit=10)
        assert len(all_results) == 5

    def test_vector_search_edge_cases(self, vector_store: CogmemStore) -> None:
        """Test edge cases in vector search."""
        vector_store.put(("test",), "doc1", {"text": "test document"})

        results = vector_store.search(("test",), query="")
        assert len(results) == 1

        results = vector_store.search(("test",), query=None)
        assert len(results) == 1

        long_query = "test " * 100
        results = vector_store.search(("test",), query=long_query)
        assert len(results) == 1

        special_query = "test!@#$%^&*()"
        results = vector_store.search(("test",), query=special_query)
        assert len(results) == 1

    @pytest.mark.parametrize(
        "vector_type,distance_type",
        [
            ("vector", "cosine"),
            ("vector", "inner_product"),
            ("halfvec", "cosine"),
            ("halfvec", "inner_product"),
        ],
    )
    def test_embed_with_path_sync(
        self,
        request: Any,
        fake_embeddings: CharacterEmbeddings,
        vector_type: str,
        distance_type: str,
    ) -> None:
        """Test vector search with specific text fields in Postgres store."""
        with _create_vector_store(
            vector_type,
            distance_type,
            fake_embeddings,
            text_fields=["key0", "key1", "key3"],
        ) as store:
            # This will have 2 vectors representing it
            doc1 = {
                # Omit key0 - check it doesn't raise an error
                "key1": "xxx",
                "key2": "yyy",
                "key3": "zzz",
            }
            # This will have 3 vectors representing it
            doc2 = {
                "key0": "uuu",
                "key1": "vvv",
                "key2": "www",
                "key3": "xxx",
            }
            store.put(("test",), "doc1", doc1)
            store.put(("test",), "doc2", doc2)

            # doc2.key3 and doc1.key1 both would have the highest score
            results = store.search(("test",), query="xxx")
            assert len(results) == 2
            assert results[0].key != results[1].key
            ascore = results[0].score
            bscore = results[1].score
            assert ascore == pytest.approx(bscore, abs=1e-3)

            # ~Only match doc2
            results = store.search(("test",), query="uuu")
            assert len(results) == 2
            assert results[0].key != results[1].key
            assert results[0].key == "doc2"
            assert results[0].score > results[1].score
            assert ascore == pytest.approx(results[0].score, abs=1e-3)

            # ~Only match doc1
            results = store.search(("test",), query="zzz")
            assert len(results) == 2
            assert results[0].key != results[1].key
            assert results[0].key == "doc1"
            assert results[0].score > results[1].score
            assert ascore == pytest.approx(results[0].score, abs=1e-3)

            # Un-indexed - will have low results for both. Not zero (because we're projecting)
            # but less than the above.
            results = store.search(("test",), query="www")
            assert len(results) == 2
            assert results[0].key != results[1].key
            assert results[0].score < ascore
            assert results[1].score < ascore

    @pytest.mark.parametrize(
        "vector_type,distance_type",
        [
            ("vector", "cosine"),
            ("vector", "inner_product"),
            ("halfvec", "cosine"),
            ("halfvec", "inner_product"),
        ],
    )
    def test_embed_with_path_operation_config(
        self,
        request: Any,
        fake_embeddings: CharacterEmbeddings,
        vector_type: str,
        distance_type: str,
    ) -> None:
        """Test operation-level field configuration for vector search."""

        with _create_vector_store(
            vector_type,
            distance_type,
            fake_embeddings,
            text_fields=["key17"],  # Default fields that won't match our test data
        ) as store:
            doc3 = {
                "key0": "aaa",
                "key1": "bbb",
                "key2": "ccc",
                "key3": "ddd",
            }
            doc4 = {
                "key0": "eee",
                "key1": "bbb",  # Same as doc3.key1
                "key2": "fff",
                "key3": "ggg",
            }

            store.put(("test",), "doc3", doc3, index=["key0", "key1"])
            store.put(("test",), "doc4", doc4, index=["key1", "key3"])

            results = store.search(("test",), query="aaa")
            assert len(results) == 2
            assert results[0].key == "doc3"
            assert len(set(r.key for r in results)) == 2
            assert results[0].score > results[1].score

            results = store.search(("test",), query="ggg")
            assert len(results) == 2
            assert results[0].key == "doc4"
            assert results[0].score > results[1].score

            results = store.search(("test",), query="bbb")
            assert len(results) == 2
            assert results[0].key != results[1].key
            assert results[0].score == pytest.approx(results[1].score, abs=1e-3)

            results = store.search(("test",), query="ccc")
            assert len(results) == 2
            assert all(r.score < 0.9 for r in results)  # Unindexed field should have low scores

            # Test index=False behavior
            doc5 = {
                "key0": "hhh",
                "key1": "iii",
            }
            store.put(("test",), "doc5", doc5, index=False)
            results = store.search(("test",))
            assert len(results) == 3
            assert all(r.score is None for r in results), f"{results}"
            assert any(r.key == "doc5" for r in results)

            results = store.search(("test",), query="hhh")
            # TODO: We don't currently fill in additional results if there are not enough
            # returned during vector search.
            # assert len(results) == 3
            # doc5_result = next(r for r in results if r.key == "doc5")
            # assert doc5_result.score is None

    @pytest.mark.parametrize(
        "vector_type,distance_type",
        [
            ("vector", "cosine"),
            ("vector", "inner_product"),
            ("halfvec", "l2"),
        ],
    )
    @pytest.mark.parametrize("query", ["aaa", "bbb", "ccc", "abcd", "poisson"])
    def test_scores(
        self,
        fake_embeddings: CharacterEmbeddings,
        vector_type: str,
        distance_type: str,
        query: str,
    ) -> None:
        """Test operation-level field configuration for vector search."""
        with _create_vector_store(
            vector_type,
            distance_type,
            fake_embeddings,
            text_fields=["key0"],
        ) as store:
            doc = {
                "key0": "aaa",
            }
            store.put(("test",), "doc", doc, index=["key0", "key1"])

            results = store.search((), query=query)
            vec0 = fake_embeddings.embed_query(doc["key0"])
            vec1 = fake_embeddings.embed_query(query)
            if distance_type == "cosine":
                similarities = _cosine_similarity(vec1, [vec0])
            elif distance_type == "inner_product":
                similarities = _inner_product(vec1, [vec0])
            elif distance_type == "l2":
                similarities = _neg_l2_distance(vec1, [vec0])

            assert len(results) == 1
            assert results[0].score == pytest.approx(similarities[0], abs=1e-3)

    def test_store_ttl(self, store):
        # Assumes a TTL of 1 minute = 60 seconds
        ns = ("foo",)
        store.put(
            ns,
            key="item1",
            value={"foo": "bar"},
            ttl=TTL_MINUTES,  # type: ignore
        )
        time.sleep(TTL_SECONDS - 2)
        res = store.get(ns, key="item1", refresh_ttl=True)
        assert res is not None
        time.sleep(TTL_SECONDS - 2)
        results = store.search(ns, query="foo", refresh_ttl=True)
        assert len(results) == 1
        time.sleep(TTL_SECONDS - 2)
        res = store.get(ns, key="item1", refresh_ttl=False)
        assert res is not None
        time.sleep(TTL_SECONDS - 1)
        # Now has been (TTL_SECONDS-2)*2 > TTL_SECONDS + TTL_SECONDS/2
        res = store.search(ns, query="bar", refresh_ttl=False)
        assert len(res) == 0

    @pytest.mark.parametrize(
        "vector_type,distance_type",
        [
            ("vector", "cosine"),
            ("vector", "inner_product"),
            ("halfvec", "cosine"),
            ("halfvec", "inner_product"),
        ],
    )
    def test_non_ascii(
        self,
        request: Any,
        fake_embeddings: CharacterEmbeddings,
        vector_type: str,
        distance_type: str,
    ) -> None:
        """Test support for non-ascii characters"""
        with _create_vector_store(vector_type, distance_type, fake_embeddings) as store:
            store.put(("user_123", "memories"), "1", {"text": "这是中文"})  # Chinese
            store.put(("user_123", "memories"), "2", {"text": "これは日本語です"})  # Japanese
            store.put(("user_123", "memories"), "3", {"text": "이건 한국어야"})  # Korean
            store.put(("user_123", "memories"), "4", {"text": "Это русский"})  # Russian
            store.put(("user_123", "memories"), "5", {"text": "यह रूसी है"})  # Hindi

            result1 = store.search(("user_123", "memories"), query="这是中文")
            result2 = store.search(("user_123", "memories"), query="これは日本語です")
            result3 = store.search(("user_123", "memories"), query="이건 한국어야")
            result4 = store.search(("user_123", "memories"), query="Это русский")
            result5 = store.search(("user_123", "memories"), query="यह रूसी है")

            assert result1[0].key == "1"
            assert result2[0].key == "2"
            assert result3[0].key == "3"
            assert result4[0].key == "4"
            assert result5[0].key == "5"


def _cosine_similarity(X: list[float], Y: list[list[float]]) -> list[float]:
    """
    Compute cosine similarity between a vector X and a matrix Y.
    Lazy import numpy for efficiency.
    """

    similarities = []
    for y in Y:
        dot_product = sum(a * b for a, b in zip(X, y, strict=False))
        norm1 = sum(a * a for a in X) ** 0.5
        norm2 = sum(a * a for a in y) ** 0.5
        similarity = dot_product / (norm1 * norm2) if norm1 > 0 and norm2 > 0 else 0.0
        similarities.append(similarity)

    return similarities


def _inner_product(X: list[float], Y: list[list[float]]) -> list[float]:
    """
    Compute inner product between a vector X and a matrix Y.
    Lazy import numpy for efficiency.
    """

    similarities = []
    for y in Y:
        similarity = sum(a * b for a, b in zip(X, y, strict=False))
        similarities.append(similarity)

    return similarities


def _neg_l2_distance(X: list[float], Y: list[list[float]]) -> list[float]:
    """
    Compute l2 distance between a vector X and a matrix Y.
    Lazy import numpy for efficiency.
    """

    similarities = []
    for y in Y:
        similarity = sum((a - b) ** 2 for a, b in zip(X, y, strict=False)) ** 0.5
        similarities.append(-similarity)

    return similarities


# == test_async_store.py ==============================================================================


@pytest.mark.anyio
class TestAsyncStore:
    """LangGraph's test_async_store.py: its functions as methods, the fixtures AsyncCogmemStore's."""

    @pytest.fixture
    async def store(self, dsn, tenant) -> AsyncIterator[AsyncCogmemStore]:
        ttl_config = {
            "default_ttl": TTL_MINUTES,
            "refresh_on_read": True,
            "sweep_interval_minutes": TTL_MINUTES / 2,
        }
        async with AsyncCogmemStore.from_conn_string(quiet(dsn), tenant, ttl=ttl_config, embedder=False) as store:
            await store.start_ttl_sweeper()
            yield store
            await store.stop_ttl_sweeper()

    @pytest.fixture(
        scope="function",
        params=[
            (vector_type, distance_type)
            for vector_type in VECTOR_TYPES
            for distance_type in (["hamming"] if vector_type == "bit" else ["l2", "inner_product", "cosine"])
        ],
        ids=lambda p: f"{p[0]}_{p[1]}",
    )
    async def vector_store(self, request, fake_embeddings: CharacterEmbeddings) -> AsyncIterator[AsyncCogmemStore]:
        """Create a store with vector search enabled."""
        vector_type, distance_type = request.param
        async with _create_vector_store(vector_type, distance_type, fake_embeddings) as store:
            yield store

    async def test_no_running_loop(self, store: AsyncCogmemStore) -> None:
        with pytest.raises(asyncio.InvalidStateError):
            store.put(("foo", "bar"), "baz", {"val": "baz"})
        with pytest.raises(asyncio.InvalidStateError):
            store.get(("foo", "bar"), "baz")
        with pytest.raises(asyncio.InvalidStateError):
            store.delete(("foo", "bar"), "baz")
        with pytest.raises(asyncio.InvalidStateError):
            store.search(("foo", "bar"))
        with pytest.raises(asyncio.InvalidStateError):
            store.list_namespaces(prefix=("foo",))
        with pytest.raises(asyncio.InvalidStateError):
            store.batch([PutOp(namespace=("foo", "bar"), key="baz", value={"val": "baz"})])
        with ThreadPoolExecutor(max_workers=1) as executor:
            future = executor.submit(store.put, ("foo", "bar"), "baz", {"val": "baz"})
            result = await asyncio.wrap_future(future)
            assert result is None
            future = executor.submit(store.get, ("foo", "bar"), "baz")
            result = await asyncio.wrap_future(future)
            assert result.value == {"val": "baz"}
            result = await asyncio.wrap_future(executor.submit(store.list_namespaces, prefix=("foo",)))

    async def test_large_batches(self, request: Any, store: AsyncCogmemStore) -> None:
        N = 100  # less important that we are performant here
        M = 10

        with ThreadPoolExecutor(max_workers=10) as executor:
            futures = []
            for m in range(M):
                for i in range(N):
                    futures += [
                        executor.submit(
                            store.put,
                            ("test", "foo", "bar", "baz", str(m % 2)),
                            f"key{i}",
                            value={"foo": "bar" + str(i)},
                        ),
                        executor.submit(
                            store.get,
                            ("test", "foo", "bar", "baz", str(m % 2)),
                            f"key{i}",
                        ),
                        executor.submit(
                            store.list_namespaces,
                            prefix=None,
                            max_depth=m + 1,
                        ),
                        executor.submit(
                            store.search,
                            ("test",),
                        ),
                        executor.submit(
                            store.put,
                            ("test", "foo", "bar", "baz", str(m % 2)),
                            f"key{i}",
                            value={"foo": "bar" + str(i)},
                        ),
                        executor.submit(
                            store.put,
                            ("test", "foo", "bar", "baz", str(m % 2)),
                            f"key{i}",
                            None,
                        ),
                    ]

            results = await asyncio.gather(*(asyncio.wrap_future(future) for future in futures))
        assert len(results) == M * N * 6

    async def test_abatch_order(self, store: AsyncCogmemStore) -> None:
        # Setup test data
        await store.aput(("test", "foo"), "key1", {"data": "value1"})
        await store.aput(("test", "bar"), "key2", {"data": "value2"})

        ops = [
            GetOp(namespace=("test", "foo"), key="key1"),
            PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
            SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            GetOp(namespace=("test",), key="key3"),
        ]

        results = await store.abatch(ops)
        assert len(results) == 5
        assert isinstance(results[0], Item)
        assert isinstance(results[0].value, dict)
        assert results[0].value == {"data": "value1"}
        assert results[0].key == "key1"
        assert results[1] is None
        assert isinstance(results[2], list)
        assert len(results[2]) == 1
        assert isinstance(results[3], list)
        assert ("test", "foo") in results[3] and ("test", "bar") in results[3]
        assert results[4] is None

        ops_reordered = [
            SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
            GetOp(namespace=("test", "bar"), key="key2"),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
            PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
            GetOp(namespace=("test", "foo"), key="key1"),
        ]

        results_reordered = await store.abatch(ops_reordered)
        assert len(results_reordered) == 5
        assert isinstance(results_reordered[0], list)
        assert len(results_reordered[0]) == 2
        assert isinstance(results_reordered[1], Item)
        assert results_reordered[1].value == {"data": "value2"}
        assert results_reordered[1].key == "key2"
        assert isinstance(results_reordered[2], list)
        assert ("test", "foo") in results_reordered[2] and (
            "test",
            "bar",
        ) in results_reordered[2]
        assert results_reordered[3] is None
        assert isinstance(results_reordered[4], Item)
        assert results_reordered[4].value == {"data": "value1"}
        assert results_reordered[4].key == "key1"

    async def test_batch_get_ops(self, store: AsyncCogmemStore) -> None:
        # Setup test data
        await store.aput(("test",), "key1", {"data": "value1"})
        await store.aput(("test",), "key2", {"data": "value2"})

        ops = [
            GetOp(namespace=("test",), key="key1"),
            GetOp(namespace=("test",), key="key2"),
            GetOp(namespace=("test",), key="key3"),
        ]

        results = await store.abatch(ops)

        assert len(results) == 3
        assert results[0] is not None
        assert results[1] is not None
        assert results[2] is None
        assert results[0].key == "key1"
        assert results[1].key == "key2"

    async def test_batch_put_ops(self, store: AsyncCogmemStore) -> None:
        ops = [
            PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
            PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
            PutOp(namespace=("test",), key="key3", value=None),
        ]

        results = await store.abatch(ops)

        assert len(results) == 3
        assert all(result is None for result in results)

        # Verify the puts worked
        items = await store.asearch(["test"], limit=10)
        assert len(items) == 2  # key3 had None value so wasn't stored

    async def test_batch_search_ops(self, store: AsyncCogmemStore) -> None:
        # Setup test data
        await store.aput(("test", "foo"), "key1", {"data": "value1"})
        await store.aput(("test", "bar"), "key2", {"data": "value2"})

        ops = [
            SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
            SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
        ]

        results = await store.abatch(ops)

        assert len(results) == 2
        assert len(results[0]) == 1  # Filtered results
        assert len(results[1]) == 2  # All results

    async def test_batch_list_namespaces_ops(self, store: AsyncCogmemStore) -> None:
        # Setup test data
        await store.aput(("test", "namespace1"), "key1", {"data": "value1"})
        await store.aput(("test", "namespace2"), "key2", {"data": "value2"})

        ops = [ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0)]

        results = await store.abatch(ops)

        assert len(results) == 1
        assert len(results[0]) == 2
        assert ("test", "namespace1") in results[0]
        assert ("test", "namespace2") in results[0]

    async def test_vector_store_initialization(
        self, vector_store: AsyncCogmemStore, fake_embeddings: CharacterEmbeddings
    ) -> None:
        """Test store initialization with embedding config."""
        assert vector_store.index_config is not None
        assert vector_store.index_config["dims"] == fake_embeddings.dims
        if isinstance(vector_store.index_config["embed"], Embeddings):
            assert vector_store.index_config["embed"] == fake_embeddings

    async def test_vector_insert_with_auto_embedding(
        self,
        vector_store: AsyncCogmemStore,
    ) -> None:
        """Test inserting items that get auto-embedded."""
        docs = [
            ("doc1", {"text": "short text"}),
            ("doc2", {"text": "longer text document"}),
            ("doc3", {"text": "longest text document here"}),
            ("doc4", {"description": "text in description field"}),
            ("doc5", {"content": "text in content field"}),
            ("doc6", {"body": "text in body field"}),
        ]

        for key, value in docs:
            await vector_store.aput(("test",), key, value)

        results = await vector_store.asearch(("test",), query="long text")
        assert len(results) > 0

        doc_order = [r.key for r in results]
        assert "doc2" in doc_order
        assert "doc3" in doc_order

    async def test_vector_update_with_embedding(self, vector_store: AsyncCogmemStore) -> None:
        """Test that updating items properly updates their embeddings."""
        await vector_store.aput(("test",), "doc1", {"text": "zany zebra Xerxes"})
        await vector_store.aput(("test",), "doc2", {"text": "something about dogs"})
        await vector_store.aput(("test",), "doc3", {"text": "text about birds"})

        results_initial = await vector_store.asearch(("test",), query="Zany Xerxes")
        assert len(results_initial) > 0
        assert results_initial[0].key == "doc1"
        initial_score = results_initial[0].score

        await vector_store.aput(("test",), "doc1", {"text": "new text about dogs"})

        results_after = await vector_store.asearch(("test",), query="Zany Xerxes")
        after_score = next((r.score for r in results_after if r.key == "doc1"), 0.0)
        assert after_score < initial_score

        results_new = await vector_store.asearch(("test",), query="new text about dogs")
        for r in results_new:
            if r.key == "doc1":
                assert r.score > after_score

        # Don't index this one
        await vector_store.aput(("test",), "doc4", {"text": "new text about dogs"}, index=False)
        results_new = await vector_store.asearch(("test",), query="new text about dogs", limit=3)
        assert not any(r.key == "doc4" for r in results_new)

    async def test_vector_search_with_filters(self, vector_store: AsyncCogmemStore) -> None:
        """Test combining vector search with filters."""
        docs = [
            ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
            ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
            ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
            ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
        ]

        for key, value in docs:
            await vector_store.aput(("test",), key, value)

        results = await vector_store.asearch(("test",), query="apple", filter={"color": "red"})
        assert len(results) == 2
        assert results[0].key == "doc1"

        results = await vector_store.asearch(("test",), query="car", filter={"color": "red"})
        assert len(results) == 2
        assert results[0].key == "doc2"

        results = await vector_store.asearch(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
        assert len(results) == 3
        assert results[0].key == "doc4"

        results = await vector_store.asearch(
            ("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"}
        )
        assert len(results) == 1
        assert results[0].key == "doc3"

    async def test_vector_search_pagination(self, vector_store: AsyncCogmemStore) -> None:
        """Test pagination with vector search."""
        for i in range(5):
            await vector_store.aput(("test",), f"doc{i}", {"text": f"test document number {i}"})

        results_page1 = await vector_store.asearch(("test",), query="test", limit=2)
        results_page2 = await vector_store.asearch(("test",), query="test", limit=2, offset=2)

        assert len(results_page1) == 2
        assert len(results_page2) == 2
        assert results_page1[0].key != results_page2[0].key

        all_results = await vector_store.asearch(("test",), query="test", limit=10)
        assert len(all_results) == 5

    async def test_vector_search_edge_cases(self, vector_store: AsyncCogmemStore) -> None:
        """Test edge cases in vector search."""
        await vector_store.aput(("test",), "doc1", {"text": "test document"})

        perfect_match = await vector_store.asearch(("test",), query="text test document")
        perfect_score = perfect_match[0].score

        results = await vector_store.asearch(("test",), query="")
        assert len(results) == 1
        assert results[0].score is None

        results = await vector_store.asearch(("test",), query=None)
        assert len(results) == 1
        assert results[0].score is None

        long_query = "foo " * 100
        results = await vector_store.asearch(("test",), query=long_query)
        assert len(results) == 1
        assert results[0].score < perfect_score

        special_query = "test!@#$%^&*()"
        results = await vector_store.asearch(("test",), query=special_query)
        assert len(results) == 1
        assert results[0].score < perfect_score

    @pytest.mark.parametrize(
        "vector_type,distance_type",
        [
            *itertools.product(["vector", "halfvec"], ["cosine", "inner_product", "l2"]),
        ],
    )
    async def test_embed_with_path(
        self,
        request: Any,
        fake_embeddings: CharacterEmbeddings,
        vector_type: str,
        distance_type: str,
    ) -> None:
        """Test vector search with specific text fields in Postgres store."""
        async with _create_vector_store(
            vector_type,
            distance_type,
            fake_embeddings,
            text_fields=["key0", "key1", "key3"],
        ) as store:
            # This will have 2 vectors representing it
            doc1 = {
                # Omit key0 - check it doesn't raise an error
                "key1": "xxx",
                "key2": "yyy",
                "key3": "zzz",
            }
            # This will have 3 vectors representing it
            doc2 = {
                "key0": "uuu",
                "key1": "vvv",
                "key2": "www",
                "key3": "xxx",
            }
            await store.aput(("test",), "doc1", doc1)
            await store.aput(("test",), "doc2", doc2)

            # doc2.key3 and doc1.key1 both would have the highest score
            results = await store.asearch(("test",), query="xxx")
            assert len(results) == 2
            assert results[0].key != results[1].key
            ascore = results[0].score
            bscore = results[1].score
            assert ascore == pytest.approx(bscore, abs=1e-3)

            results = await store.asearch(("test",), query="uuu")
            assert len(results) == 2
            assert results[0].key != results[1].key
            assert results[0].key == "doc2"
            assert results[0].score > results[1].score
            assert ascore == pytest.approx(results[0].score, abs=1e-3)

            # Un-indexed - will have low results for both. Not zero (because we're projecting)
            # but less than the above.
            results = await store.asearch(("test",), query="www")
            assert len(results) == 2
            assert results[0].score < ascore
            assert results[1].score < ascore

    @pytest.mark.parametrize(
        "vector_type,distance_type",
        [
            *itertools.product(["vector", "halfvec"], ["cosine", "inner_product", "l2"]),
        ],
    )
    async def test_search_sorting(
        self,
        request: Any,
        fake_embeddings: CharacterEmbeddings,
        vector_type: str,
        distance_type: str,
    ) -> None:
        """Test operation-level field configuration for vector search."""
        async with _create_vector_store(
            vector_type,
            distance_type,
            fake_embeddings,
            text_fields=["key1"],  # Default fields that won't match our test data
        ) as store:
            amatch = {
                "key1": "mmm",
            }

            await store.aput(("test", "M"), "M", amatch)
            N = 100
            for i in range(N):
                await store.aput(("test", "A"), f"A{i}", {"key1": "no"})
            for i in range(N):
                await store.aput(("test", "Z"), f"Z{i}", {"key1": "no"})

            results = await store.asearch(("test",), query="mmm", limit=10)
            assert len(results) == 10
            assert len(set(r.key for r in results)) == 10
            assert results[0].key == "M"
            assert results[0].score > results[1].score

    async def test_store_ttl(self, store):
        # Assumes a TTL of 1 minute = 60 seconds
        ns = ("foo",)
        await store.start_ttl_sweeper()
        await store.aput(
            ns,
            key="item1",
            value={"foo": "bar"},
            ttl=TTL_MINUTES,  # type: ignore
        )
        await asyncio.sleep(TTL_SECONDS - 2)
        res = await store.aget(ns, key="item1", refresh_ttl=True)
        assert res is not None
        await asyncio.sleep(TTL_SECONDS - 2)
        results = await store.asearch(ns, query="foo", refresh_ttl=True)
        assert len(results) == 1
        await asyncio.sleep(TTL_SECONDS - 2)
        res = await store.aget(ns, key="item1", refresh_ttl=False)
        assert res is not None
        await asyncio.sleep(TTL_SECONDS - 1)
        # Now has been (TTL_SECONDS-2)*2 > TTL_SECONDS + TTL_SECONDS/2
        results = await store.asearch(ns, query="bar", refresh_ttl=False)
        assert len(results) == 0


# == ours: the sweeper really deletes; a differential test against InMemoryStore and PostgresStore ========


def test_the_sweeper_deletes_expired_items_and_their_memories(dsn, tenant, db) -> None:
    ttl = {"default_ttl": TTL_MINUTES, "sweep_interval_minutes": TTL_MINUTES / 2}
    with Client(quiet(dsn), embedder=False) as client:
        store = CogmemStore(client, tenant, ttl=ttl)
        store.put(("foo",), "item1", {"content": "a note that lives six seconds"})
        memory_id = one(db, "SELECT memory_id FROM cogmem.store_items WHERE key = 'item1'")
        assert store.sweep_ttl() == 0
        assert store.start_ttl_sweeper().done() is False
        time.sleep(TTL_SECONDS + 2 * TTL_SECONDS / 2)  # expired, and swept every three seconds since
        assert one(db, "SELECT count(*) FROM cogmem.store_items") == 0
        assert one(db, "SELECT count(*) FROM cogmem.memories WHERE memory_id = %s", (memory_id,)) == 0
        assert store.stop_ttl_sweeper(timeout=5) is True


LABELS = st.sampled_from(["a", "b", "ğü"])
NAMESPACES = st.lists(LABELS, min_size=1, max_size=2).map(tuple)
KEYS = st.sampled_from(["k1", "k2", "k3"])
WORDS = st.text(alphabet="abcdefgh çığ", min_size=1, max_size=10)
# Every value has every field: PostgresStore and InMemoryStore keep a field's old vector when a new value
# lacks the field (cogmem replaces them all), which these sequences do not test.
VALUES = st.fixed_dictionaries({"n": st.integers(0, 9), "word": WORDS, "tag": st.sampled_from(["x", "y"])})
# Single digits: PostgresStore's release compares numbers as text (LangGraph issue 7684). At least one
# operator: PostgresStore takes {"n": {}} as no condition, InMemoryStore (and cogmem) as an object to match.
FILTERS = st.one_of(
    st.none(),
    st.fixed_dictionaries({"tag": st.sampled_from(["x", "y"])}),
    st.fixed_dictionaries({"n": st.dictionaries(st.sampled_from(["$gt", "$lte"]), st.integers(0, 9), min_size=1)}),
)
OPS = st.one_of(
    st.builds(lambda ns, k, v: PutOp(ns, k, v), NAMESPACES, KEYS, VALUES),
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
        st.one_of(st.none(), st.integers(1, 2)),
    ),
)


def outcome(op, result):
    """What must agree: an item's value; a search's items, with their scores for a query (to 1e-4);
    namespaces as listed."""
    if isinstance(op, GetOp):
        return None if result is None else (result.namespace, result.key, result.value)
    if isinstance(op, SearchOp):
        return {(i.namespace, i.key): (i.value, None if i.score is None else round(i.score, 4)) for i in result}
    return result


def agree(ours, theirs) -> bool:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(
            ours[k][0] == theirs[k][0]
            and (ours[k][1] is None) == (theirs[k][1] is None)
            and (ours[k][1] is None or abs(ours[k][1] - theirs[k][1]) < 2e-4)
            for k in ours
        )
    return ours == theirs


def in_memory(store: InMemoryStore, ops: list) -> list:
    """InMemoryStore's results for a batch, its puts one at a time after the reads: a batch of its that puts
    one text twice embeds it once and files it twice (langgraph 1.2: "Number of embeddings (2) does not
    match number of indices (4)")."""
    reads = [op for op in ops if not isinstance(op, PutOp)]
    found = iter(store.batch(reads))
    results = [None if isinstance(op, PutOp) else next(found) for op in ops]
    for op in ops:
        if isinstance(op, PutOp):
            store.batch([op])
    return results


@pytest.fixture
def postgres_store(dsn):
    """LangGraph's PostgresStore, when its package is installed, on this test's database."""
    postgres = pytest.importorskip("langgraph.store.postgres")
    from psycopg.rows import dict_row

    with psycopg.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        yield lambda index: postgres.PostgresStore(conn, index=index)


@pytest.mark.parametrize("fields", [None, ["word", "tag"]], ids=["whole value", "fields"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(OPS, min_size=1, max_size=6), min_size=1, max_size=5))
def test_random_sequences_with_an_index_match_in_memory_and_postgres_stores(dsn, db, postgres_store, fields, batches):
    """Random batches through the three stores, the same index (the caller's function, cosine) on each: the
    same items, the same namespaces, and for a query the same items with the same scores. Ours orders a
    query's results by score (most similar first), as the others do."""
    # PostgresStore's flat index: exact, as ours (its HNSW index would return the nearest approximately).
    index = {"dims": 64, "embed": CharacterEmbeddings(dims=64), "fields": fields, "ann_index_config": {"kind": "flat"}}
    tenant = f"diff-{one(db, 'SELECT gen_random_uuid()')}"
    db.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
    reference = InMemoryStore(index=index)
    postgres = postgres_store(index)
    postgres.setup()
    db.execute("TRUNCATE store, store_vectors")
    with Client(quiet(dsn), embedder=False) as client:
        ours = CogmemStore(client, tenant, index=index)
        for ops in batches:
            got, expected, theirs = ours.batch(ops), in_memory(reference, ops), postgres.batch(ops)
            for op, mine, memory, pg in zip(ops, got, expected, theirs, strict=True):
                if isinstance(op, ListNamespacesOp):
                    # InMemoryStore keeps a namespace after its last item is deleted; PostgresStore does not.
                    assert mine == pg, op
                    continue
                assert agree(outcome(op, mine), outcome(op, memory)), (op, mine, memory)
                assert agree(outcome(op, mine), outcome(op, pg)), (op, mine, pg)
                if isinstance(op, SearchOp) and op.query:
                    scores = [i.score for i in mine]
                    assert scores == sorted(scores, reverse=True), op
