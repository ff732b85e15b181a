"""A consolidation run knows its session: a run whose session is gone was interrupted.

The nightly single-runner rule rested on advisory locks, which any login may take: holding one made
every night skip. A run now records its backend pid; the next run marks a 'running' run whose session
no longer exists as 'interrupted' (tenants_done says how far it got), and skips only for a live one.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.consolidation_runs ADD COLUMN pid integer;
ALTER TABLE cogmem.consolidation_runs DROP CONSTRAINT consolidation_runs_status_check;
ALTER TABLE cogmem.consolidation_runs ADD CONSTRAINT consolidation_runs_status_check
    CHECK (status IN ('running', 'finished', 'skipped', 'interrupted'));
COMMENT ON COLUMN cogmem.consolidation_runs.pid IS 'The backend that runs it: gone while running = interrupted.';
-- Runs left 'running' by a crash before this revision: no session can still hold them.
UPDATE cogmem.consolidation_runs SET status = 'interrupted' WHERE status = 'running';
""")


def downgrade() -> None:
    execute("""
UPDATE cogmem.consolidation_runs SET status = 'skipped' WHERE status = 'interrupted';
ALTER TABLE cogmem.consolidation_runs DROP CONSTRAINT consolidation_runs_status_check;
ALTER TABLE cogmem.consolidation_runs ADD CONSTRAINT consolidation_runs_status_check
    CHECK (status IN ('running', 'finished', 'skipped'));
ALTER TABLE cogmem.consolidation_runs DROP COLUMN pid;
""")
