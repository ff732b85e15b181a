"""cogmem_pg.cli.bios: list, diff, load, subscribe, unsubscribe, add, retire."""

import json

from click.testing import CliRunner

from cogmem_pg.cli import main
from tests.cli_helpers import run


def test_cli_against_a_server(dsn):
    assert "operations       Operations baseline: shipped v2.0, not loaded" in run("--dsn", dsn, "bios", "list")
    assert run("--dsn", dsn, "bios", "diff", "operations").startswith("operations 2.0: 24 to add, 0 to retire")
    assert run("--dsn", dsn, "tenant", "acme") == "tenant acme (english, vectors of all-MiniLM-L6-v2-onnx-int8) ready\n"
    out = run("--dsn", dsn, "bios", "load", "operations", "--subscribe", "acme")
    assert out.startswith("Operations baseline (operations 2.0): 24 new of 24 rules, 0 retired, 0 reinstated")
    listed = run("--dsn", dsn, "bios", "list")
    assert "shipped v2.0, v2.0 loaded" in listed and "    server          3 rules (3 must" in listed
    assert "3 in Turkish, taken by 1 tenants" in listed
    assert "OPS-01" in run("--dsn", dsn, "bios", "list", "--rules", "--tenant", "acme")
    assert run("--dsn", dsn, "bios", "subscribe", "operations", "acme") == "acme: already takes operations\n"
    diff = json.loads(run("--dsn", dsn, "bios", "diff", "operations", "--json"))
    assert (diff["version"], diff["keep"], diff["changes"]) == ("2.0", 24, [])


def test_cli_reports_bad_input_without_a_traceback(dsn):
    result = CliRunner().invoke(main, ["--dsn", dsn, "bios", "load", "sox"])
    assert result.exit_code == 1 and "unknown BIOS preset 'sox'" in result.output
    result = CliRunner().invoke(main, ["--dsn", dsn, "bios", "subscribe", "sox"])
    assert result.exit_code == 1
    assert 'Error: no BIOS preset "sox" is loaded (P0002)\nHINT: Load it first' in result.output


def test_a_bad_preset_file_is_refused_without_a_traceback(dsn, tmp_path):
    path = tmp_path / "acme.toml"
    path.write_text('name = "acme"\ntitle = "ACME"\nversion = "1.0"\nrules = "abc"\n', encoding="utf-8")
    for command in ("load", "diff"):
        result = CliRunner().invoke(main, ["--dsn", dsn, "bios", command, str(path)])
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
        assert (
            result.output
            == 'Error: acme.toml: rules: must be a non-empty array of tables ([[rules]]), got string "abc"\n'
        )


def test_bios_add_and_retire_a_rule_of_ones_own(dsn):
    run("--dsn", dsn, "tenant", "acme")
    rule = run("--dsn", dsn, "bios", "add", "server", "Never reboot the primary without a failover", "--tenant", "acme")
    rule_id = rule.split()[1]
    assert run("--dsn", dsn, "bios", "retire", rule_id, "replaced by the runbook") == f"rule {rule_id} retired\n"
