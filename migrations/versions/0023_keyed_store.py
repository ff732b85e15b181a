"""A keyed store beside the memories, for frameworks that address memory by namespace and key.

- store_items: per tenant, a value (jsonb) under a namespace (a path of labels) and a key, as a
  framework put it (LangGraph's BaseStore: cogmem_pg.langgraph). Its text, when indexed, is also a
  memory (memory_id), so recall and search see it with every signal a memory has. owns_memory says
  the memory was created for the item (not a near-duplicate it was linked to), so replacing or
  deleting the item erases it. expires_at: an item put with a time to live. A deleted memory unlinks
  its item (the trigger that removes statistics, sql/090-consolidation.sql), which keeps its value.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
CREATE TABLE cogmem.store_items (
    tenant      text NOT NULL REFERENCES cogmem.tenants (tenant) ON DELETE CASCADE,
    namespace   text[] NOT NULL CHECK (cardinality(namespace) BETWEEN 1 AND 32),
    key         text NOT NULL CHECK (key <> '' AND length(key) <= 1000),
    value       jsonb NOT NULL CHECK (jsonb_typeof(value) = 'object'),
    memory_id   bigint,
    owns_memory boolean NOT NULL DEFAULT false,
    conflict_id bigint,
    ttl_minutes double precision CHECK (ttl_minutes > 0),
    expires_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, namespace, key)
);
CREATE INDEX store_items_memory ON cogmem.store_items (tenant, memory_id) WHERE memory_id IS NOT NULL;
CREATE INDEX store_items_expiry ON cogmem.store_items (tenant, expires_at) WHERE expires_at IS NOT NULL;
COMMENT ON TABLE cogmem.store_items IS
'Values under a namespace and key (a framework''s keyed store); an indexed value''s text is also a memory.';
COMMENT ON COLUMN cogmem.store_items.owns_memory IS
'The memory was created for this item, so replacing or deleting the item erases it.';
""")


def downgrade() -> None:
    execute("DROP TABLE cogmem.store_items;")
