-- Restoring an export (cogmem_pg/markdown.py, `cogmem import`): memories go in through remember_many()
-- (redacted, routed, audited as created), then what they had earned is restored here, audited too.
-- Restoring statistics (reinforced, outcomes) is what no application may do by hand, so these are
-- administrators' verbs.

CREATE OR REPLACE FUNCTION cogmem.restore_memory_stats(tenant text, restored jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes memory_stats and memories, which only the API's owner may (sql/999-privileges.sql).
AS $$
#variable_conflict use_column
DECLARE
    v_count integer;
BEGIN
    PERFORM cogmem._require_admin();
    PERFORM cogmem._require_tenant(restore_memory_stats.tenant);
    IF restore_memory_stats.restored IS NULL OR jsonb_typeof(restore_memory_stats.restored) <> 'array' THEN
        RAISE EXCEPTION 'restored must be a JSON array of objects with a memory_id'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'One object per memory, as cogmem export writes them.';
    END IF;
    PERFORM cogmem._lock_tenant(restore_memory_stats.tenant, false);
    PERFORM cogmem._lock_stats(restore_memory_stats.tenant,
                               ARRAY(SELECT (r ->> 'memory_id')::bigint
                                     FROM jsonb_array_elements(restore_memory_stats.restored) AS r));
    WITH r AS (
        SELECT * FROM jsonb_to_recordset(restore_memory_stats.restored) AS x (
            memory_id bigint, confidence real, reinforced boolean, recall_count integer, rehearsal_count integer,
            outcome_count integer, outcome_sum real, last_recalled_at timestamptz, created_at timestamptz,
            updated_at timestamptz, redactions text[]
        )
        ORDER BY x.memory_id
    ), stats AS (
        UPDATE cogmem.memory_stats AS s
        SET confidence = coalesce(r.confidence, s.confidence), reinforced = coalesce(r.reinforced, s.reinforced),
            recall_count = coalesce(r.recall_count, s.recall_count),
            rehearsal_count = coalesce(r.rehearsal_count, s.rehearsal_count),
            outcome_count = coalesce(r.outcome_count, s.outcome_count),
            outcome_sum = coalesce(r.outcome_sum, s.outcome_sum),
            last_recalled_at = r.last_recalled_at  -- NULL too: never recalled before the export
        FROM r WHERE s.tenant = restore_memory_stats.tenant AND s.memory_id = r.memory_id
        RETURNING s.memory_id
    ), dates AS (
        UPDATE cogmem.memories AS m
        SET created_at = coalesce(r.created_at, m.created_at), updated_at = coalesce(r.updated_at, m.updated_at),
            redactions = coalesce(r.redactions, m.redactions)
        FROM r WHERE m.tenant = restore_memory_stats.tenant AND m.memory_id = r.memory_id
        RETURNING m.memory_id
    ), logged AS (
        INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
        SELECT restore_memory_stats.tenant, 'lifecycle', s.memory_id, 'restored',
               jsonb_build_object('via', 'import')
        FROM stats AS s
        RETURNING 1
    )
    SELECT count(*) INTO v_count FROM logged;
    IF v_count < jsonb_array_length(restore_memory_stats.restored) THEN
        RAISE EXCEPTION 'tenant "%" has no memories for % of the restored rows', restore_memory_stats.tenant,
            jsonb_array_length(restore_memory_stats.restored) - v_count
            USING ERRCODE = 'no_data_found', HINT = 'Store the memories with remember_many() first, then restore.';
    END IF;
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem.restore_memory_stats(text, jsonb) IS
'Administrators: restores exported statistics and dates onto memories just stored (one object per memory: '
'memory_id, confidence, reinforced, recall_count, rehearsal_count, outcome_count, outcome_sum, '
'last_recalled_at, created_at, updated_at, redactions). Audited as restored. Returns how many.';

CREATE OR REPLACE FUNCTION cogmem.restore_siblings(tenant text, pairs jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes memory_siblings, which only the API's owner may.
AS $$
#variable_conflict use_column
DECLARE
    v_count integer;
BEGIN
    PERFORM cogmem._require_admin();
    PERFORM cogmem._require_tenant(restore_siblings.tenant);
    WITH p AS (
        SELECT least(x.a, x.b) AS a, greatest(x.a, x.b) AS b, x.similarity
        FROM jsonb_to_recordset(coalesce(restore_siblings.pairs, '[]')) AS x (a bigint, b bigint, similarity real)
        WHERE x.a <> x.b
    ), linked AS (
        INSERT INTO cogmem.memory_siblings AS s (tenant, memory_id, sibling_id, similarity)
        SELECT restore_siblings.tenant, p.a, p.b, p.similarity FROM p
        ON CONFLICT DO NOTHING
        RETURNING 1
    )
    SELECT count(*) INTO v_count FROM linked;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (restore_siblings.tenant, 'lifecycle', 'siblings_restored', jsonb_build_object('pairs', v_count));
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem.restore_siblings(text, jsonb) IS
'Administrators: restores exported sibling links ([{"a": id, "b": id, "similarity": s}]). Audited.';

DROP FUNCTION IF EXISTS cogmem.restore_episode(
    text, uuid, text, text, text, text[], text[], text[], bigint[], text[], timestamptz, timestamptz
);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem.restore_episode(
    tenant text,
    session_id uuid,
    summary text,
    project text DEFAULT NULL,
    phase text DEFAULT NULL,
    decisions text[] DEFAULT NULL,
    open_items text[] DEFAULT NULL,
    next_steps text[] DEFAULT NULL,
    memory_ids bigint[] DEFAULT NULL,
    topics text[] DEFAULT NULL,
    started_at timestamptz DEFAULT NULL,
    ended_at timestamptz DEFAULT NULL,
    person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes sessions and episodes, which only the API's owner may.
AS $$
#variable_conflict use_column
DECLARE
    v_summary text;
    v_new     boolean;
BEGIN
    PERFORM cogmem._require_admin();
    PERFORM cogmem._require_tenant(restore_episode.tenant);
    PERFORM cogmem._require_names(restore_episode.person, restore_episode.agent);
    v_summary := cogmem._clean_text(restore_episode.summary);
    IF restore_episode.session_id IS NULL OR v_summary IS NULL THEN
        RAISE EXCEPTION 'an episode needs its session_id and a summary'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass them as cogmem export wrote them.';
    END IF;
    -- Imported twice into the same tenant: the episode is there already (a session id of another
    -- tenant fails on the episode's key instead).
    -- In the scope it was said in (sql/015-scopes.sql): a person's episode stays theirs.
    INSERT INTO cogmem.sessions AS s (tenant, session_id, project, started_at, ended_at, person, agent)
    VALUES (restore_episode.tenant, restore_episode.session_id, restore_episode.project,
            coalesce(restore_episode.started_at, now()), coalesce(restore_episode.ended_at, now()),
            btrim(restore_episode.person), btrim(restore_episode.agent))
    ON CONFLICT DO NOTHING;
    INSERT INTO cogmem.episodes AS e (tenant, session_id, project, phase, summary, decisions, open_items,
                                      next_steps, memory_ids, topics, started_at, ended_at, person, agent)
    VALUES (restore_episode.tenant, restore_episode.session_id, restore_episode.project,
            cogmem._clean_text(restore_episode.phase), v_summary, cogmem._clean_list(restore_episode.decisions),
            cogmem._clean_list(restore_episode.open_items), cogmem._clean_list(restore_episode.next_steps),
            coalesce(restore_episode.memory_ids, '{}'), coalesce(cogmem._normalize_topics(restore_episode.topics), '{}'),
            coalesce(restore_episode.started_at, now()), coalesce(restore_episode.ended_at, now()),
            btrim(restore_episode.person), btrim(restore_episode.agent))
    ON CONFLICT DO NOTHING;
    v_new := FOUND;
    IF v_new THEN
        INSERT INTO cogmem.audit_log (tenant, level, event, detail)
        VALUES (restore_episode.tenant, 'lifecycle', 'episode_restored',
                jsonb_build_object('session_id', restore_episode.session_id));
    END IF;
    RETURN v_new;
END;
$$;
COMMENT ON FUNCTION cogmem.restore_episode(
    text, uuid, text, text, text, text[], text[], text[], bigint[], text[], timestamptz, timestamptz, text, text
) IS
'Administrators: restores an exported episode and its session, in its scope (person, agent), its texts '
'redacted as end_session() redacts them. Audited. False when the episode was there already.';
