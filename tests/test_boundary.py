"""sql/999-privileges.sql and the reach checks of sql/000-tenant-access.sql: the API is the only way in.

Every attack runs as each application role, used the three ways a role is used: a login granted one
tenant, a login that takes a granted role with SET ROLE, and a login that belongs to a granted group.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest

from tests.conftest import one, unit_vector

APP_ROLES = ["cogmem_app", "cogmem_admin", "cogmem_auditor", "cogmem_bi"]
WAYS = ["login", "set_role", "group"]
OWN, OTHER, GHOST = "tn_own", "tn_other", "tn_ghost"  # GHOST exists nowhere
MISSING_ID = 987654321
MISSING_UUID = "00000000-0000-4000-8000-000000000001"
# The maintenance that needs the tables' owner: the schema owner and pg_cron run it, no application role.
OWNER_ONLY = ["audit_partitions_ensure", "audit_apply_retention", "schedule_nightly", "unschedule_nightly",
              "schedule_audit", "unschedule_audit", "schedule_rehearsals", "unschedule_rehearsals",
              "consolidate_nightly"]  # fmt: skip


@dataclass
class Caller:
    conn: psycopg.Connection
    role: str  # the application role it acts through
    way: str
    name: str  # what cogmem.caller() and the audit trail must say


@pytest.fixture
def world(db) -> dict:
    """Two tenants with a memory, a recall, a conflict, a session and a learning each."""
    ids: dict = {}
    for t in (OWN, OTHER):
        db.execute("SELECT cogmem.create_tenant(%s)", (t,))
        memory = one(db, "SELECT memory_id FROM cogmem.remember(%s, %s, 'long_term')", (t, f"zq{t} runs nginx"))
        db.execute("SELECT cogmem.remember(%s, 'Never restart nginx during business hours.', 'dos_and_donts')", (t,))
        conflict = one(
            db, "SELECT conflict_id FROM cogmem.remember(%s, 'Always restart nginx during business hours.')", (t,)
        )
        ids[t] = {
            "memory": memory,
            "recall": one(db, "SELECT recall_id FROM cogmem.recall(%s, 'nginx') LIMIT 1", (t,)),
            "conflict": conflict,
            "session": one(db, "SELECT cogmem.start_session(%s, 'web')", (t,)),
            "learning": one(db, "SELECT learning_id FROM cogmem.report_error(%s, 'nginx', 'Restarted it live')", (t,)),
        }
        db.execute("SELECT cogmem.vault_put(%s, 'db/password', 'hunter2')", (t,))
        db.execute(
            "SELECT cogmem.store_put(%s, '{zq,card 4111111111111111}', 'k', %s, %s)",
            (t, json.dumps({"content": f"zq{t} keeps a store note", "pass": 1234}), f"zq{t} keeps a store note"),
        )
    assert all(ids[t]["conflict"] is not None for t in ids)
    return ids


@pytest.fixture(params=[(r, w) for r in APP_ROLES for w in WAYS], ids=lambda p: f"{p[0]}-{p[1]}")
def caller(request, db, login, world) -> Iterator[Caller]:
    role, way = request.param
    extra = f"t_{uuid.uuid4().hex[:10]}"
    if way == "login":
        conn = login(role)
        name = grantee = one(conn, "SELECT current_user")
    else:
        db.execute(f"CREATE ROLE {extra} NOLOGIN IN ROLE {role}")
        conn = login(extra)
        if way == "set_role":
            conn.execute(f"SET ROLE {extra}")
            name = extra
        else:
            name = one(conn, "SELECT current_user")
        grantee = extra
    db.execute("SELECT cogmem.grant_tenant(%s, %s, vault => true)", (grantee, OWN))
    yield Caller(conn, role, way, name)
    conn.execute("RESET ROLE")
    db.execute("DELETE FROM cogmem.tenant_access WHERE role_name = %s", (grantee,))
    if way != "login":
        db.execute(f"DROP ROLE {extra}")


def refused(conn: psycopg.Connection, sql: str, params=None) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as err:
        conn.execute(sql, params)
    return err.value


def relations(db, kinds: str = "rpv") -> list[tuple[str, str]]:
    """Every table, partition and view of cogmem, with the name of a column that may be assigned."""
    return db.execute(
        """SELECT DISTINCT ON (c.oid) c.oid::regclass::text, a.attname FROM pg_class AS c
           JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                AND a.attidentity = '' AND a.attgenerated = ''
           WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relkind = ANY (%s) ORDER BY c.oid, a.attnum DESC""",
        (list(kinds),),
    ).fetchall()


# -- writes around the API --------------------------------------------------------------------------


def test_every_table_write_fails_with_42501(db, caller):
    views = {r for r, _ in relations(db, "v")}
    for rel, column in relations(db):
        for sql in (
            f"INSERT INTO {rel} DEFAULT VALUES",
            f"UPDATE {rel} SET {column} = {column}",
            f"DELETE FROM {rel}",
            *([] if rel in views else [f"TRUNCATE {rel} CASCADE"]),  # views cannot be truncated at all
        ):
            # A view that is not updatable says so before it asks about privileges (55000).
            expected = {"42501", "55000"} if rel in views else {"42501"}
            assert refused(caller.conn, sql).sqlstate in expected, (caller.role, caller.way, sql)


def helper_calls(db) -> list[tuple[str, bool, str]]:
    """A call of every internal helper and owner-only function, with NULL for every argument."""
    rows = db.execute(
        """SELECT p.oid::regprocedure::text, p.prokind, p.proname, p.proisstrict,
                  coalesce((SELECT string_agg(format('NULL::%%s', format_type(t, NULL)), ', ' ORDER BY n)
                            FROM unnest(p.proargtypes) WITH ORDINALITY AS a (t, n)), '')
           FROM pg_proc AS p WHERE p.pronamespace = 'cogmem'::regnamespace
             AND (p.proname LIKE '\\_%%' OR p.proname = ANY (%s))
             AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype) ORDER BY 1""",
        (OWNER_ONLY,),
    ).fetchall()
    return [
        (sig, strict, f"{'CALL' if kind == 'p' else 'SELECT'} cogmem.{name}({args})")
        for sig, kind, name, strict, args in rows
    ]


def test_every_internal_helper_fails(db, caller):
    calls = helper_calls(db)
    assert len(calls) > 45
    for signature, strict, sql in calls:
        assert not one(caller.conn, "SELECT has_function_privilege(%s::regprocedure, 'EXECUTE')", (signature,))
        if strict:  # the planner folds a strict call on NULLs to NULL before it asks for the privilege
            continue
        err = refused(caller.conn, sql)
        assert err.sqlstate == "42501", (caller.role, signature, err)
        assert err.diag.message_primary.startswith("permission denied for"), signature
    triggers = db.execute(
        """SELECT p.oid FROM pg_proc AS p WHERE p.pronamespace = 'cogmem'::regnamespace
           AND p.prorettype IN ('trigger'::regtype, 'event_trigger'::regtype)"""
    ).fetchall()
    assert triggers and not any(
        one(caller.conn, "SELECT has_function_privilege(%s, 'EXECUTE')", (oid,)) for (oid,) in triggers
    )


def test_no_audit_row_can_be_forged_or_altered(db, caller):
    before = one(db, "SELECT count(*) FROM cogmem.audit_log")
    forgeries = [
        "INSERT INTO cogmem.audit_log (tenant, level, event) VALUES ('tn_own', 'lifecycle', 'reinforced')",
        "INSERT INTO cogmem.audit_log (tenant, level, event, actor) VALUES ('tn_own', 'write', 'created', 'postgres')",
        "INSERT INTO cogmem.audit_chain SELECT * FROM cogmem.audit_chain LIMIT 1",
        "UPDATE cogmem.audit_log SET actor = 'someone_else'",
        "UPDATE cogmem.audit_chain SET row_hash = '\\x00'",
        "UPDATE cogmem.audit_seal_state SET horizon = '0'",
        "DELETE FROM cogmem.audit_log",
        "TRUNCATE cogmem.audit_log",
        "INSERT INTO cogmem.memory_stats (tenant, memory_id) VALUES ('tn_own', 1)",
        "UPDATE cogmem.memory_stats SET reinforced = true",
    ]
    for sql in forgeries:
        assert refused(caller.conn, sql).sqlstate == "42501", sql
    assert one(db, "SELECT count(*) FROM cogmem.audit_log") == before
    if caller.role in ("cogmem_app", "cogmem_admin"):
        # Through the API the row is written, in the name of the role the call acts for.
        assert one(caller.conn, "SELECT cogmem.caller()") == caller.name
        memory = one(caller.conn, "SELECT memory_id FROM cogmem.remember('tn_own', 'The backup runs at two.')")
        actors = db.execute(
            "SELECT DISTINCT actor FROM cogmem.audit_log WHERE tenant = 'tn_own' AND memory_id = %s", (memory,)
        ).fetchall()
        assert actors == [(caller.name,)]


def test_no_role_reads_the_gut_shard_key_and_the_owner_only_reads_it(db, login):
    """The key that signs Gut releases and exports (issue 37): a role that could read it could sign a
    release of its own, so none reads it, not cogmem_gut, not cogmem_admin; the definers read it, and
    only its owner (the installer) writes it."""
    db.execute("INSERT INTO cogmem.gut_shard_key (shard_key) VALUES (%s)", (bytes(32),))
    for role in [*APP_ROLES, "cogmem_gut"]:
        conn = login(role)
        for sql in ("SELECT * FROM cogmem.gut_shard_key", "SELECT cogmem._gut_key()",
                    "SELECT cogmem._gut_sign('release', '{}')"):  # fmt: skip
            assert refused(conn, sql).sqlstate == "42501", (role, sql)
    for privilege in ("INSERT", "UPDATE", "DELETE"):
        assert not one(db, "SELECT has_table_privilege('cogmem_owner', 'cogmem.gut_shard_key', %s)", (privilege,))
    assert one(db, "SELECT has_table_privilege('cogmem_owner', 'cogmem.gut_shard_key', 'SELECT')")


def test_the_gut_role_publishes_only_what_the_database_drew(db, login):
    """Issue 37: cogmem_gut could publish anything, through gut_import or invented gathered rows."""
    from psycopg.types.json import Jsonb

    from tests.test_gut import forged_state, invented_rows

    releaser = login("cogmem_gut")
    import_forged = ("SELECT cogmem.gut_import(%s)", (Jsonb(forged_state()),))
    invented = invented_rows() | {"exported_at": one(db, "SELECT to_jsonb(now())")}
    release_invented = ("SELECT * FROM cogmem.gut_release(1.0, gathered => %s)", (Jsonb([invented]),))
    assert refused(releaser, *import_forged).sqlstate == "55000"  # a single node imports nothing
    assert refused(releaser, *release_invented).sqlstate == "55000"
    db.execute("INSERT INTO cogmem.gut_shard_key (shard_key) VALUES (%s)", (bytes(32),))
    assert refused(releaser, *import_forged).sqlstate == "42501"
    assert refused(releaser, *release_invented).sqlstate == "42501"
    assert one(db, "SELECT count(*) FROM cogmem.gut_patterns") == 0
    assert one(db, "SELECT count(*) FROM cogmem.gut_releases") == 0


# -- an unreachable tenant is a missing one ---------------------------------------------------------


def tenant_calls() -> list[str]:
    """Every public function that names a tenant, {t} the tenant; {m} a memory, {l} a learning of it."""
    return [
        "SELECT * FROM cogmem.remember({t}, 'zq a new fact about the server')",
        'SELECT * FROM cogmem.remember_many({t}, \'[{{"content": "zq a batch fact"}}]\')',
        "SELECT * FROM cogmem.recall({t}, 'nginx')",
        "SELECT cogmem.detect_topics({t}, 'invoice')",
        "SELECT * FROM cogmem.topic_keywords({t})",
        "SELECT * FROM cogmem.observe({t}, 'c1', 'user', 'I prefer tea')",
        "SELECT * FROM cogmem.siblings({t}, 1)",
        "SELECT * FROM cogmem.trust({t})",
        "SELECT * FROM cogmem.trust_event({t}, 'user_correction')",
        "SELECT * FROM cogmem.guard_check({t}, 'nginx', 'restart nginx now')",
        "SELECT * FROM cogmem.report_error({t}, 'nginx', 'Restarted it live again')",
        "SELECT * FROM cogmem.acknowledge({t}, 1)",
        "SELECT * FROM cogmem.open_conflicts({t})",
        "SELECT * FROM cogmem.related({t}, 'nginx')",
        "SELECT cogmem.start_session({t}, 'web')",
        "SELECT * FROM cogmem.briefing({t})",
        "SELECT cogmem.briefing_text({t})",
        "SELECT * FROM cogmem.analyze({t})",
        "SELECT * FROM cogmem.core_identity({t})",
        "SELECT * FROM cogmem.set_core_identity({t}, 'a helpful agent')",
        "SELECT cogmem.vault_put({t}, 'x', 'y')",
        "SELECT cogmem.vault_get({t}, 'db/password')",
        "SELECT * FROM cogmem.vault_list({t})",
        "SELECT cogmem.vault_delete({t}, 'db/password')",
        "SELECT * FROM cogmem.verify_audit({t})",
        "SELECT cogmem.set_topic({t}, 'x', '{{y}}')",
        "SELECT * FROM cogmem.erase({t}, 1)",
        "SELECT * FROM cogmem.erase_subject({t}, 'nginx')",
        "SELECT * FROM cogmem.consolidate(now(), {t})",
        "SELECT cogmem.add_bios_rule('server', 'zq a rule', tenant => {t})",
        "SELECT cogmem.grant_tenant('cogmem_app', {t})",
        "SELECT cogmem.revoke_tenant('cogmem_app', {t})",
        "SELECT * FROM cogmem.pending_rules({t})",
        "SELECT cogmem.confirm_ring({t}, 1, 'dos_and_donts')",
        "SELECT cogmem.dismiss_candidate({t}, 1)",
        "SELECT * FROM cogmem.store_put({t}, '{{zq,notes}}', 'k', '{{\"content\": \"zq a note\"}}', 'zq a note')",
        # Reach is checked before anything the call was given: over every limit, the answer is the same.
        "SELECT * FROM cogmem.store_put({t}, ARRAY[repeat('l', 2000)], repeat('k', 600), '{{}}', ttl_minutes => 'NaN')",
        "SELECT * FROM cogmem.store_get({t}, '{{zq,notes}}', 'k')",
        "SELECT * FROM cogmem.store_get({t}, '{{zq,card 4111111111111111}}', 'k')",
        "SELECT cogmem.store_delete({t}, '{{zq,notes}}', 'k')",
        "SELECT * FROM cogmem.store_search({t}, '{{zq}}', 'note')",
        "SELECT * FROM cogmem.store_namespaces({t})",
        "SELECT cogmem.store_sweep({t})",
    ]


def id_calls(ids: dict) -> list[tuple[str, str]]:
    """Every argument that names an id: (call, kind); {v} is the id, the caller's own tenant elsewhere."""
    return [
        ("SELECT cogmem.feedback({v}, 1)", "recall"),
        ("SELECT * FROM cogmem.explain_recall({v})", "recall"),
        ("SELECT * FROM cogmem.recall('tn_own', 'nginx', conversation => 'c-{v}')", None),
        ("SELECT * FROM cogmem.resolve_conflict({v}, 'exception')", "conflict"),
        ("SELECT * FROM cogmem.end_session({v}, 'done')", "session"),
        # The tenant-first forms (what the MCP server calls) with the caller's own tenant and another's id.
        ("SELECT cogmem.feedback('tn_own', {v}, 1)", "recall"),
        ("SELECT * FROM cogmem.resolve_conflict('tn_own', {v}, 'exception')", "conflict"),
        ("SELECT * FROM cogmem.end_session('tn_own', {v}, 'done')", "session"),
        ("SELECT * FROM cogmem.acknowledge('tn_own', {v})", "learning"),
        ("SELECT * FROM cogmem.report_error('tn_own', 'nginx', 'Restarted it live', repeat_of => {v})", "learning"),
        ("SELECT * FROM cogmem.siblings('tn_own', {v})", "memory"),
        ("SELECT * FROM cogmem.trust_event('tn_own', 'user_correction', memory_id => {v})", "memory"),
        ("SELECT memory_id IS NULL, action FROM cogmem.remember('tn_own', 'zq nginx listens on 81', "
         "contradicts => ARRAY[{v}]::bigint[])", "memory"),
        ("SELECT * FROM cogmem.erase('tn_own', {v})", "memory"),
        ("SELECT cogmem.confirm_ring('tn_own', {v}, 'dos_and_donts')", "memory"),
        ("SELECT cogmem.dismiss_candidate('tn_own', {v})", "memory"),
    ]  # fmt: skip


def outcome(conn: psycopg.Connection, sql: str, value: str) -> tuple:
    """What a call answers, with the name or id it was given replaced, in a transaction rolled back."""
    try:
        with conn.transaction(force_rollback=True):
            rows = conn.execute(sql).fetchall()
    except psycopg.Error as exc:
        d = exc.diag
        return ("error", exc.sqlstate, *(str(x or "").replace(value, "?") for x in (d.message_primary, d.message_hint)))
    text = json.dumps(rows, default=str)
    assert "zqtn_other" not in text, sql
    # Fresh ids and times differ between two runs; what matters is the shape and that nothing leaked.
    return ("rows", len(rows), re.sub(r"[0-9a-f-]{36}|\d{4}-\d\d-\d\d[ T][\d:.+]+|\d+", "#", text.replace(value, "?")))


def test_every_public_function_refuses_an_unreachable_tenant_as_a_missing_one(db, caller, world):
    if caller.role == "cogmem_admin":  # administrators reach every tenant: nothing is unreachable
        assert one(caller.conn, "SELECT count(*) FROM cogmem.recall(%s, 'nginx')", (OTHER,)) > 0
        return
    rng = random.Random(20261201)
    calls = tenant_calls()
    rng.shuffle(calls)
    written = one(db, "SELECT count(*) FROM cogmem.audit_log WHERE tenant = %s", (OTHER,))
    for template in calls:
        unreachable = outcome(caller.conn, template.format(t=f"'{OTHER}'"), OTHER)
        missing = outcome(caller.conn, template.format(t=f"'{GHOST}'"), GHOST)
        assert unreachable == missing, (caller.role, caller.way, template)
    assert one(db, "SELECT count(*) FROM cogmem.audit_log WHERE tenant = %s", (OTHER,)) == written


def test_every_id_of_another_tenant_is_refused_as_a_missing_one(db, caller, world):
    if caller.role == "cogmem_admin":
        assert one(caller.conn, "SELECT cogmem.feedback(%s, 1)", (world[OTHER]["recall"],)) >= 1
        return
    other = world[OTHER]
    for template, kind in id_calls(world):
        if kind is None:
            continue
        value = other[kind]
        quote = "'" if isinstance(value, (uuid.UUID, str)) else ""
        absent = MISSING_UUID if quote else MISSING_ID
        theirs = outcome(caller.conn, template.format(v=f"{quote}{value}{quote}"), str(value))
        nobody = outcome(caller.conn, template.format(v=f"{quote}{absent}{quote}"), str(absent))
        assert theirs == nobody, (caller.role, caller.way, template)


# -- text that looks like SQL ---------------------------------------------------------------------

INJECTIONS = [
    "x'); DROP TABLE cogmem.memories; --",
    "'; UPDATE cogmem.memory_stats SET reinforced = true; --",
    "$$; DELETE FROM cogmem.audit_log; $$",
    "%s %I %L \\' \" ; --",
]


def test_text_that_looks_like_sql_stays_data(db, login):
    admin = login("cogmem_admin")
    tenant = "o'brien\"; DROP TABLE cogmem.tenants; --"
    admin.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, %s, vault => true)", (one(app, "SELECT current_user"), tenant))
    for n, text in enumerate(INJECTIONS):
        row = app.execute(
            "SELECT memory_id, topics FROM cogmem.remember(%s, %s, 'long_term', topics => ARRAY[%s], "
            "source => jsonb_build_object('name', %s::text))",
            (tenant, f"Fact {n}: {text}", text, text),
        ).fetchone()
        assert row is not None
        stored = db.execute(
            "SELECT content, source->>'name' FROM cogmem.memories WHERE tenant = %s AND memory_id = %s",
            (tenant, row[0]),
        ).fetchone()
        assert stored == (f"Fact {n}: {text}", text)
        admin.execute("SELECT cogmem.set_topic(%s, %s, ARRAY[%s])", (tenant, f"topic {n} {text}", text))
        app.execute("SELECT cogmem.vault_put(%s, %s, %s, %s)", (tenant, f"k{n}{text}"[:200], text, text))
        assert one(app, "SELECT cogmem.vault_get(%s, %s)", (tenant, f"k{n}{text}"[:200])) == text
        app.execute("SELECT * FROM cogmem.recall(%s, %s, topics => ARRAY[%s])", (tenant, text, text)).fetchall()
        app.execute("SELECT cogmem.start_session(%s, %s, %s)", (tenant, text, text))
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE tenant = %s", (tenant,)) == len(INJECTIONS)
    assert one(db, "SELECT count(*) FROM cogmem.memory_stats WHERE reinforced") == 0
    db.execute("SELECT cogmem.seal_audit()")
    assert one(db, "SELECT ok FROM cogmem.verify_audit(%s)", (tenant,)) is True
    assert one(db, "SELECT count(*) FROM cogmem.tenants") == 1


# -- the catalog -----------------------------------------------------------------------------------

WRITE_PRIVILEGES = ["INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"]
# The verbs that name no tenant and no id: pure functions over their arguments and the global model.
TENANT_FREE = {"classify", "route", "redact", "polarity", "contradicts", "attention", "judge_followup",
               "chunk_text", "clauses"}  # fmt: skip
# Verbs keyed by an id: the id's own row (read under row-level security) names the tenant to reach.
ID_KEYED = {"feedback": "recalls", "explain_recall": "audit_log", "resolve_conflict": "conflicts",
            "end_session": "sessions"}  # fmt: skip


def test_no_application_role_holds_a_write_privilege(db):
    rows = db.execute(
        """SELECT r, c.oid::regclass::text, p FROM pg_class AS c,
                  unnest(%s::text[]) AS r, unnest(%s::text[]) AS p
           WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relkind IN ('r', 'p', 'v')
             AND has_table_privilege(r, c.oid, p)""",
        (APP_ROLES, WRITE_PRIVILEGES),
    ).fetchall()
    assert rows == []
    assert (
        db.execute(
            "SELECT r FROM unnest(%s::text[]) AS r WHERE has_schema_privilege(r, 'cogmem', 'CREATE')"
            " OR has_schema_privilege(r, 'public', 'CREATE')",
            (APP_ROLES,),
        ).fetchall()
        == []
    )


def test_no_application_role_executes_an_internal_helper(db):
    rows = db.execute(
        """SELECT r, p.oid::regprocedure::text FROM pg_proc AS p, unnest(%s::text[]) AS r
           WHERE p.pronamespace = 'cogmem'::regnamespace
             AND (p.proname LIKE '\\_%%' OR p.proname = ANY (%s)) AND has_function_privilege(r, p.oid, 'EXECUTE')""",
        (APP_ROLES, OWNER_ONLY),
    ).fetchall()
    assert rows == []


def test_the_owner_is_a_bound_nologin_role_that_owns_no_table(db):
    assert db.execute(
        "SELECT rolcanlogin, rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles"
        " WHERE rolname = 'cogmem_owner'"
    ).fetchone() == (False, False, False, False, False)
    assert one(db, "SELECT count(*) FROM pg_class WHERE relowner = 'cogmem_owner'::regrole") == 0
    assert one(db, "SELECT count(*) FROM pg_auth_members WHERE member = 'cogmem_owner'::regrole") == 0
    for table in ("audit_log", "audit_chain", "bios_rule_events"):
        assert not one(db, "SELECT has_table_privilege('cogmem_owner', %s, 'UPDATE')", (f"cogmem.{table}",))


def definer_bodies(db) -> list[tuple[str, str, str, str, list, str]]:
    return db.execute(
        """SELECT p.proname, p.oid::regprocedure::text, pg_get_userbyid(p.proowner), p.provolatile,
                  coalesce(p.proargnames, '{}'), p.prosrc || coalesce(pg_get_function_sqlbody(p.oid), '')
           FROM pg_proc AS p WHERE p.pronamespace = 'cogmem'::regnamespace AND p.prosecdef ORDER BY 1"""
    ).fetchall()


def test_every_definer_pins_its_search_path_and_checks_reach_first(db):
    definers = definer_bodies(db)
    assert len(definers) >= 40
    for name, signature, owner, volatility, args, source in definers:
        body = re.sub(r"'(?:[^']|'')*'", "''", source)  # names in messages and hints are not calls
        assert owner == "cogmem_owner", signature
        config = one(
            db, "SELECT array_to_string(proconfig, ',') FROM pg_proc WHERE oid = %s::regprocedure", (signature,)
        )
        assert "search_path=pg_catalog" in (config or ""), signature
        assert not name.startswith("_"), f"{signature}: helpers run as their caller, the definer verb"
        if name in TENANT_FREE:
            assert volatility in "si" and not {"tenant"} & set(args), signature
            assert not re.search(r"\b(INSERT INTO|UPDATE cogmem|DELETE FROM)", body), signature
            continue
        reach = re.search(r"cogmem\._require_(tenant|admin|vault|gut)\(", body)
        assert reach, f"{signature} does not check the caller's reach"
        before = body[: reach.start()]
        touched = re.findall(r"(?:FROM|INTO|UPDATE|JOIN)\s+cogmem\.(\w+)|cogmem\.(\w+)\s*\(", before)
        allowed = {ID_KEYED.get(name, "")}
        assert [t or f for t, f in touched if (t or f) not in allowed] == [], f"{signature} acts before reach"


# -- scopes inside a tenant (sql/015-scopes.sql) -----------------------------------------------------------

SCOPE_AGENTS = ["support", "billing"]
SCOPE_PERSONS = [f"p{n:02d}" for n in range(50)]
# Said by every person in the same words, so that the same text, near-duplicates by meaning, siblings and
# contradictions meet across persons; and in words of their own (a marker only the person's texts hold).
# (text, ring, meaning): texts of one meaning share a vector.
SCOPE_SHARED_WORDS = [
    ("Please call me after six in the evening.", None, 1),
    ("Never call me after six in the evening.", "dos_and_donts", 1),
    ("I prefer e-mail over phone calls.", "habits", 2),
    ("I prefer e-mail to phone calls.", "habits", 2),
    ("My invoices go to the finance server at 10.0.0.5.", "long_term", 3),
    ("My invoices go to the finance server at 10.0.0.9.", "long_term", 3),
]
SCOPE_MEANING = {text: meaning for text, _, meaning in SCOPE_SHARED_WORDS}


def _scope_vector(text: str) -> str:
    """One vector per meaning, alike for every person; a person's own words get their own."""
    return str(unit_vector(SCOPE_MEANING.get(text, 100 + sum(map(ord, text)))))


def test_no_person_sees_merges_or_contradicts_another_under_random_calls(db, login):
    """2 agents x 50 persons in one tenant, a seeded storm of calls through every verb that takes a scope,
    as an application role granted the tenant: 0 items of another person injected, returned, merged,
    rehearsed, linked or contradicted."""
    rng = random.Random(35)
    tenant = "tn_scopes"
    db.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (one(app, "SELECT current_user"), tenant))
    db.execute("SELECT cogmem.remember(%s, 'Never share invoice PDFs over chat.', 'dos_and_donts')", (tenant,))
    owner: dict[int, str | None] = {}  # memory id -> its person, as the database says at each sight
    leaks: list[str] = []

    def person_of(memory_id: int | None) -> str | None:
        if memory_id is not None and memory_id not in owner:
            owner[memory_id] = one(db, "SELECT person FROM cogmem.memories WHERE memory_id = %s", (memory_id,))
        return owner.get(memory_id) if memory_id is not None else None

    def check(verb: str, person: str, ids) -> None:
        for memory_id in ids:
            if memory_id is not None and person_of(memory_id) not in (None, person):
                leaks.append(f"{verb} for {person}: memory {memory_id} of {person_of(memory_id)}")

    def remember(person: str, agent: str) -> None:
        text, ring, _ = rng.choice(
            [*SCOPE_SHARED_WORDS, (f"Customer zq{person} lives in {rng.choice('ABC')}.", None, 0)]
        )
        row = app.execute(
            "SELECT memory_id, conflicts_with FROM cogmem.remember(%s, %s, %s, embedding => %s::vector,"
            " person => %s, agent => %s)",
            (tenant, text, ring, _scope_vector(text), person, agent),
        ).fetchone()
        check("remember", person, [row[0], *(row[1] or [])])

    def remember_many(person: str, agent: str) -> None:
        texts = [t for t, _, _ in rng.sample(SCOPE_SHARED_WORDS, 2)] + [
            f"zq{person} asked about plan {rng.randint(1, 3)}."
        ]
        rows = app.execute(
            "SELECT memory_id, conflicts_with FROM cogmem.remember_many(%s, %s, %s::vector[], person => %s,"
            " agent => %s)",
            (tenant, json.dumps(texts), [_scope_vector(t) for t in texts], person, agent),
        ).fetchall()
        check("remember_many", person, [i for r in rows for i in (r[0], *(r[1] or []))])

    def observe(person: str, agent: str) -> None:
        row = app.execute(
            "SELECT memory_id FROM cogmem.observe(%s, %s, 'user', %s, person => %s, agent => %s)",
            (tenant, f"chat-{person}", f"I decided to move zq{person} to the yearly plan.", person, agent),
        ).fetchone()
        check("observe", person, [row[0]])

    def recall(person: str, agent: str) -> None:
        rows = app.execute(
            "SELECT memory_id, content FROM cogmem.recall(%s, %s, embedding => %s::vector, person => %s,"
            " agent => %s, budget => %s)",
            (
                tenant,
                "call e-mail invoices plan",
                _scope_vector(SCOPE_SHARED_WORDS[0][0]),
                person,
                agent,
                rng.choice([200, 800, 3200]),
            ),
        ).fetchall()
        check("recall", person, [r[0] for r in rows])
        leaks.extend(f"recall for {person} said {c!r}" for _, c in rows if c and "zq" in c and f"zq{person}" not in c)

    def related(person: str, agent: str) -> None:
        text = SCOPE_SHARED_WORDS[0][0]
        rows = app.execute(
            "SELECT memory_id FROM cogmem.related(%s, %s, %s::vector, 20, person => %s, agent => %s)",
            (tenant, text, _scope_vector(text), person, agent),
        ).fetchall()
        check("related", person, [r[0] for r in rows])

    def store(person: str, agent: str) -> None:
        row = app.execute(
            "SELECT memory_id FROM cogmem.store_put(%s, %s, 'profile', %s, %s, person => %s, agent => %s)",
            (
                tenant,
                ["people", person],
                json.dumps({"note": f"zq{person} likes tea"}),
                f"zq{person} likes tea",
                person,
                agent,
            ),
        ).fetchone()
        check("store_put", person, [row[0]])

    def session(person: str, agent: str) -> None:
        session_id = one(
            app, "SELECT cogmem.start_session(%s, 'care', person => %s, agent => %s)", (tenant, person, agent)
        )
        row = app.execute(
            "SELECT touched, remembered FROM cogmem.end_session(%s, %s, %s, facts => %s)",
            (tenant, session_id, f"Helped zq{person}.", [f"zq{person} renewed the contract."]),
        ).fetchone()
        check("end_session", person, [*row[0], *row[1]])
        text = one(app, "SELECT cogmem.briefing_text(%s, 'care', person => %s, agent => %s)", (tenant, person, agent))
        leaks.extend(f"briefing for {person}: {m}" for m in re.findall(r"zq(p\d\d)", text or "") if m != person)

    verbs = [remember, remember, remember_many, observe, recall, recall, related, store, session]
    for person in SCOPE_PERSONS:  # everyone says something first
        for agent in SCOPE_AGENTS:
            remember(person, agent)
    for _ in range(400):
        rng.choice(verbs)(rng.choice(SCOPE_PERSONS), rng.choice(SCOPE_AGENTS))
    db.execute("SELECT cogmem.consolidate(now() + interval '1 minute', %s)", (tenant,))
    for person in rng.sample(SCOPE_PERSONS, 10):
        recall(person, rng.choice(SCOPE_AGENTS))

    # What the night and the store linked: merges, siblings, contradictions, held conflicts.
    merged = db.execute(
        "SELECT memory_id, (detail ->> 'absorbed')::bigint FROM cogmem.audit_log"
        " WHERE tenant = %s AND event = 'merged'",
        (tenant,),
    ).fetchall()
    pairs = (
        merged
        + db.execute(
            "SELECT memory_id, sibling_id FROM cogmem.memory_siblings WHERE tenant = %s"
            " UNION ALL SELECT memory_id, contradicts_id FROM cogmem.memory_contradictions WHERE tenant = %s",
            (tenant, tenant),
        ).fetchall()
    )
    for a, b in pairs:
        if person_of(a) != person_of(b):
            leaks.append(f"memories {a} ({person_of(a)}) and {b} ({person_of(b)}) linked")
    for person, conflicts_with in db.execute(
        "SELECT person, conflicts_with FROM cogmem.conflicts WHERE tenant = %s", (tenant,)
    ):
        if person:
            check("conflict", person, conflicts_with)
    # The storm reached every scope, and the same words met across persons: the checks had work to do.
    scopes = one(db, "SELECT count(DISTINCT (person, agent)) FROM cogmem.memories WHERE tenant = %s", (tenant,))
    assert scopes == len(SCOPE_PERSONS) * len(SCOPE_AGENTS) + 1
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE tenant = %s AND content = %s",
               (tenant, SCOPE_SHARED_WORDS[2][0])) > 30  # fmt: skip
    assert pairs and one(db, "SELECT count(*) FROM cogmem.conflicts WHERE tenant = %s", (tenant,)) > 0
    assert leaks == []
