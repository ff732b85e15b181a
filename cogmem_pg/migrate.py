"""Install and upgrade: alembic revisions for tables, the routing model's data, then every sql/ feature
file, in one transaction.

`cogmem migrate` and `cogmem_pg.install(dsn)` both call :func:`install`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import psycopg
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool

from cogmem_pg.paths import migrations_dir, routing_model_file, routing_model_hash_file, sql_dir

# Serialises concurrent installs of the same database.
INSTALL_LOCK = 0x636F676D656D  # "cogmem"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def sql_files() -> list[Path]:
    return sorted(sql_dir().glob("*.sql"))


def apply_sql_files(conn: psycopg.Connection) -> None:
    """Re-applies the idempotent feature files through the raw psycopg connection.

    Passing no parameters keeps psycopg from reading ``%`` in function bodies as placeholders.
    """
    for path in sql_files():
        try:
            conn.execute(path.read_text(encoding="utf-8"))
        except psycopg.Error as exc:
            raise RuntimeError(f"{path.name}: {exc}") from exc


class InstallError(RuntimeError):
    """The target database cannot hold cogmem as it is; the message says what to do."""


# The JSON's rows into the tables of revision 0031, the file parsed once; its numbers are read as the
# columns' types, as the literals they replaced were.
LOAD_ROUTING_MODEL = (
    "DELETE FROM cogmem.routing_terms",
    "DELETE FROM cogmem.routing_model",
    "DELETE FROM cogmem.routing_model_version",
    """WITH f AS (SELECT %(model)s::jsonb AS model),
    version AS (
        INSERT INTO cogmem.routing_model_version (sha256, cues, metadata)
        SELECT %(sha256)s, ARRAY(SELECT jsonb_array_elements_text(f.model -> 'cues')),
               f.model - '{cues,labels,terms}'::text[]
        FROM f
    ),
    labels AS (
        INSERT INTO cogmem.routing_model (model, head, label, slot, bias, threshold, candidate_threshold, weights)
        SELECT r.model, r.head, r.label, r.slot, r.bias, r.threshold, r.candidate_threshold,
               r.weights::text::public.vector
        FROM f, jsonb_to_recordset(f.model -> 'labels') AS r (
            model text, head text, label text, slot integer, bias real, threshold real, candidate_threshold real,
            weights jsonb)
    )
    INSERT INTO cogmem.routing_terms (model, head, term, weights)
    SELECT t ->> 0, t ->> 1, t ->> 2, ARRAY(SELECT w::double precision FROM jsonb_array_elements_text(t -> 3) AS w)
    FROM f, jsonb_array_elements(f.model -> 'terms') AS t""",
)


def pinned_routing_model() -> tuple[str, str]:
    """The inbound router's weights (bench/train_router.py) as text, and their sha256.

    The file must match its pinned sha256: a model edited by hand, cut short or mixed up with another
    would route every memory wrongly without a word.
    """
    path, pinned_path = routing_model_file(), routing_model_hash_file()
    data = path.read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()
    pinned = pinned_path.read_text(encoding="utf-8").split()[0]
    if sha256 != pinned:
        raise InstallError(
            f"{path} has sha256 {sha256}, but {pinned_path.name} pins {pinned}: the routing model was "
            "changed without bench/train_router.py (re-run it, or restore both files from the release)"
        )
    return data.decode("utf-8"), sha256


def load_routing_model(conn: psycopg.Connection) -> None:
    """Loads the pinned routing model unless the same file is already loaded."""
    model, sha256 = pinned_routing_model()
    loaded = conn.execute("SELECT sha256 FROM cogmem.routing_model_version").fetchone()
    if loaded is None or loaded[0] != sha256:
        for statement in LOAD_ROUTING_MODEL:
            conn.execute(statement, {"sha256": sha256, "model": model})


# The upgrade is a governance event: the audit row the install ends with (install_script.py writes it too).
RECORD_UPGRADE = (
    "INSERT INTO cogmem.audit_log (tenant, level, event, detail)"
    " VALUES ('*', 'governance', 'schema_upgraded',"
    " jsonb_build_object('from', %(from)s::text, 'to', %(to)s::text, 'sql_files', %(sql_files)s::int))"
)


# The extensions the migrations create. A managed server's installing role may create a trusted one
# where it has CREATE on the database; the others its platform (a superuser) creates first.
REQUIRED_EXTENSIONS = ("vector", "pgcrypto")


def _check_can_create(conn: psycopg.Connection, extension: str) -> None:
    """An InstallError naming EXTENSION and who must create it, when it is missing here and this role may not
    create it (not a superuser, and it is not trusted or the role lacks CREATE on the database)."""
    row = conn.execute(
        "SELECT EXISTS (SELECT FROM pg_extension WHERE extname = %(e)s),"
        " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"
        " OR (coalesce((SELECT bool_or(trusted) FROM pg_available_extension_versions WHERE name = %(e)s), false)"
        "     AND has_database_privilege(current_database(), 'CREATE')),"
        " current_user, current_database()",
        {"e": extension},
    ).fetchone()
    assert row is not None
    created, may_create, role, database = row
    if not created and not may_create:
        raise InstallError(
            f"extension {extension} is not created in database {database!r}, and role {role!r} may not create it: "
            f"ask the server's administrator (a superuser; on a managed server, its console or admin role) to run "
            f"CREATE EXTENSION {extension}; in {database!r}, then install again"
        )


def preflight(conn: psycopg.Connection) -> None:
    """Clear errors for what would otherwise fail deep inside a migration."""
    version = conn.execute("SELECT current_setting('server_version_num')::int").fetchone()
    if version is None or version[0] < 150000:
        raise InstallError("cogmem-pg needs PostgreSQL 15 or newer")
    if not conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
        raise InstallError(
            "the pgvector extension is not installed on this server: run scripts/setup.sh or "
            "install postgresql-<version>-pgvector"
        )
    for extension in REQUIRED_EXTENSIONS:
        _check_can_create(conn, extension)
    row = conn.execute(
        "SELECT n.nspname FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace"
        " WHERE e.extname = 'vector'"
    ).fetchone()
    if row is not None and row[0] != "public":
        raise InstallError(
            f"pgvector is installed in schema {row[0]!r}; cogmem expects it in 'public' "
            "(ALTER EXTENSION vector SET SCHEMA public)"
        )
    # A large tenant's recall walks its HNSW index past what the scope filters out: iterative scans (0.8).
    found = conn.execute(
        "SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'vector'),"
        " (SELECT default_version FROM pg_available_extensions WHERE name = 'vector'))"
    ).fetchone()
    if found and found[0] and tuple(int(p) for p in found[0].split(".")[:2]) < (0, 8):
        raise InstallError(
            f"cogmem-pg needs pgvector 0.8 or newer, this server has {found[0]}: "
            "ALTER EXTENSION vector UPDATE (after installing the newer package), or ask your provider"
        )


def install(dsn: str, revision: str = "head", *, apply_sql: bool = True) -> str:
    """Upgrades the cogmem schema in ``dsn`` to ``revision`` and re-applies sql/. Returns the revision.

    The feature files and the routing model describe the head revision: ``apply_sql=False`` stops at the
    tables, which is how an older release is simulated before an upgrade.
    """
    engine = create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(dsn), poolclass=pool.NullPool)
    try:
        with engine.begin() as connection:
            raw = connection.connection.dbapi_connection
            assert raw is not None
            raw.execute(f"SELECT pg_advisory_xact_lock({INSTALL_LOCK})")
            raw.execute("SET LOCAL cogmem.installing = 'on'")
            preflight(raw)  # type: ignore[arg-type]
            context = MigrationContext.configure(connection, opts={"version_table_schema": "cogmem"})
            before = context.get_current_revision()
            config = alembic_config()
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
            current = context.get_current_revision()
            if apply_sql:
                load_routing_model(raw)  # type: ignore[arg-type]
                apply_sql_files(raw)  # type: ignore[arg-type]
                # The audit trail exists from here on.
                raw.execute(RECORD_UPGRADE, {"from": before, "to": current, "sql_files": len(sql_files())})
    finally:
        engine.dispose()
    return current or ""


def downgrade(dsn: str, revision: str) -> None:
    """Runs alembic downgrades to ``revision`` (``install`` brings the schema back to head)."""
    engine = create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(dsn), poolclass=pool.NullPool)
    try:
        with engine.begin() as connection:
            config = alembic_config()
            config.attributes["connection"] = connection
            command.downgrade(config, revision)
    finally:
        engine.dispose()


def current_revision(dsn: str) -> str | None:
    """The installed revision, or None when cogmem is not installed."""
    with psycopg.connect(dsn) as conn:
        return installed_revision(conn)


def installed_revision(conn: psycopg.Connection) -> str | None:
    """The revision installed in CONN's database, or None (an open connection: reconnecting from
    conn.info.dsn would lose the password, which psycopg does not keep there)."""
    exists = conn.execute("SELECT to_regclass('cogmem.alembic_version') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return None
    row = conn.execute("SELECT version_num FROM cogmem.alembic_version").fetchone()
    return row[0] if row else None
