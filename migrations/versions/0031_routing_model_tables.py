"""The inbound router's model as data: tables the installer fills from cogmem_pg/data/routing-model.json.

The weights used to be a generated SQL file of literals (sql/025-routing-model.sql); they are now a JSON
file checked against its pinned sha256 and loaded by cogmem_pg.migrate.load_routing_model on every
install whose hash differs from the loaded one. Shared by all tenants; only the installer writes them,
and the API's definer functions read them.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-03
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
CREATE TABLE cogmem.routing_model_version (
    only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    sha256    text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    cues      text[] NOT NULL,
    metadata  jsonb NOT NULL,
    loaded_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cogmem.routing_model_version IS
'The routing model loaded (one row): the sha256 of its file, the cues it was trained on in order, and '
'what bench/train_router.py said of it (commit, counts, thresholds).';

CREATE TABLE cogmem.routing_model (
    model               text NOT NULL,
    head                text NOT NULL,
    label               text NOT NULL,
    slot                integer NOT NULL CHECK (slot >= 0),
    bias                real NOT NULL,
    threshold           real NOT NULL,
    candidate_threshold real NOT NULL,
    weights             public.vector NOT NULL,
    PRIMARY KEY (model, head, label),
    UNIQUE (model, head, slot)
);
COMMENT ON TABLE cogmem.routing_model IS
'The routing model per model (embedding, cues, pair-embedding, pair-cues; -long for long texts), head '
'and label: the label''s slot in its head, the bias, the threshold a never-cut ring, an instruction or '
'a contradiction needs, that of a candidate, and the weights of the dense features.';

CREATE TABLE cogmem.routing_terms (
    model   text NOT NULL,
    head    text NOT NULL,
    term    text NOT NULL,
    weights double precision[] NOT NULL,
    PRIMARY KEY (model, term, head)  -- a statement's terms are looked up by model and term
);
COMMENT ON TABLE cogmem.routing_terms IS
'The routing model''s term weights (words, word pairs, suffixes of cogmem._inbound_terms): per model, '
'head and term, its weight for each label, in slot order.';
""")


def downgrade() -> None:
    execute("DROP TABLE cogmem.routing_terms, cogmem.routing_model, cogmem.routing_model_version;")
