"""A recall's items live in its own row, one array per field; cogmem.recall_items becomes a view.

A 3,200-token recall injects ~130 items in the bench workload (the never-cut rules and incidents of a
1,000-memory tenant are ~110 of them). One recall_items row per item cost ~4 ms of a 22 ms recall at
1M memories (bench/run.py): 130 heap rows and 260 index entries. The same items as six arrays in the
recalls row are one row and one TOAST value. Nothing queried items by memory (recall_items_memory_idx
served no query); feedback reads the array of the row it already locks.

cogmem.recall_items keeps its columns as a view (position counts from 1), so readers and BI tools see
no change; the statement-level trigger that cascaded deletes is gone with the table.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
ALTER TABLE cogmem.recalls
    ADD COLUMN item_layers cogmem.layer[] NOT NULL DEFAULT '{}',
    ADD COLUMN item_memory_ids bigint[] NOT NULL DEFAULT '{}',
    ADD COLUMN item_rule_ids bigint[] NOT NULL DEFAULT '{}',
    ADD COLUMN item_scores real[] NOT NULL DEFAULT '{}',
    ADD COLUMN item_tokens integer[] NOT NULL DEFAULT '{}',
    ADD COLUMN item_reasons text[] NOT NULL DEFAULT '{}',
    ADD CONSTRAINT recalls_items_aligned CHECK (
        cardinality(item_memory_ids) = cardinality(item_layers)
        AND cardinality(item_rule_ids) = cardinality(item_layers)
        AND cardinality(item_scores) = cardinality(item_layers)
        AND cardinality(item_tokens) = cardinality(item_layers)
        AND cardinality(item_reasons) = cardinality(item_layers)
    );
COMMENT ON COLUMN cogmem.recalls.item_layers IS
'What the recall injected, in order: one array per field, element i of each is item i (view cogmem.recall_items).';
UPDATE cogmem.recalls AS r
SET item_layers = i.layers, item_memory_ids = i.memory_ids, item_rule_ids = i.rule_ids, item_scores = i.scores,
    item_tokens = i.tokens, item_reasons = i.reasons
FROM (
    SELECT i.tenant, i.recall_id, array_agg(i.layer ORDER BY i.position) AS layers,
           array_agg(i.memory_id ORDER BY i.position) AS memory_ids,
           array_agg(i.rule_id ORDER BY i.position) AS rule_ids,
           array_agg(i.score ORDER BY i.position) AS scores, array_agg(i.tokens ORDER BY i.position) AS tokens,
           array_agg(i.reason ORDER BY i.position) AS reasons
    FROM cogmem.recall_items AS i GROUP BY i.tenant, i.recall_id
) AS i
WHERE r.tenant = i.tenant AND r.recall_id = i.recall_id;
DROP TRIGGER IF EXISTS recalls_forget_items ON cogmem.recalls;
DROP TRIGGER IF EXISTS recalls_truncate_items ON cogmem.recalls;
DROP FUNCTION IF EXISTS cogmem._forget_recall_items();
DROP TABLE cogmem.recall_items;
""")


def downgrade() -> None:
    execute(r"""
DROP VIEW IF EXISTS cogmem.recall_items;
CREATE TABLE cogmem.recall_items (
    tenant text NOT NULL,
    recall_id uuid NOT NULL,
    position smallint NOT NULL,
    layer cogmem.layer NOT NULL,
    memory_id bigint,
    rule_id bigint,
    score real NOT NULL,
    tokens integer NOT NULL,
    reason text NOT NULL,
    PRIMARY KEY (tenant, recall_id, position),
    CHECK ((memory_id IS NULL) <> (rule_id IS NULL))
);
COMMENT ON TABLE cogmem.recall_items IS 'What each recall injected, with layer, score, tokens and reason.';
CREATE INDEX recall_items_memory_idx ON cogmem.recall_items (tenant, memory_id);
INSERT INTO cogmem.recall_items (tenant, recall_id, position, layer, memory_id, rule_id, score, tokens, reason)
SELECT r.tenant, r.recall_id, i.position, i.layer, i.memory_id, i.rule_id, i.score, i.tokens, i.reason
FROM cogmem.recalls AS r,
     unnest(r.item_layers, r.item_memory_ids, r.item_rule_ids, r.item_scores, r.item_tokens, r.item_reasons)
         WITH ORDINALITY AS i (layer, memory_id, rule_id, score, tokens, reason, position);
CREATE FUNCTION cogmem._forget_recall_items()
RETURNS trigger
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF tg_op = 'TRUNCATE' THEN
        DELETE FROM cogmem.recall_items;
        RETURN NULL;
    END IF;
    DELETE FROM cogmem.recall_items AS i USING gone AS g
    WHERE i.tenant = g.tenant AND i.recall_id = g.recall_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER recalls_forget_items AFTER DELETE ON cogmem.recalls REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._forget_recall_items();
CREATE TRIGGER recalls_truncate_items AFTER TRUNCATE ON cogmem.recalls
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._forget_recall_items();
ALTER TABLE cogmem.recalls DROP CONSTRAINT recalls_items_aligned,
    DROP COLUMN item_layers, DROP COLUMN item_memory_ids, DROP COLUMN item_rule_ids, DROP COLUMN item_scores,
    DROP COLUMN item_tokens, DROP COLUMN item_reasons;
""")
