"""sql/000-tenant-access.sql: a login bound to one tenant reaches nothing of another, by any route."""

import contextlib
import random

import psycopg
import pytest

from tests.conftest import one, unit_vector

TENANTS = ["tn_north", "tn_south", "tn_east"]  # names that appear nowhere else


def marker(tenant: str, n: int) -> str:
    return f"zq{tenant}marker{n}"


@pytest.fixture
def world(db):
    """Three tenants, each with memories, recalls, feedback, a vault item, a night and a sealed trail."""
    db.execute("SELECT cogmem.add_bios_rule('server', 'Run a configuration test before any restart.')")
    recalls = {}
    for t in TENANTS:
        db.execute("SELECT cogmem.create_tenant(%s)", (t,))
        for n in range(4):
            db.execute(
                "SELECT cogmem.remember(%s, %s, topics => '{server}', embedding => %s::vector)",
                (t, f"The server {marker(t, n)} runs nginx on port {8000 + n}", str(unit_vector(hash(t) % 1000 + n))),
            )
        db.execute("SELECT cogmem.vault_put(%s, 'db/password', %s, subject => %s)", (t, f"pw-{marker(t, 9)}", t))
        recalls[t] = one(db, "SELECT recall_id FROM cogmem.recall(%s, 'which server runs nginx') LIMIT 1", (t,))
        db.execute("SELECT cogmem.feedback(%s, 1)", (recalls[t],))
        db.execute("SELECT cogmem.observe(%s, 'c1', 'user', %s)", (t, f"I prefer short answers {marker(t, 8)}"))
    db.execute("SELECT * FROM cogmem.consolidate(now() + interval '1 day')")
    db.execute("SELECT cogmem.seal_audit()")
    return recalls


def relations(db):
    return [
        r[0]
        for r in db.execute(
            """SELECT c.oid::regclass::text FROM pg_class AS c
               WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relkind IN ('r', 'v', 'p')
               ORDER BY 1"""
        )
    ]


def everything_visible(conn, rels) -> str:
    """All a connection can read from every table and view, as one string (unreadable ones skipped)."""
    seen = []
    for rel in rels:
        with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
            seen += [str(r) for r in conn.execute(f"SELECT * FROM {rel}").fetchall()]
    return " ".join(seen)


def api_calls(tenant: str, recall_id) -> list[tuple[str, tuple]]:
    return [
        ("SELECT * FROM cogmem.recall(%s, 'which server runs nginx')", (tenant,)),
        ("SELECT * FROM cogmem.remember(%s, 'a new fact about the server')", (tenant,)),
        ("SELECT * FROM cogmem.observe(%s, 'c1', 'user', 'I prefer tea')", (tenant,)),
        ("SELECT cogmem.feedback(%s, 0)", (recall_id,)),
        ("SELECT * FROM cogmem.explain_recall(%s)", (recall_id,)),
        ("SELECT * FROM cogmem.siblings(%s, 1)", (tenant,)),
        ("SELECT cogmem.detect_topics(%s, 'invoice')", (tenant,)),
        ("SELECT * FROM cogmem.verify_audit(%s)", (tenant,)),
        ("SELECT cogmem.vault_get(%s, 'db/password')", (tenant,)),
        ("SELECT * FROM cogmem.vault_list(%s)", (tenant,)),
        ("SELECT * FROM cogmem.erase_subject(%s, 'nginx')", (tenant,)),
    ]


def test_no_role_bound_to_one_tenant_sees_another(db, login, world):
    rng = random.Random(20261130)
    rels = relations(db)
    roles = {}
    for kind in ["cogmem_app", "cogmem_auditor", "cogmem_bi"]:
        for t in TENANTS:
            conn = login(kind)
            db.execute(
                "SELECT cogmem.grant_tenant(%s, %s, vault => %s)",
                (one(conn, "SELECT current_user"), t, kind == "cogmem_app"),
            )
            roles[(kind, t)] = conn
    for (kind, own), conn in rng.sample(sorted(roles.items()), len(roles)):
        seen = everything_visible(conn, rels)
        for other in TENANTS:
            if other == own:
                continue
            assert marker(other, 0)[:-1] not in seen, f"{kind} bound to {own} read {other}'s memories"
            assert other not in seen, f"{kind} bound to {own} read {other}'s rows"
            for sql, params in rng.sample(api_calls(other, world[other]), 6):
                try:
                    rows = conn.execute(sql, params).fetchall()
                except psycopg.Error as exc:
                    # Refused: the tenant does not exist for this role, or the role may not call this.
                    assert exc.sqlstate in {"42704", "42501", "02000", "P0002"}, (kind, sql, exc)
                    continue
                assert marker(other, 0)[:-1] not in str(rows), (kind, sql)
                assert kind != "cogmem_app" or rows in ([], [(None,)]) or "verify_audit" in sql, (kind, sql, rows)
        if kind == "cogmem_auditor":  # auditors see the trail of their tenant, never its memories' text
            assert marker(own, 0) not in seen
            assert conn.execute("SELECT ok FROM cogmem.verify_audit()").fetchall() == [(True,)]
        if kind == "cogmem_bi":  # aggregates only
            assert marker(own, 0) not in seen
            assert [r[0] for r in conn.execute("SELECT DISTINCT tenant FROM cogmem.memory_census")] == [own]


def test_app_reaches_its_own_tenant_and_writes_honest_audit_rows(db, login, world):
    app = login("cogmem_app")
    role = one(app, "SELECT current_user")
    db.execute("SELECT cogmem.grant_tenant(%s, 'tn_north')", (role,))
    assert marker("tn_north", 0) in str(
        app.execute("SELECT content FROM cogmem.recall('tn_north', 'nginx server')").fetchall()
    )
    # It cannot write another tenant's trail, nor in another's name.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute("INSERT INTO cogmem.audit_log (tenant, level, event) VALUES ('tn_south', 'write', 'created')")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute(
            "INSERT INTO cogmem.audit_log (tenant, level, event, actor) VALUES ('tn_north', 'write', 'x', 'postgres')"
        )
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute("INSERT INTO cogmem.audit_log (tenant, level, event, xid) VALUES ('tn_north', 'write', 'x', '3')")
    # Nor read the vault without a vault grant.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute("SELECT cogmem.vault_get('tn_north', 'db/password')")


def test_a_group_grant_and_the_every_tenant_grant(db, login, world):
    db.execute("CREATE ROLE t_support_desk NOLOGIN")
    try:
        member = login("cogmem_app")
        db.execute(f"GRANT t_support_desk TO {one(member, 'SELECT current_user')}")
        db.execute("SELECT cogmem.grant_tenant('t_support_desk', 'tn_east')")
        assert {r[0] for r in member.execute("SELECT tenant FROM cogmem.tenants")} == {"tn_east"}
        everyone = login("cogmem_auditor")
        db.execute("SELECT cogmem.grant_tenant(%s, '*')", (one(everyone, "SELECT current_user"),))
        assert {r[0] for r in everyone.execute("SELECT tenant FROM cogmem.verify_audit()")} >= set(TENANTS)
    finally:
        db.execute("DELETE FROM cogmem.tenant_access WHERE role_name = 't_support_desk'")
        db.execute("DROP OWNED BY t_support_desk")
        db.execute("DROP ROLE t_support_desk")


def test_grants_reach_through_memberships_and_not_from_dropped_roles(db, login, world):
    """Who reaches a tenant is what pg_has_role(..., 'USAGE') says, walked from the caller's memberships:
    two levels of groups, a name that needs quoting, and a grant left behind by a dropped role."""
    db.execute('CREATE ROLE "T Desk Inner" NOLOGIN')
    db.execute("CREATE ROLE t_desk_outer NOLOGIN")
    db.execute("CREATE ROLE t_desk_gone NOLOGIN")
    try:
        db.execute('GRANT "T Desk Inner" TO t_desk_outer; GRANT cogmem_app TO "T Desk Inner"')
        db.execute("SELECT cogmem.grant_tenant('T Desk Inner', 'tn_north')")
        db.execute("SELECT cogmem.grant_tenant('t_desk_gone', 'tn_south')")
        db.execute("DROP ROLE t_desk_gone")  # its grant row stays behind
        member = login("t_desk_outer")
        # Not tn_south: the dropped role's grant reaches nobody (and its dangling row breaks nothing).
        assert [r[0] for r in member.execute("SELECT tenant FROM cogmem.tenants")] == ["tn_north"]
        north = one(db, "SELECT count(*) FROM cogmem.memories WHERE tenant = 'tn_north'")
        assert north > 0 and one(member, "SELECT count(*) FROM cogmem.memories") == north
        assert one(member, "SELECT count(*) FROM cogmem.tenant_access") == 1
    finally:
        db.execute("DELETE FROM cogmem.tenant_access WHERE role_name IN ('T Desk Inner', 't_desk_gone')")
        db.execute('DROP OWNED BY "T Desk Inner", t_desk_outer')
        db.execute('DROP ROLE "T Desk Inner", t_desk_outer')


def test_grant_tenant_input_errors(db, tenant):
    with pytest.raises(psycopg.errors.UndefinedObject):
        db.execute("SELECT cogmem.grant_tenant('nobody_at_all', %s)", (tenant,))
    with pytest.raises(psycopg.errors.UndefinedObject):
        db.execute("SELECT cogmem.grant_tenant('cogmem_app', 'ghost')")
    with pytest.raises(psycopg.errors.NullValueNotAllowed):
        db.execute("SELECT cogmem.grant_tenant('cogmem_app', NULL)")
    assert one(db, "SELECT cogmem.revoke_tenant('cogmem_app', %s)", (tenant,)) is False


@pytest.mark.parametrize(
    ("tenant", "sqlstate", "message"),
    [
        (None, "22004", "tenant must not be NULL"),
        ("  ", "22023", "tenant must not be empty"),
        ("nobody", "42704", 'unknown tenant "nobody"'),
    ],
)
def test_tenant_checks(db, tenant, sqlstate, message):
    with pytest.raises(psycopg.Error) as err:
        db.execute("SELECT cogmem._require_tenant(%s)", (tenant,))
    assert err.value.sqlstate == sqlstate
    assert err.value.diag.message_primary == message
    assert err.value.diag.message_hint
