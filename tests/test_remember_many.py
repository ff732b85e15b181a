"""sql/061-remember-many.sql: a batch through the same path as remember()."""

import json

import numpy as np
import psycopg
import pytest

from tests.conftest import blend, one, unit_vector
from tests.test_remember import RULE, remember


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
