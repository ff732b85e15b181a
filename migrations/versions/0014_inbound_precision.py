"""Inbound precision: facts that contradict older facts are kept and linked; feedback names what was used.

- cogmem.memory_contradictions: a statement of fact stored although it contradicts an older memory
  (only an instruction is held as a conflict): the link, the verdict (detected or the caller's) and
  whether the older memory was weakened. Recall notes it on both; links go with their memories.
- recalls.feedback_used: the memories a cycle's feedback credited, when the caller named them
  (NULL: every memory the cycle injected), so that repeated feedback replaces exactly what it gave.
- tenants.sibling_similarity: the night links look-alikes whose details differ from this cosine on
  (0.85; merging stays at merge_similarity, 0.92): on the duplicate pairs of bench/corpus, siblings
  sit at a median cosine of 0.93 and a quarter below 0.86, distinct look-alikes at 0.67.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
CREATE TABLE cogmem.memory_contradictions (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    contradicts_id bigint NOT NULL,
    verdict text NOT NULL CHECK (verdict IN ('detected', 'caller')),
    weakened boolean NOT NULL,
    linked_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, memory_id, contradicts_id),
    CHECK (memory_id <> contradicts_id)
);
COMMENT ON TABLE cogmem.memory_contradictions IS
'A newer memory (memory_id) stored although it contradicts an older one (contradicts_id): facts are kept, '
'never held; weakened says whether the older memory lost confidence (protected rings never do).';
CREATE INDEX memory_contradictions_older_idx ON cogmem.memory_contradictions (tenant, contradicts_id);

ALTER TABLE cogmem.recalls ADD COLUMN feedback_used bigint[];
ALTER TABLE cogmem.tenants ADD COLUMN sibling_similarity real NOT NULL DEFAULT 0.85
    CHECK (sibling_similarity BETWEEN 0 AND 1);
COMMENT ON COLUMN cogmem.recalls.feedback_used IS
'The memories the feedback credited when the caller named them; NULL: every memory the cycle injected.';
""")


def downgrade() -> None:
    execute("""
ALTER TABLE cogmem.tenants DROP COLUMN sibling_similarity;
ALTER TABLE cogmem.recalls DROP COLUMN feedback_used;
DROP TABLE cogmem.memory_contradictions;
""")
