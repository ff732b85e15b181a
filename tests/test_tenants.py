"""sql/020-tenants.sql: tenants and their recall layers."""

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
        # A number is an object id to the regconfig cast, and "0.0" a schema: neither is a language.
        ("acme", "0", "22023", 'unknown text search language "0"'),
        ("acme", "0.0", "22023", 'unknown text search language "0.0"'),
        ("acme", " 13 ", "22023", 'unknown text search language " 13 "'),
    ],
)
def test_bad_tenant_input(db, tenant, language, sqlstate, message):
    with pytest.raises(psycopg.Error) as err:
        db.execute("SELECT cogmem.create_tenant(%s, %s)", (tenant, language))
    assert err.value.sqlstate == sqlstate
    assert err.value.diag.message_primary == message
    assert err.value.diag.message_hint
    assert one(db, "SELECT count(*) FROM cogmem.tenants") == 0


def test_administrators_configure_a_tenant_and_its_layers(db, tenant, login):
    admin = login("cogmem_admin")
    settings = '{"merge_similarity": 0.95, "forget_after": "60 days"}'
    row = one(admin, "SELECT cogmem.configure_tenant(%s, %s)", (tenant, settings))
    assert (row["merge_similarity"], row["forget_after"]) == (0.95, "60 days")
    assert one(db, "SELECT merge_similarity FROM cogmem.tenants WHERE tenant = %s", (tenant,)) == pytest.approx(0.95)
    layer = one(
        admin, "SELECT cogmem.configure_tenant(%s, '{\"token_allocation\": 500}', layer => 'habits')", (tenant,)
    )
    assert (layer["layer"], layer["token_allocation"]) == ("habits", 500)
    assert one(db, "SELECT count(*) FROM cogmem.audit_log WHERE tenant = %s AND level = 'governance'", (tenant,)) >= 2
    # Applications may read the settings, not change them: neither by hand nor through this function.
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (one(app, "SELECT current_user"), tenant))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute("SELECT cogmem.configure_tenant(%s, '{\"merge_similarity\": 0.5}')", (tenant,))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute("UPDATE cogmem.tenants SET merge_similarity = 0.5")


@pytest.mark.parametrize(
    "settings, layer, sqlstate, message",
    [
        ('{"language": "simple"}', None, "42703", "no setting named language"),
        ('{"nonsense": 1, "merge_similarity": 1}', None, "42703", "no setting named nonsense"),
        ("{}", None, "22023", "settings must be a non-empty JSON object"),
        ('{"merge_similarity": "high"}', None, "22P02", 'invalid input syntax for type real: "high"'),
        ('{"merge_similarity": 7}', None, "23514", None),
        ('{"priority": 1}', "gut_feelings", "22023", 'unknown layer "gut_feelings"'),
    ],
)
def test_bad_settings_change_nothing(db, tenant, settings, layer, sqlstate, message):
    before = db.execute("SELECT to_jsonb(t) FROM cogmem.tenants AS t WHERE tenant = %s", (tenant,)).fetchone()
    with pytest.raises(psycopg.Error) as err:
        db.execute("SELECT cogmem.configure_tenant(%s, %s, %s)", (tenant, settings, layer))
    assert err.value.sqlstate == sqlstate
    assert message is None or err.value.diag.message_primary == message
    assert db.execute("SELECT to_jsonb(t) FROM cogmem.tenants AS t WHERE tenant = %s", (tenant,)).fetchone() == before
