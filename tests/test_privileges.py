"""sql/999-privileges.sql: least privilege; an application role uses the API as a non-superuser."""

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import CLUSTER, one


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


def test_app_role_uses_the_api(db, tenant, login):
    db.execute("SELECT cogmem.add_bios_rule('server', 'Run a configuration test before any restart.')")
    app = login("cogmem_app")
    assert one(app, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user") is False
    row = app.execute(
        "SELECT ring, action FROM cogmem.remember(%s, 'Never restart the servers at night')", (tenant,)
    ).fetchone()
    assert row == ("dos_and_donts", "created")
    rows = app.execute(
        "SELECT recall_id, layer FROM cogmem.recall(%s, 'restart the servers tonight')", (tenant,)
    ).fetchall()
    assert [r[1] for r in rows] == ["bios", "dos_and_donts"]
    assert one(app, "SELECT cogmem.feedback(%s, 1)", (rows[0][0],)) == 1
    assert one(app, "SELECT cogmem.detect_topics(%s, 'invoice')", (tenant,)) == ["billing"]


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT cogmem.create_tenant('mallory')",
        "SELECT cogmem.add_bios_rule('server', 'Restart whenever.')",
        "DELETE FROM cogmem.memories",
        "TRUNCATE cogmem.recalls CASCADE",
        "INSERT INTO cogmem.bios_rules (category, rule) VALUES ('x', 'y')",
        "UPDATE cogmem.tenants SET max_content_chars = 1",
    ],
)
def test_app_role_cannot_administer(db, tenant, login, statement):
    app = login("cogmem_app")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute(statement)


def test_admin_role_administers(db, login):
    admin = login("cogmem_admin")
    admin.execute("SELECT cogmem.create_tenant('acme')")
    assert one(admin, "SELECT cogmem.add_bios_rule('server', 'Run a configuration test.')") >= 1


def test_a_role_without_grants_reaches_nothing(db, tenant, login):
    stranger = login(None)
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as err:
        stranger.execute("SELECT * FROM cogmem.recall('acme', 'hello')")
    assert err.value.diag.message_primary == "permission denied for schema cogmem"
