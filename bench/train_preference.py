"""Trains the preference heads and adds them to cogmem_pg/data/routing-model.json, leaving the rest as it is.

A person's standing wish said as a state ("I'm vegetarian", "texts are better for me", "Celsius and km for
me") binds like a rule and reads like a fact: the router's ring heads give it p(dos_and_donts) 0.003, and
teaching them states moved their calibration so that plain rules fell under their thresholds
(docs/understanding.md, "Preferences said as a state"). The preference heads are models of their own
(``preference``, ``preference@multilingual-e5-small-q4``: the embedding, the cues and the terms, as the
ring heads read them, without the hidden layer), and they only ever make a candidate: a message the ring
head sends to fresh with no candidate is asked about as a rule when its preference head finds it likely
(cogmem.classify). No ring threshold moves.

They learn, on short texts, the preferences said as a state of the voices writers that are not held out
(positives) against every message that is no rule: our corpus's train and dev splits, the voices writers'
other messages (their look-alikes of taste, one-offs, the past, another person's taste, questions) and the
turns of our chats between people. Rules said as directives are left out: the ring heads have them. The
candidate threshold is the lowest at which at most SHARE of casual talk and look-alikes becomes one, out of
fold over whole writers and chats (bench/train_router.py's train_head). The held-out writers are never seen.

    PYTHONPATH=. .venv/bin/python bench/train_preference.py [--dsn DSN]   # default: a private cluster
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness import given_or_private
from bench.inbound import embed
from bench.train_router import (
    CUE_SCALE,
    DENSE_MODELS,
    EMBEDDING_DIMENSIONS,
    EMBEDDING_SCALE,
    MODEL_FILE,
    Features,
    inputs,
    model_rows,
    replace_models,
    train_head,
    training_rows,
)
from cogmem_pg.migrate import install

# Look-alikes of a preference (voices/, shape): they bind nothing, and are what a preference head must not ask about.
LOOK_ALIKES = ("taste", "one_off", "past", "other_person", "question")
# At most this share of casual talk and look-alikes may become a candidate by a preference head, out of fold.
SHARE = 0.01
WEIGHT = 10
PRECISION = {"preference": 0.98}


def main(dsn: str) -> None:
    labels: list[dict] = []
    terms: list[list] = []
    summary: list[str] = []
    install(dsn)
    known, groups, casual, wrapped, originals = training_rows()
    with psycopg.connect(dsn) as conn:
        _, cues, text_terms, long = inputs(conn, [s.text for s in known])
    state = np.array([s.shape == "state" for s in known])
    directive = np.array([s.ring == "dos_and_donts" for s in known]) & ~state
    # Each short text once, each preference WEIGHT times (in its writer's fold): a few hundred among twelve
    # thousand, they would otherwise hardly move a probability off zero.
    short = np.flatnonzero(~long & ~directive)
    learned = np.concatenate([short, np.repeat(short[state[short]], WEIGHT - 1)])
    y = np.where(state, "preference", "other")[learned]
    asked = (casual | np.array([s.shape in LOOK_ALIKES for s in known]))[learned]
    for embedding_model, suffix in DENSE_MODELS.items():
        vectors = np.asarray(embed(originals, embedding_model))[learned]
        dense = np.hstack([cues[learned], vectors])
        scale = np.concatenate([np.full(cues.shape[1], CUE_SCALE), np.full(EMBEDDING_DIMENSIONS, EMBEDDING_SCALE)])
        x = Features.build([text_terms[i] for i in learned], dense, scale)
        head, thresholds, c, p = train_head(
            x.matrix, y, ("preference",), len(x.vocabulary), asked, {"preference": SHARE}, PRECISION,
            groups[learned], wrapped[learned],
        )  # fmt: skip
        head_rows, head_terms = model_rows("preference" + suffix, "preference", head, thresholds, x)
        labels += head_rows
        terms += head_terms
        at = p[:, list(head.classes_).index("preference")] >= thresholds.candidate["preference"]
        judged = ~wrapped[learned] & (np.arange(len(learned)) < len(short))  # each text once
        summary.append(
            f"preference{suffix}: {judged.sum()} short statements ({(y[judged] == 'preference').sum()} preferences said"
            f" as a state), C = {c:g}, {len(x.vocabulary)} terms; candidate threshold"
            f" {thresholds.candidate['preference']:.3g}: out of fold, preferences asked about"
            f" {at[judged & (y == 'preference')].mean():.3f}, casual talk and look-alikes"
            f" {at[judged & asked].mean():.4f}."
        )
        print(summary[-1], file=sys.stderr)
    replace_models("preference", labels, terms, summary)
    print(f"wrote {MODEL_FILE}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=os.environ.get("DATABASE_URL", ""))
    args = parser.parse_args()
    with given_or_private(args.dsn, 5449, schema=False, tuned=False, server_python=False) as dsn:
        main(dsn)
