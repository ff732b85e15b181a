"""sql/120-vault.sql: secrets encrypted at rest, never recalled, for vault-granted roles only, audited."""

import psycopg
import pytest

from tests.conftest import one

SECRET = "s3cr3t-Pa55w0rd-for-prod"


def test_put_get_replace_list_delete(db, tenant):
    assert one(db, "SELECT cogmem.vault_put(%s, 'db/prod', %s, 'production database')", (tenant, SECRET)) == 1
    assert one(db, "SELECT cogmem.vault_get(%s, 'db/prod')", (tenant,)) == SECRET
    assert one(db, "SELECT cogmem.vault_put(%s, 'db/prod', 'rotated-password')", (tenant,)) == 2
    assert one(db, "SELECT cogmem.vault_get(%s, 'db/prod')", (tenant,)) == "rotated-password"
    assert db.execute("SELECT name, version FROM cogmem.vault_list(%s)", (tenant,)).fetchall() == [("db/prod", 2)]
    assert one(db, "SELECT cogmem.vault_delete(%s, 'db/prod')", (tenant,)) is True
    assert one(db, "SELECT cogmem.vault_delete(%s, 'db/prod')", (tenant,)) is False
    events = [
        r[0]
        for r in db.execute(
            "SELECT event FROM cogmem.audit_governance WHERE tenant = %s AND event LIKE 'vault%%' ORDER BY audit_id",
            (tenant,),
        )
    ]
    assert events == ["vault_written", "vault_read", "vault_written", "vault_read", "vault_deleted"]


def test_secrets_are_encrypted_at_rest_and_never_recalled_or_audited(db, tenant):
    db.execute("SELECT cogmem.vault_put(%s, 'db/prod', %s, 'the production database password')", (tenant, SECRET))
    raw = one(db, "SELECT secret FROM cogmem.vault_items")
    assert SECRET.encode() not in bytes(raw)
    db.execute("SELECT cogmem.remember(%s, 'The production database runs PostgreSQL 15')", (tenant,))
    recalled = db.execute("SELECT content FROM cogmem.recall(%s, 'production database password')", (tenant,)).fetchall()
    assert SECRET not in str(recalled)
    assert SECRET not in one(db, "SELECT string_agg(t::text, ' ') FROM cogmem.audit_log AS t")


def test_only_vault_granted_roles_read_it(db, tenant, login):
    db.execute("SELECT cogmem.vault_put(%s, 'db/prod', %s)", (tenant, SECRET))
    app = login("cogmem_app")
    role = one(app, "SELECT current_user")
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (role, tenant))
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as err:
        app.execute("SELECT cogmem.vault_get(%s, 'db/prod')", (tenant,))
    assert "grant_tenant" in err.value.diag.message_hint
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # only the API's owner reads the keys
        app.execute("SELECT * FROM cogmem.vault_keys")
    db.execute("SELECT cogmem.grant_tenant(%s, %s, vault => true)", (role, tenant))
    assert one(app, "SELECT cogmem.vault_get(%s, 'db/prod')", (tenant,)) == SECRET
    assert one(app, "SELECT actor FROM cogmem.audit_trail WHERE event = 'vault_read'") == role
    admin = login("cogmem_admin")  # administrators see that items exist, not what they hold
    assert one(admin, "SELECT count(*) FROM cogmem.vault_items") == 1
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        admin.execute("SELECT * FROM cogmem.vault_keys")


@pytest.mark.parametrize(
    "sql, params, sqlstate",
    [
        ("SELECT cogmem.vault_put(%s, 'x', NULL)", ("acme",), "22023"),
        ("SELECT cogmem.vault_put(%s, 'x', '')", ("acme",), "22023"),
        ("SELECT cogmem.vault_put(%s, '', 'v')", ("acme",), "22023"),
        ("SELECT cogmem.vault_put(%s, repeat('n', 201), 'v')", ("acme",), "22023"),
        ("SELECT cogmem.vault_put(%s, 'x', 'v')", ("ghost",), "42704"),
        ("SELECT cogmem.vault_get(%s, 'missing')", ("acme",), "P0002"),
        ("SELECT cogmem.vault_get(%s, NULL)", ("acme",), "22023"),
    ],
)
def test_bad_vault_input(db, tenant, sql, params, sqlstate):
    with pytest.raises(psycopg.Error) as err:
        db.execute(sql, params)
    assert err.value.sqlstate == sqlstate
    assert one(db, "SELECT count(*) FROM cogmem.vault_items") == 0
