"""The PL/Proxy router's cost and what partitions buy (the '## Sharding' section of bench/RESULTS.md).

`PYTHONPATH=. .venv/bin/python bench/shards.py [--results bench/RESULTS.md]`

1. Per-call overhead: recall and remember through the router and directly on the tenant's shard,
   interleaved in random order, medians and their ratio.
2. Throughput with 1, 2 and 4 partitions (one shard cluster each, all on this machine), four client
   threads recalling for random tenants. With two cores the shards share the same CPUs, so the figure
   is honest for this machine only; the per-shard load is what separate machines would each carry.
Vectors come from the client (random unit vectors, the same on both paths); the servers do not embed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from bench.harness import bench_home
from bench.results import replace_section
from bench.run import machine_of
from bench.scenarios import PAIRS, distractors
from cogmem_pg.client import Client
from cogmem_pg.cluster import Cluster
from cogmem_pg.shards import ROUTER_DATABASE, LocalShards, init_local

TENANTS, PER_TENANT = 40, 200


def vector(rng: random.Random) -> np.ndarray:
    v = np.random.default_rng(rng.randint(0, 1 << 30)).standard_normal(384).astype(np.float32)
    return v / np.linalg.norm(v)


def layout(home: Path, nodes: int, partitions: int) -> tuple[Cluster, list[Cluster]]:
    router = Cluster(home=home / "router", port=5491)
    shards, _, _ = init_local(router, nodes, partitions)
    for cluster in [router, *shards.nodes()]:
        with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
            conn.execute("ALTER DATABASE cogmem SET cogmem.embed = 'off'")
    return router, shards.nodes()


@contextmanager
def layouts_home() -> Iterator[Path]:
    """A bench_home for layouts; every router and shard cluster started in it is stopped after."""
    with bench_home() as home:
        try:
            yield home
        finally:
            for cluster_home in home.glob("*/router"):
                Cluster(home=cluster_home, port=5491).stop()
                for node in LocalShards(home=cluster_home / "shards", base_port=5492).nodes():
                    node.stop()


def load(router_dsn: str) -> list[str]:
    rng = random.Random(3)
    texts = distractors(PER_TENANT * 2, seed=4)
    names = [f"bench-{n:02d}" for n in range(TENANTS)]
    with Client(router_dsn, embedder=False) as client:
        for name in names:
            client.create_tenant(name)
            items: list[str | dict] = [{"content": t, "ring": "fresh"} for t in rng.sample(texts, PER_TENANT)]
            client.remember_many(name, items, [vector(rng) for _ in items], skip=["near_duplicates", "conflicts"])
    return names


def overhead(router: Cluster, nodes: list[Cluster], names: list[str], calls: int) -> dict[str, list[float]]:
    rng = random.Random(9)
    with psycopg.connect(router.dsn(ROUTER_DATABASE), autocommit=True) as via:
        register_vector(via)
        home = dict(via.execute("SELECT t, cogmem_router.partition_of(t) & 1 FROM unnest(%s::text[]) AS t",
                                (names,)).fetchall())  # fmt: skip
        direct = [psycopg.connect(n.dsn(), autocommit=True) for n in nodes]
        for conn in direct:
            register_vector(conn)
        timings: dict[str, list[float]] = {k: [] for k in ("recall direct", "recall via router",
                                                             "remember direct", "remember via router")}  # fmt: skip
        texts = iter(distractors(calls * 4, seed=11))
        for _ in range(calls):
            tenant = rng.choice(names)
            shard = direct[home[tenant] % len(direct)]
            message, v = rng.choice(PAIRS)[1], vector(rng)
            steps = [
                ("recall direct", shard, "SELECT * FROM cogmem.recall(%s, %s, %s)", (tenant, message, v)),
                ("recall via router", via, "SELECT * FROM cogmem.recall(%s, %s, %s)", (tenant, message, v)),
                ("remember direct", shard, "SELECT * FROM cogmem.remember(%s, %s, 'fresh', NULL, %s)",
                 (tenant, next(texts), v)),
                ("remember via router", via, "SELECT * FROM cogmem.remember(%s, %s, 'fresh', NULL, %s)",
                 (tenant, next(texts), v)),
            ]  # fmt: skip
            for name, conn, query, params in rng.sample(steps, len(steps)):
                t0 = time.perf_counter()
                conn.execute(query, params).fetchall()
                timings[name].append((time.perf_counter() - t0) * 1000)
        for conn in direct:
            conn.close()
    return timings


def throughput(router_dsn: str, names: list[str], seconds: float = 10.0, threads: int = 4) -> float:
    stop = time.perf_counter() + seconds
    done = [0] * threads

    def work(n: int) -> None:
        rng = random.Random(n)
        with psycopg.connect(router_dsn, autocommit=True) as conn:
            register_vector(conn)
            while time.perf_counter() < stop:
                conn.execute("SELECT * FROM cogmem.recall(%s, %s, %s)",
                             (rng.choice(names), rng.choice(PAIRS)[1], vector(rng))).fetchall()  # fmt: skip
                done[n] += 1

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(done) / seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=Path, help="Markdown file whose '## Sharding' section to replace")
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    lines: list[str] = []
    with layouts_home() as home:
        router, nodes = layout(home / "two", 2, 4)
        names = load(router.dsn(ROUTER_DATABASE))
        timings = overhead(router, nodes, names, args.calls)
        machine = machine_of(router.dsn())
        for cluster in [router, *nodes]:
            cluster.stop()
        med = {k: statistics.median(v) for k, v in timings.items()}
        lines += [
            f"{TENANTS} tenants × {PER_TENANT} memories on two local shard clusters (four partitions) behind a "
            f"PL/Proxy router in a third; {args.calls} calls of each, interleaved in random order; one client over "
            f"Unix sockets. {machine}.",
            "",
            "| call | direct p50 ms | via router p50 ms | router ÷ direct |",
            "|---|---:|---:|---:|",
        ]
        for call in ("recall", "remember"):
            d, r = med[f"{call} direct"], med[f"{call} via router"]
            lines.append(f"| {call} | {d:.2f} | {r:.2f} | {r / d:.2f}× |")
        rates = {}
        for partitions in (1, 2, 4):
            router, nodes = layout(home / f"p{partitions}", partitions, partitions)
            names = load(router.dsn(ROUTER_DATABASE))
            rates[partitions] = throughput(router.dsn(ROUTER_DATABASE), names)
            for cluster in [router, *nodes]:
                cluster.stop()
        lines += [
            "",
            "Throughput of recall through the router, four client threads for 10 s, one shard cluster per "
            "partition, all on this machine:",
            "",
            "| partitions | recalls/s here | ÷ one partition | each shard's load here | model: N machines |",
            "|---:|---:|---:|---:|---:|",
        ]
        for partitions, rate in rates.items():
            model = rates[1] * partitions  # the one-partition rate already goes through the router
            lines.append(f"| {partitions} | {rate:.0f} | {rate / rates[1]:.2f}× | {rate / partitions:.0f}/s "
                         f"| {model:.0f}/s |")  # fmt: skip
        lines += [
            "",
            "On one machine the shards share its cores, so more partitions cannot add throughput here. On "
            "separate machines each shard carries a 1/N share of the tenants; the model's column is N times "
            "the one-partition rate, which already pays the router's per-call cost (above). It assumes "
            "tenants spread evenly and the router's own machine is not the limit.",
        ]
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, lines, "Sharding")


if __name__ == "__main__":
    main()
