"""The install, or an upgrade from a given revision, as one SQL file that ``psql -f`` applies (issue 49):
a DBA reads what will run before running it, and applies it where no Python reaches the server.

The statements are those ``cogmem migrate`` runs, in its order: the alembic revisions' SQL (each revision
runs its SQL through migrations/_raw.py, so reading it is running the revision against a recorder), the
version row, the routing model, the feature files of sql/ and the audit row of the upgrade; in one
transaction, and psql stops at the first error. ``tests/test_install_script.py`` shows that a database
installed from the script equals one installed by ``cogmem migrate``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

from alembic.script import ScriptDirectory

from cogmem_pg.migrate import (
    INSTALL_LOCK,
    LOAD_ROUTING_MODEL,
    RECORD_UPGRADE,
    alembic_config,
    head_revision,
    pinned_routing_model,
    sql_files,
)

# The table alembic keeps its revision in, as alembic itself creates it.
_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS cogmem.alembic_version (version_num VARCHAR(32) NOT NULL, "
    "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num));"
)


@contextmanager
def _recording(statements: list[str]) -> Iterator[None]:
    """migrations/_raw.execute appends to STATEMENTS instead of running them, while the block runs."""
    recorder = types.ModuleType("_raw")
    recorder.execute = statements.append  # type: ignore[attr-defined]
    saved = sys.modules.get("_raw")
    sys.modules["_raw"] = recorder
    try:
        yield
    finally:
        if saved is None:
            sys.modules.pop("_raw", None)
        else:
            sys.modules["_raw"] = saved


def revision_statements(from_revision: str | None) -> list[tuple[str, list[str]]]:
    """Each revision after FROM_REVISION (None: all), oldest first, with the SQL its upgrade runs."""
    script = ScriptDirectory.from_config(alembic_config())
    revisions = [r for r in script.walk_revisions(from_revision or "base", "head") if r.revision != from_revision]
    out = []
    for revision in reversed(revisions):
        statements: list[str] = []
        spec = importlib.util.spec_from_file_location(f"cogmem_revision_{revision.revision}", revision.path)
        assert spec is not None and spec.loader is not None
        with _recording(statements):
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            module.upgrade()
        out.append((revision.revision, statements))
    return out


def _inlined(statement: str, params: dict[str, str]) -> str:
    """STATEMENT, one migrate runs with named parameters, with PARAMS (SQL literals) in their places."""
    assert set(re.findall(r"%\((\w+)\)s", statement)) <= set(params), statement  # each has its value
    for name, literal in params.items():
        statement = statement.replace(f"%({name})s", literal)
    return statement + ";"


def _literal(text: str | None, tag: str = "") -> str:
    """TEXT as a SQL literal: NULL, quoted, or dollar-quoted with TAG (for a large text, quoted as is)."""
    if text is None:
        return "NULL"
    if tag:
        assert f"${tag}$" not in text
        return f"${tag}${text}${tag}$"
    return "'" + text.replace("'", "''") + "'"


def _guard(from_revision: str | None) -> str:
    """Stops the script on a server too old, or a database at another revision than it starts from."""
    expected = "NULL" if from_revision is None else f"'{from_revision}'"
    return f"""DO $guard$
DECLARE
    v_at text;
BEGIN
    IF current_setting('server_version_num')::int < 150000 THEN
        RAISE EXCEPTION 'cogmem-pg needs PostgreSQL 15 or newer';
    END IF;
    IF to_regclass('cogmem.alembic_version') IS NOT NULL THEN
        EXECUTE 'SELECT max(version_num) FROM cogmem.alembic_version' INTO v_at;
    END IF;
    IF v_at IS DISTINCT FROM {expected} THEN
        RAISE EXCEPTION 'this script installs cogmem from revision %, but the database is at %',
            coalesce({expected}, 'none'), coalesce(v_at, 'none')
            USING HINT = 'Write the script for this database: cogmem migrate --sql --from ' || coalesce(v_at, '');
    END IF;
END;
$guard$;"""


def install_script(from_revision: str | None = None) -> str:
    """The whole install (FROM_REVISION None) or the upgrade from FROM_REVISION, as SQL for psql -f (from the
    head itself: sql/ and the routing model re-applied, as cogmem migrate does after each release)."""
    head = head_revision()
    model, sha256 = pinned_routing_model()
    parts = [
        f"-- cogmem-pg: {'install' if from_revision is None else 'upgrade from revision ' + from_revision}"
        f" to revision {head}. Apply with: psql -v ON_ERROR_STOP=1 -f this.sql",
        "\\set ON_ERROR_STOP on",
        "BEGIN;",
        f"SELECT pg_advisory_xact_lock({INSTALL_LOCK});",
        "SET LOCAL cogmem.installing = 'on';",
        _guard(from_revision),
        "CREATE SCHEMA IF NOT EXISTS cogmem;",
        _VERSION_TABLE,
    ]
    for revision, statements in revision_statements(from_revision):
        parts.append(f"-- revision {revision}")
        # A statement may end in a comment: its semicolon goes on a line of its own.
        parts += [s if s.rstrip().endswith(";") else s + "\n;" for s in statements]
    parts += [
        f"DELETE FROM cogmem.alembic_version; INSERT INTO cogmem.alembic_version (version_num) VALUES ('{head}');",
        "-- the routing model (cogmem_pg/data/routing-model.json)",
    ]
    model_params = {"model": _literal(model, "cogmem_model") + "::text", "sha256": _literal(sha256)}
    parts += [_inlined(statement, model_params) for statement in LOAD_ROUTING_MODEL]
    for path in sql_files():
        parts += [f"-- sql/{path.name}", path.read_text(encoding="utf-8")]
    upgrade = {"from": _literal(from_revision), "to": _literal(head), "sql_files": str(len(sql_files()))}
    parts += [_inlined(RECORD_UPGRADE, upgrade), "COMMIT;"]
    return "\n".join(parts) + "\n"
