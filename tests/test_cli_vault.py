"""cogmem_pg.cli.vault: put, get, list, rm."""

import psycopg

from tests.cli_helpers import invoke, run


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
