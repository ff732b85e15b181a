"""The labelled corpus (bench/corpus/, see its README): statements, contradiction and duplicate pairs, follow-ups.

Each record carries its split; `python bench/corpus.py` gives new records one from a hash of their text
(60% train, 20% dev, 20% test), so that adding records never moves old ones between splits. Pairs are
split by their first text, so that every pair about one established memory lands in the same split.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"
RINGS = ("dos_and_donts", "shocks", "procedures", "fresh")
NEVER_CUT = ("dos_and_donts", "shocks")
SPLITS = ("train", "dev", "test")
# What can be held as a conflict: a standing rule, a one-off order, steps to follow.
INSTRUCTION_KINDS = frozenset({"rule", "request", "procedure"})
# Words that make a naive router call casual talk a rule (the corpus holds a third of them).
TRIGGERS = (
    r"\b(always|never|must|important|don'?t|do not)\b|(^|[^a-zçğıöşü])(unutma\w*|asla|her zaman|sakın|"
    r"mutlaka|kesinlikle|önemli)"
)


@dataclass(frozen=True)
class Statement:
    text: str
    ring: str
    lang: str
    kind: str
    context: str
    split: str
    # In a long turn (*-long.jsonl): the verbatim span that makes it a rule, an incident or steps.
    sentence: str | None = None
    # voices/*.jsonl: who wrote it (a persona of its own) and how the message is built.
    writer: str | None = None
    shape: str | None = None

    @property
    def instruction(self) -> bool:
        return self.kind in INSTRUCTION_KINDS

    @property
    def casual(self) -> bool:
        return self.context in ("casual", "assistant")


def split_of(key: str) -> str:
    bucket = hashlib.sha256(key.encode("utf-8")).digest()[0] / 256
    return "train" if bucket < 0.6 else "dev" if bucket < 0.8 else "test"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def statements(split: str | None = None) -> list[Statement]:
    rows = [Statement(**r) for path in sorted((CORPUS / "inbound").glob("*.jsonl")) for r in _records(path)]
    return [s for s in rows if split is None or s.split == split]


# Writers of voices/ that no model may learn from: what the shipped models score on them is what a stranger
# gets (bench/understanding.py). The router learns from the others (bench/train_router.py).
HELD_OUT_WRITERS = ("en-w3", "en-w6", "en-w10", "tr-w3", "tr-w5", "tr-w10")
# Writers of preferences (en-w18 to tr-w20, 2026-12-07: most of their rules are a person's wishes, many said
# as a state, "I'm vegetarian", with look-alikes of taste) held out the same way. Apart from HELD_OUT_WRITERS
# so that its figures stay comparable with the earlier sessions'.
HELD_OUT_PREFERENCE_WRITERS = ("en-w20", "tr-w20")
UNSEEN_WRITERS = HELD_OUT_WRITERS + HELD_OUT_PREFERENCE_WRITERS
# Every writer of preferences: the preference heads learn from those not held out (bench/train_preference.py);
# the ring heads do not, since learning their states moved the heads' calibration so that plain rules fell
# out of the ring (docs/understanding.md, "Preferences said as a state").
PREFERENCE_WRITERS = ("en-w18", "en-w19", "en-w20", "tr-w18", "tr-w19", "tr-w20")


def voices(writers: Sequence[str] | None = None) -> list[Statement]:
    """Messages of voices/*.jsonl (issue 48), each writer a persona of its own, as statements: a rule's or
    an incident's clause is its sentence; every record is in the split named after its writer."""
    rows = []
    for path in sorted((CORPUS / "voices").glob("*.jsonl")):
        for r in _records(path):
            if writers is None or r["writer"] in writers:
                rows.append(
                    Statement(
                        text=r["text"],
                        ring=r["ring"],
                        lang=r["lang"],
                        kind=r["kind"],
                        context=r["domain"],
                        split=r["writer"],
                        sentence=r["clause"],
                        writer=r["writer"],
                        shape=r["shape"],
                    )
                )
    return rows


def voice_writers() -> list[str]:
    """The writers of voices/, by language, then number (en-w2 before en-w10)."""
    return sorted({s.writer for s in voices() if s.writer}, key=lambda w: (w.split("-w")[0], int(w.split("-w")[1])))


# Writers of updates/ the supersession test (sql/036-supersession.sql) was never tuned on.
HELD_OUT_UPDATE_WRITERS = ("upd-en-2", "upd-tr-2")


def updates() -> list[dict]:
    """Pairs of updates/*.jsonl: a fact, and a later statement that replaces it or is compatible with it."""
    return [r for path in sorted((CORPUS / "updates").glob("*.jsonl")) for r in _records(path)]


def pairs(name: str, split: str | None = None) -> list[dict]:
    """Records of dissonance.jsonl or duplicates.jsonl."""
    rows = _records(CORPUS / f"{name}.jsonl")
    return [r for r in rows if split is None or r["split"] == split]


def followups(split: str | None = None) -> list[dict]:
    """Records of followups/*.jsonl: an exchange, the user's next turn, and what it says of the answer."""
    rows = [r for path in sorted((CORPUS / "followups").glob("*.jsonl")) for r in _records(path)]
    return [r for r in rows if split is None or r["split"] == split]


def assign_splits() -> dict[str, int]:
    """Gives every record without a split the one its hash names; returns how many were given one."""
    given: dict[str, int] = {}
    files = [(p, "text") for p in sorted((CORPUS / "inbound").glob("*.jsonl"))]
    files += [(CORPUS / "dissonance.jsonl", "established"), (CORPUS / "duplicates.jsonl", "a")]
    # A follow-up is split by the question it follows.
    files += [(p, "asked") for p in sorted((CORPUS / "followups").glob("*.jsonl"))]
    for path, key in files:
        rows = _records(path)
        missing = [r for r in rows if "split" not in r]
        for r in missing:
            r["split"] = split_of(r[key])
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        given[str(path.relative_to(CORPUS))] = len(missing)
    return given


if __name__ == "__main__":
    for name, count in assign_splits().items():
        print(f"{name}: {count} records given a split")
