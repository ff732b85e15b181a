"""Candidates said again in other words: how close in meaning a new candidate must be to an older one.

A rule said twice in other words is the rule said again (issue 31): a new candidate of the same ring whose
embedding is at least this close to an older candidate's raises that one's probability, as a restatement
of the same text does. Paraphrases of a rule sit below the night's sibling_similarity, hence a setting of
its own.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-03
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.tenants
    ADD COLUMN candidate_restated_similarity real NOT NULL DEFAULT 0.7
        CHECK (candidate_restated_similarity BETWEEN 0 AND 1);
COMMENT ON COLUMN cogmem.tenants.candidate_restated_similarity IS
'A new candidate rule or incident at least this close in meaning (cosine) to an older candidate of the '
'same ring is that one said again in other words: the older one''s probability rises.';
""")


def downgrade() -> None:
    execute("ALTER TABLE cogmem.tenants DROP COLUMN candidate_restated_similarity;")
