-- Dissonance: an instruction that contradicts an established memory is neither obeyed silently nor
-- stored over it. cogmem.remember() holds it in cogmem.conflicts and answers action = 'conflict' with
-- the memories it contradicts, until cogmem.resolve_conflict() decides:
--   paradigm_shift  the old memory was wrong: it drops to fresh with confidence 0.1 (and fades), the new
--                   one is stored, and the correction counts against trust (-3);
--   exception       the old memory stands: this once only, nothing is stored;
--   override        act now and keep both; the next night's consolidation reviews it.
-- Open conflicts are listed by cogmem.open_conflicts() and noted on the memories recall injects.
--
-- How a contradiction is detected and held on the way in is in sql/035-contradiction.sql (a statement
-- of fact is stored and linked there). Callers with a better judge (an LLM)
-- pass their verdict as remember's contradicts argument: the memory ids it contradicts, or '{}' for none.

-- With a person or an agent, or everyone => false, the conflicts of what that scope sees (sql/015-scopes.sql);
-- else the whole tenant's, for the people who review them.
DROP FUNCTION IF EXISTS cogmem.open_conflicts(text);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem.open_conflicts(
    tenant text, person text DEFAULT NULL, agent text DEFAULT NULL, everyone boolean DEFAULT TRUE
)
RETURNS TABLE (
    conflict_id bigint, content text, conflicts_with bigint[], established text[], verdict text,
    opened_at timestamptz
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it reads held conflicts and memories for the caller's tenant and scope, checked first.
AS $$
#variable_conflict use_column
DECLARE
    t cogmem.tenants;
BEGIN
    PERFORM cogmem._require_tenant(open_conflicts.tenant);
    PERFORM cogmem._require_scope(open_conflicts.tenant, open_conflicts.person, open_conflicts.agent);
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = open_conflicts.tenant;
    RETURN QUERY
    SELECT c.conflict_id, c.content, c.conflicts_with,
           ARRAY(SELECT m.content FROM unnest(c.conflicts_with) WITH ORDINALITY AS w (id, n)
                 JOIN cogmem.memories AS m ON m.tenant = c.tenant AND m.memory_id = w.id ORDER BY w.n),
           c.verdict, c.opened_at
    FROM cogmem.conflicts AS c
    WHERE c.tenant = open_conflicts.tenant AND c.status = 'open'
      AND ((num_nonnulls(open_conflicts.person, open_conflicts.agent) = 0 AND open_conflicts.everyone IS NOT FALSE)
           OR cogmem.in_scope(c.person, c.agent, c.ring, btrim(open_conflicts.person), btrim(open_conflicts.agent), t))
    ORDER BY c.conflict_id;
END;
$$;
COMMENT ON FUNCTION cogmem.open_conflicts(text, text, text, boolean) IS
'Unresolved conflicts of a tenant (of the scope of person and agent when one is given or everyone is false: '
'what recall for it would see): the held instruction, the memories it contradicts and their text.';

CREATE OR REPLACE FUNCTION cogmem.resolve_conflict(conflict_id bigint, resolution text, note text DEFAULT NULL)
RETURNS TABLE (status text, memory_id bigint, weakened bigint[])
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_conflict cogmem.conflicts;
    v_stored   bigint;
    v_weakened bigint[] := '{}';
BEGIN
    IF resolve_conflict.resolution IS NULL
       OR resolve_conflict.resolution NOT IN ('paradigm_shift', 'exception', 'override') THEN
        RAISE EXCEPTION 'unknown resolution "%"', coalesce(resolve_conflict.resolution, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'paradigm_shift (the old memory was wrong), exception (this once, keep the old) or '
                         || 'override (act now, keep both, review tonight).';
    END IF;
    SELECT * INTO v_conflict FROM cogmem.conflicts AS c WHERE c.conflict_id = resolve_conflict.conflict_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown conflict %', coalesce(resolve_conflict.conflict_id::text, 'NULL')
            USING ERRCODE = 'no_data_found', HINT = 'Pass a conflict_id from remember() or open_conflicts().';
    END IF;
    PERFORM cogmem._require_tenant(v_conflict.tenant);
    PERFORM cogmem._lock_tenant(v_conflict.tenant, false);
    -- Again, locked: of two people resolving at once, the second sees the first's decision.
    SELECT * INTO v_conflict FROM cogmem.conflicts AS c
    WHERE c.tenant = v_conflict.tenant AND c.conflict_id = resolve_conflict.conflict_id
    FOR UPDATE;
    IF v_conflict.status <> 'open' THEN
        RAISE EXCEPTION 'conflict % is already resolved (%)', v_conflict.conflict_id, v_conflict.status
            USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'See cogmem.open_conflicts() for open ones.';
    END IF;

    IF resolve_conflict.resolution = 'paradigm_shift' THEN
        -- The old belief was wrong: out of its ring, little confidence left, so it fades and is forgotten.
        PERFORM cogmem._lock_stats(v_conflict.tenant, v_conflict.conflicts_with);
        UPDATE cogmem.memory_stats AS s SET confidence = least(s.confidence, 0.1), reinforced = false
        WHERE s.tenant = v_conflict.tenant AND s.memory_id = ANY (v_conflict.conflicts_with);
        WITH moved AS (
            UPDATE cogmem.memories AS m SET ring = 'fresh', updated_at = now()
            WHERE m.tenant = v_conflict.tenant AND m.memory_id = ANY (v_conflict.conflicts_with)
            RETURNING m.memory_id
        )
        SELECT coalesce(array_agg(mv.memory_id ORDER BY mv.memory_id), '{}') INTO v_weakened FROM moved AS mv;
        INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
        SELECT v_conflict.tenant, 'lifecycle', w.id, 'weakened',
               jsonb_build_object('by', 'paradigm_shift', 'conflict_id', v_conflict.conflict_id)
        FROM unnest(v_weakened) AS w (id);
        PERFORM cogmem._trust_event(v_conflict.tenant, 'correction',
                                    format('paradigm shift (conflict %s)', v_conflict.conflict_id), v_weakened[1],
                                    v_conflict.agent);
    END IF;
    IF resolve_conflict.resolution IN ('paradigm_shift', 'override') THEN
        -- Stored through the normal path, never merged into a memory it contradicts.
        SELECT r.memory_id INTO v_stored
        FROM cogmem._remember(v_conflict.tenant, v_conflict.content, v_conflict.ring::text, v_conflict.topics,
                              v_conflict.embedding, v_conflict.source, '{}', v_conflict.conflicts_with) AS r;
    END IF;

    UPDATE cogmem.conflicts AS c
    SET status = resolve_conflict.resolution, resolved_at = now(), resolved_by = cogmem.caller(),
        note = (cogmem.redact(resolve_conflict.note)).redacted, memory_id = v_stored
    WHERE c.tenant = v_conflict.tenant AND c.conflict_id = v_conflict.conflict_id;
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (v_conflict.tenant, 'metacognition', v_stored, 'conflict_resolved',
            jsonb_build_object('conflict_id', v_conflict.conflict_id, 'resolution', resolve_conflict.resolution,
                               'conflicts_with', to_jsonb(v_conflict.conflicts_with), 'weakened', to_jsonb(v_weakened)));
    RETURN QUERY SELECT resolve_conflict.resolution, v_stored, v_weakened;
END;
$$;
COMMENT ON FUNCTION cogmem.resolve_conflict(bigint, text, text) IS
'Decides an open conflict: paradigm_shift (weaken the old memories, store the new), exception (store '
'nothing) or override (store the new, keep both, reviewed at night). Returns what was stored and weakened.';

-- The same with the tenant named first: what a router in front of shards routes on (docs/scaling.md), and
-- what a caller bound to one agent calls with it (another agent's conflict is then unknown to it).
DROP FUNCTION IF EXISTS cogmem.resolve_conflict(text, bigint, text, text);  -- before 0038: no agent
CREATE OR REPLACE FUNCTION cogmem.resolve_conflict(
    tenant text, conflict_id bigint, resolution text, note text DEFAULT NULL, agent text DEFAULT NULL
)
RETURNS TABLE (status text, memory_id bigint, weakened bigint[])
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(resolve_conflict.tenant);
    PERFORM cogmem._require_names(NULL, resolve_conflict.agent);
    IF NOT EXISTS (SELECT FROM cogmem.conflicts AS c
                   WHERE c.tenant = resolve_conflict.tenant AND c.conflict_id = resolve_conflict.conflict_id
                     AND (resolve_conflict.agent IS NULL OR c.agent IS NULL OR c.agent = btrim(resolve_conflict.agent))) THEN
        RAISE EXCEPTION 'unknown conflict % in tenant "%"', coalesce(resolve_conflict.conflict_id::text, 'NULL'),
            resolve_conflict.tenant
            USING ERRCODE = 'no_data_found', HINT = 'Pass a conflict_id from remember() or open_conflicts(tenant).';
    END IF;
    RETURN QUERY SELECT * FROM cogmem.resolve_conflict(resolve_conflict.conflict_id, resolve_conflict.resolution,
                                                       resolve_conflict.note);
END;
$$;
COMMENT ON FUNCTION cogmem.resolve_conflict(text, bigint, text, text, text) IS
'resolve_conflict(conflict_id, ...) for a conflict of the named tenant (the form a sharded router routes), '
'and of the agent when one is given.';

-- What a text could contradict: the established memories closest to it (by meaning when there is an
-- embedding, else by the words they share). For a judge on the caller's side (an LLM), whose verdict
-- goes back as remember's contradicts argument: the Python client's classifier receives these.
-- "limit" was integer before 0027: bigint takes what drivers send for a large number (sql/070-recall.sql).
DROP FUNCTION IF EXISTS cogmem.related(text, text, public.vector, integer);
DROP FUNCTION IF EXISTS cogmem.related(text, text, public.vector, bigint);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem.related(
    tenant text, statement text, embedding public.vector DEFAULT NULL, "limit" bigint DEFAULT 5,
    person text DEFAULT NULL, agent text DEFAULT NULL
)
RETURNS TABLE (memory_id bigint, ring text, content text, similarity real)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
-- Definer: it reads memories for the caller's tenant and scope, both checked first.
AS $$
#variable_conflict use_column
DECLARE
    v_language regconfig := cogmem._require_tenant(related.tenant);
    v_person   text := btrim(related.person);
    v_agent    text := btrim(related.agent);
    v_words    text[];
BEGIN
    -- Only the statement's own scope: what it could contradict (sql/015-scopes.sql).
    PERFORM cogmem._require_scope(related.tenant, v_person, v_agent);
    IF related.statement IS NULL THEN
        RAISE EXCEPTION 'statement must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the text to find established memories for.';
    END IF;
    IF related."limit" IS NULL OR related."limit" NOT BETWEEN 1 AND 100 THEN
        RAISE EXCEPTION 'limit must be between 1 and 100, got %', coalesce(related."limit"::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The default is 5.';
    END IF;
    PERFORM cogmem._check_embedding(related.embedding);
    IF related.embedding IS NOT NULL THEN
        RETURN QUERY
        SELECT m.memory_id, m.ring::text, m.content, (1 - (m.embedding OPERATOR(public.<=>) related.embedding))::real
        FROM cogmem.memories AS m
        WHERE m.tenant = related.tenant AND m.ring NOT IN ('fresh', 'shocks') AND m.embedding IS NOT NULL
          AND cogmem._same_scope(m.person, m.agent, v_person, v_agent)
        ORDER BY m.embedding OPERATOR(public.<=>) related.embedding, m.memory_id
        LIMIT related."limit";
        RETURN;
    END IF;
    v_words := coalesce(tsvector_to_array(to_tsvector(v_language, related.statement)), '{}');
    RETURN QUERY
    SELECT m.memory_id, m.ring::text, m.content,
           (cogmem._shared_words(m.search, v_words)::real / greatest(cardinality(v_words), 1))::real
    FROM cogmem.memories AS m
    WHERE m.tenant = related.tenant AND m.ring NOT IN ('fresh', 'shocks')
      AND cogmem._same_scope(m.person, m.agent, v_person, v_agent)
      AND m.search @@ cogmem._or_query(v_words)
    ORDER BY 4 DESC, m.memory_id
    LIMIT related."limit";
END;
$$;
COMMENT ON FUNCTION cogmem.related(text, text, public.vector, bigint, text, text) IS
'The established memories (rules, long-term facts, habits, procedures) of a scope closest to a text: by '
'cosine with an embedding, else by the share of its words they hold. For a caller-side judge of '
'contradictions.';
