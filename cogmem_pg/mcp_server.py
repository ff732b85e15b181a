"""`cogmem mcp`: cogmem as MCP tools and resources, on the official Python SDK (`mcp` 2.x, MCPServer).

The tenant is fixed when the server starts and is never a tool argument the model fills in, and so is the
agent the server speaks for, when it is given one (scopes, sql/015-scopes.sql); the person a conversation
is with comes with each call that reads or writes memory. The database role is the DSN's, so row-level
security and the API boundary apply as to any application. Every id a tool takes goes to the tenant-first
form of its function, so an id of another tenant the login may also reach is refused by the database as
a missing one. Tools are the loop that makes cogmem more than add-and-search: recall, remember, feedback;
guard before acting and report after a mistake; sessions and the briefing; conflicts and trust. An SQL
error becomes an MCP tool error with its message, SQLSTATE and HINT.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Any, TypeVar
from uuid import UUID

import psycopg
import pydantic
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from cogmem_pg.client import Client

T = TypeVar("T")

# What each tool does to the tenant's memory, for the client's approval prompts. Recall and guard are not
# read-only: they log the cycle and strengthen what they brought up.
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
ERASES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)


def _describe(exc: psycopg.Error) -> str:
    """An SQL error as one line: message, SQLSTATE, HINT."""
    hint = f" HINT: {exc.diag.message_hint}" if exc.diag.message_hint else ""
    return f"{exc.diag.message_primary or str(exc).strip()} ({exc.sqlstate}){hint}"


@contextmanager
def _sql_errors() -> Iterator[None]:
    try:
        yield
    except psycopg.Error as exc:
        raise ToolError(_describe(exc)) from exc


def _uuid(value: str, name: str) -> UUID:
    """An id argument as a UUID, or the tool error a malformed one deserves (not a Python traceback)."""
    try:
        return UUID(value)
    except (ValueError, TypeError, AttributeError):
        raise ToolError(f"{name} must be a UUID, got {value!r} (22P02)") from None


def _plain(value: Any) -> Any:
    """Dataclasses, UUIDs and datetimes as JSON-ready values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, UUID) or hasattr(value, "isoformat"):
        return str(value)
    return value


def build_server(client: Client, tenant: str, project: str | None = None, agent: str | None = None) -> MCPServer:
    """An MCPServer bound to one tenant (and to one agent of it, if given); the caller owns the client (and
    closes it). Refuses (ValueError) a tenant the DSN's role may not reach, exactly as one that does not
    exist."""
    try:
        client.detect_topics(tenant, "")
    except psycopg.Error as exc:
        raise ValueError(_describe(exc)) from exc
    server = _Server(
        "cogmem",
        version=metadata.version("cogmem-pg"),
        instructions=(
            f"Memory of tenant {tenant!r}. Call recall before answering and put its prompt in context; call "
            "feedback with the recall_id once the outcome is known; remember what should last; guard_check "
            "before a risky action and report_error after a mistake."
        ),
    )

    def call(fn: Callable[[], T]) -> T:
        with _sql_errors():
            return fn()

    def rows(query: str, params: tuple) -> list[dict[str, Any]]:
        with _sql_errors(), client.connection() as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
            return [_plain(r) for r in cur.execute(query, params).fetchall()]

    _memory_tools(server, client, tenant, agent, call)
    _guard_tools(server, client, tenant, agent, call)
    _session_tools(server, client, tenant, project, agent, call)
    # A tool the login may not call is not offered (an application's login cannot erase): the agent would
    # only meet a permission error.
    for tool, function in _PRIVILEGED_TOOLS.items():
        allowed = rows("SELECT has_function_privilege(%s, 'EXECUTE') AS allowed", (function,))
        if not allowed[0]["allowed"]:
            server.remove_tool(tool)
    return server


_PRIVILEGED_TOOLS = {"forget": "cogmem.erase(text, bigint, text)"}


class _Server(MCPServer):
    """MCPServer whose argument errors read as one sentence per argument (what was wrong, what came), not
    pydantic's dump with its links."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, pydantic.ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}"
                + (f" (got {e['input']!r})" if e["type"] != "missing" else "")
                for e in cause.errors(include_url=False)
            )
            raise ToolError(f"wrong arguments for {name}: {problems}") from None


def _memory_tools(server: MCPServer, client: Client, tenant: str, agent: str | None, call) -> None:
    @server.tool(annotations=WRITES)
    def recall(
        message: str, budget: int = 3200, conversation: str | None = None, person: str | None = None
    ) -> dict[str, Any]:
        """What the agent should know for MESSAGE, within a token budget: a prompt block, the recall_id
        (for feedback) and each item with its layer and why it was chosen. Pass the CONVERSATION (thread or
        session id): the user's next turn in it then says whether the answer helped, without a feedback call.
        Pass the PERSON the conversation is with: their memories come too, never another person's."""
        result = call(
            lambda: client.recall(tenant, message, budget=budget, conversation=conversation, person=person, agent=agent)
        )
        items = [_plain(i) for i in result.items]
        return {
            "recall_id": _plain(result.recall_id),  # also when nothing was injected: feedback may follow
            "prompt": result.as_prompt(),
            "tokens": result.tokens,
            "items": items,
        }

    @server.tool(annotations=WRITES)
    def remember(
        content: str,
        ring: str | None = None,
        topics: list[str] | None = None,
        conversation: str | None = None,
        speaker: str | None = None,
        said_at: str | None = None,
        person: str | None = None,
        supersedes: list[int] | None = None,
    ) -> dict[str, Any]:
        """Store what was said. RING: when you know what it is, say so and it is filed exactly there: a
        kind (rule: a standing instruction; preference: how the user wants things, "always email me", "no
        meat"; incident: something that went wrong, never to forget; procedure: steps; habit; fact; chat) or
        a ring's name. Leave it empty to let attention route it (rules and incidents only reach the never-cut
        rings when they clearly are ones); a contradiction is held as a conflict, not stored.
        For a turn of a conversation, pass its CONVERSATION (thread or session id), SPEAKER and SAID_AT (ISO
        8601): recall then brings its neighbouring turns, who said it and when. PERSON: who it is about or
        from (it is then recalled for them only); leave it empty for what holds for everyone. When the text
        corrects or changes a fact you recalled (a new address, number, time, tool), pass that memory's id in
        SUPERSEDES: the old one leaves recall (kept for history); leave it empty to let cogmem find it. In a
        conversation cogmem keeps both turns and only puts one that says it corrects ("not Tuesday", "typo")
        first: a change told as news ("they moved it to Friday") needs SUPERSEDES."""
        return _plain(
            call(
                lambda: client.remember(  # type: ignore[misc]  # its overloads: content is a str here
                    tenant,
                    content,
                    ring=ring,  # type: ignore[arg-type]
                    topics=topics,
                    source={"said_at": said_at} if said_at else None,
                    conversation=conversation,
                    speaker=speaker,
                    person=person,
                    agent=agent,
                    supersedes=supersedes,
                )
            )
        )

    @server.tool(annotations=WRITES)
    def add_resource(title: str, body: str, kind: str = "document", person: str | None = None) -> dict[str, Any]:
        """Keep a document the user shared (a runbook, a policy, a template, a contract) as a resource:
        recall then brings the section that answers, cited as [title § heading]. The same TITLE again is a
        new version that replaces the old one. Use it instead of remember for anything long and
        structured. PERSON: a document of that person's only."""
        return _plain(call(lambda: client.add_resource(tenant, title, body, kind, person=person, agent=agent)))

    @server.tool(annotations=WRITES)
    def feedback(recall_id: str, outcome: float, used: list[int] | None = None) -> dict[str, Any]:
        """The outcome of a recall (0 failure .. 1 success); USED names the memories the answer relied on."""
        return {
            "credited": call(
                lambda: client.feedback(_uuid(recall_id, "recall_id"), outcome, used, tenant=tenant, agent=agent)
            )
        }

    @server.tool(annotations=READS)
    def search_memories(query: str, limit: int = 10, person: str | None = None) -> list[dict[str, Any]]:
        """Memories of every ring nearest to QUERY (in meaning with an embedding, else in words), of
        PERSON's scope as recall sees it; a plain read: unlike recall it logs and strengthens nothing."""
        return [_plain(m) for m in call(lambda: client.search(tenant, query, limit=limit, person=person, agent=agent))]

    @server.tool(annotations=READS)
    def get_memory(memory_id: int, person: str | None = None) -> dict[str, Any]:
        """One memory of PERSON's scope: its text, ring, topics, when it was said, what superseded it,
        confidence and strength. Another person's memory is as unknown as a missing one."""
        return _plain(call(lambda: client.get_memory(tenant, memory_id, person=person, agent=agent)))

    @server.tool(annotations=READS)
    def list_memories(
        ring: str | None = None,
        page_size: int = 20,
        after_id: int | None = None,
        person: str | None = None,
    ) -> list[dict[str, Any]]:
        """The newest memories of PERSON's scope, of one ring if given; for the next page pass the last
        memory_id as AFTER_ID."""
        return [
            _plain(m)
            for m in call(
                lambda: client.list_memories(
                    tenant,
                    ring,  # type: ignore[arg-type]
                    person=person,
                    agent=agent,
                    after_id=after_id,
                    page_size=page_size,
                )
            )
        ]

    @server.tool(annotations=WRITES)
    def update_memory(
        memory_id: int, content: str, ring: str | None = None, person: str | None = None
    ) -> dict[str, Any]:
        """Replace a memory of PERSON's own by CONTENT: a new version that supersedes it (the old one leaves
        recall and stays in its history); returns the new memory_id. RING: its ring, else the old one's. A
        memory the tenant shares with everyone is not a person's to change."""
        return _plain(
            call(
                lambda: client.update_memory(
                    tenant,
                    memory_id,
                    content,
                    ring,  # type: ignore[arg-type]
                    person=person,
                    agent=agent,
                )
            )
        )

    @server.tool(annotations=ERASES)
    def delete_memory(memory_id: int, reason: str | None = None, person: str | None = None) -> dict[str, Any]:
        """Erase a memory of PERSON's own for good, when the user asks to forget it (its text and vector; the
        audit keeps a tombstone with REASON)."""
        return {"deleted": call(lambda: client.delete_memory(tenant, memory_id, reason, person=person, agent=agent))}

    @server.tool(annotations=READS)
    def memory_history(memory_id: int, person: str | None = None) -> list[dict[str, Any]]:
        """A memory's versions (what it replaced and what replaced it, with valid_until), oldest first, then
        what happened to each (created, superseded, erased, ...)."""
        return [_plain(h) for h in call(lambda: client.memory_history(tenant, memory_id, person=person, agent=agent))]

    @server.tool(annotations=ERASES)
    def forget(memory_id: int, reason: str) -> dict[str, Any]:
        """Erase any memory of the tenant for good, whoever's it is (its text and vector; the audit keeps a
        tombstone). Needs an administrator's role; delete_memory erases a person's own."""
        return {"erased": call(lambda: client.erase(tenant, memory_id, reason))}


def _guard_tools(server: MCPServer, client: Client, tenant: str, agent: str | None, call) -> None:
    @server.tool(annotations=WRITES)
    def guard_check(area: str, action: str, person: str | None = None) -> list[dict[str, Any]]:
        """Before a risky ACTION in AREA (server, deployment, payments, ...): the rules, incidents, BIOS
        rules and learnings that apply (PERSON's too, when the action is for someone). An item with
        blocking=true means: stop and ask a person."""
        return [_plain(i) for i in call(lambda: client.guard_check(tenant, area, action, person=person, agent=agent))]

    @server.tool(annotations=WRITES)
    def report_error(
        area: str, description: str, action: str | None = None, person: str | None = None
    ) -> dict[str, Any]:
        """After a mistake: a learning (the same mistake again strengthens it, and three repeats block); with
        PERSON, a lesson about that person only."""
        return _plain(
            call(lambda: client.report_error(tenant, area, description, action=action, person=person, agent=agent))
        )

    @server.tool(annotations=IDEMPOTENT)
    def acknowledge(learning_id: int, note: str | None = None) -> dict[str, Any]:
        """A person acknowledged a learning: it stops blocking until it repeats."""
        call(lambda: client.acknowledge(tenant, learning_id, note))
        return {"acknowledged": learning_id}

    @server.tool(annotations=READS)
    def open_conflicts(person: str | None = None) -> list[dict[str, Any]]:
        """What was held back because it contradicts what the tenant holds, with the verdict (of PERSON's
        conversations and this agent's)."""
        return [
            _plain(c) for c in call(lambda: client.open_conflicts(tenant, person=person, agent=agent, everyone=False))
        ]

    @server.tool(annotations=WRITES)
    def resolve_conflict(conflict_id: int, resolution: str, note: str | None = None) -> dict[str, Any]:
        """RESOLUTION: paradigm_shift (the new one replaces the old), exception (kept beside it) or
        override (dropped)."""
        return _plain(call(lambda: client.resolve_conflict(conflict_id, resolution, note, tenant=tenant, agent=agent)))

    @server.tool(annotations=READS)
    def pending_rules(person: str | None = None) -> list[dict[str, Any]]:
        """Candidate rules and incidents: what the user said that may be a standing rule or an incident to
        remember, not sure enough to be one yet. Ask the user each QUESTION, then call confirm_ring or
        dismiss_candidate with the answer."""
        return [
            _plain(r) for r in call(lambda: client.pending_rules(tenant, person=person, agent=agent, everyone=False))
        ]

    @server.tool(annotations=IDEMPOTENT)
    def confirm_ring(memory_id: int, ring: str) -> dict[str, Any]:
        """The user confirmed: move the memory into RING (dos_and_donts for a rule, shocks for an incident)."""
        return {"memory_id": memory_id, "ring": call(lambda: client.confirm_ring(tenant, memory_id, ring, agent=agent))}

    @server.tool(annotations=IDEMPOTENT)
    def dismiss_candidate(memory_id: int) -> dict[str, Any]:
        """The user said it is no rule or incident: it stays an ordinary memory."""
        return {"dismissed": call(lambda: client.dismiss_candidate(tenant, memory_id, agent=agent))}

    @server.prompt()
    def confirm_rules() -> str:
        """When to ask the user about candidate rules and incidents."""
        return (
            "When remember or recall names a candidate, or at a natural pause in the conversation (not in the "
            "middle of a task), call pending_rules. Ask the user the newest one or two questions, in their own "
            "words, one at a time. Confirm what they agree to with confirm_ring, dismiss what they reject with "
            "dismiss_candidate, and leave the rest: a candidate never fades while it waits, and one that is "
            "said again or used successfully is promoted by the night."
        )

    @server.tool(annotations=WRITES)
    def trust_event(kind: str, cause: str | None = None) -> dict[str, Any]:
        """KIND: praise, delegation, caught_error or correction; returns the new trust score."""
        return {"trust": call(lambda: client.trust_event(tenant, kind, cause, agent=agent))}


def _session_tools(
    server: MCPServer, client: Client, tenant: str, default_project: str | None, agent: str | None, call
) -> None:
    # The arguments are named as in SQL and Python (content, project), issue 51.
    @server.tool(annotations=READS)
    def briefing(project: str | None = None, person: str | None = None) -> str:
        """Where things stand: recent episodes, open items and next steps (of a project, if given; of the
        sessions with PERSON and those with no one in particular)."""
        text = call(lambda: client.briefing_text(tenant, project or default_project, person=person, agent=agent))
        return text or "(nothing to brief yet)"

    @server.tool(annotations=WRITES)
    def start_session(project: str | None = None, goal: str | None = None, person: str | None = None) -> dict[str, Any]:
        """Start a working session (with PERSON, if it is with someone); pass its session_id to end_session."""
        return {
            "session_id": str(
                call(lambda: client.start_session(tenant, project or default_project, goal, person=person, agent=agent))
            )
        }

    @server.tool(annotations=WRITES)
    def end_session(
        session_id: str,
        summary: str,
        decisions: list[str] | None = None,
        open_items: list[str] | None = None,
        next_steps: list[str] | None = None,
        facts: list[str] | None = None,
    ) -> dict[str, Any]:
        """End a session with what happened; FACTS are remembered as memories."""
        return _plain(
            call(
                lambda: client.end_session(
                    _uuid(session_id, "session_id"),
                    summary,
                    decisions or (),
                    open_items or (),
                    next_steps or (),
                    facts or (),
                    tenant=tenant,
                )
            )
        )

    @server.resource("cogmem://identity", mime_type="text/markdown")
    def identity() -> str:
        """The core identity: who the agent is, who the user is, the standing goals."""
        current = call(lambda: client.core_identity(tenant))
        if not current or current.get("version") is None:
            return "(no core identity yet)"
        goals = "\n".join(f"- {g}" for g in current["goals"] or [])
        return f"# Agent\n{current['agent'] or ''}\n\n# User\n{current['user_profile'] or ''}\n\n# Goals\n{goals}\n"

    @server.resource("cogmem://briefing", mime_type="text/markdown")
    def current_briefing() -> str:
        """The briefing of the project the server was started for."""
        return call(lambda: client.briefing_text(tenant, default_project, agent=agent)) or "(nothing to brief yet)"
