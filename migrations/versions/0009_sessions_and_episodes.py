"""Sessions and episodes: what an agent did in a session, archived when it ends, briefed back later.

- cogmem.sessions: one working session of an agent for a tenant (optionally a project), from
  cogmem.start_session() to cogmem.end_session().
- cogmem.episodes: an ended session, archived: summary, phase, decisions, open items, next steps, the
  memories it touched, its topics. Rows are immutable (UPDATE refused; erasure may delete them).
- recalls_conversation_idx: end_session() finds the recalls of a session (conversation = session id).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
CREATE TABLE cogmem.sessions (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    session_id uuid NOT NULL DEFAULT gen_random_uuid(),
    project text,
    goal text,
    started_at timestamptz NOT NULL DEFAULT now(),
    ended_at timestamptz,
    PRIMARY KEY (tenant, session_id),
    UNIQUE (session_id)
);
COMMENT ON TABLE cogmem.sessions IS
'Working sessions of an agent (pass session_id as recall''s and observe''s conversation); ended ones are '
'archived in cogmem.episodes.';
CREATE INDEX sessions_open_idx ON cogmem.sessions (tenant, project) WHERE ended_at IS NULL;

CREATE TABLE cogmem.episodes (
    tenant text NOT NULL,
    session_id uuid NOT NULL,
    project text,
    phase text,
    summary text NOT NULL CHECK (summary <> ''),
    decisions text[] NOT NULL DEFAULT '{}',
    open_items text[] NOT NULL DEFAULT '{}',
    next_steps text[] NOT NULL DEFAULT '{}',
    memory_ids bigint[] NOT NULL DEFAULT '{}',
    topics text[] NOT NULL DEFAULT '{}',
    started_at timestamptz NOT NULL,
    ended_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, session_id),
    FOREIGN KEY (tenant, session_id) REFERENCES cogmem.sessions ON DELETE CASCADE
);
COMMENT ON TABLE cogmem.episodes IS
'Ended sessions, immutable: what was done, decisions, open items, next steps, the memories touched.';
CREATE INDEX episodes_recent_idx ON cogmem.episodes (tenant, project, ended_at DESC);

CREATE INDEX recalls_conversation_idx ON cogmem.recalls (tenant, conversation) WHERE conversation IS NOT NULL;
""")


def downgrade() -> None:
    execute(r"""
DROP FUNCTION IF EXISTS cogmem.start_session(text, text, text);
DROP FUNCTION IF EXISTS cogmem.end_session(uuid, text, text[], text[], text[], text[], text[], text, bigint[]);
DROP FUNCTION IF EXISTS cogmem.briefing(text, text, integer);
DROP FUNCTION IF EXISTS cogmem.briefing_text(text, text, integer);
DROP FUNCTION IF EXISTS cogmem.analyze(text, text, timestamptz, timestamptz);
DROP FUNCTION IF EXISTS cogmem._clean_list(text[]);
DROP FUNCTION IF EXISTS cogmem._clean_text(text);
DROP INDEX cogmem.recalls_conversation_idx;
DROP TABLE cogmem.episodes, cogmem.sessions;
""")
