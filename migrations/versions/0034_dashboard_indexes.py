"""The dashboard (issue 34): the nights' decisions by night, for every tenant at once.

consolidation_decisions is keyed by tenant first, so a chart of the last nights across all tenants read
every tenant's rows through the view's join. Most rows of a night count nothing (ten decisions a tenant,
few of which touch a memory): a partial index of the decisions that did, by night, answers the dashboard's
Nights page and the last night on the Tenants page with an index-only scan.

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-04
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
CREATE INDEX consolidation_decisions_night_idx ON cogmem.consolidation_decisions (night)
    INCLUDE (tenant, decision, memories) WHERE memories > 0;
""")


def downgrade() -> None:
    execute("DROP INDEX cogmem.consolidation_decisions_night_idx;")
