"""The private PostgreSQL cluster a bench script runs on: started in a fresh temporary home, with cogmem
installed, then stopped and removed however the script ends. Each script has a port of its own (it only
names the socket file: the cluster listens on no TCP address), so that scripts can run side by side."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from cogmem_pg.cluster import DATABASE, Cluster, temporary_cluster, temporary_home
from cogmem_pg.migrate import install

# For the scale benchmarks' 24 GB machine, not the embedded default: a quarter of the memory as shared
# buffers.
TUNED = {"shared_buffers": "'6GB'", "maintenance_work_mem": "'1GB'", "max_wal_size": "'8GB'"}


def bench_home() -> AbstractContextManager[Path]:
    """A fresh temporary directory the server's user can traverse, removed after."""
    return temporary_home("cogmem-bench-")


def private_cluster(port: int, *, tuned: bool = True, server_python: bool = True) -> AbstractContextManager[Cluster]:
    """A started cluster on PORT in a bench_home, TUNED or as the embedded default, and with the server's
    Python able to import cogmem_pg (SERVER_PYTHON) or not, as an ordinary server."""
    return temporary_cluster(
        port, prefix="cogmem-bench-", settings=TUNED if tuned else None, server_python=server_python
    )


@contextmanager
def private_database(
    port: int, *, database: str = DATABASE, schema: bool = True, tuned: bool = True, server_python: bool = True
) -> Iterator[str]:
    """The connection string of DATABASE in a private_cluster on PORT, with cogmem installed unless SCHEMA
    is False (for a script that installs it itself)."""
    with private_cluster(port, tuned=tuned, server_python=server_python) as cluster:
        dsn = cluster.dsn(database)
        if schema:
            install(dsn)
        yield dsn


def given_or_private(
    dsn: str | None,
    port: int,
    *,
    database: str = DATABASE,
    schema: bool = True,
    tuned: bool = True,
    server_python: bool = True,
) -> AbstractContextManager[str]:
    """DSN as it is when a script is given one, else a private_database on PORT."""
    if dsn:
        return nullcontext(dsn)
    return private_database(port, database=database, schema=schema, tuned=tuned, server_python=server_python)
