-- remember: the inbound path. Redact, route, tag, de-duplicate, store; never silently drop.

-- Before 0008 remember took no verdict on conflicts and returned none: those signatures go.
DROP FUNCTION IF EXISTS cogmem.remember(text, text, text, text[], public.vector, jsonb);
DROP FUNCTION IF EXISTS cogmem._remember(text, text, text, text[], public.vector, jsonb);

-- The same text is one memory: case, punctuation and spacing aside, and through the disguises redaction
-- sees through (cogmem._unmasked: full-width forms, zero-width characters). Set by a trigger, so every
-- way a memory is written computes it alike; ON CONFLICT (tenant, fingerprint) sees the value.
CREATE OR REPLACE FUNCTION cogmem._fingerprint(p_content text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
RETURN md5(btrim(lower(regexp_replace(cogmem._unmasked(p_content), '[[:space:][:punct:]]+', ' ', 'g'))));
COMMENT ON FUNCTION cogmem._fingerprint(text) IS
'The normalised form of a text that decides whether it is already a memory of the tenant.';

CREATE OR REPLACE FUNCTION cogmem._set_fingerprint()
RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
BEGIN
    -- The stores pass the fingerprint they computed for their same-text check; other writes get one here.
    IF tg_op = 'UPDATE' OR NEW.fingerprint IS NULL THEN
        NEW.fingerprint := cogmem._fingerprint(NEW.content);
    END IF;
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION cogmem._set_fingerprint() IS 'Trigger: memories.fingerprint from the content.';
CREATE OR REPLACE TRIGGER memories_fingerprint
BEFORE INSERT OR UPDATE OF content ON cogmem.memories
FOR EACH ROW EXECUTE FUNCTION cogmem._set_fingerprint();

-- A fact stored although it contradicts older memories: linked to them, and those that are not
-- protected (shocks, dos_and_donts are never weakened by a heuristic) lose half their confidence, so the
-- newer fact ranks first and the older one fades unless it is used. Statistics rows in memory_id order.
CREATE OR REPLACE FUNCTION cogmem._link_contradiction(
    p_tenant text, p_memory_id bigint, p_older bigint[], p_verdict text
)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_weakened bigint[];
BEGIN
    SELECT coalesce(array_agg(m.memory_id ORDER BY m.memory_id), '{}') INTO v_weakened
    FROM cogmem.memories AS m
    WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_older) AND m.ring NOT IN ('shocks', 'dos_and_donts');
    PERFORM cogmem._lock_stats(p_tenant, v_weakened);
    UPDATE cogmem.memory_stats AS s SET confidence = s.confidence * 0.5, reinforced = false
    WHERE s.tenant = p_tenant AND s.memory_id = ANY (v_weakened);
    INSERT INTO cogmem.memory_contradictions (tenant, memory_id, contradicts_id, verdict, weakened)
    SELECT p_tenant, p_memory_id, o.id, p_verdict, o.id = ANY (v_weakened)
    FROM unnest(p_older) AS o (id);
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (p_tenant, 'metacognition', p_memory_id, 'contradiction_stored',
            jsonb_build_object('contradicts', to_jsonb(p_older), 'weakened', to_jsonb(v_weakened),
                               'verdict', p_verdict));
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    SELECT p_tenant, 'lifecycle', w.id, 'weakened', jsonb_build_object('by', 'contradiction', 'newer', p_memory_id)
    FROM unnest(v_weakened) AS w (id);
END;
$$;
COMMENT ON FUNCTION cogmem._link_contradiction(text, bigint, bigint[], text) IS
'Links a stored memory to the older memories it contradicts and halves the confidence of those that are '
'not in a protected ring; audited.';

-- Where a memory was said (migration 0028): its conversation, speaker and time travel in source under
-- these keys, from remember()'s arguments or a remember_many item's, so that every store path carries
-- them alike; a trigger copies them into their columns. What is wrong with them, NULL when nothing.
CREATE OR REPLACE FUNCTION cogmem._said_problem(p_said jsonb)
RETURNS text
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_key  text;
    v_text text;
BEGIN
    IF jsonb_typeof(p_said) IS DISTINCT FROM 'object' THEN
        RETURN NULL;
    END IF;
    FOREACH v_key IN ARRAY ARRAY['conversation', 'speaker'] LOOP
        CONTINUE WHEN jsonb_typeof(p_said -> v_key) IS NULL OR jsonb_typeof(p_said -> v_key) = 'null';
        v_text := btrim(p_said ->> v_key);
        IF jsonb_typeof(p_said -> v_key) <> 'string' OR v_text = '' OR length(v_text) > 200 OR v_text ~ '[[:cntrl:]]' THEN
            RETURN format('has a %s that is not a name of 1 to 200 characters without control characters', v_key);
        END IF;
    END LOOP;
    IF jsonb_typeof(p_said -> 'said_at') NOT IN ('string', 'null') THEN
        RETURN 'has a said_at that is not a timestamp';
    END IF;
    BEGIN
        IF NOT ((p_said ->> 'said_at')::timestamptz BETWEEN '1900-01-01' AND '2200-01-01') THEN
            RETURN 'has a said_at outside 1900 to 2200';
        END IF;
    EXCEPTION WHEN data_exception THEN
        RETURN format('has a said_at that is not a timestamp: %s', left(p_said ->> 'said_at', 40));
    END;
    RETURN NULL;
END;
$$;
COMMENT ON FUNCTION cogmem._said_problem(jsonb) IS
'What is wrong with the conversation, speaker and said_at of an object (a source, a batch item); NULL '
'when nothing.';

CREATE OR REPLACE FUNCTION cogmem._with_said(
    p_source jsonb, p_conversation text, p_speaker text, p_said_at timestamptz
)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN jsonb_typeof(coalesce(p_source, '{}')) <> 'object' THEN p_source  -- refused by the checks, as it is
    ELSE coalesce(p_source, '{}') || jsonb_strip_nulls(jsonb_build_object(
        'conversation', p_conversation, 'speaker', p_speaker, 'said_at', p_said_at))
END;
COMMENT ON FUNCTION cogmem._with_said(jsonb, text, text, timestamptz) IS
'A source with where the memory was said added (the arguments that are not NULL win).';

-- Items of remember_many with their conversation, speaker and said_at moved into their source.
CREATE OR REPLACE FUNCTION cogmem._said_items(p_items jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN (
    SELECT coalesce(jsonb_agg(CASE
        WHEN jsonb_typeof(i.value) = 'object' AND i.value ?| ARRAY['conversation', 'speaker', 'said_at']
            THEN (i.value - 'conversation' - 'speaker' - 'said_at')
                 || jsonb_build_object('source', coalesce(i.value -> 'source', '{}') || jsonb_strip_nulls(
                        jsonb_build_object('conversation', i.value -> 'conversation', 'speaker', i.value -> 'speaker',
                                           'said_at', i.value -> 'said_at')))
        ELSE i.value END ORDER BY i.n), '[]')
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i (value, n)
);
COMMENT ON FUNCTION cogmem._said_items(jsonb) IS
'A remember_many batch with each item''s conversation, speaker and said_at moved into its source.';

CREATE OR REPLACE FUNCTION cogmem._set_said()
RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
BEGIN
    NEW.conversation := nullif(btrim(NEW.source ->> 'conversation'), '');
    NEW.speaker := nullif(btrim(NEW.source ->> 'speaker'), '');
    NEW.excerpt_of := (NEW.source ->> 'excerpt_of')::bigint;
    -- A turn of a conversation has a time, its place among the turns: when it was stored, if not given.
    NEW.said_at := coalesce((NEW.source ->> 'said_at')::timestamptz,
                            CASE WHEN NEW.conversation IS NOT NULL THEN clock_timestamp() END);
    RETURN NEW;
END;
$$;
COMMENT ON FUNCTION cogmem._set_said() IS
'Trigger: memories.conversation, speaker, said_at and excerpt_of from the source (checked by remember''s '
'checks; excerpt_of is set by remember itself).';
CREATE OR REPLACE TRIGGER memories_said
BEFORE INSERT ON cogmem.memories
FOR EACH ROW EXECUTE FUNCTION cogmem._set_said();

-- Candidate rules and incidents (migration 0029): a statement the routing model finds likely of a never-cut
-- ring, but not sure enough for it, is kept in fresh, marked, and never fades while it waits for a person
-- (cogmem.pending_rules, confirm_ring) or the night (said again, or successful when recalled).
CREATE OR REPLACE FUNCTION cogmem._mark_candidate(p_tenant text, p_memory_id bigint, p_ring text, p_p real)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    UPDATE cogmem.memories AS m SET candidate_ring = p_ring::cogmem.ring, candidate_p = p_p
    WHERE m.tenant = p_tenant AND m.memory_id = p_memory_id AND m.ring = 'fresh';
    IF FOUND THEN
        INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
        VALUES (p_tenant, 'write', p_memory_id, 'candidate',
                jsonb_build_object('ring', p_ring, 'probability', round(p_p::numeric, 4)));
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._mark_candidate(text, bigint, text, real) IS
'Marks a fresh memory a candidate of a never-cut ring, with the model''s probability; audited.';

-- A candidate heard again (the same text, or a near-duplicate): two sayings are more likely a rule than
-- one, so the probabilities combine as independent evidence, 1 - (1 - p1)(1 - p2). Crossing the ring's
-- threshold moves it there at once.
CREATE OR REPLACE FUNCTION cogmem._restated_candidate(p_tenant text, p_memory_id bigint, p_probabilities jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_memory cogmem.memories;
    v_p      real;
    v_sure   real;
BEGIN
    SELECT * INTO v_memory FROM cogmem.memories AS m
    WHERE m.tenant = p_tenant AND m.memory_id = p_memory_id AND m.candidate_ring IS NOT NULL;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    v_p := 1 - (1 - v_memory.candidate_p)
               * (1 - coalesce((p_probabilities ->> v_memory.candidate_ring::text)::real, v_memory.candidate_p));
    SELECT r.threshold INTO v_sure FROM cogmem._routing_model() AS r
    WHERE r.model = 'embedding' AND r.head = 'ring' AND r.label = v_memory.candidate_ring::text;
    IF v_p >= coalesce(v_sure, 1) THEN
        UPDATE cogmem.memories AS m SET ring = v_memory.candidate_ring, candidate_ring = NULL, candidate_p = NULL,
                                        updated_at = now()
        WHERE m.tenant = p_tenant AND m.memory_id = p_memory_id;
        INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
        VALUES (p_tenant, 'lifecycle', p_memory_id, 'candidate_promoted',
                jsonb_build_object('to', v_memory.candidate_ring, 'reason', 'said again',
                                   'probability', round(v_p::numeric, 4)));
    ELSE
        UPDATE cogmem.memories AS m SET candidate_p = v_p WHERE m.tenant = p_tenant AND m.memory_id = p_memory_id;
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._restated_candidate(text, bigint, jsonb) IS
'A candidate said again: its probability combines with the new saying''s, and crossing the ring''s threshold '
'promotes it; audited.';

-- Repetition counts in other words too: a new candidate close in meaning (cosine at least the tenant's
-- candidate_restated_similarity) to an older candidate of the same ring is the rule said again, and raises
-- the older one's probability as a restatement does. p_close: the memories near it by the binary prefilter.
CREATE OR REPLACE FUNCTION cogmem._restated_sibling_candidates(
    t cogmem.tenants, p_memory_id bigint, p_candidate text, p_embedding public.vector, p_close bigint[],
    p_probabilities jsonb
)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF p_candidate IS NULL OR p_close IS NULL OR p_embedding IS NULL THEN
        RETURN;
    END IF;
    PERFORM cogmem._restated_candidate(t.tenant, s.memory_id, p_probabilities)
    FROM cogmem.memories AS s
    WHERE s.tenant = t.tenant AND s.memory_id = ANY (p_close) AND s.memory_id <> p_memory_id
      AND s.candidate_ring::text = p_candidate
      AND 1 - (s.embedding OPERATOR(public.<=>) p_embedding) >= t.candidate_restated_similarity;
END;
$$;
COMMENT ON FUNCTION cogmem._restated_sibling_candidates(cogmem.tenants, bigint, text, public.vector, bigint[], jsonb) IS
'A new candidate said in other words than an older one of the same ring (a sibling by meaning) counts as '
'that one said again.';

-- After a memory is stored: the sentence of a long turn that its never-cut ring keeps (or that is the
-- candidate) goes through the one store with excerpt_of naming the turn; a short candidate is marked.
CREATE OR REPLACE FUNCTION cogmem._keep_sentence(
    p_tenant text, p_turn bigint, p_source jsonb, p_sentence text, p_ring text, p_candidate text, p_p real
)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_kept record;
BEGIN
    IF p_sentence IS NULL THEN
        IF p_candidate IS NOT NULL THEN
            PERFORM cogmem._mark_candidate(p_tenant, p_turn, p_candidate, p_p);
        END IF;
        RETURN;
    END IF;
    SELECT r.memory_id, r.action INTO v_kept
    FROM cogmem._remember(p_tenant, p_sentence, coalesce(p_ring, 'fresh'), NULL, NULL,
                          p_source || jsonb_build_object('excerpt_of', p_turn), NULL) AS r;
    IF p_ring IS NULL AND p_candidate IS NOT NULL AND v_kept.action = 'created' THEN
        PERFORM cogmem._mark_candidate(p_tenant, v_kept.memory_id, p_candidate, p_p);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._keep_sentence(text, bigint, jsonb, text, text, text, real) IS
'Stores the rule or incident sentence of a long turn in its ring (or as a candidate), linked to the turn; '
'or marks a short memory a candidate.';

-- p_contradicts: NULL to detect conflicts (sql/160-dissonance.sql), '{}' for none, or the caller's
-- verdict; p_unlike: memories the text must not be merged into as a near-duplicate (it contradicts them).
-- What remember() refuses before it stores anything; returns the memories the caller says the text
-- contradicts (NULL: detect them), each once.
DROP FUNCTION IF EXISTS cogmem._checked_input(text, text, text, jsonb, public.vector, bigint[], integer);
CREATE OR REPLACE FUNCTION cogmem._checked_input(
    t cogmem.tenants, p_content text, p_ring text, p_topics text[], p_source jsonb, p_embedding public.vector,
    p_contradicts bigint[]
)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_named bigint[];
BEGIN
    IF p_content IS NULL THEN
        RAISE EXCEPTION 'content must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the text to remember.';
    END IF;
    IF btrim(p_content) = '' THEN
        RAISE EXCEPTION 'content must not be empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass the text to remember.';
    END IF;
    IF length(p_content) > t.max_content_chars THEN
        RAISE EXCEPTION 'content has % characters, the limit for tenant "%" is %',
            length(p_content), t.tenant, t.max_content_chars
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
    IF jsonb_typeof(coalesce(p_source, '{}')) <> 'object' THEN
        RAISE EXCEPTION 'source must be a JSON object, got %', jsonb_typeof(coalesce(p_source, '{}'))
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass provenance as an object, e.g. {"who": "ayse", "channel": "slack"}.';
    END IF;
    IF cogmem._said_problem(p_source) IS NOT NULL THEN
        RAISE EXCEPTION 'source %', cogmem._said_problem(p_source)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'conversation and speaker are names, said_at a timestamp such as 2026-03-02T19:40:00Z.';
    END IF;
    PERFORM cogmem._check_limits(t, p_topics, p_source);
    PERFORM cogmem._check_embedding(p_embedding);
    IF cardinality(p_contradicts) > 0 THEN
        SELECT array_agg(DISTINCT c.id ORDER BY c.id) INTO v_named FROM unnest(p_contradicts) AS c (id);
        IF (SELECT count(*) FROM cogmem.memories AS m WHERE m.tenant = t.tenant AND m.memory_id = ANY (v_named))
           < cardinality(v_named) THEN
            RAISE EXCEPTION 'contradicts names memories tenant "%" does not have', t.tenant
                USING ERRCODE = 'no_data_found',
                      HINT = 'Pass ids of the tenant''s memories the text contradicts, ''{}'' for none, or NULL to detect.';
        END IF;
    END IF;
    RETURN coalesce(v_named, CASE WHEN p_contradicts IS NOT NULL THEN '{}'::bigint[] END);
END;
$$;
COMMENT ON FUNCTION cogmem._checked_input(cogmem.tenants, text, text, text[], jsonb, public.vector, bigint[]) IS
'Checks a text to remember (content, ring, topics, source, embedding, named contradictions), a clear error each; '
'returns the named contradictions, NULL to detect them.';

-- The established memories a text may duplicate (close_ids, by sign bits) and those the contradiction
-- model says it contradicts (conflict_ids). Named contradictions (p_contradicts non-empty) skip both.
CREATE OR REPLACE FUNCTION cogmem._detect_conflicts(
    p_tenant text, p_language regconfig, p_content text, p_ring cogmem.ring, p_instruction boolean,
    p_embedding public.vector, p_diss_sim real, p_contradicts bigint[], p_near_duplicates boolean,
    OUT close_ids bigint[], OUT conflict_ids bigint[]
)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_bits_radius integer;
    v_bits        bit(384);
    v_words       text[];
    v_cues        real[];
BEGIN
    IF cardinality(p_contradicts) > 0 THEN
        conflict_ids := p_contradicts;
        RETURN;
    END IF;
    -- Full vectors are compared only for memories within a radius of sign bits (cosine 0.92, the
    -- near-duplicate default, is ~50 of 384 bits apart; cosine 0.4, the dissonance default, ~142): those
    -- bits come from an index-only scan. The radius is the expected distance plus dims/16 bits (~2.5
    -- standard deviations), at least a quarter of the bits. A near-duplicate beyond it would still be
    -- merged by the nightly consolidation. Two statements, so that no plan compares bits per row pair.
    v_bits_radius := cogmem.embedding_dimensions() / 4;
    -- An incident is what happened, not an instruction: it neither contradicts nor is contradicted.
    IF p_contradicts IS NULL AND p_ring = 'shocks' THEN
        p_contradicts := '{}';
    END IF;
    IF p_contradicts IS NULL THEN
        v_bits_radius := greatest(v_bits_radius, ceil(cogmem.embedding_dimensions() * acos(p_diss_sim) / pi())::integer + cogmem.embedding_dimensions() / 16);
        v_words := coalesce(tsvector_to_array(to_tsvector(p_language, p_content)), '{}');
        v_cues := cogmem._inbound_cues(p_content);  -- once, for every established memory compared
    END IF;
    IF p_embedding IS NOT NULL AND (p_near_duplicates OR p_contradicts IS NULL) THEN
        v_bits := public.binary_quantize(p_embedding)::bit(384);  -- once, not per compared row
        SELECT array_agg(b.memory_id) INTO close_ids
        FROM cogmem.memories AS b
        WHERE b.tenant = p_tenant AND b.embedding_bits OPERATOR(public.<~>) v_bits <= v_bits_radius;
        -- Contradiction (sql/035-contradiction.sql): an established memory close in meaning that the
        -- contradiction model says this text contradicts.
        IF close_ids IS NOT NULL AND p_contradicts IS NULL THEN
            SELECT array_agg(m.memory_id ORDER BY m.memory_id) INTO conflict_ids
            FROM cogmem.memories AS m
            CROSS JOIN LATERAL (SELECT 1 - (m.embedding OPERATOR(public.<=>) p_embedding) AS similarity) AS c
            WHERE m.tenant = p_tenant AND m.memory_id = ANY (close_ids) AND m.ring NOT IN ('fresh', 'shocks')
              AND c.similarity >= p_diss_sim
              AND cogmem._contradiction(m.content, m.ring::text, p_content, v_cues, c.similarity, p_language,
                                        p_instruction);
        END IF;
    ELSIF p_contradicts IS NULL THEN
        -- No embedding: closeness is two words in common, and the model without a cosine decides.
        SELECT array_agg(m.memory_id ORDER BY m.memory_id) INTO conflict_ids
        FROM cogmem.memories AS m
        WHERE m.tenant = p_tenant AND m.ring NOT IN ('fresh', 'shocks')
          AND m.search @@ cogmem._or_query(v_words)
          AND cogmem._shared_words(m.search, v_words) >= 2
          AND cogmem._contradiction(m.content, m.ring::text, p_content, v_cues, NULL, p_language, p_instruction);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._detect_conflicts(
    text, regconfig, text, cogmem.ring, boolean, public.vector, real, bigint[], boolean
) IS
'The memories close to a text in meaning, and those it contradicts by the contradiction model.';

-- Held, not stored and not merged: a person (or the caller's judge) resolves it (sql/160-dissonance.sql).
CREATE OR REPLACE FUNCTION cogmem._hold_conflict(
    p_tenant text, p_content text, p_ring cogmem.ring, p_topics text[], p_embedding public.vector, p_source jsonb,
    p_redactions text[], p_conflicts bigint[], p_verdict text
)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_conflict_id bigint;
BEGIN
    INSERT INTO cogmem.conflicts AS c (tenant, content, ring, topics, embedding, source, redactions,
                                       conflicts_with, verdict)
    VALUES (p_tenant, p_content, p_ring, p_topics, p_embedding, p_source, p_redactions, p_conflicts, p_verdict)
    RETURNING c.conflict_id INTO v_conflict_id;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (p_tenant, 'metacognition', 'conflict_opened',
            jsonb_build_object('conflict_id', v_conflict_id, 'conflicts_with', to_jsonb(p_conflicts),
                               'verdict', p_verdict, 'ring', p_ring, 'topics', to_jsonb(p_topics),
                               'redactions', to_jsonb(p_redactions)));
    RETURN v_conflict_id;
END;
$$;
COMMENT ON FUNCTION cogmem._hold_conflict(
    text, text, cogmem.ring, text[], public.vector, jsonb, text[], bigint[], text
) IS
'Holds an instruction that contradicts established memories as an open conflict; audited. Returns its id.';

-- A near-duplicate by meaning among the close memories, unless its discriminating details differ
-- (then the two are siblings, linked by the night).
CREATE OR REPLACE FUNCTION cogmem._near_duplicate(
    p_tenant text, p_content text, p_embedding public.vector, p_close bigint[], p_unlike bigint[], p_dup_sim real,
    OUT memory_id bigint, OUT similarity double precision
)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_near_id  bigint;
    v_near_sim double precision;
BEGIN
    SELECT m.memory_id, 1 - (m.embedding OPERATOR(public.<=>) p_embedding)
    INTO v_near_id, v_near_sim
    FROM cogmem.memories AS m
    WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_close) AND m.embedding IS NOT NULL
      AND NOT m.memory_id = ANY (coalesce(p_unlike, '{}'))
    ORDER BY m.embedding OPERATOR(public.<=>) p_embedding
    LIMIT 1;
    -- Nested, not one AND: the details are compared only for a near neighbour (an AND in one
    -- expression let the planner compute them on every call).
    IF v_near_id IS NOT NULL AND v_near_sim >= p_dup_sim THEN
        IF cogmem._details(p_content) = (SELECT cogmem._details(m.content) FROM cogmem.memories AS m
                                         WHERE m.tenant = p_tenant AND m.memory_id = v_near_id) THEN
            memory_id := v_near_id;
            similarity := v_near_sim;
        END IF;
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._near_duplicate(text, text, public.vector, bigint[], bigint[], real) IS
'The closest memory at or above the duplicate similarity whose details are the same; NULLs when none.';

-- Stores a new memory with its statistics and audit rows, linking what it contradicts; the same
-- normalised text already stored is rehearsed instead.
DROP FUNCTION IF EXISTS cogmem._store_memory(
    text, regconfig, text, cogmem.ring, boolean, text[], public.vector, jsonb, text[], bigint[], text
);  -- before it took the fingerprint its caller had computed
CREATE OR REPLACE FUNCTION cogmem._store_memory(
    p_tenant text, p_language regconfig, p_content text, p_ring cogmem.ring, p_routed boolean, p_topics text[],
    p_embedding public.vector, p_source jsonb, p_redactions text[], p_contradicted bigint[], p_verdict text,
    p_fingerprint text
)
RETURNS TABLE (
    memory_id bigint, ring text, topics text[], action text, redactions text[], conflict_id bigint,
    conflicts_with bigint[]
)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_id       bigint;
    v_inserted boolean;
BEGIN
    -- Same normalised text: the unique fingerprint index decides atomically, even under concurrency.
    INSERT INTO cogmem.memories AS m (tenant, ring, content, topics, language, embedding, redactions, source,
                                      fingerprint)
    VALUES (p_tenant, p_ring, p_content, p_topics, p_language, p_embedding, p_redactions, p_source, p_fingerprint)
    ON CONFLICT (tenant, fingerprint) DO NOTHING
    RETURNING m.memory_id INTO v_id;
    v_inserted := v_id IS NOT NULL;

    IF NOT v_inserted THEN
        SELECT m.memory_id INTO v_id FROM cogmem.memories AS m
        WHERE m.tenant = p_tenant AND m.fingerprint = p_fingerprint;
        RETURN QUERY SELECT r.*, NULL::bigint, NULL::bigint[] FROM cogmem._rehearse(p_tenant, v_id,
            p_redactions, jsonb_build_object('match', 'same_text')) AS r;
        RETURN;
    END IF;

    INSERT INTO cogmem.memory_stats (tenant, memory_id) VALUES (p_tenant, v_id);
    -- The audit keeps where a memory came from as a hash: the source may name a person (erasure).
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (p_tenant, 'write', v_id, 'created',
            jsonb_build_object('ring', p_ring, 'routed', p_routed, 'topics', to_jsonb(p_topics),
                               'embedded', p_embedding IS NOT NULL,
                               'source_sha256', encode(sha256(convert_to(p_source::text, 'UTF8')), 'hex')));
    IF cardinality(p_redactions) > 0 THEN
        INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
        VALUES (p_tenant, 'write', v_id, 'redacted', jsonb_build_object('kinds', to_jsonb(p_redactions)));
    END IF;
    IF p_contradicted IS NOT NULL THEN
        PERFORM cogmem._link_contradiction(p_tenant, v_id, p_contradicted, coalesce(p_verdict, 'detected'));
    END IF;
    RETURN QUERY SELECT v_id, p_ring::text, p_topics, 'created'::text, p_redactions, NULL::bigint,
                        p_contradicted;
END;
$$;
COMMENT ON FUNCTION cogmem._store_memory(
    text, regconfig, text, cogmem.ring, boolean, text[], public.vector, jsonb, text[], bigint[], text, text
) IS
'Inserts a checked, redacted, routed memory (or rehearses the same text stored before, p_fingerprint being '
'cogmem._fingerprint of the content); audited.';

-- The one store. Longer than a screen only as the list of its stages, each one call: checks, redaction,
-- the same text, routing, topics, conflicts, near-duplicates, storing.
DROP FUNCTION IF EXISTS cogmem._remember(text, text, text, text[], public.vector, jsonb, bigint[], bigint[]);
CREATE OR REPLACE FUNCTION cogmem._remember(
    p_tenant text, p_content text, p_ring text, p_topics text[], p_embedding public.vector, p_source jsonb,
    p_contradicts bigint[], p_unlike bigint[] DEFAULT '{}', p_near_duplicates boolean DEFAULT TRUE
)
RETURNS TABLE (
    memory_id bigint, ring text, topics text[], action text, redactions text[], conflict_id bigint,
    conflicts_with bigint[]
)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Every statement here reads one tenant's rows through an index. A session keeps its plans, and a
-- plan made while the table was nearly empty scans all of it, at a cost that grows with the table.
SET enable_seqscan = off
-- One plan per statement for the session, not one per call's tenant (see cogmem.recall).
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_tenant     text := p_tenant;
    t            cogmem.tenants;
    v_language   regconfig;
    v_content    text;
    v_redactions text[];
    v_ring       cogmem.ring;
    v_topics     text[];
    v_embedding  public.vector;
    v_named      bigint[];
    v_found      record;
    v_near       record;
    v_fingerprint text;
    v_verdict    text;
    v_instruction boolean;
    v_contradicted bigint[];
    v_rule       text;
    v_rule_ring  cogmem.ring;
    v_stored     record;
    v_candidate  text;
    v_rule_candidate text;
    v_probabilities jsonb;
BEGIN
    -- Its callers (remember, remember_many, observe, report_error, resolve_conflict, end_session) checked
    -- reach first.
    PERFORM cogmem._lock_tenant(v_tenant, false);
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = v_tenant;
    v_language := t.language;
    v_named := cogmem._checked_input(t, p_content, p_ring, p_topics, p_source, p_embedding, p_contradicts);
    v_verdict := CASE WHEN cardinality(v_named) > 0 THEN 'caller' END;

    -- Redact first: nothing below, including the duplicate check, sees a secret.
    SELECT r.redacted, r.redactions INTO v_content, v_redactions FROM cogmem.redact(btrim(p_content)) AS r;
    -- The same text again is the same memory, heard again: not a conflict with itself.
    v_fingerprint := cogmem._fingerprint(v_content);
    SELECT m.memory_id INTO v_near FROM cogmem.memories AS m
    WHERE m.tenant = v_tenant AND m.fingerprint = v_fingerprint;
    IF v_near.memory_id IS NOT NULL THEN
        PERFORM cogmem._restated_candidate(v_tenant, v_near.memory_id, NULL);
        RETURN QUERY SELECT r.*, NULL::bigint, NULL::bigint[]
        FROM cogmem._rehearse(v_tenant, v_near.memory_id, v_redactions, jsonb_build_object('match', 'same_text')) AS r;
        RETURN;
    END IF;
    v_embedding := coalesce(p_embedding, cogmem.embed(v_content));
    -- Inbound attention (sql/030-routing.sql): the ring, unless the caller chose it, and whether the text
    -- is an instruction, which only rules and steps are by their ring.
    SELECT coalesce(p_ring, c.ring)::cogmem.ring, c.instruction, CASE WHEN p_ring IS NULL THEN c.candidate END,
           c.probabilities
    INTO v_ring, v_instruction, v_candidate, v_probabilities
    FROM cogmem.classify(v_content, v_embedding) AS c;
    -- A turn of a conversation needs more certainty for a never-cut ring; below it, it is a candidate.
    IF p_ring IS NULL AND v_ring IN ('dos_and_donts', 'shocks') AND p_source ? 'conversation'
       AND (v_probabilities ->> v_ring::text)::real < t.turn_never_cut_probability THEN
        v_candidate := v_ring::text;
        v_ring := 'fresh';
    END IF;
    -- A long turn routed to a never-cut ring (or likely of one) stays an ordinary memory; the sentence that
    -- is the rule or the incident goes to the ring (or becomes the candidate), once the turn is stored.
    IF p_ring IS NULL AND (v_ring IN ('dos_and_donts', 'shocks') OR v_candidate IS NOT NULL) THEN
        v_rule := cogmem._rule_sentence(v_content, coalesce(v_candidate, v_ring::text));
        IF v_rule IS NOT NULL THEN
            v_rule_ring := CASE WHEN v_ring IN ('dos_and_donts', 'shocks') THEN v_ring END;
            v_rule_candidate := v_candidate;
            v_candidate := NULL;
            v_ring := CASE WHEN v_rule_ring IS NOT NULL THEN 'fresh' ELSE v_ring END;
            v_instruction := v_instruction AND v_rule_ring IS NULL;
        END IF;
    END IF;
    v_instruction := v_instruction OR v_ring IN ('dos_and_donts', 'procedures');
    v_topics := coalesce(cogmem._normalize_topics(p_topics),
                         cogmem._detect_topics(v_tenant, v_content, v_language));
    SELECT * INTO v_found
    FROM cogmem._detect_conflicts(v_tenant, v_language, v_content, v_ring, v_instruction, v_embedding, t.dissonance_similarity,
                                  v_named, p_near_duplicates);

    -- Only an instruction is held: a statement of fact that contradicts an older memory is stored, and
    -- the older one linked and weakened. Nothing a person said is lost to a heuristic.
    IF v_found.conflict_ids IS NOT NULL AND NOT v_instruction THEN
        v_contradicted := v_found.conflict_ids;
        p_unlike := coalesce(p_unlike, '{}') || v_contradicted;
    ELSIF v_found.conflict_ids IS NOT NULL THEN
        RETURN QUERY SELECT NULL::bigint, v_ring::text, v_topics, 'conflict'::text, v_redactions,
                            cogmem._hold_conflict(v_tenant, v_content, v_ring, v_topics, v_embedding,
                                                  coalesce(p_source, '{}'), v_redactions, v_found.conflict_ids,
                                                  coalesce(v_verdict, 'detected')),
                            v_found.conflict_ids;
        RETURN;
    END IF;
    IF v_found.close_ids IS NOT NULL AND p_near_duplicates THEN
        SELECT * INTO v_near
        FROM cogmem._near_duplicate(v_tenant, v_content, v_embedding, v_found.close_ids, p_unlike,
                                     t.duplicate_similarity);
        IF v_near.memory_id IS NOT NULL THEN
            PERFORM cogmem._restated_candidate(v_tenant, v_near.memory_id, v_probabilities);
            RETURN QUERY SELECT r.*, NULL::bigint, NULL::bigint[] FROM cogmem._rehearse(v_tenant, v_near.memory_id,
                v_redactions, jsonb_build_object('match', 'similar', 'similarity', round(v_near.similarity::numeric, 4)))
                AS r;
            RETURN;
        END IF;
    END IF;
    SELECT * INTO v_stored
    FROM cogmem._store_memory(v_tenant, v_language, v_content, v_ring, p_ring IS NULL, v_topics, v_embedding,
                              coalesce(p_source, '{}'), v_redactions, v_contradicted, v_verdict, v_fingerprint);
    IF v_stored.action = 'created' THEN
        PERFORM cogmem._keep_sentence(v_tenant, v_stored.memory_id, coalesce(p_source, '{}'), v_rule, v_rule_ring::text,
                                      coalesce(v_rule_candidate, v_candidate),
                                      (v_probabilities ->> coalesce(v_rule_candidate, v_candidate))::real);
        PERFORM cogmem._restated_sibling_candidates(t, v_stored.memory_id, v_candidate, v_embedding,
                                                    v_found.close_ids, v_probabilities);
    END IF;
    RETURN QUERY SELECT v_stored.memory_id, v_stored.ring, v_stored.topics, v_stored.action, v_stored.redactions,
                        v_stored.conflict_id, v_stored.conflicts_with;
END;
$$;
COMMENT ON FUNCTION cogmem._remember(text, text, text, text[], public.vector, jsonb, bigint[], bigint[], boolean) IS
'The one store: cogmem.remember() and each item of remember_many() (PL/pgSQL cannot name an input and an '
'output column alike). p_near_duplicates = false: a batch that skips that check on purpose.';

-- What remember and remember_many tell the caller besides each memory: the never-cut ring it (or the
-- sentence taken from it) is a candidate for, and the memory that keeps the sentence of a long turn that
-- is a rule or an incident. One statement for a whole batch; the one-memory form it replaced is dropped.
DROP FUNCTION IF EXISTS cogmem._remembered_as(text, bigint);
CREATE OR REPLACE FUNCTION cogmem._remembered_as(p_tenant text, p_memory_ids bigint[])
RETURNS TABLE (memory_id bigint, candidate text, excerpt_id bigint)
-- Volatile: it must see what the batch just wrote. PL/pgSQL: its plan is kept for the session.
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT x.id, coalesce(m.candidate_ring, e.candidate_ring)::text, e.memory_id
    FROM (SELECT DISTINCT i.id FROM unnest(p_memory_ids) AS i (id) WHERE i.id IS NOT NULL) AS x
    LEFT JOIN cogmem.memories AS m ON m.tenant = p_tenant AND m.memory_id = x.id
    LEFT JOIN LATERAL (SELECT k.memory_id, k.candidate_ring FROM cogmem.memories AS k
                       WHERE k.tenant = p_tenant AND k.excerpt_of = x.id ORDER BY k.memory_id DESC LIMIT 1) AS e ON true;
END;
$$;
COMMENT ON FUNCTION cogmem._remembered_as(text, bigint[]) IS
'Each stored memory''s candidate ring (its own or its sentence''s) and the memory keeping its rule sentence.';

-- The public signature is a contract; its output columns reuse input names (ring, topics), which only
-- a SQL-language function allows, so it wraps the PL/pgSQL implementation.
-- Before 0028 remember took no conversation, speaker or time.
DROP FUNCTION IF EXISTS cogmem.remember(text, text, text, text[], public.vector, jsonb, bigint[]);
CREATE OR REPLACE FUNCTION cogmem.remember(
    tenant text,
    content text,
    ring text DEFAULT NULL,
    topics text[] DEFAULT NULL,
    embedding public.vector DEFAULT NULL,
    source jsonb DEFAULT '{}',
    contradicts bigint[] DEFAULT NULL,
    conversation text DEFAULT NULL,
    speaker text DEFAULT NULL,
    said_at timestamptz DEFAULT NULL
)
RETURNS TABLE (
    memory_id bigint, ring text, topics text[], action text, redactions text[], conflict_id bigint,
    conflicts_with bigint[], candidate text, excerpt_id bigint
)
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._reach(tenant);
    SELECT r.*, a.candidate, a.excerpt_id
    FROM cogmem._remember(tenant, content, ring, topics, embedding,
                          cogmem._with_said(source, conversation, speaker, said_at), contradicts) AS r
    LEFT JOIN cogmem._remembered_as(tenant, ARRAY[r.memory_id]) AS a ON a.memory_id = r.memory_id;
$$;
COMMENT ON FUNCTION cogmem.remember(
    text, text, text, text[], public.vector, jsonb, bigint[], text, text, timestamptz
) IS
'Stores a memory: redacts secrets, routes it to a ring (when ring is NULL), detects topics (when NULL), '
'embeds it (when NULL and the server can). A near-duplicate rehearses the existing memory instead '
'(action = duplicate). An instruction that contradicts an established memory is held, not stored '
'(action = conflict, with conflict_id and conflicts_with; see resolve_conflict); a statement of fact that '
'does is stored, linked to them and weakens them (action = created, with conflicts_with). contradicts '
'passes the caller''s own verdict (memory ids, or ''{}'' for none). conversation, speaker and said_at say '
'where it was said (a turn of a conversation: recall brings its neighbours, its speaker and its date). '
'Returns the memory, its ring, topics, the action, what was redacted, the never-cut ring it is a candidate '
'for (likely a rule or an incident, not sure enough: kept in fresh, never fading, see pending_rules), and '
'for a long turn whose one sentence is a rule or an incident, the memory keeping that sentence.';

-- The batch path: many memories in one call (a loader, an import, a backfill). By default every item
-- gets all the checks of the one store, _remember(): those no check relates to anything are stored
-- set-based, the others through _remember() in order. A loader that has its own may skip the
-- checks by meaning, on purpose: then the batch is stored set-based, de-duplicating the same text only,
-- and near-duplicates are left to the nightly merge. A bad item rejects the whole batch, naming it.

-- The first item of a batch that cannot be stored, and what is wrong with it (no row: all are fine).
DROP FUNCTION IF EXISTS cogmem._batch_problem(jsonb, public.vector[], integer, integer);
CREATE OR REPLACE FUNCTION cogmem._batch_problem(
    t cogmem.tenants, p_items jsonb, p_embeddings public.vector[], p_dimensions integer
)
RETURNS TABLE (item integer, problem text)
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT c.n::integer, c.problem
    FROM (
        SELECT i.n, CASE
                WHEN jsonb_typeof(i.value) NOT IN ('object', 'string') THEN 'is neither a text nor an object'
                WHEN jsonb_typeof(i.value) = 'object' AND EXISTS (
                    SELECT FROM jsonb_object_keys(i.value) AS k
                    WHERE k NOT IN ('content', 'ring', 'topics', 'source', 'conversation', 'speaker', 'said_at'))
                    THEN 'has unknown keys (known: content, ring, topics, source, conversation, speaker, said_at)'
                WHEN jsonb_typeof(coalesce(i.value -> 'content', i.value)) <> 'string' THEN 'has no text content'
                WHEN btrim(coalesce(i.value ->> 'content', i.value #>> '{}')) = '' THEN 'has empty content'
                WHEN length(coalesce(i.value ->> 'content', i.value #>> '{}')) > t.max_content_chars
                    THEN format('has %s characters, the limit is %s',
                                length(coalesce(i.value ->> 'content', i.value #>> '{}')), t.max_content_chars)
                WHEN jsonb_typeof(i.value -> 'ring') NOT IN ('string', 'null')
                  OR NOT (i.value ->> 'ring') = ANY (enum_range(NULL::cogmem.ring)::text[])
                    THEN format('has unknown ring %s', i.value -> 'ring')
                WHEN jsonb_typeof(i.value -> 'topics') NOT IN ('array', 'null')
                  OR EXISTS (SELECT FROM jsonb_array_elements(CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array'
                                                                  THEN i.value -> 'topics' END) AS t
                             WHERE jsonb_typeof(t) <> 'string')
                    THEN 'has topics that are not an array of texts'
                WHEN jsonb_typeof(i.value -> 'source') NOT IN ('object', 'null') THEN 'has a source that is not an object'
                WHEN cogmem._said_problem(i.value) IS NOT NULL THEN cogmem._said_problem(i.value)
                WHEN cogmem._said_problem(i.value -> 'source') IS NOT NULL
                    THEN 'source ' || cogmem._said_problem(i.value -> 'source')
                WHEN jsonb_array_length(CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array' THEN i.value -> 'topics' END)
                     > t.max_topics
                    THEN format('has %s topics, the limit is %s', jsonb_array_length(i.value -> 'topics'), t.max_topics)
                WHEN (SELECT max(length(x)) FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array'
                                                                                 THEN i.value -> 'topics' END) AS x)
                     > t.max_topic_chars
                    THEN format('has a topic longer than %s characters', t.max_topic_chars)
                WHEN octet_length((i.value -> 'source')::text) > t.max_source_bytes
                    THEN format('has a source of %s bytes, the limit is %s', octet_length((i.value -> 'source')::text),
                                t.max_source_bytes)
                WHEN public.vector_dims(i.embedding) <> p_dimensions
                    THEN format('has an embedding of %s dimensions, expected %s',
                                public.vector_dims(i.embedding), p_dimensions)
                WHEN NOT cogmem._comparable(i.embedding)
                    THEN 'has an embedding that cannot be compared (zero, or too small or too large)'
            END AS problem
        -- Zipped, not embeddings[n]: subscripting an array of vectors walks it from the start every time.
        FROM ROWS FROM (jsonb_array_elements(p_items), unnest(p_embeddings))
             WITH ORDINALITY AS i (value, embedding, n)
    ) AS c
    WHERE c.problem IS NOT NULL
    ORDER BY c.n LIMIT 1;
$$;
COMMENT ON FUNCTION cogmem._batch_problem(cogmem.tenants, jsonb, public.vector[], integer) IS
'The first bad item of a remember_many batch, numbered from 1, with what is wrong with it.';

-- Redacted, routed, with topics and an embedding: a batch as remember() would see each item.
CREATE OR REPLACE FUNCTION cogmem._prepare_batch(
    p_tenant text, p_language regconfig, p_items jsonb, p_embeddings public.vector[]
)
RETURNS cogmem._batch_item[]
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_items cogmem._batch_item[];
    t       cogmem.tenants;
BEGIN
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = p_tenant;
    -- Redact first, as remember() does: routing, topics, fingerprint and embedding never see a secret. A
    -- long turn routed to a never-cut ring carries the sentence that ring keeps (rule); the turn itself is
    -- stored as fresh (_store_same_text, _remember).
    SELECT array_agg(ROW(p.n, r.redacted, k.ring::cogmem.ring,
                         p.ring IS NULL,
                         coalesce(cogmem._normalize_topics(p.topics), cogmem._detect_topics(p_tenant, r.redacted, p_language)),
                         e.embedding, p.source, r.redactions,
                         cogmem._fingerprint(r.redacted), x.rule, k.candidate, (k.probabilities ->> k.candidate)::real
                     )::cogmem._batch_item ORDER BY p.n)
    INTO v_items
    FROM (
        SELECT i.n::integer AS n, coalesce(i.value ->> 'content', i.value #>> '{}') AS content,
               i.value ->> 'ring' AS ring,
               CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array'
                    THEN ARRAY(SELECT jsonb_array_elements_text(i.value -> 'topics')) END AS topics,
               i.embedding,
               coalesce(CASE WHEN jsonb_typeof(i.value) = 'object' THEN i.value -> 'source' END, '{}') AS source
        FROM ROWS FROM (jsonb_array_elements(p_items), unnest(p_embeddings))
             WITH ORDINALITY AS i (value, embedding, n)
    ) AS p
    CROSS JOIN LATERAL cogmem.redact(btrim(p.content)) AS r
    CROSS JOIN LATERAL (SELECT coalesce(p.embedding, cogmem.embed(r.redacted)) AS embedding) AS e
    -- Routed only when the caller gave no ring (a CASE evaluates its subquery only then).
    CROSS JOIN LATERAL (
        SELECT CASE WHEN p.ring IS NULL THEN (SELECT to_jsonb(x) FROM cogmem.classify(r.redacted, e.embedding) AS x)
               END AS routed
    ) AS c
    CROSS JOIN LATERAL (
        -- A turn of a conversation needs more certainty for a never-cut ring (as in _remember).
        SELECT coalesce(p.ring, CASE WHEN d.doubted THEN 'fresh' ELSE c.routed ->> 'ring' END) AS ring,
               CASE WHEN d.doubted THEN c.routed ->> 'ring' ELSE c.routed ->> 'candidate' END AS candidate,
               c.routed -> 'probabilities' AS probabilities
        FROM (SELECT c.routed ->> 'ring' IN ('dos_and_donts', 'shocks') AND p.source ? 'conversation'
                     AND (c.routed #>> ARRAY['probabilities', c.routed ->> 'ring'])::real
                         < t.turn_never_cut_probability AS doubted) AS d
    ) AS k
    CROSS JOIN LATERAL (SELECT CASE WHEN p.ring IS NULL AND (k.ring IN ('dos_and_donts', 'shocks') OR k.candidate IS NOT NULL)
                                    THEN cogmem._rule_sentence(r.redacted, coalesce(k.candidate, k.ring)) END AS rule) AS x;
    RETURN v_items;
END;
$$;
COMMENT ON FUNCTION cogmem._prepare_batch(text, regconfig, jsonb, public.vector[]) IS
'A remember_many batch redacted first, then routed, given topics and embedded, in item order.';

-- The set-based store for a batch that skips the checks by meaning: the same text only. Longer than a
-- screen as the steps of one batch, each set-based: insert, rehearse, audit, the rule sentences.
CREATE OR REPLACE FUNCTION cogmem._store_same_text(p_tenant text, p_language regconfig, p_items cogmem._batch_item[])
RETURNS TABLE (item integer, memory_id bigint, ring text, topics text[], action text, redactions text[])
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_new_ids          bigint[];
    v_new_fingerprints text[];
    v_ids              bigint[];
    v_created          boolean[];
BEGIN

    -- The unique fingerprint index decides what is new, the first of equal items in the batch included.
    WITH inserted AS (
        INSERT INTO cogmem.memories AS m (tenant, ring, content, topics, language, embedding, redactions, source,
                                          fingerprint)
        SELECT p_tenant, CASE WHEN b.rule IS NOT NULL AND b.candidate IS NULL THEN 'fresh' ELSE b.ring END, b.content, b.topics, p_language,
               b.embedding, b.redactions, b.source, b.fingerprint
        FROM unnest(p_items) AS b
        ORDER BY b.item
        ON CONFLICT (tenant, fingerprint) DO NOTHING
        RETURNING m.memory_id, m.fingerprint
    )
    SELECT coalesce(array_agg(i.memory_id), '{}'), coalesce(array_agg(i.fingerprint), '{}')
    INTO v_new_ids, v_new_fingerprints
    FROM inserted AS i;
    SELECT array_agg(n.id ORDER BY b.item), array_agg(b.first AND n.id IS NOT NULL ORDER BY b.item)
    INTO v_ids, v_created
    FROM (
        SELECT x.item, x.fingerprint, x.item = min(x.item) OVER (PARTITION BY x.fingerprint) AS first
        FROM unnest(p_items) AS x
    ) AS b
    LEFT JOIN unnest(v_new_ids, v_new_fingerprints) AS n (id, fingerprint) ON n.fingerprint = b.fingerprint;
    IF array_position(v_ids, NULL) IS NOT NULL THEN
        -- Texts stored before: a new statement also sees those a concurrent writer won the race for.
        SELECT array_agg(coalesce(x.id, m.memory_id) ORDER BY x.ordinality) INTO v_ids
        FROM unnest(v_ids, p_items) WITH ORDINALITY AS x (id, item, content, ring, routed, topics, embedding, source,
                                                          redactions, fingerprint, rule, candidate, candidate_p,
                                                          ordinality)
        LEFT JOIN cogmem.memories AS m ON x.id IS NULL AND m.tenant = p_tenant AND m.fingerprint = x.fingerprint;
    END IF;
    IF array_position(v_ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'item % matched a memory that was erased meanwhile', array_position(v_ids, NULL)
            USING ERRCODE = 'serialization_failure', HINT = 'Retry the batch.';
    END IF;

    INSERT INTO cogmem.memory_stats (tenant, memory_id) SELECT p_tenant, n.id FROM unnest(v_new_ids) AS n (id);
    -- Hearing a text again is a rehearsal (as in remember()).
    PERFORM cogmem._lock_stats(p_tenant, ARRAY(SELECT i.id FROM unnest(v_ids, v_created) AS i (id, created)
                                               WHERE NOT i.created));
    UPDATE cogmem.memory_stats AS s
    SET rehearsal_count = s.rehearsal_count + d.heard, last_recalled_at = now()
    FROM (
        SELECT i.id, count(*)::integer AS heard FROM unnest(v_ids, v_created) AS i (id, created)
        WHERE NOT i.created GROUP BY i.id
    ) AS d
    WHERE s.tenant = p_tenant AND s.memory_id = d.id;

    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    SELECT p_tenant, 'write', j.id, e.event, e.detail
    FROM unnest(p_items) WITH ORDINALITY AS b
    JOIN unnest(v_ids, v_created) WITH ORDINALITY AS j (id, created, ordinality) USING (ordinality)
    CROSS JOIN LATERAL (
        SELECT 'created' AS event,
               jsonb_build_object('ring', CASE WHEN b.rule IS NOT NULL AND b.candidate IS NULL THEN 'fresh' ELSE b.ring END,
                                  'routed', b.routed,
                                  'topics', to_jsonb(b.topics),
                                  'embedded', b.embedding IS NOT NULL, 'batch_item', b.item,
                                  'source_sha256', encode(sha256(convert_to(b.source::text, 'UTF8')), 'hex')) AS detail
        WHERE j.created
        UNION ALL
        SELECT 'redacted', jsonb_build_object('kinds', to_jsonb(b.redactions))
        WHERE j.created AND cardinality(b.redactions) > 0
        UNION ALL
        SELECT 'rehearsed', jsonb_build_object('match', 'same_text', 'batch_item', b.item)
        WHERE NOT j.created
    ) AS e;

    -- The rule sentences of the long turns just stored, through the one store; the candidates marked.
    PERFORM cogmem._keep_sentence(p_tenant, j.id, b.source, b.rule,
                                  CASE WHEN b.candidate IS NULL THEN b.ring::text END, b.candidate, b.candidate_p)
    FROM unnest(p_items) WITH ORDINALITY AS b
    JOIN unnest(v_ids, v_created) WITH ORDINALITY AS j (id, created, ordinality) USING (ordinality)
    WHERE j.created AND (b.rule IS NOT NULL OR b.candidate IS NOT NULL)
    ORDER BY b.item;

    RETURN QUERY
    SELECT b.item, j.id, m.ring::text, m.topics, CASE WHEN j.created THEN 'created' ELSE 'duplicate' END,
           b.redactions
    FROM unnest(p_items) WITH ORDINALITY AS b
    JOIN unnest(v_ids, v_created) WITH ORDINALITY AS j (id, created, ordinality) USING (ordinality)
    JOIN cogmem.memories AS m ON m.tenant = p_tenant AND m.memory_id = j.id
    ORDER BY b.item;
END;
$$;
COMMENT ON FUNCTION cogmem._store_same_text(text, regconfig, cogmem._batch_item[]) IS
'Stores a prepared batch set-based: new texts become memories, texts stored before are rehearsed; audited.';

-- The items of a prepared batch that stand alone: remember() would store each of them as it is, whatever
-- came before or after it, so they are stored set-based and the rest go through the one store in order.
-- An item stands alone when its text is one the tenant holds (it is rehearsed, whatever else happens),
-- or when the first item of its text has an embedding and no memory or other item within the widest
-- radius of sign bits any check uses is a near-duplicate candidate (the duplicate similarity) or a
-- contradiction by the model, in either direction. Such a neighbour changes nobody's outcome, so order
-- does not matter for it. Longer than a screen: it is the
-- checks of remember() (sql/035-contradiction.sql, _detect_conflicts) written once for the whole batch.
DROP FUNCTION IF EXISTS cogmem._batch_alone(cogmem.tenants, cogmem._batch_item[]);
CREATE OR REPLACE FUNCTION cogmem._batch_alone(
    t cogmem.tenants, p_items cogmem._batch_item[], p_near_duplicates boolean, p_conflicts boolean
)
RETURNS integer[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_dims   integer := cogmem.embedding_dimensions();
    v_radius integer;
    v_alone  integer[];
BEGIN
    v_radius := greatest(v_dims / 4, ceil(v_dims * acos(t.dissonance_similarity) / pi())::integer + v_dims / 16);
    -- Items of the same text share a fate: one the tenant holds is rehearsed whatever else happens, and
    -- the rest follow the first of them, which alone is checked by meaning.
    WITH b AS MATERIALIZED (
        SELECT x.item, x.content, x.ring, x.fingerprint, x.embedding, x.rule, x.candidate,
               public.binary_quantize(x.embedding)::bit(384) AS bits,
               x.item = min(x.item) OVER (PARTITION BY x.fingerprint) AS first,
               EXISTS (SELECT FROM cogmem.memories AS m WHERE m.tenant = t.tenant AND m.fingerprint = x.fingerprint)
                   AS known
        FROM unnest(p_items) AS x
    ),
    reps AS MATERIALIZED (
        SELECT b.* FROM b WHERE b.first AND NOT b.known
    ),
    -- The tenant's sign bits, read once from the covering index for the whole batch: the rows themselves
    -- are read only for the few memories within the radius of some item.
    tenant_bits AS MATERIALIZED (
        SELECT m.memory_id, m.embedding_bits FROM cogmem.memories AS m WHERE m.tenant = t.tenant
    ),
    -- Each as the new statement, against every memory and every other first item as the established one.
    close AS (
        SELECT r.item, r.content, r.ring, r.embedding, NULL::integer AS other, m.content AS e_content,
               m.ring AS e_ring, 1 - (m.embedding OPERATOR(public.<=>) r.embedding) AS similarity
        FROM reps AS r
        JOIN tenant_bits AS n ON n.embedding_bits OPERATOR(public.<~>) r.bits <= v_radius
        JOIN cogmem.memories AS m ON m.tenant = t.tenant AND m.memory_id = n.memory_id
        UNION ALL
        SELECT r.item, r.content, r.ring, r.embedding, o.item, o.content, o.ring,
               1 - (o.embedding OPERATOR(public.<=>) r.embedding)
        FROM reps AS r
        JOIN reps AS o ON o.item <> r.item AND o.bits OPERATOR(public.<~>) r.bits <= v_radius
    ),
    -- Materialized: each first item looks its pairs up below, and the pairs are computed once.
    harmful AS MATERIALIZED (
        SELECT c.item, c.other
        FROM close AS c
        WHERE (p_near_duplicates AND c.similarity >= t.duplicate_similarity)
           OR (p_conflicts AND c.ring <> 'shocks' AND c.e_ring NOT IN ('fresh', 'shocks')
               AND c.similarity >= t.dissonance_similarity
               AND cogmem._contradiction(c.e_content, c.e_ring::text, c.content, cogmem._inbound_cues(c.content),
                                         c.similarity, t.language,
                                         c.ring IN ('dos_and_donts', 'procedures')
                                         OR (SELECT k.instruction FROM cogmem.classify(c.content, c.embedding) AS k)))
    ),
    involved AS MATERIALIZED (
        SELECT r.fingerprint FROM reps AS r WHERE r.bits IS NULL OR r.rule IS NOT NULL OR r.candidate IS NOT NULL
        UNION
        SELECT r.fingerprint FROM reps AS r JOIN harmful AS h ON h.item = r.item
        UNION
        SELECT r.fingerprint FROM reps AS r JOIN harmful AS h ON h.other = r.item
    )
    SELECT coalesce(array_agg(b.item ORDER BY b.item), '{}') INTO v_alone
    FROM b
    WHERE b.known OR NOT EXISTS (SELECT FROM involved AS i WHERE i.fingerprint = b.fingerprint);
    RETURN v_alone;
END;
$$;
COMMENT ON FUNCTION cogmem._batch_alone(cogmem.tenants, cogmem._batch_item[], boolean, boolean) IS
'The items of a prepared batch (their numbers, in order) that no check by meaning or by text relates to '
'anything in the tenant or the batch: remember() would store each of them as it is.';

-- Every check of a batch, as remember() makes them item by item in order (each sees the tenant and the
-- items before it), with the items that stand alone stored set-based.
CREATE OR REPLACE FUNCTION cogmem._remember_batch(
    p_tenant text, p_language regconfig, p_items jsonb, p_embeddings public.vector[], p_skip text[]
)
RETURNS TABLE (
    item integer, memory_id bigint, ring text, topics text[], action text, redactions text[], conflict_id bigint,
    conflicts_with bigint[]
)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_item     record;
    v_prepared cogmem._batch_item[];
    v_alone    integer[];
BEGIN
    -- The items that stand alone are stored set-based first, since no check of any item can
    -- see them. Without an embedding an item is compared by words with everything, so such a batch goes
    -- item by item throughout.
    v_prepared := cogmem._prepare_batch(p_tenant, p_language, p_items, p_embeddings);
    IF NOT EXISTS (SELECT FROM unnest(v_prepared) AS b WHERE b.embedding IS NULL) THEN
        v_alone := cogmem._batch_alone((SELECT x FROM cogmem.tenants AS x WHERE x.tenant = p_tenant), v_prepared,
                                       NOT 'near_duplicates' = ANY (p_skip), NOT 'conflicts' = ANY (p_skip));
    END IF;
    IF cardinality(v_alone) > 0 THEN
        RETURN QUERY
        SELECT s.*, NULL::bigint, NULL::bigint[]
        FROM cogmem._store_same_text(p_tenant, p_language,
                                     ARRAY(SELECT b FROM unnest(v_prepared) AS b
                                           JOIN unnest(v_alone) AS a (item) ON a.item = b.item
                                           ORDER BY b.item)) AS s;
    END IF;
    FOR v_item IN
        SELECT i.n::integer AS n, coalesce(i.value ->> 'content', i.value #>> '{}') AS content,
               i.value ->> 'ring' AS ring, i.embedding,
               CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array'
                    THEN ARRAY(SELECT jsonb_array_elements_text(i.value -> 'topics')) END AS topics,
               CASE WHEN jsonb_typeof(i.value) = 'object' THEN i.value -> 'source' END AS source
        FROM ROWS FROM (jsonb_array_elements(p_items), unnest(p_embeddings))
             WITH ORDINALITY AS i (value, embedding, n)
        WHERE NOT i.n::integer = ANY (coalesce(v_alone, '{}'))
        ORDER BY i.n
    LOOP
        RETURN QUERY
        SELECT v_item.n, r.*
        FROM cogmem._remember(p_tenant, v_item.content, v_item.ring, v_item.topics, v_item.embedding, v_item.source,
                              CASE WHEN 'conflicts' = ANY (p_skip) THEN '{}'::bigint[] END, '{}',
                              NOT 'near_duplicates' = ANY (p_skip)) AS r;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION cogmem._remember_batch(text, regconfig, jsonb, public.vector[], text[]) IS
'remember_many() with its checks: the items that stand alone (cogmem._batch_alone) stored set-based, then '
'the others through the one store, in order; one row per item (remember_many() puts them in item order).';

DROP FUNCTION IF EXISTS cogmem.remember_many(text, jsonb, public.vector[]);  -- before skip and conflicts
DROP FUNCTION IF EXISTS cogmem.remember_many(text, jsonb, public.vector[], text[]);  -- before 0029: no candidates
CREATE OR REPLACE FUNCTION cogmem.remember_many(
    tenant text,
    items jsonb,
    embeddings public.vector[] DEFAULT NULL,
    skip text[] DEFAULT '{}'
)
RETURNS TABLE (
    item integer, memory_id bigint, ring text, topics text[], action text, redactions text[], conflict_id bigint,
    conflicts_with bigint[], candidate text, excerpt_id bigint
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes memories, their statistics and audit rows, which only the API's owner may.
AS $$
#variable_conflict use_column
DECLARE
    v_tenant   text := remember_many.tenant;
    v_language regconfig;
    v_count    integer;
    v_bad      record;
    v_items    jsonb;
BEGIN
    v_language := cogmem._reach(v_tenant);
    PERFORM cogmem._lock_tenant(v_tenant, false);
    IF remember_many.items IS NULL OR jsonb_typeof(remember_many.items) <> 'array' THEN
        RAISE EXCEPTION 'items must be a JSON array, got %', coalesce(jsonb_typeof(remember_many.items), 'NULL')
            USING ERRCODE = CASE WHEN remember_many.items IS NULL THEN 'null_value_not_allowed' ELSE 'invalid_parameter_value' END,
                  HINT = 'Pass a JSON array of texts or of {"content", "ring", "topics", "source"} objects.';
    END IF;
    v_count := jsonb_array_length(remember_many.items);
    IF v_count > 100000 THEN
        RAISE EXCEPTION 'a batch holds at most 100000 items, got %', v_count
            USING ERRCODE = 'program_limit_exceeded', HINT = 'Split it into batches of 1,000 to 10,000 items.';
    END IF;
    IF remember_many.embeddings IS NOT NULL AND cardinality(remember_many.embeddings) <> v_count THEN
        RAISE EXCEPTION '% embeddings for % items', cardinality(remember_many.embeddings), v_count
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass one embedding per item, in the same order (a NULL element embeds that item here).';
    END IF;
    IF remember_many.skip IS NULL OR NOT remember_many.skip <@ ARRAY['near_duplicates', 'conflicts'] THEN
        RAISE EXCEPTION 'skip names checks remember_many does not have: %', coalesce(remember_many.skip::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Skip near_duplicates, conflicts, both, or none (''{}'', the default).';
    END IF;
    SELECT p.item AS n, p.problem INTO v_bad
    FROM cogmem._batch_problem((SELECT x FROM cogmem.tenants AS x WHERE x.tenant = v_tenant),
                               remember_many.items, remember_many.embeddings, cogmem.embedding_dimensions()) AS p;
    IF v_bad.n IS NOT NULL THEN
        RAISE EXCEPTION 'item % %; nothing of this batch was stored', v_bad.n, v_bad.problem
            USING ERRCODE = CASE WHEN v_bad.problem LIKE 'has % characters, the limit is %' THEN 'string_data_right_truncation'
                                 ELSE 'invalid_parameter_value' END,
                  HINT = 'Items are texts or {"content", "ring", "topics", "source", "conversation", "speaker", "said_at"} '
                         || 'objects, numbered from 1.';
    END IF;
    v_items := cogmem._said_items(remember_many.items);
    IF remember_many.skip @> ARRAY['near_duplicates', 'conflicts'] THEN
        RETURN QUERY
        WITH s AS MATERIALIZED (
            SELECT * FROM cogmem._store_same_text(v_tenant, v_language,
                                                  cogmem._prepare_batch(v_tenant, v_language, v_items,
                                                                        remember_many.embeddings))
        )
        SELECT s.*, NULL::bigint, NULL::bigint[], a.candidate, a.excerpt_id
        FROM s LEFT JOIN cogmem._remembered_as(v_tenant, ARRAY(SELECT y.memory_id FROM s AS y)) AS a
            ON a.memory_id = s.memory_id
        ORDER BY s.item;
        RETURN;
    END IF;
    RETURN QUERY
    WITH b AS MATERIALIZED (
        SELECT * FROM cogmem._remember_batch(v_tenant, v_language, v_items, remember_many.embeddings,
                                             remember_many.skip)
    )
    SELECT b.*, a.candidate, a.excerpt_id
    FROM b LEFT JOIN cogmem._remembered_as(v_tenant, ARRAY(SELECT y.memory_id FROM b AS y)) AS a
        ON a.memory_id = b.memory_id
    ORDER BY b.item;
END;
$$;
COMMENT ON FUNCTION cogmem.remember_many(text, jsonb, public.vector[], text[]) IS
'Stores a batch of memories in one call: items is a JSON array of texts or {"content", "ring", "topics", '
'"source", "conversation", "speaker", "said_at"} objects, embeddings (optional) one vector per item. Each item gets what remember() gives, in '
'order, within the batch and against the tenant: redaction, routing, topics, near-duplicates by meaning, '
'conflicts. skip names checks a loader may skip on purpose (near_duplicates, conflicts); skipping both '
'stores the batch set-based, de-duplicating the same text only. One row per item, in order; a bad item '
'rejects the whole batch.';

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

-- Siblings, the read side (the night links them, sql/090-consolidation.sql). Set-based, for many memories
-- at once: recall needs the siblings of everything it injects, and a call per memory adds up where the
-- night had linked many look-alikes.
CREATE OR REPLACE FUNCTION cogmem._siblings_of(p_tenant text, p_memory_ids bigint[])
RETURNS TABLE (memory_id bigint, sibling_id bigint, content text, similarity real, differs text[])
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT m.memory_id, o.memory_id, o.content, l.similarity,
           ARRAY(SELECT unnest(cogmem._details(o.content)) EXCEPT SELECT unnest(cogmem._details(m.content)) ORDER BY 1)
    FROM cogmem.memories AS m
    JOIN cogmem.memory_siblings AS l
      ON l.tenant = m.tenant AND (l.memory_id = m.memory_id OR l.sibling_id = m.memory_id)
    JOIN cogmem.memories AS o
      ON o.tenant = m.tenant AND o.memory_id = CASE WHEN l.memory_id = m.memory_id THEN l.sibling_id ELSE l.memory_id END
    WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_memory_ids)
    ORDER BY m.memory_id, o.memory_id;
$$;
COMMENT ON FUNCTION cogmem._siblings_of(text, bigint[]) IS
'The siblings of each given memory, with the details that set each apart (cogmem.siblings for many).';

CREATE OR REPLACE FUNCTION cogmem.siblings(tenant text, memory_id bigint)
RETURNS TABLE (sibling_id bigint, content text, similarity real, differs text[])
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._reach($1);
    SELECT s.sibling_id, s.content, s.similarity, s.differs FROM cogmem._siblings_of($1, ARRAY[$2]) AS s;
$$;
COMMENT ON FUNCTION cogmem.siblings(text, bigint) IS
'Memories that look like this one but apply elsewhere, with the details that set each apart.';

DROP FUNCTION IF EXISTS cogmem._sibling_note(text, bigint);  -- one memory at a time; see _sibling_notes
CREATE OR REPLACE FUNCTION cogmem._sibling_notes(p_tenant text, p_memory_ids bigint[])
RETURNS TABLE (memory_id bigint, note text)
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT s.memory_id,
           'sibling ' || string_agg('#' || s.sibling_id || ' for ' || array_to_string(s.differs, ','), ', '
                                    ORDER BY s.sibling_id)
    FROM cogmem._siblings_of(p_tenant, p_memory_ids) AS s
    GROUP BY s.memory_id;
$$;
COMMENT ON FUNCTION cogmem._sibling_notes(text, bigint[]) IS
'The part of a recall reason that points at look-alike memories for other contexts, per memory.';
