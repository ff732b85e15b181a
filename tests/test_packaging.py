"""The wheel: it carries sql/, the migrations, the presets, the routing model and the model hashes, and
installs cogmem from a clean virtualenv into an empty database, with no help from this checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from cogmem_pg import embed

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)], check=True)
    (built,) = out.glob("cogmem_pg-*.whl")
    return built


def test_the_wheel_holds_the_schema_presets_licence_and_model_hashes(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read("cogmem_pg-0.1.0.dist-info/METADATA").decode()
        embed_source = archive.read("cogmem_pg/embed.py").decode()
    assert {f"cogmem_pg/sql/{p.name}" for p in (ROOT / "sql").glob("*.sql")} <= names
    assert {f"cogmem_pg/migrations/versions/{p.name}" for p in (ROOT / "migrations/versions").glob("*.py")} <= names
    assert {f"cogmem_pg/presets/{p.name}" for p in (ROOT / "cogmem_pg/presets").glob("*.toml")} <= names
    assert {"cogmem_pg/data/routing-model.json", "cogmem_pg/data/routing-model.json.sha256"} <= names
    assert "cogmem_pg/sql/schema/tables.sql" in names
    assert "cogmem_pg-0.1.0.dist-info/licenses/LICENSE" in names
    assert embed.MODEL_SHA256 in embed_source and embed.TOKENIZER_SHA256 in embed_source
    assert "Version: 0.1.0" in metadata and "License-Expression: Apache-2.0" in metadata
    dashboard = ROOT / "cogmem_pg/dashboard"
    shipped = {
        f"cogmem_pg/dashboard/{p.relative_to(dashboard)}"
        for folder in ("templates", "static")
        for p in (dashboard / folder).iterdir()
    }
    assert (
        {"cogmem_pg/dashboard/static/chart.umd.min.js", "cogmem_pg/dashboard/templates/base.html"} <= shipped <= names
    )
    for extra in ("embed", "gut", "mcp", "langgraph", "dashboard"):
        assert f"Provides-Extra: {extra}" in metadata


def test_pip_install_from_the_wheel_in_a_clean_venv_installs_and_runs_cogmem(wheel, tmp_path, fresh_database):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True)
    dsn = fresh_database()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DATABASE_URL")}
    outside = tmp_path  # not the checkout: nothing can be imported from it
    subprocess.run([str(env_dir / "bin" / "cogmem"), "--dsn", dsn, "migrate"], check=True, cwd=outside, env=clean)
    script = (
        "import sys, cogmem_pg\n"
        "from cogmem_pg.client import Client\n"
        "assert 'site-packages' in cogmem_pg.__file__, cogmem_pg.__file__\n"
        "with Client(sys.argv[1]) as c:  # the default embedder: none without the [embed] extra\n"
        "    c.create_tenant('wheel')\n"
        "    c.remember('wheel', 'The wheel installs cogmem from site-packages.', ring='long_term')\n"
        "    print(c.recall('wheel', 'Where does the wheel install cogmem from?').as_prompt())\n"
    )
    run = subprocess.run(
        [str(python), "-c", script, dsn], cwd=outside, env=clean, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert "The wheel installs cogmem from site-packages." in run.stdout


def test_the_wheel_with_extras_runs_the_cli_and_writes_the_sql_script(wheel, tmp_path, fresh_database):
    """With the [embed] and [mcp] extras (the client embeds; PyPI's wheels, pip's cache after a first run),
    the CLI a user reads in the README, and the SQL script a DBA applies (issue 49)."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", f"{wheel}[embed,mcp]"]
    done = subprocess.run(pip, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    dsn = fresh_database()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DATABASE_URL", "VIRTUAL_ENV")}
    steps = [
        (["migrate"], "cogmem schema at revision"),
        (["tenant", "acme"], "tenant acme"),
        (["remember", "acme", "Never deploy on Fridays.", "--ring", "rule"], "in dos_and_donts"),
        (["recall", "acme", "Can we deploy on Friday?"], "Never deploy on Fridays."),
        (["migrate", "--sql", "--from", "0041"], "-- revision 0042"),
    ]
    for args, said in steps:
        cli = [str(env_dir / "bin" / "cogmem"), "--dsn", dsn, *args]
        run = subprocess.run(cli, capture_output=True, text=True, cwd=tmp_path, env=clean)
        assert run.returncode == 0 and said in run.stdout, (args, run.stdout[-1000:], run.stderr[-1000:])
