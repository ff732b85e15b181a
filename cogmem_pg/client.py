"""Typed client: one class around a psycopg pool, one method per SQL function, dataclass results
(cogmem_pg/types.py).

Text is embedded on the client side by default: each tenant by the built-in model of its vectors
(tenants.embedding_model: MiniLM or multilingual E5, with the [embed] extra), or by any
:class:`cogmem_pg.embed.Embedder` you pass, whose ``model_id`` the database then holds to the tenant's;
``embedder=False`` leaves embedding to the server, which falls back to full-text search when it cannot.

Inbound attention (the ring, the topics, whether a text contradicts what is established) is decided in
the database unless you pass a :class:`Classifier`: any callable, an LLM or a fine-tuned model, whose
answers ``remember`` then passes as its ``ring``, ``topics`` and ``contradicts`` arguments.

What the user's next turn says of the last answer (implicit feedback, sql/059-followup.sql) is judged in
the database too, unless you pass a :class:`Judge`: the client then remembers each conversation's last
recall, asks your judge about the next turn of it, and records the verdict (``judge_recall``) before the
turn reaches the database, which then leaves that recall alone.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal, TypeVar, overload
from uuid import UUID

import psycopg
from pgvector import Vector
from pgvector.psycopg import register_vector
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import class_row, dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from cogmem_pg import errors
from cogmem_pg.embed import Embedder, builtin_embedder, default_embedder, embed_queries
from cogmem_pg.reembed import ReembedProgress, reembed
from cogmem_pg.types import (
    ArmReport,
    AuditCheck,
    BatchMemory,
    BriefingLine,
    Classification,
    Classifier,
    Conflict,
    Decision,
    Episode,
    ErrorReport,
    Established,
    Experiment,
    ExperimentArm,
    ExplainedItem,
    Finding,
    FollowupVerdict,
    Found,
    GuardItem,
    GutPattern,
    GutPeriod,
    GutRelease,
    GutSwitches,
    HistoryEntry,
    Judge,
    Judgement,
    Kind,
    Memory,
    MemoryUpdate,
    Observation,
    PendingRule,
    Recall,
    RecallItem,
    Resolution,
    ResourceAdded,
    ResourceChunk,
    Ring,
    Sibling,
    StoredItem,
    StoredMemory,
    StorePut,
    TenantIndex,
    TopicKeywords,
    VaultEntry,
)

# The result types live in cogmem_pg/types.py; they stay importable from here.
__all__ = ["PLAIN_TEXT_FIELDS", "ArmReport", "AuditCheck", "BatchMemory", "BriefingLine", "Classification",
           "Classifier", "Client", "Conflict", "Decision", "Episode", "ErrorReport", "Established",
           "Experiment", "ExperimentArm", "ExplainedItem", "Finding", "FollowupVerdict", "Found", "GuardItem",
           "GutPattern", "GutPeriod", "GutRelease", "GutSwitches", "HistoryEntry", "Judge", "Judgement", "Kind",
           "Memory", "MemoryUpdate", "Observation", "PendingRule", "Recall", "RecallItem", "Resolution",
           "ResourceAdded", "ResourceChunk", "Ring", "Sibling", "StorePut", "StoredItem", "StoredMemory",
           "TopicKeywords", "VaultEntry", "store_text"]  # fmt: skip

T = TypeVar("T")
# Speakers whose turns are never read as a reply to an answer (sql/059-followup.sql skips the same).
ASSISTANT_SPEAKERS = frozenset({"assistant", "agent", "ai", "bot", "system", "tool"})
AWAITED_CONVERSATIONS = 10_000

_SEARCH = """
WITH q AS (
    SELECT nullif(replace(plainto_tsquery(t.language, %(query)s)::text, ' & ', ' | '), '')::tsquery AS words
    FROM cogmem.tenants AS t WHERE t.tenant = %(tenant)s
)
SELECT m.memory_id, m.ring::text, m.content, m.topics,
       (CASE WHEN %(vector)b::public.vector IS NULL THEN ts_rank_cd(m.search, q.words)
             ELSE 1 - (m.embedding OPERATOR(public.<=>) %(vector)b::public.vector) END)::real AS score
FROM q JOIN cogmem.memories AS m ON m.tenant = %(tenant)s
JOIN cogmem.tenants AS t ON t.tenant = m.tenant
WHERE CASE WHEN %(vector)b::public.vector IS NULL THEN m.search @@ q.words ELSE m.embedding IS NOT NULL END
  AND cogmem.in_scope(m.person, m.agent, m.ring, %(person)s, %(agent)s, t)
ORDER BY score DESC, m.memory_id
LIMIT %(limit)s
"""


def _iso(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _tenant_first(tenant: str | None) -> str:
    """The tenant's placeholder in a call that takes an id, when the caller names the tenant."""
    return "%s::text, " if tenant is not None else ""


def _tenant_arg(tenant: str | None) -> tuple[str, ...]:
    return (tenant,) if tenant is not None else ()


def _agent_last(tenant: str | None, agent: str | None) -> str:
    """The agent's placeholder, last, in a call that names the tenant (the tenant-less forms take none)."""
    if agent is not None and tenant is None:
        raise ValueError("agent needs tenant: a caller bound to an agent names its tenant too")
    return ", agent => %s::text" if agent is not None else ""


def _agent_arg(agent: str | None) -> tuple[str, ...]:
    return (agent,) if agent is not None else ()


# Messages that are instructions to a model or a tool's output, not something a person said.
_NOT_SAID = {"system", "developer", "tool", "function"}
# LangChain's message types, as the roles of the chat APIs.
_ROLES = {"human": "user", "ai": "assistant"}


def chat_turns(
    messages: Sequence[Mapping[str, Any] | Any], conversation: str | None, said_at: datetime | None
) -> list[dict[str, Any]]:
    """remember_many's items for a chat: one turn per message of the user or the assistant."""
    turns = []
    for message in messages:
        get = message.get if isinstance(message, Mapping) else lambda k, m=message: getattr(m, k, None)
        role = _ROLES.get(str(get("type"))) or str(get("role") or get("type") or "user")
        text = get("content")
        if isinstance(text, list):  # content parts (OpenAI, Anthropic): the text ones
            text = " ".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in text)
        if role in _NOT_SAID or not isinstance(text, str) or not text.strip():
            continue
        turn: dict[str, Any] = {"content": text, "speaker": get("name") or role}
        if conversation is not None:
            turn["conversation"] = conversation
        if said_at is not None:
            turn["said_at"] = said_at
        turns.append(turn)
    return turns


def _check_login(dsn: str) -> None:
    """Connects once before the pool does, so that a login the server refuses (a wrong password, an unknown
    role or database) raises the server's own message at once: the pool retries it for 30 s and then says
    only that it timed out (issue 49)."""
    given = conninfo_to_dict(dsn)
    try:
        psycopg.connect(make_conninfo(dsn, connect_timeout=given.get("connect_timeout", 10))).close()
    except psycopg.Error as error:
        errors.retype(error)
        raise


class Client:
    """cogmem-pg client. ``Client(dsn)``; use as a context manager or call :meth:`close`.

    After the pool's plumbing, the methods are grouped by the sql/ file whose functions they call, in the
    files' order."""

    def __init__(
        self,
        dsn: str,
        *,
        embedder: Embedder | Literal[False] | None = None,
        classifier: Classifier | None = None,
        judge: Judge | None = None,
        min_size: int = 1,
        max_size: int = 4,
        clauses: bool = True,
    ) -> None:
        """embedder: the model of the vectors (None: each tenant's built-in one; False: none, the server embeds
        or full text serves). classifier, judge: the caller's LLM verdicts. clauses: remember (remember_many,
        store_put) also embeds the parts of a message that the router reads alone (cogmem.clauses; a rule said
        as one clause with its story), for the few messages that need it; False saves those embeddings and that
        call."""
        self._clauses = clauses
        self._embedder: Embedder | None = None if embedder is False else (embedder or default_embedder())
        # Without an embedder of its own, the client embeds each tenant with the built-in model that made
        # its vectors (tenants.embedding_model, fixed at creation; one vector space per tenant).
        self._per_tenant = embedder is None and self._embedder is not None
        self._tenant_models: dict[str, str] = {}
        # Per-tenant mode declares the model of the vectors each call sends (cogmem.embedding_model), so a
        # tenant re-embedded since its model was cached refuses them rather than mixing two spaces: what the
        # thread's next call must declare ("" for a caller's own vector), and what each connection has.
        self._next_model = threading.local()
        self._declared: weakref.WeakKeyDictionary[psycopg.Connection, str] = weakref.WeakKeyDictionary()
        self._classifier = classifier
        self._judge = judge
        # Per (tenant, conversation): the last recall and the message it was for, while its next turn is
        # awaited (the judge's; bounded, oldest conversations dropped).
        self._awaiting: OrderedDict[tuple[str, str], tuple[UUID, str]] = OrderedDict()
        _check_login(dsn)
        self.pool = ConnectionPool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            configure=self._configure,
            open=True,
            kwargs={"autocommit": True},
        )

    def _configure(self, conn: psycopg.Connection) -> None:
        """A new connection of the pool: pgvector's types, and the model this client's vectors are made by,
        so the database refuses them for a tenant of another model (sql/007-embed.sql, issue 47)."""
        register_vector(conn)
        model = None if self._per_tenant else getattr(self._embedder, "model_id", None)
        if isinstance(model, str) and model:
            conn.execute("SELECT pg_catalog.set_config('cogmem.embedding_model', %s, false)", (model,))

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def connection(self, conn: psycopg.Connection | None = None) -> Iterator[psycopg.Connection]:
        """The caller's connection (to join its transaction) or one from the pool."""
        try:
            if conn is not None:
                self._declare(conn)
                yield conn
            else:
                with self.pool.connection() as pooled:
                    self._declare(pooled)
                    yield pooled
        except psycopg.Error as error:
            # A tenant re-embedded since its model was cached: the next call embeds it with its new one.
            if isinstance(error, psycopg.errors.DataException) and "holds vectors of" in str(error):
                self.forget_tenant_models()
            errors.retype(error)  # also cogmem_pg.errors' kind of it (issue 51)
            raise

    def _declare(self, conn: psycopg.Connection) -> None:
        """Per-tenant mode: declares on CONN the model of the vector the thread's next call sends (set by
        ``vectors``; "" for a caller's own), when CONN does not declare it already."""
        model = getattr(self._next_model, "model", None)
        if model is None:
            return
        self._next_model.model = None
        if self._declared.get(conn, "") != model:
            conn.execute("SELECT pg_catalog.set_config('cogmem.embedding_model', %s, false)", (model,))
            self._declared[conn] = model

    def forget_tenant_models(self) -> None:
        """Forgets which model each tenant's vectors are of (after a re-embedding elsewhere; a refused
        vector forgets it too)."""
        self._tenant_models.clear()

    def _vector(
        self,
        text: str,
        embedding: Sequence[float] | None,
        tenant: str | None = None,
        conn: psycopg.Connection | None = None,
        *,
        query: bool = False,
    ) -> Any:
        if embedding is not None:
            import numpy as np

            if self._per_tenant:  # the caller's vector, of a model the client does not know: not declared
                self._next_model.model = ""
            return np.asarray(embedding, dtype=np.float32)
        embedded = self.vectors([text], tenant, conn, query=query)
        return None if embedded is None else embedded[0]

    def embedder_for(self, tenant: str | None, conn: psycopg.Connection | None = None) -> Embedder | None:
        """The embedder of TENANT's vectors: the client's own when it was given one, else the built-in model
        of the tenant's embedding_model (None for a model the client does not have: the tenant is then
        found by full text, or by the vectors its caller sends)."""
        if not self._per_tenant or tenant is None:
            return self._embedder
        model = self._tenant_models.get(tenant)
        if model is None:
            with self.connection(conn) as c:
                row = c.execute("SELECT embedding_model FROM cogmem.tenants WHERE tenant = %s", (tenant,)).fetchone()
            if row is None:  # not created yet (or not visible): the call itself says so
                return self._embedder
            model = self._tenant_models[tenant] = str(row[0])
        return builtin_embedder(model)

    def vectors(
        self,
        texts: Sequence[str],
        tenant: str | None = None,
        conn: psycopg.Connection | None = None,
        *,
        query: bool = False,
    ) -> list[Any] | None:
        """The client's embeddings of TEXTS in one call, by TENANT's model (the query side for a question;
        None without an embedder: the server embeds, or full text serves; numpy comes with [embed] only)."""
        embedder = self.embedder_for(tenant, conn) if texts else None
        if embedder is None:
            return None
        import numpy as np

        vectors = embed_queries(embedder, list(texts)) if query else embedder.embed(list(texts))
        if self._per_tenant:
            self._next_model.model = str(getattr(embedder, "model_id", ""))
        return [np.asarray(v, dtype=np.float32) for v in vectors]

    def _scalar(self, conn: psycopg.Connection | None, query: str, params: tuple[Any, ...]) -> Any:
        """The single value a one-row query returns."""
        with self.connection(conn) as c:
            row = c.execute(query, params).fetchone()
            assert row is not None
            return row[0]

    def _rows(
        self, conn: psycopg.Connection | None, row_type: type[T], query: str, params: tuple[Any, ...] | dict[str, Any]
    ) -> list[T]:
        """Every row of a query as ``row_type`` dataclasses."""
        with self.connection(conn) as c, c.cursor(row_factory=class_row(row_type)) as cur:
            cur.execute(query, params)
            return cur.fetchall()

    # sql/016-large-tenants.sql
    def tenant_indexes(self, above: int = 20000, *, conn: psycopg.Connection | None = None) -> list[TenantIndex]:
        """Administrators: each large tenant's own indexes, their state and the statement to run (outside a
        transaction: `cogmem index-tenants --apply` runs them)."""
        return self._rows(conn, TenantIndex, "SELECT * FROM cogmem.tenant_indexes(%s)", (above,))

    # sql/000-tenant-access.sql
    def grant_tenant(
        self,
        role: str,
        tenant: str,
        *,
        vault: bool = False,
        person: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> None:
        """Lets ROLE reach TENANT; with ``person``, only that person of it (their memories and the shared)."""
        self._scalar(conn, "SELECT cogmem.grant_tenant(%s, %s, %s, %s)", (role, tenant, vault, person))

    def revoke_tenant(self, role: str, tenant: str, *, conn: psycopg.Connection | None = None) -> bool:
        return bool(self._scalar(conn, "SELECT cogmem.revoke_tenant(%s, %s)", (role, tenant)))

    # sql/007-embed.sql
    def server_can_embed(self, *, conn: psycopg.Connection | None = None) -> bool:
        return bool(self._scalar(conn, "SELECT cogmem.server_can_embed()", ()))

    # sql/010-topics.sql
    def detect_topics(self, tenant: str, message: str, *, conn: psycopg.Connection | None = None) -> list[str]:
        return list(self._scalar(conn, "SELECT cogmem.detect_topics(%s, %s)", (tenant, message)))

    def set_topic(
        self, tenant: str, topic: str, keywords: Sequence[str], *, conn: psycopg.Connection | None = None
    ) -> None:
        with self.connection(conn) as c:
            c.execute("SELECT cogmem.set_topic(%s, %s, %s)", (tenant, topic, list(keywords)))

    def topic_keywords(self, tenant: str, *, conn: psycopg.Connection | None = None) -> list[TopicKeywords]:
        return self._rows(conn, TopicKeywords, "SELECT * FROM cogmem.topic_keywords(%s)", (tenant,))

    # sql/020-tenants.sql
    def create_tenant(
        self,
        tenant: str,
        language: str = "english",
        *,
        embedding_model: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> None:
        """Creates TENANT (idempotent); EMBEDDING_MODEL names the model of its vectors (the database's
        default when None; fixed once created, see :meth:`reembed`)."""
        with self.connection(conn) as c:
            c.execute("SELECT cogmem.create_tenant(%s, %s, %s)", (tenant, language, embedding_model))

    def reembed(
        self,
        tenant: str,
        model: str,
        *,
        batch: int = 128,
        on_progress: Callable[[ReembedProgress], None] | None = None,
    ) -> ReembedProgress:
        """Re-embeds TENANT with MODEL, online and resumably, and swaps its vectors in (sql/022-reembed.sql);
        by the client's own embedder when it makes MODEL's vectors, else the built-in one."""
        own = None if self._per_tenant else self._embedder
        embedder = own if getattr(own, "model_id", None) == model else None
        done = reembed(self.connection, tenant, model, embedder=embedder, batch=batch, on_progress=on_progress)
        self._tenant_models.pop(tenant, None)
        return done

    def reembed_cancel(self, tenant: str, *, conn: psycopg.Connection | None = None) -> bool:
        """Drops TENANT's re-embedding under way (its old vectors were never touched)."""
        return bool(self._scalar(conn, "SELECT cogmem.reembed_cancel(%s)", (tenant,)))

    def configure_tenant(
        self, tenant: str, settings: dict[str, Any], layer: str | None = None, *, conn: psycopg.Connection | None = None
    ) -> dict[str, Any]:
        """Changes a tenant's settings (or one layer's, with LAYER); returns them as they now are."""
        return dict(self._scalar(conn, "SELECT cogmem.configure_tenant(%s, %s, %s)", (tenant, Jsonb(settings), layer)))

    # sql/030-routing.sql
    def route(
        self, content: str, embedding: Sequence[float] | None = None, *, conn: psycopg.Connection | None = None
    ) -> str:
        return str(self._scalar(conn, "SELECT cogmem.route(%s, %b)", (content, self._vector(content, embedding))))

    def classify(
        self, content: str, embedding: Sequence[float] | None = None, *, conn: psycopg.Connection | None = None
    ) -> dict[str, Any]:
        """cogmem.classify(): ring, instruction, each ring's probability, which model decided, and the
        never-cut ring it is a candidate for (likely, not sure)."""
        with self.connection(conn) as c, c.cursor(row_factory=dict_row) as cur:
            cur.execute("SELECT * FROM cogmem.classify(%s, %b)", (content, self._vector(content, embedding)))
            row = cur.fetchone()
            assert row is not None
            return row

    # sql/035-contradiction.sql
    def contradicts(self, established: str, instruction: str, *, conn: psycopg.Connection | None = None) -> bool:
        """The lexical contradiction check remember applies to an instruction."""
        return bool(self._scalar(conn, "SELECT cogmem.contradicts(%s, %s)", (established, instruction)))

    def polarity(self, content: str, *, conn: psycopg.Connection | None = None) -> int:
        """-1 for a prohibition, 1 for a requirement, 0 otherwise."""
        return int(self._scalar(conn, "SELECT cogmem.polarity(%s)", (content,)))

    # sql/040-redaction.sql
    def redact(self, content: str, *, conn: psycopg.Connection | None = None) -> tuple[str, list[str]]:
        with self.connection(conn) as c:
            row = c.execute("SELECT redacted, redactions FROM cogmem.redact(%s)", (content,)).fetchone()
            assert row is not None
            return row[0], list(row[1])

    # sql/050-bios.sql (presets through cogmem_pg/bios.py)
    def add_bios_rule(
        self,
        category: str,
        rule: str,
        severity: str = "must",
        preset: str | None = None,
        tenant: str | None = None,
        requirement: str | None = None,
        topics: Sequence[str] | None = None,
        always_on: bool = False,
        *,
        rationale: str | None = None,
        translations: dict[str, str] | None = None,
        conn: psycopg.Connection | None = None,
    ) -> int:
        """Adds a BIOS rule; translations are keyed by text-search language (e.g. {"turkish": "..."})."""
        return int(
            self._scalar(
                conn,
                "SELECT cogmem.add_bios_rule(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    category,
                    rule,
                    severity,
                    preset,
                    tenant,
                    requirement,
                    list(topics) if topics is not None else None,
                    always_on,
                    rationale,
                    Jsonb(translations) if translations is not None else None,
                ),
            )
        )

    def subscribe_bios(self, preset: str, tenant: str | None = None, *, conn: psycopg.Connection | None = None) -> bool:
        """The tenant (None: every tenant) takes the preset, so its rules are injected; True if new."""
        return bool(self._scalar(conn, "SELECT cogmem.subscribe_bios(%s, %s)", (preset, tenant)))

    def unsubscribe_bios(
        self, preset: str, tenant: str | None = None, *, conn: psycopg.Connection | None = None
    ) -> bool:
        return bool(self._scalar(conn, "SELECT cogmem.unsubscribe_bios(%s, %s)", (preset, tenant)))

    def retire_bios_rule(self, rule_id: int, reason: str, *, conn: psycopg.Connection | None = None) -> None:
        with self.connection(conn) as c:
            c.execute("SELECT cogmem.retire_bios_rule(%s, %s)", (rule_id, reason))

    def load_bios_preset(
        self, name_or_path: str, tenant: str | None = None, *, downgrade: bool = False
    ) -> tuple[Any, list[Any]]:
        """Loads a shipped preset (or a TOML file): cogmem_pg.bios.load_preset on a pooled connection."""
        from cogmem_pg import bios

        with self.connection() as c:
            return bios.load_preset(c, name_or_path, tenant, downgrade=downgrade)

    def bios_preset_diff(self, name_or_path: str, tenant: str | None = None) -> tuple[Any, list[Any]]:
        """What load_bios_preset would change, changing nothing."""
        from cogmem_pg import bios

        with self.connection() as c:
            return bios.diff_preset(c, name_or_path, tenant)

    # sql/055-identity.sql
    def set_core_identity(
        self,
        tenant: str,
        agent: str | None = None,
        user_profile: str | None = None,
        goals: Sequence[str] | None = None,
        *,
        conn: psycopg.Connection | None = None,
    ) -> int:
        """A new version of who the agent is, who the user is and the standing goals (None keeps a part)."""
        return int(
            self._scalar(
                conn,
                "SELECT cogmem.set_core_identity(%s, %s, %s, %s)",
                (tenant, agent, user_profile, list(goals) if goals is not None else None),
            )
        )

    def core_identity(self, tenant: str, *, conn: psycopg.Connection | None = None) -> dict[str, Any] | None:
        with self.connection(conn) as c, c.cursor(row_factory=dict_row) as cur:
            return cur.execute("SELECT * FROM cogmem.core_identity(%s)", (tenant,)).fetchone()

    # sql/058-rehearsal.sql
    def apply_rehearsals(self, tenant: str | None = None, *, conn: psycopg.Connection | None = None) -> int:
        """Moves logged rehearsals into the statistics now (pg_cron does it every minute)."""
        return int(self._scalar(conn, "SELECT cogmem.apply_rehearsals(%s)", (tenant,)))

    # sql/059-followup.sql
    def judge_followup(
        self,
        turn: str,
        embedding: Sequence[float] | None = None,
        asked: Sequence[float] | None = None,
        *,
        conn: psycopg.Connection | None = None,
    ) -> FollowupVerdict:
        """What ``turn`` says of the answer before it, by the database's judge (``asked``: the embedding of
        the message that answer was recalled for)."""
        vector = self._vector(turn, embedding)
        asked_vector = None if asked is None else self._vector("", asked)
        (verdict,) = self._rows(
            conn, FollowupVerdict, "SELECT * FROM cogmem.judge_followup(%s, %b, %b)", (turn, vector, asked_vector)
        )
        return verdict

    def judge_recall(
        self,
        tenant: str,
        recall_id: UUID,
        verdict: str,
        confidence: float = 1.0,
        judged_by: str = "caller",
        used: Sequence[int] | None = None,
        *,
        conn: psycopg.Connection | None = None,
    ) -> str:
        """Records your own judge's verdict on a recall as implicit feedback (applied, abstained or explicit
        kept: explicit feedback is never replaced)."""
        return str(
            self._scalar(
                conn,
                "SELECT cogmem.judge_recall(%s, %s, %s, %s::real, %s, %s::bigint[])",
                (tenant, recall_id, verdict, confidence, judged_by, None if used is None else list(used)),
            )
        )

    def outcome_stats(self, tenant: str, *, conn: psycopg.Connection | None = None) -> dict[str, Any] | None:
        """Outcomes by source (explicit, implicit) and what the judge said of next turns, abstentions apart."""
        with self.connection(conn) as c, c.cursor(row_factory=dict_row) as cur:
            return cur.execute("SELECT * FROM cogmem.outcome_stats WHERE tenant = %s", (tenant,)).fetchone()

    def _judge_turn(
        self, tenant: str, conversation: str | None, speaker: str | None, turn: str, conn: psycopg.Connection | None
    ) -> None:
        """With a caller's judge: the conversation's last recall judged by this turn, before the database sees
        the turn (which then leaves that recall alone). The recall's own message, remembered after it, and
        what the assistant says are not replies."""
        if self._judge is None or conversation is None or (speaker or "").strip().lower() in ASSISTANT_SPEAKERS:
            return
        awaited = self._awaiting.get((tenant, conversation))
        if awaited is None or awaited[1] == turn:
            return
        del self._awaiting[tenant, conversation]
        said = self._judge(turn, awaited[1]) or Judgement("neutral", 1.0)
        self.judge_recall(
            tenant, awaited[0], said.verdict, said.confidence, getattr(self._judge, "__name__", "caller"), conn=conn
        )

    # sql/060-remember.sql
    @overload
    def remember(
        self,
        tenant: str,
        content: str,
        ring: Ring | Kind | None = None,
        topics: Sequence[str] | None = None,
        embedding: Sequence[float] | None = None,
        source: dict[str, Any] | None = None,
        contradicts: Sequence[int] | None = None,
        *,
        conversation: str | None = None,
        speaker: str | None = None,
        said_at: datetime | None = None,
        person: str | None = None,
        agent: str | None = None,
        supersedes: Sequence[int] | None = None,
        conn: psycopg.Connection | None = None,
    ) -> Memory: ...

    @overload
    def remember(
        self,
        tenant: str,
        content: Sequence[Mapping[str, Any] | Any],
        ring: Ring | Kind | None = None,
        topics: Sequence[str] | None = None,
        embedding: Sequence[float] | None = None,
        source: dict[str, Any] | None = None,
        contradicts: Sequence[int] | None = None,
        *,
        conversation: str | None = None,
        speaker: str | None = None,
        said_at: datetime | None = None,
        person: str | None = None,
        agent: str | None = None,
        supersedes: Sequence[int] | None = None,
        conn: psycopg.Connection | None = None,
    ) -> list[BatchMemory]: ...

    def remember(
        self,
        tenant: str,
        content: str | Sequence[Mapping[str, Any] | Any],
        ring: Ring | Kind | None = None,
        topics: Sequence[str] | None = None,
        embedding: Sequence[float] | None = None,
        source: dict[str, Any] | None = None,
        contradicts: Sequence[int] | None = None,
        *,
        conversation: str | None = None,
        speaker: str | None = None,
        said_at: datetime | None = None,
        person: str | None = None,
        agent: str | None = None,
        supersedes: Sequence[int] | None = None,
        conn: psycopg.Connection | None = None,
    ) -> Memory | list[BatchMemory]:
        """ring: a ring, or a kind (rule, preference, incident, procedure, habit, fact, chat) filed in its
        ring; None routes it. contradicts: your own verdict on conflicts (memory ids the text contradicts, [] for none);
        None lets cogmem detect them (or the client's classifier, when it has one). conversation, speaker
        and said_at say where it was said: a turn of a conversation is recalled with its neighbours, its
        speaker and its date. person and agent scope it: who it is about or from, and who heard it.
        supersedes: the memories the text replaces (a correction, a changed fact: they stay for the audit
        and questions about the past, out of recall), [] for none; None lets cogmem (or the client's
        classifier) find the one it replaces.

        content may also be a chat, as frameworks pass it: a list of messages (``{"role", "content"}`` dicts,
        or objects with ``type``/``role`` and ``content``, as LangChain's). Each message of the user or the
        assistant becomes a turn of ``conversation``, said by its ``name`` or role; system and tool messages
        are instructions, not memories, and are left out. Returns one BatchMemory per turn kept."""
        if not isinstance(content, str):
            turns = chat_turns(content, conversation, said_at)
            return self.remember_many(tenant, turns, person=person, agent=agent, conn=conn) if turns else []
        vector = self._vector(content, embedding, tenant, conn)
        self._judge_turn(tenant, conversation, speaker, content, conn)
        if self._classifier is not None and (ring is None or topics is None or contradicts is None):
            shown = self.related(tenant, content, vector, person=person, agent=agent, conn=conn)
            (verdict,) = self._classifier([content], [shown])
            ring = ring or verdict.ring
            topics = topics if topics is not None else verdict.topics
            known = {e.memory_id for e in shown}
            if contradicts is None:
                contradicts = [i for i in verdict.contradicts if i in known]
            if supersedes is None and verdict.supersedes is not None:
                supersedes = [i for i in verdict.supersedes if i in known]
        # A rule said as one clause, with its story, is read by the model in its clauses too.
        clauses = self._clause_vectors(tenant, content, vector, conn) if ring is None and embedding is None else None
        (memory,) = self._rows(
            conn,
            Memory,
            # Vectors travel binary (%b): as text, formatting and parsing 384 floats costs more than the call.
            "SELECT * FROM cogmem.remember(%s, %s, %s, %s, %b, %s, %s::bigint[], %s, %s, %s, %s, %s, %s::bigint[], %b)",
            (
                tenant,
                content,
                ring,
                list(topics) if topics is not None else None,
                vector,
                json.dumps(source or {}),
                list(contradicts) if contradicts is not None else None,
                conversation,
                speaker,
                said_at,
                person,
                agent,
                list(supersedes) if supersedes is not None else None,
                clauses,
            ),
        )
        return memory

    def _clause_vectors(
        self, tenant: str, content: str, vector: Any, conn: psycopg.Connection | None
    ) -> list[Any] | None:
        """The embeddings of the parts of CONTENT the router reads alone (cogmem.clauses), when it would read
        them: a message routed nowhere protected yet near a never-cut ring. None for most messages."""
        return self._clauses_of_each(tenant, [content], [vector], conn)[0]

    def _clauses_of_each(
        self, tenant: str, contents: Sequence[str], vectors: Sequence[Any], conn: psycopg.Connection | None
    ) -> list[list[Any] | None]:
        """_clause_vectors for many messages (each embedded by the client, as VECTORS), in one query and one
        embedding call: what remember_many's and the store's items send as their clause_embeddings."""
        if not self._clauses or not contents or any(v is None for v in vectors):
            return [None] * len(contents)
        model = getattr(self.embedder_for(tenant, conn), "model_id", None)
        declared = getattr(self._next_model, "model", None)
        parts: list[list[str]] = self._scalar(conn, *clauses_call(contents, vectors, model))
        embedded = self.vectors([p for each in parts for p in each], tenant, conn) or []
        if not any(parts):
            self._next_model.model = declared  # for the store's own connection, which may be another
        return grouped_parts(parts, embedded)

    # sql/061-remember-many.sql
    def remember_many(
        self,
        tenant: str,
        items: Sequence[str | dict[str, Any]],
        embeddings: Sequence[Sequence[float] | None] | None = None,
        *,
        skip: Sequence[str] = (),
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> list[BatchMemory]:
        """Stores a batch in one call. Items are texts or dicts with content and optionally ring, topics,
        source, conversation, speaker, said_at (an ISO 8601 text or a datetime), person, agent (``person``
        and ``agent`` here: for the items that name none) and supersedes (as remember's: the ids of memories
        stored before the batch that the item replaces, [] for none). Without embeddings, the client's
        embedder (if any) embeds the whole batch at once. Each item gets every check remember() makes, unless
        ``skip`` names some (``near_duplicates``, ``conflicts``)."""
        texts = [i if isinstance(i, str) else str(i.get("content", "")) for i in items]
        embedded_here = embeddings is None
        if embeddings is None and items:
            embeddings = self.vectors(texts, tenant, conn)
        if self._classifier is not None and items:
            # Rings and topics: the classifier is not asked about conflicts in a batch.
            verdicts = self._classifier(texts, [[] for _ in texts])
            items = [_classified(item, verdict) for item, verdict in zip(items, verdicts, strict=True)]
        if embedded_here and embeddings is not None:
            items = self._with_clauses(tenant, items, texts, embeddings, conn)
        vectors = None
        if embeddings is not None and any(e is not None for e in embeddings):
            import numpy as np  # only with vectors: numpy comes with the [embed] extra

            vectors = [None if e is None else np.asarray(e, np.float32) for e in embeddings]
        elif embeddings is not None and len(embeddings) != len(items):
            vectors = [None] * len(embeddings)  # let the server report the count mismatch
        return self._rows(
            conn,
            BatchMemory,
            "SELECT * FROM cogmem.remember_many(%s, %s, %b, %s, %s, %s)",
            # A datetime said_at travels as ISO 8601 text.
            (tenant, json.dumps(list(items), default=_iso), vectors, list(skip), person, agent),
        )

    def _with_clauses(
        self,
        tenant: str,
        items: Sequence[str | dict[str, Any]],
        texts: Sequence[str],
        embeddings: Sequence[Any],
        conn: psycopg.Connection | None,
    ) -> list[str | dict[str, Any]]:
        """ITEMS, each routed by cogmem with the clause_embeddings of its parts (as remember sends them), for
        the few the router reads part by part; an item given a ring or its own clause_embeddings is as it was."""
        routed = [
            n for n, i in enumerate(items)
            if isinstance(i, str) or (i.get("ring") is None and i.get("clause_embeddings") is None)
        ]  # fmt: skip
        found = self._clauses_of_each(tenant, [texts[n] for n in routed], [embeddings[n] for n in routed], conn)
        out = list(items)
        for n, parts in zip(routed, found, strict=True):
            if parts:
                item = out[n]
                out[n] = {**({"content": item} if isinstance(item, str) else item),
                          "clause_embeddings": [[float(x) for x in v] for v in parts]}  # fmt: skip
        return out

    # sql/064-siblings.sql
    def siblings(self, tenant: str, memory_id: int, *, conn: psycopg.Connection | None = None) -> list[Sibling]:
        return self._rows(conn, Sibling, "SELECT * FROM cogmem.siblings(%s, %s)", (tenant, memory_id))

    # sql/068-gut.sql
    def gut_configure(
        self,
        tenant: str,
        *,
        contribute: bool | None = None,
        receive: bool | None = None,
        conn: psycopg.Connection | None = None,
    ) -> GutSwitches:
        """Opts a tenant in or out of contributing (administrators; off by default) and receiving."""
        query = "SELECT * FROM cogmem.gut_configure(%s, contribute => %s, receive => %s)"
        return self._rows(conn, GutSwitches, query, (tenant, contribute, receive))[0]

    def gut_release(self, epsilon: float | None = None, *, conn: psycopg.Connection | None = None) -> GutRelease:
        """Releases patterns, spending ``epsilon`` (default: what the period has left); the cogmem_gut role."""
        return self._rows(conn, GutRelease, "SELECT * FROM cogmem.gut_release(%s)", (epsilon,))[0]

    def gut_patterns(self, tenant: str, *, conn: psycopg.Connection | None = None) -> list[GutPattern]:
        """The released patterns the tenant receives, with their noisy support and success."""
        return self._rows(conn, GutPattern, "SELECT * FROM cogmem.gut_patterns_for(%s)", (tenant,))

    def gut_deidentify(self, content: str, *, conn: psycopg.Connection | None = None) -> str:
        """A text as the Gut would take it: redacted, names of a tenant's world replaced by placeholders."""
        return str(self._scalar(conn, "SELECT cogmem.gut_deidentify(%s)", (content,)))

    def gut_ledger(self, *, conn: psycopg.Connection | None = None) -> list[GutPeriod]:
        """The privacy budget per period: spent, remaining, releases (the cogmem_gut role, auditors)."""
        return self._rows(conn, GutPeriod, "SELECT * FROM cogmem.gut_ledger ORDER BY period_start", ())

    # sql/069-resources.sql
    def add_resource(
        self,
        tenant: str,
        title: str,
        body: str,
        kind: str = "document",
        source: dict[str, Any] | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> ResourceAdded:
        """Adds a document (runbook, policy, template, contract): redacted, chunked by its headings, lists
        and paragraphs, each chunk embedded (by the client's embedder when it has one). The same title again
        is a new version that replaces the old one in recall, or ``unchanged``."""
        embeddings = None
        if self.embedder_for(tenant, conn) is not None:
            chunks = self.chunk_resource(tenant, title, body, conn=conn)
            vectors = self.vectors([c.embed_text for c in chunks], tenant, conn)
            if vectors is not None and chunks:
                import numpy as np  # with vectors only: numpy comes with the [embed] extra

                embeddings = [np.asarray(v, np.float32) for v in vectors]
        query = "SELECT * FROM cogmem.add_resource(%s, %s, %s, %s, %s, %b, %s, %s)"
        params = (tenant, title, body, kind, json.dumps(source or {}), embeddings, person, agent)
        return self._rows(conn, ResourceAdded, query, params)[0]

    def chunk_resource(
        self, tenant: str, title: str, body: str, *, conn: psycopg.Connection | None = None
    ) -> list[ResourceChunk]:
        """The chunks add_resource would store for a document, with the text each is embedded by."""
        return self._rows(conn, ResourceChunk, "SELECT * FROM cogmem.chunk_resource(%s, %s, %s)", (tenant, title, body))

    def retire_resource(
        self,
        tenant: str,
        title: str,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> bool:
        """Stops recalling a document (its versions stay for the audit); False when there was none."""
        query = "SELECT cogmem.retire_resource(%s, %s, %s, %s)"
        return bool(self._scalar(conn, query, (tenant, title, person, agent)))

    # sql/070-recall.sql
    def recall(
        self,
        tenant: str,
        message: str,
        embedding: Sequence[float] | None = None,
        topics: Sequence[str] | None = None,
        budget: int = 3200,
        conversation: str | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> Recall:
        """What to inject for MESSAGE within BUDGET tokens; for ``person`` and ``agent``, the tenant's shared
        memories, the person's and the agent's, never another person's."""
        vector = self._vector(message, embedding, tenant, conn, query=True)
        self._judge_turn(tenant, conversation, None, message, conn)
        with self.connection(conn) as c:
            items, recall_id = self._recall_rows(
                c, tenant, message, vector, topics, budget, conversation, person, agent
            )
        if self._judge is not None and conversation is not None and recall_id is not None:
            self._awaiting[tenant, conversation] = (recall_id, message)
            self._awaiting.move_to_end((tenant, conversation))
            while len(self._awaiting) > AWAITED_CONVERSATIONS:
                self._awaiting.popitem(last=False)
        return Recall(recall_id=recall_id, items=items)

    def _recall_rows(
        self,
        conn: psycopg.Connection,
        tenant: str,
        message: str,
        vector: Any,
        topics: Sequence[str] | None,
        budget: int,
        conversation: str | None,
        person: str | None,
        agent: str | None,
    ) -> tuple[list[RecallItem], UUID | None]:
        """recall's rows and its id, which a recall that injected nothing leaves in the session."""
        items = self._rows(
            conn,
            RecallItem,
            "SELECT * FROM cogmem.recall(%s, %s, %b, %s, %s, %s, %s, %s)",
            (
                tenant,
                message,
                vector,
                list(topics) if topics is not None else None,
                budget,
                conversation,
                person,
                agent,
            ),
        )
        if items:
            return items, items[0].recall_id
        last = self._scalar(conn, "SELECT pg_catalog.current_setting('cogmem.last_recall_id', true)", ())
        return items, UUID(last) if last else None  # a router of shards does not carry the setting back

    def feedback(
        self,
        recall_id: UUID,
        outcome: float,
        used: Sequence[int] | None = None,
        *,
        tenant: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> int:
        """Records a cycle's outcome; ``used`` names the memories the answer relied on (default: all injected).
        With ``tenant``, a recall of another tenant is refused as unknown; with ``agent`` too, one of another
        agent (the form for a caller bound to one agent)."""
        return int(
            self._scalar(
                conn,
                "SELECT cogmem.feedback("
                + _tenant_first(tenant)
                + "%s, %s::real, %s::bigint[]"
                + _agent_last(tenant, agent)
                + ")",
                (*_tenant_arg(tenant), recall_id, outcome, None if used is None else list(used), *_agent_arg(agent)),
            )
        )

    # sql/085-observe.sql
    def attention(
        self,
        content: str,
        role: str = "user",
        embedding: Sequence[float] | None = None,
        *,
        conn: psycopg.Connection | None = None,
    ) -> str:
        """Whether a turn deserves attention (cogmem.attention): the verdict observe acts on."""
        vector = self._vector(content, embedding)
        return str(self._scalar(conn, "SELECT cogmem.attention(%s, %s, %b)", (content, role, vector)))

    def observe(
        self,
        tenant: str,
        conversation: str,
        role: str,
        content: str,
        embedding: Sequence[float] | None = None,
        at: datetime | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> Observation:
        vector = self._vector(content, embedding, tenant, conn)
        (observation,) = self._rows(
            conn,
            Observation,
            "SELECT * FROM cogmem.observe(%s, %s, %s, %s, %s, coalesce(%s, now()), %s, %s)",
            (tenant, conversation, role, content, vector, at, person, agent),
        )
        return observation

    # sql/090-consolidation.sql
    def consolidate(
        self, as_of: datetime | None = None, tenant: str | None = None, *, conn: psycopg.Connection | None = None
    ) -> list[Decision]:
        return self._rows(conn, Decision, "SELECT * FROM cogmem.consolidate(coalesce(%s, now()), %s)", (as_of, tenant))

    # sql/100-audit-chain.sql
    def seal_audit(self, max_rows: int = 1_000_000, *, conn: psycopg.Connection | None = None) -> int:
        return int(self._scalar(conn, "SELECT cogmem.seal_audit(%s)", (max_rows,)))

    def verify_audit(self, tenant: str | None = None, *, conn: psycopg.Connection | None = None) -> list[AuditCheck]:
        return self._rows(conn, AuditCheck, "SELECT * FROM cogmem.verify_audit(%s)", (tenant,))

    # sql/102-explain-recall.sql
    def explain_recall(self, recall_id: UUID, *, conn: psycopg.Connection | None = None) -> list[ExplainedItem]:
        return self._rows(conn, ExplainedItem, "SELECT * FROM cogmem.explain_recall(%s)", (recall_id,))

    # sql/120-vault.sql
    def vault_put(
        self,
        tenant: str,
        name: str,
        secret: str,
        description: str = "",
        subject: str | None = None,
        *,
        conn: psycopg.Connection | None = None,
    ) -> int:
        return int(
            self._scalar(
                conn, "SELECT cogmem.vault_put(%s, %s, %s, %s, %s)", (tenant, name, secret, description, subject)
            )
        )

    def vault_get(self, tenant: str, name: str, *, conn: psycopg.Connection | None = None) -> str:
        return str(self._scalar(conn, "SELECT cogmem.vault_get(%s, %s)", (tenant, name)))

    def vault_list(self, tenant: str, *, conn: psycopg.Connection | None = None) -> list[VaultEntry]:
        """Names and descriptions, never the secrets."""
        return self._rows(conn, VaultEntry, "SELECT * FROM cogmem.vault_list(%s)", (tenant,))

    def vault_delete(self, tenant: str, name: str, *, conn: psycopg.Connection | None = None) -> bool:
        return bool(self._scalar(conn, "SELECT cogmem.vault_delete(%s, %s)", (tenant, name)))

    # sql/130-erasure.sql
    def erase(
        self, tenant: str, memory_id: int, reason: str | None = None, *, conn: psycopg.Connection | None = None
    ) -> bool:
        return bool(self._scalar(conn, "SELECT cogmem.erase(%s, %s, %s)", (tenant, memory_id, reason)))

    def erase_subject(
        self, tenant: str, subject: str, reason: str | None = None, *, conn: psycopg.Connection | None = None
    ) -> dict[str, int]:
        with self.connection(conn) as c:
            rows = c.execute("SELECT * FROM cogmem.erase_subject(%s, %s, %s)", (tenant, subject, reason)).fetchall()
        return {kind: count for kind, count in rows}

    def erase_person(
        self, tenant: str, person: str, reason: str | None = None, *, conn: psycopg.Connection | None = None
    ) -> dict[str, int]:
        """Erases everything scoped to PERSON (administrators); returns what went, by kind."""
        with self.connection(conn) as c:
            rows = c.execute("SELECT * FROM cogmem.erase_person(%s, %s, %s)", (tenant, person, reason)).fetchall()
        return {kind: count for kind, count in rows}

    # sql/140-trust.sql
    def trust(self, tenant: str, *, agent: str | None = None, conn: psycopg.Connection | None = None) -> float:
        """The trust in the tenant's AGENT (None: the tenant's own score)."""
        return float(self._scalar(conn, "SELECT cogmem.trust(%s, %s)", (tenant, agent)))

    def trust_event(
        self,
        tenant: str,
        kind: str,
        cause: str | None = None,
        memory_id: int | None = None,
        *,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> float:
        """kind: praise, delegation, caught_error or correction; moves the trust in AGENT; returns the new score."""
        query = "SELECT cogmem.trust_event(%s, %s, %s, %s, %s)"
        return float(self._scalar(conn, query, (tenant, kind, cause, memory_id, agent)))

    # sql/150-guard.sql
    def guard_check(
        self,
        tenant: str,
        area: str,
        action: str,
        embedding: Sequence[float] | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> list[GuardItem]:
        """What applies before a risky action (in the scope of person and agent); any item with blocking=True
        means: stop and ask."""
        vector = self._vector(f"{area}: {action}", embedding, tenant, conn, query=True) if action.strip() else None
        query = "SELECT * FROM cogmem.guard_check(%s, %s, %s, %b, %s, %s)"
        return self._rows(conn, GuardItem, query, (tenant, area, action, vector, person, agent))

    def report_error(
        self,
        tenant: str,
        area: str,
        description: str,
        action: str | None = None,
        repeat_of: int | None = None,
        embedding: Sequence[float] | None = None,
        source: dict[str, Any] | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> ErrorReport:
        vector = self._vector(description, embedding, tenant, conn) if repeat_of is None else None
        (report,) = self._rows(
            conn,
            ErrorReport,
            "SELECT * FROM cogmem.report_error(%s, %s, %s, %s, %s, %b, %s, %s, %s)",
            (tenant, area, description, action, repeat_of, vector, json.dumps(source or {}), person, agent),
        )
        return report

    def acknowledge(
        self, tenant: str, learning_id: int, note: str | None = None, *, conn: psycopg.Connection | None = None
    ) -> None:
        with self.connection(conn) as c:
            c.execute("SELECT * FROM cogmem.acknowledge(%s, %s, %s)", (tenant, learning_id, note))

    # sql/160-conflicts.sql
    def related(
        self,
        tenant: str,
        content: str,
        embedding: Sequence[float] | None = None,
        limit: int = 5,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> list[Established]:
        """The established memories of the scope a text could contradict (for a caller-side judge)."""
        vector = self._vector(content, embedding, tenant, conn)
        query = "SELECT * FROM cogmem.related(%s, %s, %b, %s, %s, %s)"
        return self._rows(conn, Established, query, (tenant, content, vector, limit, person, agent))

    def open_conflicts(
        self,
        tenant: str,
        *,
        person: str | None = None,
        agent: str | None = None,
        everyone: bool = True,
        conn: psycopg.Connection | None = None,
    ) -> list[Conflict]:
        """Unresolved conflicts: the tenant's, or with a person or an agent (or everyone=False), those of
        that scope."""
        query = "SELECT * FROM cogmem.open_conflicts(%s, %s, %s, %s)"
        return self._rows(conn, Conflict, query, (tenant, person, agent, everyone))

    def resolve_conflict(
        self,
        conflict_id: int,
        resolution: str,
        note: str | None = None,
        *,
        tenant: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> Resolution:
        """resolution: paradigm_shift, exception or override. With ``tenant``, a conflict of another tenant
        is refused as unknown (the form for a caller bound to one tenant); with ``agent`` too, one of another
        agent."""
        (resolved,) = self._rows(
            conn,
            Resolution,
            "SELECT * FROM cogmem.resolve_conflict("
            + _tenant_first(tenant)
            + "%s, %s, %s"
            + _agent_last(tenant, agent)
            + ")",
            (*_tenant_arg(tenant), conflict_id, resolution, note, *_agent_arg(agent)),
        )
        return resolved

    # sql/165-candidates.sql
    def pending_rules(
        self,
        tenant: str,
        *,
        person: str | None = None,
        agent: str | None = None,
        everyone: bool = True,
        conn: psycopg.Connection | None = None,
    ) -> list[PendingRule]:
        """The candidate rules and incidents waiting to be confirmed, newest first, with the question to ask
        (with a person or an agent, or everyone=False, those that scope sees)."""
        query = "SELECT * FROM cogmem.pending_rules(%s, %s, %s, %s)"
        return self._rows(conn, PendingRule, query, (tenant, person, agent, everyone))

    def confirm_ring(
        self,
        tenant: str,
        memory_id: int,
        ring: str,
        *,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> str:
        """A person confirms a memory (a candidate) into a ring (with ``agent``: one of that agent's, or shared)."""
        return str(self._scalar(conn, "SELECT cogmem.confirm_ring(%s, %s, %s, %s)", (tenant, memory_id, ring, agent)))

    def dismiss_candidate(
        self, tenant: str, memory_id: int, *, agent: str | None = None, conn: psycopg.Connection | None = None
    ) -> bool:
        """A person says a candidate is no rule or incident: it becomes an ordinary fresh memory (with
        ``agent``: one of that agent's, or shared)."""
        return bool(self._scalar(conn, "SELECT cogmem.dismiss_candidate(%s, %s, %s)", (tenant, memory_id, agent)))

    # sql/170-episodes.sql
    def start_session(
        self,
        tenant: str,
        project: str | None = None,
        goal: str | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> UUID:
        """Pass str(session_id) as recall's and observe's conversation; the episode keeps the scope."""
        query = "SELECT cogmem.start_session(%s, %s, %s, %s, %s)"
        return UUID(str(self._scalar(conn, query, (tenant, project, goal, person, agent))))

    def end_session(
        self,
        session_id: UUID,
        summary: str,
        decisions: Sequence[str] = (),
        open_items: Sequence[str] = (),
        next_steps: Sequence[str] = (),
        facts: Sequence[str] = (),
        procedures: Sequence[str] = (),
        phase: str | None = None,
        memory_ids: Sequence[int] = (),
        *,
        tenant: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> Episode:
        """With ``tenant``, a session of another tenant is refused as unknown."""
        (episode,) = self._rows(
            conn,
            Episode,
            f"SELECT * FROM cogmem.end_session({_tenant_first(tenant)}%s, %s, %s, %s, %s, %s, %s, %s, %s::bigint[])",
            (
                *_tenant_arg(tenant),
                session_id,
                summary,
                list(decisions),
                list(open_items),
                list(next_steps),
                list(facts),
                list(procedures),
                phase,
                list(memory_ids),
            ),
        )
        return episode

    def briefing(
        self,
        tenant: str,
        project: str | None = None,
        budget: int = 800,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> list[BriefingLine]:
        query = "SELECT * FROM cogmem.briefing(%s, %s, %s, %s, %s)"
        return self._rows(conn, BriefingLine, query, (tenant, project, budget, person, agent))

    def briefing_text(
        self,
        tenant: str,
        project: str | None = None,
        budget: int = 800,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> str | None:
        """The briefing as one Markdown block for a prompt."""
        query = "SELECT cogmem.briefing_text(%s, %s, %s, %s, %s)"
        return self._scalar(conn, query, (tenant, project, budget, person, agent))  # type: ignore[no-any-return]

    def analyze(
        self,
        tenant: str,
        topic: str,
        since: datetime | None = None,
        until: datetime | None = None,
        *,
        conn: psycopg.Connection | None = None,
    ) -> list[Finding]:
        return self._rows(
            conn,
            Finding,
            "SELECT * FROM cogmem.analyze(%s, %s, coalesce(%s::timestamptz, '-infinity'),"
            " coalesce(%s::timestamptz, 'infinity'))",
            (tenant, topic, since, until),
        )

    # sql/180-store.sql (LangGraph's BaseStore is cogmem_pg/langgraph.py)
    @staticmethod
    def _store_path(namespace: Sequence[str] | None, *texts: str | None) -> list[str] | None:
        """NAMESPACE as a list; a NUL in it or in TEXTS refused with a reason (PostgreSQL text cannot hold
        one, and the driver refuses it without a SQLSTATE)."""
        labels = None if namespace is None else list(namespace)
        if any(isinstance(t, str) and "\x00" in t for t in [*(labels or []), *texts]):
            raise ValueError(
                "store namespace labels, keys, texts and queries cannot hold NUL (\\u0000): PostgreSQL text cannot"
            )
        return labels

    @classmethod
    def _store_labels(cls, namespace: Sequence[str], *texts: str | None) -> list[str]:
        """As _store_path, for a namespace that is always given (an item's, a search's prefix)."""
        return cls._store_path(namespace, *texts) or []

    def store_put(
        self,
        tenant: str,
        namespace: Sequence[str],
        key: str,
        value: dict[str, Any],
        index_text: str | None = None,
        ttl_minutes: float | None = None,
        embedding: Sequence[float] | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        embedded_fields: Sequence[str] | None = None,
        embeddings: Sequence[Sequence[float]] | None = None,
        clause_embeddings: Sequence[Any] | None = None,
        conn: psycopg.Connection | None = None,
    ) -> StorePut:
        """Puts VALUE under NAMESPACE and KEY; INDEX_TEXT, when given, becomes the item's memory (in the
        scope of ``person`` and ``agent``); EMBEDDINGS, the item's own vectors by the caller's model, each
        named by the field of EMBEDDED_FIELDS it was made from. CLAUSE_EMBEDDINGS: as remember's, by the
        tenant's model; the client makes them itself when it embeds INDEX_TEXT."""
        labels = self._store_labels(namespace, key, index_text, *(embedded_fields or ()))
        vector = None if not index_text else self._vector(index_text, embedding, tenant, conn)
        if clause_embeddings is None and index_text and embedding is None and ttl_minutes is None:
            clause_embeddings = self._clause_vectors(tenant, index_text, vector, conn)
        return self._rows(
            conn,
            StorePut,
            *store_put_call(
                tenant,
                labels,
                key,
                value,
                index_text,
                ttl_minutes,
                vector,
                person,
                agent,
                embedded_fields,
                embeddings,
                clause_embeddings,
            ),
        )[0]

    def store_get(
        self,
        tenant: str,
        namespace: Sequence[str],
        key: str,
        refresh_ttl: bool = True,
        *,
        person: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> StoredItem | None:
        """The item under NAMESPACE and KEY of ``person`` (None: the tenant's shared item)."""
        with self.connection(conn) as c:
            row = c.execute(
                *store_get_call(tenant, self._store_labels(namespace, key), key, refresh_ttl, person)
            ).fetchone()
        return None if row is None else StoredItem(tuple(namespace), key, *row)

    def store_delete(
        self,
        tenant: str,
        namespace: Sequence[str],
        key: str,
        *,
        person: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> bool:
        """Deletes the item under NAMESPACE and KEY of ``person`` (None: the shared item)."""
        return bool(self._scalar(conn, *store_delete_call(tenant, self._store_labels(namespace, key), key, person)))

    def store_sweep(self, tenant: str, *, conn: psycopg.Connection | None = None) -> int:
        """Deletes TENANT's expired store items now (and the memories they created); how many."""
        return int(self._scalar(conn, "SELECT cogmem.store_sweep(%s)", (tenant,)))

    def store_search(
        self,
        tenant: str,
        namespace_prefix: Sequence[str] = (),
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool = True,
        embedding: Sequence[float] | None = None,
        *,
        person: str | None = None,
        vectors: Literal["memories", "fields"] = "memories",
        distance: Literal["cosine", "inner_product", "l2"] = "cosine",
        conn: psycopg.Connection | None = None,
    ) -> list[StoredItem]:
        """Items under a prefix that pass FILTER (``person``'s only, when given); with QUERY, the most similar
        first, by the items' memories (the tenant's model embeds the query unless EMBEDDING is given) or, with
        ``vectors="fields"``, by the items' own vectors (EMBEDDING: the query's, by the caller's model)."""
        prefix = self._store_labels(namespace_prefix, query)
        if vectors == "fields":
            vector = None if embedding is None else Vector(list(embedding))
        else:
            vector = None if not query else self._vector(query, embedding, tenant, conn, query=True)
        call = store_search_call(
            tenant, prefix, query, filter, limit, offset, vector, refresh_ttl, person, vectors, distance
        )
        with self.connection(conn) as c:
            rows = c.execute(*call).fetchall()
        return [StoredItem(tuple(ns), *rest) for ns, *rest in rows]

    def store_namespaces(
        self,
        tenant: str,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
        *,
        person: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> list[tuple[str, ...]]:
        """The namespaces holding items (``person``'s only, when given); '*' in PREFIX or SUFFIX matches any
        label."""
        call = store_namespaces_call(
            tenant, self._store_path(prefix), self._store_path(suffix), max_depth, limit, offset, person
        )
        with self.connection(conn) as c:
            rows = c.execute(*call).fetchall()
        return [tuple(row[0]) for row in rows]

    # sql/185-app-verbs.sql
    def get_memory(
        self,
        tenant: str,
        memory_id: int,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> StoredMemory:
        """One memory of the scope of ``person`` and ``agent`` (Mem0's get). A memory outside the scope is as
        missing as one that never was: both raise :class:`cogmem_pg.errors.NotFound` (P0002)."""
        query = "SELECT * FROM cogmem.get_memory(%s, %s, %s, %s)"
        (memory,) = self._rows(conn, StoredMemory, query, (tenant, memory_id, person, agent))
        return memory

    def list_memories(
        self,
        tenant: str,
        ring: Ring | Kind | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        after_id: int | None = None,
        page_size: int = 100,
        superseded: bool = False,
        shared: bool = True,
        conn: psycopg.Connection | None = None,
    ) -> list[StoredMemory]:
        """A page of the memories the scope sees (Mem0's get_all), newest first: of RING if given, remembered
        from ``since`` until before ``until``; the next page: ``after_id`` = the last memory_id of this one.
        ``superseded``: the replaced versions too; ``shared=False``: only what this scope may change (the
        person's own memories), not what the tenant shares with it."""
        query = "SELECT * FROM cogmem.list_memories(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        params = (tenant, ring, person, agent, since, until, after_id, page_size, superseded, shared)
        return self._rows(conn, StoredMemory, query, params)

    def update_memory(
        self,
        tenant: str,
        memory_id: int,
        content: str,
        ring: Ring | Kind | None = None,
        topics: Sequence[str] | None = None,
        embedding: Sequence[float] | None = None,
        source: dict[str, Any] | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> MemoryUpdate:
        """A new version of MEMORY_ID (Mem0's update): CONTENT remembered in its scope and ring (unless RING
        is given), superseding it; the old version stays for history, out of recall. Only a memory of this
        scope's own (the person's): one it only sees raises :class:`~cogmem_pg.errors.PermissionDenied`, a
        superseded version :class:`~cogmem_pg.errors.NotReady` (update the current one)."""
        vector = self._vector(content, embedding, tenant, conn)
        (done,) = self._rows(
            conn,
            MemoryUpdate,
            "SELECT * FROM cogmem.update_memory(%s, %s, %s, %s, %s, %b, %s, %s, %s)",
            (
                tenant,
                memory_id,
                content,
                ring,
                list(topics) if topics is not None else None,
                vector,
                json.dumps(source or {}),
                person,
                agent,
            ),
        )
        return done

    def delete_memory(
        self,
        tenant: str,
        memory_id: int,
        reason: str | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> bool:
        """Erases MEMORY_ID (Mem0's delete) through cogmem.erase, audited with REASON; only a memory of this
        scope's own."""
        query = "SELECT cogmem.delete_memory(%s, %s, %s, %s, %s)"
        return bool(self._scalar(conn, query, (tenant, memory_id, person, agent, reason)))

    def memory_history(
        self,
        tenant: str,
        memory_id: int,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> list[HistoryEntry]:
        """MEMORY_ID's versions, oldest first, then the audit events of each in time order (Mem0's history);
        for a login narrowed to a person, the versions only (the audit trail is not its to read)."""
        query = "SELECT * FROM cogmem.memory_history(%s, %s, %s, %s)"
        return self._rows(conn, HistoryEntry, query, (tenant, memory_id, person, agent))

    # sql/190-experiments.sql (administrators)
    def experiment_create(
        self,
        name: str,
        parameter: str,
        arms: Sequence[Any],
        unit: Literal["tenant", "session"] = "tenant",
        metric: Literal["success_rate", "items_used", "corrections"] = "success_rate",
        tenants: Sequence[str] | None = None,
        *,
        conn: psycopg.Connection | None = None,
    ) -> list[ExperimentArm]:
        """Starts an experiment on a tenant setting; each enrolled tenant's arm."""
        return self._rows(
            conn,
            ExperimentArm,
            "SELECT * FROM cogmem.experiment_create(%s, %s, %s, %s, %s, %s)",
            (name, parameter, Jsonb(list(arms)), unit, metric, None if tenants is None else list(tenants)),
        )

    def experiment_status(self, name: str | None = None, *, conn: psycopg.Connection | None = None) -> list[Experiment]:
        return self._rows(conn, Experiment, "SELECT * FROM cogmem.experiment_status(%s)", (name,))

    def experiment_stop(self, name: str, *, conn: psycopg.Connection | None = None) -> datetime:
        return self._scalar(conn, "SELECT cogmem.experiment_stop(%s)", (name,))

    def experiment_adopt(self, name: str, arm: int, *, conn: psycopg.Connection | None = None) -> int:
        """Writes ARM's value into the settings of every tenant the experiment enrolled; how many."""
        return int(self._scalar(conn, "SELECT cogmem.experiment_adopt(%s, %s)", (name, arm)))

    def experiment_report(
        self, name: str, as_of: datetime | None = None, *, conn: psycopg.Connection | None = None
    ) -> list[ArmReport]:
        return self._rows(
            conn, ArmReport, "SELECT * FROM cogmem.experiment_report(%s, coalesce(%s, now()))", (name, as_of)
        )

    # no sql/ function: a plain read of the memories table under row-level security
    def search(
        self,
        tenant: str,
        query: str,
        limit: int = 10,
        embedding: Sequence[float] | None = None,
        *,
        person: str | None = None,
        agent: str | None = None,
        conn: psycopg.Connection | None = None,
    ) -> list[Found]:
        """Memories of every ring nearest to QUERY, of the scope of ``person`` and ``agent`` (as recall
        sees it): by cosine with an embedding (the client's, unless embedder=False), else by full text over
        any of its words. A plain read under row-level security: unlike recall it logs nothing and
        strengthens nothing."""
        vector = self._vector(query, embedding, tenant, conn, query=True)
        limit = max(1, min(int(limit), 200))
        params = {"tenant": tenant, "query": query, "vector": vector, "limit": limit, "person": person, "agent": agent}
        return self._rows(conn, Found, _SEARCH, params)


# The store's SQL calls, shared by Client and cogmem_pg.langgraph's AsyncCogmemStore (its own async pool):
# each returns the statement and its parameters.
Call = tuple[str, tuple[Any, ...]]


def store_put_call(
    tenant: str,
    namespace: Sequence[str],
    key: str,
    value: dict[str, Any],
    index_text: str | None,
    ttl_minutes: float | None,
    vector: Any,
    person: str | None,
    agent: str | None,
    embedded_fields: Sequence[str] | None = None,
    embeddings: Sequence[Sequence[float]] | None = None,
    clause_embeddings: Sequence[Any] | None = None,
) -> Call:
    """cogmem.store_put; VECTOR is the memory's (the tenant's model), as are CLAUSE_EMBEDDINGS (remember's);
    EMBEDDINGS the item's own."""
    own = None if embeddings is None else [Vector(list(e)) for e in embeddings]
    fields = None if embedded_fields is None else list(embedded_fields)
    parts = (
        None
        if clause_embeddings is None
        else [e if isinstance(e, Vector) else Vector(list(e)) for e in clause_embeddings]
    )
    return (
        "SELECT * FROM cogmem.store_put(%s, %s, %s, %s, %s, %s, %b, %s, %s, %s, %b, %b)",
        (tenant, list(namespace), key, Jsonb(value), index_text, ttl_minutes, vector, person, agent, fields, own,
         parts),
    )  # fmt: skip


def grouped_parts(parts: Sequence[Sequence[str]], embedded: Sequence[Any]) -> list[list[Any] | None]:
    """The vectors of every message's parts (EMBEDDED, in the order of PARTS flattened), by message; None for a
    message of no parts (what remember's clause_embeddings takes)."""
    vectors = iter(embedded)
    return [[next(vectors) for _ in each] if each else None for each in parts]


def clauses_call(contents: Sequence[str], vectors: Sequence[Any], model: str | None) -> Call:
    """cogmem.clauses of each of CONTENTS, embedded as VECTORS by MODEL: one JSON array of parts per content."""
    return (
        "SELECT coalesce(jsonb_agg(to_jsonb(cogmem.clauses(x.content, x.vector, %s)) ORDER BY x.n), '[]')"
        " FROM unnest(%s::text[], %b::public.vector[]) WITH ORDINALITY AS x (content, vector, n)",
        (model, list(contents), list(vectors)),
    )


def store_get_call(tenant: str, namespace: Sequence[str], key: str, refresh_ttl: bool, person: str | None) -> Call:
    return (
        "SELECT value, created_at, updated_at, memory_id FROM cogmem.store_get(%s, %s, %s, %s, %s)",
        (tenant, list(namespace), key, refresh_ttl, person),
    )


def store_delete_call(tenant: str, namespace: Sequence[str], key: str, person: str | None) -> Call:
    return "SELECT cogmem.store_delete(%s, %s, %s, %s)", (tenant, list(namespace), key, person)


def store_search_call(
    tenant: str,
    namespace_prefix: Sequence[str],
    query: str | None,
    filter: dict[str, Any] | None,
    limit: int,
    offset: int,
    vector: Any,
    refresh_ttl: bool,
    person: str | None,
    vectors: str = "memories",
    distance: str = "cosine",
) -> Call:
    return (
        "SELECT namespace, key, value, created_at, updated_at, memory_id, score"
        " FROM cogmem.store_search(%s, %s, %s, %s, %s, %s, %b, %s, %s, %s, %s)",
        (
            tenant,
            list(namespace_prefix),
            query,
            None if filter is None else Jsonb(filter),
            limit,
            offset,
            vector,
            refresh_ttl,
            person,
            vectors,
            distance,
        ),
    )


def store_namespaces_call(
    tenant: str,
    prefix: Sequence[str] | None,
    suffix: Sequence[str] | None,
    max_depth: int | None,
    limit: int,
    offset: int,
    person: str | None,
) -> Call:
    return (
        "SELECT * FROM cogmem.store_namespaces(%s, %s, %s, %s, %s, %s, %s)",
        (
            tenant,
            None if prefix is None else list(prefix),
            None if suffix is None else list(suffix),
            max_depth,
            limit,
            offset,
            person,
        ),
    )


# Fields whose string is the memory itself; any other is remembered as "field: text", so that redaction
# sees what a field holds ("password: ..." is a password).
PLAIN_TEXT_FIELDS = frozenset({"content", "text", "memory", "body", "note", "summary", "message"})


def store_text(value: dict[str, Any]) -> str | None:
    """The text a store value is remembered by when no fields are chosen: all its non-blank strings."""
    strings = list(_strings(value, ""))
    if len(strings) == 1 and strings[0][0] in PLAIN_TEXT_FIELDS:
        return strings[0][1]
    return "\n".join(f"{path}: {text}" for path, text in strings) or None


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every non-blank string in a JSON value, with its path."""
    if isinstance(value, str):
        if value.strip():
            yield path, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _strings(inner, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for n, inner in enumerate(value):
            yield from _strings(inner, f"{path}[{n}]")


def _classified(item: str | dict[str, Any], verdict: Classification) -> dict[str, Any]:
    """A batch item with the classifier's ring and topics, unless the item sets them itself."""
    out: dict[str, Any] = {"content": item} if isinstance(item, str) else dict(item)
    if out.get("ring") is None:  # a null ring is no ring: the classifier's stands
        out["ring"] = verdict.ring
    if verdict.topics is not None:
        out.setdefault("topics", list(verdict.topics))
    return out
