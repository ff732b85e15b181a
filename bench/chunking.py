"""Resource chunking: does cutting a document take time in proportion to its size?

`python bench/chunking.py [--results bench/RESULTS.md]` times `cogmem.chunk_text` (what `add_resource` and
`chunk_resource` cut with) on documents of 200, 400 and 800 KB in one run, the median of five each, in three
shapes: one long block of short lines (`repeat(E'word word\\n', N)`, the shape that took 79.5 s at 800 KB
before issue 46), a Markdown document of sections of a few paragraphs, and one word as long as the document
(a key or a URL is cut where a chunk ends); and the long block by `chunk_resource` (redaction first), as
issue 46 timed it. Linear means 800 KB in about twice the time of 400 KB; issue 46 asks for at most 2.5 times.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import psycopg

from bench.harness import private_database
from bench.results import replace_section

SIZES_KB = (200, 400, 800)
RUNS = 5


def shapes(kb: int) -> dict[str, str]:
    size = kb * 1024
    section = "## Step {n}\n\nPromote the replica and check the lag. Then point the pool at it.\n\n- one\n- two\n\n"
    sections = []
    n = 0
    while sum(map(len, sections)) < size:
        n += 1
        sections.append(section.format(n=n))
    return {
        "one long block": "word word\n" * (size // 10),
        "Markdown sections": "".join(sections)[:size],
        "one long word": "x" * size,
    }


def median_seconds(conn: psycopg.Connection, body: str, verb: str = "chunk_text(%s)") -> float:
    times = []
    for _ in range(RUNS):
        began = time.perf_counter()
        conn.execute(f"SELECT count(*) FROM cogmem.{verb}", (body,)).fetchone()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main(results: Path | None, port: int) -> None:
    with private_database(port) as dsn, psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT cogmem.create_tenant('bench')")
        timed = {kb: {shape: median_seconds(conn, body) for shape, body in shapes(kb).items()} for kb in SIZES_KB}
        for kb in SIZES_KB:  # the verb as issue 46 timed it: redaction, then the same cut
            timed[kb]["one long block, by chunk_resource"] = median_seconds(
                conn, shapes(kb)["one long block"], "chunk_resource('bench', 'Manual', %s)"
            )
    names = list(timed[SIZES_KB[0]])
    lines = [
        "`bench/chunking.py`: `cogmem.chunk_text` (and `chunk_resource`, which redacts first) on documents of "
        f"200, 400 and 800 KB, the median of {RUNS} runs each, one run.",
        "",
        "| shape | " + " | ".join(f"{kb} KB" for kb in SIZES_KB) + " | 800 KB / 400 KB |",
        "|---|" + "---:|" * (len(SIZES_KB) + 1),
    ]
    for name in names:
        cells = " | ".join(f"{timed[kb][name] * 1000:.0f} ms" for kb in SIZES_KB)
        lines.append(f"| {name} | {cells} | {timed[800][name] / timed[400][name]:.2f} |")
    lines += [
        "",
        "Issue 46 asks for 800 KB in at most 2.5 times the time of 400 KB. Before it, one long block took 6.5 s "
        "at 200 KB, 19.6 s at 400 KB and 79.5 s at 800 KB: each part of a long block re-read the whole block. "
        "One long word took 0.17, 0.67 and 2.62 s (3.9 times from 400 to 800 KB): each piece was cut by substr, "
        "which counts the characters before its offset again.",
        "",
    ]
    print("\n".join(lines), flush=True)
    if results:
        replace_section(results, lines, "Resource chunking")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path)
    parser.add_argument("--port", type=int, default=5471, help="the private cluster's port (default 5471)")
    arguments = parser.parse_args()
    main(arguments.results, arguments.port)
