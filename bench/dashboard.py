"""The dashboard at 100k memories: how long each page takes to render, and the plans of its queries.

`python bench/dashboard.py [--memories 100000] [--results bench/RESULTS.md]` loads the scale bench's
workload (bench/scale.py: 1,000 tenants, seed 1) into a private cluster, then gives it a month of use:
recalls through `cogmem.recall` with feedback on half of them, spread over 30 days (the one step done by
hand: created_at is set back, as the API stamps now), seven nights of consolidation, a Gut release and
the audit trail sealed. A dashboard then serves it (uvicorn, in a thread) as an operator's login role:
a member of cogmem_admin, cogmem_auditor and cogmem_gut, so row-level security applies as it would.

Each page is fetched over HTTP in random order, interleaved with the floor: a static file from the same
server (the HTTP round trip, with no query and no template). Reported: the median and 90th percentile of
each page, and the median's ratio to the floor's. The plans (EXPLAIN ANALYZE, BUFFERS) of every query
behind the pages go to bench/plans/dashboard.md.
"""

from __future__ import annotations

import argparse
import datetime
import random
import re
import statistics
import time
from pathlib import Path

import httpx
import psycopg
from pgvector.psycopg import register_vector

from bench.harness import private_database
from bench.results import replace_section
from bench.scale import MESSAGES, load
from bench.workload import tenant_names, unit_vectors
from cogmem_pg.dashboard import ServerThread
from cogmem_pg.dashboard import queries as q
from cogmem_pg.dashboard.app import SESSION_OPTIONS

ROLE = "cogmem_bench_dashboard"
RECALLS = 3000
NIGHTS = 7
ROUNDS = 21
PLANS = Path(__file__).parent / "plans" / "dashboard.md"


def month_of_use(dsn: str, tenants: list[str]) -> None:
    """Recalls with feedback over 30 days, seven nights, a Gut release and the sealed trail."""
    rng = random.Random(7)
    vectors = unit_vectors(RECALLS, 11)
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET cogmem.embed = off")
        busy = tenants[:50]  # a few busy tenants and a long tail, as real traffic is
        for n in range(RECALLS):
            tenant = rng.choice(busy) if rng.random() < 0.7 else rng.choice(tenants)
            recall_id = conn.execute(
                "SELECT recall_id FROM cogmem.recall(%s, %s, %s, conversation => %s) LIMIT 1",
                (tenant, rng.choice(MESSAGES), vectors[n], f"c{n % 400}"),
            ).fetchone()
            if recall_id and recall_id[0] and rng.random() < 0.5:
                conn.execute("SELECT cogmem.feedback(%s, %s::real)", (recall_id[0], rng.choice((0.0, 1.0, 1.0))))
        conn.execute(
            "UPDATE cogmem.recalls SET created_at = created_at - make_interval(days => (abs(hashtext(recall_id::text))"
            " % 30)::int)"
        )
        for days_ago in range(NIGHTS - 1, -1, -1):
            conn.execute("SELECT count(*) FROM cogmem.consolidate(now() - make_interval(days => %s))", (days_ago,))
        conn.execute("UPDATE cogmem.gut_settings SET k = 5")
        for tenant in tenants:
            conn.execute("SELECT cogmem.gut_configure(%s, contribute => true)", (tenant,))
        conn.execute("SELECT * FROM cogmem.gut_release(0.5)")
        conn.execute("SELECT cogmem.seal_audit()")
        conn.execute("VACUUM (ANALYZE)")
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone():
            conn.execute(f"CREATE ROLE {ROLE} LOGIN IN ROLE cogmem_admin, cogmem_auditor, cogmem_gut")


def pages(dsn: str) -> dict[str, str]:
    """The pages measured, with the busiest tenant, a night and a recall of the data."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        tenant = conn.execute(
            "SELECT tenant FROM cogmem.recalls GROUP BY tenant ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()[0]  # type: ignore[index]
        night = conn.execute("SELECT max(night) FROM cogmem.consolidation_nights").fetchone()[0]  # type: ignore[index]
        recall = conn.execute("SELECT recall_id FROM cogmem.recalls WHERE tenant = %s LIMIT 1", (tenant,)).fetchone()[0]  # type: ignore[index]
    return {
        "tenants": "/",
        "one tenant": f"/tenants/{tenant}",
        "recall (all tenants)": "/recall",
        "recall (one tenant)": f"/recall?tenant={tenant}",
        "nights": "/nights",
        "one night's reasons": f"/nights/{night}?decision=weaken",
        "audit": "/audit",
        "audit, a recall explained": f"/audit?recall={recall}",
        "verify one tenant's chain": f"/audit/verify?tenant={tenant}",
        "gut": "/gut",
        "bios": "/bios",
    }


def timings(url: str, paths: dict[str, str]) -> dict[str, list[float]]:
    """Milliseconds per fetch of each page and of the floor, in random order each round."""
    floor = {"floor: a static file": "/static/dashboard.css"}
    every = paths | floor
    times: dict[str, list[float]] = {name: [] for name in every}
    rng = random.Random(3)
    with httpx.Client(base_url=url, timeout=60) as http:
        for name, path in every.items():  # warm the pool, the caches and the templates
            assert http.get(path).status_code == 200, (name, path)
        for _ in range(ROUNDS):
            order = list(every)
            rng.shuffle(order)
            for name in order:
                started = time.perf_counter()
                response = http.get(every[name])
                times[name].append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200, (name, response.status_code)
    return times


def verify_every_chain(url: str, rounds: int = 3) -> str:
    """The one page that runs only on request: verify_audit over every tenant's chain."""
    with httpx.Client(base_url=url, timeout=600) as http:
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            assert http.get("/audit/verify").status_code == 200
            times.append((time.perf_counter() - started) * 1000)
    return (
        f"Verifying every chain (`/audit/verify`, run only when asked; {rounds} runs): median "
        f"{statistics.median(times):,.0f} ms. It re-hashes the whole sealed trail, so it grows with the trail."
    )


def plan_lines(dsn: str, paths: dict[str, str]) -> list[str]:
    """EXPLAIN (ANALYZE, BUFFERS) of every section query, with the parameters its page used."""
    tenant = paths["one tenant"].rsplit("/", 1)[1]
    night = datetime.date.fromisoformat(paths["one night's reasons"].split("/")[2].split("?")[0])
    recall = paths["audit, a recall explained"].split("=", 1)[1]
    base = {"days": q.DAYS, "nights": q.NIGHTS, "top": q.TOP, "lines": 8, "listed": q.LISTED}
    pages = {
        "Tenants": (q.TENANTS, {}),
        "One tenant": ({"exists": q.TENANT_EXISTS, **q.TENANT}, {"tenant": tenant}),
        "Recall, all tenants": ({**q.RECALL, "overflow (the view)": q.RECALL["overflow"][1:]}, {"tenant": None}),
        "Nights": (q.NIGHTS_PAGE, {"tenant": None}),
        "One night": (q.NIGHT, {"night": night, "tenant": None, "decision": "weaken", "events": ["weakened"]}),
        "Audit": ({**q.AUDIT, **q.EXPLAIN}, {"recall": recall}),
        "Verify one tenant": (q.VERIFY, {"tenant": tenant}),
        "Gut": (q.GUT, {}),
        "BIOS": (q.BIOS, {}),
    }
    lines = [
        "# The dashboard's query plans at 100k memories",
        "",
        f"Written by `bench/dashboard.py` ({__doc__.split(chr(10))[0]}).",
        "The first query of each section the operator's role may read; EXPLAIN (ANALYZE, BUFFERS).",
        "",
    ]
    with psycopg.connect(dsn, autocommit=True, options=SESSION_OPTIONS) as conn:  # as the dashboard's sessions
        for page, (sections, params) in pages.items():
            lines += [f"## {page}", ""]
            for name, queries in sections.items():
                plan = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS) {queries[0]}", base | params).fetchall()
                lines += [f"### {name}", "", "```", *(row[0] for row in plan), "```", ""]
    return lines


def section(times: dict[str, list[float]], total: int, load_seconds: float) -> list[str]:
    floor = statistics.median(times["floor: a static file"])
    lines = [
        f"`bench/dashboard.py`: {total:,} memories of 1,000 tenants (the scale bench's workload, loaded in "
        f"{load_seconds:.0f} s), {RECALLS:,} recalls over 30 days with feedback on half, {NIGHTS} nights, a Gut "
        f"release, the trail sealed. Each page fetched over HTTP {ROUNDS} times in random order, interleaved with "
        "the floor (a static file from the same server), as a login role in cogmem_admin, cogmem_auditor and "
        "cogmem_gut. Target: every page in 300 ms or less. Plans: `bench/plans/dashboard.md`.",
        "",
        "| page | median ms | p90 ms | median / floor | ≤ 300 ms |",
        "|---|---|---|---|---|",
    ]
    for name, values in times.items():
        median = statistics.median(values)
        p90 = sorted(values)[int(0.9 * (len(values) - 1))]
        ok = "yes" if median <= 300 else "**no**"
        lines.append(f"| {name} | {median:.1f} | {p90:.1f} | {median / floor:.1f}× | {ok} |")
    return lines


def main(memories: int, results: Path | None) -> None:
    with private_database(5467, database="postgres") as dsn:
        load_seconds, total = load(dsn, memories)
        month_of_use(dsn, list(tenant_names(1000)))
        role_dsn = re.sub(r"user=\S+", f"user={ROLE}", dsn)
        paths = pages(dsn)
        server = ServerThread(role_dsn)
        try:
            times = timings(server.url, paths)
            verify = verify_every_chain(server.url)
        finally:
            server.stop()
        lines = [*section(times, total, load_seconds), "", verify]
        print("\n".join(lines), flush=True)
        PLANS.parent.mkdir(exist_ok=True)
        PLANS.write_text("\n".join(plan_lines(role_dsn, paths)) + "\n", encoding="utf-8")
    if results:
        replace_section(results, lines, "The dashboard at 100k memories")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    main(args.memories, args.results)
