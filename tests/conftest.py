"""Test fixtures: one private PostgreSQL cluster per run (the same code as the embedded default), a
template database with cogmem installed once, and a fresh copy of it for every test (pytest-postgresql).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pytest_postgresql import factories

from cogmem_pg.cluster import Cluster
from cogmem_pg.migrate import install

_HOME = Path(tempfile.mkdtemp(prefix="cogmem-test-"))
os.chmod(_HOME, 0o755)  # the postgres system user runs the server when tests run as root
# Durability is not under test: without fsync, a database per test is cheap.
CLUSTER = Cluster(
    home=_HOME / "cluster",
    port=int(os.environ.get("COGMEM_TEST_PORT", "5439")),
    settings={"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"},
)
SUPERUSER = "postgres"


@pytest.fixture(scope="session", autouse=True)
def pg_cluster() -> Iterator[Cluster]:
    CLUSTER.start()
    yield CLUSTER
    CLUSTER.stop()
    if not os.environ.get("COGMEM_TEST_KEEP"):  # keep the cluster's log for a post-mortem
        shutil.rmtree(_HOME, ignore_errors=True)


def _install_cogmem(host: str, port: int, user: str, dbname: str, password: str | None = None, **_: object) -> None:
    install(f"host={host} port={port} user={user} dbname={dbname}")


cogmem_template = factories.postgresql_noproc(
    host=str(CLUSTER.socketdir), port=CLUSTER.port, user=SUPERUSER, dbname="cogmem_test", load=[_install_cogmem]
)
postgresql = factories.postgresql("cogmem_template")


@pytest.fixture
def dsn(postgresql: psycopg.Connection) -> str:
    """DSN of this test's own database (a fresh copy of the installed template)."""
    return CLUSTER.dsn(postgresql.info.dbname)


@pytest.fixture
def db(postgresql: psycopg.Connection) -> psycopg.Connection:
    """An autocommit superuser connection to this test's database, pgvector registered."""
    from pgvector.psycopg import register_vector

    postgresql.autocommit = True
    register_vector(postgresql)
    # Deterministic full-text behaviour unless a test embeds on purpose (test_embed.py turns it on).
    postgresql.execute("SET cogmem.embed = 'off'")
    return postgresql


@pytest.fixture
def tenant(db: psycopg.Connection) -> str:
    db.execute("SELECT cogmem.create_tenant('acme')")
    return "acme"


@pytest.fixture
def minilm_tenant(db: psycopg.Connection) -> str:
    """acme, of MiniLM's vectors whatever the default of its language (what a re-embedding moves from)."""
    db.execute("SELECT cogmem.create_tenant('acme', 'english', 'all-MiniLM-L6-v2-onnx-int8')")
    return "acme"


@pytest.fixture
def login(db) -> Iterator:
    """Creates LOGIN roles for this test and drops them afterwards (roles are cluster-wide)."""
    created: list[str] = []

    def make(member_of: str | None) -> psycopg.Connection:
        name = f"t_{uuid.uuid4().hex[:10]}"
        db.execute(f"CREATE ROLE {name} LOGIN" + (f" IN ROLE {member_of}" if member_of else ""))
        created.append(name)
        conn = psycopg.connect(CLUSTER.dsn(db.info.dbname).replace("user=postgres", f"user={name}"), autocommit=True)
        conns.append(conn)
        return conn

    conns: list[psycopg.Connection] = []
    yield make
    for conn in conns:
        conn.close()
    with psycopg.connect(CLUSTER.dsn("postgres"), autocommit=True) as admin:
        for name in created:
            admin.execute(f"DROP ROLE IF EXISTS {name}")


@pytest.fixture
def fresh_database() -> Iterator:
    """Makes empty databases (no cogmem) on the test cluster, and drops them afterwards."""
    names: list[str] = []

    def make() -> str:
        name = f"mig_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(CLUSTER.dsn("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        names.append(name)
        return CLUSTER.dsn(name)

    yield make
    with psycopg.connect(CLUSTER.dsn("postgres"), autocommit=True) as conn:
        for name in names:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def one(conn: psycopg.Connection, query: str, params: tuple | dict | None = None):
    """The single value of a one-row, one-column query."""
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def named(args: dict) -> str:
    """The named arguments of a call as an application writes them: ', name => %(name)s' for each."""
    return "".join(f", {name} => %({name})s" for name in args)


def unit_vector(seed: int, dims: int = 384) -> list[float]:
    """A deterministic unit vector; nearby seeds are not similar."""
    import random

    rng = random.Random(seed)
    values = [rng.gauss(0, 1) for _ in range(dims)]
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


def blend(a: list[float], b: list[float], weight: float) -> list[float]:
    """Unit vector between a and b (weight of b)."""
    mixed = [(1 - weight) * x + weight * y for x, y in zip(a, b, strict=True)]
    norm = sum(v * v for v in mixed) ** 0.5
    return [v / norm for v in mixed]
