"""Resource memory (issue 35, part B): documents beside the rings, chunked by structure, versioned.

A resource (a runbook, a policy, a template, a contract) is kept whole and redacted in cogmem.resources,
one row per version; its chunks (a section, or the part of one that fits a chunk) in
cogmem.resource_chunks, each with its heading path, its full text search vector and its embedding. A new
version supersedes the old one's chunks: they stop being recalled and stay, with the old body, for the
audit. Resources do not decay; they are replaced.

Recall gives them a layer of their own, 'resources', added to cogmem.layer here. A new enum value cannot
be used in the transaction that adds it, so this revision only adds it: a tenant's 'resources' layer row
is written when it first adds a resource (sql/069-resources.sql), after the install has committed.

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-04
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TYPE cogmem.layer ADD VALUE IF NOT EXISTS 'resources';

CREATE TABLE cogmem.resources (
    tenant        text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    resource_id   bigint GENERATED ALWAYS AS IDENTITY,
    title         text NOT NULL CHECK (btrim(title) <> '' AND length(title) <= 300),
    kind          text NOT NULL DEFAULT 'document' CHECK (kind ~ '^[a-z][a-z_]{0,39}$'),
    version       integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    body          text NOT NULL CHECK (body <> ''),
    body_sha256   bytea NOT NULL,
    redactions    text[] NOT NULL DEFAULT '{}',
    source        jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(source) = 'object'),
    person        text GENERATED ALWAYS AS (nullif(btrim(source ->> 'person'), '')) STORED
                  CHECK (length(person) BETWEEN 1 AND 200),
    agent         text GENERATED ALWAYS AS (nullif(btrim(source ->> 'agent'), '')) STORED
                  CHECK (length(agent) BETWEEN 1 AND 200),
    created_at    timestamptz NOT NULL DEFAULT now(),
    superseded_at timestamptz,
    superseded_by bigint,
    PRIMARY KEY (tenant, resource_id),
    CHECK (superseded_by IS NULL OR superseded_at IS NOT NULL)
);
-- One current version per title and scope; a new version supersedes it.
CREATE UNIQUE INDEX resources_current_key ON cogmem.resources (tenant, lower(title), person, agent)
    NULLS NOT DISTINCT WHERE superseded_at IS NULL;
COMMENT ON TABLE cogmem.resources IS
'Documents (runbooks, policies, templates, contracts), one row per version, redacted; recalled through '
'their chunks (cogmem.resource_chunks). Written by cogmem.add_resource().';
COMMENT ON COLUMN cogmem.resources.body IS 'The document as stored (redacted): export writes it, import adds it again.';
COMMENT ON COLUMN cogmem.resources.superseded_at IS
'When a newer version (superseded_by) or a retirement replaced it; its chunks are no longer recalled.';

CREATE TABLE cogmem.resource_chunks (
    tenant         text NOT NULL,
    chunk_id       bigint GENERATED ALWAYS AS IDENTITY,
    resource_id    bigint NOT NULL,
    position       integer NOT NULL CHECK (position >= 1),
    heading        text NOT NULL DEFAULT '',
    content        text NOT NULL CHECK (content <> ''),
    language       regconfig NOT NULL DEFAULT 'english',
    search         tsvector GENERATED ALWAYS AS (to_tsvector(language, heading || ' ' || content)) STORED,
    token_estimate integer GENERATED ALWAYS AS (greatest(1, ceil(length(content) / 4.0)::integer)) STORED,
    embedding      public.vector(384),
    current        boolean NOT NULL DEFAULT true,
    person         text CHECK (length(person) BETWEEN 1 AND 200),
    agent          text CHECK (length(agent) BETWEEN 1 AND 200),
    PRIMARY KEY (tenant, chunk_id),
    FOREIGN KEY (tenant, resource_id) REFERENCES cogmem.resources ON DELETE CASCADE,
    CONSTRAINT resource_chunks_embedding_comparable
        CHECK (embedding IS NULL OR (embedding OPERATOR(public.<=>) embedding) < 0.001)
);
-- Recall reads a tenant's current chunks in one pass, as it reads its memories.
CREATE INDEX resource_chunks_current_idx ON cogmem.resource_chunks (tenant, chunk_id) WHERE current;
CREATE INDEX resource_chunks_resource_idx ON cogmem.resource_chunks (tenant, resource_id, position);
COMMENT ON TABLE cogmem.resource_chunks IS
'A resource''s chunks, by structure (a section, or the part of one that fits tenants.resource_chunk_tokens): '
'heading path, text, search vector, embedding; current = of the resource''s current version.';
COMMENT ON COLUMN cogmem.resource_chunks.heading IS
'The headings above the chunk, outermost first, joined by " > " (recall cites title § heading).';

ALTER TABLE cogmem.tenants
    ADD COLUMN resource_chunk_tokens integer NOT NULL DEFAULT 160 CHECK (resource_chunk_tokens BETWEEN 32 AND 2000),
    ADD COLUMN resource_suggest_chars integer NOT NULL DEFAULT 4000 CHECK (resource_suggest_chars >= 200);
COMMENT ON COLUMN cogmem.tenants.resource_chunk_tokens IS
'The most tokens a resource chunk holds: a longer section is split between its paragraphs, list items or sentences.';
COMMENT ON COLUMN cogmem.tenants.resource_suggest_chars IS
'remember() of a text longer than this still stores it, and suggests add_resource() in its result.';
""")


def downgrade() -> None:
    # An enum value cannot be dropped: 'resources' stays in cogmem.layer, unused.
    execute("""
DELETE FROM cogmem.tenant_layers WHERE layer::text = 'resources';
ALTER TABLE cogmem.tenants DROP COLUMN resource_chunk_tokens, DROP COLUMN resource_suggest_chars;
DROP TABLE cogmem.resource_chunks, cogmem.resources;
""")
