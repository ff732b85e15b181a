"""cogmem_pg.cli.erasure: erase, erase-subject."""

import json

from tests.cli_helpers import remember_staging_batch, run


def test_erase_a_memory_and_everything_about_a_subject(dsn, tmp_path):
    run("--dsn", dsn, "tenant", "acme")
    first, _ = remember_staging_batch(dsn, tmp_path)
    assert run("--dsn", dsn, "erase", "acme", str(first), "--reason", "test") == f"memory {first} erased\n"
    erased = json.loads(run("--dsn", dsn, "erase-subject", "acme", "db-stage-3", "--reason", "test", "--json"))
    assert erased["memories"] == 1
