"""What this commit's remember and recall cost against an earlier commit's, in one run (issue 48: "remember
p50 at 100k no more than 1.3x today's").

Two private clusters, one with the schema of this checkout and one with that of BASE (a git worktree of it,
installed by its own code), each loaded with the scale bench's workload (bench/workload.py, seed 1, 1,000
tenants) through remember_many. Then the same calls go to both, interleaved in random order: `remember`
one memory per call and per transaction (routing and topic detection on, a random vector given, no
in-database embedding) of texts neither database holds, (a) the workload's and (b) the held-out writers'
messages of bench/corpus/voices (rules among pleasantries, stories: what the clause reader reads), and
`recall` at the default budget. The figures are medians and the ratio of this commit's to BASE's: these
machines are noisy, so only a ratio of one run says anything.

    PYTHONPATH=. .venv/bin/python bench/versus.py [--base 3b09124] [--memories 100000] [--results bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from contextlib import ExitStack
from datetime import date
from pathlib import Path

import psycopg
from pgvector.psycopg import register_vector

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.corpus import HELD_OUT_WRITERS, voices
from bench.harness import private_database
from bench.results import replace_section
from bench.scale import load, percentile
from bench.workload import memories, tenant_names, unit_vectors

SECTION = "Against an earlier commit"
ROOT = Path(__file__).resolve().parents[1]
# The last commit before issue 48's work (and issue 47's per-language embedders): "today's" of the issue.
BASE = "3b09124"


def worktree(rev: str) -> Path:
    """A detached git worktree of REV (made once, kept for the next run)."""
    path = ROOT / ".cogmem" / f"worktree-{rev}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), rev], check=True)
    return path


def install_from(tree: Path, dsn: str) -> None:
    """Installs the schema of TREE into DSN by TREE's own installer."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = "import sys; from cogmem_pg.migrate import install; install(sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, dsn], check=True, cwd=tree, env=env)


def calls(n: int) -> dict[str, list[tuple[str, str, str, object]]]:
    """N calls of each kind, as (sql, tenant, text, vector): texts neither database holds."""
    rng = random.Random(7)
    tenants = tenant_names(1000)
    written = list(memories(n, 1000, seed=99))
    said = [s.text for s in voices(list(HELD_OUT_WRITERS))]
    rng.shuffle(said)
    vectors = unit_vectors(3 * n, seed=98)
    remember = "SELECT count(*) FROM cogmem.remember(%s, %s, embedding => %s)"
    recall = "SELECT count(*) FROM cogmem.recall(%s, %s, %s)"
    return {
        "remember, the workload's texts": [(remember, m.tenant, m.content, vectors[i]) for i, m in enumerate(written)],
        "remember, people's messages": [
            (remember, rng.choice(tenants), said[i % len(said)] + f" ({i})", vectors[n + i]) for i in range(n)
        ],
        "recall (3,200 tokens)": [
            (recall, rng.choice(tenants), written[i].content, vectors[2 * n + i]) for i in range(n)
        ],
    }


def timed(conns: dict[str, psycopg.Connection], work: dict[str, list]) -> dict[str, dict[str, list[float]]]:
    """Each call on every database, the databases' order random per call; milliseconds per kind and database."""
    rng = random.Random(11)
    out: dict[str, dict[str, list[float]]] = {kind: {name: [] for name in conns} for kind in work}
    for kind, rows in work.items():
        for sql, tenant, text, vector in rows:
            for name in rng.sample(list(conns), len(conns)):
                started = time.perf_counter()
                conns[name].execute(sql, (tenant, text, vector)).fetchone()
                out[kind][name].append((time.perf_counter() - started) * 1000)
    return out


def section(base: str, head: str, total: int, times: dict[str, dict[str, list[float]]]) -> list[str]:
    lines = [
        f"`bench/versus.py`, one run ({date.today().isoformat()}): {total:,} memories over 1,000 tenants in "
        "each of two private clusters, one "
        f"with the schema of {head} and one with that of {base}; every call made on both, interleaved in random "
        "order, one per transaction (remember: routing and topics on, a random vector given). People's messages "
        "are the held-out writers' of bench/corpus/voices (rules among pleasantries, stories, long messages).",
        "",
        f"| call | calls | p50 ms, {base} | p50 ms, {head} | ratio | p95 ms, {base} | p95 ms, {head} |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, by in times.items():
        old, new = by["base"], by["head"]
        p95 = [percentile(v, 95) for v in (old, new)]
        ratio = statistics.median(new) / statistics.median(old)
        lines.append(
            f"| {kind} | {len(new)} | {statistics.median(old):.2f} | {statistics.median(new):.2f} | "
            f"{ratio:.2f}× | {p95[0]:.2f} | {p95[1]:.2f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    tree = worktree(args.base)
    with ExitStack() as stack:
        dsns = {
            "base": stack.enter_context(private_database(5471, schema=False, server_python=False)),
            "head": stack.enter_context(private_database(5472, server_python=False)),
        }
        install_from(tree, dsns["base"])
        for name, dsn in dsns.items():
            seconds, rows = load(dsn, args.memories)
            print(f"{name}: {rows} memories loaded in {seconds:.0f} s", file=sys.stderr)
        conns = {name: stack.enter_context(psycopg.connect(dsn, autocommit=True)) for name, dsn in dsns.items()}
        for conn in conns.values():
            register_vector(conn)
            conn.execute("SET cogmem.embed = off")
        times = timed(conns, calls(args.calls))
    lines = section(args.base, head.stdout.strip(), args.memories, times)
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, lines, SECTION)


if __name__ == "__main__":
    main()
