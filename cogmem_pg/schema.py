"""The installed schema as text: sql/schema/tables.sql, the head revision's tables in one file.

``python -m cogmem_pg.schema`` (``make schema``) installs cogmem into a private cluster and writes the file;
tests/test_schema.py installs through the migrations and compares. pg_dump writes the DDL a reader knows;
its TOC is filtered by object type (functions, procedures and views live in sql/*.sql; privileges in
sql/999-privileges.sql) and its version-dependent framing dropped (comments, SET lines, ``\\restrict``
keys), so that every pg_dump from PostgreSQL 15 on gives the same text for the same schema.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from cogmem_pg.cluster import pg_bindir, temporary_cluster
from cogmem_pg.migrate import install
from cogmem_pg.paths import sql_dir

TABLES_FILE = sql_dir() / "schema" / "tables.sql"
HEADER = (
    "-- The cogmem schema's tables, sequences, indexes, constraints, triggers, policies and comments at the\n"
    "-- head revision, as migrations/ leave them (functions and views: sql/*.sql). Generated: make schema.\n"
)
# Code, not tables: the sql/ feature files define these (and 999-privileges.sql the ACLs).
_CODE = re.compile(r"^\d+; \d+ \d+ (?:FUNCTION|PROCEDURE|AGGREGATE|VIEW|ACL|COMMENT \S+ (?:FUNCTION|PROCEDURE|VIEW)) ")
_MONTHLY_PARTITION = re.compile(r"_\d{4}_\d{2}(?!\d)")  # made for the months around the install date
_FRAMING = ("--", "SET ", "SELECT pg_catalog.set_config(", "\\restrict", "\\unrestrict")


def dump(dsn: str, *, tables_only: bool = False) -> str:
    """The cogmem schema in ``dsn`` as pg_dump prints it, without the lines that vary by run or version;
    with ``tables_only``, without its functions, views, privileges and monthly partitions."""
    with tempfile.TemporaryDirectory(prefix="cogmem-schema-") as tmp:
        archive, listing = Path(tmp) / "schema.dump", Path(tmp) / "schema.list"
        subprocess.run(
            [str(pg_bindir() / "pg_dump"), "--schema-only", "--schema=cogmem", "--format=custom", "-f", archive, dsn],
            check=True,
        )
        toc = subprocess.run(
            [str(pg_bindir() / "pg_restore"), "--list", archive], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        if tables_only:
            toc = [line for line in toc if not _CODE.match(line) and not _MONTHLY_PARTITION.search(line)]
        listing.write_text("\n".join(toc) + "\n", encoding="utf-8")
        text = subprocess.run(
            [str(pg_bindir() / "pg_restore"), "--no-owner", "--use-list", listing, "-f", "-", archive],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    kept = [line for line in text.splitlines() if not line.startswith(_FRAMING)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip() + "\n"


def tables_sql(dsn: str) -> str:
    """The text of sql/schema/tables.sql for the schema installed in ``dsn``."""
    return HEADER + "\n" + dump(dsn, tables_only=True)


def main(port: int = 5447) -> None:
    """Installs cogmem into a private, throw-away cluster and writes sql/schema/tables.sql."""
    with temporary_cluster(port, prefix="cogmem-schema-", server_python=False) as cluster:
        install(cluster.dsn())
        TABLES_FILE.parent.mkdir(exist_ok=True)
        TABLES_FILE.write_text(tables_sql(cluster.dsn()), encoding="utf-8")
    print(f"wrote {TABLES_FILE}", file=sys.stderr)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5447)
