"""Speed at scale: exact vector search per tenant, no per-row checks on recall's hot path, batch remember.

Every vector query is filtered by tenant. The global HNSW index cost ~6 ms per INSERT on random
384-dimension vectors (bench/run.py), capping remember near 150/s, and with 1,000 tenants its graph
holds ~1,000 other tenants' rows for each row asked about, so a filtered (iterative) scan walks more
candidates the more the table grows. A scan of the tenant's own rows through memories_tenant_ring_idx
is exact and reads only those rows.
What a tenant that outgrows exact search would need is in docs/scaling.md.

Recall now reads the tenant's rows once for all three signals (sql/070-recall.sql), so the global GIN
indexes on memories.search and memories.topics serve no query; they only slowed every write.

recall_items loses its foreign key to recalls: recall writes both rows itself, and the key's per-row
check was ~200 lookups per recall (a 3,200-token budget holds ~200 short memories). A statement-level
trigger (sql/070-recall.sql) keeps the cascade: deleting recalls deletes their items.

memories.embedding_bits, the sign bits of the embedding (pgvector's binary_quantize), is covered by an
index on (tenant, memory_id): remember's near-duplicate check reads those 48-byte entries with an
index-only scan and compares full vectors only for the few within a Hamming radius, instead of
reading every row of the tenant (~2 us each).

tenants.recall_min_strength: a learned memory whose Ebbinghaus strength has fallen below it is no longer
injected (it stays stored until the night forgets it). Without it a fact superseded weeks ago still
filled the budget whenever it matched, and each such recall rehearsed it, so it never faded.

cogmem._batch_item is one prepared item of cogmem.remember_many() (sql/060-remember.sql), carried
between its statements as an array.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
DROP INDEX IF EXISTS cogmem.memories_embedding_idx;
DROP INDEX IF EXISTS cogmem.memories_search_idx;
DROP INDEX IF EXISTS cogmem.memories_topics_idx;
ALTER TABLE cogmem.recall_items DROP CONSTRAINT recall_items_tenant_recall_id_fkey;
ALTER TABLE cogmem.memories ADD COLUMN embedding_bits bit(384)
    GENERATED ALWAYS AS (public.binary_quantize(embedding)::bit(384)) STORED;
CREATE INDEX memories_tenant_bits_idx ON cogmem.memories (tenant, memory_id) INCLUDE (embedding_bits);
ALTER TABLE cogmem.tenants
    ADD COLUMN recall_min_strength real NOT NULL DEFAULT 0.05 CHECK (recall_min_strength BETWEEN 0 AND 1);
COMMENT ON COLUMN cogmem.tenants.recall_min_strength IS
'Learned memories weaker than this (Ebbinghaus strength) are not injected; never-cut rings always are.';
CREATE TYPE cogmem._batch_item AS (
    item integer,
    content text,
    ring cogmem.ring,
    routed boolean,
    topics text[],
    embedding public.vector,
    source jsonb,
    redactions text[],
    fingerprint text
);
COMMENT ON TYPE cogmem._batch_item IS 'One prepared item of cogmem.remember_many() (internal).';
""")


def downgrade() -> None:
    execute("DROP FUNCTION IF EXISTS cogmem.remember_many(text, jsonb, public.vector[]);")
    execute("ALTER TABLE cogmem.tenants DROP COLUMN IF EXISTS recall_min_strength;")
    execute("ALTER TABLE cogmem.memories DROP COLUMN IF EXISTS embedding_bits;")
    execute("DROP TYPE IF EXISTS cogmem._batch_item;")
    execute(r"""
DROP TRIGGER IF EXISTS recalls_forget_items ON cogmem.recalls;
DROP TRIGGER IF EXISTS recalls_truncate_items ON cogmem.recalls;
DROP FUNCTION IF EXISTS cogmem._forget_recall_items();
DELETE FROM cogmem.recall_items AS i
WHERE NOT EXISTS (SELECT FROM cogmem.recalls AS r WHERE r.tenant = i.tenant AND r.recall_id = i.recall_id);
ALTER TABLE cogmem.recall_items ADD FOREIGN KEY (tenant, recall_id) REFERENCES cogmem.recalls ON DELETE CASCADE;
CREATE INDEX memories_search_idx ON cogmem.memories USING gin (search);
CREATE INDEX memories_topics_idx ON cogmem.memories USING gin (topics);
""")
    execute("CREATE INDEX memories_embedding_idx ON cogmem.memories USING hnsw (embedding public.vector_cosine_ops);")
