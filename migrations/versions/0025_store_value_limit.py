"""A size limit for keyed store values, per tenant.

A value of any size was taken, and its redaction held a backend for as long as it ran. Now a value
(its JSON text, in bytes) over the tenant's max_store_value_bytes is refused whole (22001), never cut;
administrators change it with configure_tenant like the other limits (revision 0017).

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-03
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.tenants
    ADD COLUMN max_store_value_bytes integer NOT NULL DEFAULT 1048576
        CHECK (max_store_value_bytes BETWEEN 2 AND 67108864);
COMMENT ON COLUMN cogmem.tenants.max_store_value_bytes IS
'Largest keyed store value (cogmem.store_put), as JSON text in bytes.';
""")


def downgrade() -> None:
    execute("ALTER TABLE cogmem.tenants DROP COLUMN max_store_value_bytes;")
