"""cogmem_pg/mcp_server.py and `cogmem mcp`: the MCP tools in-process, over stdio, and over HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client as McpClient
from mcp import StdioServerParameters

from cogmem_pg.client import Client
from cogmem_pg.mcp_server import build_server
from tests.conftest import one

COGMEM = str(Path(sys.executable).with_name("cogmem"))
TOOLS = {
    "recall",
    "add_resource",
    "remember",
    "feedback",
    "search_memories",
    "get_memory",
    "list_memories",
    "update_memory",
    "delete_memory",
    "memory_history",
    "forget",
    "guard_check",
    "report_error",
    "acknowledge",
    "briefing",
    "start_session",
    "end_session",
    "open_conflicts",
    "resolve_conflict",
    "trust_event",
    "pending_rules",
    "confirm_ring",
    "dismiss_candidate",
}


def talk(server, calls):
    """Runs calls(mcp_client) against SERVER (an MCPServer, stdio parameters or a URL); returns its result."""

    async def main():
        async with McpClient(server) as mcp:
            return await calls(mcp)

    return anyio.run(main)


def structured(result):
    assert not result.is_error, result.content
    return result.structured_content.get("result", result.structured_content)


@pytest.fixture
def cogmem(dsn, tenant):
    with Client(dsn, embedder=False) as client:
        yield client


def test_every_tool_once_in_process(cogmem, tenant):
    server = build_server(cogmem, tenant, project="checkout")

    async def calls(mcp):
        tools = {t.name: t for t in (await mcp.list_tools()).tools}
        assert set(tools) == TOOLS
        assert tools["forget"].annotations.destructive_hint is True
        assert tools["get_memory"].annotations.read_only_hint is True
        assert tools["recall"].annotations.read_only_hint is False  # it logs the cycle and strengthens
        assert tools["delete_memory"].annotations.destructive_hint is True
        out = {}
        out["rule"] = structured(
            await mcp.call_tool("remember", {"content": "Never restart web servers at night.", "ring": "dos_and_donts"})
        )
        out["fact"] = structured(await mcp.call_tool("remember", {"content": "Checkout runs on web-3."}))
        out["document"] = structured(
            await mcp.call_tool(
                "add_resource",
                {"title": "Web runbook", "body": "## Restarts\n\nDrain web-3 from the pool first.", "kind": "runbook"},
            )
        )
        out["recall"] = structured(await mcp.call_tool("recall", {"message": "Can I restart the web servers tonight?"}))
        out["feedback"] = structured(
            await mcp.call_tool("feedback", {"recall_id": out["recall"]["recall_id"], "outcome": 1.0})
        )
        out["search"] = structured(await mcp.call_tool("search_memories", {"query": "checkout web-3"}))
        out["get"] = structured(await mcp.call_tool("get_memory", {"memory_id": out["fact"]["memory_id"]}))
        out["list"] = structured(await mcp.call_tool("list_memories", {"ring": "dos_and_donts"}))
        fact = {"memory_id": out["fact"]["memory_id"], "content": "Checkout runs on web-4."}
        out["update"] = structured(await mcp.call_tool("update_memory", fact))
        out["history"] = structured(await mcp.call_tool("memory_history", {"memory_id": out["fact"]["memory_id"]}))
        out["delete"] = structured(await mcp.call_tool("delete_memory", {"memory_id": out["update"]["memory_id"]}))
        out["guard"] = structured(await mcp.call_tool("guard_check", {"area": "server", "action": "restart web-1"}))
        out["report"] = structured(
            await mcp.call_tool("report_error", {"area": "server", "description": "Restarted web-1 at night."})
        )
        out["ack"] = structured(await mcp.call_tool("acknowledge", {"learning_id": out["report"]["learning_id"]}))
        held = structured(await mcp.call_tool("remember", {"content": "Restart the web servers tonight."}))
        out["conflicts"] = structured(await mcp.call_tool("open_conflicts", {}))
        out["resolved"] = structured(
            await mcp.call_tool("resolve_conflict", {"conflict_id": held["conflict_id"], "resolution": "override"})
        )
        out["trust"] = structured(await mcp.call_tool("trust_event", {"kind": "praise"}))
        session = structured(await mcp.call_tool("start_session", {"goal": "move checkout"}))
        out["episode"] = structured(
            await mcp.call_tool(
                "end_session",
                {"session_id": session["session_id"], "summary": "Moved checkout.", "next_steps": ["Retire web-1"]},
            )
        )
        out["briefing"] = structured(await mcp.call_tool("briefing", {}))
        out["forget"] = await mcp.call_tool("forget", {"memory_id": out["fact"]["memory_id"], "reason": "test"})
        out["identity"] = (await mcp.read_resource("cogmem://identity")).contents[0].text
        out["resource"] = (await mcp.read_resource("cogmem://briefing")).contents[0].text
        return out

    out = talk(server, calls)
    assert out["rule"]["ring"] == "dos_and_donts" and out["fact"]["action"] == "created"
    assert "Never restart web servers at night." in out["recall"]["prompt"]
    assert out["document"]["action"] == "created" and out["document"]["chunks"] == 1
    assert "[Web runbook § Restarts] Drain web-3 from the pool first." in out["recall"]["prompt"]
    assert {i["layer"] for i in out["recall"]["items"]} >= {"dos_and_donts"} and out["feedback"]["credited"] >= 1
    assert out["fact"]["memory_id"] in [m["memory_id"] for m in out["search"]]
    assert out["get"]["content"] == "Checkout runs on web-3." and [m["ring"] for m in out["list"]] == ["dos_and_donts"]
    assert out["update"]["previous_id"] == out["fact"]["memory_id"] and out["update"]["action"] == "created"
    versions = [(h["memory_id"], h["event"]) for h in out["history"] if h["kind"] == "version"]
    assert versions == [(out["fact"]["memory_id"], "superseded"), (out["update"]["memory_id"], "current")]
    assert out["delete"] == {"deleted": True}
    assert any(g["kind"] == "rule" for g in out["guard"]) and out["ack"] == {
        "acknowledged": out["report"]["learning_id"]
    }
    assert [c["content"] for c in out["conflicts"]] == ["Restart the web servers tonight."]
    assert out["resolved"]["status"] == "override" and out["trust"]["trust"] > 50  # praise raises it from 50
    assert "Retire web-1" in out["briefing"] and "Retire web-1" in out["resource"]
    assert out["identity"] == "(no core identity yet)"
    # Erasure is the administrators': the test's superuser may; the SQL error path is below.
    assert structured(out["forget"]) == {"erased": True}


def test_sql_errors_are_tool_errors_with_their_message(cogmem, tenant):
    server = build_server(cogmem, tenant)

    async def calls(mcp):
        return (
            await mcp.call_tool("remember", {"content": "x", "ring": "nope"}),
            await mcp.call_tool("get_memory", {"memory_id": 4242}),
        )

    bad_ring, missing = talk(server, calls)
    assert bad_ring.is_error and 'unknown ring "nope" (22023) HINT: Use one of:' in bad_ring.content[0].text
    assert missing.is_error and 'no memory 4242 in tenant "acme" (P0002) HINT: Pass the' in missing.content[0].text


def test_the_tenant_is_bound_and_the_role_decides(dsn, db, tenant, login):
    app = login("cogmem_app")
    role = one(app, "SELECT current_user")
    app_dsn = dsn.replace("user=postgres", f"user={role}")
    with Client(app_dsn, embedder=False) as client:
        with pytest.raises(ValueError, match='unknown tenant "acme"'):
            build_server(client, tenant)  # not granted: refused as if it did not exist
        db.execute("SELECT cogmem.grant_tenant(%s, %s)", (role, tenant))
        server = build_server(client, tenant)

        async def calls(mcp):
            tools = {t.name: t for t in (await mcp.list_tools()).tools}
            assert all("tenant" not in json.dumps(t.input_schema) for t in tools.values())
            stored = structured(await mcp.call_tool("remember", {"content": "The billing contact is Maria."}))
            return stored, await mcp.call_tool("forget", {"memory_id": stored["memory_id"], "reason": "x"})

        stored, forget = talk(server, calls)
    assert stored["action"] == "created"
    # Erasure is the administrators': an application's server does not offer it (it would only fail).
    assert forget.is_error and forget.content[0].text == "Unknown tool: forget"


def test_over_stdio(dsn, tenant):
    params = StdioServerParameters(command=COGMEM, args=["--dsn", dsn, "mcp", "--tenant", tenant])

    async def calls(mcp):
        await mcp.call_tool("remember", {"content": "Never restart web servers at night.", "ring": "dos_and_donts"})
        return structured(await mcp.call_tool("recall", {"message": "restart the web servers tonight?"}))

    recalled = talk(params, calls)
    assert "Never restart web servers at night." in recalled["prompt"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_over_http_on_loopback(dsn, tenant):
    port = _free_port()
    proc = subprocess.Popen(
        [COGMEM, "--dsn", dsn, "mcp", "--tenant", tenant, "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert proc.poll() is None and time.monotonic() < deadline, (
                proc.stderr.read().decode() if proc.stderr else ""
            )
            time.sleep(0.2)

        async def calls(mcp):
            return structured(await mcp.call_tool("remember", {"content": "Checkout runs on web-3."}))

        assert talk(f"http://127.0.0.1:{port}/mcp", calls)["action"] == "created"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_ids_of_another_tenant_the_login_reaches_are_unknown(dsn, db, login):
    """A login granted two tenants runs tenant A's server: B's recall, conflict and session ids are refused
    as missing ones, and B is left as it was."""
    app = login("cogmem_app")
    role = one(app, "SELECT current_user")
    for name in ("alpha", "beta"):
        db.execute("SELECT cogmem.create_tenant(%s)", (name,))
        db.execute("SELECT cogmem.grant_tenant(%s, %s)", (role, name))
    db.execute("SELECT * FROM cogmem.remember('beta', 'Never restart web servers at night.', 'dos_and_donts')")
    recall_id = one(db, "SELECT recall_id FROM cogmem.recall('beta', 'restart the web servers?') LIMIT 1")
    conflict_id = one(db, "SELECT conflict_id FROM cogmem.remember('beta', 'Restart the web servers tonight.')")
    session_id = one(db, "SELECT cogmem.start_session('beta', 'web')")
    assert conflict_id is not None
    with Client(dsn.replace("user=postgres", f"user={role}"), embedder=False) as client:
        server = build_server(client, "alpha")

        async def calls(mcp):
            return (
                await mcp.call_tool("feedback", {"recall_id": str(recall_id), "outcome": 0.0}),
                await mcp.call_tool("resolve_conflict", {"conflict_id": conflict_id, "resolution": "paradigm_shift"}),
                await mcp.call_tool("end_session", {"session_id": str(session_id), "summary": "Stored into beta."}),
                await mcp.call_tool("feedback", {"recall_id": "not-a-uuid", "outcome": 1.0}),
            )

        feedback, resolved, ended, malformed = talk(server, calls)
    assert feedback.is_error and f'unknown recall {recall_id} in tenant "alpha" (P0002)' in feedback.content[0].text
    assert resolved.is_error and f'unknown conflict {conflict_id} in tenant "alpha" (P0002)' in resolved.content[0].text
    assert ended.is_error and f'unknown session {session_id} in tenant "alpha" (P0002)' in ended.content[0].text
    assert malformed.is_error and "recall_id must be a UUID, got 'not-a-uuid' (22P02)" in malformed.content[0].text
    untouched = db.execute(
        """SELECT (SELECT outcome FROM cogmem.recalls WHERE recall_id = %s),
                  (SELECT resolved_at IS NULL FROM cogmem.conflicts WHERE conflict_id = %s),
                  (SELECT ended_at IS NULL FROM cogmem.sessions WHERE session_id = %s),
                  (SELECT count(*) FROM cogmem.memories WHERE tenant = 'beta')""",
        (recall_id, conflict_id, session_id),
    ).fetchone()
    assert untouched == (None, True, True, 1)


def test_a_server_bound_to_an_agent_remembers_and_recalls_in_its_scope(db, cogmem, tenant):
    support = build_server(cogmem, tenant, agent="support")
    billing = build_server(cogmem, tenant, agent="billing")

    async def calls(mcp):
        rule = {"content": "Ayla asked never to be called on weekends.", "person": "ayla", "ring": "dos_and_donts"}
        await mcp.call_tool("remember", rule)
        await mcp.call_tool("remember", {"content": "Escalate refunds to the billing lead.", "ring": "procedures"})
        ayla = structured(await mcp.call_tool("recall", {"message": "Can I call on Saturday?", "person": "ayla"}))
        ben = structured(await mcp.call_tool("recall", {"message": "Can I call on Saturday?", "person": "ben"}))
        return ayla, ben

    ayla, ben = talk(support, calls)
    assert "Ayla asked never to be called on weekends." in ayla["prompt"]
    assert "Ayla" not in ben["prompt"]
    assert one(db, "SELECT agent FROM cogmem.memories WHERE content LIKE 'Escalate%%'") == "support"

    async def listing(mcp):
        return structured(await mcp.call_tool("list_memories", {}))

    # What the support agent heard with no person is its own: the billing agent does not see it.
    assert "Escalate refunds" not in str(talk(billing, listing))
    assert "Escalate refunds" in str(talk(support, listing))


def test_a_server_bound_to_an_agent_decides_nothing_of_another_agents(db, cogmem, tenant):
    # confirm_ring, dismiss_candidate, feedback and resolve_conflict took billing's ids from the support
    # agent's server: each is now as unknown to it as a missing id (P0002), and billing's own server may.
    billing_rule = one(
        db, "SELECT memory_id FROM cogmem.remember(%s, 'Text the customer first.', 'fresh', agent => 'billing')",
        (tenant,),
    )  # fmt: skip
    db.execute("SELECT cogmem._mark_candidate(%s, %s, 'dos_and_donts', 0.8)", (tenant, billing_rule))
    recall_id = one(db, "SELECT recall_id FROM cogmem.recall(%s, 'customer', agent => 'billing') LIMIT 1", (tenant,))
    db.execute("SELECT * FROM cogmem.remember(%s, 'Invoices go out on the first.', 'long_term', agent => 'billing')",
               (tenant,))  # fmt: skip
    held = db.execute(
        "SELECT conflict_id FROM cogmem.remember(%s, 'Never send invoices on the first.', 'dos_and_donts',"
        " contradicts => (SELECT array_agg(memory_id) FROM cogmem.memories WHERE content LIKE 'Invoices%%'),"
        " agent => 'billing')",
        (tenant,),
    ).fetchone()[0]
    attempts = {
        "confirm_ring": {"memory_id": billing_rule, "ring": "dos_and_donts"},
        "dismiss_candidate": {"memory_id": billing_rule},
        "feedback": {"recall_id": str(recall_id), "outcome": 0.0},
    }
    if held is not None:
        attempts["resolve_conflict"] = {"conflict_id": held, "resolution": "override"}

    async def calls(mcp):
        return {name: await mcp.call_tool(name, args) for name, args in attempts.items()}

    for name, result in talk(build_server(cogmem, tenant, agent="support"), calls).items():
        assert result.is_error and "P0002" in result.content[0].text, (name, result.content)
    assert (
        one(db, "SELECT candidate_ring FROM cogmem.memories WHERE memory_id = %s", (billing_rule,)) == "dos_and_donts"
    )
    assert one(db, "SELECT outcome FROM cogmem.recalls WHERE recall_id = %s", (recall_id,)) is None
    del attempts["dismiss_candidate"]  # billing confirms its candidate: there is nothing left to dismiss
    done = talk(build_server(cogmem, tenant, agent="billing"), calls)
    assert not any(r.is_error for r in done.values()), done


def test_wrong_arguments_read_as_a_sentence_and_an_application_is_not_offered_forget(dsn, db, tenant, login):
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (one(app, "SELECT current_user"), tenant))
    with Client(dsn.replace("user=postgres", f"user={app.info.user}"), embedder=False) as client:
        server = build_server(client, tenant)

        async def calls(mcp):
            names = {t.name for t in (await mcp.list_tools()).tools}
            wrong = await mcp.call_tool("get_memory", {"memory_id": "twelve"})
            return names, wrong

        names, wrong = talk(server, calls)
    assert names == TOOLS - {"forget"}
    text = wrong.content[0].text
    assert wrong.is_error and "wrong arguments for get_memory: memory_id: Input should be a valid integer" in text
    assert "(got 'twelve')" in text and "http" not in text and "validation error" not in text
