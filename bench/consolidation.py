"""Consolidation at scale: one night over N memories in 1,000 tenants, timed, at several scales.

`python bench/consolidation.py [--scales 100000,1000000]` prints a Markdown section; `make bench` puts it
into bench/RESULTS.md. Each scale loads a fresh database of the private cluster with set-based SQL:
memories spread over the past year, every tenant with memories in every ring, a fifth of them recalled
with mixed outcomes, the rest never recalled, so every decision has work to do: this first night is
the heaviest a tenant sees. The load
ends with VACUUM (ANALYZE), so autovacuum does not compete with the night being timed. The HNSW index
is left out: building it over a million vectors takes longer than the night being measured, and the
nightly near-duplicate search runs on the (tenant, ring) index then, for the memories created since
the previous night.
"""

from __future__ import annotations

import argparse
import time

import psycopg

from cogmem_pg.migrate import install

TENANTS = 1000
POOL = 20000  # distinct random vectors the memories draw from

LOAD = """
DROP INDEX cogmem.memories_embedding_idx;
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


def measure(admin_dsn: str, dsn_for, memories: int) -> tuple[float, float, dict[str, int]]:
    name = f"bench_consolidation_{memories}"
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    dsn = dsn_for(name)
    try:
        install(dsn)
        as_of = "2026-11-30 03:00:00+00"
        with psycopg.connect(dsn, autocommit=True) as conn:
            started = time.perf_counter()
            # Client-side binding: the load is several statements in one string.
            psycopg.ClientCursor(conn).execute(
                LOAD, {"tenants": TENANTS, "pool": POOL, "memories": memories, "as_of": as_of}
            )
            conn.execute("VACUUM (ANALYZE)")  # a night runs on a settled database, not mid-autovacuum
            conn.execute("CHECKPOINT")  # nor in the checkpoint that the load itself made due
            loaded = time.perf_counter() - started
            started = time.perf_counter()
            conn.execute("CALL cogmem.consolidate_nightly(%s)", (as_of,))
            night = time.perf_counter() - started
            decisions = dict(
                conn.execute(
                    "SELECT decision, sum(memories)::int FROM cogmem.consolidation_report GROUP BY decision"
                ).fetchall()
            )
        return loaded, night, decisions
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def section(admin_dsn: str, dsn_for, scales: list[int]) -> list[str]:
    lines = [
        f"One night of `CALL cogmem.consolidate_nightly()` (one transaction per tenant) over {TENANTS:,} tenants.",
        "",
        "| memories | load s | night s | per 1k memories | merge | sibling | reinforce | promote | weaken | fade "
        "| forget |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    nights: list[float] = []
    for memories in scales:
        loaded, night, d = measure(admin_dsn, dsn_for, memories)
        nights.append(night)
        cells = [d.get(k, 0) for k in ("merge", "sibling", "reinforce", "promote", "weaken", "fade", "forget")]
        lines.append(
            f"| {memories:,} | {loaded:.1f} | {night:.1f} | {1000 * night / memories:.2f} ms | "
            + " | ".join(f"{c:,}" for c in cells)
            + " |"
        )
    if len(scales) >= 2:
        lines += [
            "",
            f"Scaling: {scales[-1] // scales[-2]}× the memories took {nights[-1] / nights[-2]:.1f}× the time.",
        ]
    return lines


if __name__ == "__main__":
    import os
    import shutil
    import tempfile
    from pathlib import Path

    from cogmem_pg.cluster import Cluster

    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", default="100000,1000000")
    parser.add_argument("--results", type=Path, help="Markdown file whose '## Consolidation' section to replace")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="cogmem-bench-"))
    os.chmod(home, 0o755)
    # A server tuned for the machine (a quarter of its 24 GB as shared buffers), not the embedded default.
    cluster = Cluster(
        home=home / "cluster",
        port=5448,
        settings={"shared_buffers": "'6GB'", "maintenance_work_mem": "'1GB'", "max_wal_size": "'8GB'"},
    )
    cluster.start()
    try:
        lines = section(cluster.dsn("postgres"), cluster.dsn, [int(s) for s in args.scales.split(",")])
        print("\n".join(lines))
        if args.results:
            text = args.results.read_text(encoding="utf-8") if args.results.exists() else ""
            head = text.split("\n## Consolidation\n")[0].rstrip("\n")
            args.results.write_text(head + "\n\n## Consolidation\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    finally:
        cluster.stop()
        shutil.rmtree(home, ignore_errors=True)
