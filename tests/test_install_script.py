"""cogmem_pg/install_script.py: the install as one SQL file for psql -f equals `cogmem migrate` (issue 49)."""

from __future__ import annotations

import subprocess

import psycopg
from click.testing import CliRunner

from cogmem_pg.cli import main
from cogmem_pg.cluster import pg_bindir
from cogmem_pg.install_script import install_script
from cogmem_pg.migrate import head_revision, install


def psql_file(dsn: str, script: str, tmp_path) -> subprocess.CompletedProcess:
    path = tmp_path / "cogmem.sql"
    path.write_text(script, encoding="utf-8")
    return subprocess.run(
        [str(pg_bindir() / "psql"), "-X", "-q", "-d", dsn, "-f", str(path)], capture_output=True, text=True
    )


def schema_of(dsn: str) -> str:
    """The cogmem schema as pg_dump writes it."""
    dump = [str(pg_bindir() / "pg_dump"), "--schema-only", "--schema=cogmem", "--no-owner", dsn]
    out = subprocess.run(dump, capture_output=True, text=True, check=True).stdout
    # Recent pg_dump fences its output with a random key (\restrict KEY ... \unrestrict KEY).
    return "\n".join(line for line in out.splitlines() if not line.startswith(("\\restrict", "\\unrestrict")))


def contents_of(dsn: str) -> dict[str, int]:
    """Rows per cogmem table, and the routing model's hash (audit rows carry times: counted only)."""
    with psycopg.connect(dsn) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT oid::regclass::text FROM pg_class WHERE relnamespace = "
                "'cogmem'::regnamespace AND relkind IN ('r', 'p') ORDER BY 1"
            )
        ]
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
        counts["routing model"] = conn.execute("SELECT sha256 FROM cogmem.routing_model_version").fetchone()[0]
        counts["revision"] = conn.execute("SELECT version_num FROM cogmem.alembic_version").fetchone()[0]
    return counts


def test_a_database_installed_from_the_script_equals_one_installed_by_migrate(fresh_database, tmp_path):
    scripted, migrated = fresh_database(), fresh_database()
    done = psql_file(scripted, install_script(), tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    install(migrated)
    assert schema_of(scripted) == schema_of(migrated)
    assert contents_of(scripted) == contents_of(migrated)
    assert contents_of(scripted)["revision"] == head_revision()


def test_the_upgrade_script_from_an_older_revision_equals_migrate(fresh_database, tmp_path):
    older, migrated = fresh_database(), fresh_database()
    install(older, "0040", apply_sql=False)  # an older release's tables
    done = psql_file(older, install_script("0040"), tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    install(migrated)
    assert schema_of(older) == schema_of(migrated)


def test_a_script_for_another_revision_stops_before_it_changes_anything(fresh_database, tmp_path):
    dsn = fresh_database()
    install(dsn, "0040", apply_sql=False)
    done = psql_file(dsn, install_script(), tmp_path)  # an install script, on a database at 0040
    assert done.returncode != 0
    assert "this script installs cogmem from revision none, but the database is at 0040" in done.stderr
    assert "cogmem migrate --sql --from 0040" in done.stderr
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT version_num FROM cogmem.alembic_version").fetchone() == ("0040",)


def test_the_cli_writes_the_script(tmp_path):
    out = tmp_path / "install.sql"
    result = CliRunner().invoke(main, ["migrate", "--sql", "--from", "0041", "--output", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "-- revision 0042" in text and "-- revision 0041" not in text and text.rstrip().endswith("COMMIT;")
