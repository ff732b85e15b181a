"""BIOS presets: versioned rule sets shipped as TOML data files (cogmem_pg/presets/).

The file is read and checked here; what a load does is decided in SQL (cogmem.load_bios_preset,
sql/050-bios.sql), so `diff_preset` shows exactly what `load_preset` then does. docs/bios.md describes
the format.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import tomllib
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import psycopg

from cogmem_pg.paths import presets_dir

# The schema of a preset (docs/bios.md). SQL enforces the same limits on what a caller passes as JSON
# (cogmem._bios_limits, sql/050-bios.sql); tests/test_bios.py holds the two equal.
LIMITS = {
    "rules": 1000,  # rules in one preset
    "topics": 32,  # topics of one rule: the tenants' default max_topics
    "name": 64,  # preset names, categories and topics
    "title": 200,
    "version": 40,
    "sha256": 64,
    "requirement": 200,
    "rationale": 500,
    # The text injected, in any language: 300 tokens at four characters a token, the bios layer's
    # default allocation, so that no one rule takes more than the whole layer is given.
    "rule": 1200,
    "translation": 1200,
}
NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
# Dotted numbers ("2.0", "4.0.1") or a date ("2026-03", "2026-03-15"): compared number by number.
VERSION_PATTERN = r"^([0-9]{1,9}(\.[0-9]{1,9}){0,3}|[0-9]{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?)$"
LANGUAGE_PATTERN = r"^[a-z_][a-z0-9_]{0,62}$"  # a text search configuration's name

_SEVERITIES = ("must", "should", "may")
_TOP_KEYS = ("name", "title", "version", "rules")
_REQUIRED = ("requirement", "category", "rule")
_KEYS = ("requirement", "category", "severity", "topics", "always_on", "rationale", "rule", "translations")
# TOML's names for what a value is; bool before int, which it subclasses.
_TOML_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "float"),
    (str, "string"),
    (list, "array"),
    (dict, "table"),
    (datetime.datetime, "datetime"),
    (datetime.date, "date"),
    (datetime.time, "time"),
)
# Steps of a load, in the order they are shown.
CHANGES = ("retire", "add", "reinstate", "keep")


class PresetError(ValueError):
    """A preset that cannot be loaded: the file, the field (e.g. rules[3].topics[1], counted from 1 as
    the file's [[rules]] are) and the reason. Nothing was written."""

    def __init__(self, reason: str, file: str | None = None, field: str | None = None) -> None:
        super().__init__(": ".join(part for part in (file, field, reason) if part))
        self.reason, self.file, self.field = reason, file, field


def _shown(value: Any) -> str:
    """What a value is, as TOML names it, and a short rendering that shows control characters."""
    kind = next((name for t, name in _TOML_TYPES if isinstance(value, t)), type(value).__name__)
    text = json.dumps(value, default=str)
    return f"{kind} {text if len(text) <= 40 else text[:37] + '...'}"


class _Checker:
    """The checks of one file; each failure names the file and the field."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, field: str | None, reason: str) -> NoReturn:
        raise PresetError(reason, self.file, field)

    def text(self, field: str, value: Any, limit: str, *, prose: bool = False) -> str:
        if not isinstance(value, str):
            self.fail(field, f"must be a string, got {_shown(value)}")
        allowed = "\n\t" if prose else ""
        bad = next((c for c in value if unicodedata.category(c) == "Cc" and c not in allowed), None)
        if bad is not None:
            where = "only newline and tab are allowed in prose" if prose else "it must be one line of text"
            self.fail(field, f"holds control character U+{ord(bad):04X}; {where}")
        text = value.strip(" ")
        if not text:
            self.fail(field, "must not be empty")
        if len(text) > LIMITS[limit]:
            self.fail(field, f"has {len(text)} characters, the limit is {LIMITS[limit]}")
        return text

    def name(self, field: str, value: Any) -> str:
        name = self.text(field, value, "name")
        if not re.fullmatch(NAME_PATTERN, name):
            what = "lower-case letters, digits, '.', '_' and '-', starting with a letter or digit"
            self.fail(field, f"{json.dumps(name)} is not a name: {what}")
        return name

    def keys(
        self, field: str | None, table: dict[str, Any], allowed: tuple[str, ...], required: tuple[str, ...]
    ) -> None:
        missing = [k for k in required if k not in table]
        if missing:
            self.fail(field, f"lacks {', '.join(missing)}")
        unknown = sorted(table.keys() - set(allowed))
        if unknown:
            self.fail(field, f"has unknown keys {', '.join(unknown)}; keys: {', '.join(allowed)}")

    def version(self, value: Any) -> str:
        if not isinstance(value, str):
            self.fail("version", f'must be a string such as "2.0" (in quotes), got {_shown(value)}')
        if len(value) > LIMITS["version"] or not re.fullmatch(VERSION_PATTERN, value):
            self.fail(
                "version", f'must be dotted numbers ("2.0", "4.0.1") or a date ("2026-03-15"), got {_shown(value)}'
            )
        return value

    def rule(self, n: int, rule: Any) -> None:
        at = f"rules[{n}]"
        if not isinstance(rule, dict):
            self.fail(at, f"must be a table ([[rules]]), got {_shown(rule)}")
        self.keys(at, rule, _KEYS, _REQUIRED)
        self.text(f"{at}.requirement", rule["requirement"], "requirement")
        self.name(f"{at}.category", rule["category"])
        if rule.get("severity", "must") not in _SEVERITIES:
            self.fail(f"{at}.severity", f"must be one of {', '.join(_SEVERITIES)}, got {_shown(rule['severity'])}")
        self.topics(at, rule.get("topics", []))
        if not isinstance(rule.get("always_on", False), bool):
            self.fail(f"{at}.always_on", f"must be true or false, got {_shown(rule['always_on'])}")
        if "rationale" in rule:
            self.text(f"{at}.rationale", rule["rationale"], "rationale", prose=True)
        self.text(f"{at}.rule", rule["rule"], "rule", prose=True)
        self.translations(at, rule.get("translations", {}))

    def topics(self, at: str, topics: Any) -> None:
        if not isinstance(topics, list):
            self.fail(f"{at}.topics", f"must be an array of topic names, got {_shown(topics)}")
        if len(topics) > LIMITS["topics"]:
            self.fail(f"{at}.topics", f"has {len(topics)} topics, the limit is {LIMITS['topics']}")
        for i, topic in enumerate(topics, 1):
            self.name(f"{at}.topics[{i}]", topic)

    def translations(self, at: str, translations: Any) -> None:
        if not isinstance(translations, dict):
            self.fail(f"{at}.translations", f"must be a table of language = text, got {_shown(translations)}")
        for language, text in translations.items():
            if not re.fullmatch(LANGUAGE_PATTERN, language):
                self.fail(f"{at}.translations", f"{json.dumps(language)} is not a text search configuration name")
            self.text(f"{at}.translations.{language}", text, "translation", prose=True)


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


def check_preset(data: dict[str, Any], file: str) -> dict[str, Any]:
    """The parsed file, checked against the preset schema (docs/bios.md); PresetError names the first
    field that breaks it."""
    check = _Checker(file)
    check.keys(None, data, _TOP_KEYS, _TOP_KEYS)
    check.name("name", data["name"])
    check.text("title", data["title"], "title")
    check.version(data["version"])
    rules = data["rules"]
    if not isinstance(rules, list) or not rules:
        check.fail("rules", f"must be a non-empty array of tables ([[rules]]), got {_shown(rules)}")
    if len(rules) > LIMITS["rules"]:
        check.fail("rules", f"has {len(rules)} rules, the limit is {LIMITS['rules']}")
    for n, rule in enumerate(rules, 1):
        check.rule(n, rule)
    return data


def read_preset(name_or_path: str | Path) -> Preset:
    path = Path(name_or_path)
    if not path.is_file():
        path = presets_dir() / f"{name_or_path}.toml"
    if not path.is_file():
        raise PresetError(f"unknown BIOS preset {str(name_or_path)!r}; available: {', '.join(available_presets())}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PresetError(f"not valid TOML in UTF-8: {exc}", path.name) from exc
    check_preset(data, path.name)
    return Preset(name=data["name"], title=data["title"], version=data["version"], path=path, rules=data["rules"])


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
