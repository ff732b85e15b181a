"""Metacognition: guard checks and learnings from errors, dissonance (conflicts), trust.

- cogmem.learnings: a mistake reported with cogmem.report_error() becomes a lesson (a memory in
  dos_and_donts) with a count of how often it happened; repeated often enough since a person last
  acknowledged it, it is blocking in cogmem.guard_check() until cogmem.acknowledge().
- cogmem.conflicts: an instruction that contradicts an established memory is held here, not stored
  and not obeyed, until cogmem.resolve_conflict() decides (paradigm shift, exception, override).
- cogmem.trust_events: the per-tenant trust score (0-100, from 50) moved by events, each with its cause.
- memory_stats.guard_count: how often a guard check brought a memory up (times_referenced counts it).
- audit_log gains the level 'metacognition' for guard checks, error reports, acknowledgements,
  conflicts and trust changes.
- tenants: guard_similarity, guard_blocking_after, dissonance_similarity.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
ALTER TABLE cogmem.audit_log DROP CONSTRAINT audit_log_level_check;
ALTER TABLE cogmem.audit_log ADD CONSTRAINT audit_log_level_check
    CHECK (level IN ('write', 'recall', 'outcome', 'lifecycle', 'governance', 'metacognition'));

ALTER TABLE cogmem.tenants
    ADD COLUMN guard_similarity real NOT NULL DEFAULT 0.35 CHECK (guard_similarity BETWEEN 0 AND 1),
    ADD COLUMN guard_blocking_after integer NOT NULL DEFAULT 3 CHECK (guard_blocking_after >= 1),
    ADD COLUMN dissonance_similarity real NOT NULL DEFAULT 0.4 CHECK (dissonance_similarity BETWEEN 0 AND 1);
COMMENT ON COLUMN cogmem.tenants.guard_similarity IS
'Cosine similarity from which a rule or learning applies to an action in guard_check (trust moves it).';
COMMENT ON COLUMN cogmem.tenants.guard_blocking_after IS
'A learning whose mistake was repeated this many times since it was last acknowledged blocks its area.';
COMMENT ON COLUMN cogmem.tenants.dissonance_similarity IS
'Cosine similarity from which an instruction of opposite polarity contradicts an established memory.';

ALTER TABLE cogmem.memory_stats ADD COLUMN guard_count integer NOT NULL DEFAULT 0;
COMMENT ON COLUMN cogmem.memory_stats.guard_count IS 'How often a guard check brought this memory up.';

CREATE TABLE cogmem.learnings (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    area text NOT NULL,
    errors integer NOT NULL DEFAULT 1 CHECK (errors >= 1),
    repeats_since_ack integer NOT NULL DEFAULT 0 CHECK (repeats_since_ack >= 0),
    blocking boolean NOT NULL DEFAULT false,
    first_error_at timestamptz NOT NULL DEFAULT now(),
    last_error_at timestamptz NOT NULL DEFAULT now(),
    acknowledged_at timestamptz,
    acknowledged_by text,
    acknowledgement text,
    PRIMARY KEY (tenant, memory_id),
    FOREIGN KEY (tenant, memory_id) REFERENCES cogmem.memories ON DELETE CASCADE
);
COMMENT ON TABLE cogmem.learnings IS
'Lessons from reported mistakes (the lesson is the memory); blocking until acknowledged when repeated.';
CREATE INDEX learnings_area_idx ON cogmem.learnings (tenant, area);

CREATE TABLE cogmem.conflicts (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    conflict_id bigint GENERATED ALWAYS AS IDENTITY,
    content text NOT NULL,
    ring cogmem.ring NOT NULL,
    topics text[] NOT NULL,
    embedding public.vector,
    source jsonb NOT NULL DEFAULT '{}',
    redactions text[] NOT NULL DEFAULT '{}',
    conflicts_with bigint[] NOT NULL CHECK (cardinality(conflicts_with) > 0),
    verdict text NOT NULL CHECK (verdict IN ('detected', 'caller')),
    status text NOT NULL DEFAULT 'open'
        CHECK (status IN ('open', 'paradigm_shift', 'exception', 'override')),
    opened_at timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    resolved_by text,
    note text,
    memory_id bigint,
    reviewed_at timestamptz,
    PRIMARY KEY (tenant, conflict_id),
    UNIQUE (conflict_id)
);
COMMENT ON TABLE cogmem.conflicts IS
'Instructions that contradicted an established memory, held (redacted) until resolved; memory_id is what '
'the resolution stored, reviewed_at when a night reviewed an override.';
CREATE INDEX conflicts_open_idx ON cogmem.conflicts (tenant) WHERE status = 'open';

CREATE TABLE cogmem.trust_events (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    event_id bigint GENERATED ALWAYS AS IDENTITY,
    kind text NOT NULL
        CHECK (kind IN ('praise', 'delegation', 'caught_error', 'correction', 'repeated_error', 'memory_churn')),
    delta real NOT NULL,
    score real NOT NULL CHECK (score BETWEEN 0 AND 100),
    memory_id bigint,
    cause text,
    at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, event_id)
);
COMMENT ON TABLE cogmem.trust_events IS
'What moved a tenant''s trust score, by how much and why; score is the value after the event (from 50).';
CREATE INDEX trust_events_memory_idx ON cogmem.trust_events (tenant, memory_id, at) WHERE memory_id IS NOT NULL;
""")


def downgrade() -> None:
    execute(r"""
DROP FUNCTION IF EXISTS cogmem.guard_check(text, text, text, public.vector);
DROP FUNCTION IF EXISTS cogmem._area(text);
DROP FUNCTION IF EXISTS cogmem.report_error(text, text, text, text, bigint, public.vector, jsonb);
DROP FUNCTION IF EXISTS cogmem._trust_delta(text);
DROP FUNCTION IF EXISTS cogmem.acknowledge(text, bigint, text);
DROP FUNCTION IF EXISTS cogmem.trust_event(text, text, text, bigint);
DROP FUNCTION IF EXISTS cogmem._trust_event(text, text, text, bigint);
DROP FUNCTION IF EXISTS cogmem.trust(text);
DROP FUNCTION IF EXISTS cogmem.polarity(text);
DROP FUNCTION IF EXISTS cogmem.contradicts(text, text);
DROP FUNCTION IF EXISTS cogmem._exclusive_choice(text);
DROP FUNCTION IF EXISTS cogmem.resolve_conflict(bigint, text, text);
DROP FUNCTION IF EXISTS cogmem.open_conflicts(text);
-- remember and its implementation take the caller's verdict on conflicts since 0008: the older files
-- recreate the previous signatures, which the new ones would make ambiguous.
DROP FUNCTION IF EXISTS cogmem.remember(text, text, text, text[], public.vector, jsonb, bigint[]);
DROP FUNCTION IF EXISTS cogmem._remember(text, text, text, text[], public.vector, jsonb, bigint[], bigint[]);
DROP TABLE cogmem.trust_events, cogmem.conflicts, cogmem.learnings;
ALTER TABLE cogmem.memory_stats DROP COLUMN guard_count;
ALTER TABLE cogmem.tenants DROP COLUMN guard_similarity, DROP COLUMN guard_blocking_after,
    DROP COLUMN dissonance_similarity;
ALTER TABLE cogmem.audit_log DROP CONSTRAINT audit_log_level_check;
ALTER TABLE cogmem.audit_log ADD CONSTRAINT audit_log_level_check
    CHECK (level IN ('write', 'recall', 'outcome', 'lifecycle', 'governance')) NOT VALID;
""")
