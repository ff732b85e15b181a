"""cogmem_pg/shards/: a PL/Proxy router in front of four partitions on two local shard clusters.

The router is generated from a shard's catalog; what it routes must behave as one node does."""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from pathlib import Path

import psycopg
import pytest

from cogmem_pg.client import Client
from cogmem_pg.cluster import Cluster
from cogmem_pg.shards import (
    EVERYWHERE,
    OWN_ROUTING,
    ROUTER_DATABASE,
    ROUTER_OWN,
    SHARD_ONLY,
    api_functions,
    init_local,
    run_on,
)

NODES, PARTITIONS = 2, 4


@pytest.fixture(scope="module")
def sharded():
    yield from sharded_layout(port=5471)


def sharded_layout(port: int):
    """A router cluster on PORT and NODES shard clusters after it, with PARTITIONS partitions."""
    home = Path(tempfile.mkdtemp(prefix="cogmem-shards-"))
    home.chmod(0o755)
    router = Cluster(home=home / "router", port=port)
    layout, _, routed = init_local(router, NODES, PARTITIONS)
    nodes = layout.nodes()
    for cluster in [router, *nodes]:  # deterministic full text everywhere, as the suite's other tests
        with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
            conn.execute("ALTER DATABASE cogmem SET cogmem.embed = 'off'")
    yield {"router": router.dsn(ROUTER_DATABASE), "nodes": [n.dsn() for n in nodes], "clusters": nodes,
           "routed": routed, "all": [router, *nodes]}  # fmt: skip
    for cluster in [router, *nodes]:
        cluster.stop()
    shutil.rmtree(home, ignore_errors=True)


def tenant_name() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def rows(dsn: str, query: str, params=None) -> list[tuple]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET cogmem.embed = 'off'")
        cursor = conn.execute(query, params)
        return cursor.fetchall() if cursor.description else []


def test_the_router_has_the_shards_signatures(sharded):
    shard = {(f.name, f.identity): f for f in api_functions(sharded["nodes"][0])}
    with psycopg.connect(sharded["router"]) as conn:
        routed = conn.execute(
            "SELECT p.proname, pg_get_function_identity_arguments(p.oid), pg_get_function_arguments(p.oid), "
            "pg_get_function_result(p.oid), l.lanname FROM pg_proc AS p JOIN pg_language AS l ON l.oid = p.prolang "
            "WHERE p.pronamespace = 'cogmem'::regnamespace"
        ).fetchall()
    languages = {(name, identity): language for name, identity, _, _, language in routed}
    # Routed: SQL over PL/pgSQL (which raises a shard's errors as the shard did) over PL/Proxy.
    helpers = rows(sharded["router"], "SELECT p.proname, l.lanname, pg_get_function_identity_arguments(p.oid) "
                                      "FROM pg_proc AS p JOIN pg_language AS l ON l.oid = p.prolang "
                                      "WHERE p.pronamespace = 'cogmem_router'::regnamespace")  # fmt: skip
    as_one_node = {(name.removesuffix("__as_one_node"), types) for name, language, types in helpers
                   if language == "plpgsql" and name.endswith("__as_one_node")}  # fmt: skip
    assert len(as_one_node) == sharded["routed"] > 40
    assert set(languages.values()) == {"sql"}
    for name, identity, arguments, result, _ in routed:
        assert (arguments, result) == (shard[(name, identity)].arguments, shard[(name, identity)].result), name
    for key, function in shard.items():  # every API function is there: routed, or saying it is not
        if function.name not in ROUTER_OWN | SHARD_ONLY:
            routes = bool(run_on(function)) or function.name in EVERYWHERE or function.name in OWN_ROUTING
            assert ((function.name, function.types) in as_one_node) == routes, key
    offered = {name.removesuffix("__remote") for name, language, _ in helpers if language == "plproxy"}
    assert {"remember", "recall", "guard_check", "store_put", "observe", "feedback", "end_session"} <= offered


def test_bios_presets_load_on_every_shard_and_stay_identical(sharded):
    tenants = one_tenant_per_node(sharded)
    with Client(sharded["router"], embedder=False) as client:
        for preset in ("operations", "pci-dss-4.0"):
            _, changes = client.load_bios_preset(preset)
            assert changes and {c.change for c in changes} <= {"add", "keep"}
            _, again = client.load_bios_preset(preset)
            assert {c.change for c in again} == {"keep"} and len(again) == len(changes)  # each rule once
        client.subscribe_bios("operations")
        assert client.subscribe_bios("operations") is False  # already, on every shard
        for tenant in tenants.values():
            layers = {i.layer for i in client.recall(tenant, "restart the web servers tonight?").items}
            assert "bios" in layers, tenant
    libraries = [
        rows(node, "SELECT rule_id, preset, digest, tenant FROM cogmem.bios_rules ORDER BY rule_id")
        + rows(node, "SELECT preset, version, sha256 FROM cogmem.bios_preset_loads ORDER BY load_id")
        + rows(node, "SELECT preset, tenant FROM cogmem.bios_subscriptions ORDER BY preset")
        for node in sharded["nodes"]
    ]
    assert libraries[0] and all(library == libraries[0] for library in libraries)


KEYED = 1 << 62


def test_single_bios_rules_route_to_every_shard_or_to_their_tenants(sharded):
    router, nodes = sharded["router"], sharded["nodes"]
    tenants = one_tenant_per_node(sharded)
    rule = f"Never page the on-call engineer for a {uuid.uuid4().hex[:6]} warning"
    (global_id,) = rows(router, "SELECT cogmem.add_bios_rule('operations', %s)", (rule,))[0]
    assert global_id < KEYED
    assert rows(router, "SELECT cogmem.add_bios_rule('operations', %s)", (rule,)) == [(global_id,)]  # once
    add_own = "SELECT cogmem.add_bios_rule('operations', 'Only ' || %s || ' deploys on Tuesdays', tenant => %s)"
    own = {node: rows(router, add_own, (tenant, tenant))[0][0] for node, tenant in tenants.items()}
    assert all(rule_id >= KEYED for rule_id in own.values()) and len(set(own.values())) == NODES
    (later_id,) = rows(router, "SELECT cogmem.add_bios_rule('operations', %s)", (rule + " again",))[0]
    for n, node in enumerate(nodes):  # global rules alike everywhere, a tenant's own on its shard only
        assert rows(node, "SELECT rule_id FROM cogmem.bios_rules WHERE rule_id IN (%s, %s)",
                    (global_id, later_id)) == [(global_id,), (later_id,)]  # fmt: skip
        assert rows(node, "SELECT rule_id FROM cogmem.bios_rules WHERE rule_id = ANY (%s) ORDER BY 1",
                    (list(own.values()),)) == [(own[n],)]  # fmt: skip
    rows(router, "SELECT cogmem.retire_bios_rule(%s, 'too noisy')", (global_id,))
    rows(router, "SELECT cogmem.retire_bios_rule(%s, 'Tuesdays are over')", (own[1],))
    for n, node in enumerate(nodes):
        retired = {r for (r,) in rows(node, "SELECT rule_id FROM cogmem.bios_rule_events WHERE event = 'retired'")}
        assert global_id in retired and (own[1] in retired) == (n == 1) and own[0] not in retired
    with pytest.raises(psycopg.errors.NoDataFound):  # an unknown rule is unknown on its shard too
        rows(router, "SELECT cogmem.retire_bios_rule(%s, 'no such rule')", (own[1] + 1000,))


def test_verify_audit_without_a_tenant_checks_every_shard(sharded):
    tenants = one_tenant_per_node(sharded)
    for tenant in tenants.values():
        rows(sharded["router"], "SELECT * FROM cogmem.remember(%s, 'Audited everywhere')", (tenant,))
    unsealed = sum(rows(node, "SELECT count(*) FROM cogmem.audit_log AS a WHERE NOT EXISTS (SELECT FROM "
                              "cogmem.audit_chain AS c WHERE c.tenant = a.tenant AND c.audit_id = a.audit_id)")[0][0]
                   for node in sharded["nodes"])  # fmt: skip
    # Each shard seals its own trail (its pg_cron does it every minute); through the router, all at once.
    assert rows(sharded["router"], "SELECT cogmem.seal_audit()") == [(unsealed,)]
    assert rows(sharded["router"], "SELECT cogmem.seal_audit()") == [(0,)]
    checked = {t: ok for t, ok in rows(sharded["router"], "SELECT tenant, ok FROM cogmem.verify_audit()")}
    assert all(checked[t] for t in tenants.values())
    mine = rows(sharded["router"], "SELECT tenant, ok FROM cogmem.verify_audit(%s)", (tenants[1],))
    assert mine == [(tenants[1], True)]


def test_the_router_shows_every_shards_nights_and_audit_heads(sharded):
    tenants = one_tenant_per_node(sharded)
    for tenant in tenants.values():
        rows(sharded["router"], "SELECT * FROM cogmem.remember(%s, 'Backups run at two')", (tenant,))
    rows(sharded["router"], "SELECT * FROM cogmem.consolidate()")  # each shard's night, for every tenant
    rows(sharded["router"], "SELECT cogmem.seal_audit()")
    assert rows(sharded["router"], "SELECT count(*) >= %s FROM cogmem.consolidation_runs", (NODES,)) == [(True,)]
    nights = {r[0] for r in rows(sharded["router"], "SELECT tenant FROM cogmem.consolidation_report")}
    heads = {r[0] for r in rows(sharded["router"], "SELECT tenant FROM cogmem.audit_heads")}
    assert set(tenants.values()) <= nights and set(tenants.values()) <= heads
    shard_columns = rows(sharded["nodes"][0], "SELECT * FROM cogmem.consolidation_report LIMIT 0")
    assert rows(sharded["router"], "SELECT * FROM cogmem.consolidation_report LIMIT 0") == shard_columns


def one_tenant_per_node(sharded) -> dict[int, str]:
    """A new tenant on each node, created through the router."""
    tenants: dict[int, str] = {}
    while len(tenants) < NODES:
        tenant = tenant_name()
        (partition,) = rows(sharded["router"], "SELECT cogmem_router.partition_of(%s) & %s", (tenant, PARTITIONS - 1))[
            0
        ]
        tenants.setdefault(partition % NODES, tenant)
    for tenant in tenants.values():
        rows(sharded["router"], "SELECT cogmem.create_tenant(%s)", (tenant,))
    return tenants


def test_a_call_the_router_does_not_route_says_so_with_a_hint(sharded):
    with pytest.raises(psycopg.errors.FeatureNotSupported) as raised:
        rows(sharded["router"], "SELECT * FROM cogmem.resolve_conflict(1::bigint, 'override')")
    assert "resolve_conflict(tenant, conflict_id" in raised.value.diag.message_hint


def scenario(dsn: str, tenant: str) -> list:
    """The API acceptance path an application takes; ids and times left out."""
    out = []
    out += rows(dsn, "SELECT cogmem.create_tenant(%s)", (tenant,))
    out += rows(
        dsn,
        "SELECT ring, topics, action FROM cogmem.remember(%s, 'Never restart the web servers at night', "
        "ring => 'dos_and_donts')",
        (tenant,),
    )
    out += rows(
        dsn, "SELECT ring, topics, action FROM cogmem.remember(%s, 'The staging database is db-stage-2')", (tenant,)
    )
    out += rows(dsn, "SELECT action, redactions FROM cogmem.remember(%s, 'my card is 4111 1111 1111 1111')", (tenant,))
    out += rows(
        dsn,
        "SELECT layer, content, tokens, reason FROM cogmem.recall(%s, 'can I restart the web servers "
        "tonight?') ORDER BY layer, content",
        (tenant,),
    )
    out += rows(
        dsn, "SELECT kind, content, blocking FROM cogmem.guard_check(%s, 'server', 'restart web-1 tonight')", (tenant,)
    )
    out += rows(
        dsn, "SELECT errors, blocking FROM cogmem.report_error(%s, 'server', 'Restarted web-1 at night')", (tenant,)
    )
    out += rows(dsn, "SELECT ring, action FROM cogmem.observe(%s, 'c1', 'user', 'Good morning!')", (tenant,))
    out += rows(
        dsn,
        "SELECT action FROM cogmem.store_put(%s, '{prefs}', 'lang', '{\"content\": \"Answer in Turkish\"}',"
        " 'Answer in Turkish')",
        (tenant,),
    )
    out += rows(dsn, "SELECT key, value FROM cogmem.store_search(%s, '{prefs}', 'which language?')", (tenant,))
    out += rows(dsn, "SELECT cogmem.detect_topics(%s, 'restart nginx on the server')", (tenant,))
    out += rows(dsn, "SELECT cogmem.trust(%s)", (tenant,))
    recall_id = rows(dsn, "SELECT recall_id FROM cogmem.recall(%s, 'restart the web servers') LIMIT 1", (tenant,))[0][0]
    out += rows(dsn, "SELECT cogmem.feedback(%s, 1.0)", (recall_id,))  # keyed by the id alone
    out += rows(dsn, "SELECT item, layer, reason FROM cogmem.explain_recall(%s)", (recall_id,))
    session = rows(dsn, "SELECT cogmem.start_session(%s, 'checkout', 'move it')", (tenant,))[0][0]
    out += rows(
        dsn,
        "SELECT episode = %s, cardinality(remembered) FROM cogmem.end_session(%s, 'Moved checkout.', "
        "facts => ARRAY['Checkout runs on web-3'])",
        (session, session),
    )
    held = rows(
        dsn,
        "SELECT action, conflict_id FROM cogmem.remember(%s, 'Always restart the web servers at night',"
        " ring => 'dos_and_donts')",
        (tenant,),
    )
    out += [h[0] for h in held]
    if held[0][1] is not None:
        out += rows(dsn, "SELECT status FROM cogmem.resolve_conflict(%s, %s, 'exception')", (tenant, held[0][1]))
    out += more_of_the_api(dsn, tenant)
    out += rows(dsn, "SELECT kind, erased FROM cogmem.erase_subject(%s, 'db-stage-2') ORDER BY kind", (tenant,))
    return out


def more_of_the_api(dsn: str, tenant: str) -> list:
    """Identity, briefing, trust, learnings, conflicts, the store and the vault, as one node answers."""
    calls = [
        ("SELECT cogmem.set_core_identity(%s, 'the ops assistant', 'Ayşe, SRE', ARRAY['no outages'])", (tenant,)),
        ("SELECT agent, user_profile, goals FROM cogmem.core_identity(%s)", (tenant,)),
        ("SELECT section, content FROM cogmem.briefing(%s, 'checkout')", (tenant,)),
        ("SELECT cogmem.trust_event(%s, 'praise', 'quick fix')", (tenant,)),
        ("SELECT round(cogmem.trust(%s)::numeric, 4)", (tenant,)),
        ("SELECT content, verdict FROM cogmem.open_conflicts(%s)", (tenant,)),
        ("SELECT ring, content FROM cogmem.related(%s, 'restart the web servers')", (tenant,)),
        ("SELECT value FROM cogmem.store_get(%s, '{prefs}', 'lang')", (tenant,)),
        ("SELECT cogmem.store_namespaces(%s)", (tenant,)),
        ("SELECT cogmem.store_delete(%s, '{prefs}', 'lang')", (tenant,)),
        ("SELECT cogmem.vault_put(%s, 'db/prod', 's3cret')", (tenant,)),
        ("SELECT cogmem.vault_get(%s, 'db/prod')", (tenant,)),
        ("SELECT name, version FROM cogmem.vault_list(%s)", (tenant,)),
        ("SELECT kind, topics FROM cogmem.analyze(%s, 'server') ORDER BY kind, content", (tenant,)),
        ("SELECT topic, overridden FROM cogmem.topic_keywords(%s) ORDER BY topic", (tenant,)),
        ("SELECT cogmem.configure_tenant(%s, '{\"fusion_k\": 12}') - 'created_at'", (tenant,)),
    ]
    out = []
    for query, params in calls:
        out += [tuple(v for v in row if not hasattr(v, "isoformat")) for row in rows(dsn, query, params)]
    return out


def test_the_api_through_the_router_gives_what_one_node_gives(sharded, dsn, db):
    db.execute("ALTER DATABASE " + db.info.dbname + " SET cogmem.embed = 'off'")
    for target in (sharded["router"], dsn):  # the same BIOS library on both sides, whatever ran before
        with Client(target, embedder=False) as client:
            for preset in ("operations", "pci-dss-4.0"):
                client.load_bios_preset(preset)
            client.subscribe_bios("operations")
    tenant = tenant_name()
    assert scenario(sharded["router"], tenant) == scenario(dsn, tenant)


def test_every_tenant_lives_on_exactly_one_shard_the_one_its_hash_names(sharded):
    tenants = [tenant_name() for _ in range(16)]
    for tenant in tenants:
        rows(sharded["router"], "SELECT cogmem.create_tenant(%s)", (tenant,))
        rows(sharded["router"], "SELECT * FROM cogmem.remember(%s, 'Invoices go out on the first')", (tenant,))
    where: dict[str, list[int]] = {t: [] for t in tenants}
    for n, node in enumerate(sharded["nodes"]):
        for (tenant,) in rows(node, "SELECT DISTINCT tenant FROM cogmem.memories WHERE tenant = ANY (%s)", (tenants,)):
            where[tenant].append(n)
    partitions = dict(
        rows(
            sharded["router"],
            "SELECT t, cogmem_router.partition_of(t) & %s FROM unnest(%s::text[]) AS t",
            (PARTITIONS - 1, tenants),
        )
    )
    for tenant in tenants:
        assert where[tenant] == [partitions[tenant] % NODES], tenant
    assert {n for places in where.values() for n in places} == set(range(NODES))  # both shards hold some


@pytest.mark.parametrize(
    "call",
    [
        "SELECT * FROM cogmem.remember('no-such-tenant', 'hello')",  # one tenant's shard
        "SELECT * FROM cogmem.recall(NULL, 'hello')",  # no tenant: the first partition says so
        "SELECT cogmem.grant_tenant('some_role', NULL)",
        "SELECT cogmem.retire_bios_rule(987654321, 'no such rule')",  # every shard
        "SELECT * FROM cogmem.verify_audit('no-such-tenant')",
    ],
)
def test_errors_reach_the_caller_as_one_node_raises_them(sharded, call):
    def error(dsn: str) -> tuple:
        with pytest.raises(psycopg.Error) as raised:
            rows(dsn, call)
        diag = raised.value.diag
        return raised.value.sqlstate, diag.message_primary, diag.message_detail, diag.message_hint

    assert error(sharded["router"]) == error(sharded["nodes"][0])


def test_a_role_reaches_through_the_router_only_what_it_reaches_on_its_shard(sharded):
    role = f"r_{uuid.uuid4().hex[:8]}"
    mine, other = tenant_name(), tenant_name()
    for tenant in (mine, other):
        rows(sharded["router"], "SELECT cogmem.create_tenant(%s)", (tenant,))
    for cluster in sharded["all"]:
        with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {role} LOGIN IN ROLE cogmem_app")
    try:
        rows(sharded["router"], "SELECT cogmem.grant_tenant(%s, %s)", (role, mine))
        app = sharded["router"].replace("user=postgres", f"user={role}")
        assert rows(app, "SELECT action FROM cogmem.remember(%s, 'Ship on Fridays only')", (mine,)) == [("created",)]
        with pytest.raises(psycopg.errors.UndefinedObject):
            rows(app, "SELECT * FROM cogmem.remember(%s, 'not mine')", (other,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            rows(app, "SELECT cogmem.erase_subject(%s, 'Fridays')", (mine,))  # an administrator's verb
    finally:
        for cluster in sharded["all"]:
            with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as conn:
                conn.execute(f"DROP OWNED BY {role}")
                conn.execute(f"DROP ROLE {role}")


def test_a_shard_that_is_down_fails_clearly_and_spares_the_other_tenants(sharded):
    tenants = one_tenant_per_node(sharded)
    down = sharded["clusters"][1]
    down.stop()
    try:
        with pytest.raises(psycopg.Error, match=r"connect"):
            rows(sharded["router"], "SELECT * FROM cogmem.recall(%s, 'anything')", (tenants[1],))
        assert rows(sharded["router"], "SELECT action FROM cogmem.remember(%s, 'Still here')", (tenants[0],)) == [
            ("created",)
        ]
    finally:
        down.start()
    assert rows(sharded["router"], "SELECT count(*) FROM cogmem.recall(%s, 'anything')", (tenants[1],))[0][0] >= 0


def test_the_command_line_initialises_and_reports_local_shards(monkeypatch):
    import json

    from click.testing import CliRunner

    from cogmem_pg.cli import main
    from cogmem_pg.shards import LocalShards

    home = Path(tempfile.mkdtemp(prefix="cogmem-shards-cli-"))
    home.chmod(0o755)  # the postgres user runs the clusters
    monkeypatch.setenv("COGMEM_HOME", str(home))
    monkeypatch.setenv("COGMEM_PORT", "5481")
    result = CliRunner().invoke(main, ["shards", "init", "--shards", "1", "--partitions", "3"])
    assert result.exit_code == 2 and "power of two" in result.output
    default = Cluster.default()
    try:
        result = CliRunner().invoke(main, ["shards", "init", "--shards", "1", "--partitions", "2"])
        assert result.exit_code == 0, result.output
        assert result.output.count("partition ") == 2 and f"router: {default.dsn(ROUTER_DATABASE)}" in result.output
        out = CliRunner().invoke(main, ["shards", "status", "--json"]).output
        status = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert [(s["node"], s["running"], s["tenants"]) for s in status] == [(0, True, 0)]
        with psycopg.connect(default.dsn(ROUTER_DATABASE), autocommit=True) as conn:
            conn.execute("SELECT cogmem.create_tenant('movable')")
        result = CliRunner().invoke(main, ["shards", "move", "movable", "--to", "1"])
        assert result.exit_code == 0 and "moved movable to partition 1" in result.output, result.output
        result = CliRunner().invoke(main, ["shards", "move", "movable", "--to", "7"])
        assert result.exit_code == 1 and "no partition 7" in result.output
    finally:
        for cluster in [default, *LocalShards.beside(default).nodes()]:
            cluster.stop()
        shutil.rmtree(home, ignore_errors=True)


def tenant_rows(node: str, tenant: str) -> dict[str, int]:
    """How many rows of TENANT each tenant table of a shard holds."""
    with psycopg.connect(node, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT c.relname FROM pg_class AS c WHERE c.relnamespace = 'cogmem'::regnamespace "
            "AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND EXISTS (SELECT FROM pg_attribute AS a "
            "WHERE a.attrelid = c.oid AND a.attname = 'tenant' AND NOT a.attisdropped)").fetchall()]  # fmt: skip
        counts = {t: conn.execute(f"SELECT count(*) FROM cogmem.{t} WHERE tenant = %s", (tenant,)).fetchone()[0]
                  for t in tables}  # fmt: skip
    return {t: n for t, n in counts.items() if n}


@pytest.mark.parametrize("fail_after", [None, "copy", "remove", "switch"])
def test_a_tenant_moves_with_its_chain_and_an_interrupted_move_finishes_when_run_again(sharded, fail_after):
    from cogmem_pg.shards import MoveInterrupted, move_tenant

    tenant = one_tenant_per_node(sharded)[0]
    router, (old, new) = sharded["router"], sharded["nodes"]
    for text in ("Never restart the web servers at night", "The staging database is db-stage-2"):
        rows(router, "SELECT * FROM cogmem.remember(%s, %s)", (tenant, text))
    recall_id = rows(router, "SELECT recall_id FROM cogmem.recall(%s, 'restart the web servers?') LIMIT 1",
                     (tenant,))[0][0]  # fmt: skip
    rows(router, "SELECT cogmem.feedback(%s, 1.0)", (recall_id,))
    session = rows(router, "SELECT cogmem.start_session(%s, 'checkout')", (tenant,))[0][0]
    rows(router, "SELECT * FROM cogmem.end_session(%s, 'Moved checkout.', facts => ARRAY['web-3 runs it'])",
         (session,))  # fmt: skip
    rows(router, "SELECT cogmem.vault_put(%s, 'db/prod', 's3cret')", (tenant,))
    rows(router, "SELECT * FROM cogmem.store_put(%s, '{prefs}', 'lang', '{\"content\": \"Turkish\"}', 'Turkish')",
         (tenant,))  # fmt: skip
    own_rules = [rows(router, "SELECT cogmem.add_bios_rule('deployment', %s, tenant => %s)", (text, tenant))[0][0]
                 for text in ("Only the release captain deploys", "Deploys wait for the canary")]  # fmt: skip
    rows(router, "SELECT cogmem.retire_bios_rule(%s, 'no canary any more')", (own_rules[1],))
    for version, rules in (("1", ["Tag every release", "Announce deploys"]), ("2", ["Tag every release"])):
        own_rules += [r for (r,) in rows(  # the second version retires a rule, by an event of its load
            router, "SELECT rule_id FROM cogmem.load_bios_preset('team', %s, 'Team rules', '', %s, tenant => %s)",
            (version, json.dumps([{"category": "deployment", "rule": r} for r in rules]), tenant))]  # fmt: skip
    rows(router, "SELECT cogmem.seal_audit()")
    before = tenant_rows(old, tenant)
    events = ("SELECT rule_id, event, reason, load_id FROM cogmem.bios_rule_events WHERE rule_id = ANY (%s) "
              "ORDER BY event_id")  # fmt: skip
    rule_events = rows(old, events, (own_rules,))
    memories = rows(old, "SELECT memory_id, content FROM cogmem.memories WHERE tenant = %s ORDER BY 1", (tenant,))
    assert before["memories"] >= 3 and before["audit_chain"] > 0 and tenant_rows(new, tenant) == {}

    if fail_after:
        with pytest.raises(MoveInterrupted):
            move_tenant(router, tenant, 1, fail_after=fail_after)
        # Nothing is lost: one shard or the other holds every row.
        assert before in (tenant_rows(old, tenant), tenant_rows(new, tenant))
    assert move_tenant(router, tenant, 1) == [tenant]

    assert tenant_rows(old, tenant) == {} and tenant_rows(new, tenant) == before
    assert rows(new, "SELECT memory_id, content FROM cogmem.memories WHERE tenant = %s ORDER BY 1",
                (tenant,)) == memories  # the same ids  # fmt: skip
    assert rows(router, "SELECT ok FROM cogmem.verify_audit(%s)", (tenant,)) == [(True,)]
    assert rows(router, "SELECT cogmem.vault_get(%s, 'db/prod')", (tenant,)) == [("s3cret",)]
    assert rows(router, "SELECT count(*) FROM cogmem.explain_recall(%s)", (recall_id,))[0][0] > 0  # its id routes
    assert len(rule_events) == 2 and rule_events[0][3] is None and rule_events[1][3] >= KEYED  # a keyed load id
    assert rows(new, events, (own_rules,)) == rule_events  # with the ids of the tenant's own load
    assert rows(old, events, (own_rules,)) == []
    rows(router, "SELECT cogmem.retire_bios_rule(%s, 'moved on')", (own_rules[0],))  # routes to the new shard
    assert rows(new, "SELECT rule FROM cogmem.active_bios_rules WHERE rule_id = ANY (%s)",
                (own_rules,)) == [("Tag every release",)]  # fmt: skip
    (added,) = rows(router, "SELECT cogmem.add_bios_rule('deployment', 'Canary first', tenant => %s)", (tenant,))[0]
    assert added not in own_rules and rows(new, "SELECT tenant FROM cogmem.bios_rules WHERE rule_id = %s",
                                           (added,)) == [(tenant,)]  # fmt: skip
    rows(router, "SELECT * FROM cogmem.remember(%s, 'Written after the move')", (tenant,))
    assert rows(new, "SELECT count(*) FROM cogmem.memories WHERE tenant = %s", (tenant,)) == [(len(memories) + 1,)]
    rows(router, "SELECT cogmem.seal_audit()")
    assert rows(router, "SELECT ok FROM cogmem.verify_audit(%s)", (tenant,)) == [(True,)]  # the chain goes on


def test_the_gut_releases_from_every_shards_tenants_together(sharded):
    import copy

    from psycopg.types.json import Jsonb

    from cogmem_pg.shards import partitions_of, share_gut_key
    from tests.conftest import blend, unit_vector
    from tests.test_gut import BACKUP, BACKUP_TEXTS, CARD, invented_rows

    router, nodes = sharded["router"], sharded["nodes"]
    for node in nodes:  # the same settings everywhere; a budget that lets six tenants publish
        rows(node, "UPDATE cogmem.gut_settings SET epsilon_per_period = 10000, delta = 1e-4, k = 5, "
                   "max_patterns_per_tenant = 2")  # fmt: skip
    teams = [t for _ in range(3) for t in one_tenant_per_node(sharded).values()]  # three on each node
    for n, tenant in enumerate(teams):
        text = BACKUP_TEXTS[n % len(BACKUP_TEXTS)].format(n=n)
        vector = blend(BACKUP, unit_vector(1000 * n + len(text)), 0.25)
        rows(
            router, "SELECT * FROM cogmem.remember(%s, %s, 'long_term', NULL, %s::vector)", (tenant, text, str(vector))
        )
        rows(router, "SELECT * FROM cogmem.gut_configure(%s, contribute => true)", (tenant,))
    for node in nodes:
        rows(node, "UPDATE cogmem.memory_stats SET outcome_count = 1, outcome_sum = 1 WHERE tenant = ANY (%s)",
             (teams,))  # fmt: skip
        rows(node, "CALL cogmem.gut_nightly(release => false)")  # each shard collects its own
        assert rows(node, "SELECT count(DISTINCT tenant) FROM cogmem.gut_contributions WHERE tenant = ANY (%s)",
                    (teams,)) == [(3,)]  # fewer than k on either shard alone  # fmt: skip
    released = rows(router, "SELECT published, threshold FROM cogmem.gut_release(900)")
    assert released[0][0] >= 1, released
    published = [rows(node, "SELECT pattern_id, content, support, withdrawn_release FROM cogmem.gut_patterns "
                            "ORDER BY pattern_id") for node in nodes]  # fmt: skip
    ledgers = [
        rows(node, "SELECT release_id, epsilon, published FROM cogmem.gut_releases ORDER BY 1") for node in nodes
    ]
    assert published[0] and published[0] == published[1] and ledgers[0] == ledgers[1]
    assert any("backup" in content for _, content, _, withdrawn in published[0] if withdrawn is None)
    # Issue 37: one key on every node signs what each exports and what the release says; the node that
    # drew the release audited it, the other imported it, charged to its ledger, and audited that.
    keys = {rows(node, "SELECT shard_key FROM cogmem.gut_shard_key")[0][0] for node in nodes}
    assert len(keys) == 1 and share_gut_key(partitions_of(router)) == NODES
    assert {rows(node, "SELECT shard_key FROM cogmem.gut_shard_key")[0][0] for node in nodes} == keys  # kept
    assert [rows(node, "SELECT cogmem.gut_export() ? 'signature'") for node in nodes] == [[(True,)]] * NODES
    audited = "SELECT (detail ->> 'release_id')::bigint FROM cogmem.audit_log WHERE event = %s ORDER BY 1"
    ids = [release_id for release_id, _, _ in ledgers[0]]
    assert [r for (r,) in rows(nodes[0], audited, ("gut_released",))] == ids
    assert [r for (r,) in rows(nodes[1], audited, ("gut_imported",))] == ids
    assert rows(nodes[1], "SELECT spent FROM cogmem.gut_ledger") == rows(
        nodes[0], "SELECT spent FROM cogmem.gut_ledger"
    )
    # The same state again changes nothing; a forged one, or rows of invented tenants, are refused.
    state = rows(nodes[0], "SELECT cogmem.gut_state()")[0][0]
    assert rows(nodes[1], "SELECT cogmem.gut_import(%s)", (Jsonb(state),)) == [(0,)]
    forged = copy.deepcopy(state)
    forged["patterns"][0] |= {"content": CARD, "support": 4000}
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="not signed by a node of this cluster"):
        rows(nodes[1], "SELECT cogmem.gut_import(%s)", (Jsonb(forged),))
    invented = invented_rows() | {"exported_at": rows(router, "SELECT to_jsonb(now())")[0][0]}
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as raised:
        rows(router, "SELECT * FROM cogmem.gut_release(1.0, gathered => %s)", (Jsonb([invented]),))
    assert raised.value.diag.message_primary == "a Gut export not signed by a node of this cluster is refused"
    assert [
        rows(node, "SELECT release_id, epsilon, published FROM cogmem.gut_releases ORDER BY 1") for node in nodes
    ] == [ledgers[0]] * NODES
    assert "paste" not in json.dumps(rows(nodes[1], "SELECT content FROM cogmem.gut_patterns")).lower()


def test_the_gut_is_scheduled_to_collect_on_every_shard_then_release_through_the_router(sharded):
    from cogmem_pg.shards import GUT_COLLECT, GUT_RELEASE, schedule_gut

    done = schedule_gut(sharded["router"], release_cron="45 4 * * *", collect_cron="15 4 * * *")
    assert len(done) == NODES + 1  # each node once, however many partitions it holds
    jobs = "SELECT schedule, command, database FROM cron.job WHERE jobname = %s"
    for node in sharded["nodes"]:
        assert rows(node, jobs, ("cogmem-gut",)) == [("15 4 * * *", GUT_COLLECT, "cogmem")]
    router_cluster = sharded["all"][0]
    assert rows(router_cluster.dsn(), jobs, ("cogmem-gut-release",)) == [("45 4 * * *", GUT_RELEASE, ROUTER_DATABASE)]
    schedule_gut(sharded["router"], release_cron="50 4 * * *")  # again: the jobs are rescheduled, not doubled
    assert rows(router_cluster.dsn(), jobs, ("cogmem-gut-release",)) == [("50 4 * * *", GUT_RELEASE, ROUTER_DATABASE)]
