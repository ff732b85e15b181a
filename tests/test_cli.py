"""cogmem_pg.cli: the command line against a given server and against the embedded cluster."""

import json
import os
import shutil
import tempfile
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from cogmem_pg.cli import main
from cogmem_pg.migrate import head_revision
from tests.conftest import blend, unit_vector


def run(*args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_against_a_server(dsn):
    assert "operations       Operations baseline: shipped v2.0, not loaded" in run("--dsn", dsn, "bios", "list")
    assert run("--dsn", dsn, "bios", "diff", "operations").startswith("operations 2.0: 24 to add, 0 to retire")
    assert run("--dsn", dsn, "tenant", "acme") == "tenant acme (english) ready\n"
    out = run("--dsn", dsn, "bios", "load", "operations", "--subscribe", "acme")
    assert out.startswith("Operations baseline (operations 2.0): 24 new of 24 rules, 0 retired, 0 reinstated")
    listed = run("--dsn", dsn, "bios", "list")
    assert "shipped v2.0, v2.0 loaded" in listed and "    server          3 rules (3 must" in listed
    assert "3 in Turkish, taken by 1 tenants" in listed
    assert "OPS-01" in run("--dsn", dsn, "bios", "list", "--rules", "--tenant", "acme")
    assert run("--dsn", dsn, "bios", "subscribe", "operations", "acme") == "acme: already takes operations\n"
    diff = json.loads(run("--dsn", dsn, "bios", "diff", "operations", "--json"))
    assert (diff["version"], diff["keep"], diff["changes"]) == ("2.0", 24, [])
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
    assert f"revision           {head_revision()}" in run("--dsn", dsn, "status")


def test_cli_reports_bad_input_without_a_traceback(dsn):
    result = CliRunner().invoke(main, ["--dsn", dsn, "remember", "ghost", "hello"])
    assert result.exit_code == 1
    assert 'Error: unknown tenant "ghost"' in result.output
    result = CliRunner().invoke(main, ["--dsn", dsn, "bios", "load", "sox"])
    assert result.exit_code == 1 and "unknown BIOS preset 'sox'" in result.output
    result = CliRunner().invoke(main, ["--dsn", dsn, "bios", "subscribe", "sox"])
    assert result.exit_code == 1
    assert 'Error: no BIOS preset "sox" is loaded (P0002)\nHINT: Load it first' in result.output


@pytest.mark.parametrize(
    ("dsn", "error"),
    [
        (
            "host=/nonexistent-cogmem dbname=x",
            'connection is bad: connection to server on socket "/nonexistent-cogmem/.s.PGSQL.5432" failed: '
            "No such file or directory",
        ),
        ("not-a-dsn", 'missing "=" after "not-a-dsn" in connection info string'),
    ],
)
def test_status_with_an_unusable_dsn_fails_and_says_why(dsn, error):
    for args in (["status"], ["status", "--json"]):
        result = CliRunner().invoke(main, ["--dsn", dsn, *args])
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
        assert f"Error: cannot use the database of --dsn (or DATABASE_URL): {error}" in result.output


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


@pytest.mark.skipif(os.geteuid() == 0 and not Path("/usr/sbin/runuser").exists(), reason="needs runuser as root")
def test_embedded_cluster_up_status_down():
    home = Path(tempfile.mkdtemp(prefix="cogmem-cli-"))
    os.chmod(home, 0o755)
    env = {"COGMEM_HOME": str(home / "state"), "COGMEM_PORT": "5441", "DATABASE_URL": ""}
    try:
        assert "cogmem is up: host=" in run("up", env=env)
        status = run("status", env=env)
        assert "running            True" in status and f"revision           {head_revision()}" in status
        assert run("tenant", "acme", env=env) == "tenant acme (english) ready\n"
        assert "down" in run("down", env=env)
        assert "running            False" in run("status", env=env)
    finally:
        CliRunner().invoke(main, ["down"], env=env)
        shutil.rmtree(home, ignore_errors=True)


def test_root_checkout_in_a_private_directory_gets_a_reachable_home(tmp_path, monkeypatch):
    from cogmem_pg.cluster import Cluster, _others_can_traverse

    private = tmp_path / "private"
    (private / "checkout").mkdir(parents=True)
    private.chmod(0o700)
    assert _others_can_traverse(private / "checkout") is False
    monkeypatch.delenv("COGMEM_HOME", raising=False)
    monkeypatch.chdir(private / "checkout")
    home = Cluster.default().home
    if os.geteuid() == 0:
        assert home.parent == Path("/var/lib/cogmem-pg")
    else:
        assert home == private / "checkout" / ".cogmem"
    monkeypatch.setenv("COGMEM_HOME", str(tmp_path / "mine"))
    assert Cluster.default().home == tmp_path / "mine"


def test_psql_opens_the_database(dsn):
    # psql replaces the process: run it as a user would, in a child.
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "cogmem_pg.cli", "--dsn", dsn, "psql", "-XAtc", "SELECT count(*) FROM cogmem.tenants"],
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout) == (0, "0\n"), result.stderr


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


def invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


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


def test_conflict_session_briefing_observe_trust_identity_commands(dsn):
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

    before = float(run("--dsn", dsn, "trust", "acme"))
    assert float(run("--dsn", dsn, "trust", "acme", "--event", "praise", "--cause", "good catch")) > before
    assert run("--dsn", dsn, "identity", "acme").startswith("(no core identity yet")
    out = run(
        "--dsn", dsn, "identity", "acme", "--agent", "Ops assistant", "--user", "Ayse, SRE", "--goal", "No outages"
    )
    assert out == "v1 agent: Ops assistant\n   user: Ayse, SRE\n   goals: No outages\n"


def test_vault_commands_never_list_the_secret(dsn):

    run("--dsn", dsn, "tenant", "acme")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT cogmem.grant_tenant(current_user, 'acme', vault => true)")
    assert (
        invoke("--dsn", dsn, "vault", "put", "acme", "db-1", "--description", "db-1 root", input="hunter2\n").exit_code
        == 0
    )
    assert run("--dsn", dsn, "vault", "get", "acme", "db-1") == "hunter2\n"
    listed = run("--dsn", dsn, "vault", "list", "acme")
    assert "db-1" in listed and "db-1 root" in listed and "hunter2" not in listed
    assert run("--dsn", dsn, "vault", "rm", "acme", "db-1") == "db-1: deleted\n"
    missing = invoke("--dsn", dsn, "vault", "get", "acme", "db-1")
    assert missing.exit_code == 1 and "(P0002)" in missing.output


def test_doctor_says_what_to_fix(dsn):

    checks = {
        c["check"] + ":" + c["finding"]: c for c in map(json.loads, run("--dsn", dsn, "doctor", "--json").splitlines())
    }
    statuses = {c["check"]: c["status"] for c in checks.values()}
    assert statuses["server"] == statuses["schema"] == statuses["roles"] == "ok"
    assert statuses["audit"] == "warn"  # a fresh database was never sealed
    assert any(c["fix"] == "cogmem audit seal, or SELECT cogmem.schedule_audit();" for c in checks.values())
    run("--dsn", dsn, "audit", "seal")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT cogmem.create_tenant('acme')")
        conn.execute(
            "UPDATE cogmem.tenant_layers SET token_allocation = 1 WHERE tenant = 'acme' AND layer = 'dos_and_donts'"
        )
    run("--dsn", dsn, "remember", "acme", "Never restart the web servers at night", "--ring", "dos_and_donts")
    out = run("--dsn", dsn, "doctor")
    assert "ok   audit" in out and "warn never-cut  acme dos_and_donts +" in out


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


def test_feedback_reads_attention_and_administrative_commands(dsn, tmp_path):
    run("--dsn", dsn, "tenant", "acme")
    lines = tmp_path / "batch.jsonl"
    lines.write_text(
        '{"content": "The staging database is db-stage-2 on port 5433", "ring": "long_term"}\n'
        '{"content": "The staging database is db-stage-3 on port 5433", "ring": "long_term"}\n',
        encoding="utf-8",
    )
    assert run("--dsn", dsn, "remember-many", "acme", str(lines)).count(" created ") == 2
    found = [json.loads(x) for x in run("--dsn", dsn, "search", "acme", "staging database", "--json").splitlines()]
    assert len(found) == 2
    first, second = sorted(f["memory_id"] for f in found)
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
    assert run("--dsn", dsn, "topics", "set", "acme", "pets", "cat", "dog", "kedi") == "acme: pets = cat, dog, kedi\n"
    assert run("--dsn", dsn, "topics", "detect", "acme", "my cat is sick") == "pets\n"
    assert "pets" in run("--dsn", dsn, "topics", "list", "acme")
    assert json.loads(run("--dsn", dsn, "configure", "acme", '{"fusion_k": 20}'))["fusion_k"] == 20
    rule = run("--dsn", dsn, "bios", "add", "server", "Never reboot the primary without a failover", "--tenant", "acme")
    rule_id = rule.split()[1]
    assert run("--dsn", dsn, "bios", "retire", rule_id, "replaced by the runbook") == f"rule {rule_id} retired\n"
    assert run("--dsn", dsn, "analyze", "acme", "database") != ""
    assert run("--dsn", dsn, "erase", "acme", str(first), "--reason", "test") == f"memory {first} erased\n"
    erased = json.loads(run("--dsn", dsn, "erase-subject", "acme", "db-stage-3", "--reason", "test", "--json"))
    assert erased["memories"] == 1
    result = CliRunner().invoke(main, ["--dsn", dsn, "grant", "no_such_role", "acme"])
    assert result.exit_code == 1 and "(42704)" in result.output and "HINT: CREATE ROLE" in result.output
    result = CliRunner().invoke(main, ["--dsn", dsn, "feedback", recall_id, "3"])
    assert result.exit_code == 2


# Public SQL functions the client and the command line leave out on purpose; the README says why.
NOT_WRAPPED = {
    "caller", "reachable_tenants", "reaches_every_tenant", "may_use_vault",  # what the policies ask
    "embed", "embedding_dimensions", "strength",  # what SQL computes with; the client embeds itself
    "restore_memory_stats", "restore_siblings", "restore_episode",  # `cogmem import` calls them
    "audit_partitions_ensure", "audit_apply_retention", "audit_mark_exported",  # pg_cron, `cogmem audit export`
    "schedule_nightly", "schedule_audit", "schedule_gut", "schedule_rehearsals",  # installed by migrate
    "unschedule_nightly", "unschedule_audit", "unschedule_gut", "unschedule_rehearsals",
    "gut_export", "gut_state", "gut_import",  # what a sharded router's gut_release calls
}  # fmt: skip
CLIENT_NAMES = {
    "gut_patterns_for": "gut_patterns",
    "store_delete": "store_delete",
    "apply_rehearsals": "apply_rehearsals",
}
COMMANDS = {
    "acknowledge": "guard ack", "add_bios_rule": "bios add", "analyze": "analyze", "apply_rehearsals": "rehearse",
    "attention": "classify", "bios_preset_diff": "bios diff", "briefing": "briefing", "briefing_text": "briefing",
    "classify": "classify", "configure_tenant": "configure", "consolidate": "consolidate", "contradicts": "related",
    "core_identity": "identity", "create_tenant": "tenant", "detect_topics": "topics detect",
    "end_session": "session end", "erase": "erase", "erase_subject": "erase-subject",
    "explain_recall": "audit explain", "feedback": "feedback", "grant_tenant": "grant", "guard_check": "guard check",
    "gut_configure": "gut opt-in", "gut_deidentify": "classify", "gut_patterns_for": "gut patterns",
    "gut_release": "gut release", "load_bios_preset": "bios load", "observe": "observe",
    "open_conflicts": "conflicts list", "polarity": "classify", "recall": "recall", "redact": "classify",
    "related": "related", "remember": "remember", "remember_many": "remember-many", "report_error": "guard report",
    "resolve_conflict": "conflicts resolve", "retire_bios_rule": "bios retire", "revoke_tenant": "revoke",
    "route": "classify", "seal_audit": "audit seal", "server_can_embed": "doctor", "set_core_identity": "identity",
    "set_topic": "topics set", "siblings": "siblings", "start_session": "session start", "store_delete": "store rm",
    "store_get": "store get", "store_namespaces": "store ls", "store_put": "store put",
    "store_search": "store search", "subscribe_bios": "bios subscribe", "topic_keywords": "topics list",
    "trust": "trust", "trust_event": "trust", "unsubscribe_bios": "bios unsubscribe", "vault_delete": "vault rm",
    "vault_get": "vault get", "vault_list": "vault list", "vault_put": "vault put", "verify_audit": "audit verify",
    "pending_rules": "rules pending", "confirm_ring": "rules confirm", "dismiss_candidate": "rules dismiss",
}  # fmt: skip


def test_every_public_sql_function_has_a_client_method_and_a_command_or_a_reason(db):
    import click

    from cogmem_pg.client import Client

    public = {
        r[0]
        for r in db.execute(
            "SELECT p.proname FROM pg_proc AS p WHERE p.pronamespace = 'cogmem'::regnamespace AND p.proname !~ '^_' "
            "AND p.prorettype <> 'trigger'::regtype AND p.prokind = 'f'"
        )
    }
    assert public - NOT_WRAPPED == set(COMMANDS), "a new public function needs a client method and a command"
    for function in COMMANDS:
        assert hasattr(Client, CLIENT_NAMES.get(function, function)), function
        group: click.Command = main
        for word in COMMANDS[function].split():
            assert isinstance(group, click.Group) and word in group.commands, (function, COMMANDS[function])
            group = group.commands[word]
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for function in NOT_WRAPPED:
        assert f"`{function}`" in readme, f"README must say why {function} has no client method or command"
