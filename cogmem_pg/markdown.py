"""A tenant's memory as a folder of Markdown files, in the six memory types of MIRIX, and back.

``export_markdown(conn, tenant, directory)`` writes:

- ``core/identity.md``: the core identity (who the agent is, who the user is, the standing goals);
- ``episodic/``: what happened: incidents (``shocks``) and turns of conversations, a file per memory
  (``<id>.md``), and the episodes of ended sessions (``session-<id>.md``);
- ``semantic/``: what is known: facts, preferences and fresh memories (``long_term``, ``habits``, ``fresh``);
- ``procedural/``: how things are done: procedures and rules (``procedures``, ``dos_and_donts``);
- ``resource/``: documents, a file per version (``<id>.md``) with its (redacted) text;
- ``knowledge_vault/index.md``: the vault's names and descriptions, never a secret;
- ``index.md``, linking them all.

Each file has front-matter (ring, topics, confidence, dates, provenance and scope, statistics) and
``[[wikilinks]]`` between siblings, episodes and the memories they touched: opened in Obsidian, the folder
shows the graph. ``import_markdown`` reads such a folder into a tenant: memories through ``remember_many``
(the same text already stored is not duplicated), then their statistics, sibling links and episodes
through the audited cogmem.restore_* functions (episode texts redacted), with ids mapped to the new ones;
documents through ``add_resource``, version after version; the core identity through
``set_core_identity``. The vault's secrets are never exported, so import leaves the vault as it is and
returns the names a person must put back. Import is an administrator's job. A folder of the layout
before (``memories/``, ``episodes/``) is read too.

Front-matter values are written as JSON, which is also YAML, so the files are read back exactly.
Embeddings are not exported (a file per memory is for people); import embeds again when it can.
"""

from __future__ import annotations

import json
import re
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
RESOURCE_FIELDS = ("resource_id", "title", "kind", "version", "source", "redactions", "created_at", "superseded_at")
# What a memory had earned and when it was made, restored by cogmem.restore_memory_stats.
RESTORED = ("confidence", "reinforced", "recall_count", "rehearsal_count", "outcome_count", "outcome_sum",
            "last_recalled_at", "created_at", "updated_at", "redactions")  # fmt: skip
# The MIRIX types, as folders; memories go to the first three by ring (and a turn of a conversation is
# episodic whatever its ring).
TYPES = ("core", "episodic", "semantic", "procedural", "resource", "knowledge_vault")
MEMORY_FOLDERS = ("episodic", "semantic", "procedural", "memories")  # the last: the layout before
_MEMORY_LINK = re.compile(r"^- \[\[(?:episodic|semantic|procedural|memories)/(\d+)\]\]$", re.M)


def memory_type(ring: str, source: dict[str, Any]) -> str:
    """The MIRIX folder of a memory."""
    if ring == "shocks" or source.get("conversation"):
        return "episodic"
    return "procedural" if ring in ("procedures", "dos_and_donts") else "semantic"


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


def _write(path: Path, meta: dict[str, Any], body: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_front_matter(meta) + "\n".join(body), encoding="utf-8")


def export_markdown(
    conn: psycopg.Connection, tenant: str, directory: Path, person: str | None = None
) -> dict[str, int]:
    """Writes the tenant's memory under ``directory`` (with ``person``, only what is scoped to that person:
    what a subject access request asks for); returns how many of each were written. A memory's and a
    document's scope is in its source, so import puts them back in the same scope."""
    conn.execute("SELECT cogmem.apply_rehearsals(%s)", (tenant,))  # the statistics exported are complete
    # Read once: the memories link to the episodes that touched them, the episodes to those memories.
    episodes = conn.execute(
        f"""SELECT {", ".join(EPISODE_FIELDS)}, person, agent, summary, decisions, open_items, next_steps, memory_ids
            FROM cogmem.episodes WHERE tenant = %s AND (%s::text IS NULL OR person = %s)
            ORDER BY ended_at, session_id""",
        (tenant, person, person),
    ).fetchall()
    folders, index_memories = _export_memories(conn, tenant, directory, person, episodes)
    resources, index_resources = _export_resources(conn, tenant, directory, person)
    counts = {"memories": len(folders), "episodes": len(episodes), "resources": resources}
    index = [f"# {tenant}", "", *index_memories, *_export_episodes(directory, episodes, folders), *index_resources]
    if person is None:
        index += _export_core(conn, tenant, directory) + _export_vault(conn, tenant, directory)
    for kind in TYPES:
        (directory / kind).mkdir(parents=True, exist_ok=True)
    (directory / "index.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return counts


def _export_memories(
    conn: psycopg.Connection, tenant: str, directory: Path, person: str | None, episodes: list[tuple]
) -> tuple[dict[int, str], list[str]]:
    rows = conn.execute(
        f"""SELECT {", ".join(MEMORY_FIELDS)}, content
            FROM cogmem.memories AS m JOIN cogmem.memory_stats AS s USING (tenant, memory_id)
            WHERE m.tenant = %s AND (%s::text IS NULL OR m.person = %s) ORDER BY m.memory_id""",
        (tenant, person, person),
    ).fetchall()
    folders = {row[0]: memory_type(row[1], row[4]) for row in rows}
    siblings: dict[int, dict[int, float]] = {}  # memory -> its siblings and their similarity
    for a, b, similarity in conn.execute(
        "SELECT memory_id, sibling_id, similarity FROM cogmem.memory_siblings WHERE tenant = %s ORDER BY 1, 2",
        (tenant,),
    ):
        if a in folders and b in folders:
            siblings.setdefault(a, {})[b] = similarity
            siblings.setdefault(b, {})[a] = similarity
    touched_by: dict[int, list[str]] = {}
    for episode in episodes:  # session_id first, memory_ids last
        for memory_id in episode[-1]:
            touched_by.setdefault(memory_id, []).append(str(episode[0]))
    index = ["## Memories", ""]
    for row in rows:
        meta = dict(zip(MEMORY_FIELDS, row[:-1], strict=True))
        memory_id, content = meta["memory_id"], row[-1]
        meta["content_chars"] = len(content)  # the text may hold headings of its own
        if memory_id in siblings:  # the links are in the body; how alike they are, here
            meta["sibling_similarity"] = {str(other): sim for other, sim in siblings[memory_id].items()}
        body = [content, ""]
        if memory_id in siblings:
            body += ["## Siblings", *(f"- [[{folders[s]}/{s}]]" for s in siblings[memory_id]), ""]
        if memory_id in touched_by:
            body += ["## Episodes", *(f"- [[episodic/session-{e}]]" for e in touched_by[memory_id]), ""]
        _write(directory / folders[memory_id] / f"{memory_id}.md", meta, body)
        index.append(f"- [[{folders[memory_id]}/{memory_id}]] ({meta['ring']}) {content.splitlines()[0][:80]}")
    return folders, [*index, ""]


def _export_episodes(directory: Path, episodes: list[tuple], folders: dict[int, str]) -> list[str]:
    index = ["## Episodes", ""]
    for row in episodes:
        meta = dict(zip((*EPISODE_FIELDS, "person", "agent"), row[: len(EPISODE_FIELDS) + 2], strict=True))
        summary, decisions, open_items, next_steps, memory_ids = row[len(EPISODE_FIELDS) + 2 :]
        meta["summary_chars"] = len(summary)
        body = [summary, ""]
        for (_, title), items in zip(EPISODE_LISTS, (decisions, open_items, next_steps), strict=True):
            body += [f"## {title}", *(f"- {i}" for i in items), ""]
        touched = [f"- [[{folders[m]}/{m}]]" for m in memory_ids if m in folders]
        body += ["## Memories touched", *touched, ""]
        _write(directory / "episodic" / f"session-{meta['session_id']}.md", meta, body)
        index.append(f"- [[episodic/session-{meta['session_id']}]] {meta['ended_at']} {summary.splitlines()[0][:80]}")
    return [*index, ""]


def _export_resources(
    conn: psycopg.Connection, tenant: str, directory: Path, person: str | None
) -> tuple[int, list[str]]:
    rows = conn.execute(
        f"""SELECT {", ".join(RESOURCE_FIELDS)}, body FROM cogmem.resources
            WHERE tenant = %s AND (%s::text IS NULL OR person = %s) ORDER BY lower(title), version""",
        (tenant, person, person),
    ).fetchall()
    index = ["## Resources", ""]
    for row in rows:
        meta = dict(zip(RESOURCE_FIELDS, row[:-1], strict=True))
        _write(directory / "resource" / f"{meta['resource_id']}.md", meta, [row[-1]])
        state = " (superseded)" if meta["superseded_at"] else ""
        index.append(f"- [[resource/{meta['resource_id']}]] {meta['title']} v{meta['version']}{state}")
    return len(rows), [*index, ""]


def _export_core(conn: psycopg.Connection, tenant: str, directory: Path) -> list[str]:
    row = conn.execute("SELECT version, agent, user_profile, goals FROM cogmem.core_identity(%s)", (tenant,)).fetchone()
    if row is None:
        return []
    meta = {"version": row[0], "agent": row[1], "user_profile": row[2], "goals": row[3]}
    goals = [f"- {g}" for g in row[3] or []]
    _write(
        directory / "core" / "identity.md",
        meta,
        ["## Agent", row[1] or "", "", "## User", row[2] or "", "", "## Goals", *goals, ""],
    )
    return ["## Core", "", "- [[core/identity]]", ""]


def _export_vault(conn: psycopg.Connection, tenant: str, directory: Path) -> list[str]:
    """The vault's names and descriptions, for a role that may list them; never a secret."""
    try:
        with conn.transaction():
            rows = conn.execute("SELECT name, description, subject FROM cogmem.vault_list(%s)", (tenant,)).fetchall()
    except psycopg.errors.InsufficientPrivilege:
        rows = None
    lines = ["# Knowledge vault", "", "Names only: the secrets stay in the database and are never exported.", ""]
    if rows is None:
        lines.append("(This role may not list the vault.)")
    lines += [f"- {name}" + (f": {description}" if description else "") for name, description, _ in rows or []]
    (directory / "knowledge_vault").mkdir(parents=True, exist_ok=True)
    (directory / "knowledge_vault" / "index.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["## Knowledge vault", "", "- [[knowledge_vault/index]]", ""]


def _memory_files(directory: Path) -> list[Path]:
    found = [p for folder in MEMORY_FOLDERS for p in (directory / folder).glob("*.md") if p.stem.isdigit()]
    return sorted(found, key=lambda p: int(p.stem))


def _episode_files(directory: Path) -> list[Path]:
    return sorted([*(directory / "episodic").glob("session-*.md"), *(directory / "episodes").glob("*.md")])


def import_markdown(
    conn: psycopg.Connection,
    tenant: str,
    directory: Path,
    embed: Callable[[Sequence[str]], Sequence[Sequence[float]]] | None = None,
) -> dict[str, Any]:
    """Reads a folder written by export_markdown into ``tenant`` (created if missing) in one transaction;
    returns how many of each were imported, and the vault's names (whose secrets a person must put back)."""
    read = [_read(path) for path in _memory_files(directory)]
    with conn.transaction():
        conn.execute("SELECT cogmem.create_tenant(%s, %s)", (tenant, read[0][0]["language"] if read else "english"))
        new_ids = _import_memories(conn, tenant, read, embed)
        episodes = _import_episodes(conn, tenant, directory, new_ids)
        resources = _import_resources(conn, tenant, directory)
        core = _import_core(conn, tenant, directory)
    vault = directory / "knowledge_vault" / "index.md"
    names = [line[2:].split(": ", 1)[0] for line in vault.read_text(encoding="utf-8").splitlines()
             if line.startswith("- ")] if vault.exists() else []  # fmt: skip
    return {"memories": len(read), "episodes": episodes, "resources": resources, "core": core, "vault_names": names}


def _import_memories(conn: psycopg.Connection, tenant: str, read, embed) -> dict[int, int]:
    import numpy as np

    contents = [body[: meta["content_chars"]] for meta, body in read]
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
    restored = [{key: meta[key] for key in RESTORED} | {"memory_id": new_ids[meta["memory_id"]]} for meta, _ in read]
    conn.execute("SELECT cogmem.restore_memory_stats(%s, %s)", (tenant, json.dumps(restored, default=str)))
    # Both files of a pair link to each other: each pair once.
    links = {
        tuple(sorted((new_ids[meta["memory_id"]], new_ids[int(other)]))): meta["sibling_similarity"][other]
        for meta, body in read
        for other in _MEMORY_LINK.findall(_section(body, "Siblings", meta["content_chars"]))
    }
    pairs = [{"a": a, "b": b, "similarity": similarity} for (a, b), similarity in links.items()]
    conn.execute("SELECT cogmem.restore_siblings(%s, %s)", (tenant, json.dumps(pairs)))
    return new_ids


def _import_episodes(conn: psycopg.Connection, tenant: str, directory: Path, new_ids: dict[int, int]) -> int:
    episodes = _episode_files(directory)
    for path in episodes:
        meta, body = _read(path)
        chars = meta["summary_chars"]
        decisions, open_items, next_steps = (
            [line[2:] for line in _section(body, title, chars).splitlines() if line.startswith("- ")]
            for _, title in EPISODE_LISTS
        )
        touched = [new_ids[int(m)] for m in _MEMORY_LINK.findall(_section(body, "Memories touched", chars))]
        conn.execute(
            """SELECT cogmem.restore_episode(%s, %s, %s, project => %s, phase => %s, decisions => %s,
                      open_items => %s, next_steps => %s, memory_ids => %s, topics => %s,
                      started_at => %s, ended_at => %s, person => %s, agent => %s)""",
            (tenant, meta["session_id"], body[:chars], meta["project"], meta["phase"], decisions, open_items,
             next_steps, touched, meta["topics"], meta["started_at"], meta["ended_at"], meta.get("person"),
             meta.get("agent")),
        )  # fmt: skip
    return len(episodes)


def _import_resources(conn: psycopg.Connection, tenant: str, directory: Path) -> int:
    """Every version in order: each supersedes the one before, as when it was added; a retired one is
    retired again."""
    files = [_read(p) for p in (directory / "resource").glob("*.md")]
    files.sort(key=lambda f: (f[0]["title"].lower(), json.dumps(f[0]["source"], sort_keys=True), f[0]["version"]))
    for n, (meta, body) in enumerate(files):
        source = meta["source"]
        known = conn.execute(
            "SELECT FROM cogmem.resources WHERE tenant = %s AND lower(title) = lower(%s) AND body_sha256 = sha256(%s)"
            " AND person IS NOT DISTINCT FROM %s AND agent IS NOT DISTINCT FROM %s",
            (tenant, meta["title"], body.encode(), source.get("person"), source.get("agent")),
        ).fetchone()
        if known is not None:  # imported before: every version is there already
            continue
        conn.execute(
            "SELECT * FROM cogmem.add_resource(%s, %s, %s, %s, %s, person => %s, agent => %s)",
            (tenant, meta["title"], body, meta["kind"], json.dumps(source), source.get("person"), source.get("agent")),
        )
        last = n + 1 == len(files) or files[n + 1][0]["title"].lower() != meta["title"].lower()
        if last and meta["superseded_at"]:
            conn.execute(
                "SELECT cogmem.retire_resource(%s, %s, %s, %s)",
                (tenant, meta["title"], source.get("person"), source.get("agent")),
            )
    return len(files)


def _import_core(conn: psycopg.Connection, tenant: str, directory: Path) -> int:
    path = directory / "core" / "identity.md"
    if not path.exists():
        return 0
    meta, _ = _read(path)
    current = conn.execute("SELECT agent, user_profile, goals FROM cogmem.core_identity(%s)", (tenant,)).fetchone()
    if current != (meta["agent"], meta["user_profile"], meta["goals"]):
        conn.execute(
            "SELECT cogmem.set_core_identity(%s, %s, %s, %s)",
            (tenant, meta["agent"], meta["user_profile"], meta["goals"]),
        )
    return 1
