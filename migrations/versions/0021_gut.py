"""The Gut: de-identified contributions across tenants, patterns released under a privacy budget.

- tenants.gut_contribute (off by default) and tenants.gut_receive (on by default): the two switches.
- gut_settings: one row of the release parameters (k, the budget per period, delta, the bound on how
  many patterns one tenant may support, the share of a release's epsilon spent on selection).
- gut_contributions: per tenant, the de-identified text of a proven memory or learning, its vector and
  its success; it goes with its memory (erased, forgotten) by the trigger that removes statistics.
- gut_feedback: per tenant and pattern, the mean outcome of the recalls that injected the pattern.
- gut_releases: the privacy ledger, a row per release with the epsilon and delta it spent.
- gut_patterns: global rows (no tenant), what recall's gut layer injects.
- gut_runs: the scheduled runs (collection, then a release when the period's budget allows).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.tenants
    ADD COLUMN gut_contribute boolean NOT NULL DEFAULT false,
    ADD COLUMN gut_receive boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN cogmem.tenants.gut_contribute IS
'The tenant''s proven memories, de-identified, feed the Gut (an administrator''s opt-in; off by default).';
COMMENT ON COLUMN cogmem.tenants.gut_receive IS 'Recall fills the gut layer with released patterns.';

CREATE TABLE cogmem.gut_settings (
    only_row                boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    k                       integer NOT NULL DEFAULT 5 CHECK (k >= 2),
    epsilon_per_period      double precision NOT NULL DEFAULT 1.0 CHECK (epsilon_per_period > 0),
    period                  interval NOT NULL DEFAULT '1 month' CHECK (period > '0'),
    delta                   double precision NOT NULL DEFAULT 1e-6 CHECK (delta > 0 AND delta < 1e-3),
    max_patterns_per_tenant integer NOT NULL DEFAULT 3 CHECK (max_patterns_per_tenant BETWEEN 1 AND 100),
    selection_share         double precision NOT NULL DEFAULT 0.7 CHECK (selection_share > 0 AND selection_share < 1),
    cluster_similarity      real NOT NULL DEFAULT 0.65 CHECK (cluster_similarity > 0 AND cluster_similarity < 1),
    min_success             real NOT NULL DEFAULT 0.7 CHECK (min_success BETWEEN 0 AND 1),
    match_similarity        real NOT NULL DEFAULT 0.45 CHECK (match_similarity BETWEEN 0 AND 1)
);
INSERT INTO cogmem.gut_settings DEFAULT VALUES;
COMMENT ON TABLE cogmem.gut_settings IS 'The Gut''s release parameters (one row; docs/gut.md says what each bounds).';

CREATE TABLE cogmem.gut_contributions (
    tenant       text NOT NULL,
    memory_id    bigint NOT NULL,
    source       text NOT NULL CHECK (source IN ('memory', 'learning')),
    ring         cogmem.ring NOT NULL,
    content      text NOT NULL,
    embedding    public.vector NOT NULL,
    topics       text[] NOT NULL DEFAULT '{}',
    success      real NOT NULL CHECK (success BETWEEN 0 AND 1),
    collected_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, memory_id)
);
COMMENT ON TABLE cogmem.gut_contributions IS
'What an opted-in tenant offers the Gut: de-identified text of a proven memory, its vector and success.';

CREATE TABLE cogmem.gut_releases (
    release_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    released_at   timestamptz NOT NULL DEFAULT now(),
    period_start  timestamptz NOT NULL,
    epsilon       double precision NOT NULL CHECK (epsilon > 0),
    delta         double precision NOT NULL CHECK (delta >= 0),
    k             integer NOT NULL,
    max_patterns_per_tenant integer NOT NULL,
    threshold     integer NOT NULL,
    published     integer NOT NULL,
    withdrawn     integer NOT NULL,
    released_by   name NOT NULL
);
CREATE INDEX gut_releases_period_idx ON cogmem.gut_releases (period_start);
COMMENT ON TABLE cogmem.gut_releases IS 'The privacy ledger: every release and the epsilon and delta it spent.';

CREATE TABLE cogmem.gut_patterns (
    pattern_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    content           text NOT NULL,
    embedding         public.vector NOT NULL,
    topics            text[] NOT NULL DEFAULT '{}',
    support           integer NOT NULL,
    success           real,
    token_estimate    integer NOT NULL,
    first_release     bigint NOT NULL REFERENCES cogmem.gut_releases,
    last_release      bigint NOT NULL REFERENCES cogmem.gut_releases,
    withdrawn_release bigint REFERENCES cogmem.gut_releases
);
CREATE INDEX gut_patterns_active_idx ON cogmem.gut_patterns (pattern_id) WHERE withdrawn_release IS NULL;
COMMENT ON TABLE cogmem.gut_patterns IS
'Released patterns: k-anonymous, de-identified text; support and success are noisy (differentially private).';

CREATE TABLE cogmem.gut_feedback (
    tenant     text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    pattern_id bigint NOT NULL REFERENCES cogmem.gut_patterns,
    outcome    real NOT NULL CHECK (outcome BETWEEN 0 AND 1),
    recalls    integer NOT NULL CHECK (recalls > 0),
    PRIMARY KEY (tenant, pattern_id)
);
COMMENT ON TABLE cogmem.gut_feedback IS 'Per tenant, the mean outcome of the recalls that injected a pattern.';

CREATE TABLE cogmem.gut_runs (
    run_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    tenants     integer NOT NULL DEFAULT 0,
    release_id  bigint REFERENCES cogmem.gut_releases,
    note        text
);
COMMENT ON TABLE cogmem.gut_runs IS 'Scheduled Gut runs: tenants collected, and the release made if any.';

ALTER TABLE cogmem.gut_contributions ENABLE ROW LEVEL SECURITY;
ALTER TABLE cogmem.gut_contributions FORCE ROW LEVEL SECURITY;
ALTER TABLE cogmem.gut_feedback ENABLE ROW LEVEL SECURITY;
ALTER TABLE cogmem.gut_feedback FORCE ROW LEVEL SECURITY;
""")


def downgrade() -> None:
    execute("""
DROP FUNCTION IF EXISTS cogmem._gut_draw(jsonb);
DROP TABLE cogmem.gut_runs, cogmem.gut_feedback, cogmem.gut_patterns, cogmem.gut_releases,
    cogmem.gut_contributions, cogmem.gut_settings CASCADE;
ALTER TABLE cogmem.tenants DROP COLUMN gut_contribute, DROP COLUMN gut_receive;
""")
