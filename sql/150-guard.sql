-- Guard checks: before a risky action, what does the agent know that applies to it?
--
-- cogmem.guard_check(tenant, area, action) returns the rules (dos_and_donts), shocks, BIOS rules and
-- learnings that apply, most relevant first. A memory applies when it is about the area (its topics, or
-- topics detected in area and action) or close enough in meaning to the action (cosine from
-- tenants.guard_similarity; without embeddings, when it shares at least half of the action's words).
-- Trust tunes rigour (sql/140-trust.sql): below 40 the threshold drops by 0.1 and up to 20 rows come back,
-- above 80 it rises by 0.1 and up to 5 do; otherwise 10. Blocking learnings always come back, first.
--
-- cogmem.report_error(tenant, area, description) records a mistake. The first report of a mistake makes
-- a learning: the description becomes a memory in dos_and_donts about the area. A later report of the
-- same mistake (the same learning, or one in the area close enough in meaning or wording) is a repeat:
-- guard_check would have shown it, so it happened despite the guard. It costs trust (-7), and once
-- repeated tenants.guard_blocking_after times (3) since a person last acknowledged it, the learning is
-- blocking until cogmem.acknowledge(). Every check, report and acknowledgement is audited.

CREATE OR REPLACE FUNCTION cogmem._area(p_area text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF p_area IS NULL OR btrim(p_area) = '' THEN
        RAISE EXCEPTION 'area must not be empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Name what the action touches, as a topic: e.g. ''server''.';
    END IF;
    RETURN lower(btrim(p_area));
END;
$$;
COMMENT ON FUNCTION cogmem._area(text) IS 'The area of a guard check or error report, as a topic; refuses an empty one.';

-- Longer than a screen: one ranked statement over four sources (rules, shocks, BIOS, learnings), then
-- its arrays, the count and the audit row; split, each source would scan the tenant again.
DROP FUNCTION IF EXISTS cogmem.guard_check(text, text, text, public.vector);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem.guard_check(
    tenant text,
    area text,
    action text,
    embedding public.vector DEFAULT NULL,
    person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS TABLE (
    kind text, memory_id bigint, content text, strength real, times_referenced integer, blocking boolean
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Statements keyed by tenant: index plans, one per statement for the session (see cogmem.recall).
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
DECLARE
    v_tenant    text := guard_check.tenant;
    v_language  regconfig;
    v_area      text;
    v_topics    text[];
    v_embedding public.vector;
    v_lexemes   text[];
    v_trust     real;
    v_threshold real;
    v_limit     integer;
    v_kinds     text[];
    v_ids       bigint[];
    v_rule_ids  bigint[];
    v_contents  text[];
    v_strengths real[];
    v_counts    integer[];
    v_blocking  boolean[];
    t           cogmem.tenants;
BEGIN
    v_language := cogmem._require_tenant(v_tenant);
    -- The rules of the scope only (sql/015-scopes.sql): another person's rule is not this action's.
    PERFORM cogmem._require_scope(v_tenant, guard_check.person, guard_check.agent);
    PERFORM cogmem._lock_tenant(v_tenant, false);
    v_area := cogmem._area(guard_check.area);
    IF guard_check.action IS NULL THEN
        RAISE EXCEPTION 'action must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Describe the action, e.g. ''restart web-1 tonight''; '''' checks the whole area.';
    END IF;
    PERFORM cogmem._check_embedding(guard_check.embedding);

    v_topics := cogmem._normalize_topics(
        v_area || cogmem._detect_topics(v_tenant, guard_check.area || ' ' || guard_check.action, v_language));
    v_embedding := CASE WHEN btrim(guard_check.action) <> ''
                        THEN cogmem._embedding(v_tenant, guard_check.embedding, guard_check.area || ': ' || guard_check.action, true)
                   END;
    v_lexemes := coalesce(tsvector_to_array(to_tsvector(v_language, guard_check.action)), '{}');
    v_trust := cogmem.trust(v_tenant, guard_check.agent);
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = v_tenant;
    v_threshold := t.guard_similarity + CASE WHEN v_trust < 40 THEN -0.1 WHEN v_trust > 80 THEN 0.1 ELSE 0 END;
    v_limit := CASE WHEN v_trust < 40 THEN 20 WHEN v_trust > 80 THEN 5 ELSE 10 END;

    WITH learned AS (
        SELECT m.memory_id, m.ring, m.content, m.topics, m.created_at,
               l.memory_id IS NOT NULL AS is_learning, coalesce(l.blocking, false) AS blocking,
               1 - (m.embedding OPERATOR(public.<=>) v_embedding) AS similarity,
               cogmem._shared_words(m.search, v_lexemes) AS shared_words
        FROM cogmem.memories AS m
        LEFT JOIN cogmem.learnings AS l ON l.tenant = m.tenant AND l.memory_id = m.memory_id
        WHERE m.tenant = v_tenant AND (m.ring IN ('shocks', 'dos_and_donts') OR l.memory_id IS NOT NULL)
          AND cogmem.in_scope(m.person, m.agent, m.ring, btrim(guard_check.person), btrim(guard_check.agent), t)
    ),
    applicable AS (
        SELECT CASE WHEN x.is_learning THEN 'learning' WHEN x.ring = 'shocks' THEN 'shock' ELSE 'rule' END AS kind,
               x.memory_id, NULL::bigint AS rule_id, x.content, x.blocking,
               (s.confidence * cogmem.strength(now() - coalesce(greatest(s.last_recalled_at, p.last_recalled_at),
                                                                 x.created_at),
                                               CASE WHEN s.reinforced THEN NULL ELSE tl.half_life END))::real
                   AS strength,
               s.recall_count + coalesce(p.recall_count, 0) + s.guard_count AS times_referenced,
               -- Relevance: meaning first, then being about the area, then shared words.
               coalesce(x.similarity, 0) + CASE WHEN x.topics && v_topics THEN 0.5 ELSE 0 END
               + x.shared_words::real / greatest(cardinality(v_lexemes), 1) AS relevance
        FROM learned AS x
        JOIN cogmem.memory_stats AS s ON s.tenant = v_tenant AND s.memory_id = x.memory_id
        JOIN cogmem.tenant_layers AS tl ON tl.tenant = v_tenant AND tl.layer::text = x.ring::text
        -- Recalls not yet applied count too (sql/058-rehearsal.sql).
        LEFT JOIN cogmem.pending_stats AS p ON p.tenant = v_tenant AND p.memory_id = x.memory_id
        WHERE x.blocking
           OR x.topics && v_topics
           OR x.similarity >= v_threshold
           OR (v_embedding IS NULL AND cardinality(v_lexemes) > 0 AND x.shared_words >= cardinality(v_lexemes) / 2.0)
        UNION ALL
        SELECT 'bios', NULL, r.rule_id, format('[%s %s] %s', r.category, coalesce(r.requirement, r.severity::text), r.rule),
               false,
               (CASE r.severity WHEN 'must' THEN 1.0 WHEN 'should' THEN 0.6 ELSE 0.3 END)::real, 0,
               CASE WHEN r.category = v_area OR v_area = ANY (r.topics) THEN 1.0 ELSE 0.5 END
        FROM cogmem.bios_rules_in_force AS r
        WHERE r.tenant = v_tenant
          AND (r.category = ANY (v_topics) OR r.topics && v_topics)
    ),
    chosen AS (
        SELECT a.*, row_number() OVER (ORDER BY a.blocking DESC, a.relevance DESC, a.strength DESC,
                                                a.memory_id, a.rule_id) AS n
        FROM applicable AS a
    )
    SELECT array_agg(c.kind ORDER BY c.n), array_agg(c.memory_id ORDER BY c.n), array_agg(c.rule_id ORDER BY c.n),
           array_agg(c.content ORDER BY c.n), array_agg(c.strength ORDER BY c.n),
           array_agg(c.times_referenced ORDER BY c.n), array_agg(c.blocking ORDER BY c.n)
    INTO v_kinds, v_ids, v_rule_ids, v_contents, v_strengths, v_counts, v_blocking
    FROM chosen AS c
    WHERE c.n <= v_limit OR c.blocking;

    RETURN QUERY
    SELECT g.kind, g.memory_id, g.content, g.strength, g.times_referenced::integer, g.blocking
    FROM unnest(v_kinds, v_ids, v_contents, v_strengths, v_counts, v_blocking)
         WITH ORDINALITY AS g (kind, memory_id, content, strength, times_referenced, blocking, n)
    ORDER BY g.n;

    -- Brought up by a guard is referenced: counted.
    PERFORM cogmem._lock_stats(v_tenant, v_ids);
    UPDATE cogmem.memory_stats AS s SET guard_count = s.guard_count + 1
    WHERE s.tenant = v_tenant AND s.memory_id = ANY (v_ids);
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (v_tenant, 'metacognition', 'guard_checked',
            jsonb_build_object(
                'area', v_area, 'action_sha256', encode(sha256(convert_to(guard_check.action, 'UTF8')), 'hex'),
                'trust', v_trust, 'threshold', round(v_threshold::numeric, 2), 'limit', v_limit,
                'kinds', coalesce(to_jsonb(v_kinds), '[]'), 'memory_ids', coalesce(to_jsonb(v_ids), '[]'),
                'rule_ids', coalesce(to_jsonb(v_rule_ids), '[]'),
                'blocking', coalesce((SELECT jsonb_agg(b.id) FROM unnest(v_ids, v_blocking) AS b (id, blocks)
                                      WHERE b.blocks), '[]')));
END;
$$;
COMMENT ON FUNCTION cogmem.guard_check(text, text, text, public.vector, text, text) IS
'Before a risky action: the rules, shocks, BIOS rules and learnings that apply to this area and action, '
'blocking learnings first, then most relevant; of the scope of person and agent, with the agent''s trust. '
'strength = confidence x Ebbinghaus strength (BIOS: severity).';

-- Longer than a screen: a new mistake and a repeat share the checks, the match by meaning or wording,
-- and the audit; the two paths differ in a few statements each.
DROP FUNCTION IF EXISTS cogmem.report_error(text, text, text, text, bigint, public.vector, jsonb);  -- before 0035
CREATE OR REPLACE FUNCTION cogmem.report_error(
    tenant text,
    area text,
    description text,
    action text DEFAULT NULL,
    repeat_of bigint DEFAULT NULL,
    embedding public.vector DEFAULT NULL,
    source jsonb DEFAULT '{}',
    person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS TABLE (learning_id bigint, errors integer, repeats_since_ack integer, blocking boolean, repeated boolean)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_tenant     text := report_error.tenant;
    v_language   regconfig;
    v_area       text;
    v_lesson     text;
    v_embedding  public.vector;
    v_lexemes    text[];
    v_lesson_gate real;
    v_learning   bigint;
    v_after      integer;
    v_row        cogmem.learnings;
    v_repeated   boolean;
    v_person     text := btrim(report_error.person);
    v_agent      text := btrim(report_error.agent);
BEGIN
    v_language := cogmem._require_tenant(v_tenant);
    -- A lesson of its scope (sql/015-scopes.sql): matched, stored and blocking there.
    PERFORM cogmem._require_scope(v_tenant, v_person, v_agent);
    PERFORM cogmem._lock_tenant(v_tenant, false);
    v_area := cogmem._area(report_error.area);
    IF report_error.description IS NULL OR btrim(report_error.description) = '' THEN
        RAISE EXCEPTION 'description must not be empty'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Say what went wrong and what to do instead: it becomes the learning.';
    END IF;
    PERFORM cogmem._check_embedding(report_error.embedding);
    v_lesson := (cogmem.redact(btrim(report_error.description))).redacted;
    SELECT t.guard_blocking_after INTO v_after FROM cogmem.tenants AS t WHERE t.tenant = v_tenant;

    IF report_error.repeat_of IS NOT NULL THEN
        SELECT l.memory_id INTO v_learning FROM cogmem.learnings AS l
        JOIN cogmem.memories AS m ON m.tenant = l.tenant AND m.memory_id = l.memory_id
        WHERE l.tenant = v_tenant AND l.memory_id = report_error.repeat_of
          AND cogmem._same_scope(m.person, m.agent, v_person, v_agent);
        IF NOT FOUND THEN
            RAISE EXCEPTION 'tenant "%" has no learning %', v_tenant, report_error.repeat_of
                USING ERRCODE = 'no_data_found',
                      HINT = 'Pass the learning_id that report_error returned for this mistake, or NULL to match it.';
        END IF;
    ELSE
        -- The same mistake again: a learning of the area close in meaning (cosine 0.8 for MiniLM: the model's
        -- lesson_similarity, sql/007-embed.sql) or in wording (half of the words in common, or the same text).
        v_embedding := cogmem._embedding(v_tenant, report_error.embedding, v_lesson);
        v_lesson_gate := cogmem._model_similarity(cogmem._embedding_model_of(v_tenant), 'lesson_similarity');
        v_lexemes := coalesce(tsvector_to_array(to_tsvector(v_language, v_lesson)), '{}');
        SELECT c.memory_id INTO v_learning
        FROM (
            SELECT l.memory_id, 1 - (m.embedding OPERATOR(public.<=>) v_embedding) AS similarity,
                   cogmem._shared_words(m.search, v_lexemes)::real
                   / greatest(cardinality(v_lexemes), cardinality(tsvector_to_array(m.search)), 1) AS overlap
            FROM cogmem.learnings AS l
            JOIN cogmem.memories AS m ON m.tenant = l.tenant AND m.memory_id = l.memory_id
            WHERE l.tenant = v_tenant AND l.area = v_area AND cogmem._same_scope(m.person, m.agent, v_person, v_agent)
        ) AS c
        WHERE c.similarity >= v_lesson_gate
           OR c.overlap >= 0.5
        ORDER BY coalesce(c.similarity, 0) + c.overlap DESC, c.memory_id
        LIMIT 1;
    END IF;

    v_repeated := v_learning IS NOT NULL;
    IF NOT v_repeated THEN
        SELECT r.memory_id INTO v_learning
        FROM cogmem._remember(v_tenant, report_error.description, 'dos_and_donts', ARRAY[v_area], v_embedding,
                              cogmem._with_said(coalesce(report_error.source, '{}') || '{"kind": "learning"}',
                                                NULL, NULL, NULL, v_person, v_agent), '{}') AS r;
        -- Stored (or the same text already known): from now on it is a learning of this area. The lock
        -- does what a foreign key would (migration 0012): an erasure cannot remove the memory meanwhile.
        PERFORM FROM cogmem.memories AS m WHERE m.tenant = v_tenant AND m.memory_id = v_learning FOR KEY SHARE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'the lesson was erased while it was being recorded'
                USING ERRCODE = 'serialization_failure', HINT = 'Report the error again.';
        END IF;
        INSERT INTO cogmem.learnings AS l (tenant, memory_id, area) VALUES (v_tenant, v_learning, v_area)
        ON CONFLICT (tenant, memory_id) DO NOTHING;
        v_repeated := NOT FOUND;
    END IF;
    IF v_repeated THEN
        UPDATE cogmem.learnings AS l
        SET errors = l.errors + 1, repeats_since_ack = l.repeats_since_ack + 1, last_error_at = now(),
            blocking = l.blocking OR l.repeats_since_ack + 1 >= v_after
        WHERE l.tenant = v_tenant AND l.memory_id = v_learning;
        -- It matters again: its Ebbinghaus clock restarts.
        UPDATE cogmem.memory_stats AS s SET rehearsal_count = s.rehearsal_count + 1, last_recalled_at = now()
        WHERE s.tenant = v_tenant AND s.memory_id = v_learning;
        PERFORM cogmem._trust_event(v_tenant, 'repeated_error', 'an error that had a learning happened again',
                                    v_learning, v_agent);
    END IF;
    SELECT * INTO v_row FROM cogmem.learnings AS l WHERE l.tenant = v_tenant AND l.memory_id = v_learning;
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (v_tenant, 'metacognition', v_learning, 'error_reported',
            jsonb_build_object('area', v_area, 'repeated', v_repeated, 'errors', v_row.errors,
                               'repeats_since_ack', v_row.repeats_since_ack, 'blocking', v_row.blocking,
                               'action_sha256', encode(sha256(convert_to(coalesce(report_error.action, ''), 'UTF8')), 'hex')));
    RETURN QUERY SELECT v_learning, v_row.errors, v_row.repeats_since_ack, v_row.blocking, v_repeated;
END;
$$;
COMMENT ON FUNCTION cogmem.report_error(text, text, text, text, bigint, public.vector, jsonb, text, text) IS
'Records a mistake in an area. The first report makes a learning (a dos_and_donts memory); a repeat (the '
'same learning, repeat_of, or one matched in the area) costs trust and, repeated '
'tenants.guard_blocking_after times since the last acknowledgement, makes it blocking. person and agent '
'scope the lesson (matched within its scope) and the trust it costs (the agent''s).';

CREATE OR REPLACE FUNCTION cogmem.acknowledge(tenant text, learning_id bigint, note text DEFAULT NULL)
RETURNS TABLE (memory_id bigint, errors integer, blocking boolean, acknowledged_by text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_tenant text := acknowledge.tenant;
    v_was    boolean;
BEGIN
    PERFORM cogmem._require_tenant(v_tenant);
    -- A learning is the tenant's, whoever it is about: not for a grant narrowed to one person.
    PERFORM cogmem._require_whole_tenant(v_tenant);
    PERFORM cogmem._lock_tenant(v_tenant, false);
    SELECT l.blocking INTO v_was FROM cogmem.learnings AS l
    WHERE l.tenant = v_tenant AND l.memory_id = acknowledge.learning_id
    FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'tenant "%" has no learning %', v_tenant, coalesce(acknowledge.learning_id::text, 'NULL')
            USING ERRCODE = 'no_data_found', HINT = 'Pass a learning_id that report_error or guard_check returned.';
    END IF;
    -- A person has looked at it: the repeats start counting again from here.
    UPDATE cogmem.learnings AS l
    SET blocking = false, repeats_since_ack = 0, acknowledged_at = now(), acknowledged_by = cogmem.caller(),
        acknowledgement = (cogmem.redact(acknowledge.note)).redacted
    WHERE l.tenant = v_tenant AND l.memory_id = acknowledge.learning_id;
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (v_tenant, 'metacognition', acknowledge.learning_id, 'acknowledged',
            jsonb_build_object('was_blocking', v_was, 'with_note', acknowledge.note IS NOT NULL));
    RETURN QUERY
    SELECT l.memory_id, l.errors, l.blocking, l.acknowledged_by FROM cogmem.learnings AS l
    WHERE l.tenant = v_tenant AND l.memory_id = acknowledge.learning_id;
END;
$$;
COMMENT ON FUNCTION cogmem.acknowledge(text, bigint, text) IS
'A person acknowledges a learning: it stops blocking and its repeats count from zero again (audited).';
