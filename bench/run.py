"""`make bench`, first part: quality, embedding cost, recall latency and the audit, written to bench/RESULTS.md.

Memory quality: the scenarios of bench/quality.py. Embedding: one text in the server and on the client.

Quality: for 30 questions, each needing one fact hidden among distractors, the share whose fact makes it
into an equal token budget when memories are ranked by full text alone, by MiniLM cosine alone, by
reciprocal-rank fusion of both (what cogmem.recall uses), and by cogmem.recall end to end (fusion plus
topic filter). Latency: cogmem.recall against the naive recency query and a bare vector top-k on
the same rows, interleaved, medians and ratios from the same run.

Runs on a private cluster it starts (or on BENCH_DATABASE_URL, a database it may fill).
"""

from __future__ import annotations

import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness import given_or_private
from bench.inbound import section as inbound_section
from bench.quality import run as memory_quality_scenarios
from bench.redaction_corpus import section as redaction_section
from bench.scale import QUERIES as SCALE_QUERIES
from bench.scenarios import PAIRS, distractors
from cogmem_pg.embed import default_embedder
from cogmem_pg.migrate import install

BUDGETS = (60, 120, 240)
RESULTS = Path(__file__).with_name("RESULTS.md")


def fill(ranked: list[tuple[int, int]], budget: int) -> set[int]:
    """Memories taken in rank order while they fit the budget (the rule cogmem.recall applies)."""
    used, taken = 0, set()
    for memory_id, tokens in ranked:
        if used + tokens <= budget:
            used += tokens
            taken.add(memory_id)
    return taken


def rrf(rankings: list[list[tuple[int, int]]], weights: list[float], k: int) -> list[tuple[int, int]]:
    """Weighted reciprocal-rank fusion: score = sum(weight / (k + rank))."""
    scores: dict[int, float] = {}
    tokens: dict[int, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, (memory_id, t) in enumerate(ranking, 1):
            scores[memory_id] = scores.get(memory_id, 0.0) + weight / (k + rank)
            tokens[memory_id] = t
    return [(m, tokens[m]) for m in sorted(scores, key=lambda m: (-scores[m], m))]


def quality(conn: psycopg.Connection) -> list[str]:
    embedder = default_embedder()
    if embedder is None:
        return ["Skipped: the [embed] extra is not installed."]
    tenant = "bench-quality"
    conn.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
    facts = [fact for fact, _ in PAIRS]
    texts = facts + distractors(400)
    random.Random(5).shuffle(texts)  # facts arrive among the rest, so recency is a fair baseline
    vectors = embedder.embed(texts)
    ids: dict[str, int] = {}
    for text, vector in zip(texts, vectors, strict=True):
        row = conn.execute(
            "SELECT memory_id FROM cogmem.remember(%s, %s, 'fresh', NULL, %b)",
            (tenant, text, np.asarray(vector, dtype=np.float32)),
        ).fetchone()
        assert row is not None
        ids[text] = row[0]
    k, w_lexical, w_vector = conn.execute(
        "SELECT fusion_k, lexical_weight, vector_weight FROM cogmem.tenants WHERE tenant = %s", (tenant,)
    ).fetchone()  # type: ignore[misc]
    shipped = f"weighted RRF as shipped (k={k}, lexical {w_lexical:g}, vector {w_vector:g})"
    methods = ["naive recency", "full text only", "vector only", "RRF k=60, equal weights", shipped, "cogmem.recall"]
    found = {(m, b): 0 for m in methods for b in BUDGETS}
    for fact, question in PAIRS:
        q = np.asarray(embedder.embed([question])[0], dtype=np.float32)
        lexical = conn.execute(
            """SELECT m.memory_id, m.token_estimate FROM cogmem.memories AS m,
                      tsvector_to_array(to_tsvector('english', %s)) AS w, cogmem._or_query(w) AS q
               WHERE m.tenant = %s AND m.search @@ q
               ORDER BY cogmem._shared_words(m.search, w) DESC, m.memory_id LIMIT 100""",
            (question, tenant),
        ).fetchall()
        semantic = conn.execute(
            """SELECT memory_id, token_estimate FROM cogmem.memories WHERE tenant = %s
               ORDER BY embedding <=> %s, memory_id LIMIT 100""",
            (tenant, q),
        ).fetchall()
        newest = conn.execute(
            "SELECT memory_id, token_estimate FROM cogmem.memories WHERE tenant = %s ORDER BY created_at DESC, "
            "memory_id DESC",
            (tenant,),
        ).fetchall()
        for budget in BUDGETS:
            product = {
                r[0]
                for r in conn.execute(
                    "SELECT memory_id FROM cogmem.recall(%s, %s, %s, budget => %s)", (tenant, question, q, budget)
                )
            }
            selections = {
                "naive recency": fill(newest, budget),
                "full text only": fill(lexical, budget),
                "vector only": fill(semantic, budget),
                "RRF k=60, equal weights": fill(rrf([lexical, semantic], [1.0, 1.0], 60), budget),
                shipped: fill(rrf([lexical, semantic], [w_lexical, w_vector], k), budget),
                "cogmem.recall": product,
            }
            for method, taken in selections.items():
                found[(method, budget)] += ids[fact] in taken
    lines = [
        f"{len(PAIRS)} questions, each needing one of {len(facts)} facts among {len(texts)} memories of one tenant "
        "(all in the `fresh` ring, so only ranking and the topic filter decide). Share of questions whose fact is "
        "inside the budget:",
        "",
        "| method | " + " | ".join(f"{b} tokens" for b in BUDGETS) + " |",
        "|---|" + "---:|" * len(BUDGETS),
    ]
    for method in methods:
        cells = [f"{100 * found[(method, b)] / len(PAIRS):.0f}%" for b in BUDGETS]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return lines


def latency(conn: psycopg.Connection, tenants: int = 20, per_tenant: int = 500, calls: int = 300) -> list[str]:
    rng = random.Random(11)
    texts = distractors(per_tenant * 2, seed=3)
    start = time.perf_counter()
    for t in range(tenants):
        name = f"bench-{t:02d}"
        conn.execute("SELECT cogmem.create_tenant(%s)", (name,))
        for text in rng.sample(texts, per_tenant):
            vector = np.random.default_rng(rng.randint(0, 1 << 30)).standard_normal(384).astype(np.float32)
            conn.execute(
                "SELECT cogmem.remember(%s, %s, 'fresh', NULL, %b)", (name, text, vector / np.linalg.norm(vector))
            )
    load_rate = tenants * per_tenant / (time.perf_counter() - start)
    conn.execute("ANALYZE cogmem.memories")

    queries = {
        **{
            name: SCALE_QUERIES[name]
            for name in ("naive recency (LIMIT 50)", "bare vector top-10 of the tenant", "cogmem.recall (3,200 tokens)")
        },
        "cogmem.recall without its audit row": "SELECT * FROM pg_temp.recall(%(t)s, %(m)s, %(v)b)",
    }

    # The audit's cost on the hot path: recall's cycle log with its one audit INSERT cut out, and recall
    # calling that log (bench only; same names in pg_temp, so the bodies' parameter references resolve).
    # Looked up by name: a signature written here broke the bench each time the function took a parameter.
    def definition(name: str) -> str:
        (body,) = conn.execute(
            "SELECT pg_get_functiondef(p.oid) FROM pg_proc AS p WHERE p.pronamespace = 'cogmem'::regnamespace"
            " AND p.proname = %s",
            (name,),
        ).fetchall()
        return body[0]

    log = definition("_log_recall")
    unaudited, cuts = re.subn(
        r"INSERT INTO cogmem\.audit_log \(tenant, level, event, recall_id, detail\)[^;]*;",  # to its end
        "",
        log,
    )
    assert cuts == 1, "the audit INSERT of recall's cycle log was not found"
    conn.execute(unaudited.replace("FUNCTION cogmem._log_recall(", "FUNCTION pg_temp._log_recall(", 1))
    recall = definition("recall")
    assert recall.count("cogmem._log_recall(") == 1, "recall's call of its cycle log was not found"
    recall = recall.replace("cogmem._log_recall(", "pg_temp._log_recall(")
    conn.execute(recall.replace("FUNCTION cogmem.recall(", "FUNCTION pg_temp.recall(", 1))
    timings: dict[str, list[float]] = {name: [] for name in queries}
    for _ in range(calls):
        params = {
            "t": f"bench-{rng.randrange(tenants):02d}",
            "m": rng.choice(PAIRS)[1],
            "v": (lambda v: v / np.linalg.norm(v))(
                np.random.default_rng(rng.randint(0, 1 << 30)).standard_normal(384).astype(np.float32)
            ),
        }
        for name, sql in rng.sample(list(queries.items()), len(queries)):  # interleaved, random order
            t0 = time.perf_counter()
            conn.execute(sql, params).fetchall()
            timings[name].append((time.perf_counter() - t0) * 1000)
    naive = statistics.median(timings["naive recency (LIMIT 50)"])
    lines = [
        f"{tenants} tenants × {per_tenant} memories ({tenants * per_tenant:,} rows, random unit vectors), "
        f"{calls} calls each, interleaved; single client over a Unix socket. Loading through `cogmem.remember` "
        f"ran at {load_rate:,.0f} memories/s.",
        "",
        "| query | p50 ms | p95 ms | p50 / naive |",
        "|---|---:|---:|---:|",
    ]
    for name, values in timings.items():
        p50 = statistics.median(values)
        p95 = statistics.quantiles(values, n=20)[18]
        lines.append(f"| {name} | {p50:.2f} | {p95:.2f} | {p50 / naive:.1f}× |")
    audited = statistics.median(timings["cogmem.recall (3,200 tokens)"])
    bare = statistics.median(timings["cogmem.recall without its audit row"])
    lines += ["", f"The audit row adds {audited - bare:.2f} ms to a recall ({100 * (audited / bare - 1):.0f}%)."]
    return lines


def audit(conn: psycopg.Connection, rows: int = 1_000_000, tenants: int = 100) -> list[str]:
    """Sealing and verifying the hash chains: rows of a realistic size, spread over tenants."""
    conn.execute("SELECT cogmem.seal_audit()")
    conn.execute(
        """INSERT INTO cogmem.audit_log (tenant, level, event, memory_id, detail)
           SELECT 'bench-' || lpad((g %% %s)::text, 2, '0'), 'lifecycle', 'weakened', g,
                  jsonb_build_object('confidence', round(random()::numeric, 6))
           FROM generate_series(1, %s) AS g""",
        (tenants, rows),
    )
    conn.execute("ANALYZE cogmem.audit_log")
    t0 = time.perf_counter()
    sealed = conn.execute("SELECT cogmem.seal_audit(%s)", (rows * 2,)).fetchone()[0]  # type: ignore[index]
    seal_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    checked = conn.execute("SELECT sum(rows_checked)::bigint, bool_and(ok) FROM cogmem.verify_audit()").fetchone()
    verify_s = time.perf_counter() - t0
    assert checked is not None and checked[1], "verify_audit failed on untouched chains"
    return [
        f"{rows:,} audit rows in {tenants} tenants written at once, then sealed and verified (single client).",
        "",
        "| step | rows | seconds | per million rows |",
        "|---|---:|---:|---:|",
        f"| `cogmem.seal_audit()` | {sealed:,} | {seal_s:.1f} | {seal_s * 1e6 / sealed:.1f} s |",
        f"| `cogmem.verify_audit()` | {checked[0]:,} | {verify_s:.1f} | {verify_s * 1e6 / checked[0]:.1f} s |",
    ]


def memory_quality(conn: psycopg.Connection) -> list[str]:
    embedder = default_embedder()
    if embedder is None:
        return ["Skipped: the [embed] extra is not installed."]

    def embed(texts: list[str]) -> list[np.ndarray]:
        return [np.asarray(v, dtype=np.float32) for v in embedder.embed(texts)]

    return memory_quality_scenarios(conn, embed)


def embedding_cost(conn: psycopg.Connection, calls: int = 60) -> list[str]:
    """One text embedded per call: by PL/Python in the server, by the client, and in client batches of 32."""
    embedder = default_embedder()
    if embedder is None:
        return ["Skipped: the [embed] extra is not installed."]
    texts = distractors(calls, seed=13)
    conn.execute("RESET cogmem.embed")  # the rest of the run switches it off; server_can_embed() honours that
    server = conn.execute("SELECT cogmem.server_can_embed()").fetchone()[0]  # type: ignore[index]
    rows = []
    client = []
    for text in texts:
        t0 = time.perf_counter()
        embedder.embed([text])
        client.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    for first in range(0, calls, 32):
        embedder.embed(texts[first : first + 32])
    batched = (time.perf_counter() - t0) * 1000 / calls
    rows.append(f"| client, one text per call (MiniLM, onnxruntime) | {statistics.median(client):.2f} |")
    rows.append(f"| client, batches of 32 (per text) | {batched:.2f} |")
    if server:
        conn.execute("SELECT cogmem.embed('warm up: loads the model in this backend')")
        inside = []
        for text in texts:
            t0 = time.perf_counter()
            conn.execute("SELECT cogmem.embed(%s)", (text,)).fetchone()
            inside.append((time.perf_counter() - t0) * 1000)
        rows.append(f"| in the database, `SELECT cogmem.embed(text)` (PL/Python) | {statistics.median(inside):.2f} |")
    else:
        rows.append("| in the database | not available: the server's Python cannot import cogmem_pg[embed] |")
    conn.execute("SET cogmem.embed = 'off'")
    return [
        f"Median milliseconds to embed one short text ({calls} texts), same machine, same model files:",
        "",
        "| where | ms per text |",
        "|---|---:|",
        *rows,
        "",
        "In-database embedding is what makes `remember(tenant, text)` work from plain SQL; an application "
        "that can embed on its side (or in batches) saves the server that CPU. The first call in a backend "
        "also loads the model (about a second), so pooled connections matter.",
    ]


def machine() -> str:
    return machine_of(DSN)


def machine_of(dsn: str) -> str:
    """The cores, CPU, server and pgvector versions a run measured on."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    with psycopg.connect(dsn) as conn:
        version = conn.execute("SELECT version()").fetchone()[0].split(" on ")[0]  # type: ignore[index]
        vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]  # type: ignore[index]
    return f"{os.cpu_count()} cores ({cpu}), {version}, pgvector {vector}, Python {platform.python_version()}"


if __name__ == "__main__":
    # Installed here, not by the harness: a given database is installed too.
    with given_or_private(os.environ.get("BENCH_DATABASE_URL"), 5447, schema=False, tuned=False) as DSN:
        install(DSN)
        with psycopg.connect(DSN, autocommit=True) as conn:
            register_vector(conn)
            conn.execute("SET cogmem.embed = 'off'")  # vectors come from the client in both sections
            sections = {}
            for name, measure in (
                ("inbound", inbound_section),
                ("quality", quality),
                ("memory quality", memory_quality),
                ("embedding", embedding_cost),
                ("latency", latency),
                ("audit", audit),
                ("redaction", redaction_section),
            ):
                started = time.perf_counter()
                sections[name] = measure(conn)
                print(f"{name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
            (
                inbound_lines,
                quality_lines,
                memory_quality_lines,
                embedding_lines,
                latency_lines,
                audit_lines,
                redaction_lines,
            ) = sections.values()
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        report = "\n".join(
            [
                "# Benchmark results",
                "",
                f"Produced by `make bench` (`python bench/run.py`) at commit {commit or 'unknown'} on "
                f"{time.strftime('%Y-%m-%d')}; machine: {machine()}. Shared, noisy machines: compare ratios "
                "within one run, not absolute numbers across runs.",
                "",
                "## Inbound attention",
                "",
                *inbound_lines,
                "",
                "## Memory quality at equal budget",
                "",
                *memory_quality_lines,
                "",
                "### Evidence recall",
                "",
                *quality_lines,
                "",
                "## Embedding: in the database or on the client",
                "",
                *embedding_lines,
                "",
                "## Recall latency",
                "",
                *latency_lines,
                "",
                "## Audit trail",
                "",
                *audit_lines,
                "",
                "## Redaction",
                "",
                *redaction_lines,
                "",
            ]
        )
        # The sections other scripts write (bench/scale.py, bench/consolidation.py) are kept; so is
        # bench/router_ceiling.py's (an hour's run), in its place after the inbound section.
        previous = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
        kept = [previous.find(h) for h in ("\n## Speed at scale\n", "\n## Consolidation\n") if h in previous]
        ceiling = previous.find("\n## Never-cut recall: how far models that run here can go\n")
        if ceiling >= 0:
            section = previous[ceiling + 1 : previous.find("\n## ", ceiling + 1) + 1]
            quality_heading = "## Memory quality at equal budget"
            report = report.replace(quality_heading, section + quality_heading, 1)
        report = report.rstrip("\n") + "\n" + (previous[min(kept) :] if kept else "")
        RESULTS.write_text(report, encoding="utf-8")
        print(report)
