"""The README is the door: its examples, and those of docs/, run as written on a fresh database (issue
49), and what they link to exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest

from cogmem_pg.cluster import pg_bindir
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


# A fenced block of docs/: its indentation (a block inside a list item), language, words after it, code.
FENCE = re.compile(r"^( *)```(\S*)([^\n]*)\n(.*?)^\1```[ \t]*$", re.M | re.S)
# What the examples' test runs: SQL and Python; of the shell, the blocks marked `sh run` (cogmem commands
# against DATABASE_URL). The rest: diagrams and listings (no language, text), configuration (json,
# toml), shell that installs, starts servers or is a crontab (sh), and what is marked `sketch`: code
# for servers this machine does not have (docs/scaling.md's shard hosts and Citus).
RUNS = {("sql", ""), ("python", ""), ("sh", "run")}
SHOWN = {("", ""), ("text", ""), ("json", ""), ("toml", ""), ("sh", ""), ("sql", "sketch"), ("python", "sketch")}
PAGES = sorted((ROOT / "docs").glob("*.md"))


def fenced_blocks(page: Path) -> list[tuple[str, str, int, str]]:
    """Every fenced block of a page, in order: (language, marker, line, code)."""
    text = page.read_text(encoding="utf-8")
    return [
        (language, marker.strip(), text.count("\n", 0, match.start()) + 1, textwrap.dedent(code))
        for match in FENCE.finditer(text)
        for _, language, marker, code in [match.groups()]
    ]


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.split("|")]


def shown_rows(sql: str) -> list[list[str]]:
    """The result rows a block of SQL shows: its comments of cells (`-- fresh | 0.0000`, a whole line or
    after a statement), in psql's columns. A cell ending in `...` is the start of the value; a last cell
    `...` stands for the columns left out."""
    comments = [line.split("--", 1)[1] for line in sql.splitlines() if "--" in line]
    return [_cells(comment) for comment in comments if " | " in comment]


def _matches(shown: list[str], printed: list[str]) -> bool:
    if shown[-1] == "...":  # the columns left out
        shown = shown[:-1]
        printed = printed[: len(shown)]
    return len(shown) == len(printed) and all(
        p.startswith(s[:-3].rstrip()) if s.endswith("...") else p == s for s, p in zip(shown, printed, strict=True)
    )


def printed_lines(code: str) -> list[str]:
    """What a block of Python shows it prints: the comment lines right below a print()."""
    lines, shown = code.splitlines(), []
    for i, line in enumerate(lines):
        if "print(" in line:
            for below in lines[i + 1 :]:
                if not below.strip().startswith("# "):
                    break
                shown.append(below.strip()[2:])
    return shown


def _run(language: str, code: str, dsn: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"DATABASE_URL": dsn}
    if language == "sql":  # psql, as a reader would paste it: autocommit, each block one session
        command = [str(pg_bindir() / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-f", "-"]
        return subprocess.run(command, input=code, capture_output=True, text=True, env=env, cwd=cwd)
    if language == "python":
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # this environment's cogmem
    return subprocess.run(["bash", "-e", "-c", code], capture_output=True, text=True, env=env, cwd=cwd)


def test_every_block_of_the_docs_is_run_or_said_to_be_shown_only():
    """A block of another language (```bash, ```py) or marker would escape the examples' test unnoticed."""
    for page in PAGES:
        for language, marker, line, _ in fenced_blocks(page):
            assert (language, marker) in RUNS | SHOWN, f"{page.name}:{line}: ```{language} {marker}"


@pytest.mark.parametrize(
    "page", [p for p in PAGES if any(b[:2] in RUNS for b in fenced_blocks(p))], ids=lambda p: p.name
)
def test_every_example_of_the_docs_runs_as_written(page, fresh_database, tmp_path):
    """Each page of docs/ on a fresh database with cogmem installed: its ```sql blocks through psql, its
    ```python blocks in this Python (DATABASE_URL set, no PYTHONPATH), its ```sh run blocks in bash with
    this environment's `cogmem`, in page order, as written. The rows a SQL block shows in comments and the
    lines a Python block shows below a print() are what they print. Not run: ```sh blocks unmarked
    (installing, servers, crontabs, the CLI's synopsis), ```sql sketch and ```python sketch (servers this
    machine does not have), and blocks of no language, text, json or toml. Roles a page creates, and
    memberships it grants, are dropped after it (roles are the cluster's, not the database's)."""
    dsn = fresh_database()
    install(dsn)
    admin = dsn.rsplit("dbname=", 1)[0] + "dbname=postgres"
    memberships = "SELECT roleid::regrole::text, member::regrole::text FROM pg_auth_members"
    with psycopg.connect(admin, autocommit=True) as conn:
        roles_before = {r for (r,) in conn.execute("SELECT rolname FROM pg_roles")}
        members_before = set(conn.execute(memberships).fetchall())
    try:
        for language, marker, line, code in fenced_blocks(page):
            if (language, marker) not in RUNS:
                continue
            run = _run(language, code, dsn, tmp_path)
            where = f"{page.name}:{line} ```{language}"
            assert run.returncode == 0, f"{where}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
            if language == "sql":
                printed = [_cells(row) for row in run.stdout.splitlines() if "|" in row]
                for shown in shown_rows(code):
                    assert any(_matches(shown, row) for row in printed), f"{where} shows {shown}:\n{run.stdout}"
            if language == "python":
                out = [row.strip() for row in run.stdout.splitlines()]
                for shown in printed_lines(code):
                    assert shown in out, f"{where} shows it prints {shown!r}:\n{run.stdout}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {dsn.rsplit('dbname=', 1)[1]} WITH (FORCE)")
            for role, member in set(conn.execute(memberships).fetchall()) - members_before:
                if member in roles_before and role in roles_before:
                    conn.execute(f"REVOKE {role} FROM {member}")
            for (role,) in conn.execute("SELECT rolname FROM pg_roles").fetchall():
                if role not in roles_before:
                    conn.execute(f'DROP ROLE "{role}"')
