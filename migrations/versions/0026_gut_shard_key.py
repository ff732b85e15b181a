"""The Gut's shard key: what proves that a release or an export was made by a node of this cluster.

- gut_shard_key: one row, a random key shared by every node of a sharded layout (written by the
  installer's role: `cogmem shards init`, or cogmem_pg.shards.share_gut_key against real servers).
  The node that draws a release signs it with this key (HMAC), and so does a node exporting its
  contributions; gut_import and a release over gathered rows accept nothing the key did not sign. A
  single node has no key, and imports nothing. No application role, not even cogmem_gut or
  cogmem_admin, reads it; the API's definer functions do (sql/110-isolation.sql, sql/999-privileges.sql).

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-03
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
CREATE TABLE cogmem.gut_shard_key (
    only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    shard_key bytea NOT NULL CHECK (length(shard_key) >= 32),
    shared_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cogmem.gut_shard_key IS
'The key every node of a sharded layout shares, which signs Gut releases and exports (HMAC). No role '
'but the owner reads it; a single node has none.';
ALTER TABLE cogmem.gut_shard_key ENABLE ROW LEVEL SECURITY;
""")


def downgrade() -> None:
    execute("DROP TABLE cogmem.gut_shard_key;")
