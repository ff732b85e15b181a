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
    threshold = one(db, "SELECT threshold FROM cogmem._routing_model_of('cues') WHERE label = 'dos_and_donts'")
    row = remember(db, "firma", "Sunucuyu gece restart etme")
    assert row[1:4] == ("dos_and_donts" if probability >= threshold else "fresh", ["server"], "created")


def test_the_callers_kind_files_it_exactly_there(db, tenant):
    """An agent that knows what a text is says so by kind (sql/004-text.sql, _ring_of), as the ring."""
    rows = [
        db.execute("SELECT ring FROM cogmem.remember(%s, %s, %s, person => 'dana')", (tenant, text, kind)).fetchone()[0]
        for text, kind in [
            ("Please always email me, never call.", "preference"),
            ("The VPN went down for an hour after the cert expired.", "incident"),
            ("I had pasta for lunch.", "chat"),
            ("Dana works from Leeds.", "fact"),
        ]
    ]
    assert rows == ["dos_and_donts", "shocks", "fresh", "long_term"]
    stored = db.execute(
        "SELECT ring, count(*) FROM cogmem.remember_many(%s, %s::jsonb) GROUP BY ring",
        (tenant, json.dumps([{"content": "Never deploy on a Friday.", "ring": "rule"}])),
    ).fetchall()
    assert stored == [("dos_and_donts", 1)]


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
         "source has a conversation that is not a name of 1 to 200 characters without control or invisible characters"),
        ("SELECT * FROM cogmem.remember('acme', 'x', speaker => E'a\\nb')",
         "source has a speaker that is not a name of 1 to 200 characters without control or invisible characters"),
        ("SELECT * FROM cogmem.remember('acme', 'x', source => '{\"said_at\": \"yesterday-ish\"}')",
         "source has a said_at that is not a timestamp: yesterday-ish"),
        ("SELECT * FROM cogmem.remember('acme', 'x', said_at => '0500-01-01')",
         "source has a said_at outside 1900 to 2200"),
        ("SELECT * FROM cogmem.remember_many('acme', '[{\"content\": \"x\", \"speaker\": 7}]')",
         "item 1 has a speaker that is not a name of 1 to 200 characters without control or invisible characters; "
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


def test_a_source_keeps_no_secret(db, tenant):
    row = db.execute(
        "SELECT memory_id, redactions FROM cogmem.remember(%s, 'The billing database moved to the new cluster.',"
        " source => %s)",
        (tenant, '{"password": "SrcPass123!", "url": "https://bob:Sup3rS3cret!@db.example.com", "ticket": "OPS-7"}'),
    ).fetchone()
    source = one(db, "SELECT source FROM cogmem.memories WHERE memory_id = %s", (row[0],))
    assert source == {"password": "[REDACTED]", "url": "https://bob:[REDACTED]@db.example.com", "ticket": "OPS-7"}
    assert row[1] == ["credential", "password"]
    many = db.execute(
        "SELECT memory_id FROM cogmem.remember_many(%s, %s)",
        (tenant, '[{"content": "Invoices go out on the first.", "source": {"api_key": "k-123456789"}}]'),
    ).fetchone()[0]
    assert one(db, "SELECT source FROM cogmem.memories WHERE memory_id = %s", (many,)) == {"api_key": "[REDACTED]"}
