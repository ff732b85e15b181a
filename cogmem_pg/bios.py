"""BIOS presets: versioned rule sets shipped as TOML data files (cogmem_pg/presets/).

The file is read here; what a load does is decided in SQL (cogmem.load_bios_preset, sql/050-bios.sql),
so `diff_preset` shows exactly what `load_preset` then does. docs/bios.md describes the format.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from cogmem_pg.paths import presets_dir

_SEVERITIES = {"must", "should", "may"}
_KEYS = {"requirement", "category", "severity", "topics", "always_on", "rationale", "rule", "translations"}
# Steps of a load, in the order they are shown.
CHANGES = ("retire", "add", "reinstate", "keep")


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    version: str
    path: Path
    rules: list[dict[str, Any]]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    @property
    def categories(self) -> list[str]:
        return sorted({r["category"] for r in self.rules})


@dataclass(frozen=True)
class Change:
    change: str  # retire | add | reinstate | keep
    rule_id: int | None
    category: str
    requirement: str | None
    severity: str
    rule: str


def available_presets() -> list[str]:
    return sorted(p.stem for p in presets_dir().glob("*.toml"))


def _check_rule(path: Path, i: int, rule: dict[str, Any]) -> None:
    missing = {"category", "rule", "requirement"} - rule.keys()
    if missing:
        raise ValueError(f"{path.name}: rule {i} lacks {', '.join(sorted(missing))}")
    unknown = rule.keys() - _KEYS
    if unknown:
        raise ValueError(f"{path.name}: rule {i} has unknown keys {', '.join(sorted(unknown))}")
    if rule.get("severity", "must") not in _SEVERITIES:
        raise ValueError(f"{path.name}: rule {i} has severity {rule['severity']!r}")


def read_preset(name_or_path: str | Path) -> Preset:
    path = Path(name_or_path)
    if not path.is_file():
        path = presets_dir() / f"{name_or_path}.toml"
    if not path.is_file():
        raise ValueError(f"unknown BIOS preset {str(name_or_path)!r}; available: {', '.join(available_presets())}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path.name} is not valid TOML: {exc}") from exc
    missing = {"name", "title", "version"} - data.keys()
    if missing:
        raise ValueError(f"{path.name} lacks {', '.join(sorted(missing))}")
    rules = data.get("rules", [])
    for i, rule in enumerate(rules, 1):
        _check_rule(path, i, rule)
    return Preset(name=data["name"], title=data["title"], version=str(data["version"]), path=path, rules=rules)


def _changes(rows: list[tuple]) -> list[Change]:
    return [Change(*row) for row in rows]


def diff_preset(
    conn: psycopg.Connection, name_or_path: str | Path, tenant: str | None = None
) -> tuple[Preset, list[Change]]:
    """What loading the preset would change, changing nothing."""
    preset = read_preset(name_or_path)
    rows = conn.execute(
        "SELECT * FROM cogmem.bios_preset_diff(%s, %s, %s)", (preset.name, json.dumps(preset.rules), tenant)
    ).fetchall()
    return preset, _changes(rows)


def load_preset(
    conn: psycopg.Connection, name_or_path: str | Path, tenant: str | None = None, *, downgrade: bool = False
) -> tuple[Preset, list[Change]]:
    """Loads a version of a preset in one transaction: adds, reinstates and retires rules as its diff says."""
    preset = read_preset(name_or_path)
    with conn.transaction():
        rows = conn.execute(
            "SELECT * FROM cogmem.load_bios_preset(%s, %s, %s, %s, %s, %s, %s)",
            (preset.name, preset.version, preset.title, preset.sha256, json.dumps(preset.rules), tenant, downgrade),
        ).fetchall()
    return preset, _changes(rows)


def counts(changes: list[Change]) -> dict[str, int]:
    """How many rules each kind of change touched, every kind present."""
    tally = Counter(c.change for c in changes)
    return {kind: tally.get(kind, 0) for kind in CHANGES}


def subscribe(conn: psycopg.Connection, preset: str, tenant: str | None = None) -> bool:
    """The tenant (None: every tenant) takes the preset; returns whether that is new."""
    return bool(conn.execute("SELECT cogmem.subscribe_bios(%s, %s)", (preset, tenant)).fetchone()[0])  # type: ignore[index]


def unsubscribe(conn: psycopg.Connection, preset: str, tenant: str | None = None) -> bool:
    return bool(conn.execute("SELECT cogmem.unsubscribe_bios(%s, %s)", (preset, tenant)).fetchone()[0])  # type: ignore[index]
