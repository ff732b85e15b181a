"""What the tests of the command line share: running `cogmem` in-process, and a batch of two near memories."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from cogmem_pg.cli import main


def run(*args: str, env: dict[str, str] | None = None) -> str:
    """The output of a command that must succeed."""
    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def remember_staging_batch(dsn: str, tmp_path: Path) -> tuple[int, int]:
    """Tenant acme remembers two near memories (db-stage-2 and db-stage-3) with remember-many; their ids."""
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
    return first, second
