"""sql/185-app-verbs.sql: get, list, update, delete and history of single memories, as an application login
(Mem0's get, get_all, update, delete, history), within its tenant and scope; and the same through the Python
client, the CLI (`cogmem memory ...`) and MCP.
"""

from __future__ import annotations

import json
import threading
import time

import psycopg
import pytest

from cogmem_pg import errors
from cogmem_pg.client import Client
from cogmem_pg.mcp_server import build_server
from cogmem_pg.types import HistoryEntry, MemoryUpdate, StoredMemory
from tests.cli_helpers import invoke, run
from tests.conftest import one
from tests.test_mcp import talk

SCOPED = {
    # name: (content, ring, person, agent)
    "office": ("The office closes at 18:00 on Fridays.", "long_term", None, None),
    "ayla_calls": ("Ayla prefers calls after 18:00.", "habits", "ayla", None),
    "ayla_weekends": ("Ayla asked us never to call her on weekends.", "dos_and_donts", "ayla", "support"),
    "ben": ("Ben prefers e-mail to calls.", "habits", "ben", None),
    "refunds": ("Refunds over 500 EUR need a second approver.", "procedures", None, "billing"),
}
NOT_FOUND_HINT = (
    "Pass the person and agent it was remembered for; cogmem.list_memories(tenant, person => ..., agent => ...) "
    "lists what a scope sees."
)
MISSING = 10**12
CALLS = {
    "get": "SELECT * FROM cogmem.get_memory(%(tenant)s, %(id)s, person => %(person)s)",
    "update": "SELECT * FROM cogmem.update_memory(%(tenant)s, %(id)s, 'Prefers calls now.', person => %(person)s)",
    "delete": "SELECT cogmem.delete_memory(%(tenant)s, %(id)s, person => %(person)s)",
    "history": "SELECT * FROM cogmem.memory_history(%(tenant)s, %(id)s, person => %(person)s)",
}


@pytest.fixture
def scoped(db, tenant) -> dict[str, int]:
    return {
        name: one(
            db,
            "SELECT memory_id FROM cogmem.remember(%s, %s, %s, person => %s, agent => %s)",
            (tenant, content, ring, person, agent),
        )
        for name, (content, ring, person, agent) in SCOPED.items()
    }


def _login(login, db, tenant: str, person: str | None = None) -> psycopg.Connection:
    """An application login granted TENANT (narrowed to PERSON when given), embedding off (full text)."""
    conn = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, %s, person => %s)", (conn.info.user, tenant, person))
    conn.execute("SET cogmem.embed = 'off'")
    return conn


@pytest.fixture
def app(db, tenant, scoped, login) -> psycopg.Connection:
    """An application's login, granted the whole tenant: it passes the person each call is for."""
    return _login(login, db, tenant)


@pytest.fixture
def ayla_login(db, tenant, scoped, login) -> psycopg.Connection:
    """A login narrowed to the person ayla (cogmem.grant_tenant(..., person => 'ayla'))."""
    return _login(login, db, tenant, "ayla")


def refused(conn: psycopg.Connection, query: str, params, error: type[psycopg.Error]) -> tuple[str, str | None]:
    """The message and HINT of the error QUERY must raise."""
    with pytest.raises(error) as caught:
        conn.execute(query, params)
    return caught.value.diag.message_primary or "", caught.value.diag.message_hint


def contents(conn: psycopg.Connection, query: str, params) -> list[str]:
    return [r[0] for r in conn.execute(query, params)]


def recalled(conn: psycopg.Connection, tenant: str, person: str | None) -> list[str]:
    return contents(
        conn,
        "SELECT content FROM cogmem.recall(%s, 'calls office weekends e-mail refunds', person => %s)"
        " WHERE memory_id IS NOT NULL",
        (tenant, person),
    )


def listed(conn: psycopg.Connection, tenant: str, **args) -> list[int]:
    named = "".join(f", {name} => %({name})s" for name in args)
    return [r[0] for r in conn.execute(f"SELECT memory_id FROM cogmem.list_memories(%(tenant)s{named})",
                                       {"tenant": tenant, **args})]  # fmt: skip


def test_an_application_gets_a_memory_of_its_scope(db, app, tenant, scoped):
    row = app.execute(
        "SELECT memory_id, ring, content, topics, person, agent, source, superseded_by, valid_until, candidate,"
        " confidence, recall_count FROM cogmem.get_memory(%s, %s, person => 'ayla')",
        (tenant, scoped["ayla_calls"]),
    ).fetchone()
    topics = one(db, "SELECT topics FROM cogmem.memories WHERE memory_id = %s", (scoped["ayla_calls"],))
    assert row == (
        scoped["ayla_calls"], "habits", "Ayla prefers calls after 18:00.", topics, "ayla", None, {"person": "ayla"},
        None, None, None, 0.5, 0,
    )  # fmt: skip
    strength = one(app, "SELECT strength FROM cogmem.get_memory(%s, %s)", (tenant, scoped["office"]))
    assert 0.99 < strength <= 1
    # What the tenant shares is any scope's; an agent's is that agent's; a person's, that person's.
    seen = [("office", "ayla", None), ("refunds", None, "billing"), ("ayla_weekends", "ayla", None)]
    for name, person, agent in seen:
        got = one(app, "SELECT content FROM cogmem.get_memory(%s, %s, %s, %s)", (tenant, scoped[name], person, agent))
        assert got == SCOPED[name][0]


@pytest.mark.parametrize("verb", CALLS)
def test_another_persons_memory_is_as_unknown_as_a_missing_one(db, app, tenant, scoped, verb):
    for memory_id, person in [(scoped["ben"], "ayla"), (scoped["ben"], None), (scoped["refunds"], "ayla"),
                              (MISSING, "ayla")]:  # fmt: skip
        params = {"tenant": tenant, "id": memory_id, "person": person}
        message, hint = refused(app, CALLS[verb], params, psycopg.errors.NoDataFound)
        assert (message, hint) == (f'no memory {memory_id} in tenant "acme"', NOT_FOUND_HINT)
    ben = db.execute(
        "SELECT content, superseded_by, (SELECT array_agg(event) FROM cogmem.audit_log WHERE memory_id = m.memory_id)"
        " FROM cogmem.memories AS m WHERE memory_id = %s",
        (scoped["ben"],),
    ).fetchone()
    assert ben == ("Ben prefers e-mail to calls.", None, ["created"])
    assert one(db, "SELECT count(*) FROM cogmem.memories") == len(SCOPED)


def test_another_tenants_memory_is_as_unknown_as_a_missing_one(db, login):
    for name in ("alpha", "beta"):
        db.execute("SELECT cogmem.create_tenant(%s)", (name,))
    app = _login(login, db, "alpha")
    db.execute("SELECT cogmem.grant_tenant(%s, 'beta')", (app.info.user,))  # the login reaches both
    betas = one(db, "SELECT memory_id FROM cogmem.remember('beta', 'The beta office closes at noon.')")
    for verb, query in CALLS.items():
        message, hint = refused(
            app, query, {"tenant": "alpha", "id": betas, "person": None}, psycopg.errors.NoDataFound
        )
        assert (message, hint) == (f'no memory {betas} in tenant "alpha"', NOT_FOUND_HINT), verb
    db.execute("SELECT cogmem.create_tenant('gamma')")  # not granted: as unknown as one that does not exist
    message, hint = refused(app, CALLS["get"], {"tenant": "gamma", "id": betas, "person": None},
                            psycopg.errors.UndefinedObject)  # fmt: skip
    assert (message, hint) == ('unknown tenant "gamma"', "Create it first: SELECT cogmem.create_tenant('gamma');")
    assert listed(app, "alpha") == [] and listed(app, "beta") == [betas]
    assert one(db, "SELECT valid_until IS NULL FROM cogmem.memories WHERE memory_id = %s", (betas,))


def test_a_login_narrowed_to_a_person_reaches_only_theirs(db, tenant, scoped, ayla_login):
    ayla = {"tenant": tenant, "id": scoped["ayla_calls"], "person": "ayla"}
    assert one(ayla_login, CALLS["get"].replace("*", "content"), ayla) == "Ayla prefers calls after 18:00."
    message, hint = refused(ayla_login, CALLS["get"], {**ayla, "id": scoped["ben"]}, psycopg.errors.NoDataFound)
    assert (message, hint) == (f'no memory {scoped["ben"]} in tenant "acme"', NOT_FOUND_HINT)
    for person in ("ben", None):  # its grant names the person it may act for
        message, hint = refused(ayla_login, CALLS["get"], {**ayla, "person": person},
                                psycopg.errors.InsufficientPrivilege)  # fmt: skip
        user = ayla_login.info.user
        assert message == f"permission denied: {user} reaches tenant \"acme\" only for the person 'ayla'"
    expected = [scoped["ayla_weekends"], scoped["ayla_calls"], scoped["office"]]
    assert listed(ayla_login, tenant, person="ayla") == expected
    # What every person shares is read, not changed, by a login of one person.
    message, hint = refused(ayla_login, CALLS["delete"], {**ayla, "id": scoped["office"]},
                            psycopg.errors.InsufficientPrivilege)  # fmt: skip
    assert message == (
        f'memory {scoped["office"]} of tenant "acme" is the tenant\'s: a call for person "ayla" may read it but not '
        "change it"
    )
    updated = ayla_login.execute(
        "SELECT memory_id, previous_id, action FROM cogmem.update_memory(%s, %s, 'Ayla prefers calls after 19:00.',"
        " person => 'ayla')",
        (tenant, scoped["ayla_calls"]),
    ).fetchone()
    assert updated[1:] == (scoped["ayla_calls"], "created")
    # Its history: the versions; the audit trail is not a narrowed grant's to read (sql/015-scopes.sql).
    history = ayla_login.execute(CALLS["history"], ayla).fetchall()
    assert [(h[0], h[1], h[3]) for h in history] == [
        ("version", scoped["ayla_calls"], "superseded"), ("version", updated[0], "current")
    ]  # fmt: skip
    assert one(ayla_login, CALLS["delete"], {**ayla, "id": updated[0]}) is True
    assert one(db, "SELECT actor FROM cogmem.audit_log WHERE event = 'erased'") == ayla_login.info.user


def test_list_pages_newest_first_within_the_scope_and_filters(db, app, tenant, scoped):
    ids = scoped
    aylas = [ids["ayla_weekends"], ids["ayla_calls"], ids["office"]]
    assert listed(app, tenant, person="ayla") == aylas
    assert listed(app, tenant) == [ids["office"]]  # no person: what the tenant shares
    assert listed(app, tenant, agent="billing") == [ids["refunds"], ids["office"]]
    assert listed(app, tenant, person="ayla", agent="support") == aylas
    # Keyset pages: after_id is the last id of the page before.
    first = listed(app, tenant, person="ayla", page_size=2)
    second = listed(app, tenant, person="ayla", page_size=2, after_id=first[-1])
    assert first + second == aylas and listed(app, tenant, person="ayla", page_size=2, after_id=second[-1]) == []
    assert listed(app, tenant, person="ayla", ring="habits") == [ids["ayla_calls"]]
    assert listed(app, tenant, person="ayla", ring="rule") == [ids["ayla_weekends"]]  # a kind names its ring
    assert listed(app, tenant, person="ayla", shared=False) == aylas[:2]  # the person's own
    assert listed(app, tenant, agent="billing", shared=False) == [ids["refunds"], ids["office"]]
    month_ago = "UPDATE cogmem.memories SET created_at = now() - interval '30 days' WHERE memory_id = %s"
    db.execute(month_ago, (ids["office"],))
    day_ago = one(db, "SELECT now() - interval '1 day'")
    assert listed(app, tenant, person="ayla", since=day_ago) == aylas[:2]
    assert listed(app, tenant, person="ayla", until=day_ago) == [ids["office"]]
    new = one(app, "SELECT memory_id FROM cogmem.update_memory(%s, %s, 'Ayla prefers calls after 19:00.',"
                   " person => 'ayla')", (tenant, ids["ayla_calls"]))  # fmt: skip
    assert listed(app, tenant, person="ayla", since=day_ago) == [new, ids["ayla_weekends"]]
    assert listed(app, tenant, person="ayla", since=day_ago, superseded=True) == [new, *aylas[:2]]
    # A page as large as a driver's bigint can say is refused with the range, not "function does not exist".
    message, hint = refused(app, "SELECT * FROM cogmem.list_memories(%s, page_size => %s)", (tenant, 2**40),
                            psycopg.errors.InvalidParameterValue)  # fmt: skip
    assert (message, hint) == (
        "page_size must be 1 to 1000, got 1099511627776",
        "Ask for at most 1000 memories a call; pass the last memory_id as after_id for the next page.",
    )


def test_update_is_a_new_version_that_supersedes_the_old(db, app, tenant, scoped):
    old = scoped["ayla_calls"]
    assert "Ayla prefers calls after 18:00." in recalled(app, tenant, "ayla")
    row = app.execute(
        "SELECT * FROM cogmem.update_memory(%s, %s, 'Ayla prefers calls after 19:00.', person => 'ayla')",
        (tenant, old),
    ).fetchone()
    new = row[1]
    topics = one(db, "SELECT topics FROM cogmem.memories WHERE memory_id = %s", (new,))
    assert row == (old, new, "habits", topics, "created", [], None, None, None, None, None) and new > old
    shown = recalled(app, tenant, "ayla")
    assert "Ayla prefers calls after 19:00." in shown and "Ayla prefers calls after 18:00." not in shown
    got = app.execute(
        "SELECT superseded_by, valid_until, person FROM cogmem.get_memory(%s, %s, person => 'ayla')", (tenant, old)
    ).fetchone()
    created = one(db, "SELECT created_at FROM cogmem.memories WHERE memory_id = %s", (new,))
    assert got == (new, created, "ayla")
    history = app.execute(
        "SELECT kind, memory_id, event, content, superseded_by, valid_until, actor, detail ->> 'how'"
        " FROM cogmem.memory_history(%s, %s, person => 'ayla')",
        (tenant, new),
    ).fetchall()
    assert history == [
        ("version", old, "superseded", "Ayla prefers calls after 18:00.", new, created, None, None),
        ("version", new, "current", "Ayla prefers calls after 19:00.", None, None, None, None),
        ("event", old, "created", None, None, None, "postgres", None),
        ("event", new, "created", None, None, None, app.info.user, None),
        ("event", old, "superseded", None, None, None, app.info.user, "caller"),
    ]
    # The old version is history: an update names the current one.
    message, hint = refused(app, CALLS["update"], {"tenant": tenant, "id": old, "person": "ayla"},
                            psycopg.errors.ObjectNotInPrerequisiteState)  # fmt: skip
    assert (message, hint) == (
        f'memory {old} of tenant "acme" was superseded by memory {new}',
        f"Update the current version, memory {new}; cogmem.memory_history(tenant, memory_id) shows the versions.",
    )
    # The same text again changes nothing.
    same = app.execute(
        "SELECT memory_id, previous_id, action FROM cogmem.update_memory(%s, %s, 'Ayla prefers calls after 19:00!',"
        " person => 'ayla')",
        (tenant, new),
    ).fetchone()
    assert same == (new, new, "duplicate")
    assert one(db, "SELECT valid_until FROM cogmem.memories WHERE memory_id = %s", (new,)) is None


def test_an_update_to_what_another_memory_says_lets_that_one_supersede_it(db, app, tenant, scoped):
    said = one(db, "SELECT memory_id FROM cogmem.remember(%s, 'Ayla wants a text before any call.', 'habits',"
                   " person => 'ayla')", (tenant,))  # fmt: skip
    row = app.execute(
        "SELECT memory_id, previous_id, action FROM cogmem.update_memory(%s, %s, %s, person => 'ayla')",
        (tenant, scoped["ayla_calls"], "Ayla wants a text before any call!"),
    ).fetchone()
    assert row == (said, scoped["ayla_calls"], "duplicate")
    assert db.execute(
        "SELECT superseded_by, valid_until IS NOT NULL FROM cogmem.memories WHERE memory_id = %s",
        (scoped["ayla_calls"],),
    ).fetchone() == (said, True)
    assert one(db, "SELECT count(*) FROM cogmem.memories") == len(SCOPED) + 1


def test_a_call_changes_only_its_scopes_own(db, app, tenant, scoped):
    db.execute('SELECT cogmem.configure_tenant(%s, \'{"scope_shared_agents": ["billing"]}\')', (tenant,))
    office = {"tenant": tenant, "id": scoped["office"], "person": "ayla"}
    for verb in ("update", "delete"):
        message, hint = refused(app, CALLS[verb], office, psycopg.errors.InsufficientPrivilege)
        assert message == (
            f'memory {scoped["office"]} of tenant "acme" is the tenant\'s: a call for person "ayla" may read it but '
            "not change it"
        )
        assert hint == (
            "Change it with the person and agent it was remembered for (what the tenant shares: with no person), or "
            "remember the person's own version."
        )
    # Another agent's memory that every agent may recall is read, not changed, by another agent.
    assert listed(app, tenant, agent="support") == [scoped["refunds"], scoped["office"]]
    message, _ = refused(app, "SELECT cogmem.delete_memory(%s, %s, agent => 'support')", (tenant, scoped["refunds"]),
                         psycopg.errors.InsufficientPrivilege)  # fmt: skip
    assert message == (
        f'memory {scoped["refunds"]} of tenant "acme" is the tenant\'s, heard by agent "billing": a call for agent '
        '"support" may read it but not change it'
    )
    assert listed(app, tenant, agent="support", shared=False) == [scoped["office"]]
    # A call for the whole tenant (no person) changes what the tenant shares; a person's call, the person's own,
    # whichever agent heard it.
    assert one(app, "SELECT action FROM cogmem.update_memory(%s, %s, 'The office closes at 17:00 on Fridays.')",
               (tenant, scoped["office"])) == "created"  # fmt: skip
    assert one(app, "SELECT cogmem.delete_memory(%s, %s, person => 'ayla')", (tenant, scoped["ayla_weekends"]))


def test_delete_is_an_audited_erasure_the_application_may_ask_for(db, app, tenant, scoped):
    # cogmem.erase is the administrators' (any memory of a tenant); delete_memory the application's, in scope.
    assert one(app, "SELECT has_function_privilege('cogmem.erase(text, bigint, text)', 'EXECUTE')") is False
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for function erase"):
        app.execute("SELECT cogmem.erase(%s, %s)", (tenant, scoped["ayla_calls"]))
    assert "Ayla prefers calls after 18:00." in recalled(app, tenant, "ayla")
    assert one(app, "SELECT cogmem.delete_memory(%s, %s, person => 'ayla', reason => 'she asked')",
               (tenant, scoped["ayla_calls"])) is True  # fmt: skip
    assert "Ayla prefers calls after 18:00." not in recalled(app, tenant, "ayla")
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE memory_id = %s", (scoped["ayla_calls"],)) == 0
    erased = db.execute(
        "SELECT actor, detail FROM cogmem.audit_log WHERE event = 'erased' AND memory_id = %s", (scoped["ayla_calls"],)
    ).fetchall()
    assert erased == [(app.info.user, {"reason": "she asked"})]
    for verb in ("get", "delete", "history"):  # gone: as unknown as it never was
        message, _ = refused(app, CALLS[verb], {"tenant": tenant, "id": scoped["ayla_calls"], "person": "ayla"},
                             psycopg.errors.NoDataFound)  # fmt: skip
        assert message == f'no memory {scoped["ayla_calls"]} in tenant "acme"'
    # A version erased after it replaced another stays in the older one's history as its tombstone.
    old = scoped["ayla_weekends"]
    new = one(app, "SELECT memory_id FROM cogmem.update_memory(%s, %s, 'Ayla asked us never to call her on Sundays.',"
                   " person => 'ayla')", (tenant, old))  # fmt: skip
    assert one(app, "SELECT cogmem.delete_memory(%s, %s, person => 'ayla')", (tenant, new))
    history = app.execute(
        "SELECT kind, memory_id, event, detail ->> 'reason' FROM cogmem.memory_history(%s, %s, person => 'ayla')",
        (tenant, old),
    ).fetchall()
    assert history == [
        ("version", old, "superseded", None),
        ("event", old, "created", None),
        ("event", new, "created", None),
        ("event", old, "superseded", None),
        ("event", new, "erased", "delete_memory"),
    ]
    assert SCOPED["ayla_weekends"][0] not in recalled(app, tenant, "ayla")  # the replaced fact stays replaced


@pytest.mark.parametrize(
    ("query", "params", "error", "message", "hint"),
    [
        ("SELECT * FROM cogmem.get_memory(%s, NULL)", ("acme",), psycopg.errors.NullValueNotAllowed,
         "memory_id must not be NULL", "Pass the id remember returned; cogmem.list_memories(tenant) lists them."),
        ("SELECT * FROM cogmem.get_memory(NULL, 1)", (), psycopg.errors.NullValueNotAllowed,
         "tenant must not be NULL", "Pass the tenant name, e.g. 'acme'."),
        ("SELECT * FROM cogmem.memory_history('nope', 1)", (), psycopg.errors.UndefinedObject,
         'unknown tenant "nope"', "Create it first: SELECT cogmem.create_tenant('nope');"),
        ("SELECT * FROM cogmem.list_memories(%s, page_size => 0)", ("acme",), psycopg.errors.InvalidParameterValue,
         "page_size must be 1 to 1000, got 0",
         "Ask for at most 1000 memories a call; pass the last memory_id as after_id for the next page."),
        ("SELECT * FROM cogmem.list_memories(%s, page_size => NULL)", ("acme",),
         psycopg.errors.InvalidParameterValue, "page_size must be 1 to 1000, got NULL",
         "Ask for at most 1000 memories a call; pass the last memory_id as after_id for the next page."),
        ("SELECT * FROM cogmem.list_memories(%s, 'nope')", ("acme",), psycopg.errors.InvalidParameterValue,
         'unknown ring "nope"',
         "Use one of: shocks, dos_and_donts, long_term, habits, procedures, fresh; a kind: rule, preference, "
         "incident, procedure, habit, fact, chat; or NULL for every ring."),
        ("SELECT * FROM cogmem.list_memories(%s, since => '2026-01-02 00:00+00', until => '2026-01-01 00:00+00')",
         ("acme",), psycopg.errors.InvalidParameterValue,
         "since (2026-01-02 00:00:00+00) is after until (2026-01-01 00:00:00+00)",
         "since is the first moment listed, until the first one left out."),
        ("SELECT * FROM cogmem.list_memories(%s, person => ' ')", ("acme",), psycopg.errors.InvalidParameterValue,
         "the scope has a person that is not a name of 1 to 200 characters without control or invisible characters",
         "Name a person or an agent, e.g. 'cust-42', 'billing'."),
        ("SELECT * FROM cogmem.update_memory(%s, 1, ' ')", ("acme",), psycopg.errors.InvalidParameterValue,
         "content must not be empty", "Pass the text to remember."),
        ("SELECT * FROM cogmem.update_memory(%s, 1, 'Closes at 17:00.', 'nope')", ("acme",),
         psycopg.errors.InvalidParameterValue, 'unknown ring "nope"',
         "Use one of: shocks, dos_and_donts, long_term, habits, procedures, fresh; a kind: rule, preference, "
         "incident, procedure, habit, fact, chat; or NULL to route automatically."),
        ("SELECT cogmem.delete_memory(%s, NULL)", ("acme",), psycopg.errors.NullValueNotAllowed,
         "memory_id must not be NULL", "Pass the id remember returned; cogmem.list_memories(tenant) lists them."),
    ],
)  # fmt: skip
def test_bad_input_is_refused_with_its_sqlstate_message_and_hint(app, query, params, error, message, hint):
    assert refused(app, query, params, error) == (message, hint)


def test_two_updates_of_one_memory_make_one_version(db, tenant, scoped, login):
    first, second = _login(login, db, tenant), _login(login, db, tenant)
    update = "SELECT memory_id FROM cogmem.update_memory(%s, %s, %s, person => 'ayla')"
    outcome: dict[str, object] = {}

    def race() -> None:
        try:
            outcome["second"] = one(second, update, (tenant, scoped["ayla_calls"], "Ayla prefers calls after 20:00."))
        except psycopg.Error as exc:
            outcome["second"] = exc

    with first.transaction():
        new = one(first, update, (tenant, scoped["ayla_calls"], "Ayla prefers calls after 19:00."))
        thread = threading.Thread(target=race)
        thread.start()
        deadline = time.monotonic() + 30
        while not one(db, "SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND wait_event_type = 'Lock'",
                      (second.info.user,)):  # fmt: skip
            assert time.monotonic() < deadline
            time.sleep(0.05)
    thread.join(30)
    assert isinstance(outcome["second"], psycopg.errors.ObjectNotInPrerequisiteState)
    assert str(outcome["second"].diag.message_primary).endswith(f"was superseded by memory {new}")  # type: ignore[union-attr]
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE content LIKE 'Ayla prefers calls after%%'") == 2


@pytest.fixture
def app_dsn(dsn, db, tenant, scoped, login) -> str:
    role = _login(login, db, tenant).info.user
    return dsn.replace("user=postgres", f"user={role}") + " options='-c cogmem.embed=off'"


def test_the_client_maps_each_verb_to_a_dataclass(app_dsn, tenant, scoped):
    with Client(app_dsn, embedder=False) as client:
        got = client.get_memory(tenant, scoped["ayla_calls"], person="ayla")
        assert isinstance(got, StoredMemory) and got.content == "Ayla prefers calls after 18:00."
        assert got.person == "ayla" and got.superseded_by is None and got.recall_count == 0
        page = client.list_memories(tenant, person="ayla", page_size=2)
        assert [m.memory_id for m in page] == [scoped["ayla_weekends"], scoped["ayla_calls"]]
        rest = client.list_memories(tenant, person="ayla", page_size=2, after_id=page[-1].memory_id)
        assert [m.memory_id for m in rest] == [scoped["office"]]
        done = client.update_memory(tenant, scoped["ayla_calls"], "Ayla prefers calls after 19:00.", person="ayla")
        assert isinstance(done, MemoryUpdate) and (done.previous_id, done.action) == (scoped["ayla_calls"], "created")
        history = client.memory_history(tenant, done.memory_id, person="ayla")  # type: ignore[arg-type]
        assert all(isinstance(h, HistoryEntry) for h in history)
        assert [(h.kind, h.event) for h in history][:2] == [("version", "superseded"), ("version", "current")]
        assert client.delete_memory(tenant, done.memory_id, "she asked", person="ayla") is True  # type: ignore[arg-type]
        with pytest.raises(errors.NotFound) as missing:
            client.get_memory(tenant, scoped["ben"], person="ayla")
        assert missing.value.hint == NOT_FOUND_HINT
        with pytest.raises(errors.PermissionDenied):
            client.delete_memory(tenant, scoped["office"], person="ayla")
        with pytest.raises(errors.NotReady):
            client.update_memory(tenant, scoped["ayla_calls"], "Ayla prefers calls after 20:00.", person="ayla")


def test_the_command_line(app_dsn, tenant, scoped):
    listed_lines = run("--dsn", app_dsn, "memory", "list", tenant, "--person", "ayla").splitlines()
    assert [int(line.split()[0]) for line in listed_lines] == [scoped["ayla_weekends"], scoped["ayla_calls"],
                                                               scoped["office"]]  # fmt: skip
    assert listed_lines[1].endswith("[habits] (ayla)  Ayla prefers calls after 18:00.")
    own = run("--dsn", app_dsn, "memory", "list", tenant, "--person", "ayla", "--own", "--page-size", "1", "--json")
    assert [json.loads(x)["memory_id"] for x in own.splitlines()] == [scoped["ayla_weekends"]]
    got = json.loads(run("--dsn", app_dsn, "memory", "get", tenant, str(scoped["ayla_calls"]), "--person", "ayla",
                         "--json"))  # fmt: skip
    assert got["content"] == "Ayla prefers calls after 18:00." and got["ring"] == "habits"
    out = run(
        "--dsn", app_dsn, "memory", "update", tenant, str(scoped["ayla_calls"]), "Ayla prefers calls after 19:00.",
        "--person", "ayla",
    )  # fmt: skip
    new = int(out.split()[1])
    assert out == f"memory {new} supersedes memory {scoped['ayla_calls']} (created, in habits)\n"
    history = run("--dsn", app_dsn, "memory", "history", tenant, str(new), "--person", "ayla").splitlines()
    assert "version" in history[0] and history[0].endswith("Ayla prefers calls after 18:00.")
    assert any(" event " in line and " superseded " in line for line in history)
    assert run("--dsn", app_dsn, "memory", "delete", tenant, str(new), "--person", "ayla") == f"memory {new} erased\n"
    result = invoke("--dsn", app_dsn, "memory", "get", tenant, str(scoped["ben"]), "--person", "ayla")
    assert result.exit_code == 1
    assert f'no memory {scoped["ben"]} in tenant "acme" (P0002)\nHINT: {NOT_FOUND_HINT}' in result.output


def test_the_mcp_tools_of_an_application(app_dsn, db, tenant, scoped):
    with Client(app_dsn, embedder=False) as client:
        server = build_server(client, tenant)

        async def calls(mcp):
            names = {t.name for t in (await mcp.list_tools()).tools}
            update = await mcp.call_tool(
                "update_memory",
                {"memory_id": scoped["ayla_calls"], "content": "Ayla prefers calls after 19:00.", "person": "ayla"},
            )
            new = update.structured_content["memory_id"]
            return (
                names,
                update,
                await mcp.call_tool("memory_history", {"memory_id": new, "person": "ayla"}),
                await mcp.call_tool("list_memories", {"person": "ayla", "page_size": 2}),
                await mcp.call_tool("get_memory", {"memory_id": scoped["ben"], "person": "ayla"}),
                await mcp.call_tool("delete_memory", {"memory_id": scoped["ben"], "person": "ayla"}),
                await mcp.call_tool("delete_memory", {"memory_id": new, "person": "ayla", "reason": "she asked"}),
            )

        names, update, history, page, other, other_deleted, deleted = talk(server, calls)
    assert {"get_memory", "list_memories", "update_memory", "delete_memory", "memory_history"} <= names
    assert "forget" not in names  # the administrators' erasure of any memory is not an application's
    new = update.structured_content["memory_id"]
    assert update.structured_content["previous_id"] == scoped["ayla_calls"]
    entries = history.structured_content["result"]
    assert [(e["kind"], e["memory_id"], e["event"]) for e in entries][:2] == [
        ("version", scoped["ayla_calls"], "superseded"), ("version", new, "current")
    ]  # fmt: skip
    assert [m["memory_id"] for m in page.structured_content["result"]] == [new, scoped["ayla_weekends"]]
    for refused_call in (other, other_deleted):
        assert refused_call.is_error
        assert refused_call.content[0].text.endswith(
            f'no memory {scoped["ben"]} in tenant "acme" (P0002) HINT: {NOT_FOUND_HINT}'
        )
    assert deleted.structured_content == {"deleted": True}
    assert one(db, "SELECT detail ->> 'reason' FROM cogmem.audit_log WHERE event = 'erased'") == "she asked"
