"""Issue 51: a store item's own vectors, made by the caller's embedding function (LangGraph's `index`), of
whatever dimension that function gives: `embeddings` holds one vector per text the index fields chose, and
`embedded_fields` the path each came from ('title', 'tags.0' when a path gives several texts).

The column has no fixed dimension, so no ANN index can cover it: a search compares the query with the
vectors of the items under its namespace prefix, exactly (sql/180-store.sql), as LangGraph's PostgresStore
does too. An item's memory keeps its own vector, of the tenant's model, in cogmem.memories.

Revision ID: 0044
Revises: 0043
Create Date: 2026-12-08
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0044"
down_revision = "0043"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.store_items
    ADD COLUMN embedded_fields text[],
    ADD COLUMN embeddings public.vector[],
    ADD CONSTRAINT store_items_embeddings_check
        CHECK (cardinality(embeddings) IS NOT DISTINCT FROM cardinality(embedded_fields));
COMMENT ON COLUMN cogmem.store_items.embedded_fields IS
'The path of the value each of embeddings was made from (LangGraph''s index fields); NULL: none.';
COMMENT ON COLUMN cogmem.store_items.embeddings IS
'The item''s vectors, by the caller''s embedding function (any one dimension); a search with the query''s '
'vector of that function scores the item by the best of them. NULL: none (the memory''s vector serves).';
""")


def downgrade() -> None:
    execute("""
ALTER TABLE cogmem.store_items
    DROP CONSTRAINT store_items_embeddings_check,
    DROP COLUMN embeddings,
    DROP COLUMN embedded_fields;
""")
