"""The Gut's de-identification on a labelled corpus of our own: identifiers in disguise, and benign lessons.

`bench/corpus/deidentify.jsonl`: each record a text (English or Turkish) with one identifier in a
disguise the review found passing (an address or a number in words, a name without a title, a host
without digits, a customer in lower case or hyphenated), the identifier and the placeholder it must
become; or a benign lesson (identifier null) that must come out unchanged, its meaning kept. Then the
existing corpora, unlabelled for names: how many texts of the inbound corpus (bench/corpus/inbound)
and of the Gut's shared truths (bench/workload.py) the de-identification changes, and which words it
took there that name nobody (read by hand: `FALSE_POSITIVES`).

`PYTHONPATH=. .venv/bin/python bench/deidentify_corpus.py --dsn DSN [--results bench/RESULTS.md]`
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import psycopg

from bench.results import replace_section

CORPUS = Path(__file__).resolve().parent / "corpus"
PLACEHOLDER = re.compile(r"<[a-z]+>")

# What the rules took in the inbound corpus that names no person, host or customer, read by hand: how
# many of each string's replacements are wrong (a place, a shop, a cake, "Mark confirmed duplicates").
FALSE_POSITIVES = {"Porto": 1, "Albert": 1, "Victoria": 1, "Mark": 1, "Mark's": 1, "Ben Nevis": 1, "John Lewis": 1,
                   "Initech": 1, "Hooli": 1, "İzmir'e": 1, "Gıda'yı": 1, "Güllüoğlu'ndan": 1}  # fmt: skip


def load() -> list[dict[str, Any]]:
    with (CORPUS / "deidentify.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def deidentify(conn: psycopg.Connection, texts: list[str], function: str = "cogmem.gut_deidentify") -> list[str]:
    query = f"SELECT {function}(t) FROM unnest(%s::text[]) WITH ORDINALITY AS x (t, n) ORDER BY n"
    return [r[0] for r in conn.execute(query, (texts,)).fetchall()]


def caught(record: dict[str, Any], out: str) -> bool:
    """The identifier is gone (none of its words left where it stood) and its placeholder is there."""
    return record["identifier"].lower() not in out.lower() and record["placeholder"] in out


def evaluate(conn: psycopg.Connection, function: str = "cogmem.gut_deidentify") -> dict[str, Any]:
    """Per disguise and language, how many identifiers are caught; the benign lessons changed."""
    records = load()
    outs = deidentify(conn, [r["text"] for r in records], function)
    per_kind: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    missed, changed, benign = [], [], 0
    for record, out in zip(records, outs, strict=True):
        if record["identifier"] is None:
            benign += 1
            if out != record["text"]:
                changed.append((record["text"], out))
            continue
        counts = per_kind[(record["kind"], record["lang"])]
        counts[1] += 1
        if caught(record, out):
            counts[0] += 1
        else:
            missed.append((record["text"], out))
    return {"per_kind": dict(per_kind), "missed": missed, "benign": benign, "changed": changed}


def existing_corpora(conn: psycopg.Connection, before: str | None = None) -> dict[str, Any]:
    """How many texts of the inbound corpus and of the shared truths the de-identification changes, and
    the words it replaced by a placeholder (all of them, or only those BEFORE, a function, left)."""
    from bench.workload import SHARED_TRUTHS

    inbound = [json.loads(line)["text"] for p in sorted((CORPUS / "inbound").glob("*.jsonl")) for line in p.open()]
    values = {"host": "db-1", "domain": "shop.example.com", "n": "7", "pct": "80", "service": "checkout", "hh": "2"}
    truths = [w.format(**values) for t in SHARED_TRUTHS for w in (*t.english, *t.turkish)]
    report: dict[str, Any] = {}
    for name, texts in (("inbound", inbound), ("truths", truths)):
        started = time.perf_counter()
        outs = deidentify(conn, texts)
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        olds = deidentify(conn, texts, before) if before else texts
        seconds_before = time.perf_counter() - started if before else None
        taken: Counter[str] = Counter()
        for old, new in zip(olds, outs, strict=True):
            a, b = old.split(), new.split()
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
                if op != "equal" and any(PLACEHOLDER.search(x) for x in b[j1:j2]):
                    taken[" ".join(a[i1:i2])] += 1
        changed = sum(o != n for o, n in zip(olds, outs, strict=True))
        report[name] = {"texts": len(texts), "changed": changed, "taken": taken, "seconds": seconds,
                        "seconds_before": seconds_before}  # fmt: skip
    return report


def section(result: dict[str, Any], corpora: dict[str, Any], before: dict[str, Any] | None = None) -> list[str]:
    rows = sorted(result["per_kind"].items())
    total = sum(n for _, (_, n) in rows)
    hit = sum(c for _, (c, _) in rows)
    caught_before = sum(c for c, _ in before["per_kind"].values()) if before else None
    lines = [
        f"`bench/deidentify_corpus.py` over `bench/corpus/deidentify.jsonl` (ours): {total} identifiers in the "
        f"disguises the review found passing, in English and Turkish, and {result['benign']} benign lessons that "
        "must come out unchanged.",
        "",
        "| disguise | language | caught |",
        "|---|---|---|",
        *(f"| {kind} | {lang} | {c} of {n} |" for (kind, lang), (c, n) in rows),
        f"| **all** | | **{hit} of {total}** |",
        "",
        f"Benign lessons changed: {len(result['changed'])} of {result['benign']}."
        + (f" Before these rules (issue 37), {caught_before} of {total} identifiers were caught." if before else ""),
    ]
    for name in ("inbound", "truths"):
        r = corpora[name]
        wrong = sum(min(n, FALSE_POSITIVES.get(w, 0)) for w, n in r["taken"].items())
        label = "inbound corpus (`bench/corpus/inbound`)" if name == "inbound" else "Gut's shared truths"
        lines.append(
            f"On the {label}: the rules added by issue 37 change {r['changed']} of {r['texts']} texts, replacing "
            f"{sum(r['taken'].values())} words or names, {wrong} of which name nobody (read by hand)."
        )
    r = corpora["inbound"]
    per_text = 1000 * r["seconds"] / r["texts"]
    before_text = f" ({1000 * r['seconds_before'] / r['texts']:.2f} ms before)" if r["seconds_before"] else ""
    lines.append(f"It takes {per_text:.2f} ms a text on the inbound corpus{before_text}, at each night's collection.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description="The Gut's de-identification on its labelled corpus.")
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--before", help="a function with the de-identification before (to count what changed)")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        result = evaluate(conn)
        before = evaluate(conn, args.before) if args.before else None
        corpora = existing_corpora(conn, args.before)
    for text, out in result["missed"]:
        print("MISSED ", text, "\n     ->", out)
    for text, out in result["changed"]:
        print("CHANGED", text, "\n     ->", out)
    for name, r in corpora.items():
        print(name, r["changed"], "of", r["texts"], "changed;", r["taken"].most_common())
    lines = section(result, corpora, before)
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, lines, "De-identification of the Gut")


if __name__ == "__main__":
    main()
