"""Limits where limits belong: how many topics a memory carries, how long each is, how large its source.

Ten thousand topics, a 100,000-character topic and a 5 MB source were all stored: each is copied into
every recall's candidates and every export. Per tenant, with defaults far above what people write.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.tenants
    ADD COLUMN max_topics integer NOT NULL DEFAULT 32 CHECK (max_topics BETWEEN 1 AND 1000),
    ADD COLUMN max_topic_chars integer NOT NULL DEFAULT 100 CHECK (max_topic_chars BETWEEN 1 AND 1000),
    ADD COLUMN max_source_bytes integer NOT NULL DEFAULT 16384 CHECK (max_source_bytes BETWEEN 2 AND 1048576);
COMMENT ON COLUMN cogmem.tenants.max_topics IS 'Most topics one memory may carry.';
COMMENT ON COLUMN cogmem.tenants.max_topic_chars IS 'Longest topic, in characters.';
COMMENT ON COLUMN cogmem.tenants.max_source_bytes IS 'Largest source (provenance) of a memory, as JSON text in bytes.';
""")


def downgrade() -> None:
    execute(
        "ALTER TABLE cogmem.tenants DROP COLUMN max_topics, DROP COLUMN max_topic_chars, DROP COLUMN max_source_bytes;"
    )
