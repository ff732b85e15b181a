"""Issue 47: one vector space per tenant. tenants.embedding_model names the model that made every vector
of the tenant: the memories', chunks', store items' and turns' alike. Tenants before it were embedded by
all-MiniLM-L6-v2 (int8), the only model there was.

Revision ID: 0039
Revises: 0038
Create Date: 2026-12-05
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0039"
down_revision = "0038"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.tenants
    ADD COLUMN embedding_model text NOT NULL DEFAULT 'all-MiniLM-L6-v2-onnx-int8'
        CONSTRAINT tenants_embedding_model_name CHECK (embedding_model ~ '^[[:graph:]]{1,100}$');
COMMENT ON COLUMN cogmem.tenants.embedding_model IS
'The model that made every vector of this tenant (one vector space per tenant); a re-embedding changes it.';
""")


def downgrade() -> None:
    execute("ALTER TABLE cogmem.tenants DROP COLUMN embedding_model;")
