"""Alembic environment: revisions create tables; cogmem_pg.migrate re-applies sql/ afterwards."""

from alembic import context
from sqlalchemy import create_engine, pool, text

config = context.config


def run_migrations_online() -> None:
    connectable = config.attributes.get("connection")
    if connectable is None:
        connectable = create_engine(config.get_main_option("sqlalchemy.url"), poolclass=pool.NullPool)
        with connectable.begin() as connection:
            _run(connection)
    else:
        _run(connectable)


def _run(connection) -> None:
    # The version table lives in the cogmem schema, so the schema must exist before alembic looks.
    connection.execute(text("CREATE SCHEMA IF NOT EXISTS cogmem"))
    context.configure(connection=connection, version_table_schema="cogmem", transactional_ddl=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("cogmem-pg migrations run online only: use `cogmem migrate`.")
run_migrations_online()
