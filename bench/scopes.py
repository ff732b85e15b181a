"""What scopes cost recall: the same 100k memories with and without persons and agents, one run.

`python bench/scopes.py [--memories 100000] [--results bench/RESULTS.md]` loads the scale bench's
workload (bench/scale.py: 1,000 tenants, seed 1, random unit vectors) twice into one private cluster: as
it is, and with a scope on each memory (sql/015-scopes.sql): two in five shared by the tenant, the rest
one of twenty persons of the tenant, half of those heard by one of two agents. Then `cogmem.recall` at
the default budget, interleaved in random order with the same tenant, message and vector: on the
unscoped database with no scope, on the scoped one for a person and an agent (what a scoped application
calls), and on the scoped one with no scope (what an application that names none sees there). Reported:
medians and 90th percentiles, and each median's ratio to the unscoped recall's (target: ≤ 1.2×).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import zlib
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from bench.harness import private_database
from bench.results import replace_section
from bench.scale import MESSAGES, TENANTS, load
from bench.workload import tenant_names
from cogmem_pg.migrate import install

PERSONS = 20
AGENTS = ("support", "billing")
CALLS = 400
UNSCOPED = "unscoped memories, no scope"
SCOPED = "scoped memories, for a person and an agent"
SCOPED_NONE = "scoped memories, no scope (the shared only)"


def scope_of(row: int) -> dict[str, str]:
    """The person and agent of a workload row: stable, two in five shared, half of the rest with an agent."""
    h = zlib.crc32(str(row).encode())
    if h % 5 < 2:
        return {}
    scope = {"person": f"person-{h // 5 % PERSONS}"}
    if h // 100 % 2:
        scope["agent"] = AGENTS[h // 200 % 2]
    return scope


def timings(plain_dsn: str, scoped_dsn: str) -> dict[str, list[float]]:
    rng = random.Random(35)
    tenants = tenant_names(TENANTS)
    calls = {
        UNSCOPED: (plain_dsn, "SELECT * FROM cogmem.recall(%(t)s, %(m)s, %(v)b)"),
        SCOPED: (scoped_dsn, "SELECT * FROM cogmem.recall(%(t)s, %(m)s, %(v)b, person => %(p)s, agent => %(a)s)"),
        SCOPED_NONE: (scoped_dsn, "SELECT * FROM cogmem.recall(%(t)s, %(m)s, %(v)b)"),
    }
    times: dict[str, list[float]] = {name: [] for name in calls}
    conns = {dsn: psycopg.connect(dsn, autocommit=True) for dsn in (plain_dsn, scoped_dsn)}
    try:
        for conn in conns.values():
            register_vector(conn)
            conn.execute("SET cogmem.embed = off")
        for n in range(CALLS + 20):  # the first 20 warm the plan caches
            vector = np.random.default_rng(n).standard_normal(384).astype(np.float32)
            params = {
                "t": tenants[rng.randrange(TENANTS)],
                "m": rng.choice(MESSAGES),
                "v": vector / np.linalg.norm(vector),
                "p": f"person-{rng.randrange(PERSONS)}",
                "a": rng.choice(AGENTS),
            }
            for name, (dsn, query) in rng.sample(list(calls.items()), len(calls)):
                started = time.perf_counter()
                conns[dsn].execute(query, params).fetchall()
                if n >= 20:
                    times[name].append((time.perf_counter() - started) * 1000)
    finally:
        for conn in conns.values():
            conn.close()
    return times


def section(times: dict[str, list[float]], total: int) -> list[str]:
    floor = statistics.median(times[UNSCOPED])
    lines = [
        f"The scale bench's {total:,} memories of {TENANTS:,} tenants, loaded twice into one cluster: as they "
        f"are, and scoped (two in five shared, the rest one of {PERSONS} persons of the tenant, half of those "
        f"heard by one of {len(AGENTS)} agents). `cogmem.recall` at the default budget, {CALLS} calls each, "
        "interleaved in random order with the same tenant, message and vector; single client.",
        "",
        "| recall | p50 ms | p90 ms | p50 ÷ unscoped |",
        "|---|---:|---:|---:|",
    ]
    for name, values in times.items():
        p90 = sorted(values)[int(0.9 * (len(values) - 1))]
        lines.append(
            f"| {name} | {statistics.median(values):.2f} | {p90:.2f} | {statistics.median(values) / floor:.2f}× |"
        )
    ratio = statistics.median(times[SCOPED]) / floor
    lines += ["", f"Recall for a person and an agent ÷ recall without scopes: {ratio:.2f}× (target ≤ 1.2×)."]
    return lines


def main(memories: int, results: Path | None) -> None:
    with private_database(5468, database="postgres") as plain_dsn:
        load(plain_dsn, memories)
        with psycopg.connect(plain_dsn, autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS bench_scopes WITH (FORCE)")
            admin.execute("CREATE DATABASE bench_scopes")
        scoped_dsn = plain_dsn.replace("dbname=postgres", "dbname=bench_scopes")
        install(scoped_dsn)
        load(scoped_dsn, memories, scope=scope_of)
        lines = section(timings(plain_dsn, scoped_dsn), memories)
        print("\n".join(lines), flush=True)
    if results:
        replace_section(results, lines, "Recall with scopes")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    main(args.memories, args.results)
