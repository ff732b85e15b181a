"""cogmem_pg.cli.audit: seal, verify, explain (export: tests/test_audit_chain.py)."""

import json

import psycopg
from click.testing import CliRunner

from cogmem_pg.cli import main
from tests.cli_helpers import run


def test_audit_commands(dsn):

    run("--dsn", dsn, "tenant", "acme")
    run("--dsn", dsn, "bios", "load", "operations", "--subscribe", "all")
    run("--dsn", dsn, "remember", "acme", "Never restart the servers at night", "--ring", "dos_and_donts")
    recall_id = run("--dsn", dsn, "recall", "acme", "restart the servers tonight", "--json").split('"recall_id": "')[1][
        :36
    ]
    out = run("--dsn", dsn, "audit", "explain", recall_id)
    explained = [json.loads(line) for line in run("--dsn", dsn, "audit", "explain", recall_id, "--json").splitlines()]
    assert {e["layer"] for e in explained} >= {"bios", "dos_and_donts"} and all("reason" in e for e in explained)
    assert "[bios] BIOS rule" in out and "[dos_and_donts] memory" in out and "life: " in out and "from: created" in out
    assert run("--dsn", dsn, "audit", "seal").startswith("sealed ")
    checks = [json.loads(line) for line in run("--dsn", dsn, "audit", "verify", "--json").splitlines()]
    assert checks and all(c["ok"] for c in checks)
    assert "acme" in run("--dsn", dsn, "audit", "verify") and "TAMPERED" not in run("--dsn", dsn, "audit", "verify")
    with psycopg.connect(dsn, autocommit=True) as conn:
        part = conn.execute(
            "SELECT tableoid::regclass::text FROM cogmem.audit_log WHERE tenant = 'acme' LIMIT 1"
        ).fetchone()[0]
        conn.execute(f"ALTER TABLE {part} DISABLE TRIGGER USER")
        conn.execute("UPDATE cogmem.audit_log SET actor = 'mallory' WHERE tenant = 'acme'")
    result = CliRunner().invoke(main, ["--dsn", dsn, "audit", "verify", "--tenant", "acme"])
    assert result.exit_code == 1 and "TAMPERED at audit_id" in result.output
    result = CliRunner().invoke(main, ["--dsn", dsn, "audit", "explain", "not-a-uuid"])
    assert result.exit_code == 2 and "is not a UUID" in result.output


def test_explain_says_what_set_the_outcome(dsn):
    run("--dsn", dsn, "tenant", "acme")
    run("--dsn", dsn, "remember", "acme", "The staging database listens on port 6432.", "--ring", "fresh")
    with psycopg.connect(dsn, autocommit=True) as conn:
        recall_id = conn.execute(
            "SELECT recall_id FROM cogmem.recall('acme', 'which port does staging use?', conversation => 'c1') LIMIT 1"
        ).fetchone()[0]
        conn.execute("SELECT * FROM cogmem.remember('acme', 'thanks, that worked!', conversation => 'c1')")
        conn.execute("SELECT cogmem.feedback(%s, 0.5)", (recall_id,))
    out = run("--dsn", dsn, "audit", "explain", str(recall_id)).splitlines()
    outcomes = [line for line in out if line.startswith("outcome: ")]
    assert len(outcomes) == 2
    assert '"thanks, that worked!": confirmed' in outcomes[0] and "outcome 1" in outcomes[0]
    assert outcomes[1].endswith("feedback 0.5 (explicit)")
