"""What reading a message's parts costs the client (issue 48): Client.remember with clauses (it asks
cogmem.clauses() and embeds the parts it names, for the few messages the router reads part by part) against
Client(clauses=False), in the same run.

The held-out writers' messages of bench/corpus/voices/ (at most 300 per language, each language by its
default model), each remembered in a tenant of its own per run, the two clients interleaved in three rounds;
the median of each round, and the ratio of the medians' median. The floor is measured in the same run because
these machines are noisy.

    PYTHONPATH=. .venv/bin/python bench/clause_cost.py [--dsn DSN] [--results bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.corpus import HELD_OUT_WRITERS, voices
from bench.harness import given_or_private
from bench.inbound import LANGUAGES
from bench.results import replace_section
from cogmem_pg.client import Client

SECTION = "What reading a message's parts costs"
ROUNDS = 3
PER_LANGUAGE = 300


def median_remember_ms(client: Client, texts: list[str], language: str) -> float:
    """The median time of Client.remember over TEXTS, in a new tenant of LANGUAGE (its default model)."""
    tenant = f"cost-{uuid.uuid4().hex[:12]}"
    client.create_tenant(tenant, language)
    times = []
    for text in texts:
        started = time.perf_counter()
        client.remember(tenant, text)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def run(dsn: str) -> list[str]:
    lines = [
        "| language | messages | parts read: p50 per round (ms) | not read: p50 per round (ms) | ratio |",
        "|---|---:|---|---|---:|",
    ]
    with Client(dsn) as reading, Client(dsn, clauses=False) as floor:
        for lang, language in LANGUAGES.items():
            texts = [m.text for m in voices() if m.writer in HELD_OUT_WRITERS and m.lang == lang][:PER_LANGUAGE]
            medians: dict[str, list[float]] = {"reading": [], "floor": []}
            for _ in range(ROUNDS):
                medians["floor"].append(median_remember_ms(floor, texts, language))
                medians["reading"].append(median_remember_ms(reading, texts, language))
            ratio = statistics.median(medians["reading"]) / statistics.median(medians["floor"])
            shown = {k: ", ".join(f"{m:.1f}" for m in v) for k, v in medians.items()}
            lines.append(f"| {lang} | {len(texts)} | {shown['reading']} | {shown['floor']} | {ratio:.2f}× |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    with given_or_private(args.dsn, 5471, database="postgres") as dsn:
        table = run(dsn)
    lines = [
        "`bench/clause_cost.py` (issue 48): `Client.remember` as it reads a rule said as one clause (it asks "
        "`cogmem.clauses()` and embeds the parts it names), against `Client(clauses=False)`, in the same run. The "
        f"held-out writers' messages (at most {PER_LANGUAGE} per language, each language by its default model), "
        f"{ROUNDS} interleaved rounds.",
        "",
        *table,
        "",
    ]
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, lines, SECTION)


if __name__ == "__main__":
    main()
