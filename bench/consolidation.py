"""Consolidation at scale: one night over N memories in 1,000 tenants, timed, at several scales.

`python bench/consolidation.py [--scales 100000,1000000]` prints a Markdown section; `make bench` puts it
into bench/RESULTS.md. Each scale loads a database of the private cluster once with set-based SQL:
memories spread over the past year, every tenant with memories in every ring, a fifth of them recalled
with mixed outcomes, the rest never recalled, so every decision has work to do: this first night is
the heaviest a tenant sees. The load ends with VACUUM (ANALYZE), so autovacuum does not compete with
the night being timed; each night then runs on a fresh copy of that database (CREATE DATABASE ...
TEMPLATE), with one worker and with two. Vector search is exact within a tenant (migration 0006): the
nightly near-duplicate search reads the memories created since the previous night through the
(tenant, ring) index.
"""

from __future__ import annotations

import argparse
import threading
import time

import psycopg

from cogmem_pg.migrate import install

TENANTS = 1000
POOL = 20000  # distinct random vectors the memories draw from

LOAD = """
SELECT cogmem.create_tenant('t' || lpad(g::text, 4, '0')) FROM generate_series(1, %(tenants)s) AS g;
CREATE TEMP TABLE pool AS
SELECT i, (SELECT array_agg(random() - 0.5) FROM generate_series(1, 384) WHERE i IS NOT NULL)::vector(384) AS v
FROM generate_series(0, %(pool)s - 1) AS i;
ALTER TABLE pool ADD PRIMARY KEY (i);
ANALYZE pool;
INSERT INTO cogmem.memories (tenant, ring, content, topics, embedding, created_at, updated_at)
SELECT 't' || lpad((g %% %(tenants)s + 1)::text, 4, '0'),
       (ARRAY['fresh', 'fresh', 'fresh', 'long_term', 'habits', 'procedures', 'shocks', 'dos_and_donts'])
           [1 + g / %(tenants)s %% 8]::cogmem.ring,
       'Memory ' || g || ' about web-' || (g %% 50) || ' and invoice ' || (g %% 997),
       ARRAY[(ARRAY['server', 'billing', 'dns', 'backup'])[1 + g / %(tenants)s %% 4]],
       p.v, c.at, c.at
FROM generate_series(1, %(memories)s) AS g
JOIN pool AS p ON p.i = g %% %(pool)s
CROSS JOIN LATERAL (SELECT %(as_of)s::timestamptz - (g %% 365) * interval '1 day' - interval '1 hour' AS at) AS c;
INSERT INTO cogmem.memory_stats (tenant, memory_id, recall_count, outcome_count, outcome_sum, last_recalled_at)
SELECT m.tenant, m.memory_id,
       CASE WHEN m.memory_id %% 5 = 0 THEN 3 ELSE 0 END,
       CASE WHEN m.memory_id %% 5 = 0 THEN 3 ELSE 0 END,
       CASE WHEN m.memory_id %% 5 = 0 THEN (m.memory_id %% 4) * 1.0 ELSE 0 END,
       CASE WHEN m.memory_id %% 5 = 0 THEN m.created_at + interval '1 day' END
FROM cogmem.memories AS m;
ANALYZE;
"""


def night(admin_dsn: str, dsn_for, template: str, as_of: str, workers: int) -> tuple[float, dict[str, int]]:
    """One first night on a fresh copy of the loaded database, with `workers` workers in parallel."""
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS bench_night WITH (FORCE)")
        admin.execute(f"CREATE DATABASE bench_night TEMPLATE {template}")
    dsn = dsn_for("bench_night")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT count(*) FROM cogmem.memories")  # the copy starts cold: read it once
        conn.execute("SELECT count(*) FROM cogmem.memory_stats")
        conn.execute("CHECKPOINT")  # nor in the checkpoint that the copy made due

        def work(worker: int) -> None:
            with psycopg.connect(dsn, autocommit=True) as c:
                c.execute("CALL cogmem.consolidate_nightly(%s, NULL, %s, %s)", (as_of, worker, workers))

        threads = [threading.Thread(target=work, args=(w,)) for w in range(1, workers + 1)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - started
        runs = conn.execute("SELECT count(*) FILTER (WHERE status = 'finished') FROM cogmem.consolidation_runs")
        assert runs.fetchone() == (workers,), "a worker did not finish"
        decisions = dict(
            conn.execute(
                "SELECT decision, sum(memories)::int FROM cogmem.consolidation_report GROUP BY decision"
            ).fetchall()
        )
    return seconds, decisions


def measure(admin_dsn: str, dsn_for, memories: int, workers: tuple[int, ...]) -> tuple[float, list[float], dict]:
    template = f"bench_consolidation_{memories}"
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {template} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {template}")
    try:
        install(dsn_for(template))
        as_of = "2026-11-30 03:00:00+00"
        with psycopg.connect(dsn_for(template), autocommit=True) as conn:
            started = time.perf_counter()
            # Client-side binding: the load is several statements in one string.
            psycopg.ClientCursor(conn).execute(
                LOAD, {"tenants": TENANTS, "pool": POOL, "memories": memories, "as_of": as_of}
            )
            conn.execute("VACUUM (ANALYZE)")  # a night runs on a settled database, not mid-autovacuum
            loaded = time.perf_counter() - started
        nights = []
        decisions: dict[str, int] = {}
        for n in workers:
            seconds, decisions = night(admin_dsn, dsn_for, template, as_of, n)
            nights.append(seconds)
        return loaded, nights, decisions
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS bench_night WITH (FORCE)")
            admin.execute(f"DROP DATABASE IF EXISTS {template} WITH (FORCE)")


def section(admin_dsn: str, dsn_for, scales: list[int], workers: tuple[int, ...] = (1, 2)) -> list[str]:
    heads = " | ".join(f"night s, {w} worker{'s' if w > 1 else ''}" for w in workers)
    lines = [
        f"One first night of `CALL cogmem.consolidate_nightly()` (each tenant's merge in steps of "
        f"`cogmem.night_step` new memories, then the rest of its night in one transaction) over {TENANTS:,} "
        "tenants, each time on a fresh copy of the same loaded database.",
        "",
        f"| memories | load s | {heads} | merge | sibling | reinforce | promote | weaken | fade | forget |",
        "|---:|---:|" + "---:|" * len(workers) + "---:|---:|---:|---:|---:|---:|---:|",
    ]
    all_nights: list[list[float]] = []
    for memories in scales:
        loaded, nights, d = measure(admin_dsn, dsn_for, memories, workers)
        all_nights.append(nights)
        cells = [d.get(k, 0) for k in ("merge", "sibling", "reinforce", "promote", "weaken", "fade", "forget")]
        lines.append(
            f"| {memories:,} | {loaded:.1f} | "
            + " | ".join(f"{n:.1f}" for n in nights)
            + " | "
            + " | ".join(f"{c:,}" for c in cells)
            + " |"
        )
    if len(scales) >= 2:
        ratios = ", ".join(
            f"{w} worker{'s' if w > 1 else ''} {all_nights[-1][i] / all_nights[-2][i]:.1f}×"
            for i, w in enumerate(workers)
        )
        lines += ["", f"Scaling: {scales[-1] // scales[-2]}× the memories took {ratios} the time."]
    lines += [
        "",
        "Measured with `python bench/consolidation.py` on a cluster with shared_buffers 6 GB and max_wal_size "
        "8 GB; VACUUM ANALYZE after the load, a CHECKPOINT and a read of both tables before each night. "
        "`schedule_nightly(cron, workers => N)` runs a night as N workers, each taking its share of tenants.",
    ]
    return lines


if __name__ == "__main__":
    from pathlib import Path

    from bench.harness import private_cluster

    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", default="100000,1000000")
    parser.add_argument("--results", type=Path, help="Markdown file whose '## Consolidation' section to replace")
    args = parser.parse_args()
    with private_cluster(5448) as cluster:
        lines = section(cluster.dsn("postgres"), cluster.dsn, [int(s) for s in args.scales.split(",")])
        print("\n".join(lines))
        if args.results:
            text = args.results.read_text(encoding="utf-8") if args.results.exists() else ""
            head, _, rest = text.partition("\n## Consolidation\n")
            tail = rest[rest.find("\n## ") :] if "\n## " in rest else ""  # the sections after it (Gut)
            body = "\n\n## Consolidation\n\n" + "\n".join(lines) + "\n"
            args.results.write_text(head.rstrip("\n") + body + tail, encoding="utf-8")
