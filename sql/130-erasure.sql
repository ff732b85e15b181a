-- Erasure (KVKK art. 7 / GDPR art. 17, the right to be forgotten). Content, embeddings, raw turns,
-- vault items, held conflicts, episodes and sibling details that quote an erased memory go. The audit trail keeps a tombstone
-- (memory id, when, who, why; a hash of the subject, never the subject or the text), so the hash
-- chain still verifies.

CREATE OR REPLACE FUNCTION cogmem._erase_memories(p_tenant text, p_memory_ids bigint[], p_reason text)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_erased bigint[];
    v_quoted text;
BEGIN
    -- A sentence taken from an erased turn (a rule or an incident it held, sql/060-remember.sql) goes too.
    p_memory_ids := p_memory_ids || ARRAY(SELECT m.memory_id FROM cogmem.memories AS m
                                          WHERE m.tenant = p_tenant AND m.excerpt_of = ANY (p_memory_ids));
    -- A keyed store item (sql/180-store.sql) holds the erased text as its value: it goes too.
    DELETE FROM cogmem.store_items AS i WHERE i.tenant = p_tenant AND i.memory_id = ANY (p_memory_ids);
    WITH gone AS (
        DELETE FROM cogmem.memories AS m
        WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_memory_ids)
        RETURNING m.memory_id
    )
    SELECT coalesce(array_agg(g.memory_id ORDER BY g.memory_id), '{}') INTO v_erased FROM gone AS g;
    IF cardinality(v_erased) = 0 THEN
        RETURN 0;
    END IF;
    -- Recall reasons of other memories may name an erased sibling's details ("#12 for 10.0.0.5"): one
    -- pattern finds the recalls that quote any of them and scrubs each quote.
    v_quoted := '#(' || array_to_string(v_erased, '|') || ') for [^,;]*';
    UPDATE cogmem.recalls AS r
    SET item_reasons = ARRAY(
        SELECT regexp_replace(i.reason, v_quoted, '#\1 (erased)', 'g')
        FROM unnest(r.item_reasons) WITH ORDINALITY AS i (reason, n) ORDER BY i.n)
    WHERE r.tenant = p_tenant
      AND EXISTS (SELECT FROM unnest(r.item_reasons) AS i (reason) WHERE i.reason ~ v_quoted);
    UPDATE cogmem.sensory_turns AS s SET memory_id = NULL
    WHERE s.tenant = p_tenant AND s.memory_id = ANY (v_erased);
    PERFORM cogmem._forget_reembedded(p_tenant);  -- a re-embedding's new vectors of them (sql/022-reembed.sql)
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    SELECT p_tenant, 'write', e.id, 'erased', jsonb_build_object('reason', p_reason)
    FROM unnest(v_erased) AS e (id);
    RETURN cardinality(v_erased);
END;
$$;
COMMENT ON FUNCTION cogmem._erase_memories(text, bigint[], text) IS
'Erases memories and what quotes them; leaves an ''erased'' tombstone per memory in the audit trail.';

CREATE OR REPLACE FUNCTION cogmem.erase(tenant text, memory_id bigint, reason text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(erase.tenant);
    IF erase.memory_id IS NULL THEN
        RAISE EXCEPTION 'memory_id must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'To erase everything about a person, use cogmem.erase_subject().';
    END IF;
    RETURN cogmem._erase_memories(erase.tenant, ARRAY[erase.memory_id], erase.reason) > 0;
END;
$$;
COMMENT ON FUNCTION cogmem.erase(text, bigint, text) IS
'Erases one memory (text, embedding, statistics, sibling links, and the rule or incident sentence taken '
'from it); true when it existed. The audit keeps a tombstone with the reason.';

-- Longer than a screen: one statement per kind of thing that may mention the subject, each counted.
CREATE OR REPLACE FUNCTION cogmem.erase_subject(tenant text, subject text, reason text DEFAULT NULL)
RETURNS TABLE (kind text, erased integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_pattern text;
    v_ids     bigint[];
    v_count   integer;
    v_counts  jsonb := '{}';
BEGIN
    PERFORM cogmem._require_tenant(erase_subject.tenant);
    IF erase_subject.subject IS NULL OR length(btrim(erase_subject.subject)) < 3 THEN
        RAISE EXCEPTION 'subject must be at least 3 characters'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass a name, e-mail address or identifier; a shorter string would match too much.';
    END IF;
    v_pattern := '%' || replace(replace(replace(btrim(erase_subject.subject), '\', '\\'), '%', '\%'), '_', '\_') || '%';

    -- Memories that mention the subject, or whose source names it.
    SELECT coalesce(array_agg(m.memory_id), '{}') INTO v_ids
    FROM cogmem.memories AS m
    WHERE m.tenant = erase_subject.tenant
      AND (m.content ILIKE v_pattern OR m.source::text ILIKE v_pattern);
    v_count := cogmem._erase_memories(erase_subject.tenant, v_ids, coalesce(erase_subject.reason, 'erasure request'));
    v_counts := v_counts || jsonb_build_object('memories', v_count);

    DELETE FROM cogmem.sensory_turns AS s
    WHERE s.tenant = erase_subject.tenant AND (s.content ILIKE v_pattern OR s.conversation ILIKE v_pattern);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('sensory_turns', v_count);
    -- The embeddings of messages awaiting their next turn (sql/059-followup.sql) may be of the subject's
    -- words, which no text search can tell: all go, at the cost of the last hour's implicit feedback.
    UPDATE cogmem.recalls AS r SET message_embedding = NULL,
                                   conversation = CASE WHEN r.conversation NOT ILIKE v_pattern THEN r.conversation END
    WHERE r.tenant = erase_subject.tenant AND (r.message_embedding IS NOT NULL OR r.conversation ILIKE v_pattern);

    -- Store items whose value mentions the subject, with or without a memory.
    DELETE FROM cogmem.store_items AS i
    WHERE i.tenant = erase_subject.tenant AND (i.value::text ILIKE v_pattern OR i.key ILIKE v_pattern
                                               OR array_to_string(i.namespace, '.') ILIKE v_pattern);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('store_items', v_count);

    -- Documents (sql/069-resources.sql) that mention the subject, every version, with their chunks.
    DELETE FROM cogmem.resources AS r
    WHERE r.tenant = erase_subject.tenant
      AND (r.body ILIKE v_pattern OR r.title ILIKE v_pattern OR r.source::text ILIKE v_pattern);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('resources', v_count);

    DELETE FROM cogmem.vault_items AS v
    WHERE v.tenant = erase_subject.tenant AND (v.subject ILIKE v_pattern OR v.name ILIKE v_pattern);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('vault_items', v_count);

    -- Instructions held as conflicts (sql/160-conflicts.sql) that mention the subject.
    DELETE FROM cogmem.conflicts AS c
    WHERE c.tenant = erase_subject.tenant
      AND (c.content ILIKE v_pattern OR c.source::text ILIKE v_pattern OR c.note ILIKE v_pattern);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('conflicts', v_count);
    -- Episodes (sql/170-episodes.sql) that mention the subject, and sessions whose goal does.
    DELETE FROM cogmem.episodes AS e
    WHERE e.tenant = erase_subject.tenant
      AND concat_ws(' ', e.project, e.phase, e.summary, array_to_string(e.decisions, ' '),
                    array_to_string(e.open_items, ' '), array_to_string(e.next_steps, ' ')) ILIKE v_pattern;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('episodes', v_count);
    UPDATE cogmem.sessions AS s
    SET goal = CASE WHEN s.goal ILIKE v_pattern THEN '(erased)' ELSE s.goal END,
        project = CASE WHEN s.project ILIKE v_pattern THEN '(erased)' ELSE s.project END
    WHERE s.tenant = erase_subject.tenant AND (s.goal ILIKE v_pattern OR s.project ILIKE v_pattern);
    -- Core identity versions (sql/055-identity.sql) that describe the subject.
    DELETE FROM cogmem.core_identity AS c
    WHERE c.tenant = erase_subject.tenant
      AND concat_ws(' ', c.agent, c.user_profile, array_to_string(c.goals, ' ')) ILIKE v_pattern;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('core_identity', v_count);
    -- People's words about the agent: trust causes and acknowledgements keep that they were, not what.
    UPDATE cogmem.trust_events AS e SET cause = '(erased)'
    WHERE e.tenant = erase_subject.tenant AND e.cause ILIKE v_pattern;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('notes', v_count);
    UPDATE cogmem.learnings AS l SET acknowledgement = '(erased)'
    WHERE l.tenant = erase_subject.tenant AND l.acknowledgement ILIKE v_pattern;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := jsonb_set(v_counts, '{notes}', to_jsonb((v_counts ->> 'notes')::integer + v_count));

    PERFORM cogmem._forget_reembedded(erase_subject.tenant);
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (erase_subject.tenant, 'governance', 'erasure_requested',
            jsonb_build_object('subject_sha256',
                               encode(sha256(convert_to(lower(btrim(erase_subject.subject)), 'UTF8')), 'hex'),
                               'reason', erase_subject.reason, 'erased', v_counts));
    RETURN QUERY SELECT e.key, e.value::integer FROM jsonb_each_text(v_counts) AS e ORDER BY e.key;
END;
$$;
COMMENT ON FUNCTION cogmem.erase_subject(text, text, text) IS
'Erases everything of a tenant that mentions a person (memories by text or source, raw turns, documents '
'(every version), vault items by subject or name, held conflicts, episodes, core identity versions; trust causes and acknowledgements naming them become '
'''(erased)'') and returns what went. The audit keeps tombstones and a hash of the subject.';

-- A person's erasure (sql/015-scopes.sql): everything scoped to them, whatever it says. erase_subject
-- finds a person by what mentions them; this takes what was remembered for them, even where no text
-- names them. The same tombstones, and a hash of the person.
CREATE OR REPLACE FUNCTION cogmem.erase_person(tenant text, person text, reason text DEFAULT NULL)
RETURNS TABLE (kind text, erased integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it deletes rows no application role may write; administrators only (sql/999-privileges.sql),
-- tenant and name checked first.
AS $$
#variable_conflict use_column
DECLARE
    v_person text := btrim(erase_person.person);
    v_ids    bigint[];
    v_counts jsonb := '{}';
    v_count  integer;
    v_table  text;
BEGIN
    PERFORM cogmem._require_tenant(erase_person.tenant);
    IF v_person IS NULL THEN
        RAISE EXCEPTION 'person must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the person as remember and recall named it.';
    END IF;
    PERFORM cogmem._require_scope(erase_person.tenant, v_person, NULL);
    SELECT coalesce(array_agg(m.memory_id), '{}') INTO v_ids
    FROM cogmem.memories AS m WHERE m.tenant = erase_person.tenant AND m.person = v_person;
    v_count := cogmem._erase_memories(erase_person.tenant, v_ids, coalesce(erase_person.reason, 'erasure request'));
    v_counts := v_counts || jsonb_build_object('memories', v_count);
    -- Everything else with a person column (episodes before the sessions they refer to), counted by table.
    FOREACH v_table IN ARRAY ARRAY['sensory_turns', 'store_items', 'conflicts', 'resources', 'episodes', 'sessions'] LOOP
        EXECUTE format('DELETE FROM cogmem.%I AS x WHERE x.tenant = $1 AND x.person = $2', v_table)
        USING erase_person.tenant, v_person;
        GET DIAGNOSTICS v_count = ROW_COUNT;
        v_counts := v_counts || jsonb_build_object(v_table, v_count);
    END LOOP;
    -- Their recalls keep the cycle (ids, scores: the audit explains them) but not the message's embedding,
    -- nor the person's name (still no one else's: no narrowed grant names it), nor the conversation's id
    -- (it may name them; the audit keeps only its hash).
    UPDATE cogmem.recalls AS r SET message_embedding = NULL, person = '(erased)', conversation = NULL
    WHERE r.tenant = erase_person.tenant AND r.person = v_person;

    PERFORM cogmem._forget_reembedded(erase_person.tenant);
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (erase_person.tenant, 'governance', 'erasure_requested',
            jsonb_build_object('person_sha256', encode(sha256(convert_to(lower(v_person), 'UTF8')), 'hex'),
                               'reason', erase_person.reason, 'erased', v_counts));
    RETURN QUERY SELECT e.key, e.value::integer FROM jsonb_each_text(v_counts) AS e ORDER BY e.key;
END;
$$;
COMMENT ON FUNCTION cogmem.erase_person(text, text, text) IS
'Erases everything of a tenant scoped to a person (memories, raw turns, store items, held conflicts, '
'documents, sessions and episodes; their recalls'' message embeddings) and returns what went. The audit keeps '
'tombstones and a hash of the person. To erase what mentions them elsewhere too, add erase_subject().';
