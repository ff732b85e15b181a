"""Resource recall: is the section that answers a question injected, at the default budget?

`python bench/resources.py [--results bench/RESULTS.md]` reads bench/corpus/resources (documents of our
own, English and Turkish, and questions each answered by one short span of one document), and stores the
same documents three ways, each in a tenant of its own that also holds a team's ordinary memories (the
scale workload's first tenant: rules, incidents, facts, small talk), so that documents compete for the
budget as they would:

- **resources**: `cogmem.add_resource`, chunked by structure, recalled in the resources layer;
- **one memory per document**: `cogmem.remember` of the whole text (recall shows the sentences that
  match, the excerpt of a long memory);
- **fixed-size chunks**: the text cut every N characters (N = the resource chunk size, no overlap, no
  regard for structure), each a memory through `cogmem.remember_many`;
- **fixed-size chunks in the resources layer**: the same cuts, each a section of a document added with
  `add_resource` (which keeps a section that fits whole): what structure adds, the layer aside.

Every question is recalled at the default budget (3,200 tokens) and at 2,000; a question is answered when
its span is in what recall injected (whitespace aside). Embeddings are the database's own (MiniLM, in
PL/Python), for the documents and the questions alike. Reported per approach and language, with the
tokens the documents took.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path

import psycopg

from bench.harness import private_database
from bench.results import replace_section
from bench.workload import memories

CORPUS = Path(__file__).parent / "corpus" / "resources"
APPROACHES = {"resources": "structure chunks, resources layer", "fixed_resources": "fixed-size chunks, resources layer",
              "whole": "one memory per document", "fixed": "fixed-size chunks as memories"}  # fmt: skip
BUDGETS = (3200, 2000)


def corpus() -> tuple[dict[str, str], list[dict]]:
    documents = {p.name: p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.md")) if p.name != "README.md"}
    questions = [
        json.loads(line) for line in (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line
    ]
    return documents, questions


def title_of(name: str, body: str) -> str:
    return next((line[2:].strip() for line in body.splitlines() if line.startswith("# ")), name)


def fixed_chunks(body: str, size: int) -> list[str]:
    return [body[i : i + size] for i in range(0, len(body), size) if body[i : i + size].strip()]


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def load(conn: psycopg.Connection, documents: dict[str, str]) -> dict[str, float]:
    """The three tenants, each with the team's memories and the documents stored its way; seconds each."""
    team = [{"content": m.content, "ring": m.ring, "topics": list(m.topics)} for m in memories(300, tenants=1)]
    seconds = {}
    for approach in APPROACHES:
        language = "english"
        conn.execute("SELECT cogmem.create_tenant(%s, %s)", (approach, language))
        # A whole document is one memory: the tenant takes texts that long.
        conn.execute("SELECT cogmem.configure_tenant(%s, '{\"max_content_chars\": 100000}')", (approach,))
        conn.execute("SELECT count(*) FROM cogmem.remember_many(%s, %s)", (approach, json.dumps(team)))
        size = conn.execute(
            "SELECT resource_chunk_tokens * 4 FROM cogmem.tenants WHERE tenant = %s", (approach,)
        ).fetchone()[0]  # type: ignore[index]
        started = time.perf_counter()
        for name, body in documents.items():
            if approach == "resources":
                conn.execute(
                    "SELECT * FROM cogmem.add_resource(%s, %s, %s, 'document')", (approach, title_of(name, body), body)
                )
            elif approach == "fixed_resources":
                # Each cut its own section, its Markdown made plain so that the chunker keeps it whole.
                cuts = [re.sub(r"(?m)^\s{0,3}#+\s|```|~~~", "", c) for c in fixed_chunks(body, size)]
                parts = "\n\n".join(f"## {n}\n\n{c}" for n, c in enumerate(cuts, start=1) if c.strip())
                conn.execute(
                    "SELECT * FROM cogmem.add_resource(%s, %s, %s, 'document')", (approach, title_of(name, body), parts)
                )
            elif approach == "whole":
                conn.execute("SELECT * FROM cogmem.remember(%s, %s, 'long_term')", (approach, body))
            else:
                items = [
                    {"content": c, "ring": "long_term", "source": {"document": name}} for c in fixed_chunks(body, size)
                ]
                conn.execute("SELECT count(*) FROM cogmem.remember_many(%s, %s)", (approach, json.dumps(items)))
        seconds[approach] = time.perf_counter() - started
    return seconds


def evaluate(conn: psycopg.Connection, questions: list[dict]) -> dict:
    """Per approach and budget: answered questions by language, and the tokens documents took."""
    found: dict = defaultdict(lambda: defaultdict(list))
    tokens: dict = defaultdict(list)
    misses: dict = defaultdict(list)
    for q in questions:
        for approach in APPROACHES:
            for budget in BUDGETS:
                rows = conn.execute(
                    "SELECT layer, content, tokens FROM cogmem.recall(%s, %s, budget => %s)",
                    (approach, q["question"], budget),
                ).fetchall()
                injected = normalised(" ".join(r[1] for r in rows if r[1]))
                hit = normalised(q["answer"]) in injected
                found[(approach, budget)][q["language"]].append(hit)
                if budget == BUDGETS[0]:
                    tokens[approach].append(sum(r[2] for r in rows))
                    if not hit and approach == "resources":
                        misses[approach].append(q)
    return {"found": found, "tokens": tokens, "misses": misses}


def section(
    documents: dict[str, str],
    questions: list[dict],
    result: dict,
    seconds: dict[str, float],
    embeds: bool,
    never_cut: int,
) -> list[str]:
    languages = sorted({q["language"] for q in questions})
    per_language = {lang: sum(q["language"] == lang for q in questions) for lang in languages}
    lines = [
        f"bench/corpus/resources: {len(documents)} documents of our own (runbooks, policies, templates, contracts, "
        f"guides; {sum(n.startswith('en-') for n in documents)} English, {sum(n.startswith('tr-') for n in documents)} "
        f"Turkish) and {len(questions)} questions ("
        + ", ".join(f"{per_language[lang]} {lang}" for lang in languages)
        + "), each answered by a short span of one document. Each approach is a tenant of its own that also "
        "holds a team's 300 ordinary memories. A question is answered when its span is in what `cogmem.recall` "
        f"injected. Embeddings: {'the database' if embeds else 'none (full text only)'}, for documents and questions.",
        "",
        "| stored as | budget | answered | " + " | ".join(languages) + " | tokens injected (median, 3,200) |",
        "|---|---:|---:|" + "---:|" * len(languages) + "---:|",
    ]
    for approach, label in APPROACHES.items():
        for budget in BUDGETS:
            by_language = result["found"][(approach, budget)]
            everything = [h for hits in by_language.values() for h in hits]
            cells = [f"{sum(by_language[lang]) / len(by_language[lang]):.2f}" for lang in languages]
            median = f"{statistics.median(result['tokens'][approach]):,.0f}" if budget == BUDGETS[0] else ""
            lines.append(
                f"| {label} | {budget:,} | **{sum(everything) / len(everything):.2f}** | "
                + " | ".join(cells)
                + f" | {median} |"
            )
    lines += [
        "",
        f"The team's never-cut rules and incidents take {never_cut:,} tokens of every recall, before any layer: "
        "what is left of a budget is what the documents compete for. Stored in: "
        + ", ".join(f"{APPROACHES[a]} {s:.1f} s" for a, s in seconds.items())
        + ".",
    ]
    return lines


def main(results: Path | None) -> None:
    documents, questions = corpus()
    with private_database(5469) as dsn, psycopg.connect(dsn, autocommit=True) as conn:
        embeds = bool(conn.execute("SELECT cogmem.server_can_embed()").fetchone()[0])  # type: ignore[index]
        seconds = load(conn, documents)
        never_cut = conn.execute(
            "SELECT sum(token_estimate) FROM cogmem.memories WHERE tenant = 'resources'"
            " AND ring IN ('shocks', 'dos_and_donts')"
        ).fetchone()[0]  # type: ignore[index]
        result = evaluate(conn, questions)
    lines = section(documents, questions, result, seconds, embeds, never_cut or 0)
    print("\n".join(lines), flush=True)
    for q in result["misses"]["resources"]:
        print(f"missed: {q['doc']} § {q['section']}: {q['question']!r} -> {q['answer']!r}", flush=True)
    if results:
        replace_section(results, lines, "Resource recall")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path)
    main(parser.parse_args().results)
