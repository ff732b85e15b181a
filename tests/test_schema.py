"""sql/schema/tables.sql: the head revision's tables in one file, as the migrations make them."""

import difflib

from cogmem_pg.migrate import install, sql_files
from cogmem_pg.schema import TABLES_FILE, tables_sql


def test_the_checked_in_tables_are_what_the_migrations_make(fresh_database):
    dsn = fresh_database()
    install(dsn)
    made, kept = tables_sql(dsn), TABLES_FILE.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(kept.splitlines(True), made.splitlines(True), "checked in", "installed", n=1))
    assert made == kept, f"sql/schema/tables.sql is out of date: run `make schema` and commit it\n{diff[:4000]}"


def test_the_schema_folder_is_not_applied():
    assert TABLES_FILE not in sql_files() and all(p.parent == TABLES_FILE.parent.parent for p in sql_files())
