"""sql/061-remember-many.sql: a batch through the same path as remember()."""

import json

import numpy as np
import psycopg
import pytest

from cogmem_pg.client import Client
from tests.cli_helpers import invoke
from tests.conftest import blend, one, unit_vector
from tests.test_remember import RULE, remember
from tests.test_supersession import NEW, OLD


def remember_many(db, tenant, items, embeddings=None, skip=()):
    vectors = None if embeddings is None else [np.asarray(e, dtype=np.float32) for e in embeddings]
    return db.execute(
        "SELECT * FROM cogmem.remember_many(%s, %s, %b, %s)", (tenant, json.dumps(items), vectors, list(skip))
    ).fetchall()


def test_remember_many_checks_every_item_as_remember_does(db, tenant):
    """Within the batch and against the tenant: a contradicting instruction is held, a near-duplicate by
    meaning is rehearsed, a look-alike with other details is kept, a secret is redacted."""
    night = unit_vector(1)
    rule = remember(db, tenant, "Sunucuyu gece yeniden başlatma.", ring="dos_and_donts", embedding=night)[0]
    nginx = unit_vector(7)
    rows = remember_many(
        db,
        tenant,
        [
            "Sunucuyu bu gece yeniden başlat.",  # contradicts the tenant's rule: held
            {"content": "The shop runs nginx behind a load balancer.", "ring": "long_term"},
            {"content": "The shop is running nginx behind the load balancer.", "ring": "long_term"},  # item 2 again
            {"content": "Staging runs nginx behind a load balancer.", "ring": "long_term"},  # other details
            "The deploy key is AKIAIOSFODNN7EXAMPLE",
        ],
        [
            blend(night, unit_vector(2), 0.2),
            nginx,
            blend(nginx, unit_vector(8), 0.1),
            blend(nginx, unit_vector(8), 0.1),
            unit_vector(9),
        ],
    )
    assert [(r[0], r[4]) for r in rows] == [(1, "conflict"), (2, "created"), (3, "duplicate"), (4, "created"),
                                            (5, "created")]  # fmt: skip
    assert rows[0][1] is None and rows[0][6] is not None and rows[0][7] == [rule]
    assert rows[2][1] == rows[1][1] and rows[3][1] != rows[1][1]
    assert rows[4][5] == ["api_token"]
    assert one(db, "SELECT count(*) FROM cogmem.open_conflicts(%s)", (tenant,)) == 1
    # Skipping the checks by meaning is a choice the caller names: then only the same text is one memory.
    skipped = remember_many(
        db, tenant, ["Restart web-1 tonight.", "Restart web-1 tonight!"], skip=["conflicts", "near_duplicates"]
    )
    assert [r[4] for r in skipped] == ["created", "duplicate"]
    with pytest.raises(psycopg.errors.InvalidParameterValue) as caught:
        remember_many(db, tenant, ["x"], skip=["redaction"])
    assert caught.value.diag.message_hint == "Skip near_duplicates, conflicts, both, or none ('{}', the default)."


@pytest.mark.parametrize("seed", [11, 12, 13, 14, 15, 16])
def test_a_checked_batch_ends_as_the_same_items_remembered_one_by_one(db, seed):
    """The items that stand alone are stored set-based, the rest one by one: the outcome per item and the
    memories kept must be what remember() gives called for each item in order, on a tenant alike."""
    rng = np.random.default_rng(seed)
    base = [unit_vector(100 * seed + k) for k in range(6)]
    texts = [
        ("Never restart the database servers at night.", "dos_and_donts"),
        ("The shop runs nginx behind a load balancer.", "long_term"),
        ("Sunucuyu gece yeniden başlatma.", "dos_and_donts"),
    ]
    for name in ("one_by_one", "batched"):
        db.execute("SELECT cogmem.create_tenant(%s)", (name,))
        for (content, ring), vector in zip(texts, base, strict=False):
            remember(db, name, content, ring=ring, embedding=vector)
    items, vectors = [], []
    candidates = [
        ("Restart the database servers tonight.", None, blend(base[0], unit_vector(7), 0.15)),  # contradicts
        ("The shop is running nginx behind the load balancer.", "long_term", blend(base[1], unit_vector(8), 0.1)),
        ("Staging runs nginx behind a load balancer.", "long_term", blend(base[1], unit_vector(8), 0.1)),
        ("Sunucuyu bu gece yeniden başlat.", None, blend(base[2], unit_vector(9), 0.2)),
        ("The deploy key is AKIAIOSFODNN7EXAMPLE", None, base[4]),
        ("The deploy key is AKIAIOSFODNN7EXAMPLE", None, base[4]),  # the same text twice in the batch
        ("Backups of db-1 run at 02:00.", "long_term", base[5]),
        ("db-1 is backed up every night at 02:00.", "long_term", blend(base[5], unit_vector(10), 0.1)),
        ("The shop runs nginx behind a load balancer.", "long_term", base[3]),  # a text the tenant holds
        ("Restart the database servers tonight.", None, base[3]),  # the same text as another item, far off
    ]
    for k in range(12):  # and unrelated texts, alone
        candidates.append((f"Fact number {k} about the {['shop', 'team', 'office'][k % 3]} and its plants.", None,
                           list(rng.standard_normal(384) / 20)))  # fmt: skip
    for index in rng.permutation(len(candidates)):
        content, ring, vector = candidates[index]
        items.append({"content": content} | ({"ring": ring} if ring else {}))
        vectors.append(vector)
    one_by_one = [
        db.execute(
            "SELECT ring, topics, action, redactions, conflict_id IS NOT NULL, conflicts_with"
            " FROM cogmem.remember('one_by_one', %s, %s, NULL, %s)",
            (item["content"], item.get("ring"), np.asarray(vector, dtype=np.float32)),
        ).fetchone()
        for item, vector in zip(items, vectors, strict=True)
    ]
    batched = [r[2:] for r in remember_many(db, "batched", items, vectors)]
    rows = [(r[0], r[1], r[2], r[3], r[4] is not None, r[5]) for r in batched]

    def texts_of(tenant, ids):
        by_id = "SELECT content FROM cogmem.memories WHERE tenant = %s AND memory_id = %s"
        return None if ids is None else sorted(one(db, by_id, (tenant, i)) for i in ids)

    assert [r[:5] for r in rows] == [r[:5] for r in one_by_one]
    assert [texts_of("batched", r[5]) for r in rows] == [texts_of("one_by_one", r[5]) for r in one_by_one]
    assert {"created", "duplicate"} <= {r[2] for r in rows}
    created_together = "SELECT count(*) FROM cogmem.audit_log WHERE tenant = 'batched' AND detail ? 'batch_item'"
    set_based = one(db, created_together)
    assert 10 <= set_based < len(items)  # the unrelated facts went set-based, the others one by one
    kept = "SELECT content, ring::text, topics FROM cogmem.memories WHERE tenant = %s ORDER BY content"
    assert db.execute(kept, ("batched",)).fetchall() == db.execute(kept, ("one_by_one",)).fetchall()
    stats = """SELECT m.content, s.rehearsal_count FROM cogmem.memories AS m JOIN cogmem.memory_stats AS s
               USING (tenant, memory_id) WHERE m.tenant = %s ORDER BY 1"""
    assert db.execute(stats, ("batched",)).fetchall() == db.execute(stats, ("one_by_one",)).fetchall()


def test_remember_many_stores_a_batch_in_order(db, tenant):
    before = remember(db, tenant, "The billing contact at Globex is Maria.")
    rows = remember_many(
        db,
        tenant,
        [
            {"content": RULE, "ring": "dos_and_donts"},  # random vectors: the ring is not the model's to guess
            {"content": "The nameservers of shop.example are at Cloudflare.", "topics": ["DNS", "dns"]},
            "never restart production servers -- during business hours",  # same text as item 1
            {"content": "db-1 password=hunter2, ask Ali", "ring": "long_term", "source": {"who": "ali"}},
            "The billing contact at Globex is Maria.",  # stored before this batch
        ],
        [unit_vector(1), unit_vector(2), unit_vector(3), unit_vector(4), unit_vector(5)],
        skip=["near_duplicates", "conflicts"],  # the set-based path; the same answers item by item
    )
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
    assert [r[2:6] for r in rows] == [
        ("dos_and_donts", ["server"], "created", []),
        ("fresh", ["dns"], "created", []),
        ("dos_and_donts", ["server"], "duplicate", []),
        ("long_term", ["access", "database", "security"], "created", ["password"]),
        ("fresh", ["billing"], "duplicate", []),
    ]
    assert rows[2][1] == rows[0][1] and rows[4][1] == before[0]
    stored = db.execute(
        "SELECT content, embedding = %b, source FROM cogmem.memories WHERE tenant = %s AND memory_id = %s",
        (np.asarray(unit_vector(4), dtype=np.float32), tenant, rows[3][1]),
    ).fetchone()
    assert stored == ("db-1 password=[REDACTED], ask Ali", True, {"who": "ali"})
    events = db.execute(
        "SELECT memory_id, event, detail ->> 'batch_item' FROM cogmem.audit_log "
        "WHERE tenant = %s AND level = 'write' AND detail ? 'batch_item' OR event = 'redacted' AND tenant = %s "
        "ORDER BY audit_id",
        (tenant, tenant),
    ).fetchall()
    assert sorted(events, key=lambda e: (e[2] or "9", e[1])) == sorted(
        [
            (rows[0][1], "created", "1"),
            (rows[1][1], "created", "2"),
            (rows[0][1], "rehearsed", "3"),
            (rows[3][1], "created", "4"),
            (rows[3][1], "redacted", None),
            (before[0], "rehearsed", "5"),
        ],
        key=lambda e: (e[2] or "9", e[1]),
    )
    heard = dict(
        db.execute("SELECT memory_id, rehearsal_count FROM cogmem.memory_stats WHERE tenant = %s", (tenant,)).fetchall()
    )
    assert heard == {before[0]: 1, rows[0][1]: 1, rows[1][1]: 0, rows[3][1]: 0}


@pytest.mark.parametrize(
    ("items", "embeddings", "sqlstate", "message"),
    [
        ([RULE, 3], None, "22023", "item 2 is neither a text nor an object"),
        ([RULE, {"content": "x", "rign": "fresh"}], None, "22023", "item 2 has unknown keys"),
        ([{"content": "  "}], None, "22023", "item 1 has empty content"),
        ([RULE, {"content": "x", "ring": "attic"}], None, "22023", 'item 2 has unknown ring "attic"'),
        ([{"content": "x", "topics": "dns"}], None, "22023", "item 1 has topics that are not an array"),
        ([{"content": "x", "source": []}], None, "22023", "item 1 has a source that is not an object"),
        (["x" * 9000], None, "22001", "item 1 has 9000 characters"),
        (["a", "b"], [[0.1] * 384], "22023", "1 embeddings for 2 items"),
        (["a", "b"], [[0.1] * 384, [0.1] * 3], "22023", "item 2 has an embedding of 3 dimensions"),
        (
            [{"content": "x", "supersedes": 7}],
            None,
            "22023",
            "item 1 has supersedes that is not an array of memory ids: 7",
        ),
        ([RULE, {"content": "x", "supersedes": [1.5]}], None, "22023", "item 2 has supersedes that is not an array of"),
        ([{"content": "x", "supersedes": ["7"]}], None, "22023", 'not an array of memory ids: ["7"]'),
        ([{"content": "x", "supersedes": [None]}], None, "22023", "not an array of memory ids: [null]"),
        ([{"content": "x", "supersedes": [10**20]}], None, "22023", "not an array of memory ids: [1000000"),
    ],
)
def test_remember_many_refuses_a_bad_item_and_stores_nothing(db, tenant, items, embeddings, sqlstate, message):
    with pytest.raises(psycopg.Error) as caught:
        remember_many(db, tenant, items, embeddings)
    assert caught.value.sqlstate == sqlstate and message in str(caught.value)
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE tenant = %s", (tenant,)) == 0


def test_remember_many_refuses_what_is_not_a_batch(db, tenant):
    for items, sqlstate in ((None, "22004"), ({"content": "x"}, "22023")):
        with pytest.raises(psycopg.Error) as caught:
            db.execute(
                "SELECT * FROM cogmem.remember_many(%s, %s)", (tenant, None if items is None else json.dumps(items))
            )
        assert caught.value.sqlstate == sqlstate
    assert remember_many(db, tenant, []) == []


def superseded_by(db, memory_id):
    return one(db, "SELECT superseded_by FROM cogmem.memories WHERE memory_id = %s", (memory_id,))


def test_an_item_replaces_what_it_names_as_remember_does(db, tenant, login):
    """An item's supersedes is remember()'s argument, here as the application login: the older memory is
    superseded (valid until the item's said_at, audited how = caller) and out of recall; [] detects
    nothing, while an item that says nothing is compared as remember() compares it."""
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (one(app, "SELECT current_user"), tenant))
    app.execute("SET cogmem.embed = 'off'")
    old = remember(app, tenant, "Invoices go to accounts@fernleaf.com.", said_at="2026-03-01")[0]
    kept = remember(app, tenant, "Standup is at 9:30.", said_at="2026-03-01")[0]
    moved = remember(app, tenant, OLD, said_at="2026-03-01")[0]
    question = "SELECT memory_id FROM cogmem.recall(%s, 'Where do the invoices go?') WHERE memory_id IS NOT NULL"
    assert old in [r[0] for r in app.execute(question, (tenant,)).fetchall()]
    rows = remember_many(
        app,
        tenant,
        [
            # Nothing in common with the old text: only the caller knows it replaces it.
            {"content": "Send the bills to finance@fernleaf.io.", "said_at": "2026-04-01", "supersedes": [old]},
            {"content": "Actually standup is at 9:45 now.", "said_at": "2026-04-01", "supersedes": []},
            {"content": NEW, "said_at": "2026-04-01"},
        ],
    )
    assert [r[4] for r in rows] == ["created", "created", "created"]
    assert db.execute(
        "SELECT superseded_by, valid_until::date::text FROM cogmem.memory_overview WHERE memory_id = %s", (old,)
    ).fetchone() == (rows[0][1], "2026-04-01")
    audit = "SELECT detail FROM cogmem.audit_log WHERE tenant = %s AND memory_id = %s AND event = 'superseded'"
    assert db.execute(audit, (tenant, old)).fetchall() == [
        ({"by": rows[0][1], "how": "caller", "valid_until": "2026-04-01T00:00:00+00:00"},)
    ]
    assert old not in [r[0] for r in app.execute(question, (tenant,)).fetchall()]
    assert superseded_by(db, kept) is None  # []: the correction is not looked for
    assert superseded_by(db, moved) == rows[2][1]  # no supersedes: detected, as remember() does
    assert db.execute(audit, (tenant, moved)).fetchone()[0]["how"] == "detected"


def test_an_item_that_names_what_it_may_not_replace_fails_the_batch(db, tenant, login):
    """A wrong id, another tenant's, another person's: remember()'s error and HINT, naming the item, and
    nothing of the batch stored. The item's own scope decides what it may name."""
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (one(app, "SELECT current_user"), tenant))
    app.execute("SET cogmem.embed = 'off'")
    db.execute("SELECT cogmem.create_tenant('globex')")
    theirs = remember(db, "globex", "Invoices go to ap@globex.com.")[0]
    bens = remember(app, tenant, "Ben's invoices go to ben@fernleaf.com.", person="ben")[0]
    mine = remember(app, tenant, "Invoices go to accounts@fernleaf.com.")[0]
    with pytest.raises(psycopg.errors.NoDataFound) as by_remember:
        remember(app, tenant, "Invoices: finance@fernleaf.io", supersedes=[theirs])
    stored = "SELECT count(*) FROM cogmem.memories WHERE tenant = %s"
    count = one(db, stored, (tenant,))
    for ids in ([mine, 2**62], [theirs], [bens]):
        with pytest.raises(psycopg.errors.NoDataFound) as caught:
            remember_many(
                app, tenant, ["Standup is at 9:30.", {"content": "Invoices: finance@fernleaf.io", "supersedes": ids}]
            )
        assert caught.value.diag.message_primary == (
            'item 2: supersedes names memories tenant "acme" does not have in this scope; '
            "nothing of this batch was stored"
        )
        assert caught.value.diag.message_hint == by_remember.value.diag.message_hint
        assert "same person and agent" in caught.value.diag.message_hint
        assert one(db, stored, (tenant,)) == count
    assert superseded_by(db, mine) is None
    with pytest.raises(psycopg.errors.InvalidParameterValue) as caught:
        remember_many(app, tenant, [{"content": "Invoices: finance@fernleaf.io", "supersedes": str(mine)}])
    assert "supersedes is an array of the memory ids the item replaces, [] for none;" in caught.value.diag.message_hint
    # Ben's item may name Ben's memory, and only his.
    rows = remember_many(
        app, tenant, [{"content": "Ben's bills: ben@fernleaf.io", "person": "ben", "supersedes": [bens]}]
    )
    assert superseded_by(db, bens) == rows[0][1]


def test_an_item_that_replaces_goes_through_the_one_store(db, tenant):
    """With embeddings, items that no check relates to anything are stored set-based; one that names what
    it replaces, and the items of its text, go through remember()'s store in order, as remember() one by
    one would: the first of a text is stored, the others rehearse it and replace nothing. A batch that
    skips the checks by meaning still marks what an item replaces."""
    vpn = remember(db, tenant, "The VPN gateway is vpn1.acme.io.", ring="long_term", embedding=unit_vector(1))[0]
    backups = remember(db, tenant, "Backups run at 02:00.", ring="long_term", embedding=unit_vector(2))[0]
    office = remember(db, tenant, "The office closes at 18:00.", ring="long_term", embedding=unit_vector(3))[0]
    items = [
        "The plants in the lobby are watered on Mondays.",
        {"content": "Use the jump host for prod.", "supersedes": [vpn]},
        "Use the jump host for prod.",
        "Backups are kept for a week.",
        {"content": "Backups are kept for a week.", "supersedes": [backups]},
    ]
    vectors = [unit_vector(10), unit_vector(11), unit_vector(11), unit_vector(12), unit_vector(12)]
    rows = remember_many(
        db, tenant, [{"ring": "long_term"} | ({"content": i} if isinstance(i, str) else i) for i in items], vectors
    )
    assert [r[4] for r in rows] == ["created", "created", "duplicate", "created", "duplicate"]
    assert rows[2][1] == rows[1][1] and rows[4][1] == rows[3][1]
    assert superseded_by(db, vpn) == rows[1][1]
    assert superseded_by(db, backups) is None  # item 4 came first and named nothing
    set_based = (
        "SELECT memory_id FROM cogmem.audit_log WHERE tenant = %s AND event = 'created' AND detail ? 'batch_item'"
    )
    assert [r[0] for r in db.execute(set_based, (tenant,)).fetchall()] == [rows[0][1]]
    rows = remember_many(
        db,
        tenant,
        [{"content": "The office closes at 19:00 now.", "supersedes": [office]}, "Lunch is at noon."],
        [unit_vector(20), unit_vector(21)],
        skip=["near_duplicates", "conflicts"],
    )
    assert [r[4] for r in rows] == ["created", "created"]
    assert superseded_by(db, office) == rows[0][1]


def test_the_client_and_the_cli_pass_an_items_supersedes(dsn, db, tenant, tmp_path):
    with Client(dsn, embedder=False) as client:
        first = client.remember(tenant, "The VPN gateway is vpn1.acme.io.").memory_id
        (second,) = client.remember_many(tenant, [{"content": "Use the jump host for prod.", "supersedes": [first]}])
    assert superseded_by(db, first) == second.memory_id
    lines = tmp_path / "batch.jsonl"
    lines.write_text(
        json.dumps({"content": "Prod goes through bastion-2 now.", "supersedes": [second.memory_id]}) + "\n",
        encoding="utf-8",
    )
    result = invoke("--dsn", dsn, "remember-many", tenant, str(lines), "--json")
    assert result.exit_code == 0, result.output
    assert superseded_by(db, second.memory_id) == json.loads(result.output)["memory_id"]
    lines.write_text('"A line that is fine."\n{"content": "Prod is bastion-3.", "supersedes": [999999]}\n')
    result = invoke("--dsn", dsn, "remember-many", tenant, str(lines))
    assert result.exit_code == 1
    assert "item 2: supersedes names memories" in result.output and "(P0002)" in result.output
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE tenant = %s", (tenant,)) == 3


@pytest.mark.parametrize("skip", [(), ("conflicts", "near_duplicates")])
def test_a_rule_among_other_sentences_is_a_candidate_as_remember_makes_it(db, tenant, skip):
    from tests.test_candidates import BURIED

    rows = remember_many(db, tenant, [BURIED, "The office plant is a ficus."], skip=skip)
    assert [(r[2], r[8]) for r in rows] == [("fresh", "dos_and_donts"), ("fresh", None)]
    kept = db.execute(
        "SELECT content, ring::text, candidate_ring::text, excerpt_of FROM cogmem.memories WHERE memory_id = %s",
        (rows[0][9],),
    ).fetchone()
    said = "Please never book us anything near the airport again, the noise kept us up all night."
    assert kept == (said, "fresh", "dos_and_donts", rows[0][1])
