"""The nightly consolidation at 1M memories: statistics go with their memory once per statement, and the
memories changed since the last night are found in an index.

- memory_stats and learnings lose their foreign keys to memories. A first night over a million memories
  forgets ~400,000 of them, and each key's cascade ran one DELETE per forgotten memory (~13 ms of a
  tenant's ~75 ms night, bench/consolidation.py). The statement-level trigger that already removed
  sibling links (migration 0004) now removes both, with one index range per statement. Statistics are
  inserted in the transaction that inserts their memory; report_error() locks the memory (FOR KEY
  SHARE, as the key's check did) before it records a learning, so no row can be orphaned by a race.
- memories_tenant_bits_idx also carries ring, created_at and updated_at. The night's near-duplicate
  search starts from the memories new or changed since the tenant's previous night, and fading looks at
  each unused memory's ring and age; both read every row of the tenant (~2 KB each, one page per row
  when tenants write in turn: ~8 ms a tenant each). Now index-only scans of this index answer them, and
  remember() already reads it for its duplicate check, so no new index is maintained on writes.
  Rebuilding it takes seconds per million memories. A night over 1M memories: 75.7 s -> 60.3 s.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
ALTER TABLE cogmem.memory_stats DROP CONSTRAINT memory_stats_tenant_memory_id_fkey;
ALTER TABLE cogmem.learnings DROP CONSTRAINT learnings_tenant_memory_id_fkey;
DROP TRIGGER IF EXISTS memories_forget_sibling_links ON cogmem.memories;
DROP TRIGGER IF EXISTS memories_truncate_sibling_links ON cogmem.memories;
DROP FUNCTION IF EXISTS cogmem._forget_sibling_links();
CREATE INDEX memories_tenant_bits_idx_new ON cogmem.memories (tenant, memory_id)
    INCLUDE (embedding_bits, ring, created_at, updated_at);
DROP INDEX cogmem.memories_tenant_bits_idx;
ALTER INDEX cogmem.memories_tenant_bits_idx_new RENAME TO memories_tenant_bits_idx;
""")


def downgrade() -> None:
    execute(r"""
DROP TRIGGER IF EXISTS memories_forget_keyed_rows ON cogmem.memories;
DROP TRIGGER IF EXISTS memories_truncate_keyed_rows ON cogmem.memories;
DROP FUNCTION IF EXISTS cogmem._forget_keyed_rows();
CREATE FUNCTION cogmem._forget_sibling_links()
RETURNS trigger
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF tg_op = 'TRUNCATE' THEN
        DELETE FROM cogmem.memory_siblings;
        RETURN NULL;
    END IF;
    DELETE FROM cogmem.memory_siblings AS l USING gone AS g
    WHERE l.tenant = g.tenant AND l.memory_id = g.memory_id;
    DELETE FROM cogmem.memory_siblings AS l USING gone AS g
    WHERE l.tenant = g.tenant AND l.sibling_id = g.memory_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER memories_forget_sibling_links AFTER DELETE ON cogmem.memories REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._forget_sibling_links();
CREATE TRIGGER memories_truncate_sibling_links AFTER TRUNCATE ON cogmem.memories
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._forget_sibling_links();
DELETE FROM cogmem.memory_stats AS s
WHERE NOT EXISTS (SELECT FROM cogmem.memories AS m WHERE m.tenant = s.tenant AND m.memory_id = s.memory_id);
ALTER TABLE cogmem.memory_stats
    ADD FOREIGN KEY (tenant, memory_id) REFERENCES cogmem.memories ON DELETE CASCADE;
DELETE FROM cogmem.learnings AS l
WHERE NOT EXISTS (SELECT FROM cogmem.memories AS m WHERE m.tenant = l.tenant AND m.memory_id = l.memory_id);
ALTER TABLE cogmem.learnings
    ADD FOREIGN KEY (tenant, memory_id) REFERENCES cogmem.memories ON DELETE CASCADE;
CREATE INDEX memories_tenant_bits_idx_old ON cogmem.memories (tenant, memory_id) INCLUDE (embedding_bits);
DROP INDEX cogmem.memories_tenant_bits_idx;
ALTER INDEX cogmem.memories_tenant_bits_idx_old RENAME TO memories_tenant_bits_idx;
""")
