"""Understanding what people say (issue 48), on text written in voices other than our corpus's.

- Rules and incidents: bench/corpus/voices/, each writer a persona of their own (a baker, a
  non-native DevOps engineer, a night-shift nurse, a German-born builder, a student, a compliance officer;
  a Turkish SRE, shop owner, student, dentist, grandmother and sales manager; ...), rules and incidents among
  pleasantries, with their reasons, conditional, polite, and as many look-alikes that are none. Every message
  is remembered through `remember(tenant, text)` in a tenant of its own, with the embedding (the client
  embeds) and without (plain SQL on a server that cannot embed). Per writer: rules and incidents in their
  ring, kept (in their ring or a candidate, asked about), and the other messages flagged (put in a
  never-cut ring, or asked about). Writers in HELD_OUT_WRITERS never train a model: their rows are what a
  stranger gets.
- Updates: bench/corpus/updates/, pairs of a fact and a later statement that replaces it (an update) or
  that holds beside it (compatible), English and Turkish. Each pair in a tenant of its own, the new one
  said 30 days after the old; then the pair's question is recalled. New first: the new memory comes before
  the old one (or the old one is out); old kept: a compatible pair's old memory is still recalled.

    PYTHONPATH=. .venv/bin/python bench/understanding.py [--results bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.candidates import Outcome, remember_each
from bench.conversation import LOCOMO, chats_between_people, load_locomo
from bench.corpus import (
    HELD_OUT_PREFERENCE_WRITERS,
    HELD_OUT_UPDATE_WRITERS,
    HELD_OUT_WRITERS,
    NEVER_CUT,
    UNSEEN_WRITERS,
    updates,
    voice_writers,
    voices,
)
from bench.harness import given_or_private
from bench.inbound import LANGUAGES, clause_vectors, create_tenant, declare, embed, excerpt_ring
from bench.results import replace_section
from cogmem_pg.embed import E5_MODEL_ID, MODEL_ID

SECTION = "Understanding what people say"
# What the preference writers' look-alikes are (bench/corpus/README.md).
LOOK_ALIKES = ("taste", "one_off", "past", "other_person", "question")


@dataclass(frozen=True)
class WriterFigures:
    in_ring: float
    kept: float
    flagged: float  # other messages put in a never-cut ring or asked about
    precision: float  # of what entered a never-cut ring, the share that belongs there


def writer_figures(outcomes: Sequence[Outcome]) -> WriterFigures:
    rules = [o for o in outcomes if o.truth in NEVER_CUT]
    others = [o for o in outcomes if o.truth not in NEVER_CUT]
    entered = [o for o in outcomes if o.ring in NEVER_CUT]
    return WriterFigures(
        in_ring=sum(o.ring == o.truth for o in rules) / max(len(rules), 1),
        kept=sum(o.kept for o in rules) / max(len(rules), 1),
        flagged=sum(o.ring in NEVER_CUT or o.candidate is not None for o in others) / max(len(others), 1),
        precision=sum(o.ring == o.truth for o in entered) / max(len(entered), 1),
    )


def rules_table(with_embedding: list[Outcome], without: list[Outcome]) -> list[str]:
    lines = [
        "| writer | messages | rules and incidents | in ring | kept | others flagged | never-cut precision "
        "| no embedding: in ring | kept | flagged |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    groups = [(w, [w]) for w in voice_writers()]
    groups += [(f"all held out ({lang})", [w for w in HELD_OUT_WRITERS if w.startswith(lang)]) for lang in LANGUAGES]
    groups += [
        (f"preferences held out ({lang})", [w for w in HELD_OUT_PREFERENCE_WRITERS if w.startswith(lang)])
        for lang in LANGUAGES
    ]
    groups += [("all", voice_writers())]
    for name, writers in groups:
        a = [o for o in with_embedding if o.statement.writer in writers]
        b = [o for o in without if o.statement.writer in writers]
        fa, fb = writer_figures(a), writer_figures(b)
        label = f"{name} (held out)" if name in UNSEEN_WRITERS else name
        lines.append(
            f"| {label} | {len(a)} | {sum(o.truth in NEVER_CUT for o in a)} | {fa.in_ring:.3f} | {fa.kept:.3f} | "
            f"{fa.flagged:.3f} | {fa.precision:.3f} | {fb.in_ring:.3f} | {fb.kept:.3f} | {fb.flagged:.3f} |"
        )
    return lines


def shapes_table(with_embedding: list[Outcome]) -> list[str]:
    """Rules and incidents by how they were said, every writer: where the speech act gets lost."""
    lines = ["| shape | rules and incidents | in ring | kept |", "|---|---:|---:|---:|"]
    rules = [o for o in with_embedding if o.truth in NEVER_CUT]
    for shape in sorted({o.statement.shape for o in rules}, key=str):
        mine = [o for o in rules if o.statement.shape == shape]
        lines.append(
            f"| {shape} | {len(mine)} | {sum(o.ring == o.truth for o in mine) / len(mine):.3f} | "
            f"{sum(o.kept for o in mine) / len(mine):.3f} |"
        )
    return lines


def preferences_table(with_embedding: list[Outcome], without: list[Outcome]) -> list[str]:
    """The preference writers' messages (en-w18 to tr-w20) by what they are: preferences said as a state
    ("I'm vegetarian") or otherwise, kept; look-alikes in the same words (a taste in chat, a one-off, the
    past, another person's taste, a question) flagged. Held-out writers apart from the training writers (the
    shipped router learned from none of them: a retrain with them was not shipped, docs/understanding.md)."""
    lines = [
        "| writers | language | what | messages | kept | flagged | no embedding: kept | flagged |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    # The preference writers are the ones who said a preference as a state (no earlier brief asked for one).
    writers = {o.statement.writer for o in with_embedding if o.statement.shape == "state"}
    groups = [
        ("preference, said as a state", lambda s: s.kind == "preference" and s.shape == "state"),
        ("preference, said otherwise", lambda s: s.kind == "preference" and s.shape != "state"),
        *[
            (f"look-alike: {shape}", lambda s, shape=shape: s.ring == "fresh" and s.shape == shape)
            for shape in LOOK_ALIKES
        ],
    ]
    for held_out in (True, False):
        for lang in LANGUAGES:
            mine = [w for w in writers if w.startswith(lang) and (w in HELD_OUT_PREFERENCE_WRITERS) == held_out]
            for what, chosen in groups:
                a = [o for o in with_embedding if o.statement.writer in mine and chosen(o.statement)]
                b = [o for o in without if o.statement.writer in mine and chosen(o.statement)]
                fa, fb = writer_figures(a), writer_figures(b)
                shown = (f"{fa.kept:.3f} | | {fb.kept:.3f} |" if what.startswith("preference")
                         else f"| {fa.flagged:.3f} | | {fb.flagged:.3f}")  # fmt: skip
                who = "held out" if held_out else "training writers"
                lines.append(f"| {who} | {lang} | {what} | {len(a)} | {shown} |")
    return lines


def casual_talk(conn: psycopg.Connection, models: dict[str, str]) -> list[str]:
    """Every turn of our conversations between people (bench/corpus/conversations: long, emphatic, tips,
    stories, rants), and of LoCoMo's when it is here (real chats no model learned from, measured only),
    remembered as an application does with its language's default model's vector: the share put in a
    never-cut ring (the turn, or a sentence taken from it) and the share made a candidate."""
    lines = [
        "| chats | language | turns | put in a never-cut ring | made a candidate | flagged |",
        "|---|---|---:|---:|---:|---:|",
    ]
    sources = [("ours", lang, model, chats_between_people()) for lang, model in models.items()]
    if LOCOMO.exists():
        sources.append(("LoCoMo", "en", models["en"], load_locomo()))
    for name, lang, model, chats in sources:
        tenant = f"chat-{uuid.uuid4().hex[:12]}"
        create_tenant(conn, tenant, LANGUAGES[lang], model)
        turns = [(c, t) for c in chats if c.lang == lang for t in c.turns]
        ring = candidate = 0
        texts = [t.text for _, t in turns]
        vectors = embed(texts, model)
        for (c, t), v, parts in zip(turns, vectors, clause_vectors(conn, texts, vectors, model), strict=True):
            row = conn.execute(
                "SELECT r.ring IN ('dos_and_donts', 'shocks'), r.candidate IS NOT NULL, r.excerpt_id"
                " FROM cogmem.remember(%s, %s, embedding => %s, conversation => %s, speaker => %s,"
                " clause_embeddings => %s) AS r",
                (tenant, t.text, v, c.id, t.speaker, parts),
            ).fetchone()
            ring += row[0] or excerpt_ring(conn, row[2]) in NEVER_CUT  # type: ignore[index, operator]
            candidate += row[1]  # type: ignore[index]
        n = len(turns)
        lines.append(f"| {name} | {lang} | {n} | {ring / n:.4f} | {candidate / n:.4f} | {(ring + candidate) / n:.4f} |")
    return lines


@dataclass(frozen=True)
class UpdateOutcome:
    pair: dict
    new_first: bool
    old_recalled: bool
    new_recalled: bool
    old_superseded: bool  # out of recall (sql/036-supersession.sql), not only possibly superseded


def recall_pair(conn: psycopg.Connection, pair: dict, vectors: dict[str, object], model: str) -> UpdateOutcome:
    tenant = f"u-{uuid.uuid4().hex[:12]}"
    create_tenant(conn, tenant, LANGUAGES[pair["lang"]], model)
    said = datetime(2026, 3, 1, 10, tzinfo=UTC)
    ids = []
    for text, at in ((pair["old"], said), (pair["new"], said + timedelta(days=30))):
        row = conn.execute(
            "SELECT memory_id FROM cogmem.remember(%s, %s, embedding => %s, said_at => %s)",
            (tenant, text, vectors[text], at),
        ).fetchone()
        ids.append(row[0] if row else None)
    recalled = [
        r[0]
        for r in conn.execute(
            "SELECT memory_id FROM cogmem.recall(%s, %s, embedding => %s)",
            (tenant, pair["question"], vectors["query: " + pair["question"]]),
        )
    ]
    old, new = ids
    first = next((m for m in recalled if m in (old, new)), None)
    superseded = conn.execute(
        "SELECT valid_until IS NOT NULL FROM cogmem.memories WHERE tenant = %s AND memory_id = %s", (tenant, old)
    ).fetchone()
    return UpdateOutcome(
        pair, first == new and new is not None, old in recalled, new in recalled, bool(superseded and superseded[0])
    )


def updates_table(outcomes: Sequence[UpdateOutcome]) -> list[str]:
    lines = [
        "| pairs | writers | language | n | new first | new recalled | old still recalled | old superseded |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for relation in ("update", "compatible"):
        for held_out in (True, False):
            for lang in (*LANGUAGES, "all"):
                rows = [
                    o
                    for o in outcomes
                    if o.pair["relation"] == relation
                    and (o.pair["writer"] in HELD_OUT_UPDATE_WRITERS) == held_out
                    and lang in (o.pair["lang"], "all")
                ]
                n = max(len(rows), 1)
                lines.append(
                    f"| {relation} | {'held out' if held_out else 'tuned on'} | {lang} | {len(rows)} | "
                    f"{sum(o.new_first for o in rows) / n:.3f} | {sum(o.new_recalled for o in rows) / n:.3f} | "
                    f"{sum(o.old_recalled for o in rows) / n:.3f} | {sum(o.old_superseded for o in rows) / n:.3f} |"
                )
    return lines


CHATS = Path(__file__).resolve().parent / "corpus" / "chats"
# Chats by writers the placing of a correcting turn (sql/070-recall.sql) was never tuned on.
HELD_OUT_CHATS = CHATS / "held"


@dataclass(frozen=True)
class ChatAnswer:
    chat: str
    lang: str
    kind: str
    found: dict[int, bool]  # per budget: a turn that holds the answer (or the rule taken from it) recalled
    before_old: dict[int, bool]  # per budget: and before the turn whose value it replaced
    held_out: bool = False  # a chat of bench/corpus/chats/held/


def chat_check(conn: psycopg.Connection, chat: dict, model: str, held_out: bool = False) -> list[ChatAnswer]:
    """A scripted chat (bench/corpus/chats/) remembered turn by turn as an application does (conversation,
    speaker, said_at), then each question recalled in a later session at 1,000 and 3,200 tokens."""
    tenant = f"h-{uuid.uuid4().hex[:12]}"
    create_tenant(conn, tenant, LANGUAGES[chat["lang"]], model)
    texts = [t["text"] for t in chat["turns"]]
    vectors = embed(texts, model)
    held: dict[int, set[int]] = {}
    start = datetime(2026, 3, 2, 9, tzinfo=UTC)
    parts = clause_vectors(conn, texts, vectors, model)
    for i, (turn, v, p) in enumerate(zip(chat["turns"], vectors, parts, strict=True)):
        memory, excerpt = conn.execute(
            "SELECT memory_id, excerpt_id FROM cogmem.remember(%s, %s, embedding => %s, conversation => %s,"
            " speaker => %s, said_at => %s, clause_embeddings => %s)",
            (tenant, turn["text"], v, chat["id"], turn["speaker"], start + timedelta(minutes=2 * i), p),
        ).fetchone()  # type: ignore[misc]
        held[i] = {m for m in (memory, excerpt) if m is not None}
    questions = [q["question"] for q in chat["questions"]]
    answers = []
    for q, v in zip(chat["questions"], embed(questions, model, query=True), strict=True):
        found, before_old = {}, {}
        for budget in (1000, 3200):
            order = [
                r[0]
                for r in conn.execute(
                    "SELECT memory_id FROM cogmem.recall(%s, %s, embedding => %s, budget => %s)"
                    " WHERE memory_id IS NOT NULL",
                    (tenant, q["question"], v, budget),
                )
            ]
            need = {m for i in q["needs"] for m in held[i]}
            old = {m for i in q.get("not", []) for m in held[i]} - need
            first = next((n for n, m in enumerate(order) if m in need), None)
            stale = next((n for n, m in enumerate(order) if m in old), None)
            found[budget] = first is not None
            before_old[budget] = first is not None and (stale is None or first < stale)
        answers.append(ChatAnswer(chat["id"], chat["lang"], q["kind"], found, before_old, held_out))
    return answers


def chats_table(answers: Sequence[ChatAnswer]) -> list[str]:
    lines = [
        "| kind | language | questions | recalled @1,000 | @3,200 | before the old value @3,200 |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for kind in [*sorted({a.kind for a in answers}), "all"]:
        for lang in (*LANGUAGES, "all"):
            rows = [a for a in answers if kind in (a.kind, "all") and lang in (a.lang, "all")]
            if not rows:
                continue
            n = len(rows)
            lines.append(
                f"| {kind} | {lang} | {n} | {sum(a.found[1000] for a in rows) / n:.3f} | "
                f"{sum(a.found[3200] for a in rows) / n:.3f} | {sum(a.before_old[3200] for a in rows) / n:.3f} |"
            )
    return lines


@dataclass(frozen=True)
class CandidateCost:
    writer: str
    candidates: int  # unconfirmed candidates the writer's tenant holds
    tokens: list[int]  # per recall, the tokens of the candidates layer


def candidate_cost(
    conn: psycopg.Connection, writer: str, messages: Sequence, vectors: Sequence, model: str
) -> CandidateCost:
    """What the unconfirmed candidates cost every recall (sql/070-recall.sql, the candidates layer): a writer's
    messages remembered in order in one tenant, then asked about with its ordinary messages (those that are
    neither rules nor incidents, at most 20) at 3,200 tokens."""
    tenant = f"w-{uuid.uuid4().hex[:12]}"
    create_tenant(conn, tenant, LANGUAGES[messages[0].lang], model)
    parts = clause_vectors(conn, [m.text for m in messages], vectors, model)
    for m, v, p in zip(messages, vectors, parts, strict=True):
        conn.execute(
            "SELECT FROM cogmem.remember(%s, %s, embedding => %s, clause_embeddings => %s)", (tenant, m.text, v, p)
        )
    held = conn.execute(
        "SELECT count(*) FROM cogmem.memories WHERE tenant = %s AND candidate_ring IS NOT NULL", (tenant,)
    ).fetchone()[0]  # type: ignore[index]
    asked = [(m, v) for m, v in zip(messages, vectors, strict=True) if m.ring not in NEVER_CUT][:20]
    tokens = [
        conn.execute(
            "SELECT coalesce(sum(tokens) FILTER (WHERE layer = 'candidates'), 0)"
            " FROM cogmem.recall(%s, %s, embedding => %s)",
            (tenant, m.text, v),
        ).fetchone()[0]  # type: ignore[index]
        for m, v in asked
    ]
    return CandidateCost(writer, held, tokens)


def candidates_table(costs: Sequence[CandidateCost]) -> list[str]:
    lines = [
        "| writer | candidates held | tokens per recall, mean | max |",
        "|---|---:|---:|---:|",
    ]
    for c in costs:
        lines.append(f"| {c.writer} | {c.candidates} | {np.mean(c.tokens):.1f} | {max(c.tokens)} |")
    everyone = [t for c in costs for t in c.tokens]
    lines.append(f"| all | {sum(c.candidates for c in costs)} | {np.mean(everyone):.1f} | {max(everyone)} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    messages = voices()
    # Each language by its tenants' default model (sql/020-tenants.sql): MiniLM for English, E5 for Turkish.
    models = {"en": MODEL_ID, "tr": E5_MODEL_ID}
    vectors = {lang: embed([s.text for s in messages if s.lang == lang], models[lang]) for lang in models}
    pairs = updates()
    pair_vectors = {}
    for lang, model in models.items():
        texts = sorted({t for p in pairs if p["lang"] == lang for t in (p["old"], p["new"])})
        questions = sorted({p["question"] for p in pairs if p["lang"] == lang})
        pair_vectors[lang] = dict(zip(texts, embed(texts, model), strict=True))
        pair_vectors[lang] |= {
            "query: " + q: v for q, v in zip(questions, embed(questions, model, query=True), strict=True)
        }
    with given_or_private(args.dsn, 5466, database="postgres") as dsn, psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET cogmem.embed = 'off'")  # the server does not embed: the caller's vector or none
        with_embedding, without, updated, costs, answers = [], [], [], [], []
        casual = casual_talk(conn, models)
        for lang, model in models.items():
            declare(conn, model)
            mine = [s for s in messages if s.lang == lang]
            with_embedding += remember_each(conn, mine, vectors[lang], model)
            without += remember_each(conn, mine, [None] * len(mine), model)
            updated += [recall_pair(conn, p, pair_vectors[lang], model) for p in pairs if p["lang"] == lang]
            for path in sorted([*CHATS.glob(f"{lang}-*.json"), *HELD_OUT_CHATS.glob(f"{lang}-*.json")]):
                chat = json.loads(path.read_text(encoding="utf-8"))
                answers += chat_check(conn, chat, model, held_out=path.parent == HELD_OUT_CHATS)
            for writer in [w for w in voice_writers() if w.startswith(lang)]:
                theirs = [(s, v) for s, v in zip(mine, vectors[lang], strict=True) if s.writer == writer]
                costs.append(candidate_cost(conn, writer, [s for s, _ in theirs], [v for _, v in theirs], model))
    lines = [
        "`bench/understanding.py` (issue 48), each language by its default model (MiniLM for English, E5 for "
        "Turkish). **Rules and incidents** in people's own "
        f"words: bench/corpus/voices/, {len(voice_writers())} writers with personas of their own, each message "
        "remembered through "
        "`remember(tenant, text)` in a tenant of its own. In ring: rules and incidents routed to their ring; kept: "
        "in their ring or asked about (a candidate); others flagged: the other messages (most written to look like "
        "rules or incidents) put in a never-cut ring or asked about. The router learns from the writers not held "
        "out (bench/train_router.py, every head; the shipped one learned from those before the preference "
        "writers, and its preference heads, bench/train_preference.py, from the preference writers); no model has "
        "learned from a held-out writer, and none will: their rows are what a stranger gets.",
        "",
        *rules_table(with_embedding, without),
        "",
        "**Preferences** (en-w18 to tr-w20, writers of a person's wishes, half of them said as a state with no "
        'directive, "I\'m vegetarian", "texts are better for me", and look-alikes in the same words that bind '
        "nothing): kept, in dos_and_donts or asked about; flagged, a look-alike put there or asked about.",
        "",
        *preferences_table(with_embedding, without),
        "",
        "By the shape of the message (every writer, with the embedding):",
        "",
        *shapes_table(with_embedding),
        "",
        "**Casual talk** (our conversations between people, and LoCoMo's real chats, which no model learned from; "
        "every turn remembered as an application does): what the router puts in a never-cut ring or asks about. "
        "The never-cut rings must stay clean of it.",
        "",
        *casual,
        "",
        "**Updates** (bench/corpus/updates/): a fact, then, 30 days later, one that replaces it (update) or holds "
        "beside it (compatible); the pair's question recalled at 3,200 tokens. New first: the new memory comes "
        "before the old one, or the old one is out (superseded, sql/036-supersession.sql). Held-out writers: "
        "the supersession test was never tuned on them. For compatible pairs, old still recalled is what counts "
        "(both hold).",
        "",
        *updates_table(updated),
        "",
        "**Scripted chats** (bench/corpus/chats/, written apart from every corpus the models learned from): a "
        "user and an assistant, each turn remembered as an application does (conversation, speaker, time), then "
        "questions a colleague asks later, each needing a fact, a preference, a rule or incident, or a corrected "
        "value said in the chat. Recalled: a turn that holds the answer (or the rule taken from it) is injected. "
        "Held out (bench/corpus/chats/held/): six chats by two writers the placing of a correcting turn was never "
        "tuned on, each with six corrections said six ways (a mistake owned, the world changed, an update that "
        "never names the old value, one inside a long message, the old value negated, news from a third party), "
        "the assistant's echo of the old value among the turns it must come before, and three facts that still "
        "hold beside a later one (compatible).",
        "",
        "Tuned on:",
        "",
        *chats_table([a for a in answers if not a.held_out]),
        "",
        "Held out:",
        "",
        *chats_table([a for a in answers if a.held_out]),
        "",
        "**What candidates cost** (the candidates layer, sql/070-recall.sql): each writer's messages remembered in "
        "order in one tenant, then 20 of its ordinary messages asked at 3,200 tokens; the tokens the layer took "
        "(its allocation: 100 of 3,200).",
        "",
        *candidates_table(costs),
        "",
    ]
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, lines, SECTION)


if __name__ == "__main__":
    main()
