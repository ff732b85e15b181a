-- Trust: a per-tenant score from 0 to 100 (50 to start) moved by events, each recorded with its cause. With
-- agents (sql/015-scopes.sql) it is per agent: what the user thinks of the billing agent says nothing of
-- the ops agent, and an event with no agent moves the tenant's own score.
-- The score gates nothing; it tunes rigour: guard checks below 40 look wider and return more, above 80
-- they return less (sql/150-guard.sql).
--
-- Events and their weight (cogmem._trust_delta): praise +3, delegation without micromanagement +2, a guard
-- or sibling catching an error +3, a correction -3. Two are recorded by cogmem itself: a repeated error
-- that already had a learning -7 (cogmem.report_error), and a memory corrected three times within seven
-- days -10 (after its third correction here).

CREATE OR REPLACE FUNCTION cogmem._trust_delta(p_kind text)
RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
RETURN CASE p_kind
    WHEN 'praise' THEN 3 WHEN 'delegation' THEN 2 WHEN 'caught_error' THEN 3 WHEN 'correction' THEN -3
    WHEN 'repeated_error' THEN -7 WHEN 'memory_churn' THEN -10
END;
COMMENT ON FUNCTION cogmem._trust_delta(text) IS 'How much an event of each kind moves the trust score.';

DROP FUNCTION IF EXISTS cogmem.trust(text);  -- before 0035: no agent
CREATE OR REPLACE FUNCTION cogmem.trust(tenant text, agent text DEFAULT NULL)
RETURNS real
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: trust_events is read through the API; the tenant and the agent's name are checked first.
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(trust.tenant);
    PERFORM cogmem._require_names(NULL, trust.agent);
    RETURN coalesce((SELECT e.score FROM cogmem.trust_events AS e
                     WHERE e.tenant = trust.tenant AND e.agent IS NOT DISTINCT FROM btrim(trust.agent)
                     ORDER BY e.event_id DESC LIMIT 1), 50);
END;
$$;
COMMENT ON FUNCTION cogmem.trust(text, text) IS
'The trust score of a tenant''s agent (NULL: the tenant''s own), 0-100 (50 until an event moves it).';

-- Records one event, any kind (cogmem's own kinds included); the caller has checked its arguments.
DROP FUNCTION IF EXISTS cogmem._trust_event(text, text, text, bigint);  -- before 0035: no agent
CREATE OR REPLACE FUNCTION cogmem._trust_event(p_tenant text, p_kind text, p_cause text, p_memory_id bigint, p_agent text)
RETURNS real
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_delta real := cogmem._trust_delta(p_kind);
    v_before real;
    v_score real;
BEGIN
    -- One writer per tenant at a time: each event starts from the score the previous one left.
    PERFORM cogmem._serialize_tenant(p_tenant);
    p_agent := btrim(p_agent);
    v_before := cogmem.trust(p_tenant, p_agent);
    v_score := least(100, greatest(0, v_before + v_delta));
    INSERT INTO cogmem.trust_events (tenant, kind, delta, score, memory_id, cause, agent)
    VALUES (p_tenant, p_kind, v_score - v_before, v_score, p_memory_id, p_cause, p_agent);
    -- The cause is the caller's words: the audit keeps its hash (it may name a person).
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (p_tenant, 'metacognition', p_memory_id, 'trust_changed',
            jsonb_build_object('kind', p_kind, 'delta', v_score - v_before, 'score', v_score, 'agent', p_agent,
                               'cause_sha256', encode(sha256(convert_to(coalesce(p_cause, ''), 'UTF8')), 'hex')));
    -- A memory corrected a third time within seven days: the corrections did not stick.
    IF p_kind = 'correction' AND p_memory_id IS NOT NULL
       AND (SELECT count(*) FROM cogmem.trust_events AS e
            WHERE e.tenant = p_tenant AND e.memory_id = p_memory_id AND e.kind = 'correction'
              AND e.at > now() - interval '7 days') >= 3
       AND NOT EXISTS (SELECT FROM cogmem.trust_events AS e
                       WHERE e.tenant = p_tenant AND e.memory_id = p_memory_id AND e.kind = 'memory_churn'
                         AND e.at > now() - interval '7 days') THEN
        v_score := cogmem._trust_event(p_tenant, 'memory_churn',
                                       'corrected 3 times within 7 days', p_memory_id, p_agent);
    END IF;
    RETURN v_score;
END;
$$;
COMMENT ON FUNCTION cogmem._trust_event(text, text, text, bigint, text) IS
'Records a trust event of any kind and returns the new score (cogmem.trust_event checks its input).';

DROP FUNCTION IF EXISTS cogmem.trust_event(text, text, text, bigint);  -- before 0035: no agent
CREATE OR REPLACE FUNCTION cogmem.trust_event(
    tenant text, kind text, cause text DEFAULT NULL, memory_id bigint DEFAULT NULL, agent text DEFAULT NULL
)
RETURNS real
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes trust events and the audit; the tenant and the agent's name are checked first.
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(trust_event.tenant);
    -- The score tunes every person's guard checks (sql/150-guard.sql): not for a grant narrowed to one.
    PERFORM cogmem._require_whole_tenant(trust_event.tenant);
    PERFORM cogmem._require_names(NULL, trust_event.agent);
    IF trust_event.kind IS NULL OR trust_event.kind NOT IN ('praise', 'delegation', 'caught_error', 'correction') THEN
        RAISE EXCEPTION 'unknown trust event kind "%"', coalesce(trust_event.kind, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use praise, delegation, caught_error or correction; repeated errors and memory churn '
                         || 'are recorded by cogmem itself.';
    END IF;
    IF trust_event.memory_id IS NOT NULL AND NOT EXISTS (
        SELECT FROM cogmem.memories AS m WHERE m.tenant = trust_event.tenant AND m.memory_id = trust_event.memory_id
    ) THEN
        RAISE EXCEPTION 'tenant "%" has no memory %', trust_event.tenant, trust_event.memory_id
            USING ERRCODE = 'no_data_found', HINT = 'Pass the memory the event is about, or NULL.';
    END IF;
    RETURN cogmem._trust_event(trust_event.tenant, trust_event.kind, trust_event.cause, trust_event.memory_id,
                               trust_event.agent);
END;
$$;
COMMENT ON FUNCTION cogmem.trust_event(text, text, text, bigint, text) IS
'Records what the user did (praise, delegation, caught_error, correction) with its cause and, for a '
'correction, the memory corrected; moves the trust in the agent (NULL: the tenant''s); returns the new score.';
