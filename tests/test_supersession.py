"""sql/036-supersession.sql: a correction replaces the fact it corrects; facts that both hold both stay.

The parts on their own, then the whole path as an application calls it (SQL as the app login, the client,
the CLI, MCP), then the held-out writers of bench/corpus/updates/ through remember and recall with each
language's default model.
"""

import json
import re

import psycopg
import pytest

from bench import inbound
from bench.corpus import HELD_OUT_UPDATE_WRITERS, updates
from bench.understanding import LANGUAGES, recall_pair
from cogmem_pg.client import Client
from cogmem_pg.embed import E5_MODEL_ID, MODEL_ID
from tests.cli_helpers import invoke
from tests.conftest import one

OLD = "Hi, my shipping address is 14 Alder Close, Leeds LS6 2QT."
NEW = "Actually I moved last week, please ship my orders to 9 Harrow Street, Leeds LS4 1BN from now on."


def remember(conn, tenant, text, said_at, **kw):
    args = "".join(f", {k} => %({k})s" for k in kw)
    return one(
        conn,
        f"SELECT memory_id FROM cogmem.remember(%(t)s, %(c)s, said_at => %(at)s{args})",
        {"t": tenant, "c": text, "at": said_at, **kw},
    )


def recalled(conn, tenant, message):
    return conn.execute(
        "SELECT memory_id, content, reason FROM cogmem.recall(%s, %s) WHERE memory_id IS NOT NULL", (tenant, message)
    ).fetchall()


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Ship to 9 Harrow Street, Leeds LS4 1BN.", ["1bn", "9", "harrow", "leeds", "ls4", "street"]),
        ("db-primary is on 10.20.7.3 now", ["10.20.7.3"]),
        ("Mail me at ana@fernleaf.io on Thursdays", ["ana@fernleaf.io", "thursdays"]),
        ("Teslimat adresim Kadıköy'de, perşembe gelsin.", ["kadıköy", "perşembe"]),
    ],
)
def test_the_values_a_fact_states(db, text, values):
    assert one(db, "SELECT cogmem._values(%s)", (text,)) == values


@pytest.mark.parametrize(
    ("text", "correction", "compatible"),
    [
        ("Actually I moved, the new address is 9 Harrow St.", True, False),
        ("Kafka retention is 3 days now.", True, False),
        ("Just this Friday the standup is at 3.", False, True),
        ("I also have a cat named Miso.", False, True),
        ("I used to live in Leeds.", False, True),
        ("Artık db-prod-03 primary.", True, False),
        ("Bu seferlik toplantı 15:00'te.", False, True),
        ("Ayrıca bir de yedek numaram var: 0532 111 22 33.", False, True),
        # In capitals, under every collation (Turkish words are read with İ, I, ı and i one letter).
        ("ADRESİM DEĞİŞTİ, YENİSİ KADIKÖY", True, False),
        ("BU SEFERLİK TOPLANTI 15:00'TE", False, True),
        ("ARTIK EVDEN ÇALIŞIYORUM", True, False),
        ("ADRESIM DEGISTI, YENISI KADIKOY", True, False),  # capitals without Turkish letters: I may be i
    ],
)
@pytest.mark.parametrize("collation", ["default", "C"])
def test_what_a_newer_text_says_of_an_older(db, text, correction, compatible, collation):
    said = f'%s::text COLLATE "{collation}"'
    assert db.execute(f"SELECT * FROM cogmem._supersession_cues({said})", (text,)).fetchone() == (
        correction,
        compatible,
    )


def test_a_correction_leaves_recall_and_comes_back_for_the_past(db, tenant):
    old = remember(db, tenant, OLD, "2026-03-01")
    new = remember(db, tenant, NEW, "2026-04-01")
    assert db.execute(
        "SELECT superseded_by, valid_until::date::text FROM cogmem.memory_overview WHERE memory_id = %s", (old,)
    ).fetchone() == (new, "2026-04-01")
    assert [r[0] for r in recalled(db, tenant, "Where should my orders be shipped?")] == [new]
    past = recalled(db, tenant, "What was my previous shipping address?")
    assert [r[0] for r in past] == [new, old]
    assert past[1][1].startswith("[until 2026-04-01] ")
    assert f"superseded by #{new} on 2026-04-01" in past[1][2]
    audit = db.execute(
        "SELECT event, detail FROM cogmem.audit_log WHERE tenant = %s AND memory_id = %s AND event = 'superseded'",
        (tenant, old),
    ).fetchall()
    assert audit == [("superseded", {"by": new, "how": "detected", "valid_until": "2026-04-01T00:00:00+00:00"})]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("My home address is 3 Quarry Lane, Sheffield S11 8BQ.", "My work address is 40 Park Row, Leeds LS1 5JL."),
        ("The team meeting is on Fridays at 10.", "Just this Friday the team meeting is at 3."),
        ("My phone number is 0161 496 0732.", "My wife's phone number is 07911 123884."),
        ("I have a dog named Rex.", "I also have a cat named Miso."),
        # Two holders named: a correction cue ("upgraded") does not make them one.
        ("The staging cluster runs Kubernetes 1.28.", "The prod cluster runs Kubernetes 1.26, not upgraded yet."),
        ("Abonelik ücreti aylık 149 TL.", "Bu ay kampanya var, yeni üyeler için ilk ay 99 TL."),
    ],
)
def test_facts_that_both_hold_both_stay(db, tenant, older, newer):
    old = remember(db, tenant, older, "2026-03-01")
    remember(db, tenant, newer, "2026-04-01")
    assert one(db, "SELECT superseded_by FROM cogmem.memories WHERE memory_id = %s", (old,)) is None


def test_an_unsure_change_keeps_the_older_fact_after_the_newer(db, tenant):
    old = remember(db, tenant, "Standup is at 9:30 in room Fuji.", "2026-03-01")
    new = remember(db, tenant, "Standup is at 9:45 in room Fuji.", "2026-04-01")
    row = db.execute("SELECT superseded_by, valid_until FROM cogmem.memories WHERE memory_id = %s", (old,)).fetchone()
    assert row == (new, None)
    got = recalled(db, tenant, "When is standup?")
    assert [r[0] for r in got] == [new, old]
    assert f"possibly superseded by #{new}" in got[1][2]


def test_a_correction_with_no_value_read_is_only_possibly_one(db, tenant):
    old = remember(db, tenant, "My coffee order is a large oat latte.", "2026-03-01")
    new = remember(db, tenant, "Switching it up: from now on my coffee order is a flat white.", "2026-04-01")
    row = db.execute("SELECT superseded_by, valid_until FROM cogmem.memories WHERE memory_id = %s", (old,)).fetchone()
    assert row == (new, None)


def test_a_named_holder_yields_to_a_correction(db, tenant):
    old = remember(db, tenant, "Pay my credit card from the joint account.", "2026-03-01")
    new = remember(
        db, tenant, "Actually pay the credit card from my personal account 4471, not the joint one.", "2026-04-01"
    )
    assert one(db, "SELECT superseded_by FROM cogmem.memories WHERE memory_id = %s", (old,)) == new


def test_a_rule_is_never_superseded_by_the_test(db, tenant):
    rule = one(
        db,
        "SELECT memory_id FROM cogmem.remember(%s, 'Deploys go out on Tuesday at 10.', 'dos_and_donts')",
        (tenant,),
    )
    remember(db, tenant, "Actually deploys go out on Thursday at 10 now.", "2026-04-01")
    assert one(db, "SELECT superseded_by FROM cogmem.memories WHERE memory_id = %s", (rule,)) is None


def test_the_callers_verdict_as_the_application_login(db, tenant, login):
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, %s)", (one(app, "SELECT current_user"), tenant))
    app.execute("SET cogmem.embed = 'off'")
    old = remember(app, tenant, "Invoices go to accounts@fernleaf.com.", "2026-03-01")
    other = remember(app, tenant, "Ben's invoices go to ben@fernleaf.com.", "2026-03-01", person="ben")
    with pytest.raises(psycopg.errors.NoDataFound, match="supersedes names memories") as e:
        remember(app, tenant, "Invoices: finance@fernleaf.io", "2026-04-01", supersedes=[other])
    assert "same person and agent" in e.value.diag.message_hint
    # Nothing the text has in common with the old one: only the caller knows it replaces it.
    new = remember(app, tenant, "Send the bills to finance@fernleaf.io.", "2026-04-01", supersedes=[old])
    assert db.execute(
        "SELECT superseded_by, detail ->> 'how' FROM cogmem.memories JOIN cogmem.audit_log USING (tenant, memory_id)"
        " WHERE memory_id = %s AND event = 'superseded'",
        (old,),
    ).fetchone() == (new, "caller")
    # '{}': the caller says it replaces nothing, and nothing is detected.
    kept = remember(app, tenant, "Standup is at 9:30.", "2026-03-01")
    remember(app, tenant, "Actually standup is at 9:45 now.", "2026-04-01", supersedes=[])
    assert one(db, "SELECT superseded_by FROM cogmem.memories WHERE memory_id = %s", (kept,)) is None
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute("SELECT cogmem._supersede(%s, 1, '{2}', 'caller')", (tenant,))


def test_what_replaced_a_fact_is_found_by_what_the_fact_said(db, tenant):
    # The newer shares no word with the question; the older, out of recall, still finds it (a proxy).
    old = remember(db, tenant, "Our VPN gateway is vpn1.acme.io.", "2026-03-01")
    new = remember(db, tenant, "Use the jump host bastion-2 for prod.", "2026-04-01", supersedes=[old])
    rows = recalled(db, tenant, "Which VPN gateway do we use?")
    assert [r[0] for r in rows] == [new]
    assert f"found through #{old}, which it superseded" in rows[0][2]
    # A question about the past reads the older as itself, after what replaced it.
    past = recalled(db, tenant, "What was our previous VPN gateway?")
    assert [r[0] for r in past] == [new, old]
    assert "found through" not in past[0][2]
    # A chain: the fact a replacement replaced finds it only while it is the present one.
    newest = remember(db, tenant, "Prod goes through bastion-3.", "2026-05-01", supersedes=[new])
    assert [r[0] for r in recalled(db, tenant, "Which jump host for prod?")] == [newest]


def test_erasing_the_newer_keeps_the_older_out_of_recall(db, tenant):
    old = remember(db, tenant, OLD, "2026-03-01")
    new = remember(db, tenant, NEW, "2026-04-01")
    db.execute("SELECT cogmem.erase(%s, %s, 'asked to')", (tenant, new))
    assert db.execute(
        "SELECT superseded_by, valid_until IS NOT NULL FROM cogmem.memories WHERE memory_id = %s", (old,)
    ).fetchone() == (
        None,
        True,
    )
    assert recalled(db, tenant, "Where should my orders be shipped?") == []


def test_the_client_the_cli_and_mcp_pass_the_verdict(dsn, db, tenant):
    from cogmem_pg.mcp_server import build_server
    from tests.test_mcp import structured, talk

    with Client(dsn, embedder=False) as client:
        first = client.remember(tenant, "The VPN gateway is vpn1.acme.io.").memory_id
        second = client.remember(tenant, "Use the jump host for prod.", supersedes=[first]).memory_id
    assert one(db, "SELECT superseded_by FROM cogmem.memories WHERE memory_id = %s", (first,)) == second
    result = invoke(
        "--dsn", dsn, "remember", tenant, "Prod goes through bastion-2 now.", "--supersedes", str(second), "--json"
    )
    third = json.loads(result.output)["memory_id"]
    assert one(db, "SELECT superseded_by FROM cogmem.memories WHERE memory_id = %s", (second,)) == third

    async def calls(mcp):
        return structured(
            await mcp.call_tool("remember", {"content": "Prod goes through bastion-3.", "supersedes": [third]})
        )

    with Client(dsn, embedder=False) as client:
        fourth = talk(build_server(client, tenant), calls)["memory_id"]
    assert one(db, "SELECT superseded_by FROM cogmem.memories WHERE memory_id = %s", (third,)) == fourth


def test_a_newer_fact_that_shares_no_word_with_the_question_comes_with_the_older(db, tenant):
    old, new, question = "My salary is £42,000 a year.", "I'm on £46,500 now after my review.", "What is my salary?"
    vectors = dict(zip((old, new), inbound.embed([old, new], MODEL_ID), strict=True))
    (asked,) = inbound.embed([question], MODEL_ID, query=True)
    ids = [remember(db, tenant, t, at, embedding=vectors[t]) for t, at in ((old, "2026-03-01"), (new, "2026-04-01"))]
    rows = db.execute(
        "SELECT memory_id, reason FROM cogmem.recall(%s, %s, embedding => %s) WHERE memory_id IS NOT NULL",
        (tenant, question, asked),
    ).fetchall()
    assert [r[0] for r in rows] == ids[::-1]  # the newer first, though only the older matches the question
    assert rows[0][1].startswith(f"newer, about the same thing as #{ids[0]};")
    assert f"said after #{ids[0]}, placed before it" in rows[0][1]
    # Without the older one kept, nothing brings the newer one: it does not match the question by itself.
    db.execute("SELECT cogmem.erase(%s, %s)", (tenant, ids[0]))
    assert db.execute("SELECT memory_id FROM cogmem.recall(%s, %s, embedding => %s) WHERE memory_id IS NOT NULL",
                      (tenant, question, asked)).fetchall() == []  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "old", "new", "question", "layer"),
    [
        # The newer a fact, ranked in fresh.
        ("en", "Please call me on my landline, 0161 496 0732.",
         "Can you stop using the landline? We've had it cut off. Mobile only please: 07911 123884.",
         "Which number should support call?", "fresh"),
        # The newer a possible rule too, less probable than the older.
        ("tr", "Hafta içi her sabah 06:45'e alarm kur.",
         "Alarmı 06:45 yerine 07:20'ye al, bu projede ekip 10'da başlıyor. Hafta sonları hiç kurma.",
         "Hafta içi sabah alarmı saat kaça kurulmalı?", "candidates"),
    ],
)  # fmt: skip
def test_a_newer_fact_comes_before_the_possible_rule_it_changes(db, lang, old, new, question, layer):
    # The older is asked about as a possible rule: shown before every ranked layer, most probable first.
    model = {"en": MODEL_ID, "tr": E5_MODEL_ID}[lang]
    inbound.declare(db, model)
    tenant = f"newer-{lang}"
    inbound.create_tenant(db, tenant, LANGUAGES[lang], model)
    vectors = dict(zip((old, new), inbound.embed([old, new], model), strict=True))
    (asked,) = inbound.embed([question], model, query=True)
    ids = [remember(db, tenant, t, at, embedding=vectors[t]) for t, at in ((old, "2026-03-01"), (new, "2026-04-01"))]
    assert one(db, "SELECT candidate_ring FROM cogmem.memories WHERE memory_id = %s", (ids[0],)) == "dos_and_donts"
    rows = db.execute(
        "SELECT memory_id, layer, reason FROM cogmem.recall(%s, %s, embedding => %s) WHERE memory_id IS NOT NULL",
        (tenant, question, asked),
    ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [(ids[1], layer), (ids[0], "candidates")]
    assert f"said after #{ids[0]}, placed before it" in rows[0][2]


@pytest.mark.parametrize(
    ("text", "owned", "negated"),
    [
        ("wait no. sorry. the board meeting is THURSDAY not tuesday", True, ["tuesday"]),
        ("Dev texted, his flight got pushed. still AI 173 but landing 6:40 now, not 4:40", False, ["4:40"]),
        ("doktor aradı, perşembe 10:15 değil 11:45'e almışlar Ela'nın randevusunu", False, ["10:15"]),
        ("pardon sipariş numarasını yanlış yazmışım, doğrusu 7734091", True, []),
        ("scratch that, the venue is the Ashford barn", True, []),
        # Said in capitals: a case-insensitive match pairs no Turkish capital under every collation.
        ("PERŞEMBE 10:15 DEĞİL, 11:45 OLDU", False, ["10:15"]),
        ("PARDON YANLIŞ YAZMIŞIM, DOĞRUSU 7734091", True, []),
        ("ZOOM YERİNE Teams'ten bağlanalım", False, ["zoom"]),
        # Friends negate and say "wrong" in passing: nothing they negate is a value.
        ("I'm not sure it went wrong, it was not bad at all", False, []),
        ("Bence yanlış değil, hiç fena değil", False, []),
    ],
)
@pytest.mark.parametrize("collation", ["default", "C"])
def test_how_a_turn_says_it_corrects_another(db, text, owned, negated, collation):
    said = f'%s::text COLLATE "{collation}"'
    assert db.execute(f"SELECT * FROM cogmem._correction_marks({said})", (text,)).fetchone() == (owned, negated)
    # Recall reads the marks only of a turn that passes the gate: every turn that has one must.
    if owned or negated:
        assert one(db, f"SELECT cogmem._may_correct({said})", (text,))


CHAT_STORY = [
    ("user", "the board meeting is on tuesday at 2pm, can you block 2 hrs before the board meeting for prep"),
    ("assistant", "Done: prep blocked 12-2pm on Tuesday, before the board meeting at 2pm."),
    ("user", "great. also lunch with Sam on friday at the usual place"),
    ("assistant", "Added lunch with Sam on Friday."),
]


def chat_order(db, lang, turns, question):
    """Remembers TURNS as one conversation of a tenant of LANG's default model, two minutes apart, and
    returns the turns' indexes in the order QUESTION recalls them, with their reasons (the older turn a
    reason names by its index)."""
    model = {"en": MODEL_ID, "tr": E5_MODEL_ID}[lang]
    inbound.declare(db, model)
    tenant = f"chat-{lang}"
    inbound.create_tenant(db, tenant, LANGUAGES[lang], model)
    vectors = inbound.embed([t for _, t in turns], model)
    (asked,) = inbound.embed([question], model, query=True)
    ids = {
        one(
            db,
            "SELECT memory_id FROM cogmem.remember(%s, %s, embedding => %s, conversation => 'c1', speaker => %s,"
            " said_at => timestamptz '2026-03-02 09:00Z' + %s * interval '2 minutes')",
            (tenant, text, v, speaker, i),
        ): i
        for i, ((speaker, text), v) in enumerate(zip(turns, vectors, strict=True))
    }
    rows = db.execute(
        "SELECT memory_id, reason FROM cogmem.recall(%s, %s, embedding => %s) WHERE memory_id IS NOT NULL",
        (tenant, question, asked),
    ).fetchall()
    return [
        (ids[m], re.sub(r"#(\d+)", lambda k: f"#t{ids.get(int(k[1]), k[1])}", reason)) for m, reason in rows if m in ids
    ]


def test_a_turn_that_corrects_an_earlier_one_comes_before_it(db):
    # It shares fewer of the question's words than the turn it corrects, which ranks first without it.
    correction = "wait no. sorry. it's THURSDAY not tuesday, i misread Jen's email. still 2pm"
    order = chat_order(db, "en", [*CHAT_STORY, ("user", correction)], "When is the board meeting?")
    turns = [i for i, _ in order]
    assert turns.index(4) < turns.index(0)
    assert "corrects #t0, placed before it" in dict(order)[4]
    # A later turn that corrects nothing keeps its rank, though it is about the same meeting.
    order = chat_order(
        db, "en", [*CHAT_STORY, ("user", "the board meeting went well, not bad at all")], "When is the board meeting?"
    )
    assert "placed before it" not in dict(order)[4]


def test_a_turkish_turn_that_negates_an_earlier_value_comes_before_it(db):
    turns = [
        ("user", "Ela'nın doktor randevusu perşembe 10:15'te, Dr. Aydın, altı yaş kontrolü. okuldan izin alıcam"),
        ("assistant", "Tamam, perşembe 10:15 Dr. Aydın randevusunu takvime ekledim."),
        ("user", "bi de cumartesi Deniz'in yüzmesi var 11'de"),
        ("assistant", "Cumartesi 11:00 yüzmeyi de ekledim."),
        ("user", "off bi de aradılar, 10:15 değil 11:45'e almışlar"),
    ]
    order = [i for i, _ in chat_order(db, "tr", turns, "Ela'nın doktor randevusu saat kaçta?")]
    assert order.index(4) < order.index(0)


# Writers the test was never tuned on, each pair in a tenant of its own, each language by its default
# model; floors under what bench/understanding.py measures (new first 0.973 en since MiniLM's gate is 0.30,
# 0.867 before; 0.973 tr; the newer placed
# first by recall or found through what it replaced; compatible facts still recalled 0.982, 0.945, wrongly
# superseded 0 and 2 of 55).


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_held_out_writers_updates_come_first_and_compatible_facts_stay(db, lang):
    pairs = [p for p in updates() if p["writer"] in HELD_OUT_UPDATE_WRITERS and p["lang"] == lang]
    if not pairs:
        pytest.skip(f"no held-out update writer for {lang}")
    model = {"en": MODEL_ID, "tr": E5_MODEL_ID}[lang]
    texts = sorted({t for p in pairs for t in (p["old"], p["new"])})
    questions = sorted({p["question"] for p in pairs})
    vectors = dict(zip(texts, inbound.embed(texts, model), strict=True))
    vectors |= {"query: " + q: v for q, v in zip(questions, inbound.embed(questions, model, query=True), strict=True)}
    inbound.declare(db, model)
    outcomes = [recall_pair(db, p, vectors, model) for p in pairs]
    updated = [o for o in outcomes if o.pair["relation"] == "update"]
    compatible = [o for o in outcomes if o.pair["relation"] == "compatible"]
    assert sum(o.new_first for o in updated) / len(updated) >= 0.93
    assert sum(o.old_recalled for o in compatible) / len(compatible) >= 0.88
    assert sum(o.old_superseded for o in compatible) / len(compatible) <= 0.06
