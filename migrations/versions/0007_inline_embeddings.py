"""Keep each memory's embedding in its row.

A memory row is ~2 KB: a 384-dimension embedding (1,544 bytes, storage EXTERNAL, it does not compress)
plus text, its tsvector and topics. PostgreSQL moves values out of line until a row fits
toast_tuple_target, 2,032 bytes by default, so one row in eight (those with a longer text) had its
embedding in the TOAST table: every recall, which reads each of the tenant's embeddings, paid a TOAST
index lookup and a second page for each (bench/scale.py: a tenant scan took 2.0 ms instead of 1.3 ms).
With the target at its maximum a row stays whole up to a page; a row with a text too long for that is
toasted as before.

Existing rows keep their layout until they are rewritten (VACUUM FULL cogmem.memories, or pg_repack,
in a maintenance window); new and updated rows are stored whole.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("ALTER TABLE cogmem.memories SET (toast_tuple_target = 8160);")


def downgrade() -> None:
    execute("ALTER TABLE cogmem.memories RESET (toast_tuple_target);")
