"""The router: a database whose ``cogmem`` functions have the names, parameters and results of the
shards' API; each is a PL/Proxy function that runs where the tenant lives. They are generated here from
a shard's own catalog, so the router follows the API.

Where a call goes:
- a function with a ``tenant`` parameter that has no default runs on the tenant's partition:
  ``cogmem_router.partition_of(tenant)``, the tenant's hash unless a move placed it elsewhere;
- a function that reads or writes no tenant's rows (classify, redact, polarity...) runs on any partition.
- a call keyed by a recall's or a session's id runs where the id's first 32 bits (its tenant's hash,
  cogmem._keyed_uuid) say.
- a call that names no tenant but applies to all (loading a BIOS preset, subscriptions, verify_audit,
  consolidate, seal_audit, apply_rehearsals) runs on every shard, once per node; with a tenant, on
  its shard.
- the Gut's release gathers every shard's contributions, draws once, and writes the release on every
  shard; exports and releases are signed with a key the nodes share (share_gut_key), so a shard takes
  nothing the cluster did not draw.
- a single BIOS rule: a global one is added and retired on every shard (its id is the same on each), a
  tenant's own on the tenant's shard (its id carries the tenant's key, cogmem._keyed_bios_id).
What the router does not route keeps its signature and answers feature_not_supported with a HINT.

Against real servers, ``router_sql`` takes the partitions' connection strings (PL/Proxy's SQL/MED
cluster); ``install_router`` runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

ROUTER_DATABASE = "cogmem_router"
SERVER = "cogmem_shards"

# Functions that only say who calls and what it reaches: they answer on the shard, for the shard.
ROUTER_OWN = frozenset(
    {"caller", "caller_roles", "reachable_tenants", "reaches_every_tenant", "narrowed_reach", "may_use_vault"}
)

# A rule for reads of a shard's own tables (the scope rule takes a tenants row): there is nothing to route.
SHARD_ONLY = frozenset({"in_scope"})

# Calls that touch no tenant's rows: any partition answers them alike.
STATELESS = frozenset({"classify", "route", "redact", "polarity", "contradicts", "attention", "embed",
                       "embedding_dimensions", "server_can_embed", "strength", "gut_deidentify",
                       "chunk_text"})  # fmt: skip

# What the router itself answers: who calls, and where a tenant lives.
_ROUTER_SCHEMA = r"""
CREATE EXTENSION IF NOT EXISTS plproxy;
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS cogmem;
CREATE SCHEMA IF NOT EXISTS cogmem_router;
-- Tenants a move placed off their hash, by the hash (every tenant of one hash moves together).
CREATE TABLE IF NOT EXISTS cogmem_router.placements (
    tenant_hash integer PRIMARY KEY CHECK (tenant_hash >= 0),
    partition   integer NOT NULL CHECK (partition >= 0),
    moved_at    timestamptz NOT NULL DEFAULT now()
);
CREATE OR REPLACE FUNCTION cogmem_router.tenant_hash(tenant text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN hashtext(tenant) & 2147483647;
CREATE OR REPLACE FUNCTION cogmem_router.partition_of_key(tenant_hash integer)
RETURNS integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((SELECT p.partition FROM cogmem_router.placements AS p WHERE p.tenant_hash = $1), $1, 0);
COMMENT ON FUNCTION cogmem_router.partition_of_key(integer) IS
'The partition of a tenant hash: its placement after a move, else the hash itself (PL/Proxy masks it); '
'for no tenant, the first partition, which answers as one node does (a NULL tenant''s error).';
CREATE OR REPLACE FUNCTION cogmem_router.partition_of(tenant text)
RETURNS integer
LANGUAGE sql STABLE
RETURN cogmem_router.partition_of_key(cogmem_router.tenant_hash(tenant));
COMMENT ON FUNCTION cogmem_router.partition_of(text) IS 'The partition a tenant''s calls run on.';
-- A recall's or a session's id begins with its tenant's hash (cogmem._keyed_uuid on the shards).
CREATE OR REPLACE FUNCTION cogmem_router.partition_of_id(id uuid)
RETURNS integer
LANGUAGE sql STABLE
RETURN cogmem_router.partition_of_key(('x' || left(replace(id::text, '-', ''), 8))::bit(32)::integer);
COMMENT ON FUNCTION cogmem_router.partition_of_id(uuid) IS 'The partition of the tenant whose id this is.';
CREATE OR REPLACE FUNCTION cogmem_router.refuse(call text, hint text)
RETURNS boolean
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'the cogmem router does not route %', call USING ERRCODE = 'feature_not_supported', HINT = hint;
END;
$$;
COMMENT ON FUNCTION cogmem_router.refuse(text, text) IS 'The answer of an API function the router does not route.';
-- PL/Proxy passes a shard's error on with its SQLSTATE, but prefixes its message ("f(2): [db] REMOTE
-- ERROR: "), its detail and its hint ("Remote hint: "). The router's functions raise it again as one node
-- would have.
CREATE OR REPLACE FUNCTION cogmem_router.reraise(state text, message text, detail text, hint text)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_message text := regexp_replace(message, '^\S+\(\d+\): \[[^]]*\] REMOTE (ERROR|FATAL|PANIC): ', '');
    v_detail  text := nullif(regexp_replace(detail, '^Remote detail: ', ''), '');
    v_hint    text := nullif(regexp_replace(hint, '^Remote hint: ', ''), '');
BEGIN
    IF v_detail IS NULL AND v_hint IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = state, MESSAGE = v_message;
    ELSIF v_detail IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = state, MESSAGE = v_message, HINT = v_hint;
    ELSIF v_hint IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = state, MESSAGE = v_message, DETAIL = v_detail;
    END IF;
    RAISE EXCEPTION USING ERRCODE = state, MESSAGE = v_message, DETAIL = v_detail, HINT = v_hint;
END;
$$;
COMMENT ON FUNCTION cogmem_router.reraise(text, text, text, text) IS
'Raises a shard''s error as the shard raised it, without PL/Proxy''s prefixes.';
-- Anyone may call the router's helpers: each runs as the caller on the shards, whose grants decide.
GRANT USAGE ON SCHEMA cogmem, cogmem_router TO PUBLIC;
GRANT SELECT ON cogmem_router.placements TO PUBLIC;
"""


@dataclass(frozen=True)
class ApiFunction:
    name: str
    arguments: str  # with names and defaults, as pg_get_function_arguments gives them
    identity: str  # the argument types, for GRANT
    result: str
    parameters: list[str]
    defaults: int  # how many trailing parameters have a default
    roles: list[str]  # cogmem roles allowed to execute it on the shard
    types: str = ""  # the input arguments' types alone, without names


_CATALOG = """
SELECT p.proname, pg_get_function_arguments(p.oid), pg_get_function_identity_arguments(p.oid),
       pg_get_function_result(p.oid), coalesce(p.proargnames[1:p.pronargs], '{}'), p.pronargdefaults,
       ARRAY(SELECT r.rolname FROM pg_roles AS r
             WHERE r.rolname LIKE 'cogmem\\_%%' AND r.rolname <> 'cogmem_owner'
               AND has_function_privilege(r.oid, p.oid, 'EXECUTE') ORDER BY r.rolname),
       oidvectortypes(p.proargtypes)
FROM pg_proc AS p
WHERE p.pronamespace = 'cogmem'::regnamespace AND p.proname !~ '^_' AND p.prokind = 'f'
  AND p.prorettype <> 'trigger'::regtype
ORDER BY p.proname, p.oid
"""


def api_functions(shard_dsn: str) -> list[ApiFunction]:
    """The public API functions of a shard, from its catalog."""
    with psycopg.connect(shard_dsn) as conn:
        return [ApiFunction(*row) for row in conn.execute(_CATALOG).fetchall()]


# Calls keyed by an id that begins with its tenant's routing key (cogmem._keyed_uuid).
KEYED_BY_ID = {"feedback": "recall_id", "explain_recall": "recall_id", "end_session": "session_id"}

# Calls that apply to every tenant when they name none (the BIOS library is the same on every shard;
# the night, sealing and the audit check run on each), and how the shards' answers combine: "same" when
# every shard answers alike, "union" when each answers for its own tenants, "sum" of counts, "any" of
# "did it change something". With a tenant, they run on its shard.
EVERYWHERE = {"load_bios_preset": "same", "bios_preset_diff": "same", "add_bios_rule": "same", "subscribe_bios": "any",
              "unsubscribe_bios": "any", "verify_audit": "union", "consolidate": "union", "seal_audit": "sum",
              "apply_rehearsals": "sum"}  # fmt: skip

# What the router answers, instead of running, for a call it does not route (yet).
HINTS = {
    "resolve_conflict": "Name the tenant: cogmem.resolve_conflict(tenant, conflict_id, resolution, note).",
}


def run_on(function: ApiFunction) -> str | None:
    """The PL/Proxy RUN ON clause for a function, or None when the router does not offer it yet."""
    if function.name in STATELESS:
        return "RUN ON ANY;"
    if "tenant" in function.parameters:
        position = function.parameters.index("tenant")
        has_default = position >= len(function.parameters) - function.defaults
        if not has_default:
            return "RUN ON cogmem_router.partition_of(tenant);"
    if KEYED_BY_ID.get(function.name) in function.parameters:
        return f"RUN ON cogmem_router.partition_of_id({KEYED_BY_ID[function.name]});"
    return None


def _plproxy(name: str, args: str, result: str, clause: str, target: str) -> sql.Composed:
    """A PL/Proxy function cogmem_router.NAME(ARGS) that runs the shards' cogmem.TARGET per CLAUSE, or TARGET
    itself when it is a SELECT (the query PL/Proxy then sends)."""
    return sql.SQL(
        "CREATE OR REPLACE FUNCTION cogmem_router.{name}({args}) RETURNS {result} LANGUAGE plproxy AS $plproxy$\n"
        "    CLUSTER {server}; {clause}{target}\n$plproxy$"
    ).format(
        name=sql.Identifier(name), args=sql.SQL(args),
        result=sql.SQL(result), server=sql.Literal(SERVER), clause=sql.SQL(clause),
        # PL/Proxy's parser takes a plain name (ours are).
        target=sql.SQL(f"\n    {target};" if target.startswith("SELECT ") else f" TARGET cogmem.{target};"),
    )  # fmt: skip


def _in_place_of(function: ApiFunction, body: sql.Composable, language: str = "sql") -> sql.Composed:
    """The router's cogmem.FUNCTION, with the shard's signature, as BODY in LANGUAGE."""
    return sql.SQL(
        "CREATE OR REPLACE FUNCTION cogmem.{name}({args}) RETURNS {result} LANGUAGE {language} AS $body$ {body} $body$"
    ).format(
        name=sql.Identifier(function.name), args=sql.SQL(function.arguments), result=sql.SQL(function.result),
        language=sql.SQL(language), body=body,
    )  # fmt: skip


_ERROR_VARIABLES = "    v_state text; v_message text; v_detail text; v_hint text;\n"
_AS_ONE_NODE = (
    "EXCEPTION WHEN OTHERS THEN\n"
    "    GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT,\n"
    "                            v_detail = PG_EXCEPTION_DETAIL, v_hint = PG_EXCEPTION_HINT;\n"
    "    PERFORM cogmem_router.reraise(v_state, v_message, v_detail, v_hint);\n"
)


def _plpgsql(function: ApiFunction, statements: str, declare: str = "") -> list[sql.Composed]:
    """The router's cogmem.FUNCTION running STATEMENTS (which read its arguments as $1, $2...), whose errors
    reach the caller as one node raises them (cogmem_router.reraise). Two functions: PL/pgSQL catches the
    error, but refuses a parameter named as a result column (tenant, in and out), which SQL allows; so
    the router's own function, in SQL, calls a PL/pgSQL one whose parameters have no names."""
    inner = f"{function.name}__as_one_node"
    body = (
        f"\n#variable_conflict use_column\nDECLARE\n{_ERROR_VARIABLES}{declare}BEGIN\n{statements}{_AS_ONE_NODE}END;\n"
    )
    call = f"cogmem_router.{inner}({_arguments(function)})"
    outer = _select(function, call)
    return [
        sql.SQL(
            "CREATE OR REPLACE FUNCTION cogmem_router.{name}({types}) RETURNS {result} LANGUAGE plpgsql\n"
            "AS $body${body}$body$"
        ).format(name=sql.Identifier(inner), types=sql.SQL(function.types), result=sql.SQL(function.result),
                 body=sql.SQL(body)),
        _in_place_of(function, sql.SQL(outer)),
    ]  # fmt: skip


def _returns_set(function: ApiFunction) -> bool:
    return function.result.startswith(("TABLE(", "SETOF "))


def _select(function: ApiFunction, call: str) -> str:
    """A SELECT of what CALL (a function call of FUNCTION's result) returns."""
    return f"SELECT * FROM {call}" if _returns_set(function) else f"SELECT {call}"


def _returning(function: ApiFunction, query: str) -> str:
    """The PL/pgSQL statement that returns what QUERY (a SELECT) gives, as FUNCTION returns it."""
    if function.result == "void":
        return f"    PERFORM FROM ({query}) AS r;\n"
    if _returns_set(function):
        return f"    RETURN QUERY {query};\n"
    return f"    RETURN ({query});\n"


def _arguments(function: ApiFunction) -> str:
    return ", ".join(f"${n}" for n in range(1, len(function.parameters) + 1))


def _routed(function: ApiFunction) -> list[sql.Composed]:
    """The router's cogmem.FUNCTION: a PL/Proxy function and its caller, the everywhere form, or a refusal."""
    clause = run_on(function)
    if clause is not None:
        remote = f"{function.name}__remote"
        query = _select(function, f"cogmem_router.{remote}({_arguments(function)})")
        return [
            _plproxy(remote, function.arguments, function.result, clause, function.name),
            *_plpgsql(function, _returning(function, query)),
        ]
    if function.name in EVERYWHERE:
        return _everywhere(function, EVERYWHERE[function.name])
    if function.name in OWN_ROUTING:
        return OWN_ROUTING[function.name](function)
    return [_not_routed(function)]


# A tenant's own BIOS rule has an id from 2^62 up that carries the tenant's routing key
# (cogmem._keyed_bios_id); a global rule's id is the same on every shard.
_RULE_PARTITION = "cogmem_router.partition_of_key(((rule_id >> 31) & 2147483647)::integer)"


def _retire_bios_rule(function: ApiFunction) -> list[sql.Composed]:
    """A tenant's own rule is retired on the tenant's shard, a global rule on every shard. PL/Proxy runs
    on all partitions only a function that returns a set, so the helpers answer a row per shard."""
    made = [
        _plproxy(f"retire_bios_rule__{name}", function.arguments, "SETOF boolean", f"RUN ON {where};",
                 "SELECT true FROM cogmem.retire_bios_rule(rule_id, reason)")
        for name, where in (("keyed", _RULE_PARTITION), ("everywhere", "ALL"))
    ]  # fmt: skip
    statements = (
        "    IF $1 >= (1::bigint << 62) THEN\n"
        "        PERFORM cogmem_router.retire_bios_rule__keyed($1, $2);\n"
        "    ELSE\n"
        "        PERFORM cogmem_router.retire_bios_rule__everywhere($1, $2);\n"
        "    END IF;\n"
    )
    return [*made, *_plpgsql(function, statements)]


def _gut_release(function: ApiFunction) -> list[sql.Composed]:
    """The Gut's release over every shard's tenants: gather each shard's de-identified contributions
    (each export signed by its node with the shard key), draw once on the first partition (k and
    epsilon apply to all of them together; it takes only signed, fresh exports), then write that
    release, signed by the node that drew it, on every shard, where it is charged to the ledger and
    audited. A shard that fails the last step gets it from the next release's import (a state holds
    every release, and what a node has already changes nothing)."""
    helpers = [
        ("gut_export__everywhere", "", "SETOF jsonb", "RUN ON ALL;", "gut_export"),
        ("gut_release__first", function.arguments, function.result, "RUN ON 0;", "gut_release"),
        ("gut_state__first", "", "jsonb", "RUN ON 0;", "gut_state"),
        ("gut_import__everywhere", "state jsonb", "SETOF integer", "RUN ON ALL;", "gut_import"),
    ]
    made = [_plproxy(*helper) for helper in helpers]
    declare = "    v_gathered jsonb;\n"
    statements = (
        "    v_gathered := coalesce((SELECT jsonb_agg(e) FROM cogmem_router.gut_export__everywhere() AS e), '[]');\n"
        "    RETURN QUERY SELECT * FROM cogmem_router.gut_release__first($1, coalesce($2, v_gathered));\n"
        "    PERFORM cogmem_router.gut_import__everywhere(cogmem_router.gut_state__first());\n"
    )
    return [*made, *_plpgsql(function, statements, declare)]


# Calls with a router function of their own (PL/pgSQL over PL/Proxy helpers).
OWN_ROUTING = {"gut_release": _gut_release, "retire_bios_rule": _retire_bios_rule}


def _everywhere(function: ApiFunction, kind: str) -> list[sql.Composed]:
    """Every shard runs it (each node once, however many partitions it holds), unless it names a
    tenant: then the tenant's shard. A SQL function picks, and combines the shards' answers by KIND."""
    everywhere, one = f"{function.name}__everywhere", f"{function.name}__tenant"
    returns_set = _returns_set(function)
    args = _arguments(function)
    combined = {
        "same": f"SELECT DISTINCT * FROM cogmem_router.{everywhere}({args})",  # alike everywhere: shown once
        "union": f"SELECT * FROM cogmem_router.{everywhere}({args})",  # each shard's own tenants
        "sum": f"SELECT sum(r)::{function.result} FROM cogmem_router.{everywhere}({args}) AS r",
        "any": f"SELECT bool_or(r) FROM cogmem_router.{everywhere}({args}) AS r",  # changed on some shard
    }[kind]
    made = [_plproxy(everywhere, function.arguments, function.result if returns_set
                     else f"SETOF {function.result}", "RUN ON ALL;", function.name)]  # fmt: skip
    body = combined
    if "tenant" in function.parameters:
        tenant = f"${function.parameters.index('tenant') + 1}"
        clause = "RUN ON cogmem_router.partition_of(tenant);"
        made.append(_plproxy(one, function.arguments, function.result, clause, function.name))
        if returns_set:
            body = (f"{combined} WHERE {tenant} IS NULL "
                    f"UNION ALL SELECT * FROM cogmem_router.{one}({args}) WHERE {tenant} IS NOT NULL")  # fmt: skip
        else:
            body = f"SELECT CASE WHEN {tenant} IS NULL THEN ({combined}) ELSE cogmem_router.{one}({args}) END"
    return [*made, *_plpgsql(function, _returning(function, body))]


def _not_routed(function: ApiFunction) -> sql.Composed:
    """A function of the same signature that says clearly that the router does not run it (SQL, whose
    result columns may share the parameters' names)."""
    hint = HINTS.get(function.name, "Call it on each shard; docs/scaling.md says what the router routes.")
    refusal = sql.SQL("cogmem_router.refuse({}, {})").format(
        sql.Literal(f"cogmem.{function.name}({function.identity})"), sql.Literal(hint)
    )
    columns = _result_types(function.result)
    if columns is None:  # void
        body = sql.SQL("SELECT {}").format(refusal)
    else:
        nulls = sql.SQL(", ").join(sql.SQL("NULL::{}").format(sql.SQL(t)) for t in columns)
        body = sql.SQL("SELECT {} WHERE {}").format(nulls, refusal)
    return _in_place_of(function, body)


def _result_types(result: str) -> list[str] | None:
    """The column types of a function result as pg_get_function_result writes it (None for void)."""
    if result == "void":
        return None
    if not result.startswith("TABLE("):
        return [result.removeprefix("SETOF ")]
    columns, depth, current = [], 0, ""
    for char in result[len("TABLE(") : -1]:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            columns.append(current.strip())
            current = ""
        else:
            current += char
    columns.append(current.strip())
    return [column.split(" ", 1)[1] for column in columns]


def router_sql(partitions: Sequence[str], functions: Sequence[ApiFunction]) -> list[sql.SQL | sql.Composed]:
    """The statements that make a database the router over PARTITIONS (a power of two of connection
    strings, several of which may name one node)."""
    count = len(partitions)
    if count < 1 or count & (count - 1):
        raise ValueError(f"PL/Proxy needs a power of two of partitions, not {count}")
    options = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(f"p{n}"), sql.Literal(dsn)) for n, dsn in enumerate(partitions)
    )
    statements: list[sql.SQL | sql.Composed] = [sql.SQL(_ROUTER_SCHEMA)]
    statements.append(sql.SQL("DROP SERVER IF EXISTS {} CASCADE").format(sql.Identifier(SERVER)))
    statements.append(
        sql.SQL("CREATE SERVER {} FOREIGN DATA WRAPPER plproxy OPTIONS ({})").format(sql.Identifier(SERVER), options)
    )
    # The caller's own role connects to the shard (PL/Proxy adds user=current_user): the shard's grants
    # and row-level security decide, as on a single node.
    statements.append(sql.SQL("CREATE USER MAPPING FOR PUBLIC SERVER {}").format(sql.Identifier(SERVER)))
    statements.append(sql.SQL("GRANT USAGE ON FOREIGN SERVER {} TO PUBLIC").format(sql.Identifier(SERVER)))
    for function in functions:
        if function.name in ROUTER_OWN or function.name in SHARD_ONLY:
            continue
        statements += _routed(function)
        statements.append(
            sql.SQL("REVOKE ALL ON FUNCTION cogmem.{}({}) FROM PUBLIC").format(
                sql.Identifier(function.name), sql.SQL(function.identity)
            )
        )
        for role in function.roles:
            statements.append(
                sql.SQL("GRANT EXECUTE ON FUNCTION cogmem.{}({}) TO {}").format(
                    sql.Identifier(function.name), sql.SQL(function.identity), sql.Identifier(role)
                )
            )
    return statements


# What each shard's own pg_cron did, read on the router from every shard at once (a view of the same
# name and columns there): the nights, their report, the audit chains' heads, never-cut overflow.
STATUS_VIEWS = ("consolidation_runs", "consolidation_report", "audit_heads", "never_cut_overflow")

_STATUS_COLUMNS = """
SELECT c.relname, string_agg(format('%%I %%s', a.attname, format_type(a.atttypid, a.atttypmod)), ', '
                             ORDER BY a.attnum),
       string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
       ARRAY(SELECT r.rolname FROM pg_roles AS r WHERE r.rolname LIKE 'cogmem\\_%%' AND r.rolname <> 'cogmem_owner'
             AND has_table_privilege(r.oid, c.oid, 'SELECT') ORDER BY r.rolname)
FROM pg_class AS c JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relname = ANY (%s)
GROUP BY c.oid, c.relname
"""


def status_views_sql(catalog_dsn: str) -> list[sql.Composed]:
    """A view per STATUS_VIEWS on the router, over a PL/Proxy function that reads it on every shard."""
    with psycopg.connect(catalog_dsn) as conn:
        found = conn.execute(_STATUS_COLUMNS, (list(STATUS_VIEWS),)).fetchall()
    statements = []
    for name, columns, names, roles in found:
        statements += [
            sql.SQL(
                "CREATE OR REPLACE FUNCTION cogmem_router.{name}() RETURNS TABLE ({columns}) LANGUAGE plproxy "
                "AS $plproxy$ CLUSTER {server}; RUN ON ALL; SELECT {names} FROM cogmem.{name}; $plproxy$"
            ).format(
                name=sql.Identifier(name), columns=sql.SQL(columns), server=sql.Literal(SERVER), names=sql.SQL(names)
            ),
            sql.SQL("CREATE OR REPLACE VIEW cogmem.{name} AS SELECT * FROM cogmem_router.{name}()").format(
                name=sql.Identifier(name)
            ),
            sql.SQL("COMMENT ON VIEW cogmem.{} IS {}").format(
                sql.Identifier(name), sql.Literal(f"cogmem.{name} of every shard (each reads it as the caller).")
            ),
        ]
        statements += [
            sql.SQL("GRANT SELECT ON cogmem.{} TO {}").format(sql.Identifier(name), sql.Identifier(role))
            for role in roles
        ]
    return statements


def install_router(router_dsn: str, partitions: Sequence[str], catalog_dsn: str | None = None) -> int:
    """Makes ROUTER_DSN's database the router over PARTITIONS, with the API of the shard at CATALOG_DSN
    (default: the first partition); returns how many API functions it routes."""
    functions = api_functions(catalog_dsn or partitions[0])
    statements = router_sql(partitions, functions) + status_views_sql(catalog_dsn or partitions[0])
    with psycopg.connect(router_dsn, autocommit=True) as conn, conn.transaction():
        for statement in statements:
            conn.execute(statement)
    offered = EVERYWHERE.keys() | OWN_ROUTING.keys()
    skipped = ROUTER_OWN | SHARD_ONLY
    return sum((run_on(f) is not None or f.name in offered) and f.name not in skipped for f in functions)


def partitions_of(router_dsn: str) -> list[str]:
    """The partitions' connection strings, in order, from the router's SQL/MED cluster."""
    with psycopg.connect(router_dsn) as conn:
        row = conn.execute("SELECT srvoptions FROM pg_foreign_server WHERE srvname = %s", (SERVER,)).fetchone()
    if row is None:
        raise ValueError(f"no {SERVER} cluster in this database: is it the router?")
    options = dict(option.split("=", 1) for option in row[0])
    return [options[f"p{n}"] for n in range(len(options)) if f"p{n}" in options]
