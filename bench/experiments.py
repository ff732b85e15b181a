"""Calibration by experiment, proven on a simulation with a known best arm (issue 33, part B).

Simulated tenants whose true success rate depends on the promotion threshold they see: each run creates an
experiment on promote_min_recalls with three arms through cogmem.experiment_create (a fresh random
assignment), reads each tenant's threshold back through cogmem._tenant_settings (the arm laid over its
settings, as recall and the night read it), and writes that tenant's recall cycles with outcomes drawn at
its true rate (the arm's rate, plus a tenant's own offset: tenants differ). The cycles go straight into
cogmem.recalls, a bench-only path for speed (tests/test_experiments.py drives the same report through
recall and feedback); the verdict is the real cogmem.experiment_report as of the horizon, whose
always-valid test looked once a day. Two scenarios of 200 seeded runs each: a true best arm (the middle
threshold), where the experiment must name that arm in at least 95% of runs, and equal arms, where it may
name an arm in at most 5% of runs (the test's promise, over every daily look).

    PYTHONPATH=. .venv/bin/python bench/experiments.py [--runs 200] [--results bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness import given_or_private
from bench.results import replace_section

SECTION = "Calibration by experiment"
ARMS = [2, 3, 5]  # promote_min_recalls
# True success rates by threshold: too eager promotes noise, too strict promotes too late.
SCENARIOS = {
    "a true best arm": {2: 0.62, 3: 0.72, 5: 0.66},
    "equal arms": {2: 0.66, 3: 0.66, 5: 0.66},
}
TENANTS = 40
PER_DAY = 20  # recall cycles with an outcome, per tenant and day
DAYS = 60
SPREAD = 0.02  # standard deviation of a tenant's own offset from its arm's rate


@dataclass(frozen=True)
class Run:
    winner: int | None  # the arm the report called better, or None: no difference yet
    days: float | None  # when it did, in days since the start


def tenants(conn: psycopg.Connection) -> list[str]:
    names = [f"sim-{i:02}" for i in range(TENANTS)]
    for name in names:
        conn.execute("SELECT cogmem.create_tenant(%s)", (name,))
    return names


# PER_DAY cycles a day for DAYS days per tenant, each at a random time of its day, a success at the tenant's
# rate; drawn in the server (random(), seeded per run), which writes them faster than COPY can send them.
CYCLES = """
INSERT INTO cogmem.recalls (tenant, message_sha256, topics, budget, tokens_used, outcome, outcome_source,
                            feedback_at, created_at, pending)
SELECT r.tenant, '\\x00', '{}', 3200, 0, (random() < r.rate)::integer, 'explicit', x.at, x.at, false
FROM unnest(%(tenants)s::text[], %(rates)s::float8[]) AS r (tenant, rate)
CROSS JOIN LATERAL (SELECT %(start)s::timestamptz + (d + random()) * interval '1 day' AS at
                    FROM generate_series(0, %(days)s - 1) AS d, generate_series(1, %(per_day)s) AS k) AS x
"""


def run(conn: psycopg.Connection, names: list[str], scenario: str, seed: int) -> Run:
    rng = np.random.default_rng([seed, list(SCENARIOS).index(scenario)])
    name = f"{scenario.replace(' ', '-')}-{seed}"
    conn.execute("SELECT setseed(%s)", ((seed % 1000) / 1000,))  # the salt (the assignment) and the outcomes
    conn.execute(
        "SELECT cogmem.experiment_create(%s, 'promote_min_recalls', %s, tenants => %s)", (name, Jsonb(ARMS), names)
    )
    start = conn.execute("SELECT created_at FROM cogmem.experiments WHERE name = %s", (name,)).fetchone()[0]  # type: ignore[index]
    seen = dict(
        conn.execute(
            "SELECT t, (cogmem._tenant_settings(t)).promote_min_recalls FROM unnest(%s::text[]) AS t", (names,)
        ).fetchall()
    )
    truth = SCENARIOS[scenario]
    rates = {t: float(np.clip(truth[seen[t]] + rng.normal(0, SPREAD), 0, 1)) for t in names}
    conn.execute(CYCLES, {"tenants": list(rates), "rates": list(rates.values()), "start": start, "days": DAYS,
                          "per_day": PER_DAY})  # fmt: skip
    verdict, decided_at = conn.execute(
        "SELECT verdict, decided_at FROM cogmem.experiment_report(%s, %s) LIMIT 1", (name, start + timedelta(days=DAYS))
    ).fetchone()  # type: ignore[misc]
    conn.execute("SELECT cogmem.experiment_stop(%s)", (name,))
    conn.execute("DELETE FROM cogmem.recalls WHERE tenant = ANY (%s)", (names,))  # the next run starts empty
    found = re.match(r"arm (\d+) ", verdict)
    winner = ARMS[int(found.group(1)) - 1] if found else None
    return Run(winner, (decided_at - start) / timedelta(days=1) if decided_at else None)


def section(results: dict[str, list[Run]], runs: int, seconds: float) -> list[str]:
    lines = [
        f"`bench/experiments.py`: {runs} seeded runs per scenario. Each run is an experiment on "
        f"`promote_min_recalls` with arms {ARMS} over {TENANTS} tenants (dealt to the arms at random by "
        f"`experiment_create`); each tenant's threshold is read back through `_tenant_settings`, and it "
        f"records {PER_DAY} recall outcomes a day for {DAYS} days at its arm's true success rate plus its own "
        f"offset (standard deviation {SPREAD}). The verdict is `experiment_report` at day {DAYS}: its "
        f"always-valid test (mixture SPRT, alpha 0.05, Bonferroni over the 3 pairs) looked once a day, and the "
        f"verdict is what it said first. {seconds:.0f} s on 2 cores for both scenarios.",
        "",
        "| scenario | true rates (2, 3, 5) | picked the best arm | picked another arm | no difference yet "
        "| days to a verdict (median, 90th percentile) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for scenario, found in results.items():
        truth = SCENARIOS[scenario]
        best = max(truth, key=lambda a: truth[a]) if len(set(truth.values())) > 1 else None
        right = sum(1 for r in found if r.winner is not None and r.winner == best)
        wrong = sum(1 for r in found if r.winner is not None and r.winner != best)
        days = [r.days for r in found if r.days is not None]
        timing = f"{np.median(days):.0f}, {np.percentile(days, 90):.0f}" if days else "-"
        rates = ", ".join(f"{truth[a]:.2f}" for a in ARMS)
        lines.append(
            f"| {scenario} | {rates} | {right / len(found):.3f} | {wrong / len(found):.3f} "
            f"| {1 - (right + wrong) / len(found):.3f} | {timing} |"
        )
    equal = next(found for scenario, found in results.items() if len(set(SCENARIOS[scenario].values())) == 1)
    false = sum(1 for r in equal if r.winner is not None)
    lines += [
        "",
        "Issue 33 asks for the true best arm in at least 95% of 200 runs, and a false verdict among equal arms "
        "at no more than the 5% the test promises (with equal arms every verdict is false: *picked another "
        f"arm*). {false} false verdicts of {len(equal)}: the false rate is at most "
        f"{upper_bound(false, len(equal)):.3f} (95% Clopper-Pearson upper bound).",
        "",
        "Each arm's estimate is the mean of its units' ratios (issue 46: one tenant, one vote, whatever its "
        "volume); here every tenant records as many outcomes, so the pooled ratio it replaced gave the same "
        "figures. Where one tenant's volume differs, the pooled ratio followed that tenant "
        "(`tests/test_experiments.py::test_one_busy_tenant_does_not_decide_its_arm`).",
        "",
    ]
    return lines


def upper_bound(k: int, n: int, confidence: float = 0.95) -> float:
    """The one-sided Clopper-Pearson upper bound of a rate seen K times in N."""
    from scipy.stats import beta

    return 1.0 if k == n else float(beta.ppf(confidence, k + 1, n - k))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    began = time.monotonic()
    with given_or_private(args.dsn, 5465, database="postgres") as dsn, psycopg.connect(dsn, autocommit=True) as conn:
        names = tenants(conn)
        results = {scenario: [run(conn, names, scenario, seed) for seed in range(args.runs)] for scenario in SCENARIOS}
    lines = section(results, args.runs, time.monotonic() - began)
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, lines, SECTION)


if __name__ == "__main__":
    main()
