"""Catalog hygiene for everything in the cogmem schema."""

import re
from pathlib import Path

from cogmem_pg.migrate import sql_files

# Reference tables shared by all tenants (Citus: reference tables), and alembic's bookkeeping.
GLOBAL_TABLES = {
    "alembic_version",
    "gut_settings",
    "gut_releases",
    "gut_patterns",
    "gut_runs",
    "gut_shard_key",  # the same on every node of a cluster (cogmem_pg.shards.share_gut_key)
    "default_topics",
    "bios_rules",
    "bios_rule_events",
    "bios_preset_loads",
    "bios_subscriptions",
    "consolidation_runs",
    "audit_seal_state",
    "audit_settings",
    "audit_archives",
    "routing_model",  # the inbound router's weights (cogmem_pg/data/routing-model.json)
    "routing_terms",
    "routing_model_version",
    "experiments",  # what an experiment varies and its arms; its tenants are in experiment_tenants
}
# Procedures that COMMIT cannot carry a SET clause (PostgreSQL forbids it); they qualify every name instead.
COMMITTING_PROCEDURES = {
    "cogmem.consolidate_nightly(timestamp with time zone,text,integer,integer)",
    "cogmem.gut_nightly(boolean)",
}
# Pure expressions over pg_catalog functions, inlined into the queries that call them (a SET clause would
# stop the inlining); inlining also means the caller's search_path never reaches them.
INLINED_EXPRESSIONS = {
    "cogmem.strength(interval,interval)",
    "cogmem._shared_words(tsvector,text[])",
    "cogmem._tenant_key(text)",
    "cogmem._secret_hint()",
    "cogmem._secret_name_hint()",
    # Whether recall may place a newer memory before an older one (sql/070-recall.sql), per pair.
    "cogmem._placeable(cogmem.layer,real,cogmem.layer,real)",
    # Whether a turn may say it corrects another (sql/036-supersession.sql), before its marks are read.
    "cogmem._may_correct(text)",
    # The scope rule (sql/015-scopes.sql), inlined into recall's one pass and the stores' checks.
    "cogmem.in_scope(text,text,cogmem.ring,text,text,cogmem.tenants)",
    "cogmem._same_scope(text,text,text,text)",
    "cogmem._person(jsonb)",
    "cogmem._agent(jsonb)",
}


def test_every_function_pins_search_path_and_has_a_comment(db):
    rows = db.execute(
        """SELECT p.oid::regprocedure::text,
                  coalesce(array_to_string(p.proconfig, ','), '') LIKE '%search_path=%',
                  obj_description(p.oid, 'pg_proc') IS NOT NULL
           FROM pg_proc AS p WHERE p.pronamespace = 'cogmem'::regnamespace ORDER BY 1"""
    ).fetchall()
    assert len(rows) >= 25
    assert [r[0] for r in rows if not r[1] and r[0] not in COMMITTING_PROCEDURES | INLINED_EXPRESSIONS] == []
    assert [r[0] for r in rows if not r[2]] == []


def test_inlined_expressions_are_pure_sql_over_the_catalog(db):
    for signature in INLINED_EXPRESSIONS:
        language, volatility, body = db.execute(
            "SELECT l.lanname, p.provolatile, pg_get_functiondef(p.oid) FROM pg_proc AS p "
            "JOIN pg_language AS l ON l.oid = p.prolang WHERE p.oid = %s::regprocedure",
            (signature,),
        ).fetchone()
        assert (language, volatility) == ("sql", "i")
        assert "cogmem." not in body.split("RETURN", 1)[1] and "SELECT" not in body.split("RETURN", 1)[1]


def test_public_executes_nothing(db):
    rows = db.execute(
        """SELECT p.oid::regprocedure::text FROM pg_proc AS p
           WHERE p.pronamespace = 'cogmem'::regnamespace AND has_function_privilege('public', p.oid, 'EXECUTE')"""
    ).fetchall()
    assert rows == []


def test_every_table_and_view_has_a_comment(db):
    rows = db.execute(
        """SELECT c.relname FROM pg_class AS c
           WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relkind IN ('r', 'v', 'p') AND NOT c.relispartition
             AND c.relname <> 'alembic_version' AND obj_description(c.oid, 'pg_class') IS NULL"""
    ).fetchall()
    assert rows == []


def test_primary_keys_start_with_the_tenant(db):
    rows = db.execute(
        """SELECT c.relname, a.attname
           FROM pg_constraint AS k
           JOIN pg_class AS c ON c.oid = k.conrelid
           JOIN pg_attribute AS a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
           WHERE k.contype = 'p' AND c.relnamespace = 'cogmem'::regnamespace"""
    ).fetchall()
    tables = {
        r[0]
        for r in db.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = 'cogmem'::regnamespace AND relkind IN ('r', 'p')"
        )
    }
    assert {r[0] for r in rows} == tables  # every table has a primary key
    assert sorted(r[0] for r in rows if r[1] != "tenant" and r[0] not in GLOBAL_TABLES) == []


def test_every_tenant_table_has_row_level_security(db):
    rows = db.execute(
        """SELECT c.relname FROM pg_class AS c
           JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = 'tenant'
           WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
             AND NOT (c.relrowsecurity AND EXISTS (SELECT FROM pg_policy AS p WHERE p.polrelid = c.oid))"""
    ).fetchall()
    assert rows == []


def test_sql_files_are_layered(db):
    """A file calls only functions and reads only views of itself and the files before it, so that a
    reader can stop at any file and know everything above; every name called exists in the catalog."""
    files = sql_files()
    defined: dict[str, int] = {}
    for n, path in enumerate(files):
        for name in re.findall(r"CREATE OR REPLACE (?:FUNCTION|PROCEDURE|VIEW) cogmem\.(\w+)", path.read_text()):
            defined.setdefault(name, n)
    catalog = {r[0] for r in db.execute("SELECT proname FROM pg_proc WHERE pronamespace = 'cogmem'::regnamespace")}
    catalog |= {r[0] for r in db.execute("SELECT relname FROM pg_class WHERE relnamespace = 'cogmem'::regnamespace")}
    later, unknown = [], []
    for n, path in enumerate(files):
        text = re.sub(r"'(?:[^']|'')*'", "''", re.sub(r"--[^\n]*", "", path.read_text()))  # code, not prose
        text = re.sub(r"DROP (?:FUNCTION|PROCEDURE|VIEW) IF EXISTS [^;]*;", "", text)  # old names going away
        for name in set(re.findall(r"cogmem\.(\w+)\s*\(", text)) | set(
            re.findall(r"(?:FROM|JOIN)\s+cogmem\.(\w+)", text)
        ):
            if defined.get(name, -1) > n:
                later.append(f"{path.name} uses {name} of {files[defined[name]].name}")
            if name not in catalog:
                unknown.append(f"{path.name}: {name}")
    assert later == []
    assert unknown == []


def test_no_measurement_in_sql_comments():
    """Figures go stale with every run: they belong in bench/RESULTS.md and docs/scaling.md."""
    figure = re.compile(r"--.*\b\d+(?:\.\d+)?\s?(?:ms|µs|us|s a night|calls/s|/s)\b")
    found = [
        f"{p.name}: {line.strip()}" for p in sql_files() for line in p.read_text().splitlines() if figure.search(line)
    ]
    assert found == []


def test_statistics_rows_are_locked_by_one_helper():
    """Row locks on memory_stats are taken in one order, by cogmem._lock_stats, so that no two calls
    deadlock; recall's rehearsal UPDATE takes them in index order itself (sql/070-recall.sql)."""
    text = "\n".join(p.read_text() for p in sql_files())
    locks = re.findall(r"FROM cogmem\.memory_stats AS \w+[^;]*?FOR UPDATE", text, re.S)
    assert len(locks) == 1 and "p_memory_ids" in locks[0]


def test_a_long_function_says_why():
    """A function longer than about a screen (80 lines) has a comment right above it saying why."""
    unexplained = []
    for path in sql_files():
        text = path.read_text()
        for m in re.finditer(r"CREATE OR REPLACE (?:FUNCTION|PROCEDURE) cogmem\.(\w+)\(", text):
            length = text[m.start() : text.find("\nCOMMENT ON", m.start())].count("\n")
            above = text[: m.start()].rstrip("\n").splitlines()[-3:]
            if length > 90 and not any(line.startswith("--") and "screen" in line for line in above):
                unexplained.append(f"{path.name}: {m.group(1)} ({length} lines)")
    assert unexplained == []


# Aggregates for BI tools, which may not read the rows they count: they run with their owner's rights
# and filter by the reader's tenants themselves.
AGGREGATE_VIEWS = {"audit_daily", "memory_census"}
# The rows a large tenant's own indexes find, which row-level security would keep them from (sql/016):
# the reader's tenants only, read by cogmem_owner only, never written.
LOOKUP_VIEWS = {"_memory_lookup"}


def test_every_view_applies_the_readers_row_level_security(db):
    rows = db.execute(
        """SELECT c.relname, coalesce('security_invoker=true' = ANY (c.reloptions), false),
                  pg_get_viewdef(c.oid)
           FROM pg_class AS c WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relkind = 'v' ORDER BY 1"""
    ).fetchall()
    assert len(rows) >= 15
    assert [name for name, invoker, _ in rows if not invoker and name not in AGGREGATE_VIEWS | LOOKUP_VIEWS] == []
    for name in LOOKUP_VIEWS:
        definition = next(d for n, _, d in rows if n == name)
        assert "reachable_tenants()" in definition and "reaches_every_tenant()" in definition
        readers = db.execute(
            "SELECT grantee, privilege_type FROM information_schema.role_table_grants "
            "WHERE table_schema = 'cogmem' AND table_name = %s AND grantee <> current_user",
            (name,),
        ).fetchall()
        assert readers == [("cogmem_owner", "SELECT")]
    for name, invoker, definition in rows:
        if name in AGGREGATE_VIEWS:
            assert not invoker and "reachable_tenants()" in definition and "reaches_every_tenant()" in definition
            assert "GROUP BY" in definition, f"{name} is not an aggregate"


# The store's paging parameters (sql/180-store.sql) are the store's own change (issue 37).
def test_no_api_function_takes_a_narrower_integer_than_drivers_send(db):
    """Drivers send a number past 2^31 as bigint, which PostgreSQL will not narrow to integer when it
    picks a function: an integer parameter turns such a call into 42883 (function does not exist) instead
    of an answer. Functions an application role may call take bigint and check their range."""
    rows = db.execute(
        """SELECT p.oid::regprocedure::text FROM pg_proc AS p
           WHERE p.pronamespace = 'cogmem'::regnamespace
             AND p.proargtypes::oid[] && ARRAY['int2', 'int4', 'int2[]', 'int4[]']::regtype[]::oid[]
             AND EXISTS (SELECT FROM unnest(ARRAY['cogmem_app', 'cogmem_admin', 'cogmem_auditor', 'cogmem_gut']) AS r
                         WHERE has_function_privilege(r, p.oid, 'EXECUTE'))"""
    ).fetchall()
    assert {r[0] for r in rows} == set()


def test_every_sql_file_has_its_namesake_test():
    """A newcomer finds any behaviour in one sql/ file and its tests/test_<feature>.py."""
    tests = Path(__file__).parent
    missing = []
    for path in sql_files():
        test = tests / ("test_" + path.stem.split("-", 1)[1].replace("-", "_") + ".py")
        if not test.exists() or path.name not in test.read_text().split("\n", 1)[0]:  # its docstring names it
            missing.append(f"{path.name}: {test.name}")
    assert missing == []
