"""The README is the door: its examples run as written on a fresh database (issue 49), and what it links
to exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg

from cogmem_pg.migrate import install

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_stays_a_door():
    assert len(README.splitlines()) <= 400


def test_every_python_and_sql_example_of_the_readme_runs_as_written(fresh_database, tmp_path):
    dsn = fresh_database()
    install(dsn)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"DATABASE_URL": dsn}
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks
    for block in blocks:
        run = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert run.returncode == 0, run.stderr[-2000:]
    assert "## shocks\n- Outage in March" in run.stdout and "## dos_and_donts\n- Never restart" in run.stdout
    statements = re.findall(r"`(SELECT [^`]*;)`", README)
    assert statements
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement).fetchall()


def test_every_link_of_the_readme_and_docs_leads_somewhere():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)", text):
            if not target.startswith(("http://", "https://", "mailto:")):
                assert (page.parent / target).exists(), (page.name, target)
