"""cogmem_pg.cli.cluster: up, down, status, psql, migrate, doctor, demo, mcp."""

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from cogmem_pg.cli import main
from cogmem_pg.migrate import head_revision
from tests.cli_helpers import run


def test_status_against_a_server_names_the_revision(dsn):
    assert f"revision           {head_revision()}" in run("--dsn", dsn, "status")


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


@pytest.mark.skipif(os.geteuid() == 0 and not Path("/usr/sbin/runuser").exists(), reason="needs runuser as root")
def test_embedded_cluster_up_status_down():
    home = Path(tempfile.mkdtemp(prefix="cogmem-cli-"))
    os.chmod(home, 0o755)
    env = {"COGMEM_HOME": str(home / "state"), "COGMEM_PORT": "5441", "DATABASE_URL": ""}
    try:
        assert "cogmem is up: host=" in run("up", env=env)
        status = run("status", env=env)
        assert "running            True" in status and f"revision           {head_revision()}" in status
        assert re.fullmatch(r"tenant acme \(english, vectors of [\w.-]+\) ready\n", run("tenant", "acme", env=env))
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


def test_doctor_keeps_the_password_of_the_dsn_it_was_given(dsn, monkeypatch):
    # It reconnected with conn.info.dsn, which psycopg keeps without the password: every connection it
    # makes must be made with what it was given (the test cluster trusts its socket, so spy on them).
    given = dsn + " password=Secr3t-pw"
    made: list[str] = []
    real = psycopg.connect

    def spy(conninfo: str = "", *args, **kwargs):
        made.append(conninfo)
        return real(conninfo, *args, **kwargs)

    monkeypatch.setattr(psycopg, "connect", spy)
    result = CliRunner().invoke(main, ["--dsn", given, "doctor", "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert '"check": "schema"' in result.output
    assert made and all("Secr3t-pw" in conninfo for conninfo in made), made


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
    # Which model made each tenant's vectors, and which this client embeds with (issue 47).
    assert "ok   vectors    1 tenant of all-MiniLM-L6-v2-onnx-int8" in out
    assert (
        "this client embeds each tenant by its model (all-MiniLM-L6-v2-onnx-int8, multilingual-e5-small-q4" in out
        or ("this client has no embedder" in out)
    )
