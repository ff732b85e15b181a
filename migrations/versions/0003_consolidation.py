"""Sleep: consolidation settings, sensory register, siblings, nightly runs.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
ALTER TABLE cogmem.tenants
    ADD COLUMN reinforce_min_recalls integer NOT NULL DEFAULT 2 CHECK (reinforce_min_recalls >= 1),
    ADD COLUMN reinforce_min_success real NOT NULL DEFAULT 0.8 CHECK (reinforce_min_success BETWEEN 0 AND 1),
    ADD COLUMN promote_min_recalls integer NOT NULL DEFAULT 3 CHECK (promote_min_recalls >= 1),
    ADD COLUMN promote_min_success real NOT NULL DEFAULT 0.9 CHECK (promote_min_success BETWEEN 0 AND 1),
    ADD COLUMN promote_automatically boolean NOT NULL DEFAULT true,
    ADD COLUMN weaken_min_recalls integer NOT NULL DEFAULT 2 CHECK (weaken_min_recalls >= 1),
    ADD COLUMN weaken_max_success real NOT NULL DEFAULT 0.3 CHECK (weaken_max_success BETWEEN 0 AND 1),
    ADD COLUMN forget_after interval NOT NULL DEFAULT '30 days' CHECK (forget_after > interval '0'),
    ADD COLUMN forget_step real NOT NULL DEFAULT 0.1 CHECK (forget_step BETWEEN 0 AND 1),
    ADD COLUMN forget_below real NOT NULL DEFAULT 0.2 CHECK (forget_below BETWEEN 0 AND 1),
    ADD COLUMN merge_similarity real NOT NULL DEFAULT 0.92 CHECK (merge_similarity BETWEEN 0 AND 1),
    ADD COLUMN sensory_ttl interval NOT NULL DEFAULT '48 hours' CHECK (sensory_ttl > interval '0');

ALTER TABLE cogmem.memory_stats
    ADD COLUMN forget_steps integer NOT NULL DEFAULT 0,
    ADD COLUMN promotion_candidate boolean NOT NULL DEFAULT false;

CREATE TABLE cogmem.memory_siblings (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    sibling_id bigint NOT NULL,
    similarity real NOT NULL,
    linked_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, memory_id, sibling_id),
    CHECK (memory_id < sibling_id),
    FOREIGN KEY (tenant, memory_id) REFERENCES cogmem.memories ON DELETE CASCADE,
    FOREIGN KEY (tenant, sibling_id) REFERENCES cogmem.memories ON DELETE CASCADE
);
COMMENT ON TABLE cogmem.memory_siblings IS
'Look-alike memories that differ in discriminating details (host, IP, environment, OS, version): '
'linked, never merged.';
CREATE INDEX memory_siblings_sibling_idx ON cogmem.memory_siblings (tenant, sibling_id);

CREATE TABLE cogmem.sensory_turns (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    turn_id bigint GENERATED ALWAYS AS IDENTITY,
    conversation text NOT NULL,
    role text NOT NULL,
    content text NOT NULL,
    embedding public.vector(384),
    at timestamptz NOT NULL,
    memory_id bigint,
    PRIMARY KEY (tenant, turn_id)
);
COMMENT ON TABLE cogmem.sensory_turns IS
'Sensory register: raw conversation turns, kept for tenants.sensory_ttl (48 hours by default).';
CREATE INDEX sensory_turns_conversation_idx ON cogmem.sensory_turns (tenant, conversation, at);

CREATE TABLE cogmem.consolidation_nights (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    night date NOT NULL,
    as_of timestamptz NOT NULL,
    run_id bigint,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz,
    PRIMARY KEY (tenant, night)
);
COMMENT ON TABLE cogmem.consolidation_nights IS
'One row per tenant and night consolidated; written in the same transaction as that night''s changes, '
'so a night is done exactly once.';

CREATE TABLE cogmem.consolidation_decisions (
    tenant text NOT NULL,
    night date NOT NULL,
    decision text NOT NULL,
    memories integer NOT NULL,
    PRIMARY KEY (tenant, night, decision),
    FOREIGN KEY (tenant, night) REFERENCES cogmem.consolidation_nights ON DELETE CASCADE
);
COMMENT ON TABLE cogmem.consolidation_decisions IS 'How many memories each decision touched, per tenant and night.';

CREATE TABLE cogmem.consolidation_runs (
    run_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    as_of timestamptz NOT NULL,
    tenant text,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz,
    tenants_done integer NOT NULL DEFAULT 0,
    status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished', 'skipped'))
);
COMMENT ON TABLE cogmem.consolidation_runs IS
'Global: each consolidation run (all tenants, or one), its as_of and how far it got.';
""")


def downgrade() -> None:
    execute(r"""
DROP VIEW IF EXISTS cogmem.consolidation_report;
DROP TABLE cogmem.consolidation_runs, cogmem.consolidation_decisions, cogmem.consolidation_nights,
    cogmem.sensory_turns, cogmem.memory_siblings;
ALTER TABLE cogmem.memory_stats DROP COLUMN forget_steps, DROP COLUMN promotion_candidate;
ALTER TABLE cogmem.tenants
    DROP COLUMN reinforce_min_recalls, DROP COLUMN reinforce_min_success, DROP COLUMN promote_min_recalls,
    DROP COLUMN promote_min_success, DROP COLUMN promote_automatically, DROP COLUMN weaken_min_recalls,
    DROP COLUMN weaken_max_success, DROP COLUMN forget_after, DROP COLUMN forget_step, DROP COLUMN forget_below,
    DROP COLUMN merge_similarity, DROP COLUMN sensory_ttl;
""")
