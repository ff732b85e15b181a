"""Run SQL text in a migration through the raw psycopg connection, in alembic's transaction.

alembic's op.execute() parses ``:name`` and ``%`` as placeholders, which breaks function bodies and
casts; the driver connection takes the text as it is.
"""

from alembic import op


def execute(sql: str) -> None:
    op.get_bind().connection.dbapi_connection.execute(sql)
