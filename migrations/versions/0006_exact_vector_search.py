"""Vector search is exact within a tenant (the global HNSW index goes); batch remember's working row.

Every vector query is filtered by tenant. With 1,000 tenants a global HNSW graph holds about a thousand
other tenants' rows for each row of the one asked about, so an iterative index scan must walk ~1,000x
the candidates to fill a top-k (and stops at hnsw.max_scan_tuples with fewer), while a scan of the
tenant's own rows through memories_tenant_ring_idx is exact and reads only those rows. The index also
cost ~6 ms per INSERT on random 384-dimension vectors (bench/run.py), capping remember near 150/s.
A tenant that outgrows exact search gets its own partial index (docs/scaling.md).

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
    execute("DROP TYPE IF EXISTS cogmem._batch_item;")
    execute("CREATE INDEX memories_embedding_idx ON cogmem.memories USING hnsw (embedding public.vector_cosine_ops);")
