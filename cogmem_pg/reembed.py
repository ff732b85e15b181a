"""Re-embedding a tenant with another model, online (sql/022-reembed.sql; issue 47).

The vectors are made here, on the client, a batch at a time, beside the old ones; recall goes on reading the
old until the swap, which :func:`reembed` asks for when no text is left, in one transaction. It is
resumable: run it again after an interruption and the batches already put are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

import psycopg

from cogmem_pg.embed import Embedder, EmbeddingUnavailable, builtin_embedder, to_literal


@dataclass(frozen=True)
class ReembedProgress:
    """Where a re-embedding stands: vectors made (``done``) of the tenant's texts (``total``)."""

    tenant: str
    from_model: str
    to_model: str
    done: int
    total: int
    finished: bool = False


def target_embedder(model: str, embedder: Embedder | None) -> Embedder:
    """The embedder that makes MODEL's vectors: the one given (its model_id must be MODEL) or the built-in."""
    if embedder is not None:
        given = getattr(embedder, "model_id", None)
        if given != model:
            raise ValueError(f"the embedder given makes vectors of {given!r}, not of {model!r}")
        return embedder
    built_in = builtin_embedder(model)
    if built_in is None:
        raise EmbeddingUnavailable(
            f"no built-in embedder for {model!r}: install cogmem-pg[embed], or pass an embedder whose model_id is it"
        )
    return built_in


def _progress(conn: psycopg.Connection, tenant: str, call: str, *args: object) -> ReembedProgress:
    row = conn.execute(f"SELECT from_model, to_model, done, total FROM cogmem.{call}", (tenant, *args)).fetchone()
    assert row is not None
    return ReembedProgress(tenant, str(row[0]), str(row[1]), int(row[2]), int(row[3]))


def _one_pass(
    conn: psycopg.Connection,
    tenant: str,
    model: str,
    embedder: Embedder,
    batch: int,
    report: Callable[[int], None],
) -> None:
    """Embeds every pending text once, in (kind, id) order: the cursor moves past each batch put."""
    cursor: tuple[str | None, int | None] = (None, None)
    while True:
        rows = conn.execute(
            "SELECT kind, id, content, text_md5 FROM cogmem.reembed_pending(%s, %s, %s, %s)",
            (tenant, batch, cursor[0], cursor[1]),
        ).fetchall()
        if not rows:
            return
        vectors = embedder.embed([str(r[2]) for r in rows])
        conn.execute(
            "SELECT cogmem.reembed_put(%s, %s, %s, %s, %s, %s::public.vector[])",
            (
                tenant,
                model,
                [r[0] for r in rows],
                [r[1] for r in rows],
                [r[3] for r in rows],
                [to_literal(v) for v in vectors],
            ),
        )
        cursor = (str(rows[-1][0]), int(rows[-1][1]))
        report(len(rows))


def reembed(
    connection: Callable[[], AbstractContextManager[psycopg.Connection]],
    tenant: str,
    model: str,
    *,
    embedder: Embedder | None = None,
    batch: int = 128,
    on_progress: Callable[[ReembedProgress], None] | None = None,
) -> ReembedProgress:
    """Re-embeds TENANT with MODEL and swaps its vectors in; returns the last progress (``finished``).
    ``connection()`` gives an autocommit connection of an administrator (each batch commits on its own)."""
    made = target_embedder(model, embedder)
    with connection() as conn:
        state = _progress(conn, tenant, "reembed_begin(%s, %s)", model)

        def report(count: int) -> None:
            nonlocal state
            state = ReembedProgress(tenant, state.from_model, state.to_model, state.done + count, state.total)
            if on_progress is not None:
                on_progress(state)

        while True:
            _one_pass(conn, tenant, model, made, batch, report)
            row = conn.execute("SELECT finished, remaining FROM cogmem.reembed_finish(%s)", (tenant,)).fetchone()
            assert row is not None
            if row[0]:
                state = ReembedProgress(tenant, state.from_model, model, state.total, state.total, finished=True)
                if on_progress is not None:
                    on_progress(state)
                return state
            # Texts written since the last batch: another pass embeds them (they are few).
            state = ReembedProgress(tenant, state.from_model, model, state.done, state.total + int(row[1]))
