"""cogmem_pg.cli.store: put, get, rm, search, ls, sweep."""

import json

from click.testing import CliRunner

from cogmem_pg.cli import main
from tests.cli_helpers import run


def test_store_commands_put_get_search_list_and_remove(dsn):
    run("--dsn", dsn, "tenant", "acme")
    value = '{"content": "Deploys go out on Tuesdays", "password": "hunter22"}'
    out = run("--dsn", dsn, "store", "put", "acme", "notes.ops", "deploy", value)
    assert out.startswith("created: memory ") and out.endswith("redacted password\n")
    got = json.loads(run("--dsn", dsn, "store", "get", "acme", "notes.ops", "deploy"))
    assert got == {"content": "Deploys go out on Tuesdays", "password": "[REDACTED]"}
    run(
        "--dsn",
        dsn,
        "store",
        "put",
        "acme",
        "notes.home",
        "plant",
        '{"content": "Water the plant", "n": 2}',
        "--no-index",
    )
    found = [
        json.loads(x)
        for x in run("--dsn", dsn, "store", "search", "acme", "notes", "--query", "deploys", "--json").splitlines()
    ]
    assert [f["key"] for f in found] == ["deploy", "plant"] and found[1]["score"] is None
    assert run("--dsn", dsn, "store", "search", "acme", "--filter", '{"n": {"$gte": 2}}').startswith("notes.home plant")
    assert run("--dsn", dsn, "store", "ls", "acme") == "notes.home\nnotes.ops\n"
    assert run("--dsn", dsn, "store", "ls", "acme", "--depth", "1") == "notes\n"
    assert run("--dsn", dsn, "store", "rm", "acme", "notes.ops", "deploy") == "deleted\n"
    result = CliRunner().invoke(main, ["--dsn", dsn, "store", "get", "acme", "notes.ops", "deploy"])
    assert result.exit_code == 1 and "no item 'deploy'" in result.output
    result = CliRunner().invoke(main, ["--dsn", dsn, "store", "put", "acme", "notes", "k", "[1]"])
    assert result.exit_code == 2 and "must be a JSON object" in result.output
    result = CliRunner().invoke(main, ["--dsn", dsn, "store", "search", "acme", "--filter", '{"n": {"$re": 1}}'])
    assert result.exit_code == 1 and "unsupported filter operator" in result.output and "(22023)" in result.output
    for dotted in ("a..b", ".a", "a."):  # an empty label is refused, not dropped: a..b never names a.b
        result = CliRunner().invoke(main, ["--dsn", dsn, "store", "put", "acme", dotted, "k", '{"x": 1}'])
        assert result.exit_code == 2, result.output
        assert f"Invalid value for NAMESPACE: {dotted!r} has an empty label" in result.output
    result = CliRunner().invoke(main, ["--dsn", dsn, "store", "ls", "acme", "--prefix", "notes..home"])
    assert result.exit_code == 2 and "Invalid value for --prefix" in result.output
    assert run("--dsn", dsn, "store", "ls", "acme") == "notes.home\n"


def test_store_sweep_deletes_the_expired_items_now(dsn, db):
    run("--dsn", dsn, "tenant", "acme")
    run("--dsn", dsn, "store", "put", "acme", "notes", "lunch", '{"content": "Lunch at noon"}', "--ttl", "30")
    run("--dsn", dsn, "store", "put", "acme", "notes", "plan", '{"content": "The plan for May"}')
    assert run("--dsn", dsn, "store", "sweep", "acme") == "swept 0 expired items\n"
    db.execute("UPDATE cogmem.store_items SET expires_at = now() - interval '1 second' WHERE key = 'lunch'")
    assert run("--dsn", dsn, "store", "sweep", "acme") == "swept 1 expired item\n"
    assert db.execute("SELECT key FROM cogmem.store_items").fetchall() == [("plan",)]
