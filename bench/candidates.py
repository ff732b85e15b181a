"""No stated rule is lost: candidate rules and incidents, measured on the test split of bench/corpus.

Every statement of the split is remembered through `remember(tenant, text)` in a tenant of its own (so
that no statement is a duplicate or a conflict of another), with its embedding (MiniLM's, or E5's with
COGMEM_BENCH_EMBEDDER=e5: the default path, the client embeds) and without (plain SQL on a server that
cannot embed). For each labelled rule and
incident: does it end in its ring (or, for a long turn, the sentence taken from it), as a candidate, or
neither (lost)? For casual talk: how much became a candidate (a question to a person) or entered a
never-cut ring? After one round of confirmation, a simulated person confirms the true rules among the
candidates and dismisses the rest. The curve: the share of casual turns asked about against the share of
rules kept, for other candidate thresholds (from the same probabilities).

    PYTHONPATH=. .venv/bin/python bench/candidates.py [--results bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.corpus import NEVER_CUT, Statement, statements
from bench.harness import given_or_private
from bench.inbound import LANGUAGES, bench_model, clause_vectors, create_tenant, declare, embed, excerpt_ring
from bench.results import replace_section

SECTION = "Candidate rules and incidents"


@dataclass(frozen=True)
class Outcome:
    statement: Statement
    ring: str  # where it (or the sentence taken from it) went
    candidate: str | None
    probabilities: dict[str, float]

    @property
    def truth(self) -> str:
        return self.statement.ring

    @property
    def kept(self) -> bool:
        return self.ring == self.truth or self.candidate == self.truth

    @property
    def casual(self) -> bool:
        return self.statement.casual and self.truth == "fresh"


def remember_each(
    conn: psycopg.Connection,
    rows: Sequence[Statement],
    vectors: Sequence[np.ndarray | None],
    model: str | None = None,
) -> list[Outcome]:
    """Each statement remembered in a tenant of its own (of MODEL's vectors, default bench_model()); where it
    went. As the client does, the parts the router reads alone (cogmem.clauses) are embedded and sent too."""
    out = []
    for s, v, parts in zip(rows, vectors, clause_vectors(conn, [s.text for s in rows], vectors, model), strict=True):
        tenant = f"c-{uuid.uuid4().hex[:12]}"
        create_tenant(conn, tenant, LANGUAGES[s.lang], model)
        ring, candidate, excerpt_id = conn.execute(
            "SELECT r.ring, r.candidate, r.excerpt_id"
            " FROM cogmem.remember(%s, %s, embedding => %s, clause_embeddings => %s) AS r",
            (tenant, s.text, v, parts),
        ).fetchone()  # type: ignore[misc]
        excerpt = excerpt_ring(conn, excerpt_id)  # every long turn counted as missed until 12-06 without it
        probabilities = conn.execute(
            "SELECT probabilities FROM cogmem.classify(%s, %s, %s)", (s.text, v, model or bench_model())
        ).fetchone()[0]  # type: ignore[index]
        out.append(Outcome(s, excerpt if excerpt in NEVER_CUT else ring, candidate, probabilities))
    return out


@dataclass(frozen=True)
class Figures:
    precision: dict[str, float]
    in_ring: dict[str, float]
    kept: dict[str, float]
    casual_candidates: dict[str, float]  # per language
    casual_never_cut: dict[str, float]
    confirmed: dict[str, float]


def figures(outcomes: Sequence[Outcome]) -> Figures:
    precision, in_ring, kept, confirmed = {}, {}, {}, {}
    for ring in NEVER_CUT:
        chosen = [o for o in outcomes if o.ring == ring]
        precision[ring] = sum(o.truth == ring for o in chosen) / max(len(chosen), 1)
        labelled = [o for o in outcomes if o.truth == ring]
        in_ring[ring] = sum(o.ring == ring for o in labelled) / max(len(labelled), 1)
        kept[ring] = sum(o.kept for o in labelled) / max(len(labelled), 1)
        # One round: a person confirms each true candidate into its ring (and dismisses the others).
        confirmed[ring] = kept[ring]
    casual_candidates, casual_never_cut = {}, {}
    for lang in LANGUAGES:
        casual = [o for o in outcomes if o.casual and o.statement.lang == lang]
        casual_candidates[lang] = sum(o.candidate is not None for o in casual) / max(len(casual), 1)
        casual_never_cut[lang] = sum(o.ring in NEVER_CUT for o in casual) / max(len(casual), 1)
    return Figures(precision, in_ring, kept, casual_candidates, casual_never_cut, confirmed)


def curve(outcomes: Sequence[Outcome], lang: str) -> list[tuple[float, float, float]]:
    """(threshold, casual asked about, rules and incidents kept) for candidate thresholds from the same
    probabilities: a statement not routed to its never-cut ring is a candidate when p >= threshold."""
    points = []
    for t in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        casual = [o for o in outcomes if o.casual and o.statement.lang == lang]
        asked = sum(
            o.ring not in NEVER_CUT and max(o.probabilities.get(r, 0) for r in NEVER_CUT) >= t for o in casual
        ) / max(len(casual), 1)
        labelled = [o for o in outcomes if o.truth in NEVER_CUT and o.statement.lang == lang]
        held = sum(o.ring == o.truth or o.probabilities.get(o.truth, 0) >= t for o in labelled) / max(len(labelled), 1)
        points.append((t, asked, held))
    return points


def section(with_embedding: Figures, without: Figures, outcomes: Sequence[Outcome], n: int) -> list[str]:
    lines = [
        f"`bench/candidates.py`: the {n} statements of the test split of bench/corpus, each remembered through "
        "`remember(tenant, text)` in a tenant of its own, with the embedding of "
        f"{bench_model()} (the default path) and "
        "without (plain SQL on a server that cannot embed). A long turn counts where its sentence went.",
        "",
        "| | with embedding | without |",
        "|---|---:|---:|",
    ]
    for ring in NEVER_CUT:
        lines += [
            f"| `{ring}` precision | {with_embedding.precision[ring]:.3f} | {without.precision[ring]:.3f} |",
            f"| `{ring}` in its ring | {with_embedding.in_ring[ring]:.3f} | {without.in_ring[ring]:.3f} |",
            f"| `{ring}` in its ring or a candidate (not lost) | {with_embedding.kept[ring]:.3f} | "
            f"{without.kept[ring]:.3f} |",
            f"| `{ring}` in its ring after one round of confirmation | {with_embedding.confirmed[ring]:.3f} | "
            f"{without.confirmed[ring]:.3f} |",
        ]
    for lang in LANGUAGES:
        lines.append(
            f"| casual turns ({lang}) asked about (candidates) | {with_embedding.casual_candidates[lang]:.3f} | "
            f"{without.casual_candidates[lang]:.3f} |"
        )
        lines.append(
            f"| casual turns ({lang}) in a never-cut ring | {with_embedding.casual_never_cut[lang]:.3f} | "
            f"{without.casual_never_cut[lang]:.3f} |"
        )
    lines += [
        "",
        "Candidates against casual turns asked about, with the embedding, for other candidate thresholds:",
        "",
    ]
    lines += ["| threshold | " + " | ".join(f"{lang}: casual asked | {lang}: rules kept" for lang in LANGUAGES) + " |"]
    lines += ["|---:|" + "---:|---:|" * len(LANGUAGES)]
    by_lang = {lang: curve(outcomes, lang) for lang in LANGUAGES}
    for i, (t, _, _) in enumerate(by_lang["en"]):
        cells = " | ".join(f"{by_lang[lang][i][1]:.3f} | {by_lang[lang][i][2]:.3f}" for lang in LANGUAGES)
        lines.append(f"| {t:.1f} | {cells} |")
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn")
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    rows = statements("test")
    vectors = embed([s.text for s in rows])
    with given_or_private(args.dsn, 5463, database="postgres") as dsn:
        with psycopg.connect(dsn, autocommit=True) as conn:
            register_vector(conn)
            conn.execute("SET cogmem.embed = 'off'")  # the server does not embed: the caller's vector or none
            declare(conn)
            with_embedding = remember_each(conn, rows, vectors)
            without = remember_each(conn, rows, [None] * len(rows))
        lines = section(figures(with_embedding), figures(without), with_embedding, len(rows))
        print("\n".join(lines))
        if args.results:
            replace_section(args.results, lines, SECTION)


if __name__ == "__main__":
    main()
