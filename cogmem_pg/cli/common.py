"""What every command module shares: the invocation's Context (its DSN, its one Client, its exit status),
the --json option and emit() that honours it, sql_errors() that turns bad input and SQL errors into a
message with SQLSTATE and HINT, and parse_json() for JSON arguments."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import click
import psycopg

from cogmem_pg.cluster import Cluster, ClusterError
from cogmem_pg.migrate import current_revision, head_revision, install


def start_embedded() -> Cluster:
    """Starts the embedded cluster (a no-op when it runs), turning its failures into CLI errors."""
    cluster = Cluster.default()
    try:
        cluster.start()
    except ClusterError as exc:
        raise click.ClickException(str(exc)) from exc
    return cluster


class Context:
    def __init__(self, dsn: str | None) -> None:
        self.explicit_dsn = dsn
        self.exit_code = 0  # a command's verdict (guard check: 2 when something blocks), applied at the end
        self._client: Any = None

    def client(self):
        """The invocation's one Client (a small pool), created on first use and closed at the end."""
        if self._client is None:
            from cogmem_pg.client import Client

            self._client = Client(self.dsn())
            click.get_current_context().find_root().call_on_close(self._client.close)
        return self._client

    def server_dsn(self) -> str:
        """The server to use: the given DSN, or the embedded cluster, started if needed."""
        return self.explicit_dsn or start_embedded().dsn()

    def dsn(self) -> str:
        """server_dsn(), with the schema installed first on the embedded cluster when it is not at head."""
        dsn = self.server_dsn()
        if not self.explicit_dsn and current_revision(dsn) != head_revision():
            install(dsn)
        return dsn


pass_context = click.make_pass_decorator(Context)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")


def scope_options(command):
    """--person and --agent: the scope inside the tenant (sql/015-scopes.sql)."""
    command = click.option(
        "--agent", envvar="COGMEM_AGENT", default=None, help="The agent that hears or recalls (default: none)."
    )(command)
    return click.option("--person", default=None, help="The person it is about or from (default: none).")(command)


def emit(rows: Iterable[Any], as_json: bool, line) -> None:
    """One JSON object per row with --json, else line(row) per row."""
    for row in rows:
        if as_json:
            data = dataclasses.asdict(row) if dataclasses.is_dataclass(row) and not isinstance(row, type) else row
            click.echo(json.dumps(data, default=str, ensure_ascii=False))
        else:
            click.echo(line(row))


@contextmanager
def sql_errors(*also: type[Exception], verbatim: bool = False) -> Iterator[None]:
    """Bad input and SQL errors (and the exceptions in ALSO) end the command with exit status 1 and their
    message, SQLSTATE and HINT; verbatim: with the message as psycopg words it (the shards commands)."""
    caught: tuple[type[Exception], ...] = (ValueError, psycopg.Error, *also)
    try:
        yield
    except caught as exc:
        raise click.ClickException(str(exc) if verbatim else _sql_error_text(exc)) from exc


def _sql_error_text(exc: Exception) -> str:
    if isinstance(exc, psycopg.Error) and exc.diag.message_primary:
        hint = f"\nHINT: {exc.diag.message_hint}" if exc.diag.message_hint else ""
        return f"{exc.diag.message_primary} ({exc.sqlstate}){hint}"
    return str(exc).strip()


def parse_json(text: str, what: str) -> Any:
    """TEXT as JSON, or a usage error that names the parameter WHAT."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint=what) from exc
