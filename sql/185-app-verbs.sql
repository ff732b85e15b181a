-- The application's verbs on single memories: get one, list them a page at a time, update one (a new
-- version that supersedes it), delete one (an erasure), and its history. What a Mem0 user calls get,
-- get_all, update, delete and history, and a LangGraph store get, search, put and delete; the keyed store
-- (sql/180-store.sql) is the other way in, by namespace and key.
--
-- Each works within the caller's tenant and scope (sql/015-scopes.sql), as recall does: the tenant's shared
-- memories, the person's and the agent's, never another person's. A memory outside the scope is refused
-- with the very words of one that does not exist (no_data_found), so an id tells nothing of a scope the
-- caller does not reach. A change (update, delete) is the scope's own memories only: a call for a person
-- changes that person's memories, not what the tenant shares with everyone, and a call for an agent not
-- another agent's. Nothing here writes its own copy of a path: update is remember with supersedes
-- (sql/036-supersession.sql), delete is erase (sql/130-erasure.sql), and both are audited there.

-- What a call for (p_person, p_agent) may change of what it sees: its person's memories (no person: the
-- tenant's shared ones), of its agent or of none (a call without an agent: of any agent). The same rule as
-- confirm_ring's for agents (sql/165-candidates.sql).
CREATE OR REPLACE FUNCTION cogmem._changeable(m_person text, m_agent text, p_person text, p_agent text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN m_person IS NOT DISTINCT FROM p_person AND (p_agent IS NULL OR m_agent IS NULL OR m_agent = p_agent);
COMMENT ON FUNCTION cogmem._changeable(text, text, text, text) IS
'Whether a call for (p_person, p_agent) may change a memory of (m_person, m_agent) it sees: the person''s own '
'(no person: the tenant''s shared ones), of its agent or of none; a call without an agent, of any agent.';

-- The memory a verb names, as the caller's scope sees it; no_data_found otherwise, the same whether it never
-- was or is another person's. p_change ('update', 'delete'): the tenant held for the day (its night waits),
-- the row locked, and only a memory the call may change (insufficient_privilege for one it only sees: it
-- knows that one exists already); an update only of the current version (a superseded one names its
-- successor), and not of a keyed store item's memory, which follows its item.
CREATE OR REPLACE FUNCTION cogmem._scoped_memory(
    p_tenant text, p_memory_id bigint, p_person text, p_agent text, p_change text
)
RETURNS cogmem.memories
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    t        cogmem.tenants;
    v_memory cogmem.memories;
    v_person text := btrim(p_person);
    v_agent  text := btrim(p_agent);
BEGIN
    IF p_memory_id IS NULL THEN
        RAISE EXCEPTION 'memory_id must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass the id remember returned; cogmem.list_memories(tenant) lists them.';
    END IF;
    IF p_change IS NOT NULL THEN
        PERFORM cogmem._lock_tenant(p_tenant, false);
        PERFORM FROM cogmem.memories AS m WHERE m.tenant = p_tenant AND m.memory_id = p_memory_id FOR UPDATE;
    END IF;
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = p_tenant;
    SELECT m.* INTO v_memory FROM cogmem.memories AS m
    WHERE m.tenant = p_tenant AND m.memory_id = p_memory_id
      AND cogmem.in_scope(m.person, m.agent, m.ring, v_person, v_agent, t);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no memory % in tenant "%"', p_memory_id, p_tenant
            USING ERRCODE = 'no_data_found',
                  HINT = 'Pass the person and agent it was remembered for; cogmem.list_memories(tenant, person => '
                         || '..., agent => ...) lists what a scope sees.';
    END IF;
    IF p_change IS NOT NULL AND NOT cogmem._changeable(v_memory.person, v_memory.agent, v_person, v_agent) THEN
        RAISE EXCEPTION 'memory % of tenant "%" is %: a call for % may read it but not change it', p_memory_id,
            p_tenant,
            CASE WHEN v_memory.person IS NULL THEN 'the tenant''s' ELSE format('person "%s"''s', v_memory.person) END
            || CASE WHEN v_memory.agent IS NOT NULL THEN format(', heard by agent "%s"', v_memory.agent) ELSE '' END,
            concat_ws(' and ', CASE WHEN v_person IS NOT NULL THEN format('person "%s"', v_person) END,
                      CASE WHEN v_agent IS NOT NULL THEN format('agent "%s"', v_agent) END)
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Change it with the person and agent it was remembered for (what the tenant shares: with no '
                         || 'person), or remember the person''s own version.';
    END IF;
    IF p_change = 'update' AND v_memory.valid_until IS NOT NULL THEN
        RAISE EXCEPTION 'memory % of tenant "%" was superseded by memory %', p_memory_id, p_tenant,
            v_memory.superseded_by
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = format('Update the current version, memory %s; cogmem.memory_history(tenant, memory_id) '
                                'shows the versions.', v_memory.superseded_by);
    END IF;
    IF p_change = 'update' AND EXISTS (SELECT FROM cogmem.store_items AS i
                                       WHERE i.tenant = p_tenant AND i.memory_id = p_memory_id) THEN
        RAISE EXCEPTION 'memory % of tenant "%" is the text of a keyed store item', p_memory_id, p_tenant
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Put the item again (cogmem.store_put with its index_text): its memory follows it.';
    END IF;
    RETURN v_memory;
END;
$$;
COMMENT ON FUNCTION cogmem._scoped_memory(text, bigint, text, text, text) IS
'The memory a verb names within the caller''s scope (no_data_found otherwise, alike for missing and out of '
'scope); with p_change (update, delete) locked, one the call may change (insufficient_privilege), and for '
'an update the current version of no store item (object_not_in_prerequisite_state).';

-- The columns get_memory and list_memories return, in the order of p_ids: the memory, its scope, where it
-- was said, its versions' links, and its confidence and strength as memory_overview computes them.
CREATE OR REPLACE FUNCTION cogmem._memory_rows(p_tenant text, p_ids bigint[])
RETURNS TABLE (
    memory_id bigint, ring text, content text, topics text[], person text, agent text, source jsonb,
    conversation text, speaker text, said_at timestamptz, created_at timestamptz, updated_at timestamptz,
    superseded_by bigint, valid_until timestamptz, candidate text, confidence real, strength double precision,
    recall_count bigint, last_recalled_at timestamptz
)
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT o.memory_id, o.ring::text, o.content, o.topics, o.person, o.agent, o.source, o.conversation, o.speaker,
           o.said_at, o.created_at, o.updated_at, o.superseded_by, o.valid_until, o.candidate_ring::text,
           o.confidence, o.strength, o.recall_count::bigint, o.last_recalled_at
    FROM cogmem.memory_overview AS o
    WHERE o.tenant = p_tenant AND o.memory_id = ANY (p_ids)
    ORDER BY array_position(p_ids, o.memory_id);
$$;
COMMENT ON FUNCTION cogmem._memory_rows(text, bigint[]) IS
'The memories of p_ids (already checked to be in the caller''s scope) as get_memory and list_memories return '
'them, in the order given.';

CREATE OR REPLACE FUNCTION cogmem.get_memory(
    tenant text, memory_id bigint, person text DEFAULT NULL, agent text DEFAULT NULL
)
RETURNS TABLE (
    memory_id bigint, ring text, content text, topics text[], person text, agent text, source jsonb,
    conversation text, speaker text, said_at timestamptz, created_at timestamptz, updated_at timestamptz,
    superseded_by bigint, valid_until timestamptz, candidate text, confidence real, strength double precision,
    recall_count bigint, last_recalled_at timestamptz
)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: application roles call no internal helper; tenant and scope are checked first. SQL: its result
-- columns reuse the names of its arguments, which PL/pgSQL does not allow.
AS $$
    SELECT cogmem._require_tenant(get_memory.tenant);
    SELECT cogmem._require_scope(get_memory.tenant, get_memory.person, get_memory.agent);
    SELECT r.*
    FROM cogmem._scoped_memory(get_memory.tenant, get_memory.memory_id, get_memory.person, get_memory.agent, NULL) AS m
    CROSS JOIN LATERAL cogmem._memory_rows(get_memory.tenant, ARRAY[m.memory_id]) AS r;
$$;
COMMENT ON FUNCTION cogmem.get_memory(text, bigint, text, text) IS
'One memory of the caller''s scope (person, agent: sql/015-scopes.sql): its text, ring, topics, scope, where '
'and when it was said, what superseded it and since when, its candidacy, confidence, strength and recalls. '
'no_data_found, alike, for a memory that does not exist and one outside the scope. Mem0: get; LangGraph: get.';

-- A page of the memories a scope sees, newest first: after_id is the last id of the previous page (keyset
-- paging, stable while memories are added). The ids only; _memory_rows gives the columns.
CREATE OR REPLACE FUNCTION cogmem._memory_page(
    p_tenant text, p_ring text, p_person text, p_agent text, p_since timestamptz, p_until timestamptz,
    p_after_id bigint, p_page_size bigint, p_superseded boolean, p_shared boolean
)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    t        cogmem.tenants;
    v_ring   cogmem.ring := cogmem._ring_of(p_ring)::cogmem.ring;
    v_person text := btrim(p_person);
    v_agent  text := btrim(p_agent);
BEGIN
    IF p_ring IS NOT NULL AND v_ring IS NULL THEN
        RAISE EXCEPTION 'unknown ring "%"', p_ring
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of: shocks, dos_and_donts, long_term, habits, procedures, fresh; a kind: rule, '
                         || 'preference, incident, procedure, habit, fact, chat; or NULL for every ring.';
    END IF;
    IF p_page_size IS NULL OR p_page_size NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'page_size must be 1 to 1000, got %', coalesce(p_page_size::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Ask for at most 1000 memories a call; pass the last memory_id as after_id for the next page.';
    END IF;
    IF p_since > p_until THEN
        RAISE EXCEPTION 'since (%) is after until (%)', p_since, p_until
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'since is the first moment listed, until the first one left out.';
    END IF;
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = p_tenant;
    RETURN ARRAY(
        SELECT m.memory_id FROM cogmem.memories AS m
        WHERE m.tenant = p_tenant AND (p_after_id IS NULL OR m.memory_id < p_after_id)
          AND (v_ring IS NULL OR m.ring = v_ring)
          AND (p_since IS NULL OR m.created_at >= p_since) AND (p_until IS NULL OR m.created_at < p_until)
          AND (p_superseded IS TRUE OR m.valid_until IS NULL)
          AND cogmem.in_scope(m.person, m.agent, m.ring, v_person, v_agent, t)
          AND (p_shared IS NOT FALSE OR cogmem._changeable(m.person, m.agent, v_person, v_agent))
        ORDER BY m.memory_id DESC
        LIMIT p_page_size
    );
END;
$$;
COMMENT ON FUNCTION cogmem._memory_page(
    text, text, text, text, timestamptz, timestamptz, bigint, bigint, boolean, boolean
) IS
'The ids of one page of list_memories, newest first, after its checks of ring, page_size, since and until '
'(invalid_parameter_value).';

CREATE OR REPLACE FUNCTION cogmem.list_memories(
    tenant text,
    ring text DEFAULT NULL,
    person text DEFAULT NULL,
    agent text DEFAULT NULL,
    since timestamptz DEFAULT NULL,
    until timestamptz DEFAULT NULL,
    after_id bigint DEFAULT NULL,
    page_size bigint DEFAULT 100,
    superseded boolean DEFAULT FALSE,
    shared boolean DEFAULT TRUE
)
RETURNS TABLE (
    memory_id bigint, ring text, content text, topics text[], person text, agent text, source jsonb,
    conversation text, speaker text, said_at timestamptz, created_at timestamptz, updated_at timestamptz,
    superseded_by bigint, valid_until timestamptz, candidate text, confidence real, strength double precision,
    recall_count bigint, last_recalled_at timestamptz
)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: application roles call no internal helper; tenant and scope are checked first. SQL: its result
-- columns reuse the names of its arguments.
AS $$
    SELECT cogmem._require_tenant(list_memories.tenant);
    SELECT cogmem._require_scope(list_memories.tenant, list_memories.person, list_memories.agent);
    SELECT r.*
    FROM cogmem._memory_rows(
        list_memories.tenant,
        cogmem._memory_page(list_memories.tenant, list_memories.ring, list_memories.person, list_memories.agent,
                            list_memories.since, list_memories.until, list_memories.after_id,
                            list_memories.page_size, list_memories.superseded, list_memories.shared)
    ) AS r
    ORDER BY r.memory_id DESC;
$$;
COMMENT ON FUNCTION cogmem.list_memories(
    text, text, text, text, timestamptz, timestamptz, bigint, bigint, boolean, boolean
) IS
'A page of the memories the scope sees (person, agent: sql/015-scopes.sql), newest first, of one ring (or '
'kind) if given, remembered from since until before until; after_id: the last memory_id of the previous '
'page; page_size 1 to 1000. superseded: the versions replaced too. shared => false: only what the call may '
'change (the person''s own; without a person, the tenant''s), not what others share with it. The same '
'columns as get_memory. Mem0: get_all; LangGraph: search (without a query).';

-- update: remember the new text in the old one's scope and ring (unless another is given), saying it
-- supersedes the old (the caller's verdict, sql/036-supersession.sql). If the text is another memory
-- already (the same text, or a near-duplicate), that one supersedes the old; if it is the old one's text,
-- nothing changes; an instruction that contradicts another memory is held as a conflict and the old stays.
CREATE OR REPLACE FUNCTION cogmem._update_memory(
    p_tenant text, p_memory_id bigint, p_content text, p_ring text, p_topics text[], p_embedding public.vector,
    p_source jsonb, p_person text, p_agent text
)
RETURNS TABLE (
    previous_id bigint, memory_id bigint, ring text, topics text[], action text, redactions text[],
    conflict_id bigint, conflicts_with bigint[], candidate text, excerpt_id bigint, suggestion text
)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_old cogmem.memories := cogmem._scoped_memory(p_tenant, p_memory_id, p_person, p_agent, 'update');
    v_new record;
BEGIN
    -- The scope is the old memory's: a source naming another person or agent would make it no version of it.
    SELECT r.* INTO v_new
    FROM cogmem.remember(p_tenant, p_content, coalesce(p_ring, v_old.ring::text), p_topics, p_embedding,
                         CASE WHEN jsonb_typeof(p_source) = 'object' THEN p_source - 'person' - 'agent'
                              ELSE p_source END,
                         person => v_old.person, agent => v_old.agent, supersedes => ARRAY[v_old.memory_id]) AS r;
    IF v_new.action = 'duplicate' AND v_new.memory_id <> v_old.memory_id THEN
        PERFORM cogmem._supersede(p_tenant, v_new.memory_id, ARRAY[v_old.memory_id], 'caller');
    END IF;
    RETURN QUERY SELECT v_old.memory_id, v_new.memory_id, v_new.ring, v_new.topics, v_new.action, v_new.redactions,
                        v_new.conflict_id, v_new.conflicts_with, v_new.candidate, v_new.excerpt_id, v_new.suggestion;
END;
$$;
COMMENT ON FUNCTION cogmem._update_memory(text, bigint, text, text, text[], public.vector, jsonb, text, text) IS
'update_memory''s work: remember the new text in the old memory''s scope with supersedes => the old one '
'(or let the memory it duplicates supersede it); the old id, then what remember did.';

CREATE OR REPLACE FUNCTION cogmem.update_memory(
    tenant text,
    memory_id bigint,
    content text,
    ring text DEFAULT NULL,
    topics text[] DEFAULT NULL,
    embedding public.vector DEFAULT NULL,
    source jsonb DEFAULT '{}',
    person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS TABLE (
    previous_id bigint, memory_id bigint, ring text, topics text[], action text, redactions text[],
    conflict_id bigint, conflicts_with bigint[], candidate text, excerpt_id bigint, suggestion text
)
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes memories and audit rows (through remember), which only the API's owner may; tenant
-- and scope are checked first. SQL: its result columns reuse the names of its arguments.
AS $$
    SELECT cogmem._require_tenant(update_memory.tenant);
    SELECT cogmem._require_scope(update_memory.tenant, update_memory.person, update_memory.agent);
    SELECT u.*
    FROM cogmem._update_memory(update_memory.tenant, update_memory.memory_id, update_memory.content,
                               update_memory.ring, update_memory.topics, update_memory.embedding,
                               update_memory.source, update_memory.person, update_memory.agent) AS u;
$$;
COMMENT ON FUNCTION cogmem.update_memory(text, bigint, text, text, text[], public.vector, jsonb, text, text) IS
'A new version of a memory of the caller''s own scope: remember(content, supersedes => memory_id) in the old '
'one''s scope and ring (ring, topics NULL: the old ring, topics detected); the old one stays for history, out '
'of recall. Returns the memory updated (previous_id), then what remember did: the new memory_id (action '
'created), or duplicate (the text is a memory already, which now supersedes the old; the same memory_id: the '
'old one''s text, nothing changed), or conflict (held, the old stays). Mem0: update; LangGraph: put.';

CREATE OR REPLACE FUNCTION cogmem.delete_memory(
    tenant text, memory_id bigint, person text DEFAULT NULL, agent text DEFAULT NULL, reason text DEFAULT NULL
)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it erases through cogmem.erase, which only administrators call; this is the application's way,
-- within its own scope: tenant and scope are checked first, then that the memory is the call's to change.
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(delete_memory.tenant);
    PERFORM cogmem._require_scope(delete_memory.tenant, delete_memory.person, delete_memory.agent);
    PERFORM cogmem._scoped_memory(delete_memory.tenant, delete_memory.memory_id, delete_memory.person,
                                  delete_memory.agent, 'delete');
    RETURN cogmem.erase(delete_memory.tenant, delete_memory.memory_id, coalesce(delete_memory.reason, 'delete_memory'));
END;
$$;
COMMENT ON FUNCTION cogmem.delete_memory(text, bigint, text, text, text) IS
'Erases a memory of the caller''s own scope through cogmem.erase (its text, vector, statistics and links; the '
'audit keeps an erased tombstone with the reason, delete_memory when none is given); true. no_data_found, '
'alike, for a missing memory and one outside the scope; insufficient_privilege for one the scope only sees. '
'Mem0: delete; LangGraph: delete.';

-- A memory's versions: the memories linked to it by superseded_by either way, transitively, in the scope
-- (supersession stays within one); and the newer versions erased since, which the links no longer name
-- (erasure sets superseded_by NULL) but the audit row that marked a version superseded does.
CREATE OR REPLACE FUNCTION cogmem._memory_versions(p_tenant text, p_memory_id bigint, p_person text, p_agent text)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    t        cogmem.tenants;
    v_person text := btrim(p_person);
    v_agent  text := btrim(p_agent);
    v_ids    bigint[];
    v_by     bigint[];
BEGIN
    PERFORM cogmem._scoped_memory(p_tenant, p_memory_id, p_person, p_agent, NULL);
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = p_tenant;
    v_ids := ARRAY(
        WITH RECURSIVE versions (id) AS (
            SELECT p_memory_id
            UNION
            SELECT n.id FROM versions AS v
            CROSS JOIN LATERAL (
                -- What it superseded, and what superseded it: each by its own index.
                SELECT m.memory_id FROM cogmem.memories AS m
                WHERE m.tenant = p_tenant AND m.superseded_by = v.id
                  AND cogmem.in_scope(m.person, m.agent, m.ring, v_person, v_agent, t)
                UNION ALL
                SELECT m.memory_id FROM cogmem.memories AS o
                INNER JOIN cogmem.memories AS m ON m.tenant = o.tenant AND m.memory_id = o.superseded_by
                WHERE o.tenant = p_tenant AND o.memory_id = v.id
                  AND cogmem.in_scope(m.person, m.agent, m.ring, v_person, v_agent, t)
            ) AS n (id)
        )
        SELECT v.id FROM versions AS v ORDER BY v.id
    );
    v_by := ARRAY(
        SELECT DISTINCT (l.detail ->> 'by')::bigint FROM cogmem.audit_log AS l
        WHERE l.tenant = p_tenant AND l.memory_id = ANY (v_ids) AND l.event IN ('superseded', 'possibly_superseded')
    );
    RETURN v_ids || ARRAY(
        SELECT b.id FROM unnest(v_by) AS b (id)
        WHERE b.id <> ALL (ARRAY(SELECT n.memory_id FROM cogmem.memories AS n
                                 WHERE n.tenant = p_tenant AND n.memory_id = ANY (v_by)))
        ORDER BY b.id
    );
END;
$$;
COMMENT ON FUNCTION cogmem._memory_versions(text, bigint, text, text) IS
'The ids of a memory''s versions within the caller''s scope (what it superseded and what superseded it, '
'transitively), then of the newer ones erased since (as the caller may read the audit trail); no_data_found '
'for a memory outside the scope.';

CREATE OR REPLACE FUNCTION cogmem.memory_history(
    tenant text, memory_id bigint, person text DEFAULT NULL, agent text DEFAULT NULL
)
RETURNS TABLE (
    kind text, memory_id bigint, at timestamptz, event text, content text, superseded_by bigint,
    valid_until timestamptz, actor text, detail jsonb, audit_id bigint
)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: application roles call no internal helper; tenant and scope are checked first. The audit rows
-- are read under the caller's row-level security: a grant narrowed to a person reads none of the trail
-- (sql/015-scopes.sql), and gets the versions alone. SQL: its result columns reuse the names of its arguments.
AS $$
    SELECT cogmem._require_tenant(memory_history.tenant);
    SELECT cogmem._require_scope(memory_history.tenant, memory_history.person, memory_history.agent);
    -- One row, read as a parameter by both halves: each finds its rows by index.
    WITH versions AS MATERIALIZED (
        SELECT cogmem._memory_versions(memory_history.tenant, memory_history.memory_id,
                                       memory_history.person, memory_history.agent) AS ids
    )

    SELECT 'version' AS kind, m.memory_id, m.created_at AS at,
           CASE WHEN m.valid_until IS NOT NULL THEN 'superseded'
                WHEN m.superseded_by IS NOT NULL THEN 'possibly_superseded' ELSE 'current' END AS event,
           m.content, m.superseded_by, m.valid_until, NULL AS actor,
           jsonb_build_object('ring', m.ring, 'said_at', m.said_at) AS detail, NULL::bigint AS audit_id
    FROM cogmem.memories AS m
    WHERE m.tenant = memory_history.tenant AND m.memory_id = ANY ((SELECT v.ids FROM versions AS v)::bigint[])
    UNION ALL
    SELECT 'event', h.memory_id, h.at, h.event, NULL, NULL, NULL, h.actor, h.detail, h.audit_id
    FROM cogmem.memory_history AS h
    WHERE h.tenant = memory_history.tenant AND h.memory_id = ANY ((SELECT v.ids FROM versions AS v)::bigint[])
    ORDER BY kind DESC, at ASC, audit_id ASC, memory_id ASC;
$$;
COMMENT ON FUNCTION cogmem.memory_history(text, bigint, text, text) IS
'A memory of the caller''s scope and its versions: kind version, one row per version (what it superseded and '
'what superseded it, with event current, superseded or possibly_superseded, valid_until and its text), oldest '
'first; then kind event, the audit trail of every version in time order (created, rehearsed, superseded, '
'the night''s decisions; a newer version''s erasure), none for a grant narrowed to a person. no_data_found, alike, for a missing '
'memory and one outside the scope. Mem0: history. (cogmem.memory_history, the view, is the auditors'' '
'trail of every memory.)';
