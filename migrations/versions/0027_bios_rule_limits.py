"""BIOS rules in force that are longer than a rule may now be are retired.

From this revision a rule's text, and each of its translations, is at most 1,200 characters (300 tokens,
the bios layer's default allocation; cogmem._bios_limits, docs/bios.md), so that a never-cut layer
cannot take a recall's whole budget with one rule. Rules are immutable: one added before, longer than
that, is retired by an event saying why, like any retired rule, and is no longer injected. Function
changes of the same issue (preset schema checks, bigint budgets and limits) live in sql/.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-09
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The tables, not the views: on a fresh install sql/ is applied after the revisions.
    execute("""
INSERT INTO cogmem.bios_rule_events (rule_id, event, reason)
SELECT r.rule_id, 'retired', 'longer than a BIOS rule may be: 1200 characters in any language (revision 0027)'
FROM cogmem.bios_rules AS r
WHERE (length(btrim(r.rule)) > 1200
       OR EXISTS (SELECT FROM jsonb_each_text(r.translations) AS l WHERE length(btrim(l.value)) > 1200))
  AND coalesce((SELECT e.event FROM cogmem.bios_rule_events AS e
                WHERE e.rule_id = r.rule_id ORDER BY e.event_id DESC LIMIT 1), '') <> 'retired';
""")


def downgrade() -> None:
    # Events are append-only: the rules stay retired, as any retired rule does.
    pass
