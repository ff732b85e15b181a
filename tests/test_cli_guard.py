"""cogmem_pg.cli.guard: check, report, ack."""

import json

from tests.cli_helpers import invoke, run


def test_guard_commands_report_learn_block_and_acknowledge(dsn):
    run("--dsn", dsn, "tenant", "acme")
    run("--dsn", dsn, "remember", "acme", "Never restart the web servers at night", "--ring", "dos_and_donts")
    out = run("--dsn", dsn, "guard", "check", "acme", "server", "restart web-1 tonight")
    assert "[rule] Never restart the web servers at night" in out and "BLOCKS" not in out
    first = json.loads(
        run("--dsn", dsn, "guard", "report", "acme", "server", "Restarted web-1 at night; checkout broke.", "--json")
    )
    for _ in range(3):  # the same mistake again: after three repeats the learning blocks
        out = run("--dsn", dsn, "guard", "report", "acme", "server", "Again.", "--repeat-of", str(first["learning_id"]))
    assert out == f"learning {first['learning_id']}: 4 errors, blocking\n"
    blocked = invoke("--dsn", dsn, "guard", "check", "acme", "server", "restart web-1 tonight")
    assert blocked.exit_code == 2 and "BLOCKS [learning]" in blocked.output
    run("--dsn", dsn, "guard", "ack", "acme", str(first["learning_id"]), "--note", "new runbook")
    assert invoke("--dsn", dsn, "guard", "check", "acme", "server", "restart web-1 tonight").exit_code == 0
