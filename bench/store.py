"""The LangGraph store's cost per call (the '## LangGraph store' section of bench/RESULTS.md).

`PYTHONPATH=. .venv/bin/python bench/store.py [--results bench/RESULTS.md] [--items 1000] [--calls 300]`

Each CogmemStore call against floors measured in the same run, interleaved in random order: a round
trip (`SELECT 1`), what a bare key-value table in PostgreSQL costs (a jsonb upsert and a read by key),
and embedding one text on the client (an indexed put embeds its text, a search its query). Medians and
ratios; absolute figures move with the machine.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
from langgraph.store.base import PutOp
from psycopg.types.json import Jsonb

from bench.gut import replace_section
from bench.run import machine_of
from bench.scenarios import PAIRS, distractors
from bench.server import tuned_cluster
from cogmem_pg.client import Client
from cogmem_pg.embed import default_embedder
from cogmem_pg.langgraph import CogmemStore
from cogmem_pg.migrate import install

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
    args = parser.parse_args()
    cluster, home = tuned_cluster(5449)
    try:
        dsn = cluster.dsn("postgres")
        install(dsn)
        timings, load_rate = measure(dsn, args.items, args.calls)
        lines = section(timings, load_rate, args.items, args.calls, machine_of(dsn))
    finally:
        cluster.stop()
        shutil.rmtree(home, ignore_errors=True)
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, lines, "LangGraph store")


if __name__ == "__main__":
    main()
