-- Candidate rules and incidents: what the routing model found likely, but not sure enough, of a never-cut
-- ring (sql/060-remember.sql keeps it in fresh, marked, and it never fades while it waits). The agent
-- asks a person (pending_rules gives the question), who confirms it into its ring (confirm_ring) or
-- dismisses it (dismiss_candidate); the night promotes what is said again or succeeds when recalled
-- (sql/090-consolidation.sql). Nothing a person said as a rule is lost to a model's doubt.

-- The question an agent asks about a candidate, in the tenant's language.
CREATE OR REPLACE FUNCTION cogmem._candidate_question(p_ring cogmem.ring, p_content text, p_language regconfig)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
RETURN CASE
    WHEN p_language::text = 'turkish' AND p_ring = 'shocks'
        THEN format('Bunu bir daha yaşanmaması gereken bir olay olarak hatırlayayım mı: "%s"?', p_content)
    WHEN p_language::text = 'turkish' THEN format('Bundan sonra hep buna uyayım mı: "%s"?', p_content)
    WHEN p_ring = 'shocks' THEN format('Shall I remember this as an incident never to repeat: "%s"?', p_content)
    ELSE format('Shall I always follow this from now on: "%s"?', p_content)
END;
COMMENT ON FUNCTION cogmem._candidate_question(cogmem.ring, text, regconfig) IS
'What an agent asks a person about a candidate rule or incident, in English or Turkish.';

-- With a person or an agent, or everyone => false, the candidates that scope sees (sql/015-scopes.sql): an
-- agent asks a customer about their own rules, not another's. Else the whole tenant's, for the people who
-- review them.
DROP FUNCTION IF EXISTS cogmem.pending_rules(text);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem.pending_rules(
    tenant text, person text DEFAULT NULL, agent text DEFAULT NULL, everyone boolean DEFAULT TRUE
)
RETURNS TABLE (
    memory_id bigint, ring text, content text, probability real, question text, created_at timestamptz
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it reads memories, which application roles reach only through the API; tenant and scope first.
AS $$
#variable_conflict use_column
DECLARE
    v_language regconfig;
    t          cogmem.tenants;
BEGIN
    v_language := cogmem._require_tenant(pending_rules.tenant);
    PERFORM cogmem._require_scope(pending_rules.tenant, pending_rules.person, pending_rules.agent);
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = pending_rules.tenant;
    RETURN QUERY
    SELECT m.memory_id, m.candidate_ring::text, m.content, m.candidate_p,
           cogmem._candidate_question(m.candidate_ring, m.content, v_language), m.created_at
    FROM cogmem.memories AS m
    WHERE m.tenant = pending_rules.tenant AND m.candidate_ring IS NOT NULL
      -- A candidate a newer memory replaced (valid_until set) is out of recall: asking to always follow
      -- it would ask to follow what the person took back. It stays stored, for the audit and for history.
      AND m.valid_until IS NULL
      AND ((num_nonnulls(pending_rules.person, pending_rules.agent) = 0 AND pending_rules.everyone IS NOT FALSE)
           OR cogmem.in_scope(m.person, m.agent, m.ring, btrim(pending_rules.person), btrim(pending_rules.agent), t))
    -- One a newer memory possibly replaced is still asked about (the test may be wrong), after the others.
    ORDER BY m.superseded_by IS NOT NULL, m.created_at DESC, m.memory_id DESC;
END;
$$;
COMMENT ON FUNCTION cogmem.pending_rules(text, text, text, boolean) IS
'The candidate rules and incidents waiting to be confirmed, newest first (those a newer memory possibly '
'replaced last, those it replaced not at all), each with the ring it may belong to, how likely the model '
'found it, and the question an agent can ask (in the tenant''s language).';

-- A memory of the tenant, locked for a change by a person; refused as missing when it is not there.
-- A caller bound to an agent (the MCP server of one agent) passes it: another agent's memory is then as
-- unknown as a missing one (no error tells it apart).
DROP FUNCTION IF EXISTS cogmem._person_decides(text, bigint, text);  -- before 0038: no agent
CREATE OR REPLACE FUNCTION cogmem._person_decides(p_tenant text, p_memory_id bigint, p_what text, p_agent text)
RETURNS cogmem.memories
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_memory cogmem.memories;
BEGIN
    PERFORM cogmem._lock_tenant(p_tenant, false);
    SELECT * INTO v_memory FROM cogmem.memories AS m
    WHERE m.tenant = p_tenant AND m.memory_id = p_memory_id AND (p_what <> 'candidate' OR m.candidate_ring IS NOT NULL)
      AND (p_agent IS NULL OR m.agent IS NULL OR m.agent = btrim(p_agent))
    FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no % % in tenant "%"', CASE WHEN p_what = 'candidate' THEN 'candidate' ELSE 'memory' END,
            coalesce(p_memory_id::text, 'NULL'), p_tenant
            USING ERRCODE = 'no_data_found', HINT = 'cogmem.pending_rules(tenant) lists the candidates.';
    END IF;
    RETURN v_memory;
END;
$$;
COMMENT ON FUNCTION cogmem._person_decides(text, bigint, text, text) IS
'The memory (or, with ''candidate'', the candidate) a person decides about, locked, within the agent when '
'one is given; no_data_found otherwise.';

DROP FUNCTION IF EXISTS cogmem.confirm_ring(text, bigint, text);  -- before 0038: no agent
CREATE OR REPLACE FUNCTION cogmem.confirm_ring(tenant text, memory_id bigint, ring text, agent text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it moves a memory between rings, which only the API's owner may write.
AS $$
#variable_conflict use_column
DECLARE
    v_memory cogmem.memories;
BEGIN
    PERFORM cogmem._require_tenant(confirm_ring.tenant);
    IF confirm_ring.ring IS NULL OR NOT confirm_ring.ring = ANY (enum_range(NULL::cogmem.ring)::text[]) THEN
        RAISE EXCEPTION 'unknown ring "%"', coalesce(confirm_ring.ring, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of: shocks, dos_and_donts, long_term, habits, procedures, fresh.';
    END IF;
    PERFORM cogmem._require_names(NULL, confirm_ring.agent);
    v_memory := cogmem._person_decides(confirm_ring.tenant, confirm_ring.memory_id, 'memory', confirm_ring.agent);
    UPDATE cogmem.memories AS m
    SET ring = confirm_ring.ring::cogmem.ring, candidate_ring = NULL, candidate_p = NULL, updated_at = now()
    WHERE m.tenant = confirm_ring.tenant AND m.memory_id = confirm_ring.memory_id;
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (confirm_ring.tenant, 'lifecycle', confirm_ring.memory_id, 'candidate_confirmed',
            jsonb_build_object('from', v_memory.ring, 'to', confirm_ring.ring, 'candidate', v_memory.candidate_ring,
                               'probability', v_memory.candidate_p));
    RETURN confirm_ring.ring;
END;
$$;
COMMENT ON FUNCTION cogmem.confirm_ring(text, bigint, text, text) IS
'A person confirms a memory (a candidate rule or incident, or any other) into a ring: it moves there, its '
'candidacy ends; audited. Returns the ring. agent: a caller bound to one agent (another agent''s memory is '
'unknown to it).';

DROP FUNCTION IF EXISTS cogmem.dismiss_candidate(text, bigint);  -- before 0038: no agent
CREATE OR REPLACE FUNCTION cogmem.dismiss_candidate(tenant text, memory_id bigint, agent text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it changes a memory, which only the API's owner may write.
AS $$
#variable_conflict use_column
DECLARE
    v_memory cogmem.memories;
BEGIN
    PERFORM cogmem._require_tenant(dismiss_candidate.tenant);
    PERFORM cogmem._require_names(NULL, dismiss_candidate.agent);
    v_memory := cogmem._person_decides(dismiss_candidate.tenant, dismiss_candidate.memory_id, 'candidate',
                                       dismiss_candidate.agent);
    UPDATE cogmem.memories AS m SET candidate_ring = NULL, candidate_p = NULL, updated_at = now()
    WHERE m.tenant = dismiss_candidate.tenant AND m.memory_id = dismiss_candidate.memory_id;
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (dismiss_candidate.tenant, 'lifecycle', dismiss_candidate.memory_id, 'candidate_dismissed',
            jsonb_build_object('candidate', v_memory.candidate_ring, 'probability', v_memory.candidate_p));
    RETURN true;
END;
$$;
COMMENT ON FUNCTION cogmem.dismiss_candidate(text, bigint, text) IS
'A person says a candidate is no rule or incident: it becomes an ordinary fresh memory, which decays as '
'any other; audited. agent: a caller bound to one agent (another agent''s candidate is unknown to it).';
