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
BEGIN
    IF jsonb_typeof(p_said) IS DISTINCT FROM 'object' THEN
        RETURN NULL;
    END IF;
    -- The names of where it was said, and of its scope (sql/015-scopes.sql).
    FOREACH v_key IN ARRAY ARRAY['conversation', 'speaker', 'person', 'agent'] LOOP
        IF cogmem._name_problem(v_key, p_said -> v_key) IS NOT NULL THEN
            RETURN cogmem._name_problem(v_key, p_said -> v_key);
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
'What is wrong with the conversation, speaker, said_at, person and agent of an object (a source, a batch '
'item); NULL when nothing.';

DROP FUNCTION IF EXISTS cogmem._with_said(jsonb, text, text, timestamptz);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem._with_said(
    p_source jsonb, p_conversation text, p_speaker text, p_said_at timestamptz, p_person text, p_agent text
)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN jsonb_typeof(coalesce(p_source, '{}')) <> 'object' THEN p_source  -- refused by the checks, as it is
    ELSE coalesce(p_source, '{}') || jsonb_strip_nulls(jsonb_build_object(
        'conversation', p_conversation, 'speaker', p_speaker, 'said_at', p_said_at,
        'person', btrim(p_person), 'agent', btrim(p_agent)
    ))
END;
COMMENT ON FUNCTION cogmem._with_said(jsonb, text, text, timestamptz, text, text) IS
'A source with where the memory was said and its scope added (the arguments that are not NULL win).';

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
-- A tenant's recall gets its candidates layer with its first candidate (migration 0042 says why not
-- sooner): 100 tokens, at the priority of the last never-cut ring of memories, after which recall injects
-- it (sql/070-recall.sql: never-cut first within a priority), bounded by its allocation alone.
CREATE OR REPLACE FUNCTION cogmem._candidate_layer(p_tenant text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    INSERT INTO cogmem.tenant_layers AS l (tenant, layer, priority, token_allocation, half_life, never_cut)
    SELECT p_tenant, 'candidates', max(x.priority), 100, NULL, false
    FROM cogmem.tenant_layers AS x WHERE x.tenant = p_tenant AND x.layer IN ('shocks', 'dos_and_donts')
    HAVING count(*) > 0
    ON CONFLICT DO NOTHING;
END;
$$;
COMMENT ON FUNCTION cogmem._candidate_layer(text) IS
'Gives a tenant its candidates recall layer (100 tokens, right after the never-cut rings), once.';

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
        PERFORM cogmem._candidate_layer(p_tenant);
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
    SELECT r.threshold INTO v_sure
    FROM cogmem._routing_model_of(coalesce(cogmem._dense_model('embedding', cogmem._embedding_model_of(p_tenant)),
                                           'embedding')) AS r
    WHERE r.head = 'ring' AND r.label = v_memory.candidate_ring::text;
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
-- the older one's probability as a restatement does, unless the new one replaces it. p_close: the memories
-- near it by the binary prefilter.
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
      -- "Alarm at 07:20 instead of 06:45" changes the 06:45 candidate (sql/036-supersession.sql): counted as
      -- said again, it made the old value a never-cut rule.
      AND s.superseded_by IS DISTINCT FROM p_memory_id
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

-- p_contradicts: NULL to detect conflicts (sql/160-conflicts.sql), '{}' for none, or the caller's
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
    IF p_ring IS NOT NULL AND cogmem._ring_of(p_ring) IS NULL THEN
        RAISE EXCEPTION 'unknown ring "%"', p_ring
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of: shocks, dos_and_donts, long_term, habits, procedures, fresh; a kind: rule, '
                         || 'preference, incident, procedure, habit, fact, chat; or NULL to route automatically.';
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
    RETURN cogmem._named_in_scope(t, p_contradicts, cogmem._person(p_source), cogmem._agent(p_source),
                                  'contradicts', 'the text contradicts');
END;
$$;
COMMENT ON FUNCTION cogmem._checked_input(cogmem.tenants, text, text, text[], jsonb, public.vector, bigint[]) IS
'Checks a text to remember (content, ring, topics, source, embedding, named contradictions), a clear error each; '
'returns the named contradictions, NULL to detect them.';

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
    -- Same normalised text in the same scope: the unique fingerprint index decides atomically, even under
    -- concurrency.
    INSERT INTO cogmem.memories AS m (tenant, ring, content, topics, language, embedding, redactions, source,
                                      fingerprint)
    VALUES (p_tenant, p_ring, p_content, p_topics, p_language, p_embedding, p_redactions, p_source, p_fingerprint)
    ON CONFLICT (tenant, fingerprint, person, agent) DO NOTHING
    RETURNING m.memory_id INTO v_id;
    v_inserted := v_id IS NOT NULL;

    IF NOT v_inserted THEN
        SELECT m.memory_id INTO v_id FROM cogmem.memories AS m
        WHERE m.tenant = p_tenant AND m.fingerprint = p_fingerprint
          AND cogmem._same_scope(m.person, m.agent, cogmem._person(p_source), cogmem._agent(p_source));
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

DROP FUNCTION IF EXISTS cogmem._remember(text, text, text, text[], public.vector, jsonb, bigint[], bigint[]);
DROP FUNCTION IF EXISTS cogmem._remember(text, text, text, text[], public.vector, jsonb, bigint[], bigint[], boolean);
DROP FUNCTION IF EXISTS cogmem._remember(  -- before issue 48's clauses: no clause embeddings
    text, text, text, text[], public.vector, jsonb, bigint[], bigint[], boolean, bigint[]
);
-- The one store. Longer than a screen only as the list of its stages, each one call: checks, redaction,
-- the same text, routing, topics, conflicts, near-duplicates, storing, what it supersedes.
CREATE OR REPLACE FUNCTION cogmem._remember(
    p_tenant text, p_content text, p_ring text, p_topics text[], p_embedding public.vector, p_source jsonb,
    p_contradicts bigint[], p_unlike bigint[] DEFAULT '{}', p_near_duplicates boolean DEFAULT TRUE,
    p_supersedes bigint[] DEFAULT NULL, p_clause_embeddings public.vector[] DEFAULT NULL
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
    v_rule_p     real;  -- a buried rule's own probability (cogmem._buried_rule)
    v_candidate_p real;  -- the candidate's probability, by the head that made it (classify)
    v_probabilities jsonb;
    v_person     text;  -- the scope (sql/015-scopes.sql): every check below stays within it
    v_agent      text;
    v_supersedes bigint[];  -- what the caller says the text replaces (sql/036-supersession.sql)
BEGIN
    -- Its callers (remember, remember_many, observe, report_error, resolve_conflict, end_session) checked
    -- reach first.
    PERFORM cogmem._lock_tenant(v_tenant, false);
    t := cogmem._tenant_settings(v_tenant);
    v_language := t.language;
    v_named := cogmem._checked_input(t, p_content, p_ring, p_topics, p_source, p_embedding, p_contradicts);
    p_ring := cogmem._ring_of(p_ring);  -- a kind (rule, incident, preference, ...) as its ring
    v_verdict := CASE WHEN cardinality(v_named) > 0 THEN 'caller' END;

    -- Redact first: nothing below, including the duplicate check, sees a secret; nor is one kept in where
    -- the memory came from (a source of {"password": ...} or a URL with its credentials).
    SELECT r.redacted, r.redactions INTO v_content, v_redactions FROM cogmem.redact(btrim(p_content)) AS r;
    SELECT s.source, cogmem._union_kinds(v_redactions, s.redactions) INTO p_source, v_redactions
    FROM cogmem._redact_source(coalesce(p_source, '{}')) AS s;
    -- The same text again is the same memory, heard again: not a conflict with itself.
    v_fingerprint := cogmem._fingerprint(v_content);
    v_person := cogmem._person(p_source);
    v_agent := cogmem._agent(p_source);
    v_supersedes := cogmem._named_in_scope(t, p_supersedes, v_person, v_agent, 'supersedes', 'that the text replaces');
    p_unlike := coalesce(p_unlike, '{}') || coalesce(v_supersedes, '{}');  -- a replacement is no duplicate
    SELECT m.memory_id INTO v_near FROM cogmem.memories AS m
    WHERE m.tenant = v_tenant AND m.fingerprint = v_fingerprint AND cogmem._same_scope(m.person, m.agent, v_person, v_agent);
    IF v_near.memory_id IS NOT NULL THEN
        PERFORM cogmem._restated_candidate(v_tenant, v_near.memory_id, NULL);
        RETURN QUERY SELECT r.*, NULL::bigint, NULL::bigint[]
        FROM cogmem._rehearse(v_tenant, v_near.memory_id, v_redactions, jsonb_build_object('match', 'same_text')) AS r;
        RETURN;
    END IF;
    v_embedding := cogmem._embedding(v_tenant, p_embedding, v_content);
    -- Inbound attention (sql/030-routing.sql): the ring, unless the caller chose it, and whether the text
    -- is an instruction, which only rules and steps are by their ring.
    SELECT coalesce(p_ring, c.ring)::cogmem.ring, c.instruction, CASE WHEN p_ring IS NULL THEN c.candidate END,
           c.probabilities, CASE WHEN p_ring IS NULL THEN c.candidate_probability END
    INTO v_ring, v_instruction, v_candidate, v_probabilities, v_candidate_p
    FROM cogmem.classify(v_content, v_embedding, cogmem._embedding_model_of(v_tenant)) AS c;
    -- A turn of a conversation needs more certainty for a never-cut ring; below it, it is a candidate.
    IF p_ring IS NULL AND v_ring IN ('dos_and_donts', 'shocks') AND p_source ? 'conversation'
       AND (v_probabilities ->> v_ring::text)::real < t.turn_never_cut_probability THEN
        v_candidate := v_ring::text;
        v_candidate_p := (v_probabilities ->> v_ring::text)::real;
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
    ELSIF p_ring IS NULL THEN
        -- Routed nowhere protected: a rule or an incident may still be one sentence among others, or one
        -- clause with its story.
        SELECT b.sentence, b.ring, b.probability INTO v_rule, v_rule_candidate, v_rule_p
        FROM cogmem._buried_rule(v_content, v_probabilities) AS b;
        IF v_rule_candidate IS NULL THEN
            SELECT k.sentence, k.ring, k.probability INTO v_rule, v_rule_candidate, v_rule_p
            FROM cogmem._clause_rule(v_tenant, v_content, v_probabilities, p_clause_embeddings,
                                     p_embedding IS NULL AND v_embedding IS NOT NULL, v_embedding IS NOT NULL) AS k;
        END IF;
    END IF;
    v_instruction := v_instruction OR v_ring IN ('dos_and_donts', 'procedures');
    v_topics := coalesce(cogmem._normalize_topics(p_topics),
                         cogmem._detect_topics(v_tenant, v_content, v_language));
    SELECT * INTO v_found
    FROM cogmem._detect_conflicts(v_tenant, v_language, v_content, v_ring, v_instruction, v_embedding, t.dissonance_similarity,
                                  v_named, p_near_duplicates, v_person, v_agent);

    -- What the caller says the text replaces is not in conflict with it.
    v_found.conflict_ids := nullif(ARRAY(SELECT c FROM unnest(v_found.conflict_ids) AS c
                                         WHERE c <> ALL (coalesce(v_supersedes, '{}'))), '{}');
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
                                      coalesce(v_rule_p, v_candidate_p));
        -- A correction replaces what it corrects: the caller's verdict, else the test (not for a rule or
        -- an incident: those change through conflicts).
        IF cardinality(v_supersedes) > 0 THEN
            PERFORM cogmem._supersede(v_tenant, v_stored.memory_id, v_supersedes, 'caller');
        ELSIF v_supersedes IS NULL AND v_ring NOT IN ('shocks', 'dos_and_donts') THEN
            PERFORM cogmem._detect_superseded(t, v_stored.memory_id, v_content, v_embedding, v_found.close_ids,
                                              v_person, v_agent, coalesce(p_source ? 'conversation', false));
        END IF;
        -- After the supersession test: a candidate it replaces is changed, not said again.
        PERFORM cogmem._restated_sibling_candidates(t, v_stored.memory_id, v_candidate, v_embedding,
                                                    v_found.close_ids, v_probabilities);
    END IF;
    RETURN QUERY SELECT v_stored.memory_id, v_stored.ring, v_stored.topics, v_stored.action, v_stored.redactions,
                        v_stored.conflict_id, v_stored.conflicts_with;
END;
$$;
COMMENT ON FUNCTION cogmem._remember(
    text, text, text, text[], public.vector, jsonb, bigint[], bigint[], boolean, bigint[], public.vector[]
) IS
'The one store: cogmem.remember() and each item of remember_many() (PL/pgSQL cannot name an input and an '
'output column alike). p_near_duplicates = false: a batch that skips that check on purpose. p_supersedes: '
'the memories the caller says the text replaces (''{}'': none; NULL: detect them). p_clause_embeddings: '
'the embeddings of cogmem.clauses(p_content), for a rule said as one clause (cogmem._clause_rule).';

-- A very long text is more likely a document than something said: remember keeps it all the same (nothing a
-- person said is dropped) and says that add_resource (sql/069-resources.sql) would keep it whole, chunked by
-- its headings, and replaced by new versions instead of fading.
CREATE OR REPLACE FUNCTION cogmem._resource_suggestion(p_tenant text, p_content text)
RETURNS text
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT format('%s characters, more than resource_suggest_chars (%s): a document? cogmem.add_resource('
                      || 'tenant, title, body) keeps it whole, recalled by the section that answers, and versions '
                      || 'it instead of letting it fade', length(p_content), t.resource_suggest_chars)
        FROM cogmem.tenants AS t
        WHERE t.tenant = p_tenant AND length(p_content) > t.resource_suggest_chars
    );
END;
$$;
COMMENT ON FUNCTION cogmem._resource_suggestion(text, text) IS
'For a text longer than the tenant''s resource_suggest_chars, the suggestion to add it as a resource; else NULL.';

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

-- The clause embeddings a caller sends must be those of cogmem.clauses(content), one for each part, of the
-- installed dimension: a list of another text's parts would be read against the wrong words.
CREATE OR REPLACE FUNCTION cogmem._check_clause_embeddings(p_content text, p_vectors public.vector[])
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_parts integer;
BEGIN
    IF p_vectors IS NULL THEN
        RETURN;
    END IF;
    v_parts := coalesce(cardinality(cogmem.clauses(p_content)), 0);
    IF cardinality(p_vectors) <> v_parts THEN
        RAISE EXCEPTION 'clause_embeddings has % vectors, the content has % parts', cardinality(p_vectors), v_parts
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Embed the texts cogmem.clauses(content) returns, in order, or pass NULL.';
    END IF;
    PERFORM cogmem._check_embedding(v) FROM unnest(p_vectors) AS v;
END;
$$;
COMMENT ON FUNCTION cogmem._check_clause_embeddings(text, public.vector[]) IS
'Raises invalid_parameter_value unless the vectors are as many as cogmem.clauses(content)''s parts, each of '
'the installed dimension.';

-- The public signature is a contract; its output columns reuse input names (ring, topics), which only
-- a SQL-language function allows, so it wraps the PL/pgSQL implementation.
-- Before 0028 remember took no conversation, speaker or time.
DROP FUNCTION IF EXISTS cogmem.remember(text, text, text, text[], public.vector, jsonb, bigint[]);
DROP FUNCTION IF EXISTS cogmem.remember(text, text, text, text[], public.vector, jsonb, bigint[], text, text, timestamptz);
DROP FUNCTION IF EXISTS cogmem.remember(
    text, text, text, text[], public.vector, jsonb, bigint[], text, text, timestamptz, text, text
);  -- before 0041: nothing superseded
DROP FUNCTION IF EXISTS cogmem.remember(
    text, text, text, text[], public.vector, jsonb, bigint[], text, text, timestamptz, text, text, bigint[]
);  -- before issue 48's clauses: no clause embeddings
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
    said_at timestamptz DEFAULT NULL,
    person text DEFAULT NULL,
    agent text DEFAULT NULL,
    supersedes bigint[] DEFAULT NULL,
    clause_embeddings public.vector[] DEFAULT NULL
)
RETURNS TABLE (
    memory_id bigint, ring text, topics text[], action text, redactions text[], conflict_id bigint,
    conflicts_with bigint[], candidate text, excerpt_id bigint, suggestion text
)
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes memories, their statistics and audit rows, which only the API's owner may; the
-- tenant and the scope are checked first.
AS $$
    SELECT cogmem._require_tenant(tenant);
    SELECT cogmem._require_scope(tenant, coalesce(person, cogmem._person(source)), coalesce(agent, cogmem._agent(source)));
    SELECT cogmem._check_clause_embeddings(content, clause_embeddings);
    -- A turn of a conversation is also the reply to its last recall's answer (sql/059-followup.sql): judged
    -- once the turn is stored, with the stored turn's embedding.
    SELECT r.*, a.candidate, a.excerpt_id, cogmem._resource_suggestion(tenant, content)
    FROM cogmem._remember(tenant, content, ring, topics, embedding,
                          cogmem._with_said(source, conversation, speaker, said_at, person, agent), contradicts,
                          '{}', true, supersedes, clause_embeddings) AS r
    LEFT JOIN cogmem._remembered_as(tenant, ARRAY[r.memory_id]) AS a ON a.memory_id = r.memory_id
    CROSS JOIN LATERAL (SELECT cogmem._judge_turn(tenant, coalesce(conversation, source ->> 'conversation'),
                                                  coalesce(speaker, source ->> 'speaker'), content, embedding,
                                                  r.memory_id, coalesce(person, cogmem._person(source)),
                                                  coalesce(agent, cogmem._agent(source)))) AS j;
$$;
COMMENT ON FUNCTION cogmem.remember(
    text, text, text, text[], public.vector, jsonb, bigint[], text, text, timestamptz, text, text, bigint[],
    public.vector[]
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
'for a long turn whose one sentence is a rule or an incident, the memory keeping that sentence. person and '
'agent scope it (sql/015-scopes.sql): who it is about or from, and who heard it. suggestion: for a text '
'longer than the tenant''s resource_suggest_chars, stored all the same, that add_resource() would keep it '
'as a document. supersedes: the memories the text replaces (a correction, a changed fact), by the '
'caller''s judgement: they stay for the audit and history, out of recall; NULL lets cogmem detect the one '
'it replaces (sql/036-supersession.sql), ''{}'' says none. clause_embeddings: the embeddings of '
'cogmem.clauses(content, embedding), in order, when it gives any: a rule or an incident said as one clause '
'of the text (with its story) is then found by the embedding''s model too, and kept as a candidate.';

-- The batch path: many memories in one call (a loader, an import, a backfill). By default every item
-- gets all the checks of the one store, _remember(): those no check relates to anything are stored
-- set-based, the others through _remember() in order. A loader that has its own may skip the
-- checks by meaning, on purpose: then the batch is stored set-based, de-duplicating the same text only,
-- and near-duplicates are left to the nightly merge. A bad item rejects the whole batch, naming it.
