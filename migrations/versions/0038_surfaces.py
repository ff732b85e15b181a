"""Issue 46's surfaces: the keyed store's keys carry their person; resources (none yet).

The store: an item is keyed by (tenant, person, namespace, key), so a grant narrowed to one person writes
its own item under a namespace and key another person uses, instead of failing on that person's row (a
42501 that told it the key existed). A key's columns cannot be NULL: person_key is the person, '' for an
item of no person (a person's name is never empty).

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-05
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0038"
down_revision = "0037"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # -- the store ---------------------------------------------------------------------------------------
    execute("""
ALTER TABLE cogmem.store_items
    ADD COLUMN person_key text GENERATED ALWAYS AS (coalesce(person, '')) STORED NOT NULL,
    DROP CONSTRAINT store_items_pkey,
    ADD CONSTRAINT store_items_pkey PRIMARY KEY (tenant, person_key, namespace, key);
COMMENT ON COLUMN cogmem.store_items.person_key IS
'The person in the item''s key: its person, '''' for none (each person has its own namespaces and keys).';
""")
    # -- resources ---------------------------------------------------------------------------------------


def downgrade() -> None:
    # -- resources ---------------------------------------------------------------------------------------
    # -- the store ---------------------------------------------------------------------------------------
    # Items of several persons under one namespace and key cannot all stay under the old key: one stays
    # (the shared item, else the first person's); the others' memories stay, unlinked.
    execute("""
DELETE FROM cogmem.store_items AS i
WHERE i.person IS NOT NULL AND EXISTS (
    SELECT FROM cogmem.store_items AS o
    WHERE o.tenant = i.tenant AND o.namespace = i.namespace AND o.key = i.key AND o.person_key < i.person_key
);
ALTER TABLE cogmem.store_items DROP CONSTRAINT store_items_pkey;
ALTER TABLE cogmem.store_items ADD CONSTRAINT store_items_pkey PRIMARY KEY (tenant, namespace, key);
ALTER TABLE cogmem.store_items DROP COLUMN person_key;
""")
