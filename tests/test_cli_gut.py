"""cogmem_pg.cli.gut: opt in and out, release, patterns and the ledger, from the command line."""

from __future__ import annotations

import json

from tests.test_gut import BACKUP, BACKUP_TEXTS, OUT_OF_RANGE, RANGE_HINT, generous, patterns, teams


def test_the_command_line_opts_in_releases_and_lists(db, dsn):
    from click.testing import CliRunner

    from cogmem_pg.cli import main
    from cogmem_pg.client import Client

    generous(db)
    names = teams(db, 8, [(BACKUP_TEXTS, BACKUP, 8)], opt_in=False, secret=False)

    def run(*args):
        result = CliRunner().invoke(main, ["--dsn", dsn, "gut", *args], catch_exceptions=False)
        return result.exit_code, result.output

    for name in names:
        assert run("opt-in", name) == (0, f"{name}: contributes yes, receives yes, 1 contributions\n")
    assert run("ledger") == (0, "no releases yet\n")
    code, out = run("release", "--epsilon", "900")
    assert code == 0 and out.startswith("release 1: epsilon 900 (delta") and "1 published, 0 withdrawn" in out
    code, out = run("patterns", names[0])
    assert code == 0 and "teams  success 1.0" in out and "backup" in out
    code, out = run("release", "--epsilon", "20000")
    assert code == 1 and "would exceed the privacy budget" in out
    assert run("release", "--epsilon", "1e-300") == (
        1,
        f"Error: {OUT_OF_RANGE % '1e-300'} (22023)\nHINT: {RANGE_HINT}\n",
    )
    code, out = run("release", "--epsilon", "0.5", "--json")
    assert code == 0 and json.loads(out)["epsilon_spent"] == 0.5 and json.loads(out)["release_id"] == 2
    assert run("opt-out", names[0], "--no-receive") == (
        0,
        f"{names[0]}: contributes no, receives no, 0 contributions\n",
    )
    assert run("patterns", names[0]) == (0, f"{names[0]} receives no patterns\n")
    with Client(dsn) as client:
        (period,) = client.gut_ledger()
        assert (period.spent, period.releases, period.published) == (900.5, 2, 1)
        assert [p.content for p in client.gut_patterns(names[1])] == [r[1] for r in patterns(db)]
