"""Issue 48: corrections replace what they correct. A memory superseded by a newer one keeps its row (for
the audit, explain_recall and questions about the past) with the newer one's id and when it stopped
holding (sql/036-supersession.sql).

Revision ID: 0041
Revises: 0040
Create Date: 2026-12-05
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0041"
down_revision = "0040"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.memories
    ADD COLUMN superseded_by bigint,
    ADD COLUMN valid_until timestamptz,
    ADD CONSTRAINT memories_superseded_by_other CHECK (superseded_by <> memory_id),
    -- The newer memory erased or forgotten: the link goes, and the older stays out of recall (it was
    -- replaced; what replaced it is gone by a person's request or by fading, not shown to be wrong).
    ADD CONSTRAINT memories_superseded_by_fkey FOREIGN KEY (tenant, superseded_by)
        REFERENCES cogmem.memories (tenant, memory_id) ON DELETE SET NULL (superseded_by);
CREATE INDEX memories_superseded_by_idx ON cogmem.memories (tenant, superseded_by) WHERE superseded_by IS NOT NULL;
COMMENT ON COLUMN cogmem.memories.superseded_by IS
'The newer memory that replaces this one (a correction, a changed fact): set with valid_until when it is '
'superseded, alone when it only possibly is (recalled after the newer, marked).';
COMMENT ON COLUMN cogmem.memories.valid_until IS
'When it stopped holding (the newer memory''s said_at): a superseded memory is out of recall unless the '
'question asks about the past; NULL while it holds.';
""")


def downgrade() -> None:
    # The view names the columns; sql/058-rehearsal.sql makes it again.
    execute("""
DROP VIEW IF EXISTS cogmem.memory_overview;
ALTER TABLE cogmem.memories DROP COLUMN superseded_by, DROP COLUMN valid_until;
""")
