"""sql/030-routing.sql: inbound attention, measured on the test split of our labelled corpus (bench/corpus).

The figures are those of bench/RESULTS.md; each threshold here is a little below what the shipped model
reaches, so that a change which costs precision in the never-cut rings fails here first.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from bench import inbound
from bench.corpus import CORPUS, NEVER_CUT, RINGS, SPLITS, TRIGGERS, statements
from bench.train_router import Features, decide, threshold
from tests.conftest import one

# What the shipped model reaches on the test split, less a margin (bench/RESULTS.md has the figures).
# The cues' shocks recall fell 0.50 -> 0.42 when the router learned from other writers and our chats
# (issue 48): its thresholds are set for strangers and casual talk, and held-out writers' rules and
# incidents reach their ring without an embedding twice as often (0.177 -> 0.378 in English).
FLOORS = {
    "embedding": {"dos_and_donts": (0.96, 0.36), "shocks": (0.96, 0.50), "accuracy": 0.80},
    "cues": {"dos_and_donts": (0.96, 0.27), "shocks": (0.95, 0.40), "accuracy": 0.76},
}


@cache
def held_out():
    rows = statements("test")
    return rows, inbound.embed([s.text for s in rows])


def test_the_corpus_is_ours_and_large_enough():
    rows = statements()
    assert len(rows) >= 2000 and {s.lang for s in rows} == {"en", "tr"}
    assert {s.split for s in rows} == set(SPLITS) and {s.ring for s in rows} == set(RINGS)
    import re

    # A third is talk that uses rule words without stating a rule (what a keyword router gets wrong).
    talk_with_rule_words = [s for s in rows if s.ring == "fresh" and re.search(TRIGGERS, s.text, re.I)]
    assert len(talk_with_rule_words) >= len(rows) / 3
    assert len([r for r in (CORPUS / "dissonance.jsonl").read_text().splitlines() if r]) >= 500
    assert len(set(s.text for s in rows)) == len(rows)  # no statement twice


@pytest.mark.parametrize("model", ["embedding", "cues"])
def test_never_cut_rings_are_precise_on_the_test_split(db, model):
    rows, vectors = held_out()
    result = inbound.routing(db, rows, vectors if model == "embedding" else [None] * len(rows))
    for ring in ("dos_and_donts", "shocks"):
        precision, recall = FLOORS[model][ring]
        assert result.precision(ring) >= precision, (ring, result.precision(ring))
        assert result.recall(ring) >= recall, (ring, result.recall(ring))
    assert result.accuracy >= FLOORS[model]["accuracy"]
    # Both languages, not one carrying the other.
    for lang in ("en", "tr"):
        idx = [i for i, s in enumerate(rows) if s.lang == lang]
        part = inbound.Routing([result.truth[i] for i in idx], [result.predicted[i] for i in idx])
        assert part.precision("dos_and_donts") >= 0.93 and part.precision("shocks") >= 0.93, lang


def test_only_instructions_are_instructions(db):
    rows, vectors = held_out()
    result = inbound.routing(db, rows, vectors)
    assert result.instruction_precision >= 0.95 and result.instruction_recall >= 0.55


def test_casual_talk_is_neither_held_nor_made_a_rule(db):
    rows, vectors = held_out()
    casual = [(s, v) for s, v in zip(rows, vectors, strict=True) if s.casual and s.ring == "fresh"]
    turns, held, never_cut = inbound.false_conflicts(db, [s for s, _ in casual], [v for _, v in casual])
    assert turns > 500
    assert held / turns <= 0.005
    assert never_cut / turns <= 0.01


def test_the_model_was_trained_on_these_cues(db):
    assert one(db, "SELECT cogmem._routing_model_cues() = cogmem._inbound_cue_names()") is True
    assert one(db, "SELECT cardinality(cogmem._inbound_cues('x')) = cardinality(cogmem._inbound_cue_names())")
    # Short statements and long turns, by MiniLM's and E5's embeddings and without; the hidden layers of the
    # four embedding models and their outputs; the three contradiction models; the follow-up judge's three
    # (sql/059-followup.sql); and the preference heads of MiniLM and E5 (bench/train_preference.py).
    assert one(db, "SELECT count(DISTINCT model) FROM cogmem.routing_model") == 6 + 8 + 3 + 3 + 2


@pytest.mark.parametrize(
    ("content", "ring"),
    [
        # Casual talk full of rule words stays fresh: a never-cut ring is for real rules and incidents.
        ("I'll never forget it!", "fresh"),
        ("They always make us smile", "fresh"),
        ("Taking care of ourselves is so important — even if it's not always easy", "fresh"),
        ("Researching adoption agencies — it's been a dream to have a family", "fresh"),
        ("Don't worry about it!", "fresh"),
        ("O yazı asla unutmayacağım", "fresh"),
        ("Unutma, yarın annemin doğum günü", "fresh"),
        ("Ayşe always wants a backup before any deployment.", "fresh"),
        ("My laptop crashed and I lost my whole thesis draft.", "fresh"),
        ("Toplantı salı saat 10'da.", "fresh"),
        # Steps.
        ("To rotate: 1. drain the node 2. restart nginx 3. check health", "procedures"),
        ("Önce servisi durdur, sonra yedeği al, en son servisi başlat.", "procedures"),
        ("- drain node\n- restart nginx\n- check health", "procedures"),
    ],
)
def test_route_examples(db, content, ring):
    assert one(db, "SELECT cogmem.route(%s)", (content,)) == ring


def test_classify_explains_itself(db):
    ring, _, probabilities, model, candidate, candidate_probability = db.execute(
        "SELECT * FROM cogmem.classify('Never deploy on Fridays.')"
    ).fetchone()
    assert model == "cues" and set(probabilities) == set(RINGS)
    assert sum(probabilities.values()) == pytest.approx(1, abs=1e-3)
    assert ring == max(probabilities, key=probabilities.get) or ring == "fresh"
    # Not sure enough for its ring without an embedding: a candidate of it, not lost.
    assert (ring, candidate) in {("dos_and_donts", None), ("fresh", "dos_and_donts")}
    # A candidate's probability is its ring's, by the ring head that made it; none without a candidate.
    assert candidate_probability == (None if candidate is None else pytest.approx(probabilities[candidate], abs=1e-4))
    assert one(db, "SELECT cogmem.route(NULL)") is None
    with pytest.raises(Exception, match="embedding has 2 dimensions"):
        db.execute("SELECT cogmem.classify('x', '[1,2]')")


# The training script's pure parts, without a database.
def test_threshold_is_the_lowest_that_keeps_precision():
    p = np.array([0.99, 0.95, 0.9, 0.8, 0.6])
    truth = np.array([True, True, False, True, True])
    assert threshold(p, truth, 1.0) == 0.95
    assert threshold(p, truth, 0.75) == 0.5  # never below one half
    assert threshold(np.array([0.9]), np.array([False]), 0.9) == 1.0


def test_decide_takes_the_most_probable_ring_that_clears_its_threshold():
    labels = ["dos_and_donts", "fresh", "procedures", "shocks"]
    p = np.array([[0.8, 0.1, 0.05, 0.05], [0.97, 0.01, 0.01, 0.01], [0.5, 0.2, 0.3, 0.0]])
    assert decide(p, labels, {"dos_and_donts": 0.95}) == ["fresh", "dos_and_donts", "procedures"]


def test_features_keep_the_training_vocabulary():
    train = Features.build([["a", "b"], ["a"], ["a", "c"], ["b", "a"], ["b"], ["b"]], np.ones((6, 1)), np.array([3.0]))
    assert train.vocabulary == ["a", "b"]  # c is seen once: dropped
    dev = Features.build([["c", "b"]], np.ones((1, 1)), np.array([3.0]), train.vocabulary)
    assert dev.matrix.toarray().tolist() == [[0.0, 1.0, 3.0]]


def test_chats_between_people_put_at_most_one_turn_in_a_thousand_into_a_never_cut_ring(db):
    """Every turn of our conversations between people (bench/corpus/conversations: long, emphatic, lists
    of tips, stories, rants; English and Turkish), remembered as an application would, with its embedding:
    a never-cut ring takes at most one turn in a thousand (and a long turn only through a sentence)."""
    from bench.conversation import chats_between_people

    chats = chats_between_people()
    turns = [(c, t) for c in chats for t in c.turns]
    for lang in ("en", "tr"):  # each language's default model (MiniLM for English, E5 for Turkish)
        db.execute("SELECT cogmem.create_tenant(%s, %s)", (f"chat-{lang}", inbound.LANGUAGES[lang]))
    models = dict(db.execute("SELECT tenant, embedding_model FROM cogmem.tenants").fetchall())
    by_lang = {
        lang: inbound.embed([t.text for c, t in turns if c.lang == lang], models[f"chat-{lang}"])
        for lang in ("en", "tr")
    }
    vectors = [by_lang[c.lang].pop(0) for c, _ in turns]
    never_cut = 0
    for (c, t), v in zip(turns, vectors, strict=True):
        ring, excerpt_id = db.execute(
            "SELECT r.ring, r.excerpt_id"
            " FROM cogmem.remember(%s, %s, embedding => %s, conversation => %s, speaker => %s) AS r",
            (f"chat-{c.lang}", t.text, v, c.id, t.speaker),
        ).fetchone()
        never_cut += ring in NEVER_CUT or inbound.excerpt_ring(db, excerpt_id) in NEVER_CUT
    assert len(turns) > 2000
    assert never_cut / len(turns) <= 0.001, never_cut


# -- what people say (issue 48) -----------------------------------------------------------------------


def test_the_voices_corpus_holds_whole_writers_out():
    from bench.corpus import UNSEEN_WRITERS, updates, voice_writers, voices

    rows = voices()
    assert len(voice_writers()) >= 12 and set(UNSEEN_WRITERS) <= set(voice_writers())
    # Preferences said as a state, and look-alikes of taste, in each language (the preference writers).
    for lang in ("en", "tr"):
        mine = [s for s in rows if s.lang == lang]
        assert sum(s.kind == "preference" and s.shape == "state" for s in mine) >= 90
        assert sum(s.ring == "fresh" and s.shape == "taste" for s in mine) >= 36
    assert all(s.ring in RINGS for s in rows)
    assert all((s.sentence is None) == (s.ring == "fresh") and (s.sentence or "") in s.text for s in rows)
    pairs = updates()
    assert sum(p["relation"] == "compatible" for p in pairs) >= 100 and len(pairs) >= 300
    assert {p["lang"] for p in pairs} == {"en", "tr"}
