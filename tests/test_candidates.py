"""sql/165-candidates.sql (and the candidate path of sql/060-remember.sql and the night): a rule the model
is not sure of is kept as a candidate, never fades, is asked about, and is confirmed, dismissed or
promoted by use."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.types.json import Jsonb

from tests.conftest import one
from tests.test_embed import server_embeds

# Rules a person states that the shipped model finds likely but not sure (bench/RESULTS.md): without an
# embedding, from plain SQL.
LIKELY_RULES = [
    "Only window seats on trains.",
    "CC the team lead on escalations.",
    "Always page the on-call before a failover.",
    "Don't restart the server at night, last time everything went sideways.",
]
TURKISH_RULES = [
    "Müşteriye asla fiyat sözü verme.",
    "Bundan sonra bana İngilizce yaz.",
    "Toplantıları sabah ona koyma.",
]


def candidate(db, tenant, texts=LIKELY_RULES):
    """Remembers the first text the model makes a candidate; (memory_id, text). The list holds one."""
    for text in texts:
        row = db.execute("SELECT memory_id, ring, candidate FROM cogmem.remember(%s, %s)", (tenant, text)).fetchone()
        if row[2] is not None:
            assert row[1] == "fresh"
            return row[0], text
    pytest.fail("no statement of the list is a candidate: the model changed, update the list")


def test_a_likely_rule_is_kept_as_a_candidate_and_asked_about(db, tenant):
    memory, text = candidate(db, tenant)
    (row,) = db.execute("SELECT * FROM cogmem.pending_rules(%s)", (tenant,)).fetchall()
    assert row[0] == memory and row[1] == "dos_and_donts" and row[2] == text and 0 < row[3] < 1
    assert row[4] == f'Shall I always follow this from now on: "{text}"?'
    assert one(db, "SELECT classify.candidate FROM cogmem.classify(%s) AS classify", (text,)) == "dos_and_donts"
    events = db.execute("SELECT event FROM cogmem.audit_log WHERE memory_id = %s ORDER BY audit_id", (memory,))
    assert [e[0] for e in events] == ["created", "candidate"]


def test_the_question_is_asked_in_the_tenants_language(db):
    db.execute("SELECT cogmem.create_tenant('ev', 'turkish')")
    _, text = candidate(db, "ev", TURKISH_RULES)
    assert one(db, "SELECT question FROM cogmem.pending_rules('ev')") == f'Bundan sonra hep buna uyayım mı: "{text}"?'


def test_a_candidate_never_fades_while_it_waits(db, tenant):
    memory, _ = candidate(db, tenant)
    plain = one(db, "SELECT memory_id FROM cogmem.remember(%s, 'The office plant is a ficus.')", (tenant,))
    for month in range(1, 61):  # five years of nights, one a month
        db.execute("SELECT * FROM cogmem.consolidate(now() + make_interval(days => %s), %s)", (30 * month, tenant))
    kept = db.execute("SELECT memory_id, candidate_ring FROM cogmem.memories ORDER BY memory_id").fetchall()
    assert kept == [(memory, "dos_and_donts")]  # the plain fact was forgotten; the candidate waits
    assert plain not in [k[0] for k in kept]


def test_recall_injects_a_candidate_and_says_it_is_unconfirmed(db, tenant):
    memory, text = candidate(db, tenant)
    rows = db.execute("SELECT memory_id, reason FROM cogmem.recall(%s, %s)", (tenant, text)).fetchall()
    assert rows[0][0] == memory and "unconfirmed dos_and_donts candidate" in rows[0][1]


def test_a_candidate_is_injected_in_every_recall_after_the_never_cut_rings(db, tenant):
    """Its own layer, after the confirmed never-cut rings and before the ranked ones, on any topic, most
    probable first, within its allocation; gone once a person decides."""
    rule = one(
        db, "SELECT memory_id FROM cogmem.remember(%s, 'Never call Dana after 6pm.', 'dos_and_donts')", (tenant,)
    )
    memory, _ = candidate(db, tenant)
    fact = one(db, "SELECT memory_id FROM cogmem.remember(%s, 'The motor for order 5512 ships next week.')", (tenant,))
    assert db.execute(
        "SELECT priority, token_allocation, never_cut FROM cogmem.tenant_layers"
        " WHERE tenant = %s AND layer = 'candidates'",
        (tenant,),
    ).fetchone() == (3, 100, False)
    rows = db.execute("SELECT layer, memory_id, reason FROM cogmem.recall(%s, 'When does the motor ship?')", (tenant,))
    got = [(r[0], r[1]) for r in rows.fetchall() if r[1] is not None]
    assert got == [("dos_and_donts", rule), ("candidates", memory), ("fresh", fact)]
    db.execute("SELECT * FROM cogmem.dismiss_candidate(%s, %s)", (tenant, memory))
    rows = db.execute("SELECT layer, memory_id FROM cogmem.recall(%s, 'When does the motor ship?')", (tenant,))
    assert [r[1] for r in rows.fetchall() if r[1] is not None] == [rule, fact]


def test_candidates_beyond_their_allocation_compete_in_their_ring(db, tenant):
    ids = []
    for text in LIKELY_RULES:
        row = db.execute("SELECT memory_id, candidate FROM cogmem.remember(%s, %s)", (tenant, text)).fetchone()
        if row[1] is not None:
            ids.append(row[0])
    db.execute("SELECT cogmem.configure_tenant(%s, '{\"token_allocation\": 12}', 'candidates')", (tenant,))
    probable = db.execute(
        "SELECT memory_id FROM cogmem.memories WHERE tenant = %s AND candidate_ring IS NOT NULL"
        " ORDER BY candidate_p DESC, memory_id",
        (tenant,),
    ).fetchall()
    rows = db.execute("SELECT layer, memory_id FROM cogmem.recall(%s, 'weather tomorrow')", (tenant,)).fetchall()
    injected = [r[1] for r in rows if r[0] == "candidates"]
    assert (
        len(ids) >= 2
        and injected
        and injected == [p[0] for p in probable][: len(injected)]
        and len(injected) < len(ids)
    )


def test_a_candidate_a_newer_memory_may_supersede_competes_after_it(db, tenant):
    """Asked about first, the old value ("alarm at 06:45") came before the new one in every recall."""
    memory, _ = candidate(db, tenant)
    newer = one(
        db, "SELECT memory_id FROM cogmem.remember(%s, 'From today the night shift has its own rota.')", (tenant,)
    )
    db.execute("UPDATE cogmem.memories SET superseded_by = %s WHERE memory_id = %s", (newer, memory))
    rows = db.execute("SELECT layer, memory_id, reason FROM cogmem.recall(%s, 'anything at all')", (tenant,))
    got = {r[1]: (r[0], r[2]) for r in rows.fetchall() if r[1] is not None}
    assert "candidates" not in [layer for layer, _ in got.values()]
    if memory in got:  # ranked in its ring, after what may replace it
        assert got[memory][0] == "fresh" and f"possibly superseded by #{newer}" in got[memory][1]
    assert one(db, "SELECT candidate_ring FROM cogmem.memories WHERE memory_id = %s", (memory,)) == "dos_and_donts"


def test_a_candidate_a_newer_memory_replaced_is_no_longer_asked_about(db, tenant):
    """Replaced ("alarm at 06:45", then "make it 07:20"): not asked about; possibly replaced: asked last."""
    older, said = candidate(db, tenant)
    newer, _ = candidate(db, tenant, [t for t in LIKELY_RULES if t != said])

    def asked():
        return [r[0] for r in db.execute("SELECT memory_id FROM cogmem.pending_rules(%s)", (tenant,))]

    assert asked() == [newer, older]
    news = "The printer on floor two works again."
    correction = one(db, "SELECT memory_id FROM cogmem.remember(%s, %s)", (tenant, news))
    db.execute("SELECT cogmem._supersede(%s, %s, ARRAY[%s]::bigint[], 'possible')", (tenant, correction, newer))
    assert asked() == [older, newer]
    db.execute("SELECT cogmem._supersede(%s, %s, ARRAY[%s]::bigint[], 'caller')", (tenant, correction, older))
    assert asked() == [newer]
    assert one(db, "SELECT candidate_ring FROM cogmem.memories WHERE memory_id = %s", (older,)) == "dos_and_donts"


def test_a_likely_rule_routed_to_procedures_is_a_candidate_instead(db):
    """classify never leaves a never-cut ring's candidate in procedures, where it would fade unasked: the
    steps the voices' writers gave (plain SQL, the cues model) that are likely rules are fresh candidates."""
    from bench.corpus import voices

    steps = [s.text for s in voices() if s.ring == "procedures"]
    rows = db.execute(
        "SELECT c.ring, c.candidate, (SELECT bool_or(p.probability >= p.candidate_threshold)"
        " FROM cogmem._inbound_scores(x.text, NULL, NULL) AS p"
        " WHERE p.head = 'ring' AND p.label IN ('dos_and_donts', 'shocks'))"
        " FROM unnest(%s::text[]) AS x (text), cogmem.classify(x.text) AS c",
        (steps,),
    ).fetchall()
    assert len(rows) > 100
    assert not [r for r in rows if r[0] == "procedures" and r[2]]
    assert all(r[1] is None or r[0] == "fresh" for r in rows)
    assert [r for r in rows if r[1] is not None and r[2]], "no step of the corpus is a likely rule: choose others"


def test_a_person_confirms_a_candidate_into_its_ring(db, tenant):
    memory, _ = candidate(db, tenant)
    assert one(db, "SELECT cogmem.confirm_ring(%s, %s, 'dos_and_donts')", (tenant, memory)) == "dos_and_donts"
    assert db.execute("SELECT ring, candidate_ring FROM cogmem.memories").fetchone() == ("dos_and_donts", None)
    assert db.execute("SELECT * FROM cogmem.pending_rules(%s)", (tenant,)).fetchall() == []
    detail = one(db, "SELECT detail FROM cogmem.audit_log WHERE event = 'candidate_confirmed'")
    assert detail["from"] == "fresh" and detail["to"] == "dos_and_donts" and detail["candidate"] == "dos_and_donts"
    layer = one(db, "SELECT layer FROM cogmem.recall(%s, 'anything at all') WHERE memory_id = %s", (tenant, memory))
    assert layer == "dos_and_donts"  # never cut from now on


def test_a_dismissed_candidate_is_an_ordinary_memory(db, tenant):
    memory, _ = candidate(db, tenant)
    assert one(db, "SELECT cogmem.dismiss_candidate(%s, %s)", (tenant, memory)) is True
    assert db.execute("SELECT ring, candidate_ring FROM cogmem.memories").fetchone() == ("fresh", None)
    assert one(db, "SELECT count(*) FROM cogmem.audit_log WHERE event = 'candidate_dismissed'") == 1
    with pytest.raises(psycopg.errors.NoDataFound, match=f'no candidate {memory} in tenant "acme"'):
        db.execute("SELECT cogmem.dismiss_candidate(%s, %s)", (tenant, memory))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        ("SELECT cogmem.confirm_ring('acme', %s, 'rules')", psycopg.errors.InvalidParameterValue,
         'unknown ring "rules"'),
        ("SELECT cogmem.confirm_ring('acme', %s + 1000, 'shocks')", psycopg.errors.NoDataFound,
         'no memory .* in tenant "acme"'),
        ("SELECT cogmem.dismiss_candidate('acme', %s + 1000)", psycopg.errors.NoDataFound,
         'no candidate .* in tenant "acme"'),
    ],
)  # fmt: skip
def test_bad_decisions_are_refused_and_change_nothing(db, tenant, call, error, message):
    memory, _ = candidate(db, tenant)
    with pytest.raises(error, match=message):
        db.execute(call, (memory,))
    assert db.execute("SELECT ring, candidate_ring FROM cogmem.memories").fetchone() == ("fresh", "dos_and_donts")


def test_a_candidate_used_successfully_twice_is_promoted_by_the_next_night(db, tenant):
    memory, text = candidate(db, tenant)
    other, _ = candidate(db, tenant, [t for t in LIKELY_RULES if t != text])
    for _ in range(2):
        recall_id = one(db, "SELECT recall_id FROM cogmem.recall(%s, %s) LIMIT 1", (tenant, text))
        db.execute("SELECT cogmem.feedback(%s, 1.0, ARRAY[%s]::bigint[])", (recall_id, memory))
    db.execute("SELECT * FROM cogmem.consolidate(now() + interval '1 day', %s)", (tenant,))
    rings = dict(db.execute("SELECT memory_id, ring::text FROM cogmem.memories").fetchall())
    assert rings[memory] == "dos_and_donts" and rings[other] == "fresh"
    detail = one(
        db, "SELECT detail FROM cogmem.audit_log WHERE event = 'candidate_promoted' AND memory_id = %s", (memory,)
    )
    assert detail == {"to": "dos_and_donts", "reason": "recalled with success 2 times", "by": "night"}
    report = one(db, "SELECT memories FROM cogmem.consolidation_decisions WHERE decision = 'promote_candidate'")
    assert report == 1


def test_a_candidate_said_again_is_more_likely_a_rule(db, tenant):
    memory, text = candidate(db, tenant)
    before = one(db, "SELECT candidate_p FROM cogmem.memories WHERE memory_id = %s", (memory,))
    again = db.execute("SELECT memory_id, action FROM cogmem.remember(%s, %s)", (tenant, text)).fetchone()
    assert again == (memory, "duplicate")
    ring, p = db.execute(
        "SELECT ring::text, candidate_p FROM cogmem.memories WHERE memory_id = %s", (memory,)
    ).fetchone()
    # 1 - (1 - p)^2: promoted at once when that crosses the ring's threshold, else at the next night.
    assert ring == "dos_and_donts" or p == pytest.approx(1 - (1 - before) ** 2, abs=1e-6)
    db.execute("SELECT * FROM cogmem.consolidate(now() + interval '1 day', %s)", (tenant,))
    assert one(db, "SELECT ring::text FROM cogmem.memories WHERE memory_id = %s", (memory,)) == "dos_and_donts"


def test_a_long_turn_keeps_only_its_rule_sentence_for_the_ring(db, tenant):
    turn = (
        "Quick recap of the week for you. The migration went mostly fine, Tuesday was a mess because the "
        "staging database filled up again, and Ayse spent half of Wednesday chasing a flaky test that turned "
        "out to be a timezone bug in the fixtures. The new dashboards are up and people seem to like them. "
        "Always page the on-call before a failover. Next week we start on the billing export."
    )
    row = db.execute(
        "SELECT memory_id, ring, candidate, excerpt_id FROM cogmem.remember(%s, %s)", (tenant, turn)
    ).fetchone()
    assert row[1] == "fresh" and row[3] is not None
    sentence = db.execute(
        "SELECT content, ring::text, candidate_ring::text, excerpt_of FROM cogmem.memories WHERE memory_id = %s",
        (row[3],),
    ).fetchone()
    assert sentence[0] == "Always page the on-call before a failover." and sentence[3] == row[0]
    assert sentence[1] == "dos_and_donts" or (sentence[1], sentence[2]) == ("fresh", "dos_and_donts")
    assert row[2] == sentence[2]
    assert one(db, "SELECT cogmem.erase(%s, %s)", (tenant, row[0])) is True  # the sentence goes with its turn
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 0


# A rule among thanks and news: the whole message is routed nowhere protected, nor a candidate.
BURIED = (
    "Hi! Thanks so much for sorting out the booking last week, the kids loved the hotel and the pool was great. "
    "My sister is coming with us next time so we might need a bigger room. Please never book us anything near "
    "the airport again, the noise kept us up all night. Anyway, talk soon and thanks again for everything!"
)
# A story of what went wrong, told for its own sake: sentences the cues alone take for incidents.
STORY = (
    "So the trip was wild. We drove up on Friday and the car broke down twice on the motorway, and my brother had "
    "to push it into a lay-by while I called everyone I know. Then the hotel lost our booking and we slept in the "
    "car park. On Sunday we finally saw the lake and it was beautiful, honestly worth it."
)


def test_a_rule_buried_in_a_long_message_is_kept_as_a_candidate_sentence(db, tenant):
    # The shipped model finds the whole message a candidate since it learned from 22 writers (it missed it
    # before): the sentence alone is asked about either way. Where the whole is not sure enough for a
    # candidate, only likely (0.2 at least), the sentence is found apart.
    sentence = one(
        db,
        'SELECT sentence FROM cogmem._buried_rule(%s, \'{"dos_and_donts": 0.25, "shocks": 0.01}\')',
        (BURIED,),
    )
    assert sentence == "Please never book us anything near the airport again, the noise kept us up all night."
    assert one(db, "SELECT count(*) FROM cogmem._buried_rule(%s, '{\"dos_and_donts\": 0.1}')", (BURIED,)) == 0
    row = db.execute("SELECT memory_id, ring, candidate, excerpt_id FROM cogmem.remember(%s, %s)", (tenant, BURIED))
    turn, ring, asked, excerpt = row.fetchone()
    assert (ring, asked) == ("fresh", "dos_and_donts") and excerpt is not None
    kept = db.execute(
        "SELECT content, ring::text, candidate_ring::text, excerpt_of FROM cogmem.memories WHERE memory_id = %s",
        (excerpt,),
    ).fetchone()
    # The sentence with its reason, asked about, never straight into the ring.
    assert kept == (
        "Please never book us anything near the airport again, the noise kept us up all night.",
        "fresh",
        "dos_and_donts",
        turn,
    )
    assert [r[0] for r in db.execute("SELECT memory_id FROM cogmem.pending_rules(%s)", (tenant,))] == [excerpt]


# The seed: a rule and the story of why, in one sentence. Read whole, the story outweighs the rule
# (MiniLM's p 0.05, E5's 0.12 for the Turkish); read alone, its first clause is a rule at 0.98.
SEED = {
    "english": "Don't restart the server at night, last time everything went sideways.",
    "turkish": "Sunucuyu gece restart etme, geçen sefer her şey alt üst oldu.",
}


def test_the_parts_the_router_reads_alone(db):
    assert one(db, "SELECT cogmem.clauses(%s)", (SEED["english"],)) == [
        "Don't restart the server at night",
        "last time everything went sideways.",
    ]
    two = "We moved offices. Never park in bay 4 because it belongs to the dentist."
    assert one(db, "SELECT cogmem.clauses(%s)", (two,)) == [
        "We moved offices.",
        "Never park in bay 4 because it belongs to the dentist.",
        "Never park in bay 4",
        "because it belongs to the dentist.",
    ]
    assert one(db, "SELECT cogmem.clauses('Thanks, Ana!')") == []  # a part of one word is no clause
    assert one(db, "SELECT cogmem.clauses(NULL)") is None


@pytest.mark.parametrize("language", ["english", "turkish"])
def test_a_rule_said_with_its_story_in_one_sentence_is_asked_about(dsn, db, language):
    """From the client, by the language's default model: it embeds the parts cogmem.clauses() names, and the
    whole message is kept as the candidate, the rule with its reason."""
    from cogmem_pg.client import Client

    with Client(dsn) as client:
        client.create_tenant("ev", language)
        memory = client.remember("ev", SEED[language])
        plain = client.remember("ev", "The office plant is a ficus, it likes the window.")
    assert (memory.ring, memory.candidate, memory.excerpt_id) == ("fresh", "dos_and_donts", None)
    assert (plain.ring, plain.candidate) == ("fresh", None)
    assert [r[0] for r in db.execute("SELECT memory_id FROM cogmem.pending_rules('ev')")] == [memory.memory_id]
    # The message's vector alone does not make it one: the parts do.
    assert one(db, "SELECT candidate FROM cogmem.classify(%s, (SELECT embedding FROM cogmem.memories"
                   " WHERE memory_id = %s), (SELECT embedding_model FROM cogmem.tenants WHERE tenant = 'ev'))",
               (SEED[language], memory.memory_id)) is None  # fmt: skip


@pytest.mark.parametrize("language", ["english", "turkish"])
def test_every_way_in_reads_a_rule_said_with_its_story(dsn, db, language):
    """A batch, a chat as frameworks pass it, a store item and LangGraph's stores (sync and async) send the
    parts' embeddings as remember does: the seed's sentence is asked about whichever way it comes in."""
    import asyncio

    from cogmem_pg.client import Client
    from cogmem_pg.langgraph import AsyncCogmemStore, CogmemStore

    def candidates(tenant: str) -> list[tuple[str, str | None]]:
        return db.execute("SELECT content, candidate_ring::text FROM cogmem.memories WHERE tenant = %s"
                          " AND candidate_ring IS NOT NULL", (tenant,)).fetchall()  # fmt: skip

    async def put_async(tenant: str) -> None:
        async with AsyncCogmemStore.from_conn_string(dsn, tenant) as store:
            await store.aput(("notes",), "night", {"text": SEED[language]})

    seed = [(SEED[language], "dos_and_donts")]
    with Client(dsn) as client:
        for tenant in ("batch", "chat", "item", "graph", "agraph"):
            client.create_tenant(tenant, language)
        batch = client.remember_many("batch", ["Good morning!", SEED[language]])
        client.remember("chat", [{"role": "user", "content": SEED[language]}], conversation="c1")
        client.store_put("item", ["notes"], "night", {"text": SEED[language]}, SEED[language])
        CogmemStore(client, "graph").put(("notes",), "night", {"text": SEED[language]})
        asyncio.run(put_async("agraph"))
    assert [(m.ring, m.candidate) for m in batch] == [("fresh", None), ("fresh", "dos_and_donts")]
    for tenant in ("batch", "chat", "item", "graph", "agraph"):
        assert candidates(tenant) == seed, tenant


@server_embeds
def test_a_server_that_embeds_reads_a_batchs_parts_itself(db):
    db.execute("SET cogmem.embed = 'on'")
    for tenant, skip in (("ev", "{}"), ("ev2", "{near_duplicates,conflicts}")):  # item by item, and set-based
        db.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
        rows = db.execute("SELECT ring, candidate FROM cogmem.remember_many(%s, %s, skip => %s)",
                          (tenant, Jsonb(["Good morning!", SEED["english"]]), skip)).fetchall()  # fmt: skip
        assert rows == [("fresh", None), ("fresh", "dos_and_donts")], skip


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ("x", "item 2 has clause_embeddings that are not arrays of 384 numbers"),
        ([[1, 2]], "item 2 has clause_embeddings that are not arrays of 384 numbers"),
        ([["a"] * 384, [0.1] * 384], "item 2 has clause_embeddings that are not arrays of 384 numbers"),
        ([[0.1] * 384], r"item 2 has 1 clause_embeddings, its content has 2 parts \(cogmem.clauses\)"),
        ([[0.0] * 384, [0.1] * 384], "item 2 has a clause embedding that cannot be compared"),
        ([[1e39] * 384, [0.1] * 384], "item 2 has clause_embeddings that are not arrays of 384 numbers"),
    ],
)
def test_a_batchs_clause_embeddings_are_checked_and_nothing_is_stored(db, tenant, parts, message):
    items = ["Good morning!", {"content": SEED["english"], "clause_embeddings": parts}]
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=message) as e:
        db.execute("SELECT cogmem.remember_many(%s, %s)", (tenant, Jsonb(items)))
    assert "clause_embeddings one array of numbers per text cogmem.clauses(content)" in e.value.diag.message_hint
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="clause_embeddings has 1 vectors"):
        db.execute("SELECT cogmem.store_put(%s, '{notes}', 'k', '{}', %s, clause_embeddings => %s::public.vector[])",
                   (tenant, SEED["english"], ["[" + ",".join(["0.1"] * 384) + "]"]))  # fmt: skip
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 0


# A person's standing wishes said as a state, with no directive ("I'm vegetarian"), and look-alikes in the
# same words that bind nothing: a taste in chat, a one-off, the past, another person's taste, a question.
# Written for this test, in no corpus a model learned from.
PREFERENCES = {
    "english": [
        "I prefer an aisle seat.",
        "I'm vegetarian, no meat please.",
        "Metric units for me.",
        "I'm more of an email person than a phone person.",
        "I'm allergic to shellfish.",
        "Short answers suit me best.",
        "Always email me, never call.",
    ],
    "turkish": [
        "Koridor tarafı koltuk tercih ederim.",
        "Vejetaryenim, et yemiyorum.",
        "Bana telefon yerine mesaj daha uygun.",
        "Fıstığa alerjim var.",
        "Kısa cevapları severim.",
        "Metrik birimler benim için.",
        "Bana her zaman e-posta at, arama.",
    ],
}
LOOK_ALIKES = {
    "english": [
        "Honestly I prefer autumn to summer, the light is gorgeous.",
        "I loved the aisle seat on that flight, so much legroom!",
        "I used to be vegetarian back in college.",
        "My brother prefers window seats, he sleeps the whole way.",
        "Aisle seat this time, my knee is sore.",
        "Do you think I should go vegetarian?",
    ],
    "turkish": [
        "Açıkçası sonbaharı yaza tercih ederim, ışığı çok güzel.",
        "Eskiden vejetaryendim, üniversitede bıraktım.",
        "Abim hep cam kenarını tercih eder, yolculuk boyunca uyur.",
        "Bu seferlik koridor tarafı olsun, dizim ağrıyor.",
        "Sence vejetaryen olmalı mıyım?",
        "O uçuştaki koridor koltuğu harikaydı!",
    ],
}


# Of the 7 in each language the router kept 2 in English and 3 in Turkish; with the preference heads
# (bench/train_preference.py, 2026-12-07) it keeps 7 and 5, and asks about one English look-alike ("My
# brother prefers window seats"). A router retrained with the preference writers kept 6 and 5 but lost
# plain rules, and was not shipped (docs/understanding.md).
PREFERENCES_KEPT_AT_LEAST = 5


@pytest.mark.parametrize("language", ["english", "turkish"])
def test_a_preference_said_as_a_state_is_kept_and_a_taste_is_not(dsn, db, language):
    """From the client, by the language's default model, each text in a tenant of its own: the preferences
    in dos_and_donts or asked about, the look-alikes in no never-cut ring and hardly ever asked about."""
    from cogmem_pg.client import Client

    with Client(dsn) as client:
        outcomes = {}
        for n, text in enumerate(PREFERENCES[language] + LOOK_ALIKES[language]):
            client.create_tenant(f"pref{n}", language)
            memory = client.remember(f"pref{n}", text)
            outcomes[text] = (memory.ring, memory.candidate)
    kept = [t for t in PREFERENCES[language] if "dos_and_donts" in outcomes[t]]
    assert len(kept) >= PREFERENCES_KEPT_AT_LEAST, outcomes
    assert all(outcomes[t][0] == "fresh" for t in LOOK_ALIKES[language]), outcomes
    assert sum(outcomes[t][1] is not None for t in LOOK_ALIKES[language]) <= 1, outcomes


def test_a_preference_candidate_carries_its_heads_probability(dsn, db):
    """A wish the preference head asks about is as probable a rule as that head finds it, not as the ring
    head does (p(dos_and_donts) 0.003, which ranked it last among the candidates and read as a doubt in
    pending_rules)."""
    from cogmem_pg.client import Client

    with Client(dsn) as client:
        verdicts = {t: client.classify(t) for t in PREFERENCES["english"]}
        client.create_tenant("pp")
        asked = {
            t: client.remember("pp", t)
            for t, v in verdicts.items()
            if (v["ring"], v["candidate"]) == ("fresh", "dos_and_donts")
        }
    by_preference_head = [
        t for t in asked if verdicts[t]["candidate_probability"] > 10 * verdicts[t]["probabilities"]["dos_and_donts"]
    ]
    assert by_preference_head, verdicts
    pending = dict(db.execute("SELECT memory_id, probability FROM cogmem.pending_rules('pp')").fetchall())
    for text, memory in asked.items():
        assert pending[memory.memory_id] == pytest.approx(verdicts[text]["candidate_probability"], abs=1e-4)


def test_a_client_may_leave_the_parts_unread(dsn, db):
    from cogmem_pg.client import Client

    with Client(dsn, clauses=False) as client:
        client.create_tenant("ev")
        memory = client.remember("ev", SEED["english"])
    assert (memory.ring, memory.candidate) == ("fresh", None)


@server_embeds
def test_a_server_that_embeds_reads_the_parts_itself(db):
    """From plain SQL, on a server whose Python embeds (cogmem.embed)."""
    db.execute("SET cogmem.embed = 'on'")
    db.execute("SELECT cogmem.create_tenant('ev')")
    assert db.execute("SELECT ring, candidate FROM cogmem.remember('ev', %s)", (SEED["english"],)).fetchone() == (
        "fresh",
        "dos_and_donts",
    )


def test_clause_embeddings_must_be_those_of_the_parts(db, tenant):
    from tests.conftest import unit_vector

    with pytest.raises(psycopg.errors.InvalidParameterValue, match="has 1 vectors, the content has 2 parts") as e:
        db.execute(
            "SELECT cogmem.remember(%s, %s, clause_embeddings => ARRAY[%s::public.vector])",
            (tenant, SEED["english"], str(unit_vector(1))),
        )
    assert "cogmem.clauses(content)" in e.value.diag.message_hint
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="embedding has 3 dimensions"):
        db.execute(
            "SELECT cogmem.remember(%s, %s, clause_embeddings => ARRAY['[1,0,0]', '[0,1,0]']::public.vector[])",
            (tenant, SEED["english"]),
        )
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 0


def test_a_long_story_of_mishaps_never_enters_a_never_cut_ring(db, tenant):
    # Since the router learned from 28 writers (2026-12-07) its sentence "the car broke down twice on the
    # motorway" is asked about as an incident (p 0.77 against 0.74): a doubt, which a person dismisses.
    # What real chats show is what counts (bench/understanding.py: 0.36% of LoCoMo's turns asked about,
    # 0.41% before; none in a never-cut ring), and that no such sentence is ever in the ring itself.
    row = db.execute("SELECT ring, candidate, excerpt_id FROM cogmem.remember(%s, %s)", (tenant, STORY)).fetchone()
    assert row[0] == "fresh" and row[1] in (None, "shocks")
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE tenant = %s AND ring IN ('shocks', 'dos_and_donts')",
               (tenant,)) == 0  # fmt: skip


# What the shipped model reaches on the test split of bench/corpus through classify, less a margin
# (bench/RESULTS.md has bench/candidates.py's figures through remember): the share of labelled rules and
# incidents in their ring or held as candidates, and the most casual talk asked about, per language.
# Incidents in our voice: 0.88 -> 0.80 with the embedding, 0.78 -> 0.72 without, since the router learned
# from other writers and our chats (issue 48), while held-out writers' rules and incidents are kept 0.650
# of the time in English (was 0.481), 0.587 from plain SQL (was 0.375). With the hidden layer (issue 48)
# incidents in our voice fell again by MiniLM's vectors, to 0.79, while the held-out writers' incidents
# are kept 0.905 in English (was 0.884) and 0.758 in Turkish (was 0.674).
KEPT_FLOORS = {"embedding": {"dos_and_donts": 0.82, "shocks": 0.76},
               "cues": {"dos_and_donts": 0.73, "shocks": 0.72}}  # fmt: skip
# Our corpus's casual statements (many worded like advice) asked about with the embedding: 3.4% in English
# since the router learned from other writers (it was under 3%; 2.7% with the hidden layer), while of the
# turns of real chats between people it asks about 1.0% (it was 2.5%): bench/understanding.py. With the
# preference heads (2026-12-07), 4.0% in English (21 of 527, 14 without them): of the 7 more, "I'd rather
# text than call", "I'm on a low-FODMAP diet for the next six weeks", "I'm allergic to cats" and "I like my
# eggs runny" are wishes a person would want kept, labelled casual before preferences were asked for;
# LoCoMo's turns asked about went from 0.36% to 0.58%, ours from 0.54% to 0.77% (English).
CASUAL_ASKED_AT_MOST = 0.045


@pytest.mark.parametrize("model", ["embedding", "cues"])
def test_stated_rules_are_kept_and_casual_talk_is_seldom_asked_about(db, model):
    from bench import inbound
    from bench.corpus import NEVER_CUT, statements

    rows = statements("test")
    vectors = inbound.embed([s.text for s in rows]) if model == "embedding" else [None] * len(rows)
    decided = db.execute(
        "SELECT c.ring, c.candidate FROM unnest(%s::text[], %s::public.vector[]) WITH ORDINALITY AS t (text, v, n)"
        " CROSS JOIN LATERAL cogmem.classify(t.text, t.v) AS c ORDER BY t.n",
        ([s.text for s in rows], list(vectors)),
    ).fetchall()
    for ring in NEVER_CUT:
        labelled = [(s, d) for s, d in zip(rows, decided, strict=True) if s.ring == ring]
        kept = sum(ring in d for _, d in labelled) / len(labelled)
        assert kept >= KEPT_FLOORS[model][ring], (ring, kept)
    for lang in ("en", "tr"):
        casual = [d for s, d in zip(rows, decided, strict=True) if s.casual and s.ring == "fresh" and s.lang == lang]
        asked = sum(d[1] is not None for d in casual) / len(casual)
        assert len(casual) > 300 and asked <= CASUAL_ASKED_AT_MOST, (lang, asked)


def test_a_candidate_said_again_in_other_words_is_more_likely_a_rule(db, tenant):
    """The same rule in other words (MiniLM cosine about 0.7 to 0.8: no near-duplicate, no sibling of the
    night) raises the older candidate's probability, or promotes it; an unrelated candidate does not."""
    from bench import inbound

    first, again = "Always ping the on-call before a failover.", "Before a failover, ping the on-call person."
    v_first, v_again, v_other = inbound.embed([first, again, "CC the team lead on escalations."])
    (memory, ring), p_before = _candidate_with_p(db, tenant, first, v_first)
    (other, _), p_other = _candidate_with_p(db, tenant, "CC the team lead on escalations.", v_other)
    (_, ring_again), _ = _candidate_with_p(db, tenant, again, v_again)
    assert ring_again == ring
    now_ring, now_candidate, p_after = db.execute(
        "SELECT ring::text, candidate_ring::text, candidate_p FROM cogmem.memories WHERE memory_id = %s", (memory,)
    ).fetchone()
    assert now_ring == ring or (now_candidate == ring and p_after > p_before)
    assert one(db, "SELECT candidate_p FROM cogmem.memories WHERE memory_id = %s", (other,)) == p_other


def _candidate_with_p(db, tenant, text, vector):
    row = db.execute(
        "SELECT memory_id, candidate FROM cogmem.remember(%s, %s, embedding => %s)", (tenant, text, vector)
    ).fetchone()
    assert row[1] is not None, f"{text!r} is no candidate with its embedding: the model changed, update the test"
    return (row[0], row[1]), one(db, "SELECT candidate_p FROM cogmem.memories WHERE memory_id = %s", (row[0],))


@pytest.mark.parametrize(
    "language, text",
    [
        (
            "english",
            "Thanks so much for sorting the flights yesterday, the kids loved the window seats, never give out my"
            " home address to anyone.",
        ),
        ("turkish", "Ev adresimi kimseye verme, iki yıl önce başıma bir olay geldi."),
    ],
)
def test_plain_sql_reads_a_rule_said_as_one_clause_by_the_cues(db, language, text):
    """No embedding at all (a server that cannot embed, a caller that sends none): the cues read the
    message's parts as they read the message. The whole is no candidate; its rule's clause alone is one."""
    db.execute("SET cogmem.embed = 'off'")
    db.execute("SELECT cogmem.create_tenant('plain', %s)", (language,))
    assert db.execute("SELECT ring, candidate FROM cogmem.classify(%s)", (text,)).fetchone() == ("fresh", None)
    assert db.execute("SELECT ring, candidate FROM cogmem.remember('plain', %s)", (text,)).fetchone() == (
        "fresh",
        "dos_and_donts",
    )
