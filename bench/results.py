"""bench/RESULTS.md, written a section at a time: each benchmark replaces its own '## TITLE' section."""

from __future__ import annotations

from pathlib import Path


def replace_section(results: Path, lines: list[str], title: str) -> None:
    """Writes the section '## TITLE' (then LINES) in place of the previous one (first time: at the end)."""
    text = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n"
    heading = f"\n## {title}\n"
    head, found, rest = text.partition(heading)
    tail = rest[rest.find("\n## ") :] if found and "\n## " in rest else ""
    results.write_text(head.rstrip("\n") + "\n" + heading + "\n" + "\n".join(lines) + "\n" + tail, encoding="utf-8")
