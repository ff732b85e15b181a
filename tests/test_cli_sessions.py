"""cogmem_pg.cli.sessions: session start and end, briefing, observe."""

import json

from tests.cli_helpers import run


def test_session_briefing_and_observe_commands(dsn):
    run("--dsn", dsn, "tenant", "acme")
    run("--dsn", dsn, "remember", "acme", "Never restart the web servers at night", "--ring", "dos_and_donts")
    session_id = run("--dsn", dsn, "session", "start", "acme", "--project", "checkout").strip()
    out = run(
        "--dsn",
        dsn,
        "session",
        "end",
        session_id,
        "Moved checkout to web-3.",
        "--next",
        "Retire web-1",
        "--fact",
        "Checkout runs on web-3.",
    )
    assert out.startswith("episode ") and out.endswith("remembered 1 facts\n")
    assert "Retire web-1" in run("--dsn", dsn, "briefing", "acme", "--project", "checkout")
    seen = json.loads(run("--dsn", dsn, "observe", "acme", session_id, "user", "Good morning!", "--json"))
    assert seen["memory_id"] is None and seen["turn_id"] > 0
