"""Issue 48: candidates that still protect. An unconfirmed candidate for a never-cut ring is injected in every
recall, in a small allocation of its own, right after the confirmed never-cut layers, until a person
confirms or dismisses it: the layer 'candidates'. A new enum value cannot be used in the transaction that
adds it, so this revision only adds it; a tenant's 'candidates' layer row is written with its first
candidate (sql/060-remember.sql, cogmem._candidate_layer), after the install has committed.

Revision ID: 0042
Revises: 0041
Create Date: 2026-12-05
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0042"
down_revision = "0041"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TYPE cogmem.layer ADD VALUE IF NOT EXISTS 'candidates';
COMMENT ON TYPE cogmem.layer IS
'A slot of the recall budget: the six rings plus bios, gut, resources and the unconfirmed candidates of the '
'never-cut rings.';
""")


def downgrade() -> None:
    # An enum value cannot be dropped: 'candidates' stays in cogmem.layer, unused.
    execute("""
DELETE FROM cogmem.tenant_layers WHERE layer::text = 'candidates';
""")
