"""Sibling links are cleaned up once per DELETE statement, not by a foreign-key cascade per row.

A night forgets hundreds of thousands of memories. Each cascade ran a cached per-row plan against
memory_siblings, planned while that table was still empty, so every deleted memory cost a sequential
scan of all links: the night grew with the square of the data. sql/090-consolidation.sql replaces the
cascades with a statement-level trigger that removes the links of all deleted memories in one join.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
ALTER TABLE cogmem.memory_siblings
    DROP CONSTRAINT memory_siblings_tenant_memory_id_fkey,
    DROP CONSTRAINT memory_siblings_tenant_sibling_id_fkey;
""")


def downgrade() -> None:
    execute(r"""
DROP TRIGGER IF EXISTS memories_forget_sibling_links ON cogmem.memories;
DROP TRIGGER IF EXISTS memories_truncate_sibling_links ON cogmem.memories;
DROP FUNCTION IF EXISTS cogmem._forget_sibling_links();
DELETE FROM cogmem.memory_siblings AS l
WHERE NOT EXISTS (SELECT FROM cogmem.memories AS m WHERE m.tenant = l.tenant AND m.memory_id = l.memory_id)
   OR NOT EXISTS (SELECT FROM cogmem.memories AS m WHERE m.tenant = l.tenant AND m.memory_id = l.sibling_id);
ALTER TABLE cogmem.memory_siblings
    ADD FOREIGN KEY (tenant, memory_id) REFERENCES cogmem.memories ON DELETE CASCADE,
    ADD FOREIGN KEY (tenant, sibling_id) REFERENCES cogmem.memories ON DELETE CASCADE;
""")
