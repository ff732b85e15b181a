-- remember: the inbound path. Redact, route, tag, de-duplicate, store; never silently drop.

CREATE OR REPLACE FUNCTION cogmem._remember(
    p_tenant text, p_content text, p_ring text, p_topics text[], p_embedding public.vector, p_source jsonb
)
RETURNS TABLE (memory_id bigint, ring text, topics text[], action text, redactions text[])
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- The nearest neighbour must be this tenant's, found through a global HNSW index.
SET "hnsw.iterative_scan" = 'strict_order'
AS $$
#variable_conflict use_column
DECLARE
    v_tenant     text := p_tenant;
    v_language   regconfig;
    v_max_chars  integer;
    v_dup_sim    real;
    v_content    text;
    v_redactions text[];
    v_ring       cogmem.ring;
    v_topics     text[];
    v_embedding  public.vector;
    v_source     jsonb := coalesce(p_source, '{}');
    v_near_id    bigint;
    v_near_sim   double precision;
    v_inserted   boolean;
BEGIN
    v_language := cogmem._tenant_language(v_tenant);
    PERFORM cogmem._lock_tenant(v_tenant, false);
    SELECT t.max_content_chars, t.duplicate_similarity INTO v_max_chars, v_dup_sim
    FROM cogmem.tenants AS t WHERE t.tenant = v_tenant;

    IF p_content IS NULL THEN
        RAISE EXCEPTION 'content must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the text to remember.';
    END IF;
    IF btrim(p_content) = '' THEN
        RAISE EXCEPTION 'content must not be empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass the text to remember.';
    END IF;
    IF length(p_content) > v_max_chars THEN
        RAISE EXCEPTION 'content has % characters, the limit for tenant "%" is %',
            length(p_content), v_tenant, v_max_chars
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Split it into smaller memories (a memory must fit a recall budget), '
                         || 'or raise cogmem.tenants.max_content_chars.';
    END IF;
    IF p_ring IS NOT NULL
       AND NOT p_ring = ANY (enum_range(NULL::cogmem.ring)::text[]) THEN
        RAISE EXCEPTION 'unknown ring "%"', p_ring
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of: shocks, dos_and_donts, long_term, habits, procedures, fresh; '
                         || 'or NULL to route automatically.';
    END IF;
    IF jsonb_typeof(v_source) <> 'object' THEN
        RAISE EXCEPTION 'source must be a JSON object, got %', jsonb_typeof(v_source)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass provenance as an object, e.g. {"who": "ayse", "channel": "slack"}.';
    END IF;
    PERFORM cogmem._check_embedding(p_embedding);

    -- Redact first: nothing below, including the duplicate check, sees a secret.
    SELECT r.redacted, r.redactions INTO v_content, v_redactions FROM cogmem.redact(btrim(p_content)) AS r;
    v_ring := coalesce(p_ring, cogmem.route(v_content))::cogmem.ring;
    v_topics := coalesce(cogmem._normalize_topics(p_topics),
                         cogmem._detect_topics(v_tenant, v_content, v_language));
    v_embedding := coalesce(p_embedding, cogmem.embed(v_content));

    -- A near-duplicate by meaning is rehearsed, unless its discriminating details differ (siblings).
    IF v_embedding IS NOT NULL THEN
        SELECT m.memory_id, 1 - (m.embedding OPERATOR(public.<=>) v_embedding)
        INTO v_near_id, v_near_sim
        FROM cogmem.memories AS m
        WHERE m.tenant = v_tenant AND m.embedding IS NOT NULL
        ORDER BY m.embedding OPERATOR(public.<=>) v_embedding
        LIMIT 1;
        IF v_near_id IS NOT NULL AND v_near_sim >= v_dup_sim
           AND cogmem._details(v_content) = (SELECT cogmem._details(m.content) FROM cogmem.memories AS m
                                              WHERE m.tenant = v_tenant AND m.memory_id = v_near_id) THEN
            RETURN QUERY SELECT * FROM cogmem._rehearse(v_tenant, v_near_id, v_redactions,
                jsonb_build_object('match', 'similar', 'similarity', round(v_near_sim::numeric, 4)));
            RETURN;
        END IF;
    END IF;

    -- Same normalised text: the unique fingerprint index decides atomically, even under concurrency.
    INSERT INTO cogmem.memories AS m (tenant, ring, content, topics, language, embedding, redactions, source)
    VALUES (v_tenant, v_ring, v_content, v_topics, v_language, v_embedding, v_redactions, v_source)
    ON CONFLICT (tenant, fingerprint) DO NOTHING
    RETURNING m.memory_id INTO v_near_id;
    v_inserted := v_near_id IS NOT NULL;

    IF NOT v_inserted THEN
        -- Same expression as the generated column memories.fingerprint (migration 0001).
        SELECT m.memory_id INTO v_near_id FROM cogmem.memories AS m
        WHERE m.tenant = v_tenant
          AND m.fingerprint = md5(btrim(lower(regexp_replace(v_content, '[[:space:][:punct:]]+', ' ', 'g'))));
        RETURN QUERY SELECT * FROM cogmem._rehearse(v_tenant, v_near_id, v_redactions,
            jsonb_build_object('match', 'same_text'));
        RETURN;
    END IF;

    INSERT INTO cogmem.memory_stats (tenant, memory_id) VALUES (v_tenant, v_near_id);
    -- The audit keeps where a memory came from as a hash: the source may name a person (erasure).
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (v_tenant, 'write', v_near_id, 'created',
            jsonb_build_object('ring', v_ring, 'routed', p_ring IS NULL, 'topics', to_jsonb(v_topics),
                               'embedded', v_embedding IS NOT NULL,
                               'source_sha256', encode(sha256(convert_to(v_source::text, 'UTF8')), 'hex')));
    IF cardinality(v_redactions) > 0 THEN
        INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
        VALUES (v_tenant, 'write', v_near_id, 'redacted', jsonb_build_object('kinds', to_jsonb(v_redactions)));
    END IF;
    RETURN QUERY SELECT v_near_id, v_ring::text, v_topics, 'created'::text, v_redactions;
END;
$$;
COMMENT ON FUNCTION cogmem._remember(text, text, text, text[], public.vector, jsonb) IS
'Implementation of cogmem.remember() (PL/pgSQL cannot name an input and an output column alike).';

-- The public signature is a contract; its output columns reuse input names (ring, topics), which only
-- a SQL-language function allows, so it wraps the PL/pgSQL implementation.
CREATE OR REPLACE FUNCTION cogmem.remember(
    tenant text,
    content text,
    ring text DEFAULT NULL,
    topics text[] DEFAULT NULL,
    embedding public.vector DEFAULT NULL,
    source jsonb DEFAULT '{}'
)
RETURNS TABLE (memory_id bigint, ring text, topics text[], action text, redactions text[])
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT * FROM cogmem._remember(tenant, content, ring, topics, embedding, source);
$$;
COMMENT ON FUNCTION cogmem.remember(text, text, text, text[], public.vector, jsonb) IS
'Stores a memory: redacts secrets, routes it to a ring (when ring is NULL), detects topics (when NULL), '
'embeds it (when NULL and the server can). A near-duplicate rehearses the existing memory instead '
'(action = duplicate). Returns the memory, its ring and topics, the action and what was redacted.';

CREATE OR REPLACE FUNCTION cogmem._rehearse(
    p_tenant text, p_memory_id bigint, p_redactions text[], p_detail jsonb
)
RETURNS TABLE (memory_id bigint, ring text, topics text[], action text, redactions text[])
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    -- Hearing it again is a rehearsal: its Ebbinghaus clock restarts.
    UPDATE cogmem.memory_stats AS s
    SET rehearsal_count = s.rehearsal_count + 1, last_recalled_at = now()
    WHERE s.tenant = p_tenant AND s.memory_id = p_memory_id;
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (p_tenant, 'write', p_memory_id, 'rehearsed', p_detail);
    RETURN QUERY
    SELECT m.memory_id, m.ring::text, m.topics, 'duplicate'::text, p_redactions
    FROM cogmem.memories AS m WHERE m.tenant = p_tenant AND m.memory_id = p_memory_id;
END;
$$;
COMMENT ON FUNCTION cogmem._rehearse(text, bigint, text[], jsonb) IS
'Rehearses an existing memory heard again and reports it as a duplicate.';

CREATE OR REPLACE VIEW cogmem.memory_overview WITH (security_invoker = TRUE) AS
SELECT
    m.tenant,
    m.memory_id,
    m.ring,
    m.content,
    m.topics,
    m.token_estimate,
    s.confidence,
    s.reinforced,
    s.recall_count,
    s.rehearsal_count,
    s.outcome_count,
    s.success_score,
    s.last_recalled_at,
    cogmem.strength(
        now() - coalesce(s.last_recalled_at, m.created_at), CASE WHEN s.reinforced THEN NULL ELSE l.half_life END
    ) AS strength,
    m.embedding IS NOT NULL AS embedded,
    m.redactions,
    m.source,
    m.created_at,
    m.updated_at
FROM cogmem.memories AS m
INNER JOIN cogmem.memory_stats AS s ON m.tenant = s.tenant AND m.memory_id = s.memory_id
INNER JOIN cogmem.tenant_layers AS l ON m.tenant = l.tenant AND m.ring::text = l.layer::text;
COMMENT ON VIEW cogmem.memory_overview IS
'Each memory with its usage statistics and current Ebbinghaus strength, for people and BI tools.';
