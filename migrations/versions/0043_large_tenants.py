"""Issue 50: one tenant with a million memories. The covering index on (tenant, memory_id) also carries
each memory's topics, so that a large tenant's recall finds its most recent memories on the message's
topics from the index alone (sql/016-large-tenants.sql); the tenant's own HNSW and GIN indexes are made
by `cogmem index-tenants`, not by a revision.

The index is built before the old one is dropped, so reads keep an index meanwhile; writes wait for the
build (minutes on a table of millions: run the upgrade in a quiet hour).

Revision ID: 0043
Revises: 0042
Create Date: 2026-12-06
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0043"
down_revision = "0042"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
CREATE INDEX memories_tenant_bits_idx_new ON cogmem.memories (tenant, memory_id)
    INCLUDE (embedding_bits, ring, created_at, updated_at, person, agent, topics);
DROP INDEX cogmem.memories_tenant_bits_idx;
ALTER INDEX cogmem.memories_tenant_bits_idx_new RENAME TO memories_tenant_bits_idx;
""")


def downgrade() -> None:
    # The lookup view of sql/016-large-tenants.sql reads columns that earlier revisions drop.
    execute("""
DROP VIEW IF EXISTS cogmem._memory_lookup;
CREATE INDEX memories_tenant_bits_idx_old ON cogmem.memories (tenant, memory_id)
    INCLUDE (embedding_bits, ring, created_at, updated_at, person, agent);
DROP INDEX cogmem.memories_tenant_bits_idx;
ALTER INDEX cogmem.memories_tenant_bits_idx_old RENAME TO memories_tenant_bits_idx;
""")
