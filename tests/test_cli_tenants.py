"""cogmem_pg.cli.tenants: tenant, reembed, grant, revoke, configure, topics, identity, trust."""

import json

from click.testing import CliRunner

from cogmem_pg.cli import main
from tests.cli_helpers import run


def test_topics_settings_and_reach_commands(dsn):
    run("--dsn", dsn, "tenant", "acme")
    assert run("--dsn", dsn, "topics", "set", "acme", "pets", "cat", "dog", "kedi") == "acme: pets = cat, dog, kedi\n"
    assert run("--dsn", dsn, "topics", "detect", "acme", "my cat is sick") == "pets\n"
    assert "pets" in run("--dsn", dsn, "topics", "list", "acme")
    assert json.loads(run("--dsn", dsn, "configure", "acme", '{"fusion_k": 20}'))["fusion_k"] == 20
    result = CliRunner().invoke(main, ["--dsn", dsn, "grant", "no_such_role", "acme"])
    assert result.exit_code == 1 and "(42704)" in result.output and "HINT: CREATE ROLE" in result.output


def test_trust_and_identity_commands(dsn):
    run("--dsn", dsn, "tenant", "acme")
    before = float(run("--dsn", dsn, "trust", "acme"))
    assert float(run("--dsn", dsn, "trust", "acme", "--event", "praise", "--cause", "good catch")) > before
    assert run("--dsn", dsn, "identity", "acme").startswith("(no core identity yet")
    out = run(
        "--dsn", dsn, "identity", "acme", "--agent", "Ops assistant", "--user", "Ayse, SRE", "--goal", "No outages"
    )
    assert out == "v1 agent: Ops assistant\n   user: Ayse, SRE\n   goals: No outages\n"


def test_reembed_command(dsn, db):
    import pytest

    from cogmem_pg.embed import E5_MODEL_ID, E5Embedder, EmbeddingUnavailable

    try:
        E5Embedder()
    except EmbeddingUnavailable:
        pytest.skip("the [embed] extra is not installed")
    assert "vectors of multilingual-e5-small-q4" in run(
        "--dsn", dsn, "tenant", "globex", "--embedding-model", E5_MODEL_ID
    )
    run("--dsn", dsn, "tenant", "acme", "--embedding-model", "all-MiniLM-L6-v2-onnx-int8")
    run("--dsn", dsn, "remember", "acme", "Invoices go out on the first of the month")
    result = CliRunner().invoke(main, ["--dsn", dsn, "reembed", "acme", "--model", "no-such-model"])
    assert result.exit_code == 1 and "no built-in embedder for 'no-such-model'" in result.output
    out = run("--dsn", dsn, "reembed", "acme", "--model", E5_MODEL_ID)
    assert out.endswith(f"tenant acme: 1 vectors of {E5_MODEL_ID} (were all-MiniLM-L6-v2-onnx-int8)\n")
    assert db.execute("SELECT embedding_model FROM cogmem.tenants WHERE tenant = 'acme'").fetchone() == (E5_MODEL_ID,)
    assert run("--dsn", dsn, "reembed", "acme", "--model", E5_MODEL_ID, "--cancel") == "none under way\n"
