"""Success read from the conversation (sql/059-followup.sql), measured two ways.

1. The judge on the test split of bench/corpus/followups (never seen in training): precision and recall of
   each verdict, and how often it abstains on a neutral turn; with the embeddings (the turn's and the
   question's) and without (the cues model), per language and per context.
2. 180 nights end to end. A tenant holds answers (the test split's answers whose follow-up confirms,
   corrects or repeats), each known to help or not. Every day questions are recalled in conversations of
   their own; the answer rests on the recall's best match. One tenant gets explicit feedback on every
   recall (the truth, credited to that match); the other gets none, only the user's next turn: the
   what people said of such an answer in the corpus (its own follow-up among them), a repeat on a miss,
   and often a neutral turn instead; the next turn is the conversation's next recall.
   Both remember the same turns, and a night of consolidation follows every day. The measure: how many of
   the promotions, reinforcements and weakenings explicit feedback gives the implicit tenant reproduces,
   and how many it makes that explicit feedback does not.

    PYTHONPATH=. .venv/bin/python bench/judge.py [--results bench/RESULTS.md] [--dsn DSN]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.corpus import followups
from bench.harness import given_or_private
from bench.inbound import create_tenant, declare, embed
from bench.results import replace_section

VERDICTS = ("confirmed", "corrected", "repeated")
NIGHTS = 180
RECALLS_PER_DAY = 8
ANSWERS = 80
SPEAKS = 0.6  # how often the next turn says anything of the answer; else it is a neutral turn


def vector(v: np.ndarray | None) -> str | None:
    return None if v is None else "[" + ",".join(f"{x:.6f}" for x in v) + "]"


def judged(conn: psycopg.Connection, records: list[dict], with_embedding: bool) -> list[str]:
    """The database judge's verdict on every record's follow-up."""
    turns = embed([r["followup"] for r in records]) if with_embedding else [None] * len(records)
    asked = embed([r["asked"] for r in records], query=True) if with_embedding else [None] * len(records)
    return [
        conn.execute(
            "SELECT verdict FROM cogmem.judge_followup(%s, %s::vector, %s::vector)",
            (r["followup"], vector(t), vector(a)),
        ).fetchone()[0]  # type: ignore[index]
        for r, t, a in zip(records, turns, asked, strict=True)
    ]


def scores(truth: list[str], predicted: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for v in VERDICTS:
        chosen = [t for t, p in zip(truth, predicted, strict=True) if p == v]
        wanted = [p for t, p in zip(truth, predicted, strict=True) if t == v]
        out[f"{v} P"] = sum(t == v for t in chosen) / len(chosen) if chosen else float("nan")
        out[f"{v} R"] = sum(p == v for p in wanted) / len(wanted) if wanted else float("nan")
    neutral = [p for t, p in zip(truth, predicted, strict=True) if t == "neutral"]
    out["abstain"] = sum(p == "neutral" for p in neutral) / len(neutral) if neutral else float("nan")
    # What sets an outcome: helped (confirmed) or not (corrected or repeated).
    failed = {"corrected", "repeated"}
    chosen = [t for t, p in zip(truth, predicted, strict=True) if p in failed]
    wanted = [p for t, p in zip(truth, predicted, strict=True) if t in failed]
    out["did not help P"] = sum(t in failed for t in chosen) / len(chosen) if chosen else float("nan")
    out["did not help R"] = sum(p in failed for p in wanted) / len(wanted) if wanted else float("nan")
    return out


def judge_lines(conn: psycopg.Connection) -> list[str]:
    test = followups("test")
    columns = [*(f"{v} {m}" for v in VERDICTS for m in "PR"), "did not help P", "did not help R", "abstain"]
    lines = [
        f"The judge on the test split of bench/corpus/followups ({len(test)} follow-up turns, "
        f"{Counter(r['lang'] for r in test)['tr']} Turkish; "
        + ", ".join(f"{n} {label}" for label, n in sorted(Counter(r["label"] for r in test).items()))
        + "). P and R: precision and recall of a verdict; did not help: corrected or repeated, which both set "
        "outcome 0; abstain: the share of neutral turns it leaves alone.",
        "",
        "| model | turns | " + " | ".join(columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    long = [
        r[0]
        for r in conn.execute(
            "SELECT cogmem._is_long(t) FROM unnest(%s::text[]) WITH ORDINALITY AS x (t, n) ORDER BY n",
            ([r["followup"] for r in test],),
        )
    ]
    for r, is_long in zip(test, long, strict=True):
        r["length"] = "long" if is_long else "short"
    for with_embedding, model in ((True, "followup-embedding"), (False, "followup-cues")):
        predicted = judged(conn, test, with_embedding)
        groups = [("all", test, predicted)]
        for key in ("length", "lang", "context"):
            for value in sorted({r[key] for r in test}):
                keep = [i for i, r in enumerate(test) if r[key] == value]
                groups.append((value, [test[i] for i in keep], [predicted[i] for i in keep]))
        for name, records, guess in groups:
            s = scores([r["label"] for r in records], guess)
            cells = " | ".join("–" if np.isnan(s[c]) else f"{s[c]:.2f}" for c in columns)
            lines.append(f"| {model} ({name}) | {len(records)} | {cells} |")
    return lines


def simulate(conn: psycopg.Connection, tenant: str, implicit: bool, seed: int) -> tuple[dict[str, set[str]], float]:
    """180 days of recalls and next turns in one tenant; returns the answers promoted, reinforced and weakened,
    and the share of recalls whose best match was the question's own answer."""
    rng = random.Random(seed)
    test = followups("test")
    answers = random.Random(0).sample([r for r in test if r["label"] != "neutral"], ANSWERS)
    said = {
        (label, lang): [r["followup"] for r in test if r["label"] == label and r["lang"] == lang]
        for label in ("confirmed", "corrected", "repeated", "neutral")
        for lang in ("en", "tr")
    }
    create_tenant(conn, tenant)
    conn.execute("SELECT cogmem.configure_tenant(%s, %s)", (tenant, Jsonb({"implicit_feedback": implicit})))
    texts = sorted(
        {r["answered"] for r in answers} | {r["asked"] for r in answers} | {t for v in said.values() for t in v}
    )
    vectors = dict(zip(texts, embed(texts), strict=True))
    queries = dict(zip(texts, embed(texts, query=True), strict=True))  # what recall is asked with
    ids: dict[int, str] = {}
    for r in answers:
        row = conn.execute(
            "SELECT memory_id FROM cogmem.remember(%s, %s, ring => 'fresh', embedding => %s::vector)",
            (tenant, r["answered"], vector(vectors[r["answered"]])),
        ).fetchone()
        ids[row[0]] = r["answered"]  # type: ignore[index]
    start = conn.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
    hits = 0
    for day in range(NIGHTS):
        for k in range(RECALLS_PER_DAY):
            r = rng.choice(answers)
            conversation = f"{tenant}-{day}-{k}"
            # The best match among the ranked rings, as cogmem._implicit_credit finds it (none: nothing was
            # relevant enough to inject).
            best = conn.execute(
                "SELECT r.recall_id, r.memory_id FROM cogmem.recall(%s, %s, %s::vector, conversation => %s) AS r"
                " WHERE r.layer IN ('long_term', 'habits', 'procedures', 'fresh') ORDER BY r.score DESC LIMIT 1",
                (tenant, r["asked"], vector(queries[r["asked"]]), conversation),
            ).fetchone()
            recall_id, used = best if best else (None, None)
            hit = ids.get(used) == r["answered"]
            hits += hit
            # What the user says next: what people say of such an answer (its own follow-up among them), a
            # repeat when the answer missed the question, or often something neutral.
            label = (r["label"] if hit else "repeated") if rng.random() < SPEAKS else "neutral"
            turn = rng.choice(said[label, r["lang"]])
            if not implicit and recall_id is not None:
                conn.execute(
                    "SELECT cogmem.feedback(%s, %s, %s)", (recall_id, float(hit and r["label"] == "confirmed"), [used])
                )
            # The next turn is the conversation's next recall, as an agent recalls for every message.
            conn.execute(
                "SELECT 1 FROM cogmem.recall(%s, %s, %s::vector, conversation => %s) LIMIT 1",
                (tenant, turn, vector(queries[turn]), conversation),
            )
        conn.execute("SELECT * FROM cogmem.consolidate(%s, %s)", (start + timedelta(days=day + 1), tenant))
    rows = conn.execute(
        "SELECT memory_id, ring, reinforced, confidence FROM cogmem.memory_overview WHERE tenant = %s", (tenant,)
    ).fetchall()
    state: dict[str, set[str]] = {"promoted": set(), "reinforced": set(), "weakened": set()}
    for memory_id, ring, reinforced, confidence in rows:
        text = ids[memory_id]
        if ring in ("long_term", "habits"):
            state["promoted"].add(text)
        if reinforced:
            state["reinforced"].add(text)
        if confidence < 0.5:
            state["weakened"].add(text)
    return state, hits / (NIGHTS * RECALLS_PER_DAY)


def end_to_end_lines(conn: psycopg.Connection) -> list[str]:
    explicit, hit_rate = simulate(conn, "judge-explicit", implicit=False, seed=7)
    implicit, _ = simulate(conn, "judge-implicit", implicit=True, seed=7)
    stats = conn.execute(
        "SELECT recalls, implicit, judged_confirmed, judged_corrected, judged_repeated, abstained"
        " FROM cogmem.outcome_stats WHERE tenant = 'judge-implicit'"
    ).fetchone()
    lines = [
        f"{NIGHTS} nights, {RECALLS_PER_DAY} questions a day over {ANSWERS} answers of the test split (each helps "
        f"or not, as its follow-up says; the best match was the question's own answer in {hit_rate:.0%} of recalls); "
        f"the next turn speaks of the answer {SPEAKS:.0%} of the time. Explicit: "
        "feedback on every recall, no judge. Implicit: no feedback at all, the next turn judged. Implicit tenant: "
        f"{stats[0]} recalls (two per question: the question and the next turn), {stats[1]} implicit outcomes; "  # type: ignore[index]
        f"verdicts confirmed {stats[2]}, corrected {stats[3]}, repeated {stats[4]}, abstained {stats[5]}.",  # type: ignore[index]
        "",
        "| decision | explicit | implicit | reproduced | share reproduced | implicit only | of them, right |",
        "|---|---|---|---|---|---|---|",
    ]
    helps = {r["answered"]: r["label"] == "confirmed" for r in followups("test")}
    total_e = total_both = 0
    for decision in ("promoted", "reinforced", "weakened"):
        e, i = explicit[decision], implicit[decision]
        both = e & i
        total_e += len(e)
        total_both += len(both)
        share = f"{len(both) / len(e):.2f}" if e else "–"
        # Explicit feedback also scores an answer 0 when it was the best match for another question; an
        # answer that helps its own question, promoted anyway, is no error of the judge's.
        right = sum(helps[a] == (decision != "weakened") for a in i - e)
        lines.append(f"| {decision} | {len(e)} | {len(i)} | {len(both)} | {share} | {len(i - e)} | {right} |")
    lines.append(f"| all | {total_e} | | {total_both} | {total_both / max(total_e, 1):.2f} | | |")
    return lines


def cost_lines(conn: psycopg.Connection, rounds: int = 150) -> list[str]:
    """What judging costs a turn: remember of a turn that follows a recall in its conversation (judged),
    against the same turn with no recall awaiting it (nothing to judge), alternating, medians."""
    create_tenant(conn, "judge-cost")
    test = followups("test")
    facts = [r["answered"] for r in test[:60]]
    vectors = dict(
        zip(
            facts + [r["asked"] for r in test] + [r["followup"] for r in test],
            embed(facts + [r["asked"] for r in test] + [r["followup"] for r in test]),
            strict=True,
        )
    )
    for fact in facts:
        conn.execute(
            "SELECT 1 FROM cogmem.remember('judge-cost', %s, 'fresh', embedding => %s::vector)",
            (fact, vector(vectors[fact])),
        )
    judged: list[float] = []
    alone: list[float] = []
    for n in range(rounds):
        r = test[n % len(test)]
        for awaited, times in ((True, judged), (False, alone)):
            conversation = f"cost-{n}-{awaited}"
            if awaited:
                conn.execute(
                    "SELECT 1 FROM cogmem.recall('judge-cost', %s, %s::vector, conversation => %s)",
                    (r["asked"], vector(embed([r["asked"]], query=True)[0]), conversation),
                )
            start = time.perf_counter()
            conn.execute(
                "SELECT 1 FROM cogmem.remember('judge-cost', %s, embedding => %s::vector, conversation => %s)",
                (f"{r['followup']} ({n}, {awaited})", vector(vectors[r["followup"]]), conversation),
            )
            times.append((time.perf_counter() - start) * 1000)
    a, b = statistics.median(judged), statistics.median(alone)
    return [
        f"What judging costs a turn ({rounds} rounds, alternating, medians on this machine): remember of a turn "
        f"that follows a recall of its conversation (judged) {a:.1f} ms, the same turn with no recall awaiting "
        f"it {b:.1f} ms: {a / b:.2f}× (the difference is the judge and what it writes: the "
        "verdict, the outcome and their audit rows)."
    ]


def main(dsn: str, results: Path | None) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        declare(conn)
        lines = judge_lines(conn)
        lines += ["", *end_to_end_lines(conn)]
        lines += ["", *cost_lines(conn)]
    print("\n".join(lines))
    if results:
        replace_section(results, lines, "Success read from the conversation")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    with given_or_private(args.dsn, 5450, tuned=False, server_python=False) as dsn:
        main(dsn, args.results)
