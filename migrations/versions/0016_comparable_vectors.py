"""Stored vectors can be compared: no zero (or under- or overflowing) embedding is kept.

The cosine of a zero vector is NaN, and PostgreSQL orders NaN above every number, so `NaN > 0.92` is
true: a night took such a memory for a near-duplicate of everything. The API refuses these vectors
(sql/000-helpers.sql, _check_embedding); this revision drops the ones already stored (the memory and its
text stay, found by full text) and a CHECK keeps any from coming back by another route.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

TABLES = ("memories", "sensory_turns", "conflicts")


def upgrade() -> None:
    for table in TABLES:
        execute(f"""
UPDATE cogmem.{table} SET embedding = NULL
WHERE embedding IS NOT NULL AND NOT (embedding OPERATOR(public.<=>) embedding) < 0.001;
ALTER TABLE cogmem.{table} ADD CONSTRAINT {table}_embedding_comparable
    CHECK (embedding IS NULL OR (embedding OPERATOR(public.<=>) embedding) < 0.001);
""")


def downgrade() -> None:
    for table in TABLES:
        execute(f"ALTER TABLE cogmem.{table} DROP CONSTRAINT {table}_embedding_comparable;")
