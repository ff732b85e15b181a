"""cogmem_pg.cli.memory: remember, remember-many, recall, feedback, judge, judge-recall, search, siblings,
related, analyze, classify, rehearse, consolidate (export and import: tests/test_markdown.py)."""

import json

import psycopg
from click.testing import CliRunner

from cogmem_pg.cli import main
from cogmem_pg.migrate import head_revision
from tests.cli_helpers import remember_staging_batch, run
from tests.conftest import blend, unit_vector


def test_remember_and_recall_against_a_server(dsn):
    run("--dsn", dsn, "tenant", "acme")
    run("--dsn", dsn, "bios", "load", "operations", "--subscribe", "acme")
    out = run(
        "--dsn",
        dsn,
        "remember",
        "acme",
        "Never restart the servers at night",
        "--ring",
        "dos_and_donts",
        "--source",
        '{"who": "ayse"}',
    )
    assert out.startswith("created memory ") and out.endswith(" in dos_and_donts (topics: server)\n")
    again = json.loads(run("--dsn", dsn, "remember", "acme", "Never restart the servers at night", "--json"))
    assert (again["action"], again["ring"]) == ("duplicate", "dos_and_donts")
    out = run("--dsn", dsn, "recall", "acme", "restart the servers tonight")
    assert "[dos_and_donts]" in out and "Never restart the servers at night" in out and "[bios]" in out
    assert '"layer": "dos_and_donts"' in run("--dsn", dsn, "recall", "acme", "restart servers", "--json")


def test_remember_for_an_unknown_tenant_says_so_without_a_traceback(dsn):
    result = CliRunner().invoke(main, ["--dsn", dsn, "remember", "ghost", "hello"])
    assert result.exit_code == 1
    assert 'Error: unknown tenant "ghost"' in result.output


def test_consolidate_command(dsn):
    run("--dsn", dsn, "tenant", "acme")
    run("--dsn", dsn, "remember", "acme", "staging server IP: 192.168.1.50")
    out = run("--dsn", dsn, "consolidate", "--as-of", "2099-01-01T03:00:00Z")
    assert "forget     1" in out and "protect    0" in out
    assert run("--dsn", dsn, "consolidate", "--as-of", "2099-01-01T03:00:00Z").endswith(
        "nothing to do: this night is already consolidated\n"
    )
    night = json.loads(run("--dsn", dsn, "consolidate", "--as-of", "2099-01-02T03:00:00Z", "--json").splitlines()[-1])
    assert night["tenants"] == 1 and night["as_of"].startswith("2099-01-02") and "forget" in night["decisions"]
    status = json.loads(run("--dsn", dsn, "status", "--json"))
    assert (status["revision"], status["embedded"]) == (head_revision(), False)


def test_feedback_reads_and_attention_commands(dsn, tmp_path):
    run("--dsn", dsn, "tenant", "acme")
    first, second = remember_staging_batch(dsn, tmp_path)
    base = unit_vector(31)
    with psycopg.connect(dsn, autocommit=True) as conn:  # vectors as an embedder would give two near texts
        for memory_id, vector in ((first, base), (second, blend(base, unit_vector(32), 0.1))):
            conn.execute(
                "UPDATE cogmem.memories SET embedding = %s::vector WHERE memory_id = %s", (str(vector), memory_id)
            )
    run("--dsn", dsn, "consolidate")  # the night links siblings
    assert "differs in" in run("--dsn", dsn, "siblings", "acme", str(first))
    assert "db-stage" in run("--dsn", dsn, "related", "acme", "The staging database moved")
    recall_id = json.loads(
        run("--dsn", dsn, "recall", "acme", "where is the staging database", "--json").splitlines()[0]
    )["recall_id"]
    assert run("--dsn", dsn, "feedback", recall_id, "1", "--used", str(first)) == "1 memories credited\n"
    assert run("--dsn", dsn, "rehearse", "acme").endswith("rehearsals applied\n")
    verdict = json.loads(run("--dsn", dsn, "classify", "Never deploy on Fridays.", "--tenant", "acme", "--json"))
    assert verdict["polarity"] == -1 and "deployment" in verdict["topics"] and "ring" in verdict
    assert run("--dsn", dsn, "analyze", "acme", "database") != ""
    result = CliRunner().invoke(main, ["--dsn", dsn, "feedback", recall_id, "3"])
    assert result.exit_code == 2


def test_judge_and_judge_recall(dsn):
    assert run("--dsn", dsn, "judge", "süper, oldu teşekkürler").startswith("confirmed ")
    verdict = json.loads(run("--dsn", dsn, "judge", "bu arada yarın toplantı var mı", "--json"))
    assert verdict["verdict"] == "neutral" and verdict["model"] == "followup-cues"
    run("--dsn", dsn, "tenant", "acme")
    run("--dsn", dsn, "remember", "acme", "The staging database listens on port 6432.", "--ring", "fresh")
    recall_id = run("--dsn", dsn, "recall", "acme", "which port does staging use", "--json").split('"recall_id": "')[1][
        :36
    ]
    assert run(
        "--dsn", dsn, "judge-recall", "acme", recall_id, "corrected", "--confidence", "0.8", "--by", "my-llm"
    ) == ("applied\n")
    assert run("--dsn", dsn, "judge-recall", "acme", recall_id, "confirmed").strip() == "applied"
