"""Success read from the conversation: where a recall's outcome came from, and what the next turn said.

A recall's outcome was only ever explicit (cogmem.feedback). The next user turn of the same conversation
now may set it, marked implicit with the judge's confidence (sql/059-followup.sql); explicit feedback
always wins. The recall keeps its question's embedding, so that the next turn can be compared with it
(the question itself is still kept only as a hash), and what the judge said of the next turn, abstentions
included. Existing outcomes were all explicit.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-04
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.recalls
    ADD COLUMN outcome_source text CHECK (outcome_source IN ('explicit', 'implicit')),
    ADD COLUMN outcome_confidence real CHECK (outcome_confidence BETWEEN 0 AND 1),
    ADD COLUMN message_embedding public.vector(384),
    ADD COLUMN judged_at timestamptz,
    ADD COLUMN judged_verdict text CHECK (judged_verdict IN ('confirmed', 'corrected', 'repeated', 'neutral')),
    ADD COLUMN judged_confidence real CHECK (judged_confidence BETWEEN 0 AND 1),
    ADD COLUMN judged_by text;
UPDATE cogmem.recalls SET outcome_source = 'explicit', outcome_confidence = 1 WHERE outcome IS NOT NULL;
ALTER TABLE cogmem.recalls
    ADD CONSTRAINT recalls_outcome_sourced CHECK ((outcome IS NULL) = (outcome_source IS NULL)),
    ADD CONSTRAINT recalls_judged_whole CHECK ((judged_at IS NULL) = (judged_verdict IS NULL));
-- The next turn looks up its conversation's latest recall.
DROP INDEX cogmem.recalls_conversation_idx;
CREATE INDEX recalls_conversation_idx ON cogmem.recalls (tenant, conversation, created_at)
    WHERE conversation IS NOT NULL;
-- The night clears the embeddings whose next turn did not come; erasure clears them all.
CREATE INDEX recalls_awaiting_idx ON cogmem.recalls (tenant, created_at) WHERE message_embedding IS NOT NULL;
COMMENT ON COLUMN cogmem.recalls.outcome_source IS
'explicit: cogmem.feedback(); implicit: read from the next turn of the conversation (sql/059-followup.sql).';
COMMENT ON COLUMN cogmem.recalls.outcome_confidence IS
'1 for explicit feedback; the judge''s probability of its verdict for an implicit one.';
COMMENT ON COLUMN cogmem.recalls.message_embedding IS
'The embedding of the message recalled for, in a conversation: the next turn is compared with it. Cleared '
'once judged, by the night after implicit_feedback_window, and by erase_subject.';
COMMENT ON COLUMN cogmem.recalls.judged_verdict IS
'What the next turn said of the answer: confirmed, corrected, repeated, or neutral (the judge abstained).';
COMMENT ON COLUMN cogmem.recalls.judged_by IS
'The judge: followup-embedding or followup-cues (the database''s models), or the caller''s own.';

ALTER TABLE cogmem.tenants
    ADD COLUMN implicit_feedback boolean NOT NULL DEFAULT true,
    ADD COLUMN implicit_feedback_window interval NOT NULL DEFAULT '1 hour'
        CHECK (implicit_feedback_window > interval '0');
COMMENT ON COLUMN cogmem.tenants.implicit_feedback IS
'Whether the next turn of a conversation may set the outcome of the recall before it (implicit feedback).';
COMMENT ON COLUMN cogmem.tenants.implicit_feedback_window IS
'How long after a recall the next turn of its conversation is still read as a reply to its answer.';
""")


def downgrade() -> None:
    execute("""
DROP VIEW IF EXISTS cogmem.outcome_stats;  -- sql/059-followup.sql, which reads the columns going away
ALTER TABLE cogmem.tenants DROP COLUMN implicit_feedback, DROP COLUMN implicit_feedback_window;
DROP INDEX cogmem.recalls_conversation_idx, cogmem.recalls_awaiting_idx;
CREATE INDEX recalls_conversation_idx ON cogmem.recalls (tenant, conversation) WHERE conversation IS NOT NULL;
ALTER TABLE cogmem.recalls
    DROP COLUMN outcome_source, DROP COLUMN outcome_confidence, DROP COLUMN message_embedding,
    DROP COLUMN judged_at, DROP COLUMN judged_verdict, DROP COLUMN judged_confidence, DROP COLUMN judged_by;
""")
