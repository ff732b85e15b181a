"""A tenant's memories and episodes as a folder of Markdown files, and back.

``export_markdown(conn, tenant, directory)`` writes one file per memory (``memories/<id>.md``) and per
episode (``episodes/<session id>.md``), each with front-matter (ring, topics, confidence, dates,
provenance, statistics) and ``[[wikilinks]]`` between siblings, episodes and the memories they touched,
plus ``index.md``. Opened in Obsidian, the folder shows the graph. ``import_markdown`` reads such a
folder into a tenant: memories through ``remember_many`` (the same text already stored is not duplicated),
then their statistics, sibling links and episodes through the audited cogmem.restore_* functions (episode
texts redacted), with ids mapped to the new ones; import is an administrator's job.

Front-matter values are written as JSON, which is also YAML, so the files are read back exactly.
Embeddings are not exported (a file per memory is for people); import embeds again when it can.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psycopg

MEMORY_FIELDS = (
    "memory_id",
    "ring",
    "topics",
    "language",
    "source",
    "redactions",
    "created_at",
    "updated_at",
    "confidence",
    "reinforced",
    "recall_count",
    "rehearsal_count",
    "outcome_count",
    "outcome_sum",
    "last_recalled_at",
)
EPISODE_FIELDS = ("session_id", "project", "phase", "topics", "started_at", "ended_at")
EPISODE_LISTS = (("decisions", "Decisions"), ("open_items", "Open items"), ("next_steps", "Next steps"))
# What a memory had earned and when it was made, restored by cogmem.restore_memory_stats.
RESTORED = ("confidence", "reinforced", "recall_count", "rehearsal_count", "outcome_count", "outcome_sum",
            "last_recalled_at", "created_at", "updated_at", "redactions")  # fmt: skip


def _front_matter(values: dict[str, Any]) -> str:
    lines = [f"{key}: {json.dumps(value, ensure_ascii=False, default=str)}" for key, value in values.items()]
    return "---\n" + "\n".join(lines) + "\n---\n"


def _read(path: Path) -> tuple[dict[str, Any], str]:
    """Front-matter and body of a file this module wrote."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise ValueError(f"{path}: no front-matter")
    head, _, body = text[4:].partition("\n---\n")
    meta = {}
    for line in head.splitlines():
        key, _, value = line.partition(": ")
        meta[key] = json.loads(value)
    return meta, body


def _section(body: str, title: str, after: int) -> str:
    """The text of a '## title' section that starts after the first ``after`` characters (the memory text
    or summary, which may hold headings of its own), up to the next heading."""
    _, found, rest = body[after:].partition(f"\n## {title}\n")
    return rest.split("\n## ", 1)[0].strip("\n") if found else ""


def export_markdown(
    conn: psycopg.Connection, tenant: str, directory: Path, person: str | None = None
) -> tuple[int, int]:
    """Writes the tenant's memories and episodes under ``directory`` (with ``person``, only those scoped to
    that person: what a subject access request asks for); returns (memories, episodes). A memory's scope is
    in its source, so import puts it back in the same scope."""
    conn.execute("SELECT cogmem.apply_rehearsals(%s)", (tenant,))  # the statistics exported are complete
    memories = conn.execute(
        f"""SELECT {", ".join(MEMORY_FIELDS)}, content
            FROM cogmem.memories AS m JOIN cogmem.memory_stats AS s USING (tenant, memory_id)
            WHERE m.tenant = %s AND (%s::text IS NULL OR m.person = %s) ORDER BY m.memory_id""",
        (tenant, person, person),
    ).fetchall()
    siblings: dict[int, dict[int, float]] = {}  # memory -> its siblings and their similarity
    exported = {row[0] for row in memories}
    for a, b, similarity in conn.execute(
        "SELECT memory_id, sibling_id, similarity FROM cogmem.memory_siblings WHERE tenant = %s ORDER BY 1, 2",
        (tenant,),
    ):
        if a not in exported or b not in exported:
            continue
        siblings.setdefault(a, {})[b] = similarity
        siblings.setdefault(b, {})[a] = similarity
    episodes = conn.execute(
        f"""SELECT {", ".join(EPISODE_FIELDS)}, summary, decisions, open_items, next_steps, memory_ids
            FROM cogmem.episodes WHERE tenant = %s AND (%s::text IS NULL OR person = %s)
            ORDER BY ended_at, session_id""",
        (tenant, person, person),
    ).fetchall()
    touched_by: dict[int, list[str]] = {}
    for episode in episodes:
        for memory_id in episode[-1]:
            touched_by.setdefault(memory_id, []).append(str(episode[0]))

    (directory / "memories").mkdir(parents=True, exist_ok=True)
    (directory / "episodes").mkdir(parents=True, exist_ok=True)
    index = [f"# {tenant}", ""]
    for row in memories:
        meta = dict(zip(MEMORY_FIELDS, row[:-1], strict=True))
        memory_id, content = meta["memory_id"], row[-1]
        meta["content_chars"] = len(content)  # the text may hold headings of its own
        if memory_id in siblings:  # the links are in the body; how alike they are, here
            meta["sibling_similarity"] = {str(other): sim for other, sim in siblings[memory_id].items()}
        body = [content, ""]
        if memory_id in siblings:
            body += ["## Siblings", *(f"- [[memories/{s}]]" for s in siblings[memory_id]), ""]
        if memory_id in touched_by:
            body += ["## Episodes", *(f"- [[episodes/{e}]]" for e in touched_by[memory_id]), ""]
        (directory / "memories" / f"{memory_id}.md").write_text(_front_matter(meta) + "\n".join(body), encoding="utf-8")
        index.append(f"- [[memories/{memory_id}]] ({meta['ring']}) {content.splitlines()[0][:80]}")
    index.append("")
    for row in episodes:
        meta = dict(zip(EPISODE_FIELDS, row[: len(EPISODE_FIELDS)], strict=True))
        summary, decisions, open_items, next_steps, memory_ids = row[len(EPISODE_FIELDS) :]
        meta["summary_chars"] = len(summary)
        body = [summary, ""]
        for (_, title), items in zip(EPISODE_LISTS, (decisions, open_items, next_steps), strict=True):
            body += [f"## {title}", *(f"- {i}" for i in items), ""]
        body += ["## Memories touched", *(f"- [[memories/{m}]]" for m in memory_ids), ""]
        (directory / "episodes" / f"{meta['session_id']}.md").write_text(
            _front_matter(meta) + "\n".join(body), encoding="utf-8"
        )
        index.append(f"- [[episodes/{meta['session_id']}]] {meta['ended_at']} {summary.splitlines()[0][:80]}")
    (directory / "index.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return len(memories), len(episodes)


def _links(section: str, kind: str) -> list[str]:
    return [line[len(f"- [[{kind}/") : -2] for line in section.splitlines() if line.startswith(f"- [[{kind}/")]


def import_markdown(
    conn: psycopg.Connection,
    tenant: str,
    directory: Path,
    embed: Callable[[Sequence[str]], Sequence[Sequence[float]]] | None = None,
) -> tuple[int, int]:
    """Reads a folder written by export_markdown into ``tenant`` (created if missing) in one transaction;
    returns (memories, episodes) imported."""
    import numpy as np

    files = sorted((directory / "memories").glob("*.md"), key=lambda p: int(p.stem))
    read = [_read(path) for path in files]
    contents = [body[: meta["content_chars"]] for meta, body in read]
    with conn.transaction():
        conn.execute("SELECT cogmem.create_tenant(%s, %s)", (tenant, read[0][0]["language"] if read else "english"))
        new_ids: dict[int, int] = {}
        for start in range(0, len(read), 1000):
            batch = read[start : start + 1000]
            items = [
                {"content": text, "ring": meta["ring"], "topics": meta["topics"], "source": meta["source"]}
                for (meta, _), text in zip(batch, contents[start : start + 1000], strict=True)
            ]
            vectors = None
            if embed is not None and items:
                vectors = [np.asarray(v, dtype=np.float32) for v in embed([i["content"] for i in items])]
            rows = conn.execute(
                # Checked when they were first stored; restored as they were, look-alikes included.
                "SELECT item, memory_id FROM cogmem.remember_many(%s, %s, %b, skip => '{near_duplicates,conflicts}')",
                (tenant, json.dumps(items), vectors),
            ).fetchall()
            for item, memory_id in rows:
                new_ids[batch[item - 1][0]["memory_id"]] = memory_id
        # What the memories had earned, and when they were made: restored as they were, audited.
        restored = [
            {key: meta[key] for key in RESTORED} | {"memory_id": new_ids[meta["memory_id"]]} for meta, _ in read
        ]
        conn.execute("SELECT cogmem.restore_memory_stats(%s, %s)", (tenant, json.dumps(restored, default=str)))
        # Both files of a pair link to each other: each pair once.
        links = {
            tuple(sorted((new_ids[meta["memory_id"]], new_ids[int(other)]))): meta["sibling_similarity"][other]
            for meta, body in read
            for other in _links(_section(body, "Siblings", meta["content_chars"]), "memories")
        }
        pairs = [{"a": a, "b": b, "similarity": similarity} for (a, b), similarity in links.items()]
        conn.execute("SELECT cogmem.restore_siblings(%s, %s)", (tenant, json.dumps(pairs)))
        episodes = sorted((directory / "episodes").glob("*.md"))
        for path in episodes:
            meta, body = _read(path)
            chars = meta["summary_chars"]
            decisions, open_items, next_steps = (
                [line[2:] for line in _section(body, title, chars).splitlines() if line.startswith("- ")]
                for _, title in EPISODE_LISTS
            )
            touched = [new_ids[int(m)] for m in _links(_section(body, "Memories touched", chars), "memories")]
            conn.execute(
                """SELECT cogmem.restore_episode(%s, %s, %s, project => %s, phase => %s, decisions => %s,
                          open_items => %s, next_steps => %s, memory_ids => %s, topics => %s,
                          started_at => %s, ended_at => %s)""",
                (tenant, meta["session_id"], body[:chars], meta["project"], meta["phase"], decisions, open_items,
                 next_steps, touched, meta["topics"], meta["started_at"], meta["ended_at"]),
            )  # fmt: skip
    return len(read), len(episodes)
