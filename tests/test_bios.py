"""sql/050-bios.sql and cogmem_pg.bios: immutable, given rules and the presets that carry them."""

import json
import re
import tomllib
from collections import Counter
from pathlib import Path

import psycopg
import pytest
import tomli_w

from cogmem_pg.bios import (
    LANGUAGE_PATTERN,
    LIMITS,
    NAME_PATTERN,
    VERSION_PATTERN,
    PresetError,
    available_presets,
    counts,
    diff_preset,
    load_preset,
    read_preset,
    subscribe,
    unsubscribe,
)
from tests.conftest import one


def test_add_bios_rule_twice_adds_nothing(db):
    first = one(db, "SELECT cogmem.add_bios_rule('Server', 'Run a config test before restart.', 'must', 'ops')")
    again = one(db, "SELECT cogmem.add_bios_rule('server', '  Run a config test before restart.  ', preset => 'ops')")
    assert first == again
    assert one(db, "SELECT count(*) FROM cogmem.bios_rules") == 1
    row = db.execute("SELECT category, severity::text, preset, tenant FROM cogmem.bios_rules").fetchone()
    assert row == ("server", "must", "ops", None)


def test_tenant_rule_is_separate_from_the_global_one(db, tenant):
    global_id = one(db, "SELECT cogmem.add_bios_rule('server', 'Run a config test before restart.')")
    tenant_id = one(
        db, "SELECT cogmem.add_bios_rule('server', 'Run a config test before restart.', tenant => %s)", (tenant,)
    )
    assert global_id != tenant_id


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE cogmem.bios_rules SET rule = 'Restart whenever you like.'",
        "DELETE FROM cogmem.bios_rules",
        "TRUNCATE cogmem.bios_rules CASCADE",
    ],
)
def test_bios_rules_are_immutable(db, statement):
    db.execute("SELECT cogmem.add_bios_rule('server', 'Run a config test before restart.')")
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
        db.execute(statement)
    verb = statement.split()[0]
    assert err.value.diag.message_primary == (
        f"{verb} on cogmem.bios_rules is not allowed: bios_rules rows are immutable"
    )
    assert err.value.diag.message_hint == (
        "Retire a rule with cogmem.retire_bios_rule(rule_id, reason) and add a new one."
    )
    assert one(db, "SELECT rule FROM cogmem.bios_rules") == "Run a config test before restart."


def test_retire_is_an_append_only_event(db):
    rule_id = one(db, "SELECT cogmem.add_bios_rule('server', 'Run a config test before restart.')")
    assert one(db, "SELECT count(*) FROM cogmem.active_bios_rules") == 1
    db.execute("SELECT cogmem.retire_bios_rule(%s, 'superseded by OPS-01')", (rule_id,))
    db.execute("SELECT cogmem.retire_bios_rule(%s, 'again')", (rule_id,))
    assert one(db, "SELECT count(*) FROM cogmem.active_bios_rules") == 0
    assert one(db, "SELECT count(*) FROM cogmem.bios_rules") == 1
    assert one(db, "SELECT count(*) FROM cogmem.bios_rule_events") == 1
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
        db.execute("DELETE FROM cogmem.bios_rule_events")


@pytest.mark.parametrize(
    ("args", "sqlstate", "message"),
    [
        (("", "rule", "must"), "22023", "BIOS rule category must not be NULL or empty"),
        (("server", None, "must"), "22023", "BIOS rule text must not be NULL or empty"),
        (("server", "rule", "optional"), "22023", 'unknown BIOS severity "optional"'),
    ],
)
def test_add_bios_rule_errors(db, args, sqlstate, message):
    with pytest.raises(psycopg.Error) as err:
        db.execute("SELECT cogmem.add_bios_rule(%s, %s, %s)", args)
    assert (err.value.sqlstate, err.value.diag.message_primary) == (sqlstate, message)
    assert err.value.diag.message_hint


def test_retire_errors(db):
    with pytest.raises(psycopg.errors.NoDataFound) as err:
        db.execute("SELECT cogmem.retire_bios_rule(42, 'x')")
    assert err.value.diag.message_primary == "unknown BIOS rule 42"
    rule_id = one(db, "SELECT cogmem.add_bios_rule('server', 'Run a config test before restart.')")
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        db.execute("SELECT cogmem.retire_bios_rule(%s, '')", (rule_id,))


def test_presets_ship_with_requirements():
    assert {"operations", "pci-dss-4.0", "iso-27001-2022", "kvkk", "gdpr"} <= set(available_presets())
    pci = read_preset("pci-dss-4.0")
    assert pci.title == "PCI DSS v4.0.1"
    requirements = {r["requirement"] for r in pci.rules}
    assert {"PCI DSS 3.3.1", "PCI DSS 3.4.1", "PCI DSS 3.5.1", "PCI DSS 8.4.2"} <= requirements
    prefixes = {
        "operations": "OPS-",
        "pci-dss-4.0": "PCI DSS ",
        "iso-27001-2022": "ISO/IEC 27001:2022 A.",
        "kvkk": "KVKK ",
        "gdpr": "GDPR ",
    }
    for name, prefix in prefixes.items():
        assert all(r["requirement"].startswith(prefix) for r in read_preset(name).rules), name


def test_the_library_is_complete_in_both_languages(db):
    """108+ rules in 14+ categories; each with a requirement, a severity, a rationale, its topics (the
    category first) and Turkish text; every category is a topic of the default taxonomy."""
    presets = [read_preset(n) for n in available_presets()]
    rules = [r for p in presets for r in p.rules]
    categories = {r["category"] for r in rules}
    assert len(rules) >= 108 and len(categories) >= 14
    for rule in rules:
        assert rule["severity"] in ("must", "should") and rule["rationale"].strip(), rule["requirement"]
        assert rule["topics"][0] == rule["category"], rule["requirement"]
        assert rule["translations"]["turkish"].strip() != rule["rule"].strip(), rule["requirement"]
    assert len({r["rule"] for r in rules}) == len(rules)  # no rule twice
    topics = {r[0] for r in db.execute("SELECT topic FROM cogmem.default_topics WHERE keywords <> '{}'")}
    assert categories <= topics


def test_every_preset_loads_on_a_fresh_install(db):
    for name in available_presets():
        preset, changes = load_preset(db, name)
        assert counts(changes) == {"retire": 0, "add": len(preset.rules), "reinstate": 0, "keep": 0}
        _, again = load_preset(db, name)  # the same file again changes nothing and logs no load
        assert counts(again)["keep"] == len(preset.rules) and len(again) == len(preset.rules)
    rows = db.execute("SELECT preset, version, loads, rules_active FROM cogmem.bios_presets ORDER BY 1").fetchall()
    assert rows == [(n, read_preset(n).version, 1, len(read_preset(n).rules)) for n in available_presets()]
    assert one(db, "SELECT count(*) FROM cogmem.active_bios_rules") == sum(
        len(read_preset(n).rules) for n in available_presets()
    )


def test_an_administrator_loads_a_preset_through_the_api(db, login):
    admin = login("cogmem_admin")  # no table write of its own: load_bios_preset is the way in
    admin.autocommit = False
    preset, changes = load_preset(admin, "operations")
    admin.commit()
    assert counts(changes)["add"] == len(preset.rules)
    assert one(db, "SELECT rules_active FROM cogmem.bios_presets WHERE preset = 'operations'") == len(preset.rules)
    actors = db.execute(
        "SELECT DISTINCT actor FROM cogmem.audit_log WHERE event IN ('bios_rules_added', 'bios_preset_loads_added')"
    ).fetchall()
    assert actors == [(one(admin, "SELECT current_user"),)]
    app = login("cogmem_app")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        load_preset(app, "operations")


def test_unknown_preset():
    with pytest.raises(ValueError, match=re.escape("unknown BIOS preset 'sox'; available: gdpr, iso-27001-2022, kvkk")):
        read_preset("sox")


def _edited(tmp_path, version: str, drop: int = 0, change: int = 0, add: int = 0):
    """A copy of the operations preset as a new version: the first `drop` rules gone, the next `change`
    reworded, and `add` new ones."""
    data = tomllib.loads(read_preset("operations").path.read_text(encoding="utf-8"))
    rules = data["rules"][drop:]
    for rule in rules[:change]:
        rule["rule"] += " Say so in the change log."
    rules += [
        {
            "requirement": f"OPS-9{i}",
            "category": "server",
            "severity": "should",
            "topics": ["server"],
            "rationale": "A test rule.",
            "rule": f"Label every server with its owner ({i}).",
            "translations": {"turkish": f"Her sunucuyu sahibiyle etiketleyin ({i})."},
        }
        for i in range(add)
    ]
    path = tmp_path / f"operations-{version}.toml"
    path.write_text(tomli_w.dumps({**data, "version": version, "rules": rules}), encoding="utf-8")
    return path


def test_an_upgrade_retires_and_adds_exactly_what_the_diff_said(db, tmp_path, tenant):
    preset, _ = load_preset(db, "operations")
    db.execute("SELECT cogmem.subscribe_bios('operations', %s)", (tenant,))
    newer = _edited(tmp_path, "2.1", drop=2, change=1, add=2)
    _, diff = diff_preset(db, newer)
    assert counts(diff) == {"retire": 3, "add": 3, "reinstate": 0, "keep": len(preset.rules) - 3}
    assert one(db, "SELECT count(*) FROM cogmem.bios_preset_loads") == 1  # the diff changed nothing
    _, done = load_preset(db, newer)
    assert sorted((c.change, c.requirement, c.rule) for c in done) == sorted(
        (c.change, c.requirement, c.rule) for c in diff
    )
    in_force = {r[0] for r in db.execute("SELECT rule FROM cogmem.active_bios_rules WHERE preset = 'operations'")}
    assert in_force == {r["rule"] for r in read_preset(newer).rules}
    assert one(db, "SELECT count(*) FROM cogmem.bios_rules") == len(preset.rules) + 3  # append-only
    load = db.execute(
        "SELECT version, added, retired, reinstated, kept FROM cogmem.bios_presets p "
        "JOIN cogmem.bios_preset_loads l USING (preset, version) WHERE p.preset = 'operations'"
    ).fetchone()
    assert load == ("2.1", 3, 3, 0, len(preset.rules) - 3)
    reasons = db.execute("SELECT DISTINCT reason FROM cogmem.bios_rule_events WHERE load_id IS NOT NULL").fetchall()
    assert reasons == [("not in operations 2.1",)]
    audited = db.execute(
        "SELECT event, count(*) FROM cogmem.audit_log WHERE level = 'governance' AND event LIKE 'bios%%' "
        "AND detail ->> 'table' <> 'bios_subscriptions' GROUP BY event ORDER BY event"
    ).fetchall()
    assert audited == [
        ("bios_preset_loads_added", 2),
        ("bios_rule_events_added", 3),
        ("bios_rules_added", len(preset.rules) + 3),
    ]

    # Going back needs saying so; then the retired rules come back and the new ones go.
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        load_preset(db, "operations")
    assert err.value.diag.message_primary == 'preset "operations" version 2.0 is older than the loaded version 2.1'
    _, back = load_preset(db, "operations", downgrade=True)
    assert counts(back) == {"retire": 3, "add": 0, "reinstate": 3, "keep": len(preset.rules) - 3}
    in_force = {r[0] for r in db.execute("SELECT rule FROM cogmem.active_bios_rules WHERE preset = 'operations'")}
    assert in_force == {r["rule"] for r in preset.rules}


def test_a_version_names_one_text(db, tmp_path):
    load_preset(db, "operations")
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        load_preset(db, _edited(tmp_path, "2.0", change=1))
    assert err.value.diag.message_primary == 'preset "operations" version 2.0 is loaded already, with other content'
    assert err.value.diag.message_hint.startswith("A version names one text")
    assert one(db, "SELECT count(*) FROM cogmem.bios_preset_loads") == 1


def _acme(tmp_path, edit, file: str = "acme.toml") -> Path:
    """The operations preset as a file of its own, edited by edit(data) first."""
    data = tomllib.loads(read_preset("operations").path.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / file
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path


def _set(key, value, rule: int | None = 3):
    """An edit that sets key (of the rule counted from 1, or of the file when rule is None)."""

    def edit(data):
        (data if rule is None else data["rules"][rule - 1])[key] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "field", "reason"),
    [
        (_set("rule", 123), "rules[3].rule", "must be a string, got integer 123"),
        (_set("topics", [1, 2]), "rules[3].topics[1]", "must be a string, got integer 1"),
        (_set("always_on", "yes"), "rules[3].always_on", 'must be true or false, got string "yes"'),
        (_set("version", [1, 2], None), "version", 'must be a string such as "2.0" (in quotes), got array [1, 2]'),
        (_set("version", 2.0, None), "version", 'must be a string such as "2.0" (in quotes), got float 2.0'),
        (
            _set("version", "v2.1", None),
            "version",
            'must be dotted numbers ("2.0", "4.0.1") or a date ("2026-03-15"), got string "v2.1"',
        ),
        (
            _set("name", "acme\x07ops", None),
            "name",
            "holds control character U+0007; it must be one line of text",
        ),
        (_set("rule", "x" * 200_000), "rules[3].rule", "has 200000 characters, the limit is 1200"),
        (_set("rules", "abc", None), "rules", 'must be a non-empty array of tables ([[rules]]), got string "abc"'),
        (_set("rules", ["abc"], None), "rules[1]", 'must be a table ([[rules]]), got string "abc"'),
        (
            _set("category", "Access Control"),
            "rules[3].category",
            "\"Access Control\" is not a name: lower-case letters, digits, '.', '_' and '-', "
            "starting with a letter or digit",
        ),
        (_set("topics", ["server", "x" * 65]), "rules[3].topics[2]", "has 65 characters, the limit is 64"),
        (_set("topics", [f"t{i}" for i in range(33)]), "rules[3].topics", "has 33 topics, the limit is 32"),
        (_set("severity", "optional"), "rules[3].severity", 'must be one of must, should, may, got string "optional"'),
        (
            _set("requirement", "OPS-1\nOPS-2"),
            "rules[3].requirement",
            "holds control character U+000A; it must be one line of text",
        ),
        (_set("rationale", "x" * 501), "rules[3].rationale", "has 501 characters, the limit is 500"),
        (
            _set("translations", {"turkish": "bir\x1bkural"}),
            "rules[3].translations.turkish",
            "holds control character U+001B; only newline and tab are allowed in prose",
        ),
        (
            _set("translations", {"turkish": "y" * 1201}),
            "rules[3].translations.turkish",
            "has 1201 characters, the limit is 1200",
        ),
        (
            _set("translations", "turkish"),
            "rules[3].translations",
            'must be a table of language = text, got string "turkish"',
        ),
        (
            _set("colour", "red"),
            "rules[3]",
            "has unknown keys colour; keys: requirement, category, severity, topics, "
            "always_on, rationale, rule, translations",
        ),
        (_set("rule", "   "), "rules[3].rule", "must not be empty"),
        (lambda data: data.pop("title"), None, "lacks title"),
        (
            _set("rules", [{"category": "server", "requirement": "R", "rule": "x"}] * 1001, None),
            "rules",
            "has 1001 rules, the limit is 1000",
        ),
    ],
)
def test_a_bad_preset_file_names_file_field_and_reason_and_writes_nothing(db, tmp_path, edit, field, reason):
    path = _acme(tmp_path, edit)
    with pytest.raises(PresetError) as err:
        load_preset(db, path)
    assert (err.value.file, err.value.field, err.value.reason) == ("acme.toml", field, reason)
    assert str(err.value) == ": ".join(p for p in ("acme.toml", field, reason) if p)
    assert one(db, "SELECT count(*) FROM cogmem.bios_rules") == 0
    assert one(db, "SELECT count(*) FROM cogmem.bios_preset_loads") == 0


def test_a_file_at_every_limit_loads_and_a_later_date_is_a_newer_version(db, tmp_path):
    """The longest texts, the most topics, prose over lines, a date as the version: accepted by the file
    schema and by SQL alike; a later date then upgrades it, an earlier one needs --downgrade."""
    rule = {
        "requirement": "R" * LIMITS["requirement"],
        "category": "a" * LIMITS["name"],
        "severity": "may",
        "topics": ["a" * LIMITS["name"]] + [f"topic-{i}.x_y" for i in range(LIMITS["topics"] - 1)],
        "always_on": True,
        "rationale": "w\t" * (LIMITS["rationale"] // 2),
        "rule": ("Line one.\n" + "z" * LIMITS["rule"])[: LIMITS["rule"]],
        "translations": {"turkish": "ç" * LIMITS["translation"]},
    }
    path = _acme(tmp_path, lambda d: d.update(name="acme.ops-1", version="2026-03-15", rules=[rule]))
    preset, changes = load_preset(db, path)
    assert (preset.name, preset.version, counts(changes)["add"]) == ("acme.ops-1", "2026-03-15", 1)
    stored = db.execute("SELECT length(rule), cardinality(topics), always_on FROM cogmem.bios_rules").fetchone()
    assert stored == (LIMITS["rule"], LIMITS["topics"], True)
    later = _acme(
        tmp_path, lambda d: d.update(name="acme.ops-1", version="2026-12", rules=[{**rule, "rule": "x"}]), "2.toml"
    )
    assert counts(load_preset(db, later)[1]) == {"retire": 1, "add": 1, "reinstate": 0, "keep": 0}
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        load_preset(db, path)
    assert (
        err.value.diag.message_primary
        == 'preset "acme.ops-1" version 2026-03-15 is older than the loaded version 2026-12'
    )


def test_the_file_schema_and_sql_share_their_limits(db):
    """cogmem_pg.bios checks a file, cogmem._bios_limits() what a caller passes as JSON: the same schema."""
    assert one(db, "SELECT cogmem._bios_limits()") == {
        **LIMITS,
        "name_pattern": NAME_PATTERN,
        "version_pattern": VERSION_PATTERN,
        "language_pattern": LANGUAGE_PATTERN,
    }


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            {"category": "server", "rule": "x", "requirement": "R", "severity": "optional"},
            'rule 1 of preset "own": unknown BIOS severity "optional"',
        ),
        (
            {"category": "server", "rule": " ", "requirement": "R"},
            'rule 1 of preset "own": BIOS rule text must not be NULL or empty',
        ),
        (
            {"category": "server", "rule": "x", "requirement": "R", "translations": {"klingon": "x"}},
            'rule 1 of preset "own": BIOS rule translation "klingon" is not a text in a known language',
        ),
    ],
)
def test_a_bad_rule_in_a_preset_names_its_place(db, rule, message):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        db.execute("SELECT * FROM cogmem.load_bios_preset('own', '1', 'Own', 'x', %s)", (json.dumps([rule]),))
    assert err.value.diag.message_primary == message and err.value.diag.message_hint
    assert one(db, "SELECT count(*) FROM cogmem.bios_rules") == 0


def _bios_items(db, tenant, message):
    return db.execute(
        "SELECT rule_id, content FROM cogmem.recall(%s, %s) WHERE layer = 'bios'", (tenant, message)
    ).fetchall()


def test_only_subscribed_tenants_get_a_preset(db):
    for tenant in ("merchant", "blog"):
        db.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
    load_preset(db, "pci-dss-4.0")
    message = "A customer pasted their full card number into the support chat, what now?"
    assert _bios_items(db, "merchant", message) == []  # loaded, but taken by no one
    assert subscribe(db, "pci-dss-4.0", "merchant") and not subscribe(db, "pci-dss-4.0", "merchant")
    assert _bios_items(db, "merchant", message) and _bios_items(db, "blog", message) == []
    assert subscribe(db, "pci-dss-4.0")  # every tenant
    assert _bios_items(db, "blog", message)
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
        unsubscribe(db, "pci-dss-4.0", "blog")
    assert err.value.diag.message_primary == 'preset "pci-dss-4.0" is taken by every tenant, not by "blog" alone'
    assert unsubscribe(db, "pci-dss-4.0") and _bios_items(db, "blog", message) == []
    assert _bios_items(db, "merchant", message)
    with pytest.raises(psycopg.errors.NoDataFound) as err:
        subscribe(db, "sox", "merchant")
    assert err.value.diag.message_primary == 'no BIOS preset "sox" is loaded'
    taken = db.execute("SELECT DISTINCT taken_by FROM cogmem.bios_coverage WHERE preset = 'pci-dss-4.0'").fetchall()
    assert taken == [("1 tenants",)]


def test_recall_speaks_the_tenants_language_and_explains_the_requirement(db):
    db.execute("SELECT cogmem.create_tenant('firma', 'turkish')")
    load_preset(db, "kvkk")
    subscribe(db, "kvkk", "firma")
    rows = db.execute(
        "SELECT recall_id, rule_id, content FROM cogmem.recall('firma', "
        "'Veri ihlali yaşadık, Kurula ne zamana kadar bildirmemiz gerekiyor?') WHERE layer = 'bios'"
    ).fetchall()
    texts = {r[2] for r in rows}
    turkish = {r["translations"]["turkish"] for r in read_preset("kvkk").rules if r["category"] == "breach"}
    assert turkish <= texts
    recall_id, rule_id = rows[0][0], rows[0][1]
    provenance = one(db, "SELECT provenance FROM cogmem.explain_recall(%s) WHERE rule_id = %s", (recall_id, rule_id))
    assert provenance["kind"] == "bios" and provenance["preset"] == "kvkk" and provenance["preset_version"] == "1.0"
    assert provenance["requirement"].startswith("KVKK ") and provenance["rationale"]
    assert provenance["translations"]["turkish"] in texts


def test_active_bios_rules_shows_a_login_only_its_tenants_rules(db, login):
    """The view applies the reader's row-level security: another tenant's own rules stay hidden, by SELECT
    and by COPY alike; global rules are everyone's."""
    for tenant in ("acme", "globex"):
        db.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
        db.execute("SELECT cogmem.add_bios_rule('billing', %s, tenant => %s)", (f"zq {tenant} invoices in EUR", tenant))
    db.execute("SELECT cogmem.add_bios_rule('server', 'Run a configuration test before any restart.')")
    app = login("cogmem_app")
    db.execute("SELECT cogmem.grant_tenant(%s, 'acme')", (one(app, "SELECT current_user"),))
    seen = [r[0] for r in app.execute("SELECT rule FROM cogmem.active_bios_rules ORDER BY rule")]
    assert seen == ["Run a configuration test before any restart.", "zq acme invoices in EUR"]
    with app.cursor().copy("COPY (SELECT rule FROM cogmem.active_bios_rules) TO STDOUT") as copy:
        copied = b"".join(bytes(chunk) for chunk in copy).decode()
    assert "globex" not in copied and "acme" in copied


CORPUS = Path(__file__).parent / "data" / "bios_corpus"
# Our own labelled messages (tests/data/bios_corpus/, one file per preset plus negatives.toml): realistic
# things people say to an agent, in English and Turkish, each labelled with its category and any other it
# is about. negatives.toml holds casual talk (with everyday words that sound technical) and billing,
# meeting and email work that must draw no rule.
UNRELATED = {"none", "billing", "meeting", "email"}
# Per category, the share of the rules injected for its messages that were meant for what the message is
# about (the rule's category or one of its topics is among the message's labels); measured, then floored
# a little below. A drop means topic detection started pulling in unrelated rules.
PRECISION_FLOORS = {
    "access": 0.64,
    "backup": 0.64,
    "breach": 0.64,
    "change": 0.71,
    "consent": 0.68,
    "cryptography": 0.67,
    "database": 0.72,
    "deployment": 0.81,
    "development": 0.78,
    "dns": 0.30,
    "incident": 0.74,
    "leakage": 0.55,
    "logging": 0.58,
    "monitoring": 0.59,
    "network": 0.75,
    "oncall": 0.48,
    "payments": 0.65,
    "people": 0.38,
    "privacy": 0.85,
    "retention": 0.63,
    "rights": 0.61,
    "server": 0.74,
    "supplier": 0.68,
    "transfer": 0.59,
    "vulnerability": 0.59,
}
# Casual and unrelated messages that draw no rule at all (always-on rules aside).
UNRELATED_CLEAN_FLOOR = 0.93


def _corpus() -> list[dict]:
    return [m for f in sorted(CORPUS.glob("*.toml")) for m in tomllib.loads(f.read_text(encoding="utf-8"))["messages"]]


def _injected(db) -> list[tuple[dict, list[int]]]:
    """Every corpus message through recall, for an English and a Turkish tenant that take every preset."""
    db.execute("SELECT cogmem.create_tenant('en', 'english'), cogmem.create_tenant('tr', 'turkish')")
    for name in available_presets():
        load_preset(db, name)
        subscribe(db, name)
    always_on = {r[0] for r in db.execute("SELECT rule_id FROM cogmem.active_bios_rules WHERE always_on")}
    return [
        (
            m,
            [
                r[0]
                for r in _bios_items(db, "tr" if m["language"] == "turkish" else "en", m["text"])
                if r[0] not in always_on
            ],
        )
        for m in _corpus()
    ]


def test_every_rule_reaches_a_message_of_its_category_in_both_languages_and_precision_holds(db):
    results = _injected(db)
    rules = {
        r[0]: (r[1], set(r[2]))
        for r in db.execute("SELECT rule_id, category, topics FROM cogmem.active_bios_rules WHERE NOT always_on")
    }
    reached = {(rid, m["language"]) for m, ids in results for rid in ids if rules[rid][0] == m["category"]}
    missing = [
        (rid, rules[rid][0], lang) for rid in rules for lang in ("english", "turkish") if (rid, lang) not in reached
    ]
    assert missing == []

    meant, injected = Counter(), Counter()
    for m, ids in results:
        if m["category"] in UNRELATED:
            continue
        labels = {m["category"], *m.get("also", [])}
        injected[m["category"]] += len(ids)
        meant[m["category"]] += sum(1 for rid in ids if ({rules[rid][0]} | rules[rid][1]) & labels)
    precision = {c: round(meant[c] / injected[c], 3) for c in injected}
    assert {c for c in precision if precision[c] < PRECISION_FLOORS[c]} == set(), precision

    unrelated = [(m, ids) for m, ids in results if m["category"] in UNRELATED]
    clean = sum(1 for m, ids in unrelated if all(rules[rid][0] in {m["category"]} for rid in ids))
    assert clean / len(unrelated) >= UNRELATED_CLEAN_FLOOR, [m["text"] for m, ids in unrelated if ids][:20]
    for language in ("english", "turkish"):
        assert sum(1 for m, _ in unrelated if m["language"] == language) >= 90
