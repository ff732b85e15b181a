"""Rehearsal and feedback credit are applied from the cycle log, not per item inside each call.

A recall rehearsed every memory it injected with one UPDATE of memory_stats in its own transaction, and
feedback credited them the same way: a row version per item on every call. The cycle row already holds
the injected items as arrays and is the durable record; cogmem.apply_rehearsals() (pg_cron every minute,
every night before its decisions, and on demand) now applies them set-based, per memory once per batch.

- recalls.pending: the row holds something memory_stats does not show yet (set by recall and by feedback,
  cleared when applied), with a partial index per tenant: readers add what is pending.
- recalls.rehearsed: its recall count and last-recall time are applied.
- recalls.credited_outcome, credited_used: the feedback memory_stats holds, so that a replaced feedback
  takes back exactly what was credited.

Rows logged before this revision were applied when they were made.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The defaults for the rows already there first (no rewrite), then the defaults for new rows.
    execute("""
ALTER TABLE cogmem.recalls
    ADD COLUMN pending boolean NOT NULL DEFAULT false,
    ADD COLUMN rehearsed boolean NOT NULL DEFAULT true,
    ADD COLUMN credited_outcome real,
    ADD COLUMN credited_used bigint[];
ALTER TABLE cogmem.recalls ALTER COLUMN pending SET DEFAULT true, ALTER COLUMN rehearsed SET DEFAULT false;
UPDATE cogmem.recalls SET credited_outcome = outcome, credited_used = feedback_used WHERE outcome IS NOT NULL;
CREATE INDEX recalls_pending_idx ON cogmem.recalls (tenant) WHERE pending;
COMMENT ON COLUMN cogmem.recalls.pending IS
'Holds a rehearsal or a feedback that memory_stats does not show yet (cogmem.apply_rehearsals()).';
COMMENT ON COLUMN cogmem.recalls.rehearsed IS 'Its recall count and last-recall time are in memory_stats.';
COMMENT ON COLUMN cogmem.recalls.credited_outcome IS 'The outcome memory_stats was credited with.';
COMMENT ON COLUMN cogmem.recalls.credited_used IS 'The memories that outcome was credited to (NULL: all injected).';
""")


def downgrade() -> None:
    # What is still pending goes into memory_stats first: the older schema applied it at once.
    execute("""
WITH items AS (
    SELECT r.tenant, i.id AS memory_id, r.created_at, NOT r.rehearsed AS counts,
           (r.outcome IS NOT NULL AND (r.feedback_used IS NULL OR i.id = ANY (r.feedback_used)))::integer AS gets,
           (r.credited_outcome IS NOT NULL
            AND (r.credited_used IS NULL OR i.id = ANY (r.credited_used)))::integer AS had,
           r.outcome, r.credited_outcome
    FROM cogmem.recalls AS r, unnest(r.item_memory_ids) AS i (id)
    WHERE r.pending AND i.id IS NOT NULL
), delta AS (
    SELECT tenant, memory_id, count(*) FILTER (WHERE counts) AS recalls,
           max(created_at) FILTER (WHERE counts) AS last_recalled_at,
           sum(gets - had) AS outcomes, sum(gets * coalesce(outcome, 0) - had * coalesce(credited_outcome, 0)) AS credit
    FROM items GROUP BY tenant, memory_id
)
UPDATE cogmem.memory_stats AS s
SET recall_count = s.recall_count + d.recalls,
    last_recalled_at = greatest(s.last_recalled_at, d.last_recalled_at),
    outcome_count = s.outcome_count + d.outcomes, outcome_sum = s.outcome_sum + d.credit
FROM delta AS d WHERE s.tenant = d.tenant AND s.memory_id = d.memory_id;
-- The views over the pending rows go with them; the SQL files of the release installed recreate theirs.
DROP VIEW IF EXISTS cogmem.memory_census, cogmem.pending_rehearsals CASCADE;
-- A batch stage of this release takes cogmem._batch_item, which revision 0006 drops on its way down.
DROP FUNCTION IF EXISTS cogmem._batch_alone(cogmem.tenants, cogmem._batch_item[], boolean, boolean);
-- Its name since issue 32:
DROP FUNCTION IF EXISTS cogmem._unrelated_batch_items(cogmem.tenants, cogmem._batch_item[], boolean, boolean);
DROP INDEX cogmem.recalls_pending_idx;
ALTER TABLE cogmem.recalls DROP COLUMN pending, DROP COLUMN rehearsed, DROP COLUMN credited_outcome,
    DROP COLUMN credited_used;
""")
