"""The same-text fingerprint sees through the disguises redaction sees through.

The fingerprint was a generated column over the raw text, so the same sentence with a zero-width space
(or in full-width letters) inside was stored a second time. It becomes a plain column, set by a trigger
(sql/060-remember.sql, cogmem._fingerprint: NFKC, format characters dropped, then case, punctuation and
spacing as before). Stored rows are refingerprinted, except where two memories stored apart would now
collide: the later ones keep their old fingerprint, so nothing is merged or lost by the upgrade.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

NEW = (
    "md5(btrim(lower(regexp_replace(regexp_replace(normalize(content, NFKC), "
    "'[\\u00AD\\u200B-\\u200D\\u2060\\uFEFF]', '', 'g'), '[[:space:][:punct:]]+', ' ', 'g'))))"
)


def upgrade() -> None:
    # A new column replaces the generated one (PostgreSQL 15 cannot turn a plain column back into a
    # generated one, so a downgrade re-adds it: both paths leave the column last, as a fresh install).
    execute(f"""
ALTER TABLE cogmem.memories ADD COLUMN fingerprint_new text;
WITH fresh AS (
    SELECT m.tenant, m.memory_id, m.fingerprint AS old, {NEW.replace("content", "m.content")} AS new
    FROM cogmem.memories AS m
), ranked AS (
    -- Per new fingerprint one memory takes it: the one it does not change, else the oldest.
    SELECT f.*, row_number() OVER (PARTITION BY f.tenant, f.new ORDER BY f.old = f.new DESC, f.memory_id) = 1 AS first
    FROM fresh AS f
)
UPDATE cogmem.memories AS m SET fingerprint_new = CASE WHEN r.first THEN r.new ELSE r.old END
FROM ranked AS r
WHERE m.tenant = r.tenant AND m.memory_id = r.memory_id;
""")
    execute("""
ALTER TABLE cogmem.memories DROP COLUMN fingerprint CASCADE;
ALTER TABLE cogmem.memories RENAME COLUMN fingerprint_new TO fingerprint;
ALTER TABLE cogmem.memories ALTER COLUMN fingerprint SET NOT NULL;
CREATE UNIQUE INDEX memories_tenant_fingerprint_key ON cogmem.memories (tenant, fingerprint);
COMMENT ON COLUMN cogmem.memories.fingerprint IS
'The normalised text (cogmem._fingerprint), unique per tenant: the same text is one memory.';
""")


def downgrade() -> None:
    execute("""
DROP TRIGGER IF EXISTS memories_fingerprint ON cogmem.memories;
ALTER TABLE cogmem.memories DROP COLUMN fingerprint CASCADE;
ALTER TABLE cogmem.memories ADD COLUMN fingerprint text GENERATED ALWAYS AS (
    md5(btrim(lower(regexp_replace(content, '[[:space:][:punct:]]+', ' ', 'g'))))
) STORED;
CREATE UNIQUE INDEX memories_tenant_fingerprint_key ON cogmem.memories (tenant, fingerprint);
""")
