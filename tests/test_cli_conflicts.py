"""cogmem_pg.cli.conflicts: conflicts list and resolve (and the rules group: pending, confirm, dismiss)."""

import json

from tests.cli_helpers import run


def test_conflict_commands_list_and_resolve(dsn):
    run("--dsn", dsn, "tenant", "acme")
    run("--dsn", dsn, "remember", "acme", "Never restart the web servers at night", "--ring", "dos_and_donts")
    held = run("--dsn", dsn, "remember", "acme", "Restart the web servers tonight.")
    conflict_id = held.split("held as conflict ")[1].split(":")[0]
    (listed,) = [json.loads(line) for line in run("--dsn", dsn, "conflicts", "list", "acme", "--json").splitlines()]
    assert str(listed["conflict_id"]) == conflict_id
    assert run("--dsn", dsn, "conflicts", "resolve", conflict_id, "exception", "--note", "approved").startswith(
        f"conflict {conflict_id}: "
    )
    assert run("--dsn", dsn, "conflicts", "list", "acme") == ""
