"""sql/999-privileges.sql: least privilege; an application role uses the API as a non-superuser."""

import psycopg
import pytest

from tests.conftest import one


def test_app_role_uses_the_api(db, tenant, login):
    db.execute("SELECT cogmem.add_bios_rule('server', 'Run a configuration test before any restart.')")
    app = login("cogmem_app")
    assert one(app, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user") is False
    with pytest.raises(psycopg.errors.UndefinedObject):  # not granted the tenant yet: it does not exist for it
        app.execute("SELECT * FROM cogmem.remember(%s, 'hello')", (tenant,))
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (one(app, "SELECT current_user"), tenant))
    row = app.execute(
        "SELECT ring, action FROM cogmem.remember(%s, 'Never restart the servers at night', 'dos_and_donts')",
        (tenant,),
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
