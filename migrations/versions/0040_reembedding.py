"""Issue 47: re-embedding a tenant into another model's vector space, online. A re-embedding is one row
per tenant (from which model to which); the new vectors wait beside the old ones, keyed by what they embed
and the digest of the text they were made from, until cogmem.reembed_finish swaps them in one transaction.

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-05
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0040"
down_revision = "0039"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
CREATE TABLE cogmem.reembeddings (
    tenant      text PRIMARY KEY REFERENCES cogmem.tenants (tenant) ON DELETE CASCADE,
    from_model  text NOT NULL,
    to_model    text NOT NULL CONSTRAINT reembeddings_to_model_name CHECK (to_model ~ '^[[:graph:]]{1,100}$'),
    started_at  timestamptz NOT NULL DEFAULT now(),
    started_by  text NOT NULL DEFAULT session_user,
    CONSTRAINT reembeddings_other_model CHECK (to_model <> from_model)
);
COMMENT ON TABLE cogmem.reembeddings IS
'A tenant''s re-embedding under way: its vectors, made by from_model, are being made again by to_model '
'(cogmem.reembed_begin ... reembed_finish).';

CREATE TABLE cogmem.reembedded_vectors (
    tenant     text NOT NULL REFERENCES cogmem.reembeddings (tenant) ON DELETE CASCADE,
    kind       text NOT NULL CONSTRAINT reembedded_vectors_kind CHECK (kind IN ('memory', 'chunk', 'turn', 'conflict')),
    id         bigint NOT NULL,
    text_md5   uuid NOT NULL,
    embedding  public.vector(384) NOT NULL,
    PRIMARY KEY (tenant, kind, id)
);
-- The Gut pools tenants of different models: each contribution and pattern says which model made its
-- vector, and vectors of two models are never compared (cogmem_pg/gut.py).
ALTER TABLE cogmem.gut_contributions
    ADD COLUMN embedding_model text NOT NULL DEFAULT 'all-MiniLM-L6-v2-onnx-int8';
ALTER TABLE cogmem.gut_patterns
    ADD COLUMN embedding_model text NOT NULL DEFAULT 'all-MiniLM-L6-v2-onnx-int8';
COMMENT ON COLUMN cogmem.gut_contributions.embedding_model IS 'The model of the embedding (its tenant''s).';
COMMENT ON COLUMN cogmem.gut_patterns.embedding_model IS
'The model of the pattern''s vector: tenants of another model match it by its topics only.';

COMMENT ON TABLE cogmem.reembedded_vectors IS
'The new model''s vectors of a re-embedding, waiting for the swap: per memory, chunk, turn or conflict, with '
'the digest of the text embedded (a text changed since is embedded again).';
""")


def downgrade() -> None:
    # sql/022-reembed.sql's helper returns the table's row type, and sql/068-gut.sql's export (BEGIN ATOMIC)
    # names the new column; the others only name them in their bodies. The sql files make them again.
    execute("""
DROP FUNCTION IF EXISTS cogmem._reembedding(text);
DROP FUNCTION IF EXISTS cogmem._gut_export_rows();
ALTER TABLE cogmem.gut_patterns DROP COLUMN embedding_model;
ALTER TABLE cogmem.gut_contributions DROP COLUMN embedding_model;
DROP TABLE cogmem.reembedded_vectors;
DROP TABLE cogmem.reembeddings;
""")
