"""The Gut's experiment: what survives a real privacy budget (the '## Gut' section of bench/RESULTS.md).

`PYTHONPATH=. .venv/bin/python bench/gut.py [--results bench/RESULTS.md] [--tenants 250]`

A private cluster holds the workload generator's Gut population (bench/workload.py: shared operational
truths planted in many tenants in different words, with their own hosts and numbers, and each tenant's
own facts and secrets), embedded for real, stored through `remember_many`, proven, and opted in, so
every contribution is de-identified by the database. Then:

- the scheduled run (`CALL cogmem.gut_nightly()`) at the defaults, through the real path;
- a sweep of epsilon x k over the same contributions with the release's own code (cogmem_pg/gut.py),
  each setting drawn several times, its patterns published into the database and a brand-new tenant's
  recall asked the question each truth answers (the cold-start benefit), with the gut and without;
- the privacy checks over every pattern of every draw: no tenant-unique string, no pattern with fewer
  than k tenants; and the membership test, measured: how often a pattern at the threshold is published
  with a given tenant among its supporters and without it, against e^epsilon.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import psycopg.rows
from pgvector.psycopg import register_vector

from bench.harness import private_database
from bench.results import replace_section
from bench.workload import SHARED_TRUTHS, GutMemory, gut_population, tenant_language
from cogmem_pg import gut
from cogmem_pg.embed import default_embedder

EPSILONS: tuple[float | None, ...] = (0.1, 0.5, 1.0, 2.0, 5.0, None)
KS = (3, 5, 10)
DRAWS = 3
RECOVERED = 0.8  # a pattern recovers the truth whose contributions' centroid it is this close to


def load(dsn: str, population: list[GutMemory], embedder: Any) -> dict[tuple[str, int], GutMemory]:
    """Stores the population through remember_many (two clients), proves it, opts every tenant in;
    returns what each contribution plants, by (tenant, memory_id)."""
    from concurrent.futures import ThreadPoolExecutor

    texts = [m.content for m in population]
    vectors = [
        np.array(v, dtype=np.float32) for f in range(0, len(texts), 256) for v in embedder.embed(texts[f : f + 256])
    ]
    by_tenant: dict[str, list[tuple[GutMemory, np.ndarray]]] = defaultdict(list)
    for m, v in zip(population, vectors, strict=True):
        by_tenant[m.tenant].append((m, v))

    def store(tenants: list[str]) -> dict[tuple[str, int], GutMemory]:
        planted: dict[tuple[str, int], GutMemory] = {}
        with psycopg.connect(dsn, autocommit=True) as conn:
            register_vector(conn)
            conn.execute("SET cogmem.embed = off")
            for tenant in tenants:
                rows = by_tenant[tenant]
                conn.execute("SELECT cogmem.create_tenant(%s, %s)", (tenant, tenant_language(int(tenant[5:]) - 1)))
                items = json.dumps([{"content": m.content, "ring": m.ring, "topics": list(m.topics)} for m, _ in rows])
                stored = conn.execute(
                    "SELECT item, memory_id, action FROM cogmem.remember_many(%s, %s, %s)",
                    (tenant, items, [v for _, v in rows]),
                ).fetchall()
                mine = {(tenant, mid): rows[item - 1][0] for item, mid, action in stored if mid is not None}
                # Proven: the outcomes a history of good recalls would have given them.
                conn.execute(
                    "UPDATE cogmem.memory_stats AS s SET outcome_count = 1, outcome_sum = v.success "
                    "FROM unnest(%s::bigint[], %s::real[]) AS v (memory_id, success) "
                    "WHERE s.tenant = %s AND s.memory_id = v.memory_id",
                    ([mid for _, mid in mine], [m.success for m in mine.values()], tenant),
                )
                conn.execute("SELECT cogmem.gut_configure(%s, contribute => true)", (tenant,))
                planted |= mine
        return planted

    names = sorted(by_tenant)
    with ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(store, [names[0::2], names[1::2]]))
    return parts[0] | parts[1]


def contributions(dsn: str) -> list[gut.Contribution]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT tenant, memory_id, content, topics, success, embedding::text, ring::text"
            " FROM cogmem.gut_contributions"
        ).fetchall()
    return [gut.Contribution(t, m, c, tuple(tp), s, json.loads(e), r) for t, m, c, tp, s, e, r in rows]


def truth_centroids(items: list[gut.Contribution], planted: dict) -> dict[tuple[str, str], np.ndarray]:
    """Each truth's centroid per language: the embedding model keeps an English and a Turkish wording of
    one truth apart, so a cluster is one language's."""
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for c in items:
        truth = planted[(c.tenant, c.memory_id)].truth
        if truth:
            groups[(truth, tenant_language(int(c.tenant.split("-")[1]) - 1))].append(c.embedding)
    centroids = {}
    for key, vectors in groups.items():
        v = np.mean(np.array(vectors, dtype=np.float32), axis=0)
        centroids[key] = v / np.linalg.norm(v)
    return centroids


def recovered(pattern: gut.Pattern, centroids: dict[tuple[str, str], np.ndarray]) -> str | None:
    vector = np.array(pattern.embedding, dtype=np.float32)
    (truth, _), sim = max(((key, float(vector @ c)) for key, c in centroids.items()), key=lambda x: x[1])
    return truth if sim >= RECOVERED else None


def cold_start(
    dsn: str, draw: dict, questions: dict[str, Any], centroids: dict[str, np.ndarray]
) -> tuple[float, float]:
    """Publishes a draw's patterns and asks a brand-new tenant each truth's question: the share of
    questions whose truth a gut pattern brought into its recall, with the gut and without."""
    patterns = [
        {"pattern_id": None, "content": p.content, "embedding": p.embedding, "topics": p.topics,
         "support": p.support, "success": p.success}
        for p in draw["patterns"]
    ]  # fmt: skip
    truths = [recovered(p, centroids) for p in draw["patterns"]]
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET cogmem.embed = off")
        conn.execute("TRUNCATE cogmem.gut_feedback, cogmem.gut_patterns, cogmem.gut_releases CASCADE")
        conn.execute("UPDATE cogmem.gut_runs SET release_id = NULL")
        release_id = conn.execute(
            "INSERT INTO cogmem.gut_releases (period_start, epsilon, delta, k, max_patterns_per_tenant, threshold,"
            " published, withdrawn, released_by) VALUES (now(), 1, 0, 0, 0, 0, 0, 0, current_user)"
            " RETURNING release_id"
        ).fetchone()[0]
        conn.execute("SELECT * FROM cogmem._gut_publish(%s, %s)", (release_id, json.dumps(patterns)))
        ids = [r[0] for r in conn.execute("SELECT pattern_id FROM cogmem.gut_patterns ORDER BY pattern_id")]
        truth_of = dict(zip(ids, truths, strict=True))
        conn.execute("SELECT cogmem.create_tenant('newcomer')")
        shares = []
        for receive in (True, False):
            conn.execute("SELECT cogmem.gut_configure('newcomer', receive => %s)", (receive,))
            found = 0
            for truth, (question, vector) in questions.items():
                rows = conn.execute(
                    "SELECT rule_id FROM cogmem.recall('newcomer', %s, embedding => %s) WHERE layer = 'gut'",
                    (question, vector),
                ).fetchall()
                found += any(truth_of.get(r[0]) == truth for r in rows)
            shares.append(found / len(questions))
    return shares[0], shares[1]


def privacy_violations(draw: dict, unique: dict[str, set[str]], k: int) -> int:
    bad = 0
    for p in draw["patterns"]:
        bad += len(p.tenants) < k
        text = p.content.lower()
        bad += any(s.lower() in text for strings in unique.values() for s in strings)
    return bad


def membership(items: list[gut.Contribution], params: gut.Params, trials: int = 4000) -> dict[str, float]:
    """Is tenant x among the supporters of a pattern? For the cluster whose support sits nearest the
    threshold, how often it is published with x and, clustered again without x's contributions, without."""
    assert params.epsilon is not None
    prepared = gut.prepare(items, params)
    _, threshold, eps, delta = gut._threshold_measurement(
        params.epsilon * params.selection_share, params.delta, params.max_patterns_per_tenant, params.k
    )
    label, tenants = min(prepared.supported.items(), key=lambda kv: abs(len(kv[1]) - threshold))
    x = sorted(tenants)[0]
    without = gut.prepare([c for c in items if c.tenant != x], params)
    target = prepared.centroid(label)
    twin = max(without.supported, key=lambda other: float(without.centroid(other) @ target))
    counts = {"in": prepared.counts(params.k).get(label), "out": without.counts(params.k).get(twin)}
    rates = {
        name: sum(bool(gut.select({0: n} if n else {}, params)[0]) for _ in range(trials)) / trials
        for name, n in counts.items()
    }
    return {"support": len(tenants), "support_without": counts["out"] or 0, "threshold": threshold,
            "epsilon": eps, "delta": delta, "epsilon_release": params.epsilon} | rates  # fmt: skip


def defaults(dsn: str) -> dict[str, Any]:
    """The installed release parameters: the sweep varies epsilon and k only."""
    with psycopg.connect(dsn) as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        row = cur.execute(
            "SELECT delta, max_patterns_per_tenant, selection_share, cluster_similarity FROM cogmem.gut_settings"
        ).fetchone()
    assert row is not None
    return dict(row)


def sweep(dsn: str, items, planted, questions) -> list[dict]:
    centroids = truth_centroids(items, planted)
    unique: dict[str, set[str]] = defaultdict(set)
    for (tenant, _), m in planted.items():
        unique[tenant].update(m.unique)
    results, installed = [], defaults(dsn)
    for k in KS:
        for epsilon in EPSILONS:
            params = gut.Params(k=k, epsilon=epsilon, **installed)
            draws = []
            for _ in range(1 if epsilon is None else DRAWS):
                started = time.perf_counter()
                draw = gut.release(items, params)
                seconds = time.perf_counter() - started
                truths = {recovered(p, centroids) for p in draw["patterns"]} - {None}
                with_gut, without = cold_start(dsn, draw, questions, centroids)
                draws.append(
                    {
                        "recovered": len(truths) / len(SHARED_TRUTHS),
                        "patterns": len(draw["patterns"]),
                        "others": sum(recovered(p, centroids) is None for p in draw["patterns"]),
                        "threshold": draw["threshold"],
                        "cold_with": with_gut,
                        "cold_without": without,
                        "violations": privacy_violations(draw, unique, k),
                        "seconds": seconds,
                    }
                )
            row = {key: statistics.median(d[key] for d in draws) for key in draws[0]}
            row |= {"k": k, "epsilon": epsilon, "violations": sum(d["violations"] for d in draws)}
            results.append(row)
            print(row, flush=True)
    return results


def per_tenant_bound(items, planted, installed: dict[str, Any], epsilon: float = 1.0) -> list[dict]:
    """At one epsilon and k 5: how many patterns a tenant may back, against the truths that survive."""
    centroids, rows = truth_centroids(items, planted), []
    for limit in (1, 2, 3, 5):
        params = gut.Params(k=5, epsilon=epsilon, **(installed | {"max_patterns_per_tenant": limit}))
        draws = [gut.release(items, params) for _ in range(DRAWS)]
        shares = [len({recovered(p, centroids) for p in d["patterns"]} - {None}) / len(SHARED_TRUTHS) for d in draws]
        prepared = gut.prepare(items, params)
        rows.append(
            {"limit": limit, "threshold": draws[0]["threshold"], "recovered": statistics.median(shares),
             "largest": max(prepared.counts(1).values())}
        )  # fmt: skip
        print(rows[-1], flush=True)
    return rows


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    xs = [e for e in EPSILONS if e is not None]
    for k in KS:
        rows = {r["epsilon"]: r for r in results if r["k"] == k}
        for axis, key in zip(axes, ("recovered", "cold_with"), strict=True):
            axis.plot(xs, [rows[e][key] for e in xs], marker="o", label=f"k = {k}")
            axis.axhline(rows[None][key], linestyle=":", color=axis.lines[-1].get_color())
    for axis, title in zip(axes, ("Planted truths published", "Cold-start evidence recall (new tenant)"), strict=True):
        axis.set_xscale("log")
        axis.set_xlabel("epsilon per release (dotted: no noise)")
        axis.set_title(title)
        axis.set_ylim(0, 1)
        axis.grid(alpha=0.3)
        axis.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def section(stats: dict, results: list[dict], member: dict, nightly: dict, bounds: list[dict]) -> list[str]:
    def eps(e):
        return "no noise" if e is None else f"{e:g}"

    lines = [
        f"Population (`bench/workload.py`, `gut_population`): {stats['tenants']} tenants, {stats['contributions']:,} "
        f"contributions (de-identified by the database from proven memories stored through `remember_many`, "
        f"embedded with MiniLM), of which {stats['truth_rows']:,} plant one of {len(SHARED_TRUTHS)} shared truths "
        f"(truth i in a share 0.9 x 0.88^i of the tenants, in English or Turkish, with the tenant's own hosts and "
        f"numbers, filed as procedures or rules) and the rest are each tenant's own facts, rules and a secret. "
        f"Settings as installed: each tenant backs at most {stats['limit']} patterns per release (its lessons "
        f"first), {stats['share']:.0%} of a release's epsilon selects and the rest noises the statistics, "
        f"delta {stats['delta']:g}, clusters at cosine {stats['similarity']:g}. Medians of {DRAWS} draws. "
        f"Run in {stats['seconds']:.0f} s.",
        "",
        f"The scheduled run at the defaults (`CALL cogmem.gut_nightly()`, epsilon 1.0, k 5): threshold "
        f"{nightly['threshold']} tenants, {nightly['published']} published, release in {nightly['seconds']:.1f} s.",
        "",
        "| k | epsilon | threshold (tenants) | truths published | other patterns | cold start with gut | without |"
        " privacy violations |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        *[
            f"| {r['k']} | {eps(r['epsilon'])} | {r['threshold']:.0f} | {r['recovered']:.2f} | {r['others']:.0f} | "
            f"{r['cold_with']:.2f} | {r['cold_without']:.2f} | {r['violations']} |"
            for r in results
        ],
        "",
        "![Gut: what survives the privacy budget](gut.png)",
        "",
        "How many patterns each tenant may back (`max_patterns_per_tenant`), at epsilon 1.0 and k 5: a lower "
        "bound lowers the threshold, and leaves each truth fewer backers.",
        "",
        "| patterns per tenant | threshold (tenants) | largest cluster's backers | truths published |",
        "|---:|---:|---:|---:|",
        *[f"| {b['limit']} | {b['threshold']} | {b['largest']} | {b['recovered']:.2f} |" for b in bounds],
        "",
        f"Membership (epsilon {member['epsilon_release']:g}, k 5): the cluster whose support is nearest the "
        f"threshold of {member['threshold']} tenants has {member['support']}; clustered again without one of them (x), "
        f"{member['support_without']}. Published in {member['in']:.3f} of 4,000 draws with x and "
        f"{member['out']:.3f} without; the bound allows with <= e^{member['epsilon']:.2f} x without + delta = "
        f"{math.exp(member['epsilon']) * member['out'] + member['delta']:.3f}.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=Path, help="Markdown file whose '## Gut' section to replace")
    parser.add_argument("--tenants", type=int, default=250)
    args = parser.parse_args()
    embedder = default_embedder()
    if embedder is None:
        raise SystemExit("bench/gut.py embeds for real: install the [embed] extra")
    started = time.perf_counter()
    with private_database(5447, database="postgres") as dsn:
        population = list(gut_population(args.tenants))
        planted = load(dsn, population, embedder)
        items = contributions(dsn)
        with psycopg.connect(dsn, autocommit=True) as conn:
            begun = time.perf_counter()
            conn.execute("CALL cogmem.gut_nightly()")
            threshold, published = conn.execute(
                "SELECT threshold, published FROM cogmem.gut_releases ORDER BY release_id DESC LIMIT 1"
            ).fetchone()
            nightly = {"threshold": threshold, "published": published, "seconds": time.perf_counter() - begun}
        questions = {
            t.key: (t.question, np.array(v, dtype=np.float32))
            for t, v in zip(SHARED_TRUTHS, embedder.embed([t.question for t in SHARED_TRUTHS]), strict=True)
        }
        results = sweep(dsn, items, planted, questions)
        # Where clusters sit at the threshold (at 1.0, none of this population's reaches it).
        member = membership(items, gut.Params(k=5, epsilon=5.0, **defaults(dsn)))
        bounds = per_tenant_bound(items, planted, defaults(dsn))
        stats = {
            "tenants": len({c.tenant for c in items}),
            "contributions": len(items),
            "truth_rows": sum(planted[(c.tenant, c.memory_id)].truth is not None for c in items),
            "seconds": time.perf_counter() - started,
        }
        installed = defaults(dsn)
        stats |= {"limit": installed["max_patterns_per_tenant"], "share": installed["selection_share"],
                  "delta": installed["delta"], "similarity": installed["cluster_similarity"]}  # fmt: skip
        lines = section(stats, results, member, nightly, bounds)
        print("\n".join(lines))
        if args.results:
            plot(results, args.results.parent / "gut.png")
            replace_section(args.results, lines, "Gut")


if __name__ == "__main__":
    random.seed(1)
    main()
