"""BIOS presets: rule sets shipped as TOML data files, loaded through cogmem.add_bios_rule()."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from cogmem_pg.paths import presets_dir

_SEVERITIES = {"must", "should", "may"}


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


def available_presets() -> list[str]:
    return sorted(p.stem for p in presets_dir().glob("*.toml"))


def read_preset(name_or_path: str) -> Preset:
    path = Path(name_or_path)
    if not path.is_file():
        path = presets_dir() / f"{name_or_path}.toml"
    if not path.is_file():
        raise ValueError(f"unknown BIOS preset {name_or_path!r}; available: {', '.join(available_presets())}")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    rules = data.get("rules", [])
    for i, rule in enumerate(rules, 1):
        missing = {"category", "rule", "requirement"} - rule.keys()
        if missing:
            raise ValueError(f"{path.name}: rule {i} lacks {', '.join(sorted(missing))}")
        if rule.get("severity", "must") not in _SEVERITIES:
            raise ValueError(f"{path.name}: rule {i} has severity {rule['severity']!r}")
    return Preset(name=data["name"], title=data["title"], version=str(data["version"]), path=path, rules=rules)


def load_preset(conn: psycopg.Connection, name_or_path: str, tenant: str | None = None) -> tuple[Preset, int]:
    """Loads a preset in one transaction; returns it and the number of rules that were new."""
    preset = read_preset(name_or_path)
    added = 0
    with conn.transaction():
        before = conn.execute("SELECT count(*) FROM cogmem.bios_rules").fetchone()
        for rule in preset.rules:
            conn.execute(
                "SELECT cogmem.add_bios_rule(%s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    rule["category"],
                    rule["rule"],
                    rule.get("severity", "must"),
                    preset.name,
                    tenant,
                    rule["requirement"],
                    rule.get("topics"),
                    bool(rule.get("always_on", False)),
                ),
            )
        after = conn.execute("SELECT count(*) FROM cogmem.bios_rules").fetchone()
        assert before is not None and after is not None
        added = after[0] - before[0]
        conn.execute(
            "SELECT cogmem.record_bios_preset(%s, %s, %s, %s, %s)",
            (preset.name, preset.version, preset.title, preset.sha256, added),
        )
    return preset, added
