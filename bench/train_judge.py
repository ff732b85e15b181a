"""Trains the follow-up judge (sql/059-followup.sql) and writes it into cogmem_pg/data/routing-model.json.

What the user's next turn says of the answer a recall fed: confirmed, corrected, repeated or neutral.
Two models, each one multinomial head ``followup`` (logistic regression, scikit-learn):
- ``followup-embedding``: the turn's MiniLM embedding (``followup-embedding@multilingual-e5-small-q4``:
  E5's, the question by its query side as recall embeds it), its cosine to the question the recall answered,
  the cues of cogmem._followup_cues() and the terms of cogmem._inbound_terms();
- ``followup-cues``: the cues and the terms, for a turn or a question without an embedding.

They learn on the train and dev splits of bench/corpus/followups. Out-of-fold probabilities (five folds)
choose the regularisation and each verdict's threshold: the lowest probability at which its precision is
still at least PRECISION. Below it the judge abstains, and an abstention changes nothing: a wrong
"confirmed" strengthens a wrong memory, a wrong "corrected" weakens a right one. The test split is never
seen here (bench/judge.py reports it). The router's rows in the model file are kept as they are.

    PYTHONPATH=. .venv/bin/python bench/train_judge.py [--dsn DSN]   # default: a private cluster
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.corpus import followups
from bench.harness import given_or_private
from bench.inbound import embed
from bench.train_router import (
    CUE_SCALE,
    DENSE_MODELS,
    EMBEDDING_SCALE,
    Features,
    model_rows,
    replace_models,
    train_head,
)
from cogmem_pg.embed import DIMENSIONS as EMBEDDING_DIMENSIONS
from cogmem_pg.embed import MODEL_ID
from cogmem_pg.migrate import install
from cogmem_pg.paths import routing_model_file

VERDICTS = ("confirmed", "corrected", "repeated")
# Out-of-fold precision each verdict must keep; a little above what the test split must show, since the
# folds choose the thresholds.
PRECISION = {"confirmed": 0.96, "corrected": 0.92, "repeated": 0.92}
SIMILARITY_SCALE = 3.0


def inputs(conn: psycopg.Connection, records: list[dict]) -> tuple[np.ndarray, list[list[str]]]:
    """The cues and the terms of each follow-up turn, as the database computes them."""
    rows = conn.execute(
        "SELECT cogmem._followup_cues(t.text), cogmem._inbound_terms(t.text)"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS t (text, n) ORDER BY t.n",
        ([r["followup"] for r in records],),
    ).fetchall()
    return np.asarray([r[0] for r in rows], dtype=np.float64), [r[1] for r in rows]


def similarities(records: list[dict], model: str) -> tuple[np.ndarray, np.ndarray]:
    """The embedding of each turn by MODEL and its cosine to the question, embedded as recall embeds it (by
    E5's query side; the vectors are unit length)."""
    turns = np.asarray(embed([r["followup"] for r in records], model), dtype=np.float64)
    asked = np.asarray(embed([r["asked"] for r in records], model, query=True), dtype=np.float64)
    return turns, (turns * asked).sum(axis=1, keepdims=True)


def design(name: str, cues: np.ndarray, turns: np.ndarray, cosine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The dense columns of a model, in the order the SQL builds them, and their scale."""
    if name == "followup-cues":
        return cues, np.full(cues.shape[1], CUE_SCALE)
    dense = np.hstack([cues, cosine, turns])
    scale = np.concatenate(
        [np.full(cues.shape[1], CUE_SCALE), [SIMILARITY_SCALE], np.full(EMBEDDING_DIMENSIONS, EMBEDDING_SCALE)]
    )
    return dense, scale


def train(conn: psycopg.Connection) -> tuple[list[dict], list[list], list[str]]:
    known = followups("train") + followups("dev")
    cues, terms = inputs(conn, known)
    y = np.array([r["label"] for r in known])
    rows: list[dict] = []
    term_rows: list[list] = []
    summary = [f"followup: {len(known)} train and dev follow-up turns."]
    for name, model in [*(("followup-embedding" + s, m) for m, s in DENSE_MODELS.items()), ("followup-cues", MODEL_ID)]:
        turns, cosine = similarities(known, model)
        dense, scale = design(name, cues, turns, cosine)
        x = Features.build(terms, dense, scale)
        model, thresholds, c = train_head(x.matrix, y, VERDICTS, len(x.vocabulary), precision=PRECISION)
        head_rows, head_terms = model_rows(name, "followup", model, thresholds, x)
        rows += head_rows
        term_rows += head_terms
        shown = ", ".join(f"{v} {thresholds.sure[v]:.3g}" for v in VERDICTS)
        summary.append(f"{name}: C = {c:g}, {len(x.vocabulary)} terms; thresholds {shown}.")
        print(summary[-1], file=sys.stderr)
    return rows, term_rows, summary


def main(dsn: str) -> None:
    install(dsn)
    with psycopg.connect(dsn) as conn:
        rows, term_rows, summary = train(conn)
    replace_models("followup", rows, term_rows, summary)
    print(f"wrote {routing_model_file()}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=os.environ.get("DATABASE_URL", ""))
    with given_or_private(parser.parse_args().dsn, 5449, schema=False, tuned=False, server_python=False) as dsn:
        main(dsn)
