-- The sensory register: every conversation turn is recorded for a while (tenants.sensory_ttl); the
-- turns that pass the attention filter become memories through the same path as remember().

CREATE OR REPLACE FUNCTION cogmem._is_preference(p_content text)
RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
RETURN (
    p_content
    ~* '\m(prefers?|preferred|likes?|usually|habitually|every (morning|day|week|monday|tuesday|wednesday|thursday|friday)|routinely)\M'
    OR p_content ~* '(tercih|genelde|genellikle|her sabah|her gün|her hafta|alışkanlık)'
);
COMMENT ON FUNCTION cogmem._is_preference(text) IS
'True for preferences and routines ("prefers", "usually", "every morning", "tercih eder"): promoted to habits.';

-- Before 0014 the attention filter routed by keywords alone, without the embedding.
DROP FUNCTION IF EXISTS cogmem.attention(text, text);

CREATE OR REPLACE FUNCTION cogmem.attention(content text, role text DEFAULT 'user', embedding public.vector DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_ring text := cogmem.route(content, embedding);
BEGIN
    RETURN CASE
        WHEN v_ring <> 'fresh' THEN 'routed to ' || v_ring
        WHEN cogmem._is_preference(content)
          OR content ~* '\m(i prefer|i''d rather|we prefer|please always|from now on)\M'
            THEN 'explicit preference'
        WHEN coalesce(role, 'user') <> 'assistant'
         AND (content ~* '^\s*(no[,.!]|nope|wrong|that''s (wrong|not right|incorrect)|not quite|actually[, ])'
              OR content ~* '\m(you are wrong|you''re wrong|that is wrong|is incorrect|not what i (said|asked))\M'
              OR content ~* '^\s*(hayır|yanlış|aslında|öyle değil)')
            THEN 'correction of the agent'
        WHEN content ~* '\m(we decided|decided to|decision|let''s go with|we chose|trade-?off|instead of|rather than)\M'
          OR content ~* '(karar verdik|karar|yerine|tercih ettik)'
            THEN 'decision with trade-offs'
    END;
END;
$$;
COMMENT ON FUNCTION cogmem.attention(text, text, public.vector) IS
'Inbound attention filter for observed turns: why a turn deserves a memory (routed to a ring other than '
'fresh, explicit preference, correction of the agent, decision with trade-offs), or NULL. Repetition within '
'a conversation is checked by cogmem.observe() itself.';

-- Longer than a screen: a turn's checks, attention, the register and the memory it becomes, in one call.
DROP FUNCTION IF EXISTS cogmem.observe(text, text, text, text, public.vector, timestamptz);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem.observe(
    tenant text,
    conversation text,
    role text,
    content text,
    embedding public.vector DEFAULT NULL,
    at timestamptz DEFAULT now(),
    person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS TABLE (turn_id bigint, memory_id bigint, ring text, topics text[], action text, reason text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes raw turns and memories, which only the API's owner may; tenant and scope checked first.
AS $$
#variable_conflict use_column
DECLARE
    v_language regconfig := cogmem._require_tenant(observe.tenant);
    v_content  text;
    v_embedding public.vector;
    v_turn_id  bigint;
    v_reason   text;
    v_words    text[];
    m          record;
BEGIN
    PERFORM cogmem._require_scope(observe.tenant, observe.person, observe.agent);
    IF observe.conversation IS NULL OR btrim(observe.conversation) = '' THEN
        RAISE EXCEPTION 'conversation must not be NULL or empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass the conversation or session id the turn belongs to.';
    END IF;
    IF observe.role IS NULL OR btrim(observe.role) = '' THEN
        RAISE EXCEPTION 'role must not be NULL or empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass who spoke: user, assistant, system or tool.';
    END IF;
    IF observe.content IS NULL OR btrim(observe.content) = '' THEN
        RAISE EXCEPTION 'content must not be NULL or empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass the text of the turn.';
    END IF;
    PERFORM cogmem._check_embedding(observe.embedding);
    -- The register holds raw turns only briefly, but never a secret: redact before storing.
    v_content := (cogmem.redact(btrim(observe.content))).redacted;
    -- Once for the attention filter, the register and the memory (routing reads the embedding).
    v_embedding := cogmem._embedding(observe.tenant, observe.embedding, v_content);

    v_reason := cogmem.attention(v_content, observe.role, v_embedding);
    IF v_reason IS NULL THEN
        -- Something referred to again: an earlier turn of this conversation that shares most of its words.
        v_words := tsvector_to_array(to_tsvector(v_language, v_content));
        IF cardinality(v_words) >= 2 AND EXISTS (
            SELECT FROM cogmem.sensory_turns AS s
            WHERE s.tenant = observe.tenant AND s.conversation = observe.conversation AND s.at <= observe.at
              AND cogmem._same_scope(s.person, s.agent, btrim(observe.person), btrim(observe.agent))
              AND cogmem._shared_words(to_tsvector(v_language, s.content), v_words)
                  >= greatest(2, cardinality(v_words) / 2.0)
        ) THEN
            v_reason := 'referred to again in this conversation';
        END IF;
    END IF;

    INSERT INTO cogmem.sensory_turns AS s (tenant, conversation, role, content, embedding, at, person, agent)
    VALUES (observe.tenant, observe.conversation, observe.role, v_content, v_embedding, observe.at,
            btrim(observe.person), btrim(observe.agent))
    RETURNING s.turn_id INTO v_turn_id;
    -- A user's turn is also the reply to the conversation's last recall (sql/059-followup.sql).
    PERFORM cogmem._judge_turn(observe.tenant, observe.conversation, observe.role, v_content, v_embedding, NULL,
                               observe.person, observe.agent);

    turn_id := v_turn_id;
    reason := v_reason;
    IF v_reason IS NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;
    SELECT * INTO m FROM cogmem._remember(
        observe.tenant, v_content, NULL, NULL, v_embedding,
        cogmem._with_said(jsonb_build_object('role', observe.role, 'turn_id', v_turn_id, 'via', 'observe',
                                             'attention', v_reason),
                          observe.conversation, NULL, NULL, observe.person, observe.agent),
        NULL
    );
    UPDATE cogmem.sensory_turns AS s SET memory_id = m.memory_id
    WHERE s.tenant = observe.tenant AND s.turn_id = v_turn_id;
    memory_id := m.memory_id;
    ring := m.ring;
    topics := m.topics;
    action := m.action;
    IF m.action = 'conflict' THEN  -- held until resolved (sql/160-conflicts.sql)
        reason := format('%s; held as conflict %s: contradicts memory %s', v_reason, m.conflict_id,
                         array_to_string(m.conflicts_with, ', '));
    END IF;
    RETURN NEXT;
END;
$$;
COMMENT ON FUNCTION cogmem.observe(text, text, text, text, public.vector, timestamptz, text, text) IS
'Records a conversation turn in the sensory register; a turn that passes the attention filter becomes a '
'memory through remember() (reason says why), in the scope of person and agent. Returns the turn and what '
'it created, if anything.';
