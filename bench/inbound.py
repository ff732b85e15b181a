"""Inbound attention measured on the labelled corpus (bench/corpus): routing, false conflicts, dissonance,
near-duplicates. Everything runs through the SQL API, as an application calls it.

- routing: cogmem.classify() on each statement, with its embedding (MiniLM's, or E5's with
  COGMEM_BENCH_EMBEDDER=e5: the default path, the client embeds) and without (a server that cannot
  embed): per-ring precision and recall, the confusion matrix;
- false conflicts: every casual statement of a split remembered, in order, into one tenant through
  remember(tenant, text) with no ring: the share held as conflicts, and the share that entered a never-cut
  ring;
- dissonance: each pair in a tenant of its own, the established memory stored in its ring, then the new
  text through remember(): contradicts when it is held as a conflict or stored linked to the old one;
- duplicates: each pair in a tenant of its own, both texts remembered, then one night: duplicate when the
  second rehearsed the first or the night merged them, sibling when the night linked them.

Used by bench/run.py (the tables in bench/RESULTS.md) and by tests/test_routing.py and
tests/test_conflicts.py (which keep the figures from regressing).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psycopg

from bench.corpus import NEVER_CUT, RINGS, Statement
from cogmem_pg.embed import E5_MODEL_ID, MODEL_ID, builtin_embedder, embed_queries

LANGUAGES = {"en": "english", "tr": "turkish"}


def bench_model() -> str:
    """The embedding model the inbound benches read: MiniLM (English tenants' default), or multilingual E5
    (every other language's) with COGMEM_BENCH_EMBEDDER=e5; each model's routing heads are measured alike."""
    return E5_MODEL_ID if os.environ.get("COGMEM_BENCH_EMBEDDER") == "e5" else MODEL_ID


def embed(texts: Sequence[str], model: str | None = None, *, query: bool = False) -> list[np.ndarray | None]:
    """Vectors of TEXTS by MODEL (default bench_model(); the query side with QUERY), cached on disk per
    model and side (.cogmem/embed-cache): the corpus is embedded once, not by every trainer and bench."""
    model = model or bench_model()
    embedder = builtin_embedder(model)
    if embedder is None:
        return [None] * len(texts)
    side = "-query" if query and model == E5_MODEL_ID else ""
    path = Path(__file__).resolve().parents[1] / ".cogmem" / "embed-cache" / f"{model}{side}.pkl"
    cache: dict[str, np.ndarray] = pickle.loads(path.read_bytes()) if path.exists() else {}
    keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in cache}.items())
    for start in range(0, len(missing), 64):
        part = missing[start : start + 64]
        chunk = [t for _, t in part]
        made = embed_queries(embedder, chunk) if query else embedder.embed(chunk)
        for (key, _), vector in zip(part, made, strict=True):
            cache[key] = np.asarray(vector, dtype=np.float32)
    if missing:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(cache))
    return [cache[k] for k in keys]


@dataclass
class Routing:
    """Truth and prediction per statement, and what follows from them."""

    truth: list[str]
    predicted: list[str]
    instruction_truth: list[bool] = field(default_factory=list)
    instruction_predicted: list[bool] = field(default_factory=list)

    def precision(self, ring: str) -> float:
        chosen = [t for t, p in zip(self.truth, self.predicted, strict=True) if p == ring]
        return sum(t == ring for t in chosen) / len(chosen) if chosen else 1.0

    def recall(self, ring: str) -> float:
        wanted = [p for t, p in zip(self.truth, self.predicted, strict=True) if t == ring]
        return sum(p == ring for p in wanted) / len(wanted) if wanted else 1.0

    @property
    def accuracy(self) -> float:
        return sum(t == p for t, p in zip(self.truth, self.predicted, strict=True)) / len(self.truth)

    @property
    def instruction_precision(self) -> float:
        chosen = [t for t, p in zip(self.instruction_truth, self.instruction_predicted, strict=True) if p]
        return sum(chosen) / len(chosen) if chosen else 1.0

    @property
    def instruction_recall(self) -> float:
        wanted = [p for t, p in zip(self.instruction_truth, self.instruction_predicted, strict=True) if t]
        return sum(wanted) / len(wanted) if wanted else 1.0

    def confusion(self) -> Counter[tuple[str, str]]:
        return Counter(zip(self.truth, self.predicted, strict=True))


def clause_vectors(
    conn: psycopg.Connection, texts: Sequence[str], vectors: Sequence[np.ndarray | None], model: str | None = None
) -> list[list[np.ndarray | None] | None]:
    """For each text, the embeddings of the parts cogmem.clauses() gives with its vector (None for none): what
    Client.remember sends as clause_embeddings. One embedding call for them all."""
    parts: list[list[str]] = [
        (conn.execute("SELECT cogmem.clauses(%s, %s, %s)", (t, v, model or bench_model())).fetchone() or [[]])[0]
        if v is not None
        else []
        for t, v in zip(texts, vectors, strict=True)
    ]
    flat = iter(embed([p for ps in parts for p in ps], model))
    return [[next(flat) for _ in ps] if ps else None for ps in parts]


def classify(
    conn: psycopg.Connection, texts: Sequence[str], vectors: Sequence[np.ndarray | None]
) -> list[tuple[str, bool]]:
    rows = conn.execute(
        "SELECT c.ring, c.instruction FROM unnest(%s::text[], %s::public.vector[]) WITH ORDINALITY AS t (text, v, n)"
        " CROSS JOIN LATERAL cogmem.classify(t.text, t.v) AS c ORDER BY t.n",
        (list(texts), list(vectors)),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def routing(conn: psycopg.Connection, rows: Sequence[Statement], vectors: Sequence[np.ndarray | None]) -> Routing:
    decided = classify(conn, [s.text for s in rows], vectors)
    return Routing(
        truth=[s.ring for s in rows],
        predicted=[ring for ring, _ in decided],
        instruction_truth=[s.instruction for s in rows],
        instruction_predicted=[instruction for _, instruction in decided],
    )


def declare(conn: psycopg.Connection, model: str | None = None) -> None:
    """The session's vectors are of MODEL (default bench_model()): classify and the judge read them by its
    heads, and tenants made by create_tenant(conn, ...) take its cosine thresholds."""
    conn.execute("SELECT set_config('cogmem.embedding_model', %s, false)", (model or bench_model(),))


def create_tenant(conn: psycopg.Connection, name: str, language: str = "english", model: str | None = None) -> None:
    conn.execute("SELECT cogmem.create_tenant(%s, %s, %s)", (name, language, model or bench_model()))


def excerpt_ring(conn: psycopg.Connection, excerpt_id: int | None) -> str | None:
    """The ring of the sentence remember() took from a long turn (its excerpt_id), or None. A statement of its
    own: beside remember(), the calling statement reads a snapshot taken before the sentence was stored."""
    row = conn.execute("SELECT ring::text FROM cogmem.memories WHERE memory_id = %s", (excerpt_id,)).fetchone()
    return row[0] if row else None


def _tenant(conn: psycopg.Connection, lang: str) -> str:
    name = f"corpus-{uuid.uuid4().hex[:12]}"
    create_tenant(conn, name, LANGUAGES[lang])
    return name


def false_conflicts(
    conn: psycopg.Connection, rows: Sequence[Statement], vectors: Sequence[np.ndarray | None]
) -> tuple[int, int, int]:
    """(turns, held as conflicts, put in a never-cut ring): casual turns remembered in order, per language."""
    held = never_cut = 0
    tenants = {lang: _tenant(conn, lang) for lang in LANGUAGES}
    for statement, vector in zip(rows, vectors, strict=True):
        ring, action = conn.execute(
            "SELECT ring, action FROM cogmem.remember(%s, %s, embedding => %s)",
            (tenants[statement.lang], statement.text, vector),
        ).fetchone()  # type: ignore[misc]
        held += action == "conflict"
        never_cut += ring in NEVER_CUT and statement.ring not in NEVER_CUT
    return len(rows), held, never_cut


@dataclass
class Dissonance:
    truth: list[bool]
    predicted: list[bool]
    kinds: list[str]
    held: list[bool]

    def precision(self) -> float:
        chosen = [t for t, p in zip(self.truth, self.predicted, strict=True) if p]
        return sum(chosen) / len(chosen) if chosen else 1.0

    def recall(self) -> float:
        wanted = [p for t, p in zip(self.truth, self.predicted, strict=True) if t]
        return sum(wanted) / len(wanted) if wanted else 1.0

    @property
    def accuracy(self) -> float:
        return sum(t == p for t, p in zip(self.truth, self.predicted, strict=True)) / len(self.truth)

    def held_share(self, kind: str) -> float:
        """Share of pairs of this kind of new text that was held as a conflict (not stored)."""
        held = [h for k, h in zip(self.kinds, self.held, strict=True) if k == kind]
        return sum(held) / len(held) if held else 0.0


def dissonance(conn: psycopg.Connection, records: Sequence[dict]) -> Dissonance:
    vectors = embed([r["established"] for r in records] + [r["new"] for r in records])
    old_vectors, new_vectors = vectors[: len(records)], vectors[len(records) :]
    predicted, held = [], []
    for record, old_vector, new_vector in zip(records, old_vectors, new_vectors, strict=True):
        tenant = _tenant(conn, record["lang"])
        conn.execute(
            "SELECT cogmem.remember(%s, %s, %s, embedding => %s, contradicts => '{}')",
            (tenant, record["established"], record["established_ring"], old_vector),
        )
        action, conflicts_with = conn.execute(
            "SELECT action, conflicts_with FROM cogmem.remember(%s, %s, embedding => %s)",
            (tenant, record["new"], new_vector),
        ).fetchone()  # type: ignore[misc]
        held.append(action == "conflict")
        predicted.append(action == "conflict" or bool(conflicts_with))
    return Dissonance(
        truth=[r["contradicts"] for r in records],
        predicted=predicted,
        kinds=[r["new_kind"] for r in records],
        held=held,
    )


def duplicates(conn: psycopg.Connection, records: Sequence[dict]) -> list[tuple[str, str]]:
    """(truth, predicted) per pair: duplicate, sibling or distinct."""
    vectors = embed([r["a"] for r in records] + [r["b"] for r in records])
    result = []
    for i, record in enumerate(records):
        tenant = _tenant(conn, record["lang"])
        a = conn.execute(
            "SELECT memory_id FROM cogmem.remember(%s, %s, 'fresh', embedding => %s, contradicts => '{}')",
            (tenant, record["a"], vectors[i]),
        ).fetchone()[0]  # type: ignore[index]
        b, action = conn.execute(
            "SELECT memory_id, action FROM cogmem.remember(%s, %s, 'fresh', embedding => %s, contradicts => '{}')",
            (tenant, record["b"], vectors[len(records) + i]),
        ).fetchone()  # type: ignore[misc]
        # The night that follows: it looks at what arrived in the day before it.
        conn.execute("SELECT * FROM cogmem.consolidate(now(), %s)", (tenant,))
        kept = conn.execute("SELECT count(*) FROM cogmem.memories WHERE tenant = %s", (tenant,)).fetchone()[0]  # type: ignore[index]
        linked = conn.execute("SELECT count(*) FROM cogmem.memory_siblings WHERE tenant = %s", (tenant,)).fetchone()[0]  # type: ignore[index]
        if action == "duplicate" or a == b or kept < 2:
            predicted = "duplicate"
        elif linked:
            predicted = "sibling"
        else:
            predicted = "distinct"
        result.append((record["label"], predicted))
    return result


def ring_table(result: Routing) -> list[str]:
    lines = ["| ring | precision | recall | statements |", "|---|---:|---:|---:|"]
    for ring in RINGS:
        lines.append(
            f"| {ring} | {result.precision(ring):.3f} | {result.recall(ring):.3f} | {result.truth.count(ring)} |"
        )
    lines.append(f"| **all rings (accuracy)** | | {result.accuracy:.3f} | {len(result.truth)} |")
    return lines


def confusion_table(result: Routing) -> list[str]:
    counts = result.confusion()
    lines = ["| labelled \\ routed | " + " | ".join(RINGS) + " |", "|---|" + "---:|" * len(RINGS)]
    for truth in RINGS:
        lines.append(f"| {truth} | " + " | ".join(str(counts[(truth, p)]) for p in RINGS) + " |")
    return lines


# The keyword router of the release before the learned model, the baseline it replaced.
KEYWORD_ROUTER = Path(__file__).with_name("keyword_router.sql")


def keyword_routing(conn: psycopg.Connection, rows: Sequence[Statement]) -> Routing:
    conn.execute(KEYWORD_ROUTER.read_text(encoding="utf-8"))
    predicted = conn.execute(
        "SELECT pg_temp.keyword_route(t.text) FROM unnest(%s::text[]) WITH ORDINALITY AS t (text, n) ORDER BY t.n",
        ([s.text for s in rows],),
    ).fetchall()
    return Routing(truth=[s.ring for s in rows], predicted=[p[0] for p in predicted])


def section(conn: psycopg.Connection) -> list[str]:
    """The "Inbound attention" section of bench/RESULTS.md, from the test split."""
    from bench.corpus import pairs, statements

    rows = statements("test")
    vectors = embed([s.text for s in rows])
    declare(conn)
    with_vector, cues_only, keywords = (
        routing(conn, rows, vectors),
        routing(conn, rows, [None] * len(rows)),
        keyword_routing(conn, rows),
    )
    casual = [(s, v) for s, v in zip(rows, vectors, strict=True) if s.casual and s.ring == "fresh"]
    turns, held, never_cut = false_conflicts(conn, [s for s, _ in casual], [v for _, v in casual])
    diss = dissonance(conn, pairs("dissonance", "test"))
    dups = duplicates(conn, pairs("duplicates", "test"))
    lines = [
        f"The test split of bench/corpus: {len(rows)} statements ({sum(s.lang == 'en' for s in rows)} English, "
        f"{sum(s.lang == 'tr' for s in rows)} Turkish), never seen by bench/train_router.py. Routing by "
        f"`cogmem.classify()`, with the embedding ({bench_model()}: the default path, the client embeds), without it "
        "(a server that cannot embed and a caller that sends none), and by the keyword router this model "
        "replaced.",
        "",
        "| ring | precision | recall | no embedding: precision | recall | keywords: precision | recall | statements |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for ring in RINGS:
        lines.append(
            f"| {ring} | {with_vector.precision(ring):.3f} | {with_vector.recall(ring):.3f} "
            f"| {cues_only.precision(ring):.3f} | {cues_only.recall(ring):.3f} "
            f"| {keywords.precision(ring):.3f} | {keywords.recall(ring):.3f} | {with_vector.truth.count(ring)} |"
        )
    lines += [
        f"| **accuracy** | | {with_vector.accuracy:.3f} | | {cues_only.accuracy:.3f} | | {keywords.accuracy:.3f} "
        f"| {len(rows)} |",
        "",
        "By language, with the embedding (precision / recall):",
        "",
        "| language | dos_and_donts | shocks | accuracy |",
        "|---|---:|---:|---:|",
    ]
    for lang, name in (("en", "English"), ("tr", "Turkish")):
        idx = [i for i, s in enumerate(rows) if s.lang == lang]
        part = Routing([with_vector.truth[i] for i in idx], [with_vector.predicted[i] for i in idx])
        lines.append(
            f"| {name} | {part.precision('dos_and_donts'):.3f} / {part.recall('dos_and_donts'):.3f} "
            f"| {part.precision('shocks'):.3f} / {part.recall('shocks'):.3f} | {part.accuracy:.3f} |"
        )
    dup_counts = Counter(dups)
    labels = ("duplicate", "sibling", "distinct")
    lines += [
        "",
        "Confusion matrix, with the embedding:",
        "",
        *confusion_table(with_vector),
        "",
        f"Instructions (rules, one-off orders, steps: only these can be held as conflicts): precision "
        f"{with_vector.instruction_precision:.3f}, recall {with_vector.instruction_recall:.3f}.",
        "",
        f"**False conflicts.** The {turns} casual statements of the split (chit-chat and the assistant's turns, "
        "labelled fresh), remembered in order into one tenant per language through `remember(tenant, text)`: "
        f"{held} held as conflicts ({held / turns:.2%}), {never_cut} put in a never-cut ring "
        f"({never_cut / turns:.2%}).",
        "",
        f"**Contradictions** ({len(diss.truth)} test pairs, each in a tenant of its own: the established memory "
        "in its ring, then the new text through `remember`): precision "
        f"{diss.precision():.3f}, recall {diss.recall():.3f}, accuracy {diss.accuracy:.3f}. Held as conflicts: "
        f"{diss.held_share('instruction'):.0%} of the new instructions, {diss.held_share('fact'):.0%} of the facts, "
        f"{diss.held_share('casual'):.0%} of the casual lines.",
        "",
        f"**Near-duplicates and siblings** ({len(dups)} test pairs, both remembered, then a night): accuracy "
        f"{sum(t == p for t, p in dups) / len(dups):.3f}.",
        "",
        "| labelled \\ decided | " + " | ".join(labels) + " |",
        "|---|" + "---:|" * len(labels),
        *[f"| {t} | " + " | ".join(str(dup_counts[(t, p)]) for p in labels) + " |" for t in labels],
    ]
    return lines


def replace_section(results: Path, lines: list[str]) -> None:
    """Writes the section into RESULTS.md in place of the previous one (first time: before Memory quality)."""
    text = results.read_text(encoding="utf-8") if results.exists() else ""
    heading = "\n## Inbound attention\n"
    if heading in text:
        head, _, rest = text.partition(heading)
        tail = rest[rest.find("\n## ") :] if "\n## " in rest else ""
    else:
        head, marker, rest = text.partition("\n## Memory quality at equal budget\n")
        tail = marker + rest
    results.write_text(head.rstrip("\n") + "\n" + heading + "\n" + "\n".join(lines) + "\n" + tail, encoding="utf-8")


if __name__ == "__main__":
    # `python bench/inbound.py [--results bench/RESULTS.md]`: this section alone, on a private cluster
    # whose server cannot embed (the client embeds, as the Python client does).
    import argparse
    import sys

    from pgvector.psycopg import register_vector

    from bench.harness import private_database

    parser = argparse.ArgumentParser(description="Inbound attention on the test split of bench/corpus.")
    parser.add_argument("--results", type=Path, help="Markdown file whose '## Inbound attention' section to replace")
    args = parser.parse_args()
    with private_database(5446, tuned=False, server_python=False) as dsn:
        with psycopg.connect(dsn, autocommit=True) as conn:
            register_vector(conn)
            conn.execute("SET cogmem.embed = off")
            lines = section(conn)
        print("\n".join(lines), file=sys.stdout)
        if args.results:
            replace_section(args.results, lines)
