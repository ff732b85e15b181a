"""LangGraph's ``BaseStore`` on cogmem: ``CogmemStore(client, tenant="acme")``.

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

Search with a query ranks with cogmem's recall signals (full text, vector, topics, fused, times the
memory's confidence and strength); ``filter`` works on the value's fields with LangGraph's operators.
A value's ``kind`` field naming a kind (``rule``, ``preference``, ``incident``, ``procedure``, ``habit``,
``fact``, ``chat``) or a ring files its memory there, the caller's judgement; any other ``kind`` is the
application's own field, and the memory is routed. A time to live (minutes) files the memory in the
decaying ``fresh`` ring; expired items read as absent.
Reads of one batch see the store as it was before the batch's writes, as in ``InMemoryStore``; a batch
is one transaction. ``abatch`` runs ``batch`` in a worker thread (the client's pool is synchronous).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from typing import Any
from uuid import UUID

import psycopg
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from cogmem_pg.client import Client, Recall, StoredItem, store_text


class CogmemStore(BaseStore):
    """A LangGraph store whose items are cogmem memories (see the module's docstring for the rules)."""

    supports_ttl = True

    def __init__(
        self,
        client: Client,
        tenant: str | None = None,
        *,
        tenant_label: int | None = None,
        index: Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
        person_label: int | None = None,
        agent: str | None = None,
        agent_label: int | None = None,
    ) -> None:
        if (tenant is None) == (tenant_label is None):
            raise ValueError(
                "pass either tenant= (one tenant for every namespace) or tenant_label= (which label names it)"
            )
        if agent is not None and agent_label is not None:
            raise ValueError("pass agent= (the graph's agent) or agent_label= (which label names it), not both")
        self.client = client
        self.tenant = tenant
        self.tenant_label = tenant_label
        self.person_label = person_label
        self.agent = agent
        self.agent_label = agent_label
        self.index_fields = None if index is None else [(path, tokenize_path(path)) for path in index]
        self.ttl_config = ttl

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

    def _tenants_under(self, namespace: Sequence[str], conn: psycopg.Connection) -> list[str]:
        tenant = self.tenant_of(namespace)
        if tenant is not None:
            return [tenant]
        return [row[0] for row in conn.execute("SELECT tenant FROM cogmem.tenants ORDER BY tenant").fetchall()]

    # -- BaseStore ---------------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            _validate(op)
        results: list[Result] = [None] * len(ops)
        writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
        with self.client.connection() as conn, conn.transaction() if len(ops) > 1 else nullcontext():
            for i, op in enumerate(ops):
                if isinstance(op, GetOp):
                    results[i] = self._get(op, conn)
                elif isinstance(op, SearchOp):
                    results[i] = self._search(op, conn)
                elif isinstance(op, ListNamespacesOp):
                    results[i] = self._list_namespaces(op, conn)
                elif isinstance(op, PutOp):
                    writes.pop((op.namespace, op.key), None)  # the last write to a key wins
                    writes[(op.namespace, op.key)] = op
                else:
                    raise ValueError(f"unknown operation type: {type(op).__name__}")
            self._write(list(writes.values()), conn)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _get(self, op: GetOp, conn: psycopg.Connection) -> Item | None:
        tenant = self._tenant_for_item(op.namespace)
        person = self.scope_of(op.namespace)[0]  # part of the item's key, as it was put
        found = self.client.store_get(
            tenant, op.namespace, op.key, self._refresh(op.refresh_ttl), person=person, conn=conn
        )
        return None if found is None else _item(found)

    def _search(self, op: SearchOp, conn: psycopg.Connection) -> list[SearchItem]:
        found: list[StoredItem] = []
        for tenant in self._tenants_under(op.namespace_prefix, conn):
            found += self.client.store_search(
                tenant,
                op.namespace_prefix,
                op.query,
                op.filter,
                op.limit + op.offset,
                0,
                self._refresh(op.refresh_ttl),
                conn=conn,
            )
        if op.query:
            found.sort(key=lambda f: (f.score is None, -(f.score or 0.0), f.namespace, f.key))
        else:
            found.sort(key=lambda f: (f.namespace, f.key))
        return [_search_item(f) for f in found[op.offset : op.offset + op.limit]]

    def _list_namespaces(self, op: ListNamespacesOp, conn: psycopg.Connection) -> list[tuple[str, ...]]:
        paths: dict[str, tuple[str, ...]] = {}
        for condition in op.match_conditions or ():
            if condition.match_type in paths:
                raise ValueError(f"CogmemStore takes one {condition.match_type} condition, not several")
            paths[condition.match_type] = tuple(condition.path)
        prefix, suffix = paths.get("prefix"), paths.get("suffix")
        names: set[tuple[str, ...]] = set()
        for tenant in self._tenants_under(prefix or (), conn):
            names.update(
                self.client.store_namespaces(tenant, prefix, suffix, op.max_depth, op.limit + op.offset, 0, conn=conn)
            )
        return sorted(names)[op.offset : op.offset + op.limit]

    def _write(self, puts: list[PutOp], conn: psycopg.Connection) -> None:
        """The batch's writes in order; each tenant's texts to remember are embedded together, in one call,
        by the tenant's model."""
        texts = {
            n: text
            for n, op in enumerate(puts)
            if op.value is not None and op.index is not False
            and (text := self._index_text(dict(op.value), op.index)) is not None
        }  # fmt: skip
        # A write holds its tenant's store until the batch commits (sql/180-store.sql): tenants in one
        # order in every batch, or two batches over the same tenants could each wait for the other.
        tenants = {n: self.tenant or self._tenant_for_item(op.namespace) for n, op in enumerate(puts)}
        vectors: dict[int, Any] = {}
        for tenant in sorted({tenants[n] for n in texts}):
            mine = [n for n in texts if tenants[n] == tenant]
            embedded = self.client.vectors([texts[n] for n in mine], tenant, conn) or []
            vectors.update(zip(mine, embedded, strict=False))
        for n in sorted(tenants, key=lambda n: (tenants[n], n)):
            op, tenant = puts[n], tenants[n]
            person, agent = self.scope_of(op.namespace)
            if op.value is None:
                if op.namespace:  # deleting from no namespace deletes nothing, as in InMemoryStore
                    self.client.store_delete(tenant, op.namespace, op.key, person=person, conn=conn)
                continue
            self.client.store_put(
                tenant, op.namespace, op.key, dict(op.value), texts.get(n), op.ttl, vectors.get(n),
                person=person, agent=agent, conn=conn,
            )  # fmt: skip

    def _index_text(self, value: dict[str, Any], fields: list[str] | None) -> str | None:
        """The text a value is remembered by: its FIELDS, the store's, or else all its strings."""
        paths = [(path, tokenize_path(path)) for path in fields] if fields is not None else self.index_fields
        if paths is not None:
            texts = [text for _, tokens in paths for text in get_text_at_path(value, tokens)]
            return "\n".join(t for t in texts if t.strip()) or None
        return store_text(value)

    def _refresh(self, refresh_ttl: bool | None) -> bool:
        if refresh_ttl is not None:
            return refresh_ttl
        return bool((self.ttl_config or {}).get("refresh_on_read", True))

    # -- cogmem's loop, for a graph that uses the store ----------------------------------------------------
    def recall(self, namespace: Sequence[str], message: str, budget: int = 3200) -> Recall:
        """cogmem.recall for the namespace's tenant and scope: the budgeted prompt block and its recall_id."""
        person, agent = self.scope_of(namespace)
        return self.client.recall(
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
        return self.client.feedback(recall_id, outcome, None if ids is None else [i for i in ids if i is not None])

    def _memory_id(self, used: int | tuple[tuple[str, ...], str]) -> int | None:
        if isinstance(used, int):
            return used
        namespace, key = used
        found = self.client.store_get(self._tenant_for_item(tuple(namespace)), namespace, key, False)
        return None if found is None else found.memory_id


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
