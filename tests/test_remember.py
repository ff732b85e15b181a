"""sql/060-remember.sql: the inbound path."""

import json
import math
import threading

import numpy as np
import psycopg
import pytest

from tests.conftest import blend, named, one, unit_vector

# Tests here send no embedding and the server does not embed: the cues model routes (sql/030-routing.sql).
RULE = "Never restart production servers during business hours."


def remember(db, tenant, content, **args):
    """Calls cogmem.remember with named arguments, as an application would."""
    if isinstance(args.get("embedding"), list):
        args["embedding"] = np.asarray(args["embedding"], dtype=np.float32)
    query = (
        f"SELECT memory_id, ring, topics, action, redactions FROM cogmem.remember(%(tenant)s, %(content)s{named(args)})"
    )
    return db.execute(query, {"tenant": tenant, "content": content, **args}).fetchone()


def test_remember_routes_tags_and_stores(db, tenant):
    source = {"who": "ayse", "channel": "slack", "conversation": "ops-monday"}
    row = remember(db, tenant, RULE, source=json.dumps(source))
    assert row[1:] == ("dos_and_donts", ["server"], "created", [])
    memory = db.execute(
        "SELECT ring::text, content, topics, language::text, token_estimate, confidence, recall_count, "
        "reinforced, embedding, source, search @@ 'restart'::tsquery, created_at IS NOT NULL, last_recalled_at "
        "FROM cogmem.memories JOIN cogmem.memory_stats USING (tenant, memory_id) "
        "WHERE tenant = %s AND memory_id = %s",
        (tenant, row[0]),
    ).fetchone()
    assert memory == (
        "dos_and_donts",
        RULE,
        ["server"],
        "english",
        math.ceil(len(RULE) / 4),
        0.5,
        0,
        False,
        None,
        source,
        True,
        True,
        None,
    )
    events = db.execute("SELECT event, detail->>'routed' FROM cogmem.memory_history").fetchall()
    assert events == [("created", "true")]


def test_explicit_ring_and_topics_win(db, tenant):
    row = remember(db, tenant, "Ali prefers calls in the morning", ring="habits", topics=["Meeting", " people "])
    assert row[1:4] == ("habits", ["meeting", "people"], "created")


def test_turkish_is_tagged_and_a_rule_the_model_is_unsure_of_stays_fresh(db):
    db.execute("SELECT cogmem.create_tenant('firma', 'turkish')")
    # Without an embedding the model is conservative: below its threshold, a rule goes to fresh.
    probability = one(
        db, "SELECT (probabilities->>'dos_and_donts')::real FROM cogmem.classify('Sunucuyu gece restart etme')"
    )
    threshold = one(
        db, "SELECT threshold FROM cogmem._routing_model() WHERE model = 'cues' AND label = 'dos_and_donts'"
    )
    row = remember(db, "firma", "Sunucuyu gece restart etme")
    assert row[1:4] == ("dos_and_donts" if probability >= threshold else "fresh", ["server"], "created")


def test_same_text_is_rehearsed_not_inserted(db, tenant):
    first = remember(db, tenant, RULE)
    again = remember(db, tenant, "  never restart PRODUCTION servers -- during business hours ")
    assert again == (first[0], "dos_and_donts", ["server"], "duplicate", [])
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 1
    row = db.execute("SELECT rehearsal_count, last_recalled_at IS NOT NULL FROM cogmem.memory_stats").fetchone()
    assert row == (1, True)
    assert one(db, "SELECT detail->>'match' FROM cogmem.memory_history WHERE event = 'rehearsed'") == "same_text"


def test_near_duplicate_by_meaning_is_rehearsed(db, tenant):
    base = unit_vector(1)
    first = remember(db, tenant, "Restart nginx only after a config test", embedding=base)
    near = blend(base, unit_vector(2), 0.2)  # cosine about 0.97
    again = remember(db, tenant, "Only restart nginx once the config test passed", embedding=near)
    assert again[0] == first[0] and again[3] == "duplicate"
    far = blend(base, unit_vector(3), 0.5)  # cosine about 0.7
    other = remember(db, tenant, "nginx restarts need a config test first", embedding=far)
    assert other[3] == "created"
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 2


def test_siblings_with_different_details_are_both_kept(db, tenant):
    base = unit_vector(7)
    a = remember(db, tenant, "web-1 listens on 10.0.0.5 port 8080", embedding=base)
    b = remember(db, tenant, "web-2 listens on 10.0.0.6 port 8080", embedding=blend(base, unit_vector(8), 0.1))
    assert a[3] == b[3] == "created"
    assert a[0] != b[0]


def test_card_numbers_and_secrets_are_redacted_before_storage(db, tenant):
    row = remember(db, tenant, "Customer paid with 4111 1111 1111 1111, admin password=hunter2")
    assert row[3:] == ("created", ["pan", "password"])
    content = one(db, "SELECT content FROM cogmem.memories WHERE memory_id = %s", (row[0],))
    assert content == "Customer paid with [REDACTED:PAN], admin password=[REDACTED]"
    everything = one(db, "SELECT string_agg(t::text, ' ') FROM cogmem.memory_history AS t")
    assert "4111" not in everything and "hunter2" not in everything
    redacted = one(db, "SELECT detail FROM cogmem.memory_history WHERE event = 'redacted'")
    assert redacted == {"kinds": ["pan", "password"]}


BAD = [
    ((None, "x"), {}, "22004", "tenant must not be NULL"),
    (("", "x"), {}, "22023", "tenant must not be empty"),
    (("ghost", "x"), {}, "42704", 'unknown tenant "ghost"'),
    (("acme", None), {}, "22004", "content must not be NULL"),
    (("acme", "   "), {}, "22023", "content must not be empty"),
    (("acme", "x" * 8001), {}, "22001", 'content has 8001 characters, the limit for tenant "acme" is 8000'),
    (("acme", "x"), {"ring": "short_term"}, "22023", 'unknown ring "short_term"'),
    (("acme", "x"), {"ring": "bios"}, "22023", 'unknown ring "bios"'),
    (("acme", "x"), {"source": "[1]"}, "22023", "source must be a JSON object, got array"),
    (("acme", "x"), {"embedding": "[1,2,3]"}, "22023", "embedding has 3 dimensions, expected 384"),
]


@pytest.mark.parametrize(("args", "kwargs", "sqlstate", "message"), BAD)
def test_bad_input_is_refused_and_nothing_is_written(db, tenant, args, kwargs, sqlstate, message):
    with pytest.raises(psycopg.Error) as err:
        remember(db, *args, **kwargs)
    assert err.value.sqlstate == sqlstate
    assert err.value.diag.message_primary == message
    assert err.value.diag.message_hint
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 0
    assert one(db, "SELECT count(*) FROM cogmem.memory_history") == 0


def test_concurrent_remembers_of_the_same_text_store_it_once(db, dsn, tenant):
    texts = [f"Server web-{i} runs nginx." for i in range(40)]
    results: list[tuple] = []

    def worker() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SET cogmem.embed = 'off'")
            for text in texts:
                results.append(
                    conn.execute("SELECT memory_id, action FROM cogmem.remember(%s, %s)", (tenant, text)).fetchone()
                )

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 40
    assert sorted(action for _, action in results).count("created") == 40
    assert len(results) == 120 and len({memory_id for memory_id, _ in results}) == 40


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


@pytest.mark.parametrize(
    "variant",
    [
        "Never restart production\u200b servers during business hours.",  # a zero-width space
        "Never restart production servers during business\u00ad hours.",  # a soft hyphen
        "Ｎｅｖｅｒ restart production servers during business hours.",  # full-width letters
        "NEVER restart production servers, during business hours",  # case, punctuation (as before)
    ],
)
def test_the_same_text_in_disguise_is_the_same_memory(db, tenant, variant):
    first = remember(db, tenant, RULE, ring="dos_and_donts")
    again = remember(db, tenant, variant, ring="dos_and_donts")
    assert (again[0], again[3]) == (first[0], "duplicate")
    batch = db.execute(
        "SELECT memory_id, action FROM cogmem.remember_many(%s, %s, skip => '{near_duplicates,conflicts}')",
        (tenant, json.dumps([variant])),
    ).fetchall()
    assert batch == [(first[0], "duplicate")]


# -- where it was said -----------------------------------------------------------------------------


def test_a_turn_keeps_its_conversation_speaker_and_time(db, tenant):
    db.execute(
        "SELECT * FROM cogmem.remember(%s, 'I went hiking yesterday.', conversation => 'maya-jonas',"
        " speaker => ' Maya ', said_at => '2023-05-08 19:40+00')",
        (tenant,),
    )
    db.execute(
        "SELECT * FROM cogmem.remember_many(%s, %s::jsonb)",
        (tenant, '[{"content": "Nice, where?", "conversation": "maya-jonas", "speaker": "Jonas",'
                 ' "said_at": "2023-05-08T19:41:00Z"}, "A plain fact outside any conversation."]'),
    )  # fmt: skip
    rows = db.execute(
        "SELECT content, conversation, speaker, said_at::text, source FROM cogmem.memories ORDER BY memory_id"
    ).fetchall()
    assert rows == [
        ("I went hiking yesterday.", "maya-jonas", "Maya", "2023-05-08 19:40:00+00",
         {"conversation": "maya-jonas", "speaker": " Maya ", "said_at": "2023-05-08T19:40:00+00:00"}),
        ("Nice, where?", "maya-jonas", "Jonas", "2023-05-08 19:41:00+00",
         {"conversation": "maya-jonas", "speaker": "Jonas", "said_at": "2023-05-08T19:41:00Z"}),
        ("A plain fact outside any conversation.", None, None, None, {}),
    ]  # fmt: skip


def test_a_turn_without_a_time_is_placed_when_it_is_stored(db, tenant):
    db.execute("SELECT * FROM cogmem.remember(%s, 'First.', conversation => 'c')", (tenant,))
    db.execute("SELECT * FROM cogmem.remember(%s, 'Second.', conversation => 'c')", (tenant,))
    order = db.execute(
        "SELECT content FROM cogmem.memories WHERE conversation = 'c' ORDER BY said_at, memory_id"
    ).fetchall()
    assert order == [("First.",), ("Second.",)]
    assert one(db, "SELECT bool_and(said_at <= now() + interval '1 minute') FROM cogmem.memories") is True


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("SELECT * FROM cogmem.remember('acme', 'x', conversation => '')",
         "source has a conversation that is not a name of 1 to 200 characters without control characters"),
        ("SELECT * FROM cogmem.remember('acme', 'x', speaker => E'a\\nb')",
         "source has a speaker that is not a name of 1 to 200 characters without control characters"),
        ("SELECT * FROM cogmem.remember('acme', 'x', source => '{\"said_at\": \"yesterday-ish\"}')",
         "source has a said_at that is not a timestamp: yesterday-ish"),
        ("SELECT * FROM cogmem.remember('acme', 'x', said_at => '0500-01-01')",
         "source has a said_at outside 1900 to 2200"),
        ("SELECT * FROM cogmem.remember_many('acme', '[{\"content\": \"x\", \"speaker\": 7}]')",
         "item 1 has a speaker that is not a name of 1 to 200 characters without control characters; "
         "nothing of this batch was stored"),
        ("SELECT * FROM cogmem.remember_many('acme', '[{\"content\": \"x\", \"source\": {\"said_at\": \"soon\"}}]')",
         "item 1 source has a said_at that is not a timestamp: soon; nothing of this batch was stored"),
    ],
)  # fmt: skip
def test_where_it_was_said_is_checked_before_anything_is_stored(db, tenant, call, message):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as caught:
        db.execute(call)
    assert caught.value.diag.message_primary == message
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 0
