-- Core identity: who the agent is, who the user is, the standing goals. Small (1,200 characters at most,
-- ~300 tokens), always injected first by recall() and briefing(), and versioned: a change is a new
-- version, older ones stay (UPDATE is refused; erasure may delete a version that names a person).

CREATE OR REPLACE TRIGGER core_identity_immutable
BEFORE UPDATE ON cogmem.core_identity
FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();

CREATE OR REPLACE FUNCTION cogmem._core_text(p_identity cogmem.core_identity)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- PL/pgSQL, not SQL: a SQL function with a SET clause is planned on every call, and recall calls it.
AS $$
BEGIN
    RETURN nullif(concat_ws(E'\n', 'Agent: ' || p_identity.agent, 'User: ' || p_identity.user_profile,
                            'Goals: ' || nullif(array_to_string(p_identity.goals, '; '), '')), '');
END;
$$;
COMMENT ON FUNCTION cogmem._core_text(cogmem.core_identity) IS 'A core identity version as the text recall injects.';

CREATE OR REPLACE FUNCTION cogmem.core_identity(tenant text)
RETURNS TABLE (version integer, agent text, user_profile text, goals text[], set_at timestamptz, set_by text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(core_identity.tenant);
    RETURN QUERY
    SELECT c.version, c.agent, c.user_profile, c.goals, c.set_at, c.set_by FROM cogmem.core_identity AS c
    WHERE c.tenant = core_identity.tenant ORDER BY c.version DESC LIMIT 1;
END;
$$;
COMMENT ON FUNCTION cogmem.core_identity(text) IS 'The current core identity of a tenant (no row before the first).';

CREATE OR REPLACE FUNCTION cogmem.set_core_identity(
    tenant text, agent text DEFAULT NULL, user_profile text DEFAULT NULL, goals text[] DEFAULT NULL
)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_tenant  text := set_core_identity.tenant;
    v_before  cogmem.core_identity;
    v_next    cogmem.core_identity;
    v_chars   integer;
BEGIN
    PERFORM cogmem._require_tenant(v_tenant);
    -- Every person's recall injects it: not for a grant narrowed to one person (sql/015-scopes.sql).
    PERFORM cogmem._require_whole_tenant(v_tenant);
    -- One version at a time per tenant.
    PERFORM cogmem._serialize_tenant(v_tenant);
    SELECT * INTO v_before FROM cogmem.core_identity AS c WHERE c.tenant = v_tenant ORDER BY c.version DESC LIMIT 1;
    -- NULL keeps what was there; '' (or an empty list) clears it.
    v_next.tenant := v_tenant;
    v_next.version := coalesce(v_before.version, 0) + 1;
    v_next.agent := CASE WHEN set_core_identity.agent IS NULL THEN v_before.agent
                         ELSE cogmem._clean_text(set_core_identity.agent) END;
    v_next.user_profile := CASE WHEN set_core_identity.user_profile IS NULL THEN v_before.user_profile
                                ELSE cogmem._clean_text(set_core_identity.user_profile) END;
    v_next.goals := CASE WHEN set_core_identity.goals IS NULL THEN coalesce(v_before.goals, '{}')
                         ELSE cogmem._clean_list(set_core_identity.goals) END;
    v_chars := coalesce(length(cogmem._core_text(v_next)), 0);
    IF v_chars > 1200 THEN
        RAISE EXCEPTION 'core identity has % characters, at most 1200', v_chars
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Keep it small: it is injected into every recall. Put the rest in memories.';
    END IF;
    IF v_before.version IS NOT NULL AND (v_next.agent, v_next.user_profile, v_next.goals)
                                        IS NOT DISTINCT FROM (v_before.agent, v_before.user_profile, v_before.goals) THEN
        RETURN v_before.version;  -- nothing changed: no new version
    END IF;
    INSERT INTO cogmem.core_identity (tenant, version, agent, user_profile, goals)
    VALUES (v_tenant, v_next.version, v_next.agent, v_next.user_profile, v_next.goals);
    -- Which parts changed, not their text (it may describe a person).
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (v_tenant, 'governance', 'core_identity_set',
            jsonb_build_object('version', v_next.version,
                               'changed', to_jsonb(ARRAY(
                                   SELECT f FROM (VALUES
                                       ('agent', v_next.agent IS DISTINCT FROM v_before.agent),
                                       ('user_profile', v_next.user_profile IS DISTINCT FROM v_before.user_profile),
                                       ('goals', v_next.goals IS DISTINCT FROM coalesce(v_before.goals, '{}'))) AS x (f, changed)
                                   WHERE x.changed))));
    RETURN v_next.version;
END;
$$;
COMMENT ON FUNCTION cogmem.set_core_identity(text, text, text, text[]) IS
'Sets who the agent is, who the user is and the standing goals as a new version (NULL keeps a part, '
'''''/''{}'' clears it); returns the version. At most 1,200 characters in all.';
