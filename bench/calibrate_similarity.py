"""The cosine thresholds of another embedder, matched to MiniLM's by quantile (issue 47).

Every threshold of cogmem (tenants' near-duplicate, merge, sibling, dissonance, guard, topic-bypass and
restated-candidate similarities, and the few in the SQL) was set on MiniLM cosines. Another model spreads
its cosines differently: multilingual E5 puts two unrelated Turkish sentences at 0.86. A threshold keeps
its meaning when the same share of pairs passes it: for each MiniLM threshold t, the share of pairs with a
MiniLM cosine of at least t, then the E5 cosine that the same share of pairs reaches. The pairs: every
pair of 2,500 statements of bench/corpus (train and dev, both languages, about 3 million), and the labelled
duplicate and contradiction pairs (which put weight where the high thresholds are).

Then the labelled duplicate pairs (test split) are decided by each model's own near-duplicate and sibling
thresholds, as a check that the matched ones mean the same.

    PYTHONPATH=. .venv/bin/python bench/calibrate_similarity.py
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.corpus import pairs, statements
from bench.inbound import embed
from cogmem_pg.embed import E5_MODEL_ID, MODEL_ID

# name: MiniLM's value (sql/schema/tables.sql, sql/070-recall.sql, sql/150-guard.sql, sql/059-followup.sql)
THRESHOLDS = {
    "duplicate_similarity": 0.92,
    "merge_similarity": 0.92,
    "sibling_similarity": 0.85,
    "candidate_restated_similarity": 0.7,
    "topic_bypass_similarity": 0.6,
    "dissonance_similarity": 0.4,
    "guard_similarity": 0.35,
    "lesson_similarity": 0.8,
    "conversation_similarity": 0.2,
    "untopical_similarity": 0.35,
    "same_message_similarity": 0.98,
}
SAMPLE = 2500


def unit(vectors: list[list[float]]) -> np.ndarray:
    x = np.asarray(vectors, dtype=np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def vectors_of(model: str, texts: list[str], query: bool = False) -> np.ndarray:
    return unit([list(v) for v in embed(texts, model, query=query)])  # type: ignore[arg-type]


def cosines(model: str, texts: list[str], labelled: list[tuple[str, str]], query: bool) -> np.ndarray:
    """The cosines of every pair of TEXTS, then of each labelled pair; with QUERY, the first of each pair
    by the query side (a question against what is stored: recall's, guard_check's gates)."""
    x, y = vectors_of(model, texts, query), vectors_of(model, texts)
    upper = np.triu_indices(len(texts), k=1)
    everyone = (x @ y.T)[upper]
    a = vectors_of(model, [p[0] for p in labelled], query)
    b = vectors_of(model, [p[1] for p in labelled])
    return np.concatenate([everyone, (a * b).sum(axis=1)])


def matched(minilm: np.ndarray, other: np.ndarray, threshold: float) -> float:
    share = float((minilm >= threshold).mean())
    return float(np.quantile(other, 1 - share))


def main() -> None:
    rng = random.Random(47)
    known = statements("train") + statements("dev")
    texts = [s.text for s in rng.sample(known, SAMPLE)]
    labelled = [(r["a"], r["b"]) for r in pairs("duplicates", "train") + pairs("duplicates", "dev")]
    labelled += [(r["established"], r["new"]) for r in pairs("dissonance", "train") + pairs("dissonance", "dev")]
    minilm = cosines(MODEL_ID, texts, labelled, False)
    e5 = cosines(E5_MODEL_ID, texts, labelled, False)
    e5_query = cosines(E5_MODEL_ID, texts, labelled, True)
    print(
        f"{len(minilm)} pairs; median cosine MiniLM {np.median(minilm):.3f}, E5 {np.median(e5):.3f}, "
        f"E5 question to text {np.median(e5_query):.3f}"
    )
    print("| threshold | MiniLM | share of pairs at or above | E5, matched | E5 question to text, matched |")
    print("|---|---:|---:|---:|---:|")
    found = {}
    for name, value in THRESHOLDS.items():
        found[name] = round(matched(minilm, e5, value), 3)
        asked = matched(minilm, e5_query, value)
        print(f"| {name} | {value} | {(minilm >= value).mean():.5f} | {found[name]:.3f} | {asked:.3f} |")
    same = (vectors_of(E5_MODEL_ID, texts, True) * vectors_of(E5_MODEL_ID, texts)).sum(axis=1)
    print(
        f"E5, a text's question side to its passage side: min {same.min():.3f}, "
        f"1% {np.quantile(same, 0.01):.3f}, median {np.median(same):.3f}"
    )
    test = pairs("duplicates", "test")
    for model, duplicate, sibling in (
        (MODEL_ID, THRESHOLDS["duplicate_similarity"], THRESHOLDS["sibling_similarity"]),
        (E5_MODEL_ID, found["duplicate_similarity"], found["sibling_similarity"]),
    ):
        a, b = vectors_of(model, [r["a"] for r in test]), vectors_of(model, [r["b"] for r in test])
        similarity = (a * b).sum(axis=1)
        for label in ("duplicate", "sibling", "distinct"):
            mine = similarity[[r["label"] == label for r in test]]
            print(
                f"{model} {label}: n={len(mine)} >=duplicate {np.mean(mine >= duplicate):.2f} "
                f">=sibling {np.mean(mine >= sibling):.2f} median {np.median(mine):.3f}"
            )


if __name__ == "__main__":
    main()
