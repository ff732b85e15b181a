-- Scopes inside a tenant (migration 0035): a person (who a memory is about or from) and an agent (who
-- heard it). Both optional: a tenant that names neither behaves as one undivided memory.
--
-- What a recall for person P and agent A sees, by default:
--   * what the tenant shares (no person, no agent);
--   * what is P's (heard by any agent, unless scope_person_across_agents is off);
--   * what A heard with no person.
-- Never another person's. The scope policy (tenants.scope_*) widens the third: the memories of
-- scope_shared_agents in scope_shared_rings are recalled by every agent.
--
-- The same text, merges, siblings and conflicts are matched within one scope only (_same_scope): one
-- person's fact neither merges with nor contradicts another's.
--
-- A grant can be narrowed to one person (tenant_access.person): the role sees that person's rows and
-- what carries no person, and writes only that person's. Row-level security enforces it on every table
-- with a person column; _require_scope says so first, with a HINT.

-- A name of a person or an agent, as a scope takes it: what is wrong with it, NULL when nothing. Invisible
-- characters (a zero-width space, a direction override) are refused with the control characters: "assistant"
-- and "assistant\u200b" look alike to a person and must not be two speakers.
CREATE OR REPLACE FUNCTION cogmem._name_problem(p_key text, p_value jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN p_value IS NULL OR jsonb_typeof(p_value) = 'null' THEN NULL
    WHEN
        jsonb_typeof(p_value) <> 'string' OR btrim(p_value #>> '{}') = '' OR length(btrim(p_value #>> '{}')) > 200
        OR (p_value #>> '{}') ~ '[[:cntrl:]\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]'
        THEN format('has a %s that is not a name of 1 to 200 characters without control or invisible characters', p_key)
END;
COMMENT ON FUNCTION cogmem._name_problem(text, jsonb) IS
'What is wrong with a name (a conversation, speaker, person or agent) given as JSON; NULL when nothing.';

-- A memory's scope travels in its source (sql/060-remember.sql, _with_said); memories.person and agent
-- are generated from it by these same expressions (migration 0035).
CREATE OR REPLACE FUNCTION cogmem._person(p_source jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN nullif(btrim(p_source ->> 'person'), '');
COMMENT ON FUNCTION cogmem._person(jsonb) IS 'The person a source names (NULL: none), as memories.person is generated.';

CREATE OR REPLACE FUNCTION cogmem._agent(p_source jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN nullif(btrim(p_source ->> 'agent'), '');
COMMENT ON FUNCTION cogmem._agent(jsonb) IS 'The agent a source names (NULL: none), as memories.agent is generated.';

-- Which memories a scope sees. SQL, no SET clause: it is inlined into recall's one pass. Public: a pure
-- rule that reveals nothing, for applications that read the views for a scope (the client's search).
CREATE OR REPLACE FUNCTION cogmem.in_scope(
    m_person text, m_agent text, m_ring cogmem.ring, p_person text, p_agent text, t cogmem.tenants
)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN CASE
    WHEN m_person IS NOT NULL
        THEN
            m_person IS NOT DISTINCT FROM p_person
            AND (m_agent IS NULL OR m_agent IS NOT DISTINCT FROM p_agent OR t.scope_person_across_agents)
    WHEN m_agent IS NOT NULL
        THEN
            m_agent IS NOT DISTINCT FROM p_agent
            OR (
                (m_agent = any(t.scope_shared_agents) OR '*' = any(t.scope_shared_agents))
                AND m_ring = any(t.scope_shared_rings)
            )
    ELSE TRUE
END;
COMMENT ON FUNCTION cogmem.in_scope(text, text, cogmem.ring, text, text, cogmem.tenants) IS
'Whether a recall for (p_person, p_agent) may see a memory of (m_person, m_agent) in m_ring, under the '
'tenant''s scope policy: the tenant''s shared memories, the person''s, the agent''s; never another person''s.';

CREATE OR REPLACE FUNCTION cogmem._same_scope(a_person text, a_agent text, b_person text, b_agent text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN a_person IS NOT DISTINCT FROM b_person AND a_agent IS NOT DISTINCT FROM b_agent;
COMMENT ON FUNCTION cogmem._same_scope(text, text, text, text) IS
'Two memories of one scope (person and agent alike, NULLs equal): only they may be the same text, merge, '
'be siblings or contradict each other.';

-- The memories a caller names for a text (remember's contradicts and supersedes): each once, and only of the
-- text's scope, so that one person's statement never weakens or replaces another's memory.
CREATE OR REPLACE FUNCTION cogmem._named_in_scope(
    t cogmem.tenants, p_ids bigint[], p_person text, p_agent text, p_argument text, p_relation text
)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_named bigint[] := ARRAY(SELECT DISTINCT s.id FROM unnest(p_ids) AS s (id) ORDER BY s.id);
BEGIN
    IF cardinality(v_named) > 0 AND (
        SELECT count(*) FROM cogmem.memories AS m
        WHERE m.tenant = t.tenant AND m.memory_id = ANY (v_named)
          AND cogmem._same_scope(m.person, m.agent, p_person, p_agent)) < cardinality(v_named) THEN
        RAISE EXCEPTION '% names memories tenant "%" does not have in this scope', p_argument, t.tenant
            USING ERRCODE = 'no_data_found',
                  HINT = format('Pass ids of the tenant''s memories of the same person and agent %s, ''{}'' for '
                                'none, or NULL to detect.', p_relation);
    END IF;
    RETURN CASE WHEN p_ids IS NOT NULL THEN v_named END;
END;
$$;
COMMENT ON FUNCTION cogmem._named_in_scope(cogmem.tenants, bigint[], text, text, text, text) IS
'The memories a caller names for a text (p_argument: contradicts, supersedes), de-duplicated, each checked to '
'be of the tenant and the scope (no_data_found with a HINT otherwise); NULL for NULL (detect them).';

-- The persons a caller's grants narrow each tenant to: {"tenant": ["person", ...]}, for the tenants it
-- reaches only through narrowed grants. Empty for a role with a whole grant, '*', or cogmem_admin. The
-- policies below run it once per statement (an init plan); it reads only the caller's own grants.
CREATE OR REPLACE FUNCTION cogmem.narrowed_reach()
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $$
DECLARE
    v_roles name[];
BEGIN
    -- Most installations narrow no grant the caller can see: one look at an empty partial index.
    IF NOT EXISTS (SELECT FROM cogmem.tenant_access AS a WHERE a.person IS NOT NULL) THEN
        RETURN '{}';
    END IF;
    v_roles := cogmem.caller_roles();
    IF NOT EXISTS (SELECT FROM cogmem.tenant_access AS a
                   WHERE a.person IS NOT NULL AND a.role_name OPERATOR(pg_catalog.=) ANY (v_roles))
       OR cogmem.reaches_every_tenant() THEN
        RETURN '{}';
    END IF;
    RETURN coalesce((
        SELECT pg_catalog.jsonb_object_agg(g.tenant, g.persons)
        FROM (SELECT a.tenant, pg_catalog.jsonb_agg(DISTINCT a.person) AS persons
              FROM cogmem.tenant_access AS a
              WHERE a.role_name OPERATOR(pg_catalog.=) ANY (v_roles)
              GROUP BY a.tenant
              HAVING pg_catalog.bool_and(a.person IS NOT NULL)) AS g
    ), '{}');
END;
$$;
COMMENT ON FUNCTION cogmem.narrowed_reach() IS
'The tenants the calling role reaches only for some persons, with those persons: {"tenant": ["person"]}.';

-- A person's and an agent's names as a verb takes them: valid, or a clear error.
CREATE OR REPLACE FUNCTION cogmem._require_names(p_person text, p_agent text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_problem text := coalesce(cogmem._name_problem('person', pg_catalog.to_jsonb(p_person)),
                               cogmem._name_problem('agent', pg_catalog.to_jsonb(p_agent)));
BEGIN
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION 'the scope %', v_problem
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Name a person or an agent, e.g. ''cust-42'', ''billing''.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._require_names(text, text) IS
'Refuses a person or an agent that is not a name of 1 to 200 characters without control or invisible characters.';

-- Scope arguments of a public verb: valid names, and for a role narrowed to persons of the tenant, one
-- of its persons (a narrowed role writes and recalls only in its person's scope).
CREATE OR REPLACE FUNCTION cogmem._require_scope(p_tenant text, p_person text, p_agent text)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_persons jsonb := cogmem.narrowed_reach() OPERATOR(pg_catalog.->) p_tenant;
BEGIN
    PERFORM cogmem._require_names(p_person, p_agent);
    IF v_persons IS NOT NULL AND NOT (p_person IS NOT NULL AND v_persons OPERATOR(pg_catalog.?) btrim(p_person)) THEN
        RAISE EXCEPTION 'permission denied: % reaches tenant "%" only for the person %', cogmem.caller(), p_tenant,
                        (SELECT pg_catalog.string_agg(pg_catalog.quote_literal(p), ', ')
                         FROM pg_catalog.jsonb_array_elements_text(v_persons) AS p)
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Pass person => that person; its grant (cogmem.grant_tenant(..., person => ...)) is narrowed to it.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._require_scope(text, text, text) IS
'Checks a verb''s person and agent: valid names, and a person the caller reaches (a grant narrowed to a '
'person requires it); insufficient_privilege otherwise.';

-- What belongs to the whole tenant (its core identity, its learnings, the audit trail) is not for a grant
-- narrowed to one person: refused with a reason.
CREATE OR REPLACE FUNCTION cogmem._require_whole_tenant(p_tenant text)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF cogmem.narrowed_reach() OPERATOR(pg_catalog.?) p_tenant THEN
        RAISE EXCEPTION 'permission denied: % reaches tenant "%" only for some persons', cogmem.caller(), p_tenant
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'This changes what every person of the tenant shares: it needs a grant of the whole tenant.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._require_whole_tenant(text) IS
'Raises insufficient_privilege for a role whose grant of the tenant is narrowed to persons.';

-- The person boundary, on every table with a person column: restrictive, so it narrows what
-- tenant_isolation lets through. Reads see what carries no person (what the tenant shares); writes of a
-- narrowed role must carry one of its persons.
DO $policies$
DECLARE
    v_table regclass;
    v_reach text := '((SELECT cogmem.narrowed_reach()) -> tenant) ? person';
    v_whole text := 'NOT ((SELECT cogmem.narrowed_reach()) ? tenant)';
BEGIN
    FOR v_table IN
        SELECT c.oid::regclass
        FROM pg_class AS c
        JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = 'person' AND NOT a.attisdropped
        WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relname <> 'tenant_access'
    LOOP
        EXECUTE format('DROP POLICY IF EXISTS person_reads ON %s', v_table);
        EXECUTE format('CREATE POLICY person_reads ON %s AS RESTRICTIVE FOR SELECT USING (person IS NULL OR %s OR %s)',
                       v_table, v_whole, v_reach);
        EXECUTE format('DROP POLICY IF EXISTS person_inserts ON %s', v_table);
        EXECUTE format('CREATE POLICY person_inserts ON %s AS RESTRICTIVE FOR INSERT WITH CHECK (%s OR %s)',
                       v_table, v_whole, v_reach);
        EXECUTE format('DROP POLICY IF EXISTS person_updates ON %s', v_table);
        EXECUTE format('CREATE POLICY person_updates ON %s AS RESTRICTIVE FOR UPDATE USING (%s OR %s) WITH CHECK (%s OR %s)',
                       v_table, v_whole, v_reach, v_whole, v_reach);
        EXECUTE format('DROP POLICY IF EXISTS person_deletes ON %s', v_table);
        EXECUTE format('CREATE POLICY person_deletes ON %s AS RESTRICTIVE FOR DELETE USING (%s OR %s)',
                       v_table, v_whole, v_reach);
    END LOOP;
END;
$policies$;
-- What is kept about a memory beside it (its statistics, its siblings, its contradictions) carries no
-- person of its own: a narrowed grant reads it only where it reads the memory (row-level security of
-- cogmem.memories applies inside the policy), or another person's ids and recall counts would show.
DROP POLICY IF EXISTS person_reads ON cogmem.memory_stats;
CREATE POLICY person_reads ON cogmem.memory_stats AS RESTRICTIVE FOR SELECT
USING (
    NOT ((SELECT cogmem.narrowed_reach()) ? tenant)
    OR EXISTS (
        SELECT FROM cogmem.memories AS m
        WHERE m.tenant = memory_stats.tenant AND m.memory_id = memory_stats.memory_id
    )
);
DROP POLICY IF EXISTS person_reads ON cogmem.memory_siblings;
CREATE POLICY person_reads ON cogmem.memory_siblings AS RESTRICTIVE FOR SELECT
USING (
    NOT ((SELECT cogmem.narrowed_reach()) ? tenant)
    OR 2 = (
        SELECT count(*) FROM cogmem.memories AS m
        WHERE m.tenant = memory_siblings.tenant AND m.memory_id IN (memory_siblings.memory_id, memory_siblings.sibling_id)
    )
);
DROP POLICY IF EXISTS person_reads ON cogmem.memory_contradictions;
CREATE POLICY person_reads ON cogmem.memory_contradictions AS RESTRICTIVE FOR SELECT
USING (
    NOT ((SELECT cogmem.narrowed_reach()) ? tenant)
    OR 2 = (
        SELECT count(*) FROM cogmem.memories AS m
        WHERE
            m.tenant = memory_contradictions.tenant
            AND m.memory_id IN (memory_contradictions.memory_id, memory_contradictions.contradicts_id)
    )
);
-- The audit trail names every person's scope, recall and reason: a narrowed grant reads none of it (its
-- own calls still write it).
DROP POLICY IF EXISTS whole_tenant_reads ON cogmem.audit_log;
CREATE POLICY whole_tenant_reads ON cogmem.audit_log AS RESTRICTIVE FOR SELECT
USING (NOT ((SELECT cogmem.narrowed_reach()) ? tenant));
