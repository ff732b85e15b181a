"""sql/016-large-tenants.sql: a large tenant gets indexes of its own, and recall reads only their reach.

The same answers with and without the indexes (the reach holds what recall ranks), the same boundaries
(scope, supersession, never-cut rings), the statements an administrator runs, and the CLI that runs them.
"""

from __future__ import annotations

import json

import numpy as np
import psycopg
import pytest

from bench.workload import memories
from cogmem_pg.client import Client
from tests.cli_helpers import invoke
from tests.conftest import blend, one, unit_vector

MESSAGES = [
    "Can we restart web-1 tonight or is there a rule against it?",
    "Who is the billing contact for Globex and when do they pay?",
    "How do I restore the database from last night's backup?",
    "What happened the last time a kernel update took a server down?",
]


def load(db, tenant: str, total: int) -> list[int]:
    """TOTAL workload memories (their own ring and topics, a random vector each), and one conversation."""
    rows = list(memories(total, tenants=1, seed=3))
    items = [
        {"content": f"{m.content} (note {n})", "ring": m.ring, "topics": list(m.topics)} for n, m in enumerate(rows)
    ]
    items += [
        {"content": text, "conversation": "c1", "speaker": who, "said_at": f"2026-11-0{n + 1}T10:00:00Z"}
        for n, (who, text) in enumerate(
            [("Dana", "We moved the backups to the new NAS last week."), ("Sam", "Which one, the one in rack 4?"),
             ("Dana", "Yes, rack 4, and the restore test passed."), ("Sam", "Great, thanks for checking.")]
        )
    ]  # fmt: skip
    vectors = [np.array(unit_vector(n), dtype=np.float32) for n in range(len(items))]
    return [
        r[0]
        for r in db.execute(
            "SELECT memory_id FROM cogmem.remember_many(%s, %s, %s, skip => '{near_duplicates,conflicts}')",
            (tenant, json.dumps(items), vectors),
        )
    ]


def build(db, tenant: str) -> None:
    for (statement,) in db.execute(
        "SELECT statement FROM cogmem.tenant_indexes(1) WHERE tenant = %s AND statement IS NOT NULL", (tenant,)
    ).fetchall():
        for part in statement.split("; "):
            db.execute(part)


def recall(db, tenant: str, message: str, vector, **kw) -> list[tuple]:
    args = "".join(f", {k} => %({k})s" for k in kw)
    return db.execute(
        f"SELECT layer, memory_id, round(score::numeric, 5) FROM cogmem.recall(%(t)s, %(m)s, %(v)s::vector{args})",
        {"t": tenant, "m": message, "v": vector, **kw},
    ).fetchall()


def test_what_an_administrator_is_told_to_build_and_drop(db, tenant, login):
    load(db, tenant, 120)
    db.execute("SELECT cogmem.create_tenant('small')")
    rows = db.execute("SELECT * FROM cogmem.tenant_indexes(100)").fetchall()
    assert [(r[0], r[1], r[3]) for r in rows] == [(tenant, 124, "to build")] * 3
    assert {r[4].split(" ON ")[0] for r in rows} == {f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {r[2]}" for r in rows}
    assert "USING hnsw (embedding public.vector_cosine_ops) WHERE tenant = 'acme'" in rows[0][4] + rows[1][4]
    build(db, tenant)
    assert one(db, "SELECT cogmem._tenant_indexed('acme')") is True
    assert {r[3] for r in db.execute("SELECT * FROM cogmem.tenant_indexes(100)")} == {"ready"}
    # Between half the size and the size a tenant keeps its indexes; below half they go.
    assert {r[3] for r in db.execute("SELECT * FROM cogmem.tenant_indexes(200)")} == {"ready"}
    dropped = db.execute("SELECT state, statement FROM cogmem.tenant_indexes(1000)").fetchall()
    assert {r[0] for r in dropped} == {"to drop"} and all(r[1].startswith("DROP INDEX CONCURRENTLY") for r in dropped)
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="above must be a positive number"):
        db.execute("SELECT * FROM cogmem.tenant_indexes(0)")
    app = login("cogmem_app")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute("SELECT * FROM cogmem.tenant_indexes(100)")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute("SELECT * FROM cogmem._recall_reach(NULL, '{}', '{}', NULL, '{}', NULL, NULL, false)")


def test_recall_gives_the_same_answers_through_the_indexes(db, tenant):
    ids = load(db, tenant, 1500)
    messages = [(m, blend(unit_vector(7 * n + 3), unit_vector(9000 + n), 0.6))
                for n, m in enumerate(MESSAGES)]  # fmt: skip
    messages.append(("Which rack are the backups in now?", unit_vector(len(ids) - 3)))
    # A budget past the never-cut rings (a seventh of the tenant), so that the rest is compared too.
    before = [recall(db, tenant, m, v, budget=20000) for m, v in messages]
    build(db, tenant)
    reach = one(
        db,
        "SELECT cardinality(r.reach) FROM cogmem.tenants AS t, cogmem._recall_reach(t, '{shocks,dos_and_donts}', "
        "'{}', %s::vector, '{backup,rack}', NULL, NULL, false) AS r WHERE t.tenant = 'acme'",
        (messages[0][1],),
    )
    assert 200 <= reach < len(ids) / 2  # what the indexes reach, not the tenant
    after = [recall(db, tenant, m, v, budget=20000) for m, v in messages]
    for b, a in zip(before, after, strict=True):
        assert [r[:2] for r in a] == [r[:2] for r in b]
        assert [float(r[2]) for r in a] == pytest.approx([float(r[2]) for r in b], abs=1e-4)  # sums in another order
    # The turn asked about and the turns around it (its window), as before.
    assert set(ids[-4:-1]) <= {r[1] for r in after[-1]}


def test_the_boundaries_hold_through_the_indexes(db, tenant):
    load(db, tenant, 300)
    vector = unit_vector(777)
    mine = one(db, "SELECT memory_id FROM cogmem.remember('acme', 'Ayla never wants calls on Sundays.', "
                   "'dos_and_donts', person => 'ayla', embedding => %s::vector)", (vector,))  # fmt: skip
    old = one(db, "SELECT memory_id FROM cogmem.remember('acme', 'The VPN gateway is vpn-7.', 'long_term', "
                  "embedding => %s::vector)", (blend(vector, unit_vector(778), 0.9),))  # fmt: skip
    new = one(
        db,
        "SELECT memory_id FROM cogmem.remember('acme', 'Actually the VPN gateway is vpn-9 now.', 'long_term', "
        "embedding => %s::vector, supersedes => %s::bigint[])",
        (blend(vector, unit_vector(779), 0.9), [old]),
    )
    never_cut = {r[0] for r in db.execute("SELECT memory_id FROM cogmem.memories WHERE tenant = 'acme' "
                                          "AND ring IN ('shocks', 'dos_and_donts') AND person IS NULL")}  # fmt: skip
    build(db, tenant)
    seen = {r[1] for r in recall(db, tenant, "Which VPN gateway, and can I call Ayla?", vector)}
    assert mine not in seen and old not in seen and new in seen
    assert never_cut <= seen  # every never-cut memory, related or not: fewer than 500
    assert mine in {r[1] for r in recall(db, tenant, "Can I call Ayla?", vector, person="ayla")}
    assert old in {r[1] for r in recall(db, tenant, "What was the previous VPN gateway?", vector)}


def test_what_replaced_a_fact_is_found_through_the_indexes(db, tenant):
    load(db, tenant, 300)
    asked = unit_vector(881)
    old = one(db, "SELECT memory_id FROM cogmem.remember('acme', 'Our courier is Parcelwise.', 'long_term', "
                  "embedding => %s::vector)", (blend(asked, unit_vector(882), 0.95),))  # fmt: skip
    # The newer is far from the question in meaning and shares no word with it: only the older finds it.
    new = one(db, "SELECT memory_id FROM cogmem.remember('acme', 'Deliveries go with Nordfrakt from Monday.', "
                  "'long_term', embedding => %s::vector, supersedes => %s::bigint[])",
              (unit_vector(883), [old]))  # fmt: skip
    before = [r[1] for r in recall(db, tenant, "Which courier do we use?", asked)]
    build(db, tenant)
    after = [r[1] for r in recall(db, tenant, "Which courier do we use?", asked)]
    assert new in before and new in after and old not in after
    assert old in {r[1] for r in recall(db, tenant, "Which courier did we use before?", asked)}


def test_the_cli_lists_and_builds_them(dsn, db, tenant):
    load(db, tenant, 60)
    with Client(dsn, embedder=False) as client:
        assert {(i.tenant, i.state) for i in client.tenant_indexes(50)} == {("acme", "to build")}
    listed = invoke("--dsn", dsn, "index-tenants", "--above", "50")
    assert listed.exit_code == 0 and listed.output.count("to build") == 3
    applied = invoke("--dsn", dsn, "index-tenants", "--above", "50", "--apply", "--memory", "64MB", "--json")
    built = json.loads(applied.output)
    assert [b["state"] for b in built] == ["to build"] * 3
    assert one(db, "SELECT cogmem._tenant_indexed('acme')") is True
    assert invoke("--dsn", dsn, "index-tenants", "--above", "50").output.count("ready") == 3
    # Built for a tenant far below the default size: the doctor says to drop them.
    found = {c["check"]: c for c in map(json.loads, invoke("--dsn", dsn, "doctor", "--json").output.splitlines())}
    assert found["large"]["status"] == "warn" and "acme" in found["large"]["finding"]
    assert found["large"]["fix"] == "cogmem index-tenants --apply"


def test_remember_finds_near_duplicates_and_conflicts_through_the_index(db, tenant):
    load(db, tenant, 200)
    first = blend(unit_vector(501), unit_vector(502), 0.05)
    db.execute("SELECT cogmem.remember('acme', 'The staging database listens on port 5433.', 'long_term', "
               "embedding => %s::vector)", (unit_vector(501),))  # fmt: skip
    build(db, tenant)
    again = db.execute(
        "SELECT action, conflicts_with FROM cogmem.remember('acme', 'The staging DB listens on port 5433.', "
        "'long_term', embedding => %s::vector)",
        (first,),
    ).fetchone()
    assert again[0] == "duplicate"  # the near-duplicate, found through the index
    held = db.execute(
        "SELECT action, conflicts_with FROM cogmem.remember('acme', 'Never let the staging database listen on port "
        "5433.', 'dos_and_donts', embedding => %s::vector)",
        (blend(unit_vector(501), unit_vector(503), 0.2),),
    ).fetchone()
    assert held[0] != "duplicate"
