-- Experiment arms: which value of a setting a tenant (or a session of it) sees while an experiment runs.
--
-- The settings an experiment may vary are columns of cogmem.tenants, listed below; everything that
-- reads a tenant's settings loads them through cogmem._tenant_settings(), which lays the running arm's
-- value over the tenant's own. Tenants that no running experiment enrols get their row as it is.
-- Experiments are created, stopped and judged in sql/190-experiments.sql.

-- What may be experimented on. Not here, on purpose: what decides never-cut or BIOS behaviour
-- (turn_never_cut_probability routes into the never-cut rings; candidate_* and reinforce_min_success
-- decide when a candidate becomes a never-cut rule; dissonance_similarity holds what contradicts one),
-- the guard, the Gut, input limits and the language, and sensory_ttl (sql/085-observe.sql reads it from
-- the table). Layer settings (allocation, half-life) live in cogmem.tenant_layers, which recall, the
-- rehearsal and the strength view join directly; they are not experimented on yet.
CREATE OR REPLACE FUNCTION cogmem._experiment_parameters()
RETURNS TABLE (parameter text, per_session boolean)
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    -- per_session: read by recall, which knows its conversation, so a session may hold its own value;
    -- the others act on all the memories of a tenant (the duplicates remember finds, the night).
    SELECT p.parameter, p.per_session
    FROM (VALUES
        ('promote_min_recalls', false), ('promote_min_success', false), ('reinforce_min_recalls', false),
        ('weaken_min_recalls', false), ('weaken_max_success', false), ('forget_after', false),
        ('forget_step', false), ('forget_below', false), ('merge_similarity', false),
        ('sibling_similarity', false), ('duplicate_similarity', false),
        ('fusion_k', true), ('lexical_weight', true), ('vector_weight', true), ('topic_weight', true),
        ('topic_bypass_similarity', true), ('recall_min_strength', true), ('neighbour_weight', true),
        ('speaker_boost', true), ('excerpt_above', true)
    ) AS p (parameter, per_session);
$$;
COMMENT ON FUNCTION cogmem._experiment_parameters() IS
'The tenant settings an experiment may vary, and whether a session may hold its own value (recall''s).';

-- Random and stable: the same unit and salt give the same arm on every call, every node and every
-- release (hashtextextended is what hash partitioning relies on), and a new salt a new draw.
CREATE OR REPLACE FUNCTION cogmem._experiment_arm(p_salt bigint, p_unit text, p_arms integer)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 1 OPERATOR(pg_catalog.+) ((pg_catalog.hashtextextended(p_unit, p_salt) OPERATOR(pg_catalog.%) p_arms
                                      OPERATOR(pg_catalog.+) p_arms) OPERATOR(pg_catalog.%) p_arms)::integer;
$$;
COMMENT ON FUNCTION cogmem._experiment_arm(bigint, text, integer) IS
'The arm (1..arms) a unit (a session) hashes to under an experiment''s salt.';

-- Called where a function used to read its tenant's row (remember, remember_many, recall, the night, the
-- keyed store), after the caller's reach was checked. Without a running experiment it is that row.
CREATE OR REPLACE FUNCTION cogmem._tenant_settings(p_tenant text, p_session text DEFAULT NULL)
RETURNS cogmem.tenants
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    t       cogmem.tenants;
    v_arms  jsonb;
BEGIN
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = p_tenant;
    -- The common cases, by index probes: no experiment runs, or none enrols this tenant.
    IF NOT EXISTS (SELECT FROM cogmem.experiments AS e WHERE e.stopped_at IS NULL)
       OR NOT EXISTS (SELECT FROM cogmem.experiment_tenants AS a JOIN cogmem.experiments AS e ON e.name = a.experiment
                      WHERE a.tenant = p_tenant AND e.stopped_at IS NULL) THEN
        RETURN t;
    END IF;
    -- The arm of a session applies where the session is known (recall); elsewhere the tenant value.
    SELECT jsonb_object_agg(e.parameter,
                            e.arms -> (coalesce(a.arm, cogmem._experiment_arm(e.salt, p_session, jsonb_array_length(e.arms))) - 1))
    INTO v_arms
    FROM cogmem.experiment_tenants AS a
    JOIN cogmem.experiments AS e ON e.name = a.experiment
    JOIN cogmem._experiment_parameters() AS p ON p.parameter = e.parameter  -- never what is not listed
    WHERE a.tenant = p_tenant AND e.stopped_at IS NULL
      AND (e.unit = 'tenant' OR (p_session IS NOT NULL AND p.per_session));
    -- The values were checked against the types and constraints of the columns when it was made.
    RETURN CASE WHEN v_arms IS NULL THEN t ELSE jsonb_populate_record(t, v_arms) END;
END;
$$;
COMMENT ON FUNCTION cogmem._tenant_settings(text, text) IS
'The tenant''s settings row, with the value of its arm in every running experiment that enrols it (or, '
'given a session, the session''s arm where the unit is the session).';
