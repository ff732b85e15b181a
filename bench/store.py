"""The LangGraph store's cost per call (the '## LangGraph store' section of bench/RESULTS.md).

`PYTHONPATH=. .venv/bin/python bench/store.py [--results bench/RESULTS.md] [--items 1000] [--calls 300]
[--linearity-only]`

Each CogmemStore call against floors measured in the same run, interleaved in random order: a round
trip (`SELECT 1`), what a bare key-value table in PostgreSQL costs (a jsonb upsert and a read by key),
and embedding one text on the client (an indexed put embeds its text, a search its query). Medians and
ratios; absolute figures move with the machine.

Then the linearity of a put's redaction (sql/180-store.sql, _redact_json): a 1 MB value against ten
values of 100 KB, in the same run, interleaved; linear when the 1 MB put takes under 2x the ten (the
exit status says whether it did).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from langgraph.store.base import PutOp
from psycopg.types.json import Jsonb

from bench.harness import private_database
from bench.redaction_corpus import luhn_card
from bench.results import replace_section
from bench.run import machine_of
from bench.scenarios import PAIRS, distractors
from cogmem_pg.client import Client
from cogmem_pg.embed import default_embedder
from cogmem_pg.langgraph import CogmemStore

NAMESPACE = ("memories", "user-1")


def measure(dsn: str, items: int, calls: int) -> tuple[dict[str, list[float]], float]:
    embedder = default_embedder()
    if embedder is None:
        raise SystemExit("bench/store.py embeds for real: install the [embed] extra")
    rng = random.Random(5)
    texts = distractors(items + calls * 2 + 10, seed=9)
    with Client(dsn, embedder=embedder) as client, psycopg.connect(dsn, autocommit=True) as raw:
        client.create_tenant("bench")
        store = CogmemStore(client, "bench")
        raw.execute("CREATE TABLE bare_kv (namespace text[], key text, value jsonb, PRIMARY KEY (namespace, key))")
        started = time.perf_counter()
        for first in range(0, items, 50):  # a loader's batches: one transaction and one embedding call each
            store.batch([PutOp(NAMESPACE, f"k{n}", {"content": texts[n], "n": n % 7})
                         for n in range(first, min(first + 50, items))])  # fmt: skip
        load_rate = items / (time.perf_counter() - started)
        raw.execute("ANALYZE")
        fresh = iter(texts[items:])
        counter = iter(range(10**9))

        def kv_put() -> None:
            raw.execute(
                "INSERT INTO bare_kv VALUES (%s, %s, %s)"
                " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value",
                (list(NAMESPACE), f"b{next(counter)}", Jsonb({"content": next(fresh), "n": 1})),
            )

        ops: dict[str, Callable[[], object]] = {
            "round trip (SELECT 1)": lambda: raw.execute("SELECT 1").fetchall(),
            "bare jsonb upsert": kv_put,
            "bare read by key": lambda: raw.execute(
                "SELECT value FROM bare_kv WHERE namespace = %s AND key = %s", (list(NAMESPACE), "b0")
            ).fetchall(),
            "embed one text (client)": lambda: embedder.embed([rng.choice(texts)]),
            "put, indexed (a memory)": lambda: store.put(NAMESPACE, f"new{next(counter)}", {"content": next(fresh)}),
            "put, index=False": lambda: store.put(NAMESPACE, f"raw{next(counter)}", {"content": "x"}, index=False),
            "get": lambda: store.get(NAMESPACE, f"k{rng.randrange(items)}"),
            "search, filter": lambda: store.search(("memories",), filter={"n": 3}, limit=10),
            "search, query": lambda: store.search(("memories",), query=rng.choice(PAIRS)[1], limit=10),
            "cogmem.recall (for scale)": lambda: client.recall("bench", rng.choice(PAIRS)[1]),
        }
        kv_put()  # b0 exists for the read
        timings: dict[str, list[float]] = {name: [] for name in ops}
        for _ in range(calls):
            for name, op in rng.sample(list(ops.items()), len(ops)):
                t0 = time.perf_counter()
                op()
                timings[name].append((time.perf_counter() - t0) * 1000)
    return timings, load_rate


def value_of(size: int, seed: int) -> dict[str, Any]:
    """A store value of about SIZE bytes of JSON text as an application keeps one: notes with text, numbers,
    tags and nested fields, and here and there a secret (a card, a password field) to redact."""
    rng = random.Random(seed)
    words = ["deploy", "staging", "nginx", "backup", "Tuesday", "meeting", "invoice", "customer", "server"]
    notes: list[dict[str, Any]] = []
    value: dict[str, Any] = {"owner": "bench", "notes": notes}
    used = 30
    while used < size:
        n = len(notes)
        note: dict[str, Any] = {
            "text": " ".join(rng.choice(words) for _ in range(rng.randrange(4, 16))),
            "n": rng.randrange(10**6),
            "tags": rng.sample(words, 2),
            "meta": {"by": rng.choice(["ayse", "mehmet", "defne"]), "ok": rng.random() < 0.5},
        }
        if n % 50 == 7:
            note["text"] += f" paid with {luhn_card(rng)}"
        if n % 50 == 23:
            note["password"] = f"hunter{n}"
        notes.append(note)
        used += len(json.dumps(note)) + 2
    return value


def linearity(dsn: str, rounds: int) -> dict[str, list[float]]:
    """Seconds per round: one put of a 1 MB value, ten puts of 100 KB values, in random order per round;
    and the value of issue 37 (an array of 32,000 strings, 458 KB) for the record."""
    big = value_of(1_000_000, 1)
    small = [value_of(100_000, 2 + n) for n in range(10)]
    strings = {"items": [f"note {n:05d}." for n in range(32_000)]}
    with Client(dsn, embedder=False) as client:
        client.create_tenant("linear")

        timings: dict[str, list[float]] = {"1 MB": [], "10 × 100 KB": [], "32,000 strings": []}
        jobs = {"1 MB": [big], "10 × 100 KB": small, "32,000 strings": [strings]}
        rng = random.Random(7)
        for r in range(rounds):
            for name in rng.sample(list(jobs), len(jobs)):
                t0 = time.perf_counter()
                for n, value in enumerate(jobs[name]):
                    client.store_put("linear", ["bench"], f"{name}-{r}-{n}", value)
                timings[name].append(time.perf_counter() - t0)
    timings["sizes"] = [len(json.dumps(big)), sum(len(json.dumps(v)) for v in small), len(json.dumps(strings))]
    return timings


def linearity_section(timings: dict[str, list[float]], rounds: int) -> tuple[list[str], bool]:
    big, ten = statistics.median(timings["1 MB"]), statistics.median(timings["10 × 100 KB"])
    strings = statistics.median(timings["32,000 strings"])
    sizes = timings["sizes"]
    ratio = big / ten
    return [
        "",
        f"**Linearity of redaction** (`bench/store.py`, {rounds} rounds, interleaved): a put "
        f"(redaction and write, without a memory) of one value of "
        f"{sizes[0]:,} bytes of JSON (notes with text, numbers, tags, a card or a password field now and then) "
        f"took a median {big:.2f} s; ten puts of values of 100 KB ({sizes[1]:,} bytes in all) {ten:.2f} s: "
        f"ratio {ratio:.2f} ({'under' if ratio < 2 else 'NOT under'} 2×, so the cost grows with the size, not "
        f"its square). The value of issue 37, an array of 32,000 strings ({sizes[2]:,} bytes), took {strings:.2f} s "
        "(the issue reported 25 s for such a value when the redacted value was built by one concatenation per "
        "member).",
    ], ratio < 2


def section(timings: dict[str, list[float]], load_rate: float, items: int, calls: int, machine: str) -> list[str]:
    trip = statistics.median(timings["round trip (SELECT 1)"])
    kv = statistics.median(timings["bare jsonb upsert"])
    lines = [
        f"`CogmemStore` over one tenant with {items:,} items (their texts are memories), {calls} calls of each "
        "operation, interleaved in random order; single client over a Unix socket, MiniLM on the client. "
        f"Loading the items in batches of 50 puts ran at {load_rate:,.0f} items/s. {machine}.",
        "",
        "| operation | p50 ms | p95 ms | p50 / round trip | p50 / bare upsert |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, values in timings.items():
        p50 = statistics.median(values)
        p95 = statistics.quantiles(values, n=20)[18]
        lines.append(f"| {name} | {p50:.2f} | {p95:.2f} | {p50 / trip:.1f}× | {p50 / kv:.1f}× |")
    lines += [
        "",
        "An indexed put is a `remember` (redaction, routing, near-duplicate and contradiction checks, audit row) "
        "plus the keyed row, and embeds its text on the client; `index=False` is the keyed row alone. A search "
        "with a query ranks every item under the prefix with recall's signals and embeds the query; a search "
        "reads every item under its prefix, so its cost grows with them (a narrower prefix reads fewer).",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=Path, help="Markdown file whose '## LangGraph store' section to replace")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7, help="Rounds of the linearity check.")
    parser.add_argument("--linearity-only", action="store_true", help="Only the linearity check; print it.")
    parser.add_argument("--port", type=int, default=5449)
    args = parser.parse_args()
    with private_database(args.port, database="postgres") as dsn:
        lines: list[str] = []
        if not args.linearity_only:
            timings, load_rate = measure(dsn, args.items, args.calls)
            lines = section(timings, load_rate, args.items, args.calls, machine_of(dsn))
        linear, ok = linearity_section(linearity(dsn, args.rounds), args.rounds)
        lines += linear
    print("\n".join(lines))
    if args.results and not args.linearity_only:
        replace_section(args.results, lines, "LangGraph store")
    if not ok:
        raise SystemExit("a 1 MB value took 2x or more the time of ten of 100 KB: redaction is not linear")


if __name__ == "__main__":
    main()
