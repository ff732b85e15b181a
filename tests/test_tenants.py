"""sql/010-tenants.sql: tenants and their recall layers."""

import psycopg
import pytest

from tests.conftest import one


def test_create_tenant_seeds_the_default_budget_split(db):
    db.execute("SELECT cogmem.create_tenant('acme', 'turkish')")
    assert one(db, "SELECT language::text FROM cogmem.tenants WHERE tenant = 'acme'") == "turkish"
    rows = db.execute(
        "SELECT layer::text, token_allocation, half_life::text, never_cut FROM cogmem.tenant_layers"
        " WHERE tenant = 'acme' ORDER BY priority"
    ).fetchall()
    assert rows == [
        ("bios", 300, None, True),
        ("shocks", 300, None, True),
        ("dos_and_donts", 400, None, True),
        ("gut", 400, None, False),
        ("long_term", 500, "60 days", False),
        ("habits", 200, "90 days", False),
        ("procedures", 300, "90 days", False),
        ("fresh", 300, "7 days", False),
    ]
    # 2,700 allocated; the other 500 of the default 3,200 are a reserve open to every layer in order.
    assert sum(r[1] for r in rows) == 2700


def test_create_tenant_is_idempotent(db):
    db.execute("SELECT cogmem.create_tenant('acme')")
    db.execute("SELECT cogmem.create_tenant('acme')")
    db.execute("SELECT cogmem.create_tenant('acme', 'english')")
    assert one(db, "SELECT count(*) FROM cogmem.tenant_layers WHERE tenant = 'acme'") == 8


def test_language_of_an_existing_tenant_is_not_silently_changed(db):
    db.execute("SELECT cogmem.create_tenant('acme')")
    with pytest.raises(psycopg.errors.UniqueViolation) as err:
        db.execute("SELECT cogmem.create_tenant('acme', 'turkish')")
    assert err.value.diag.message_primary == 'tenant "acme" already exists with language english'
    assert one(db, "SELECT language::text FROM cogmem.tenants") == "english"


@pytest.mark.parametrize(
    ("tenant", "language", "sqlstate", "message"),
    [
        (None, "english", "22004", "tenant must not be NULL"),
        ("", "english", "22023", 'tenant name "" is empty or longer than 200 characters'),
        ("acme", "klingon", "22023", 'unknown text search language "klingon"'),
    ],
)
def test_bad_tenant_input(db, tenant, language, sqlstate, message):
    with pytest.raises(psycopg.Error) as err:
        db.execute("SELECT cogmem.create_tenant(%s, %s)", (tenant, language))
    assert err.value.sqlstate == sqlstate
    assert err.value.diag.message_primary == message
    assert err.value.diag.message_hint
    assert one(db, "SELECT count(*) FROM cogmem.tenants") == 0
