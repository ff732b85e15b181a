"""LangGraph's ``BaseStore`` on cogmem: ``CogmemStore(client, tenant="acme")``, and ``AsyncCogmemStore`` on
psycopg's async pool.

Namespaces and tenants: a store is bound to one tenant (``tenant=``), and every namespace lives in it;
or, with ``tenant_label=i``, label ``i`` of every namespace names the tenant (``("acme", "memories")``
with ``tenant_label=0``), for one graph that serves many tenants. Either way the database role of the
client's DSN decides what it may reach: row-level security and the API boundary apply.

Namespaces and scopes (sql/015-scopes.sql): with ``person_label=i``, label ``i`` of an item's namespace
names the person it is about (``("memories", "ayla")`` with ``person_label=1``): its memory is Ayla's,
recalled for her and never for another person. ``agent=`` names the agent the graph is (or
``agent_label=i``, a label that names it): what it stores is that agent's. A namespace too short to hold
the label has no person (or agent): what it stores is shared by the tenant.

Values: ``get`` returns what ``put`` stored under the key, after redaction: a card number (as text, or
as a JSON number), a password field (``pass``, ``pwd``, ``apiKey``, ... whatever its value's type), a
user:password credential or a token in a value, in an object key, a namespace label or an item key
reads back as the placeholder a memory holds (``[REDACTED:PAN]``, ``[REDACTED]``), and never reaches the
database; searches and listings return labels and keys as kept. The value's text (the fields of
``index``, or else all its strings as "field: text" lines, unless the only one is a content field) is
also a memory, stored through ``remember`` (routed, deduplicated, checked for contradictions) and
recalled, reinforced and decayed like any other; it never holds what the value's redaction removed;
``index=False`` stores a value without one. A value is at most the tenant's ``max_store_value_bytes``
(1 MB of JSON by default); a namespace 1,000 bytes and a key 500; NUL cannot be stored in a label or key.

Search, as LangGraph defines it: ``index`` is LangGraph's ``IndexConfig``. With an ``embed`` function, each
text its ``fields`` choose (the whole value as JSON by default) is embedded by that function and kept with
the item, of whatever dimension it gives (``dims``, when given, is checked); a search embeds the query with
it and scores each item by the best of its vectors: cosine similarity, or the ``distance_type``
``inner_product`` or ``l2`` (negated), as PostgresStore does. Without one (no ``index``, a list of fields,
or an ``IndexConfig`` without ``embed``), the tenant's own model embeds: an item's vector is its memory's,
and ``score`` is the cosine similarity of the query's embedding and the memory's. Either way the most
similar come first; items without a vector follow with score None, ranked by full text; without a query,
by namespace and key, score None. ``filter`` works on the value's fields with LangGraph's operators
(numbers compare as numbers, texts by code point).

A value's ``kind`` field naming a kind (``rule``, ``preference``, ``incident``, ``procedure``, ``habit``,
``fact``, ``chat``) or a ring files its memory there, the caller's judgement; any other ``kind`` is the
application's own field, and the memory is routed. A time to live (minutes; ``ttl=TTLConfig`` for a
default and ``refresh_on_read``) files the memory in the decaying ``fresh`` ring; expired items read as
absent, go at the tenant's next write, and at once with ``sweep_ttl()`` or the sweeper
``start_ttl_sweeper()`` runs every ``sweep_interval_minutes``.
Reads of one batch see the store as it was before the batch's writes, as in ``InMemoryStore``; a batch
is one transaction, on one connection of the pool.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import weakref
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID

import psycopg
from langgraph.store.base import (
    BaseStore,
    Embeddings,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)
from langgraph.store.base.batch import AsyncBatchedBaseStore
from pgvector import Vector
from pgvector.psycopg import register_vector_async
from psycopg_pool import AsyncConnectionPool

from cogmem_pg.client import (
    Call,
    Client,
    Recall,
    StoredItem,
    clauses_call,
    grouped_parts,
    store_delete_call,
    store_get_call,
    store_namespaces_call,
    store_put_call,
    store_search_call,
    store_text,
)
from cogmem_pg.embed import Embedder, builtin_embedder, default_embedder, embed_queries

logger = logging.getLogger(__name__)

Distance = Literal["cosine", "inner_product", "l2"]
DISTANCES: tuple[Distance, ...] = ("cosine", "inner_product", "l2")
# A field path as LangGraph tokenizes it; "$" is the whole value (as JSON).
FieldPath = tuple[str, list[str] | Literal["$"]]


@dataclass
class _Write:
    """A put (or a delete) as it goes to the database: its tenant and scope, the text its memory is made
    of, and the texts the caller's embedding function embeds for it, each with its field's name."""

    op: PutOp
    tenant: str
    person: str | None
    agent: str | None
    text: str | None = None
    fields: list[tuple[str, str]] = field(default_factory=list)
    embeddings: list[list[float]] = field(default_factory=list)


class _StoreRules:
    """What both stores decide before any SQL: the tenant and scope of a namespace, the memory's text and
    the texts to embed of a value, what an operation asks of the database."""

    def _configure(
        self,
        tenant: str | None,
        tenant_label: int | None,
        index: IndexConfig | Sequence[str] | None,
        ttl: TTLConfig | None,
        person_label: int | None,
        agent: str | None,
        agent_label: int | None,
    ) -> None:
        if (tenant is None) == (tenant_label is None):
            raise ValueError(
                "pass either tenant= (one tenant for every namespace) or tenant_label= (which label names it)"
            )
        if agent is not None and agent_label is not None:
            raise ValueError("pass agent= (the graph's agent) or agent_label= (which label names it), not both")
        self.tenant = tenant
        self.tenant_label = tenant_label
        self.person_label = person_label
        self.agent = agent
        self.agent_label = agent_label
        self.ttl_config = ttl
        self.embeddings: Embeddings | None = None
        self.distance: Distance = "cosine"
        self.index_config: dict[str, Any] | None = None
        self.index_fields: list[FieldPath] | None = None
        if index is None:
            return
        if not isinstance(index, Mapping):  # a list of fields (before issue 51): the tenant's model embeds
            index = {"fields": list(index)}
        self.index_config = dict(index)
        fields = self.index_config.get("fields") or ["$"]
        if isinstance(fields, str):
            fields = [fields]
        self.index_fields = [_path(f) for f in fields]
        self.distance = _distance(self.index_config)
        if self.index_config.get("embed") is not None:
            self.embeddings = ensure_embeddings(self.index_config["embed"])

    # -- the rule --------------------------------------------------------------------------------------
    def tenant_of(self, namespace: Sequence[str]) -> str | None:
        """The tenant a namespace lives in; None when the namespace (a prefix) does not say."""
        if self.tenant is not None:
            return self.tenant
        assert self.tenant_label is not None
        if len(namespace) <= self.tenant_label or namespace[self.tenant_label] == "*":
            return None
        return namespace[self.tenant_label]

    def scope_of(self, namespace: Sequence[str]) -> tuple[str | None, str | None]:
        """The person and the agent a namespace's items are scoped to (None: not named)."""

        def label(i: int | None) -> str | None:
            return namespace[i] if i is not None and len(namespace) > i else None

        return label(self.person_label), self.agent if self.agent is not None else label(self.agent_label)

    def _tenant_for_item(self, namespace: tuple[str, ...]) -> str:
        tenant = self.tenant_of(namespace)
        if tenant is None:
            raise InvalidNamespaceError(f"namespace {namespace} has no label {self.tenant_label} to name its tenant")
        return tenant

    # -- what a batch asks -----------------------------------------------------------------------------
    def _writes(self, ops: Sequence[Op]) -> list[_Write]:
        """The batch's puts, the last to each key winning, in tenant order: a write holds its tenant's store
        until the batch commits (sql/180-store.sql), so two batches over the same tenants take them in one
        order and never wait for each other."""
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                puts.pop((op.namespace, op.key), None)
                puts[(op.namespace, op.key)] = op
        writes = []
        for op in puts.values():
            person, agent = self.scope_of(op.namespace)
            write = _Write(op, self.tenant or self._tenant_for_item(op.namespace), person, agent)
            if op.value is not None and op.index is not False:
                write.text = self._index_text(dict(op.value), op.index)
                write.fields = self._field_texts(dict(op.value), op.index)
            writes.append(write)
        return sorted(writes, key=lambda w: w.tenant)

    def _index_text(self, value: dict[str, Any], fields: Sequence[str] | None) -> str | None:
        """The text a value is remembered by: its FIELDS, the store's, or else (and for "$", the whole value)
        all its strings."""
        paths = [_path(f) for f in fields] if fields is not None else self.index_fields
        if paths is None or any(tokens == "$" for _, tokens in paths):
            return store_text(value)
        texts = [text for _, tokens in paths for text in get_text_at_path(value, tokens)]
        return "\n".join(t for t in texts if t.strip()) or None

    def _field_texts(self, value: dict[str, Any], fields: Sequence[str] | None) -> list[tuple[str, str]]:
        """The texts the caller's embedding function embeds for a value, each named by its field (with the
        text's position when a path gives several), as PostgresStore names them."""
        if self.embeddings is None:
            return []
        paths = [_path(f) for f in fields] if fields is not None else self.index_fields or []
        named = []
        for path, tokens in paths:
            texts = get_text_at_path(value, tokens)
            named += [(f"{path}.{i}" if len(texts) > 1 else path, text) for i, text in enumerate(texts)]
        return named

    def _checked(self, vectors: Sequence[Sequence[float]], count: int) -> list[list[float]]:
        """The caller's vectors, as many as asked for, of the index's dims when it names them."""
        made = [[float(x) for x in v] for v in vectors]
        if len(made) != count:
            raise ValueError(f"the index's embedding function returned {len(made)} vectors for {count} texts")
        dims = (self.index_config or {}).get("dims")
        wrong = next((len(v) for v in made if dims is not None and len(v) != dims), None)
        if wrong is not None:
            raise ValueError(
                f"the index's embedding function returned vectors of {wrong} dimensions, its dims is {dims}"
            )
        return made

    def _queries(self, ops: Sequence[Op]) -> list[str]:
        """The distinct queries of the batch's searches that the caller's embedding function embeds."""
        if self.embeddings is None:
            return []
        return sorted({op.query for op in ops if isinstance(op, SearchOp) and op.query})

    def _search_call(self, op: SearchOp, tenant: str, vector: Any, limit: int, offset: int) -> Call:
        """cogmem.store_search for one tenant: VECTOR is the query's, by the caller's function (the items'
        own vectors) or else by the tenant's model (their memories')."""
        return store_search_call(
            tenant,
            _labels_of(op.namespace_prefix, op.query),
            op.query or None,
            op.filter,
            limit,
            offset,
            vector,
            self._refresh(op.refresh_ttl),
            None,
            "fields" if self.embeddings is not None else "memories",
            self.distance,
        )

    def _refresh(self, refresh_ttl: bool | None) -> bool:
        if refresh_ttl is not None:
            return refresh_ttl
        return bool((self.ttl_config or {}).get("refresh_on_read", True))

    def _sweep_interval(self, minutes: float | None) -> float:
        return float(minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5)


class CogmemStore(_StoreRules, BaseStore):
    """A LangGraph store whose items are cogmem memories (see the module's docstring for the rules)."""

    supports_ttl = True

    def __init__(
        self,
        client: Client,
        tenant: str | None = None,
        *,
        tenant_label: int | None = None,
        index: IndexConfig | Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
        person_label: int | None = None,
        agent: str | None = None,
        agent_label: int | None = None,
    ) -> None:
        self._configure(tenant, tenant_label, index, ttl, person_label, agent, agent_label)
        self.client = client
        self._sweeper: threading.Thread | None = None
        self._stop_sweeping = threading.Event()

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, tenant: str | None = None, **kwargs: Any) -> Iterator[CogmemStore]:
        """A store on a client of its own, closed (its sweeper stopped) on leaving: as PostgresStore's."""
        with Client(conn_string) as client:
            store = cls(client, tenant, **kwargs)
            try:
                yield store
            finally:
                store.stop_ttl_sweeper()

    # -- BaseStore ---------------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            _validate(op)
        results: list[Result] = [None] * len(ops)
        writes = self._writes(ops)
        # The caller's function embeds before a connection is taken: it may call a service.
        texts = [text for w in writes for _, text in w.fields]
        if texts:
            assert self.embeddings is not None
            vectors = iter(self._checked(self.embeddings.embed_documents(texts), len(texts)))
            for w in writes:
                w.embeddings = [next(vectors) for _ in w.fields]
        queries = {}
        for query in self._queries(ops):
            assert self.embeddings is not None
            queries[query] = self._checked([self.embeddings.embed_query(query)], 1)[0]
        client = self._client()
        with client.connection() as conn, conn.transaction() if len(ops) > 1 else nullcontext():
            for i, op in enumerate(ops):
                if isinstance(op, GetOp):
                    results[i] = self._get(op, conn)
                elif isinstance(op, SearchOp):
                    results[i] = self._search(op, conn, queries.get(op.query or ""))
                elif isinstance(op, ListNamespacesOp):
                    results[i] = self._list_namespaces(op, conn)
                elif not isinstance(op, PutOp):
                    raise ValueError(f"unknown operation type: {type(op).__name__}")
            self._write(writes, conn)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """In a worker thread: the client's pool is synchronous (AsyncCogmemStore is the async store)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _client(self) -> Client:
        return self.client

    def _get(self, op: GetOp, conn: psycopg.Connection) -> Item | None:
        tenant = self._tenant_for_item(op.namespace)
        person = self.scope_of(op.namespace)[0]  # part of the item's key, as it was put
        found = self._client().store_get(
            tenant, op.namespace, op.key, self._refresh(op.refresh_ttl), person=person, conn=conn
        )
        return None if found is None else _item(found)

    def _search(self, op: SearchOp, conn: psycopg.Connection, vector: list[float] | None) -> list[SearchItem]:
        tenants = self._tenants_under(op.namespace_prefix, conn)
        one = len(tenants) == 1
        found: list[StoredItem] = []
        for tenant in tenants:
            # Without the caller's function, the client embeds the query by the tenant's model (or the server).
            found += self._client().store_search(
                tenant,
                op.namespace_prefix,
                op.query or None,
                op.filter,
                op.limit if one else op.limit + op.offset,
                op.offset if one else 0,
                self._refresh(op.refresh_ttl),
                vector,
                vectors="fields" if self.embeddings is not None else "memories",
                distance=self.distance,
                conn=conn,
            )
        return _page(found, op, one)

    def _list_namespaces(self, op: ListNamespacesOp, conn: psycopg.Connection) -> list[tuple[str, ...]]:
        prefix, suffix = _patterns(op)
        tenants = self._tenants_under(prefix or (), conn)
        one = len(tenants) == 1
        names: set[tuple[str, ...]] = set()
        for tenant in tenants:
            names.update(
                self._client().store_namespaces(
                    tenant,
                    prefix,
                    suffix,
                    op.max_depth,
                    op.limit if one else op.limit + op.offset,
                    op.offset if one else 0,
                    conn=conn,
                )
            )
        return sorted(names) if one else sorted(names)[op.offset : op.offset + op.limit]

    def _tenants_under(self, namespace: Sequence[str], conn: psycopg.Connection) -> list[str]:
        tenant = self.tenant_of(namespace)
        if tenant is not None:
            return [tenant]
        return [row[0] for row in conn.execute(_TENANTS).fetchall()]

    def _write(self, writes: list[_Write], conn: psycopg.Connection) -> None:
        """The batch's writes; each tenant's memory texts are embedded together, in one call, by the tenant's
        model (the client's, or else the server's)."""
        client = self._client()
        memory_vectors: dict[int, Any] = {}
        clause_vectors: dict[int, Any] = {}
        for tenant in sorted({w.tenant for w in writes}):
            mine = [n for n, w in enumerate(writes) if w.tenant == tenant and w.text is not None]
            embedded = client.vectors([writes[n].text for n in mine], tenant, conn) or []  # type: ignore[misc]
            memory_vectors.update(zip(mine, embedded, strict=False))
            # A rule said as one clause with its story is read part by part, as remember reads it.
            routed = [n for n in mine if n in memory_vectors and writes[n].op.ttl is None]
            parts = client._clauses_of_each(
                tenant, [writes[n].text or "" for n in routed], [memory_vectors[n] for n in routed], conn
            )
            clause_vectors.update(zip(routed, parts, strict=True))
        for n, w in enumerate(writes):
            if w.op.value is None:
                if w.op.namespace:  # deleting from no namespace deletes nothing, as in InMemoryStore
                    client.store_delete(w.tenant, w.op.namespace, w.op.key, person=w.person, conn=conn)
                continue
            client.store_put(
                w.tenant, w.op.namespace, w.op.key, dict(w.op.value), w.text, w.op.ttl, memory_vectors.get(n),
                person=w.person, agent=w.agent, embedded_fields=[f for f, _ in w.fields] if w.fields else None,
                embeddings=w.embeddings or None, clause_embeddings=clause_vectors.get(n), conn=conn,
            )  # fmt: skip

    # -- time to live ----------------------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Deletes the expired items of the store's tenant (of every tenant it reaches, with tenant_label)
        now, and the memories they created; how many items."""
        client = self._client()
        with client.connection() as conn:
            return sum(client.store_sweep(t, conn=conn) for t in self._tenants_under((), conn))

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Sweeps every ``sweep_interval_minutes`` (the TTL config's, else 5) in a thread, until
        ``stop_ttl_sweeper``; without a TTL config, nothing to do. The future is done when it stops."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not self.ttl_config:
            future.set_result(None)
            return future
        if self._sweeper is not None and self._sweeper.is_alive():
            future.add_done_callback(lambda f: self._stop_sweeping.set() if f.cancelled() else None)
            return future
        self._stop_sweeping.clear()
        interval = self._sweep_interval(sweep_interval_minutes)

        def sweep() -> None:
            while not self._stop_sweeping.wait(interval * 60):
                try:
                    if swept := self.sweep_ttl():
                        logger.info("store swept %d expired items", swept)
                except Exception:
                    logger.exception("store TTL sweep failed")
            if not future.done():
                future.set_result(None)

        self._sweeper = threading.Thread(target=sweep, daemon=True, name="cogmem-ttl-sweeper")
        self._sweeper.start()
        future.add_done_callback(lambda f: self._stop_sweeping.set() if f.cancelled() else None)
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stops the sweeper; False if it was still running after TIMEOUT seconds."""
        if self._sweeper is None or not self._sweeper.is_alive():
            return True
        self._stop_sweeping.set()
        self._sweeper.join(timeout)
        if self._sweeper.is_alive():
            return False
        self._sweeper = None
        return True

    def __del__(self) -> None:
        if getattr(self, "_sweeper", None) is not None:
            self.stop_ttl_sweeper(timeout=0.1)

    # -- cogmem's loop, for a graph that uses the store ----------------------------------------------------
    def recall(self, namespace: Sequence[str], message: str, budget: int = 3200) -> Recall:
        """cogmem.recall for the namespace's tenant and scope: the budgeted prompt block and its recall_id."""
        person, agent = self.scope_of(namespace)
        return self._client().recall(
            self._tenant_for_item(tuple(namespace)), message, budget=budget, person=person, agent=agent
        )

    def feedback(
        self,
        recall_id: UUID,
        outcome: float,
        used: Sequence[int | tuple[tuple[str, ...], str]] | None = None,
    ) -> int:
        """cogmem.feedback; USED names what the answer relied on, as memory ids or (namespace, key)."""
        ids = None if used is None else [self._memory_id(u) for u in used]
        return self._client().feedback(recall_id, outcome, None if ids is None else [i for i in ids if i is not None])

    def _memory_id(self, used: int | tuple[tuple[str, ...], str]) -> int | None:
        if isinstance(used, int):
            return used
        namespace, key = used
        found = self._client().store_get(self._tenant_for_item(tuple(namespace)), namespace, key, False)
        return None if found is None else found.memory_id


class AsyncCogmemStore(_StoreRules, AsyncBatchedBaseStore):
    """The store of ``CogmemStore``, natively async on psycopg's ``AsyncConnectionPool``: one connection of
    the pool (and one transaction) per batch; LangGraph's batcher gathers the operations of one tick into
    one batch. Made in a running event loop: ``async with AsyncCogmemStore.from_conn_string(dsn, "acme")``,
    or ``AsyncCogmemStore(pool, "acme")`` on a pool of your own (autocommit connections). The sync methods
    work from other threads, as in LangGraph's async stores.

    ``embedder`` is the client's, for the tenant's model when no ``index`` function embeds: None, the
    built-in model of each tenant's vectors (the ``[embed]`` extra); an ``Embedder`` of your own; False, the
    server embeds (or full text serves). ``clauses``: as the Client's, the parts of a text the router reads
    alone are embedded too (False saves that). cogmem's recall and feedback are the sync ``Client``'s."""

    supports_ttl = True

    def __init__(
        self,
        pool: AsyncConnectionPool[Any],
        tenant: str | None = None,
        *,
        tenant_label: int | None = None,
        index: IndexConfig | Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
        person_label: int | None = None,
        agent: str | None = None,
        agent_label: int | None = None,
        embedder: Embedder | Literal[False] | None = None,
        clauses: bool = True,
    ) -> None:
        super().__init__()
        self._configure(tenant, tenant_label, index, ttl, person_label, agent, agent_label)
        self.pool = pool
        self._clauses = clauses
        self._embedder: Embedder | None = None if embedder is False else (embedder or default_embedder())
        self._per_tenant = embedder is None and self._embedder is not None
        self._tenant_models: dict[str, str] = {}
        self._ready: weakref.WeakSet[psycopg.AsyncConnection[Any]] = weakref.WeakSet()
        self._declared: weakref.WeakKeyDictionary[psycopg.AsyncConnection[Any], str] = weakref.WeakKeyDictionary()
        self._sweeper: asyncio.Task[None] | None = None
        self._stop_sweeping = asyncio.Event()

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, conn_string: str, tenant: str | None = None, *, min_size: int = 1, max_size: int = 4, **kwargs: Any
    ) -> AsyncIterator[AsyncCogmemStore]:
        """A store on a pool of its own, closed (its sweeper stopped) on leaving."""
        pool = AsyncConnectionPool(
            conn_string,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            open=False,
        )
        async with pool:
            store = cls(pool, tenant, **kwargs)
            try:
                yield store
            finally:
                await store.stop_ttl_sweeper()

    async def __aenter__(self) -> AsyncCogmemStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop_ttl_sweeper()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        async with self.pool.connection() as conn:
            if conn not in self._ready:  # a pool of the caller's: pgvector's types, once per connection
                await register_vector_async(conn)
                self._ready.add(conn)
            try:
                yield conn
            except psycopg.errors.DataException as error:
                if "holds vectors of" in str(error):  # re-embedded since its model was cached
                    self._tenant_models.clear()
                raise

    # -- BaseStore ---------------------------------------------------------------------------------------
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            _validate(op)
        results: list[Result] = [None] * len(ops)
        writes = self._writes(ops)
        texts = [text for w in writes for _, text in w.fields]
        if texts:
            assert self.embeddings is not None
            vectors = iter(self._checked(await self.embeddings.aembed_documents(texts), len(texts)))
            for w in writes:
                w.embeddings = [next(vectors) for _ in w.fields]
        queries = {}
        for query in self._queries(ops):
            assert self.embeddings is not None
            queries[query] = self._checked([await self.embeddings.aembed_query(query)], 1)[0]
        async with self._connection() as conn:
            transaction: AbstractAsyncContextManager[Any] = conn.transaction() if len(ops) > 1 else _no_transaction()
            async with transaction:
                for i, op in enumerate(ops):
                    if isinstance(op, GetOp):
                        results[i] = await self._get(op, conn)
                    elif isinstance(op, SearchOp):
                        results[i] = await self._search(op, conn, queries.get(op.query or ""))
                    elif isinstance(op, ListNamespacesOp):
                        results[i] = await self._list_namespaces(op, conn)
                    elif not isinstance(op, PutOp):
                        raise ValueError(f"unknown operation type: {type(op).__name__}")
                await self._write(writes, conn)
        return results

    async def _get(self, op: GetOp, conn: psycopg.AsyncConnection[Any]) -> Item | None:
        tenant = self._tenant_for_item(op.namespace)
        person = self.scope_of(op.namespace)[0]
        labels = _labels_of(op.namespace, op.key)
        cur = await conn.execute(*store_get_call(tenant, labels, op.key, self._refresh(op.refresh_ttl), person))
        row = await cur.fetchone()
        return None if row is None else _item(StoredItem(op.namespace, op.key, *row))

    async def _search(
        self, op: SearchOp, conn: psycopg.AsyncConnection[Any], vector: list[float] | None
    ) -> list[SearchItem]:
        tenants = await self._tenants_under(op.namespace_prefix, conn)
        one = len(tenants) == 1
        found: list[StoredItem] = []
        for tenant in tenants:
            query_vector: Any = _vector(vector)
            if op.query and self.embeddings is None:  # the tenant's model: ours, else the server's
                embedded = await self._vectors([op.query], tenant, conn, query=True)
                query_vector = None if embedded is None else embedded[0]
            limit, offset = (op.limit, op.offset) if one else (op.limit + op.offset, 0)
            cur = await conn.execute(*self._search_call(op, tenant, query_vector, limit, offset))
            found += [StoredItem(tuple(ns), *rest) for ns, *rest in await cur.fetchall()]
        return _page(found, op, one)

    async def _list_namespaces(self, op: ListNamespacesOp, conn: psycopg.AsyncConnection[Any]) -> list[tuple[str, ...]]:
        prefix, suffix = _patterns(op)
        tenants = await self._tenants_under(prefix or (), conn)
        one = len(tenants) == 1
        names: set[tuple[str, ...]] = set()
        for tenant in tenants:
            call = store_namespaces_call(
                tenant,
                None if prefix is None else _labels_of(prefix),
                None if suffix is None else _labels_of(suffix),
                op.max_depth,
                op.limit if one else op.limit + op.offset,
                op.offset if one else 0,
                None,
            )
            cur = await conn.execute(*call)
            names.update(tuple(row[0]) for row in await cur.fetchall())
        return sorted(names) if one else sorted(names)[op.offset : op.offset + op.limit]

    async def _tenants_under(self, namespace: Sequence[str], conn: psycopg.AsyncConnection[Any]) -> list[str]:
        tenant = self.tenant_of(namespace)
        if tenant is not None:
            return [tenant]
        cur = await conn.execute(_TENANTS)
        return [row[0] for row in await cur.fetchall()]

    async def _write(self, writes: list[_Write], conn: psycopg.AsyncConnection[Any]) -> None:
        """As CogmemStore's: each tenant's memory texts embedded together by the tenant's model."""
        for tenant in sorted({w.tenant for w in writes}):
            mine = [w for w in writes if w.tenant == tenant]
            texts = [w.text for w in mine if w.text is not None and w.op.value is not None]
            made = await self._vectors(texts, tenant, conn) or []
            parts = iter(await self._clauses_of_each(tenant, mine, made, conn))
            embedded = iter(made)
            for w in mine:
                if w.op.value is None:
                    if w.op.namespace:
                        await conn.execute(
                            *store_delete_call(tenant, _labels_of(w.op.namespace, w.op.key), w.op.key, w.person)
                        )
                    continue
                labels = _labels_of(w.op.namespace, w.op.key, w.text, *(f for f, _ in w.fields))
                memory_vector = next(embedded, None) if w.text is not None else None
                clause_vectors = next(parts, None) if w.text is not None else None
                await conn.execute(
                    *store_put_call(
                        tenant, labels, w.op.key, dict(w.op.value), w.text, w.op.ttl, memory_vector, w.person,
                        w.agent, [f for f, _ in w.fields] if w.fields else None, w.embeddings or None, clause_vectors,
                    )
                )  # fmt: skip

    async def _clauses_of_each(
        self, tenant: str, mine: list[_Write], made: list[Vector], conn: psycopg.AsyncConnection[Any]
    ) -> list[list[Vector] | None]:
        """For each of MINE with a text (embedded as MADE), the clause_embeddings of its parts, as
        Client._clauses_of_each makes them: a rule said as one clause with its story is read part by part."""
        texted = [w for w in mine if w.text is not None and w.op.value is not None]
        # An item with a time to live is fresh: nothing of it is read (as CogmemStore's writes).
        routed = [n for n, w in enumerate(texted) if w.op.ttl is None]
        found: list[list[Vector] | None] = [None] * len(texted)
        if not made or not self._clauses or not routed:
            return found
        model = (await self._embedder_for(tenant, conn))[1]
        texts = [texted[n].text or "" for n in routed]
        cur = await conn.execute(*clauses_call(texts, [made[n] for n in routed], model))
        parts: list[list[str]] = (await cur.fetchone() or [[]])[0]
        embedded = await self._vectors([p for each in parts for p in each], tenant, conn) or []
        for n, vectors in zip(routed, grouped_parts(parts, embedded), strict=True):
            found[n] = vectors
        return found

    async def _vectors(
        self, texts: Sequence[str], tenant: str, conn: psycopg.AsyncConnection[Any], *, query: bool = False
    ) -> list[Vector] | None:
        """The texts' vectors by TENANT's model, made in a worker thread (the model runs on the CPU), and
        declared on CONN so that the database refuses them for a tenant of another model (issue 47); None
        without an embedder of that model: the server embeds."""
        embedder, model = await self._embedder_for(tenant, conn) if texts else (None, None)
        if embedder is None:
            return None
        made = await asyncio.to_thread(embed_queries if query else _embed, embedder, list(texts))
        if model and self._declared.get(conn) != model:
            await conn.execute("SELECT pg_catalog.set_config('cogmem.embedding_model', %s, false)", (model,))
            self._declared[conn] = model
        return [Vector([float(x) for x in v]) for v in made]

    async def _embedder_for(
        self, tenant: str, conn: psycopg.AsyncConnection[Any]
    ) -> tuple[Embedder | None, str | None]:
        if not self._per_tenant:
            model = getattr(self._embedder, "model_id", None)
            return self._embedder, model if isinstance(model, str) else None
        model = self._tenant_models.get(tenant)
        if model is None:
            cur = await conn.execute("SELECT embedding_model FROM cogmem.tenants WHERE tenant = %s", (tenant,))
            row = await cur.fetchone()
            if row is None:  # not created yet (or not visible): the call itself says so
                return None, None
            model = self._tenant_models[tenant] = str(row[0])
        return builtin_embedder(model), model

    # -- time to live ----------------------------------------------------------------------------------
    async def sweep_ttl(self) -> int:
        """Deletes the expired items of the store's tenants now (and the memories they created); how many."""
        async with self._connection() as conn:
            swept = 0
            for tenant in await self._tenants_under((), conn):
                cur = await conn.execute("SELECT cogmem.store_sweep(%s)", (tenant,))
                row = await cur.fetchone()
                swept += int(row[0]) if row else 0
            return swept

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> asyncio.Task[None]:
        """Sweeps every ``sweep_interval_minutes`` (the TTL config's, else 5) in a task of the loop, until
        ``stop_ttl_sweeper``; without a TTL config, a task that does nothing."""
        if not self.ttl_config:
            return asyncio.create_task(asyncio.sleep(0))
        if self._sweeper is not None and not self._sweeper.done():
            return self._sweeper
        self._stop_sweeping.clear()
        interval = self._sweep_interval(sweep_interval_minutes)

        async def sweep() -> None:
            while True:
                try:
                    await asyncio.wait_for(self._stop_sweeping.wait(), timeout=interval * 60)
                    return
                except TimeoutError:
                    pass
                try:
                    if swept := await self.sweep_ttl():
                        logger.info("store swept %d expired items", swept)
                except Exception:
                    logger.exception("store TTL sweep failed")

        self._sweeper = asyncio.create_task(sweep(), name="cogmem-ttl-sweeper")
        return self._sweeper

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stops the sweeper; False if it was still running after TIMEOUT seconds."""
        if self._sweeper is None or self._sweeper.done():
            return True
        self._stop_sweeping.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._sweeper), timeout=timeout)
        except TimeoutError:
            return False
        self._sweeper = None
        return True


_TENANTS = "SELECT tenant FROM cogmem.tenants ORDER BY tenant"


@asynccontextmanager
async def _no_transaction() -> AsyncIterator[None]:
    yield


def _embed(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    return embedder.embed(texts)


def _path(field: str) -> FieldPath:
    return (field, "$") if field == "$" else (field, tokenize_path(field))


def _distance(config: Mapping[str, Any]) -> Distance:
    """The index's distance, when cogmem can compute it: over float vectors (vector, halfvec)."""
    distance = config.get("distance_type", "cosine")
    kind = (config.get("ann_index_config") or config.get("index_config") or {}).get("vector_type", "vector")
    if distance not in DISTANCES or kind not in ("vector", "halfvec"):
        raise ValueError(
            f"CogmemStore compares float vectors by cosine, inner_product or l2, not {kind} by {distance}: "
            "pass distance_type 'cosine' (the default), 'inner_product' or 'l2'"
        )
    return distance


def _vector(vector: Sequence[float] | None) -> Vector | None:
    return None if vector is None else Vector([float(x) for x in vector])


def _labels_of(namespace: Sequence[str], *texts: str | None) -> list[str]:
    """As Client._store_path: NUL refused with a reason before it is sent."""
    return Client._store_labels(namespace, *texts)


def _patterns(op: ListNamespacesOp) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
    """A listing's prefix and suffix patterns: one of each at most."""
    paths: dict[str, tuple[str, ...]] = {}
    for condition in op.match_conditions or ():
        if condition.match_type in paths:
            raise ValueError(f"CogmemStore takes one {condition.match_type} condition, not several")
        paths[condition.match_type] = tuple(condition.path)
    return paths.get("prefix"), paths.get("suffix")


def _page(found: list[StoredItem], op: SearchOp, one: bool) -> list[SearchItem]:
    """A search's results: one tenant's as the database paged them; several tenants' merged and paged."""
    if not one:
        if op.query:
            found.sort(key=lambda f: (f.score is None, -(f.score or 0.0), f.namespace, f.key))
        else:
            found.sort(key=lambda f: (f.namespace, f.key))
        found = found[op.offset : op.offset + op.limit]
    return [_search_item(f) for f in found]


def _validate(op: Op) -> None:
    validate_op_namespace(op)
    # PostgreSQL text cannot hold NUL: refused here with a reason, not by the driver without one
    # (recent LangGraph versions refuse it in labels themselves).
    if any("\x00" in label for label in _labels(op)):
        raise InvalidNamespaceError("a namespace label holds NUL (\\u0000), which PostgreSQL text cannot hold")
    if isinstance(op, (GetOp, PutOp)) and "\x00" in op.key:
        raise ValueError("a store key holds NUL (\\u0000), which PostgreSQL text cannot hold")
    if isinstance(op, PutOp) and op.value is not None:
        if not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if op.namespace[0] == "langgraph":
            raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph". Got: {op.namespace}')


def _labels(op: Op) -> list[str]:
    """The namespace labels an operation names (a search's prefix, a listing's patterns)."""
    if isinstance(op, (GetOp, PutOp)):
        return list(op.namespace)
    if isinstance(op, SearchOp):
        return list(op.namespace_prefix)
    if isinstance(op, ListNamespacesOp):
        return [label for condition in op.match_conditions or () for label in condition.path]
    return []


def _item(found: StoredItem) -> Item:
    return Item(
        value=found.value,
        key=found.key,
        namespace=found.namespace,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def _search_item(found: StoredItem) -> SearchItem:
    return SearchItem(found.namespace, found.key, found.value, found.created_at, found.updated_at, found.score)
