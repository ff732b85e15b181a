"""A tenant's own BIOS rules and preset loads get ids that carry the tenant's routing key.

Global rules and loads are made on every shard in the same order, so their ids (the identities) agree
everywhere. A tenant's own rule or load is made on its shard only: drawn from the same identity, it
would move every later global id on that shard. Its id is now 2^62 + the tenant's key
(cogmem._tenant_key) * 2^31 + a number from this sequence (cogmem._keyed_bios_id), so that the router
finds the shard of a rule id and a tenant can move to another shard with its rules and loads. Rows
made before keep their ids.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-02
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
CREATE SEQUENCE cogmem.bios_tenant_id_seq AS bigint MINVALUE 1 MAXVALUE 2147483647 NO CYCLE;
COMMENT ON SEQUENCE cogmem.bios_tenant_id_seq IS
'The low 31 bits of the id of a tenant''s own BIOS rule or preset load (cogmem._keyed_bios_id).';
""")


def downgrade() -> None:
    # The function that draws from it goes too (sql/050-bios.sql makes it again).
    execute("DROP FUNCTION IF EXISTS cogmem._keyed_bios_id(text, regclass);")
    execute("DROP SEQUENCE cogmem.bios_tenant_id_seq;")
