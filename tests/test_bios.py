"""sql/050-bios.sql and cogmem_pg.bios: immutable, given rules and the presets that carry them."""

import re

import psycopg
import pytest

from cogmem_pg.bios import available_presets, load_preset, read_preset
from tests.conftest import one


def test_add_bios_rule_twice_adds_nothing(db):
    first = one(db, "SELECT cogmem.add_bios_rule('Server', 'Run a config test before restart.', 'must', 'ops')")
    again = one(db, "SELECT cogmem.add_bios_rule('server', '  Run a config test before restart.  ')")
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
    assert {"operations", "pci-dss-4.0"} <= set(available_presets())
    pci = read_preset("pci-dss-4.0")
    assert pci.title == "PCI DSS v4.0"
    requirements = {r["requirement"] for r in pci.rules}
    assert {"PCI DSS 3.3.1", "PCI DSS 3.4.1", "PCI DSS 3.5.1", "PCI DSS 8.4.2"} <= requirements
    assert all(r["requirement"].startswith("PCI DSS ") for r in pci.rules)


def test_loading_a_preset_twice_adds_nothing(db):
    preset, added = load_preset(db, "operations")
    assert added == len(preset.rules) == one(db, "SELECT count(*) FROM cogmem.bios_rules")
    _, added_again = load_preset(db, "operations")
    assert added_again == 0
    assert one(db, "SELECT count(*) FROM cogmem.bios_rules") == len(preset.rules)
    row = db.execute("SELECT preset, version, rules_added, sha256 FROM cogmem.bios_presets").fetchone()
    assert row == ("operations", "1.0", len(preset.rules), preset.sha256)
    assert one(db, "SELECT count(*) FROM cogmem.bios_rules WHERE requirement = 'OPS-01'") == 1


def test_an_administrator_loads_a_preset_through_the_api(db, login):
    admin = login("cogmem_admin")  # no table write of its own: add_bios_rule and record_bios_preset
    admin.autocommit = False
    preset, added = load_preset(admin, "operations")
    admin.commit()
    assert added == len(preset.rules)
    assert one(db, "SELECT rules_added FROM cogmem.bios_presets WHERE preset = 'operations'") == added
    actors = db.execute("SELECT DISTINCT actor FROM cogmem.audit_log WHERE event = 'bios_rules_added'").fetchall()
    assert actors == [(one(admin, "SELECT current_user"),)]


def test_unknown_preset():
    with pytest.raises(ValueError, match=re.escape("unknown BIOS preset 'sox'; available: operations, pci-dss-4.0")):
        read_preset("sox")


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
