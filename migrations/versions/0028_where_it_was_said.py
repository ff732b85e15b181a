"""Where a memory was said: its conversation, who said it and when.

A turn of a conversation is remembered with its thread, its speaker and the time it was said, so that
recall can follow the conversation's shape: a turn's neighbours (the turns before and after it in its
conversation, in the order they were said), the people who spoke, and the dates questions ask about.
Memories stored without a conversation keep NULLs and are ranked as before.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-03
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.memories
    ADD COLUMN conversation text CHECK (length(conversation) BETWEEN 1 AND 200),
    ADD COLUMN speaker text CHECK (length(speaker) BETWEEN 1 AND 200),
    ADD COLUMN said_at timestamptz,
    ADD COLUMN excerpt_of bigint;
COMMENT ON COLUMN cogmem.memories.conversation IS
'The conversation (thread, session) the memory was said in; NULL for a memory said outside one.';
COMMENT ON COLUMN cogmem.memories.speaker IS 'Who said it, as the caller named them; NULL when not given.';
COMMENT ON COLUMN cogmem.memories.said_at IS
'When it was said (the caller''s time, or when it was stored); with conversation, the order of its turns.';
ALTER TABLE cogmem.tenants
    ADD COLUMN neighbour_weight real NOT NULL DEFAULT 0.5 CHECK (neighbour_weight BETWEEN 0 AND 1),
    ADD COLUMN speaker_boost real NOT NULL DEFAULT 2.0 CHECK (speaker_boost BETWEEN 1 AND 10),
    ADD COLUMN excerpt_above integer NOT NULL DEFAULT 48 CHECK (excerpt_above >= 0);
COMMENT ON COLUMN cogmem.tenants.neighbour_weight IS
'How much a turn''s neighbours in its conversation add to its relevance (recall ranks the turn and its '
'window too); 0 ranks turns alone.';
COMMENT ON COLUMN cogmem.tenants.excerpt_above IS
'A learned memory longer than this many tokens is shown by recall as the sentences that match the message '
'(and their neighbours), when that is much shorter; 0 shows memories whole.';
COMMENT ON COLUMN cogmem.tenants.speaker_boost IS
'Recall''s relevance of a turn whose speaker the message names is multiplied by this.';
COMMENT ON COLUMN cogmem.memories.excerpt_of IS
'For a rule or incident taken from one sentence of a long turn: the turn''s memory (kept in fresh), whose '
'erasure takes the sentence too; NULL otherwise.';
-- A batch item carries the sentence of a long turn that its never-cut ring keeps (sql/060-remember.sql).
ALTER TYPE cogmem._batch_item ADD ATTRIBUTE rule text;
CREATE INDEX memories_excerpt_of_idx ON cogmem.memories (tenant, excerpt_of) WHERE excerpt_of IS NOT NULL;
-- A turn's neighbours, in the order they were said.
CREATE INDEX memories_conversation_idx ON cogmem.memories (tenant, conversation, said_at, memory_id)
    WHERE conversation IS NOT NULL;
""")


def downgrade() -> None:
    execute("""
-- The view shows these columns; sql/065-rehearsal.sql makes it again for the revision installed.
DROP VIEW IF EXISTS cogmem.memory_overview CASCADE;
DROP INDEX cogmem.memories_conversation_idx;
DROP INDEX cogmem.memories_excerpt_of_idx;
ALTER TYPE cogmem._batch_item DROP ATTRIBUTE rule;
ALTER TABLE cogmem.tenants DROP COLUMN neighbour_weight, DROP COLUMN speaker_boost, DROP COLUMN excerpt_above;
ALTER TABLE cogmem.memories DROP COLUMN conversation, DROP COLUMN speaker, DROP COLUMN said_at,
    DROP COLUMN excerpt_of;
""")
