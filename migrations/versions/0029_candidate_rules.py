"""Candidate rules and incidents: what may belong in a never-cut ring waits there, never forgotten.

A statement the routing model ranks as a likely rule or incident, but below the never-cut threshold, is
stored in fresh and marked with the ring it may belong to. It does not decay while it waits; the agent
asks (cogmem.pending_rules), a person confirms or dismisses it, or the night promotes it when it is said
again or succeeds when recalled.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-03
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.memories
    ADD COLUMN candidate_ring cogmem.ring CHECK (candidate_ring IN ('dos_and_donts', 'shocks')),
    ADD COLUMN candidate_p real CHECK (candidate_p BETWEEN 0 AND 1);
COMMENT ON COLUMN cogmem.memories.candidate_ring IS
'The never-cut ring this memory may belong to, awaiting confirmation (a candidate rule or incident); it does '
'not decay while it waits. NULL when it is no candidate.';
COMMENT ON COLUMN cogmem.memories.candidate_p IS
'How likely the routing model found the candidate to be of its ring (raised when it is said again).';
CREATE INDEX memories_candidates_idx ON cogmem.memories (tenant, created_at) WHERE candidate_ring IS NOT NULL;
ALTER TABLE cogmem.tenants
    ADD COLUMN candidate_min_successes integer NOT NULL DEFAULT 2 CHECK (candidate_min_successes >= 1),
    ADD COLUMN turn_never_cut_probability real NOT NULL DEFAULT 0.99
        CHECK (turn_never_cut_probability BETWEEN 0 AND 1);
COMMENT ON COLUMN cogmem.tenants.turn_never_cut_probability IS
'A turn of a conversation (remembered with one) enters a never-cut ring only when the routing model is '
'at least this sure; below, it is a candidate. Chats are full of emphatic talk that is no rule.';
COMMENT ON COLUMN cogmem.tenants.candidate_min_successes IS
'A candidate rule or incident recalled with success this many times is promoted to its ring by the night.';
ALTER TYPE cogmem._batch_item ADD ATTRIBUTE candidate text;
ALTER TYPE cogmem._batch_item ADD ATTRIBUTE candidate_p real;
""")


def downgrade() -> None:
    execute("""
-- The view shows these columns; sql/065-rehearsal.sql makes it again for the revision installed.
DROP VIEW IF EXISTS cogmem.memory_overview CASCADE;
ALTER TYPE cogmem._batch_item DROP ATTRIBUTE candidate_p;
ALTER TYPE cogmem._batch_item DROP ATTRIBUTE candidate;
ALTER TABLE cogmem.tenants DROP COLUMN candidate_min_successes, DROP COLUMN turn_never_cut_probability;
DROP INDEX cogmem.memories_candidates_idx;
ALTER TABLE cogmem.memories DROP COLUMN candidate_ring, DROP COLUMN candidate_p;
""")
