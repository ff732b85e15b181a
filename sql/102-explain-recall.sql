-- explain_recall: why a recall injected what it did, from the audit trail alone (the memories themselves
-- may have changed or been erased since).

-- Before 0032 it did not say what decided the recall's outcome.
DROP FUNCTION IF EXISTS cogmem.explain_recall(uuid);
-- Longer than a screen: one query per kind of item (memory, BIOS rule, Gut pattern, document), each read
-- from the trail where the item may since have changed, and what an auditor may see of each.
CREATE OR REPLACE FUNCTION cogmem.explain_recall(recall_id uuid)
RETURNS TABLE (
    item integer, layer text, memory_id bigint, rule_id bigint, score real, tokens integer, reason text,
    provenance jsonb, history jsonb, outcomes jsonb
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_recall   record;
    v_outcomes jsonb;
    -- What a memory or a document says is for roles that read memories (an application, an administrator):
    -- an auditor gets the ids, hashes, scores and reasons of the trail, and no text (sql/999-privileges.sql).
    v_text     boolean;
BEGIN
    IF explain_recall.recall_id IS NULL THEN
        RAISE EXCEPTION 'recall_id must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass a recall_id returned by cogmem.recall().';
    END IF;
    SELECT l.tenant, l.at INTO v_recall
    FROM cogmem.audit_log AS l
    WHERE l.level = 'recall' AND l.recall_id = explain_recall.recall_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no audited recall %', explain_recall.recall_id
            USING ERRCODE = 'no_data_found', HINT = 'Pass a recall_id returned by cogmem.recall() in a tenant you may read.';
    END IF;
    PERFORM cogmem._require_tenant(v_recall.tenant);
    v_text := pg_catalog.has_table_privilege(cogmem.caller(), 'cogmem.memories', 'SELECT');
    -- What decided the outcome, in order: explicit feedback, or the next turn (sql/059-followup.sql) with
    -- its verdict, the cues that fired and the turn itself while its memory is kept (its hash for an auditor).
    SELECT coalesce(jsonb_agg(jsonb_build_object('at', o.at, 'event', o.event) || (o.detail - 'probabilities')
                              || CASE WHEN v_text THEN jsonb_build_object('turn', m.content) ELSE '{}' END
                              ORDER BY o.audit_id), '[]')
    INTO v_outcomes
    FROM cogmem.audit_log AS o
    LEFT JOIN cogmem.memories AS m ON m.tenant = o.tenant AND m.memory_id = (o.detail ->> 'turn_memory')::bigint
    WHERE o.tenant = v_recall.tenant AND o.level = 'outcome' AND o.recall_id = explain_recall.recall_id;
    RETURN QUERY
    SELECT i.item, i.layer, i.memory_id, i.rule_id, i.score, i.tokens, i.reason,
           CASE
               WHEN i.layer = 'gut' THEN (
                   SELECT jsonb_build_object('kind', 'gut', 'pattern', g.content, 'support', g.support,
                                             'success', g.success, 'success_low', g.success_low,
                                             'success_high', g.success_high, 'topics', g.topics,
                                             'first_release', g.first_release, 'last_release', g.last_release,
                                             'withdrawn_release', g.withdrawn_release,
                                             'note', 'support and success are noisy (differential privacy)')
                   FROM cogmem.gut_patterns AS g WHERE g.pattern_id = i.rule_id)
               -- A document's chunk (sql/069-resources.sql): which version of which document, and whether a
               -- newer one has replaced it since. Erased with its document: no provenance then.
               WHEN i.layer = 'resources' THEN (
                   SELECT jsonb_build_object('kind', 'resource', 'resource_id', d.resource_id,
                                             'document_kind', d.kind, 'version', d.version,
                                             'added_at', d.created_at, 'superseded_at', d.superseded_at)
                          || CASE WHEN v_text THEN jsonb_build_object('title', d.title, 'heading', c.heading,
                                                                      'source', d.source) ELSE '{}' END
                   FROM cogmem.resource_chunks AS c
                   JOIN cogmem.resources AS d ON d.tenant = c.tenant AND d.resource_id = c.resource_id
                   WHERE c.tenant = v_recall.tenant AND c.chunk_id = i.rule_id)
               WHEN i.rule_id IS NOT NULL THEN (
                   -- A preset's rules are added in the transaction of their load: the same now().
                   SELECT jsonb_build_object('kind', 'bios', 'category', r.category, 'rule', r.rule,
                                             'severity', r.severity, 'preset', r.preset,
                                             'requirement', r.requirement, 'rationale', r.rationale,
                                             'translations', r.translations, 'added_at', r.created_at,
                                             'preset_version', (
                                                 SELECT l.version FROM cogmem.bios_preset_loads AS l
                                                 WHERE l.preset = r.preset AND l.tenant IS NOT DISTINCT FROM r.tenant
                                                   AND l.loaded_at = r.created_at),
                                             'events', (
                                                 SELECT coalesce(jsonb_agg(jsonb_build_object(
                                                     'event', e.event, 'reason', e.reason, 'at', e.at)
                                                     ORDER BY e.event_id), '[]')
                                                 FROM cogmem.bios_rule_events AS e WHERE e.rule_id = r.rule_id))
                   FROM cogmem.bios_rules AS r WHERE r.rule_id = i.rule_id)
               ELSE (
                   SELECT jsonb_build_object('kind', 'memory', 'created_at', h.at, 'created_by', h.actor)
                          || (h.detail - 'redactions')
                   FROM cogmem.audit_log AS h
                   WHERE h.tenant = v_recall.tenant AND h.memory_id = i.memory_id AND h.event = 'created')
           END,
           (SELECT coalesce(jsonb_agg(jsonb_build_object('at', h.at, 'event', h.event, 'level', h.level,
                                                         'detail', h.detail, 'after_this_recall', h.at > v_recall.at)
                                      ORDER BY h.audit_id), '[]')
            FROM cogmem.memory_history AS h
            WHERE h.tenant = v_recall.tenant AND h.memory_id = i.memory_id),
           v_outcomes
    FROM cogmem.audit_recall_items AS i
    WHERE i.tenant = v_recall.tenant AND i.recall_id = explain_recall.recall_id
    ORDER BY i.item;
END;
$$;
COMMENT ON FUNCTION cogmem.explain_recall(uuid) IS
'Why a recall injected what it did, from the audit trail alone: per item its layer, score, tokens and '
'reason, where it came from (provenance: the memory''s creation, the BIOS rule and its requirement, or '
'the Gut pattern and its release) '
'and its history (created, rehearsed, reinforced, promoted, ...); outcomes (the same on every row): what '
'set the recall''s outcome, in order: explicit feedback, or the next turn of the conversation with its '
'verdict, confidence, judge, cues and text (while its memory is kept), abstentions included. Text (the turn, '
'a document''s title, heading and source) only for roles that read memories: an auditor gets none.';
