"""Calibration by experiment (issue 33, part B): experiments on a tenant setting, and who is in which arm.

An experiment names one column of cogmem.tenants, two or more values for it (its arms) and the tenants
it enrols; a tenant (or, with unit 'session', each session of it) is assigned an arm at random and stably,
and sees the arm's value in place of its own while the experiment runs (sql/021-experiment-arms.sql).
Experiments are global (no tenant column): only the API's definer functions write them, for
administrators; the enrolment rows carry the tenant and its row-level security.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-10
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
CREATE TABLE cogmem.experiments (
    name        text PRIMARY KEY CHECK (btrim(name) <> '' AND length(name) <= 100),
    parameter   text NOT NULL,
    arms        jsonb NOT NULL CHECK (jsonb_typeof(arms) = 'array' AND jsonb_array_length(arms) BETWEEN 2 AND 10),
    unit        text NOT NULL DEFAULT 'tenant' CHECK (unit IN ('tenant', 'session')),
    metric      text NOT NULL DEFAULT 'success_rate' CHECK (metric IN ('success_rate', 'items_used', 'corrections')),
    salt        bigint NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    stopped_at  timestamptz CHECK (stopped_at >= created_at),
    adopted_arm smallint CHECK (adopted_arm BETWEEN 1 AND jsonb_array_length(arms)),
    adopted_at  timestamptz,
    CHECK ((adopted_arm IS NULL) = (adopted_at IS NULL)),
    CHECK (adopted_arm IS NULL OR stopped_at IS NOT NULL)
);
-- Every remember, recall and night asks whether any experiment runs (sql/021-experiment-arms.sql).
CREATE INDEX experiments_running_idx ON cogmem.experiments (name) WHERE stopped_at IS NULL;
COMMENT ON TABLE cogmem.experiments IS
'Experiments on a tenant setting (parameter, a column of cogmem.tenants): its arms (a JSON array of '
'values, arm 1 first), the unit assigned to an arm (tenant or session), the metric compared, the salt '
'of the assignment, and when it stopped and which arm was adopted. Written by cogmem.experiment_*().';

CREATE TABLE cogmem.experiment_tenants (
    tenant     text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    experiment text NOT NULL REFERENCES cogmem.experiments ON DELETE CASCADE,
    arm        smallint CHECK (arm >= 1),
    PRIMARY KEY (tenant, experiment)
);
COMMENT ON TABLE cogmem.experiment_tenants IS
'The tenants an experiment enrols, and the arm of each (NULL when the unit is the session: each session '
'of the tenant is assigned by its own hash).';
CREATE INDEX experiment_tenants_experiment_idx ON cogmem.experiment_tenants (experiment);
""")


def downgrade() -> None:
    execute("DROP TABLE cogmem.experiment_tenants, cogmem.experiments;")
