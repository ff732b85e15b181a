"""One tenant with many memories (issue 50): recall and remember against floors, before and after the tenant
has its own indexes (sql/016-large-tenants.sql).

`python bench/large_tenant.py [--sizes 10000,100000] [--calls 60] [--results bench/RESULTS.md]` prints a
Markdown section ("## One large tenant"); with --results it replaces that section of the file. In a fresh
database of a private cluster, one tenant per size is loaded with the workload of bench/workload.py
through `cogmem.remember_many` (the loader path, random unit vectors, each text numbered so that none
merges with another). Then, for each tenant, interleaved in random order with the same message and vector:

- `cogmem.recall` at 3,200 tokens;
- the bare exact top-10 of the tenant by cosine (the floor of any semantic lookup), and the naive recency
  query (LIMIT 50);
- `cogmem.remember` of one new memory (vector given), one per transaction.

Once without the tenant's own indexes (one pass over the tenant, as every tenant below the size is read),
once with them (built by the statements of `cogmem.tenant_indexes`, timed). Then two nights, timed: the
first after the load (every memory new), and one a day later whose new memories are the newest 1%.
`--night-on DSN --tenant T` times, on a tenant already loaded, what a night costs the tenant's own calls:
a day's 1% made new again, then the scheduled night (`consolidate_nightly`, its merge in steps) and
`consolidate()` in one transaction, each while a client recalls the tenant every 0.2 s.
Random vectors flatter no index, so the share of the exact top-100 that the index finds is measured on
real MiniLM vectors of real sentences: the turns of the conversations of bench/conversation.py in one
tenant, asked their questions.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from bench.harness import private_database
from bench.results import replace_section
from bench.scale import MESSAGES, percentile, remember_batches
from bench.workload import memories, unit_vectors

SEED = 1
BATCH = 1000
EF_SEARCH = 200  # what recall's reach asks (sql/016-large-tenants.sql, _recall_reach)
CALLS = {
    "recall": "SELECT * FROM cogmem.recall(%(t)s, %(m)s, %(v)b)",
    # `+ 0` keeps the planner off any index: the exact answer, whatever the tenant has.
    "bare exact top-10": (
        "SELECT memory_id, content FROM cogmem.memories WHERE tenant = %(t)s "
        "ORDER BY (embedding <=> %(v)b) + 0 LIMIT 10"
    ),
    "recency LIMIT 50": (
        "SELECT memory_id, content FROM cogmem.memories WHERE tenant = %(t)s ORDER BY created_at DESC LIMIT 50"
    ),
    "remember": "SELECT memory_id FROM cogmem.remember(%(t)s, %(c)s, embedding => %(v)b)",
}


def load(dsn: str, tenant: str, total: int, loaders: int = 2) -> float:
    """Loads TOTAL workload memories into TENANT through remember_many; returns the seconds it took."""
    rows = [dataclasses.replace(m, tenant=tenant) for m in memories(total, tenants=1, seed=SEED)]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
    # Each text numbered, so that none merges with another.
    return remember_batches(
        dsn,
        rows,
        unit_vectors(total, SEED + total),
        lambda n, m: {"content": f"{m.content} (note {n})", "ring": m.ring, "topics": list(m.topics)},
        loaders,
    )


def build_indexes(dsn: str, tenant: str) -> float:
    """Runs the statements that give TENANT its own indexes; returns the seconds they took."""
    started = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        # The graph of a tenant's vectors builds in memory while it fits (about 1.6 KB a memory): beyond, it
        # builds on disk, several times slower.
        conn.execute("SET maintenance_work_mem = '4GB'")
        for (statement,) in conn.execute(
            "SELECT statement FROM cogmem.tenant_indexes(1) WHERE tenant = %s AND statement IS NOT NULL", (tenant,)
        ).fetchall():
            for one in statement.split("; "):
                conn.execute(one)
        conn.execute("ANALYZE cogmem.memories")
    return time.perf_counter() - started


def nights(dsn: str, tenant: str) -> tuple[float, float]:
    """The seconds of two nights of TENANT: the first after its load (every memory new: the merge looks at
    its bound, the 20,000 newest), then a day later, when the newest 1% are the day's new memories (said
    between the two nights)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute("SELECT * FROM cogmem.consolidate(now() + interval '23 hours', %s)", (tenant,)).fetchall()
        first = time.perf_counter() - started
        conn.execute(
            "UPDATE cogmem.memories SET created_at = now() + interval '1 day' WHERE tenant = %s AND memory_id IN "
            "(SELECT memory_id FROM cogmem.memories WHERE tenant = %s ORDER BY memory_id DESC LIMIT "
            "(SELECT count(*) / 100 FROM cogmem.memories WHERE tenant = %s))",
            (tenant, tenant, tenant),
        )
        started = time.perf_counter()
        conn.execute("SELECT * FROM cogmem.consolidate(now() + interval '47 hours', %s)", (tenant,)).fetchall()
        return first, time.perf_counter() - started


def timings(dsn: str, tenant: str, calls: int) -> dict[str, list[float]]:
    """Each call of CALLS, CALLS times, interleaved in random order; milliseconds."""
    rng = random.Random(SEED)
    # Each call's text new to the tenant: the same text again is found by its hash and only rehearsed, so
    # that a second run (with its indexes) of the same seed would time that shortcut, not a remember.
    run = uuid.uuid4().hex[:8]
    times: dict[str, list[float]] = {name: [] for name in CALLS}
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET cogmem.embed = off")
        order = [name for name in CALLS for _ in range(calls + 3)]
        rng.shuffle(order)
        seen: dict[str, int] = dict.fromkeys(CALLS, 0)
        for n, name in enumerate(order):
            vector = np.random.default_rng(rng.randint(0, 1 << 30)).standard_normal(384).astype(np.float32)
            message, host = rng.choice(MESSAGES), rng.choice(["staging", "backup", "mail"])
            p = {"t": tenant, "m": message, "v": vector / np.linalg.norm(vector),
                 "c": f"Moved the {host} host to rack {n} today (run {run})"}  # fmt: skip
            started = time.perf_counter()
            conn.execute(CALLS[name], p).fetchall()
            seen[name] += 1
            if seen[name] > 3:  # the first three warm the plan caches
                times[name].append((time.perf_counter() - started) * 1000)
    return times


def index_finds(dsn: str) -> tuple[int, int, float, float]:
    """Real vectors: the turns of our conversations and LoCoMo's (when here) in one tenant, given their own
    indexes; each question's top 100 through the index against the exact one. Returns (turns, questions,
    mean share of the exact top-100 found, the worst question's share)."""
    from bench.conversation import LOCOMO, Vectors, load_locomo, load_ours

    conversations = load_ours() + (load_locomo() if LOCOMO.exists() else [])
    texts = [t.text for c in conversations for t in c.turns]
    questions = [q.text for c in conversations for q in c.questions]
    vectors = Vectors("minilm")
    turn_vectors, question_vectors = vectors(texts), vectors(questions, queries=True)
    tenant = "real_sentences"
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET cogmem.embed = off")
        conn.execute("SELECT cogmem.create_tenant(%s, 'english', 'all-MiniLM-L6-v2-onnx-int8')", (tenant,))
        for start in range(0, len(texts), BATCH):
            items = [{"content": f"{t} (turn {n})", "ring": "fresh"}
                     for n, t in enumerate(texts[start : start + BATCH], start=start)]  # fmt: skip
            conn.execute(
                "SELECT count(*) FROM cogmem.remember_many(%s, %s, %b, skip => '{near_duplicates,conflicts}')",
                (tenant, json.dumps(items), list(turn_vectors[start : start + BATCH])),
            )
    build_indexes(dsn, tenant)
    top = "SELECT memory_id FROM cogmem.memories WHERE tenant = %s ORDER BY embedding <=> %s LIMIT 100"
    exact_top = top.replace("embedding <=> %s", "(embedding <=> %s) + 0")  # no index serves it
    shares = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
        for vector in question_vectors:
            near = {r[0] for r in conn.execute(top, (tenant, vector))}
            exact = {r[0] for r in conn.execute(exact_top, (tenant, vector))}
            shares.append(len(near & exact) / len(exact))
    return len(texts), len(questions), statistics.fmean(shares), min(shares)


def measure(dsn: str, sizes: list[int], calls: int) -> dict:
    """Every size's tenant loaded, then timed without and with its own indexes."""
    result: dict = {"sizes": {}}
    for size in sizes:
        tenant = f"one_{size}"
        entry = {"load_s": load(dsn, tenant, size)}
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("VACUUM (ANALYZE) cogmem.memories")
        # One pass over a million memories takes seconds a call: fewer calls measure it well enough.
        entry["pass"] = timings(dsn, tenant, calls if size <= 100_000 else min(calls, 10))
        entry["index_s"] = build_indexes(dsn, tenant)
        entry["indexed"] = timings(dsn, tenant, calls)
        entry["first_night_s"], entry["night_s"] = nights(dsn, tenant)
        result["sizes"][size] = entry
        medians = {k: v if isinstance(v, float) else {c: statistics.median(t) for c, t in v.items()}
                   for k, v in entry.items()}  # fmt: skip
        print(f"{size}: {json.dumps(medians)}", file=sys.stderr)
    result["real"] = index_finds(dsn)
    return result


def section(result: dict, calls: int) -> list[str]:
    sizes = result["sizes"]
    p50 = {(s, way, call): statistics.median(e[way][call]) for s, e in sizes.items() for way in ("pass", "indexed")
           for call in CALLS}  # fmt: skip
    lines = [
        f"One tenant per size, the workload of `bench/workload.py` (random unit vectors), {calls} calls of each "
        "kind interleaved in random order, one client; milliseconds. *One pass*: the tenant read whole, as "
        "every tenant without its own indexes is; *indexed*: after `cogmem index-tenants` built its HNSW and "
        "GIN indexes (sql/016-large-tenants.sql).",
        "",
        "| memories | load s | index build s | recall p50 one pass | recall p50 indexed | recall p95 indexed "
        "| bare exact top-10 p50 | recency LIMIT 50 p50 | remember p50 one pass | remember p50 indexed "
        "| first night s | a night s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s, e in sizes.items():
        recall = e["indexed"]["recall"]
        lines.append(
            f"| {s:,} | {e['load_s']:.0f} | {e['index_s']:.0f} | {p50[(s, 'pass', 'recall')]:.1f} "
            f"| {p50[(s, 'indexed', 'recall')]:.1f} | {percentile(recall, 95):.1f} "
            f"| {p50[(s, 'indexed', 'bare exact top-10')]:.1f} | {p50[(s, 'indexed', 'recency LIMIT 50')]:.1f} "
            f"| {p50[(s, 'pass', 'remember')]:.1f} | {p50[(s, 'indexed', 'remember')]:.1f} "
            f"| {e['first_night_s']:.1f} | {e['night_s']:.1f} |"
        )
    small, large = min(sizes), max(sizes)
    recall = sizes[large]["indexed"]["recall"]
    lines += [
        "",
        f"Targets, one run: recall p50 at {large:,} (indexed) ÷ at {small:,} (≤ 3×): "
        f"**{p50[(large, 'indexed', 'recall')] / p50[(small, 'pass', 'recall')]:.2f}×** against its one pass "
        f"(what a tenant below `cogmem index-tenants`' 20,000 gets), "
        f"{p50[(large, 'indexed', 'recall')] / p50[(small, 'indexed', 'recall')]:.2f}× against it indexed; "
        f"recall p95 ÷ p50 at "
        f"{large:,} (≤ 2.5×): **{percentile(recall, 95) / statistics.median(recall):.2f}×**; remember p50 at "
        f"{large:,} (indexed) ÷ at {small:,} (≤ 1.5×): "
        f"**{p50[(large, 'indexed', 'remember')] / p50[(small, 'pass', 'remember')]:.2f}×** against its one "
        f"pass, {p50[(large, 'indexed', 'remember')] / p50[(small, 'indexed', 'remember')]:.2f}× indexed.",
        "",
        real_line(result["real"]),
    ]
    return lines


def real_line(real: tuple[int, int, float, float]) -> str:
    turns, questions, mean, worst = real
    return (
        f"Real vectors (MiniLM, {turns:,} turns of our conversations and LoCoMo's in one tenant, their "
        f"{questions:,} questions): the index finds **{mean:.3f}** of the exact top-100 on average, "
        f"{worst:.2f} for the worst question (`hnsw.ef_search` {EF_SEARCH}, m 16, ef_construction 64)."
    )


def night_waits(dsn: str, tenant: str, scheduled: bool) -> dict:
    """One night of TENANT whose new memories are a day's 1% (the newest not yet made new, said a day after
    the tenant's last night), while a client recalls the tenant every 0.2 s: the night's seconds and what
    the recalls waited (a call gives up after cogmem.lock_wait, 10 s)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        size, days = conn.execute(
            "SELECT (SELECT count(*) FROM cogmem.memories WHERE tenant = %s),"
            " (SELECT coalesce(max(night) - current_date, 0) + 1 FROM cogmem.consolidation_nights WHERE tenant = %s)",
            (tenant, tenant),
        ).fetchone()  # type: ignore[misc]
        conn.execute(  # the newest 1% that no earlier night saw: those are said in the future
            "UPDATE cogmem.memories SET created_at = now() + make_interval(days => %s) WHERE tenant = %s AND "
            "memory_id IN (SELECT memory_id FROM cogmem.memories WHERE tenant = %s AND created_at <= now() "
            "ORDER BY memory_id DESC LIMIT %s)",
            (days, tenant, tenant, size // 100),
        )
    done, waits, refused = False, [], 0

    def day() -> None:
        nonlocal refused
        rng = np.random.default_rng(days)
        with psycopg.connect(dsn, autocommit=True) as conn:
            register_vector(conn)
            conn.execute("SET cogmem.embed = off")
            while not done:
                vector = rng.standard_normal(384).astype(np.float32)
                started = time.perf_counter()
                try:
                    conn.execute(
                        "SELECT count(*) FROM cogmem.recall(%s, 'restart the servers tonight?', %s)",
                        (tenant, vector / np.linalg.norm(vector)),
                    )
                    waits.append((time.perf_counter() - started) * 1000)
                except psycopg.errors.LockNotAvailable:
                    refused += 1
                time.sleep(0.2)

    caller = threading.Thread(target=day)
    caller.start()
    time.sleep(2)
    as_of = "now() + make_interval(days => %s, hours => 1)"
    with psycopg.connect(dsn, autocommit=True) as conn:
        started = time.perf_counter()
        if scheduled:
            conn.execute(f"CALL cogmem.consolidate_nightly({as_of}, %s)", (days, tenant))
        else:
            conn.execute(f"SELECT * FROM cogmem.consolidate({as_of}, %s)", (days, tenant)).fetchall()
        seconds = time.perf_counter() - started
    time.sleep(1)
    done = True
    caller.join()
    return {"size": size, "seconds": seconds, "waits": waits, "refused": refused}


def night_lines(scheduled: dict, one: dict) -> list[str]:
    lines = [
        "| night | memories | new | night s | recalls during it | recall p50 ms | longest recall ms | refused (busy) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in (("scheduled, merge in steps", scheduled), ("consolidate(), one transaction", one)):
        lines.append(
            f"| {name} | {r['size']:,} | {r['size'] // 100:,} | {r['seconds']:.1f} | {len(r['waits'])} "
            f"| {statistics.median(r['waits']):.0f} | {max(r['waits']):.0f} | {r['refused']} |"
        )
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--results", type=Path, help="Markdown file whose '## One large tenant' section to replace")
    parser.add_argument("--real-only", action="store_true", help="only the index's share of the exact top-100")
    parser.add_argument("--night-on", help="a database holding a loaded tenant: time what its nights cost its calls")
    parser.add_argument("--tenant", default="one_1000000")
    args = parser.parse_args()
    if args.night_on:
        scheduled = night_waits(args.night_on, args.tenant, scheduled=True)
        print("\n".join(night_lines(scheduled, night_waits(args.night_on, args.tenant, scheduled=False))))
        sys.exit(0)
    if args.real_only:
        with private_database(5452) as dsn:
            print(real_line(index_finds(dsn)))
        sys.exit(0)
    with private_database(5451) as dsn:
        measured = measure(dsn, [int(s) for s in args.sizes.split(",")], args.calls)
    lines = section(measured, args.calls)
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, lines, "One large tenant")
