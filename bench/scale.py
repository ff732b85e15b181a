"""Speed at scale: load, remember, recall and the baselines, at 10k / 100k / 1M memories over 1,000 tenants.

`python bench/scale.py [--scales 10000,100000,1000000] [--results bench/RESULTS.md]` prints a Markdown
section ("## Speed at scale"); with --results it replaces that section of the file. For each scale a
fresh database of a private cluster is loaded with the workload of bench/workload.py (seed 1) through
`cogmem.remember_many`, the batch path users have, with random unit vectors. Then, on that database:

- `cogmem.remember` one memory per call and per transaction (routing and topic detection on, the
  vector given: no in-database embedding), from 1 and from 4 clients, against the floor for a durable
  one-row write: an INSERT of the same text and vector into a flat table, also one per transaction;
- `cogmem.recall` at the default 3,200-token budget against two baselines on the same rows, called
  interleaved in random order with the same tenant, message and vector: the naive recency query a
  flat table would use, and a bare top-10 vector query filtered by tenant (what recall's semantic
  step is, and the floor for any semantic lookup); single client, then 8 clients in parallel;
- where the scale allows, the same top-10 through a global pgvector HNSW index (iterative scan), to
  show why recall does not use one;
- recall and remember as the tenant's own role (a member of cogmem_app granted that one tenant), against
  the same calls as the superuser (row-level security applies to both: the verbs run as cogmem_owner);
- the plans of the hot queries, captured with auto_explain (ANALYZE, BUFFERS) inside recall itself.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql as pgsql

from bench.workload import memories, tenant_language, tenant_names, unit_vectors
from cogmem_pg.migrate import install

TENANTS = 1000
BATCH = 1000
SEED = 1
MESSAGES = [
    "Can we restart web-1 tonight or is there a rule against it?",
    "Who is the billing contact for Globex and when do they pay?",
    "The DNS of the shop looks wrong, which nameservers do we use?",
    "How do I restore the database from last night's backup?",
    "Deploy the new nginx config today, anything I should know?",
    "What happened the last time a kernel update took a server down?",
    "Müşteri faturaları kime gönderiliyor?",
    "Sunucuyu gece yeniden başlatabilir miyiz?",
]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def tenant_role(tenant: str) -> str:
    """The role an application switches to (SET ROLE) for one tenant's requests: granted that tenant only."""
    return f"cogmem_bench_{tenant}"


def set_tenant_role(conn: psycopg.Connection, tenant: str) -> None:
    conn.execute(pgsql.SQL("SET ROLE {}").format(pgsql.Identifier(tenant_role(tenant))))


def remember_batches(
    dsn: str, rows: list, vectors: np.ndarray, item: Callable[[int, Any], dict], loaders: int = 2
) -> float:
    """Remembers ROWS (workload memories, each with its tenant) through remember_many with `loaders`
    parallel clients, in batches of one tenant each of at most BATCH items, the embeddings given and the
    checks by meaning skipped (the loader path); ITEM, given a row's number and the row, makes its item.
    Returns the seconds it took. Shared by this bench and bench/large_tenant.py."""
    batches: list[tuple[int, int]] = []
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and end - start < BATCH and rows[end].tenant == rows[start].tenant:
            end += 1
        batches.append((start, end))
        start = end

    def work(k: int) -> None:  # loader k takes every k-th batch
        with psycopg.connect(dsn, autocommit=True) as conn:
            register_vector(conn)
            conn.execute("SET cogmem.embed = off")
            for first, end in batches[k::loaders]:
                items = [item(n, m) for n, m in enumerate(rows[first:end], start=first)]
                conn.execute(
                    "SELECT count(*) FROM cogmem.remember_many(%s, %s, %b, skip => '{near_duplicates,conflicts}')",
                    (rows[first].tenant, json.dumps(items), list(vectors[first:end])),
                )

    started = time.perf_counter()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(loaders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def load(
    dsn: str, total: int, loaders: int = 2, scope: Callable[[int], dict[str, str]] | None = None
) -> tuple[float, int]:
    """Loads the workload through remember_many with `loaders` parallel clients; returns (seconds, rows).
    Each tenant also gets its own role (roles are cluster-wide: made once, granted in each database).
    SCOPE, given a row's number, says the person and agent of that row (bench/scopes.py)."""
    rows = list(memories(total, TENANTS, SEED))
    vectors = unit_vectors(len(rows), SEED)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for index, tenant in enumerate(tenant_names(TENANTS)):
            conn.execute("SELECT cogmem.create_tenant(%s, %s)", (tenant, tenant_language(index)))
            if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (tenant_role(tenant),)).fetchone():
                conn.execute(
                    pgsql.SQL("CREATE ROLE {} NOLOGIN IN ROLE cogmem_app").format(pgsql.Identifier(tenant_role(tenant)))
                )
            conn.execute("SELECT cogmem.grant_tenant(%s, %s)", (tenant_role(tenant), tenant))
    seconds = remember_batches(
        dsn,
        rows,
        vectors,
        lambda n, m: {"content": m.content, "ring": m.ring, "topics": list(m.topics), **(scope(n) if scope else {})},
        loaders,
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        stored = conn.execute("SELECT count(*) FROM cogmem.memories").fetchone()[0]  # type: ignore[index]
        assert stored == len(rows), f"loaded {stored} of {len(rows)} memories"
        conn.execute("VACUUM (ANALYZE)")
    return seconds, len(rows)


def batch_rate(dsn: str, rows: int = 5000, skip: tuple[str, ...] = ("near_duplicates", "conflicts")) -> float:
    """remember_many on one client into the loaded database: one tenant's backfill, rings and topics given;
    skipping the checks by meaning as the loader does, or (skip=()) with every check remember makes."""
    seed = SEED + 7 if skip else SEED + 8
    items = list(memories(rows, 1, seed))  # one tenant (team-0001), texts of another seed
    vectors = unit_vectors(len(items), seed)
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET cogmem.embed = off")
        started = time.perf_counter()
        for first in range(0, len(items), BATCH):
            payload = [
                {"content": m.content, "ring": m.ring, "topics": list(m.topics)} for m in items[first : first + BATCH]
            ]
            conn.execute(
                "SELECT count(*) FROM cogmem.remember_many(%s, %s, %b, skip => %s)",
                (items[first].tenant, json.dumps(payload), list(vectors[first : first + BATCH]), list(skip)),
            )
        return len(items) / (time.perf_counter() - started)


def copy_rate(dsn: str, rows: int = 5000) -> float:
    """The floor for remember_many: the same rows as batch_rate (text, tenant, vector), batches of BATCH, each
    a COPY into a flat table with a primary key and a (tenant, created_at) index, one transaction each."""
    items = list(memories(rows, 1, SEED + 7))
    vectors = unit_vectors(len(items), SEED + 7)
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute(FLAT_TABLE.replace("bench_flat", "bench_flat_copy"))
        started = time.perf_counter()
        for first in range(0, len(items), BATCH):
            copy_sql = "COPY bench_flat_copy (tenant, content, embedding) FROM STDIN (FORMAT BINARY)"
            with conn.transaction(), conn.cursor() as cur, cur.copy(copy_sql) as copy:
                copy.set_types(["text", "text", "vector"])
                for m, v in zip(items[first : first + BATCH], vectors[first : first + BATCH], strict=True):
                    copy.write_row((m.tenant, m.content, v))
        return len(items) / (time.perf_counter() - started)


# The floor for a durable single-row write: the same text and vector into a flat table, one row per
# transaction, each commit waiting for its WAL flush as remember's does.
FLAT_TABLE = """
CREATE TABLE IF NOT EXISTS bench_flat (
    id bigserial PRIMARY KEY, tenant text NOT NULL, content text NOT NULL, embedding vector(384),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS bench_flat_tenant_idx ON bench_flat (tenant, created_at);
"""
REMEMBER = "SELECT * FROM cogmem.remember(%s, %s, NULL, NULL, %b)"
REMEMBER_NAMED = "SELECT * FROM cogmem.remember(%(t)s, %(c)s, NULL, NULL, %(v)b)"
# What the commit's WAL flush costs: an application that can lose the last fraction of a second of writes
# in a crash (never a half-written memory) may set synchronous_commit = off for its sessions.
ASYNC = "SET synchronous_commit = off"
SINGLE_WRITES = {  # name: (statement, session setup)
    "remember": (REMEMBER, None),
    "flat INSERT": ("INSERT INTO bench_flat (tenant, content, embedding) VALUES (%s, %s, %b)", None),
    "remember, synchronous_commit off": (REMEMBER, ASYNC),
}


def single_row_rates(dsn: str, clients: int, calls: int = 2000) -> dict[str, float]:
    """Rows per second of one-row transactions from `clients` sessions, for remember (routing and topic
    detection on, the vector given) and for the flat-table baseline. Each write gets texts of its own seed
    from the same generator: texts another write already stored would be rehearsed, not stored."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(FLAT_TABLE)
    rates = {}
    for j, (name, (sql, setup)) in enumerate(SINGLE_WRITES.items()):
        ready = threading.Barrier(clients + 1)
        seed = SEED + 3 + clients + 10 * j
        items, vectors = list(memories(calls, TENANTS, seed)), unit_vectors(calls, seed)

        def work(
            k: int,
            sql: str = sql,
            setup: str | None = setup,
            items: list = items,
            vectors: np.ndarray = vectors,
            ready: threading.Barrier = ready,
        ) -> None:
            with psycopg.connect(dsn, autocommit=True) as conn:
                register_vector(conn)
                conn.execute("SET cogmem.embed = off")
                if setup:
                    conn.execute(setup)
                ready.wait()
                for i in range(k, calls, clients):
                    conn.execute(sql, (items[i].tenant, items[i].content, vectors[i]))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(clients)]
        for t in threads:
            t.start()
        ready.wait()
        started = time.perf_counter()
        for t in threads:
            t.join()
        rates[name] = calls / (time.perf_counter() - started)
    return rates


QUERIES = {
    "naive recency (LIMIT 50)": (
        "SELECT memory_id, content FROM cogmem.memories WHERE tenant = %(t)s ORDER BY created_at DESC LIMIT 50"
    ),
    "bare vector top-10 of the tenant": (
        "SELECT memory_id, content FROM cogmem.memories WHERE tenant = %(t)s ORDER BY embedding <=> %(v)b LIMIT 10"
    ),
    # The floor for any recall that keeps a durable log: the same top-10 plus one row written with its
    # items, in the same transaction, whose commit waits for its WAL flush as recall's does.
    "bare top-10 + a logged row (durable floor)": (
        "WITH top AS (SELECT memory_id, content FROM cogmem.memories WHERE tenant = %(t)s"
        " ORDER BY embedding <=> %(v)b LIMIT 10),"
        " logged AS (INSERT INTO bench_log (tenant, items) SELECT %(t)s, array_agg(memory_id) FROM top)"
        " SELECT * FROM top"
    ),
    "cogmem.recall (3,200 tokens)": "SELECT * FROM cogmem.recall(%(t)s, %(m)s, %(v)b)",
    # A quarter of the budget: what part of the cost is per injected item (log, audit, rehearsal).
    "cogmem.recall (800 tokens)": "SELECT * FROM cogmem.recall(%(t)s, %(m)s, %(v)b, budget => 800)",
    # The same call in a session with synchronous_commit = off (see ASYNC): what the WAL flush costs.
    "cogmem.recall (3,200 tokens), synchronous_commit off": "SELECT * FROM cogmem.recall(%(t)s, %(m)s, %(v)b)",
}
SESSIONS = {"cogmem.recall (3,200 tokens), synchronous_commit off"}


def params(rng: random.Random) -> dict:
    vector = np.random.default_rng(rng.randint(0, 1 << 30)).standard_normal(384).astype(np.float32)
    return {
        "t": tenant_names(TENANTS)[rng.randrange(TENANTS)],
        "m": rng.choice(MESSAGES),
        "v": vector / np.linalg.norm(vector),
    }


def single_client(dsn: str, queries: dict[str, str], calls: int) -> dict[str, list[float]]:
    """Each query `calls` times, interleaved in random order on one client. A query named in SESSIONS runs on
    a second session with that setup, so that it is timed in the same loop as the rest."""
    rng = random.Random(SEED)
    timings: dict[str, list[float]] = {name: [] for name in queries}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_log (id bigserial PRIMARY KEY, tenant text, items bigint[])")
    with psycopg.connect(dsn, autocommit=True) as plain, psycopg.connect(dsn, autocommit=True) as tuned:
        for conn, setup in ((plain, None), (tuned, ASYNC)):
            register_vector(conn)
            conn.execute("SET cogmem.embed = off")
            if setup:
                conn.execute(setup)
        session = {name: tuned if name in SESSIONS else plain for name in queries}
        for _ in range(20):  # warm the sessions' plan caches
            for name, sql in queries.items():
                session[name].execute(sql, params(rng)).fetchall()
        for _ in range(calls):
            p = params(rng)
            for name, sql in rng.sample(list(queries.items()), len(queries)):
                t0 = time.perf_counter()
                session[name].execute(sql, p).fetchall()
                timings[name].append((time.perf_counter() - t0) * 1000)
    return timings


def many_clients(dsn: str, sql: str, clients: int, calls: int) -> tuple[list[float], float]:
    """`clients` sessions each making `calls` calls; returns all latencies (ms) and calls per second."""
    latencies: list[float] = []
    lock = threading.Lock()
    ready = threading.Barrier(clients + 1)

    def work(k: int) -> None:
        rng = random.Random(SEED * 100 + k)
        mine = []
        with psycopg.connect(dsn, autocommit=True) as conn:
            register_vector(conn)
            conn.execute("SET cogmem.embed = off")
            for _ in range(10):
                conn.execute(sql, params(rng)).fetchall()
            ready.wait()
            for _ in range(calls):
                p = params(rng)
                t0 = time.perf_counter()
                conn.execute(sql, p).fetchall()
                mine.append((time.perf_counter() - t0) * 1000)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    ready.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    return latencies, clients * calls / (time.perf_counter() - started)


ROLE_WAYS = OWNER, KEPT_ROLE, SWITCHED_ROLE = (
    "as a superuser",
    "as the tenant's role, a session per role",
    "as the tenant's role, SET ROLE per call",
)


def role_costs(dsn: str, calls: int, tenants: int = 8) -> dict[str, dict[str, list[float]]]:
    """recall and remember for a few tenants, interleaved: as the superuser, as the tenant's own role on a
    session that keeps it (a login or pool per role), and as that role on one session that switches with
    SET ROLE before each call (outside the timing). The verbs run as cogmem_owner whoever calls, so their
    plans are the owner's and a switch re-plans nothing."""
    rng = random.Random(SEED + 5)
    chosen = rng.sample(tenant_names(TENANTS), tenants)
    texts = iter(m.content for m in memories(len(ROLE_WAYS) * (calls + 5), TENANTS, SEED + 50))
    calls_sql = {"recall": QUERIES["cogmem.recall (3,200 tokens)"], "remember": REMEMBER_NAMED}
    timings: dict[str, dict[str, list[float]]] = {call: {way: [] for way in ROLE_WAYS} for call in calls_sql}
    conns = [psycopg.connect(dsn, autocommit=True) for _ in range(tenants + 2)]
    try:
        for conn in conns:
            register_vector(conn)
            conn.execute("SET cogmem.embed = off")
        owner, switching, pinned = conns[0], conns[1], dict(zip(chosen, conns[2:], strict=True))
        for tenant, conn in pinned.items():
            set_tenant_role(conn, tenant)
        for i in range(calls + 5):  # the first five warm the plan caches
            p = params(rng)
            p["t"] = rng.choice(chosen)
            for call, sql in calls_sql.items():
                for way in rng.sample(ROLE_WAYS, len(ROLE_WAYS)):
                    conn = {OWNER: owner, KEPT_ROLE: pinned[p["t"]], SWITCHED_ROLE: switching}[way]
                    if way == SWITCHED_ROLE:  # from another tenant's role, as a shared pool would
                        set_tenant_role(conn, rng.choice([t for t in chosen if t != p["t"]]))
                        set_tenant_role(conn, p["t"])
                    if call == "remember":  # a text of its own, or it would be rehearsed, not stored
                        p["c"] = next(texts)
                    t0 = time.perf_counter()
                    conn.execute(sql, p).fetchall()
                    if i >= 5:
                        timings[call][way].append((time.perf_counter() - t0) * 1000)
    finally:
        for conn in conns:
            conn.close()
    return timings


def hnsw_baseline(dsn: str, calls: int) -> tuple[float, float, float]:
    """Builds a global HNSW index, times a tenant-filtered top-10 through it; returns (build s, p50, recall@10)."""
    rng = random.Random(SEED + 1)
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET maintenance_work_mem = '2GB'")
        started = time.perf_counter()
        conn.execute("CREATE INDEX bench_hnsw ON cogmem.memories USING hnsw (embedding vector_cosine_ops)")
        build = time.perf_counter() - started
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        sql = QUERIES["bare vector top-10 of the tenant"]
        times, overlap = [], []
        for _ in range(calls):
            p = params(rng)
            t0 = time.perf_counter()
            found = {r[0] for r in conn.execute(sql, p).fetchall()}
            times.append((time.perf_counter() - t0) * 1000)
            with conn.transaction():
                conn.execute("SET LOCAL enable_indexscan = off")  # the exact answer, for recall@10
                exact = {r[0] for r in conn.execute(sql, p).fetchall()}
            overlap.append(len(found & exact) / max(1, len(exact)))
        conn.execute("DROP INDEX cogmem.bench_hnsw")
    return build, statistics.median(times), statistics.mean(overlap)


def per_tenant_hnsw(dsn: str, calls: int = 40) -> list[tuple]:
    """Approximate search for large tenants, measured: for the largest tenant and tenants near 3,000, 2,000
    and 1,000 memories, a partial HNSW index of that tenant alone against the exact scan, for the top 100
    that recall ranks (ef_search 200); returns (tenant size, build s, exact p50 ms, HNSW p50 ms, share of
    the exact top-10 found)."""
    rng = np.random.default_rng(SEED + 9)
    found = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        sizes = conn.execute("SELECT tenant, count(*) FROM cogmem.memories GROUP BY 1 ORDER BY 2 DESC").fetchall()
        picked = [sizes[0]] + [min(sizes, key=lambda r, k=k: abs(r[1] - k)) for k in (3000, 2000, 1000)]
        for tenant, size in picked:
            top = pgsql.SQL(
                "SELECT memory_id FROM cogmem.memories WHERE tenant = {} ORDER BY embedding <=> %s LIMIT 100"
            ).format(pgsql.Literal(tenant))  # a literal: the planner matches the partial index to it
            started = time.perf_counter()
            conn.execute(
                pgsql.SQL(
                    "CREATE INDEX bench_tenant_hnsw ON cogmem.memories USING hnsw (embedding vector_cosine_ops) "
                    "WHERE tenant = {}"
                ).format(pgsql.Literal(tenant))
            )
            build = time.perf_counter() - started
            exact_ms, approximate_ms, share = [], [], []
            for _ in range(calls):
                vector = rng.standard_normal(384).astype(np.float32)
                vector /= np.linalg.norm(vector)
                with conn.transaction():
                    conn.execute("SET LOCAL enable_indexscan = off")
                    t0 = time.perf_counter()
                    exact = [r[0] for r in conn.execute(top, (vector,))]
                    exact_ms.append((time.perf_counter() - t0) * 1000)
                with conn.transaction():
                    conn.execute("SET LOCAL hnsw.ef_search = 200")
                    t0 = time.perf_counter()
                    near = [r[0] for r in conn.execute(top, (vector,))]
                    approximate_ms.append((time.perf_counter() - t0) * 1000)
                share.append(len(set(near[:10]) & set(exact[:10])) / 10)
            conn.execute("DROP INDEX cogmem.bench_tenant_hnsw")
            found.append(
                (size, build, statistics.median(exact_ms), statistics.median(approximate_ms), statistics.mean(share))
            )
    return found


def plans(dsn: str) -> list[str]:
    """The plans of recall's own statements for one call, from auto_explain sent to the client."""
    captured: list[str] = []
    rng = random.Random(SEED + 2)
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET cogmem.embed = off")
        for _ in range(10):
            conn.execute(QUERIES["cogmem.recall (3,200 tokens)"], params(rng)).fetchall()
        conn.execute("LOAD 'auto_explain'")
        for setting, value in {
            "auto_explain.log_min_duration": "0",
            "auto_explain.log_analyze": "on",
            "auto_explain.log_buffers": "on",
            "auto_explain.log_timing": "on",
            "auto_explain.log_nested_statements": "on",
            "auto_explain.log_level": "notice",
            "client_min_messages": "notice",
        }.items():
            conn.execute(f"SET {setting} = {value}")
        conn.add_notice_handler(lambda d: captured.append(d.message_primary or ""))
        conn.execute(QUERIES["naive recency (LIMIT 50)"], params(rng)).fetchall()
        conn.execute(QUERIES["bare vector top-10 of the tenant"], params(rng)).fetchall()
        conn.execute(QUERIES["cogmem.recall (3,200 tokens)"], params(rng)).fetchall()
    # The slowest statements matter; vectors in the query text are abbreviated.
    kept = []
    for text in captured:
        if "Query Text:" not in text:
            continue
        duration = float(text.split("duration: ", 1)[1].split(" ms", 1)[0]) if "duration: " in text else 0.0
        kept.append((duration, text))
    kept.sort(key=lambda x: -x[0])
    lines = []
    for _, text in kept[:4]:
        text = "\n".join(line[:160] + (" …" if len(line) > 160 else "") for line in text.splitlines())
        lines += ["```", text, "```", ""]
    return lines


def measure(admin_dsn: str, dsn_for: Callable[[str], str], total: int, calls: int, hnsw_up_to: int) -> dict:
    name = f"bench_scale_{total}"
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    dsn = dsn_for(name)
    try:
        install(dsn)
        result: dict = {"total": total}
        result["load_s"], rows = load(dsn, total)
        result["load_rate"] = rows / result["load_s"]
        result["single"] = single_client(dsn, QUERIES, calls)
        result["clients8"], result["clients8_rate"] = many_clients(
            dsn, QUERIES["cogmem.recall (3,200 tokens)"], 8, max(20, calls // 4)
        )
        result["single_rows"] = {n: single_row_rates(dsn, n) for n in (1, 4)}
        result["batch_given"] = batch_rate(dsn)
        result["batch_checked"] = batch_rate(dsn, skip=())
        result["copy_floor"] = copy_rate(dsn)
        result["roles"] = role_costs(dsn, max(50, calls // 2))
        if total <= hnsw_up_to:
            result["hnsw"] = hnsw_baseline(dsn, max(50, calls // 4))
        if total >= hnsw_up_to:
            result["plans"] = plans(dsn)
            result["tenant_hnsw"] = per_tenant_hnsw(dsn)
        return result
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def targets(results: list[dict]) -> list[str]:
    """The ratios the speed issue set, each against a floor measured in the same run, per scale."""
    rows = []
    for r in results:
        single = r["single"]["cogmem.recall (3,200 tokens)"]
        bare = statistics.median(r["single"]["bare vector top-10 of the tenant"])
        one = r["single_rows"][1]
        durable = statistics.median(r["single"]["bare top-10 + a logged row (durable floor)"])
        rows.append(
            {
                "recall p50 ÷ bare top-10 (≤ 3×)": f"{statistics.median(single) / bare:.1f}×",
                "durable floor ÷ bare top-10": f"{durable / bare:.1f}×",
                "recall p99 ÷ recall p50 (≤ 2.5×)": f"{percentile(single, 99) / statistics.median(single):.1f}×",
                "8 clients ÷ 1 client, calls/s (≥ 1.6)": f"{r['clients8_rate'] / (1000 / statistics.mean(single)):.2f}",
                "remember ÷ flat INSERT (≥ 0.5)": f"{one['remember'] / one['flat INSERT']:.2f}",
                "remember_many, every check ÷ COPY (≥ 0.5)": f"{r['batch_checked'] / r['copy_floor']:.2f}",
                "remember_many, loader (checks by meaning skipped) ÷ COPY": f"{r['batch_given'] / r['copy_floor']:.2f}",
            }
        )
    names = list(rows[0])
    lines = [
        "The targets of the speed issue, each a ratio to a floor measured in the same run (recall "
        "single-client figures from the table above; writes from the table below; COPY: the same rows as "
        "`remember_many`, batches of 1,000, into a flat table with a primary key and a (tenant, created_at) index):",
        "",
        "| memories | " + " | ".join(names) + " |",
        "|---:|" + "---:|" * len(names),
    ]
    lines += [
        f"| {r['total']:,} | " + " | ".join(row[n] for n in names) + " |" for r, row in zip(results, rows, strict=True)
    ]
    p50 = {r["total"]: statistics.median(r["single"]["cogmem.recall (3,200 tokens)"]) for r in results}
    if 100_000 in p50 and 1_000_000 in p50:
        lines += ["", f"Recall p50 growth from 100k to 1M: {p50[1_000_000] / p50[100_000]:.2f}× (target ≤ 2×)."]
    return lines


def section(results: list[dict], calls: int) -> list[str]:
    lines = [
        f"{TENANTS:,} tenants (log-normal sizes, one in five writing Turkish), the workload of `bench/workload.py` "
        "(rules, incidents, procedures, facts, changed facts, distractors) with random unit vectors. Loaded "
        f"through `cogmem.remember_many` (batches of up to {BATCH:,}, one tenant each, rings and topics given, "
        "2 clients). Recall and the baselines: "
        f"{calls} calls each, interleaved in random order with the same random tenant, message and vector, "
        "single client over a Unix socket, vectors sent in binary; then 8 clients calling recall at once.",
        "",
        "| memories | query | p50 ms | p95 ms | p99 ms | p50 / bare vector |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        bare = statistics.median(r["single"]["bare vector top-10 of the tenant"])
        for name, values in r["single"].items():
            lines.append(
                f"| {r['total']:,} | {name} | {statistics.median(values):.2f} | {percentile(values, 95):.2f} | "
                f"{percentile(values, 99):.2f} | {statistics.median(values) / bare:.1f}× |"
            )
        c8 = r["clients8"]
        lines.append(
            f"| {r['total']:,} | cogmem.recall, 8 clients ({r['clients8_rate']:,.0f} calls/s) | "
            f"{statistics.median(c8):.2f} | {percentile(c8, 95):.2f} | {percentile(c8, 99):.2f} | "
            f"{statistics.median(c8) / bare:.1f}× |"
        )
    lines += ["", *targets(results)]
    lines += [
        "",
        "Writes, on the loaded database. Single-row writes are one transaction each, every commit waiting "
        "for its WAL flush (`synchronous_commit = on`); the flat INSERT of the same text and vector into a "
        "table with a primary key and a (tenant, created_at) index is the floor for such a write on this disk.",
        "",
        "| memories | load: remember_many, 2 clients | remember_many, 1 client (every check) | remember, 1 client "
        "| flat INSERT, 1 client | remember, 4 clients | flat INSERT, 4 clients "
        "| remember, synchronous_commit off, 1 / 4 clients |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        one, four = r["single_rows"][1], r["single_rows"][4]
        lines.append(
            f"| {r['total']:,} | {r['load_rate']:,.0f}/s ({r['load_s']:.0f} s) | "
            f"{r['batch_given']:,.0f}/s ({r['batch_checked']:,.0f}/s) | "
            f"{one['remember']:,.0f}/s | {one['flat INSERT']:,.0f}/s | {four['remember']:,.0f}/s | "
            f"{four['flat INSERT']:,.0f}/s | {one['remember, synchronous_commit off']:,.0f}/s / "
            f"{four['remember, synchronous_commit off']:,.0f}/s |"
        )
    lines += [
        "",
        "With `synchronous_commit = off` (set by the application for its sessions, or `ALTER ROLE ... SET`) "
        "a commit returns before its WAL reaches the disk: a crash can lose the last fraction of a second "
        "of memories and recall logs, whole transactions only, and the database stays consistent. The "
        "rows marked so above measure what that buys.",
        "",
        "Row-level security: the rows above run as a superuser, whose calls it applies to as well (the "
        "writing verbs run as `cogmem_owner`, which it binds). Below, the same calls for 8 tenants, "
        "interleaved, as the superuser and as each tenant's own role (a member of cogmem_app granted that "
        "tenant only, one of 1,000 such roles): on a session that keeps the role (a login or a pool per "
        "role), and on one session that switches to it with `SET ROLE` before each call (the switch "
        "untimed). Every statement on a tenant table asks which tenants the caller reaches "
        "(`cogmem.reachable_tenants()`); the plans are the owner's whoever calls, so a switch re-plans "
        "nothing.",
        "",
        "| memories | call | " + " | ".join(f"p50 ms {way}" for way in ROLE_WAYS) + " |",
        "|---:|---|---:|---:|---:|",
    ]
    for r in results:
        for call, ways in r["roles"].items():
            owner = statistics.median(ways[OWNER])
            cells = [f"{owner:.2f}"] + [
                f"{statistics.median(ways[w]):.2f} ({statistics.median(ways[w]) / owner:.2f}×)"
                for w in (KEPT_ROLE, SWITCHED_ROLE)
            ]
            lines.append(f"| {r['total']:,} | {call} | " + " | ".join(cells) + " |")
    hnsw = [r for r in results if "hnsw" in r]
    if hnsw:
        lines += [
            "",
            "The same tenant-filtered top-10 through a global HNSW index (pgvector, m 16, ef_construction 64, "
            "`hnsw.iterative_scan = relaxed_order`), built for this comparison only:",
            "",
            "| memories | index build s | p50 ms | exact top-10 vs HNSW p50 | share of the exact top-10 found |",
            "|---:|---:|---:|---:|---:|",
        ]
        for r in hnsw:
            build, p50, overlap = r["hnsw"]
            bare = statistics.median(r["single"]["bare vector top-10 of the tenant"])
            lines.append(f"| {r['total']:,} | {build:.0f} | {p50:.2f} | {bare / p50:.2f}× | {100 * overlap:.0f}% |")
    probed = [r for r in results if "tenant_hnsw" in r]
    if probed:
        lines += [
            "",
            f"Approximate search for large tenants, at {probed[-1]['total']:,} memories: a partial HNSW index "
            "per tenant (m 16, ef_construction 64, `hnsw.ef_search = 200`) against the exact scan, for the "
            "top 100 that recall ranks, 40 random vectors each:",
            "",
            "| tenant's memories | index build s | exact p50 ms | HNSW p50 ms | exact ÷ HNSW "
            "| share of the exact top-10 found |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for size, build, exact, near, share in probed[-1]["tenant_hnsw"]:
            lines.append(f"| {size:,} | {build:.2f} | {exact:.2f} | {near:.2f} | {exact / near:.2f}× | {share:.3f} |")
    with_plans = [r for r in results if "plans" in r]
    if with_plans:
        lines += [
            "",
            f"Plans at {with_plans[-1]['total']:,} memories (auto_explain inside one recall call, the slowest "
            "statements first):",
            "",
            *with_plans[-1]["plans"],
        ]
    return lines


if __name__ == "__main__":
    from pathlib import Path

    from bench.harness import private_cluster

    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", default="10000,100000,1000000")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--hnsw-up-to", type=int, default=100000, help="largest scale to build an HNSW index at")
    parser.add_argument("--results", type=Path, help="Markdown file whose '## Speed at scale' section to replace")
    args = parser.parse_args()
    with private_cluster(5449) as cluster:
        results = [
            measure(cluster.dsn("postgres"), cluster.dsn, int(s), args.calls, args.hnsw_up_to)
            for s in args.scales.split(",")
        ]
        lines = section(results, args.calls)
        print("\n".join(lines))
        if args.results:
            text = args.results.read_text(encoding="utf-8") if args.results.exists() else ""
            if "\n## Speed at scale\n" in text:
                head, _, rest = text.partition("\n## Speed at scale\n")
                tail = rest[rest.find("\n## ") :] if "\n## " in rest else ""
            else:  # first time: before the consolidation section, if there is one
                head, marker, rest = text.partition("\n## Consolidation\n")
                tail = marker + rest
            body = "\n## Speed at scale\n\n" + "\n".join(lines) + "\n"
            args.results.write_text(head.rstrip("\n") + "\n" + body + tail, encoding="utf-8")
