-- Sessions, episodes and briefings: pick up where the last session ended.
--
-- cogmem.start_session(tenant, project) opens a session; the agent passes its id as the conversation of
-- recall() and observe(). cogmem.end_session(session_id, summary, ...) archives it as an immutable episode
-- (what was done, the phase, decisions, open items, next steps, the memories it recalled or created) and
-- stores the durable facts and proven procedures it names through remember(), the normal path.
-- cogmem.briefing(tenant, project) is the reload protocol: core identity, last session, phase, open
-- items, next steps, key decisions, applicable procedures, sessions left open, within a token budget;
-- briefing_text() is
-- the same as a block for a prompt. cogmem.analyze(tenant, topic, since, until) is the slow, thorough
-- path: every episode, memory, learning and conflict of a topic in a period, oldest first, no budget.

CREATE OR REPLACE TRIGGER episodes_immutable
BEFORE UPDATE ON cogmem.episodes
FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();

DROP FUNCTION IF EXISTS cogmem.start_session(text, text, text);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem.start_session(
    tenant text, project text DEFAULT NULL, goal text DEFAULT NULL, person text DEFAULT NULL, agent text DEFAULT NULL
)
RETURNS uuid
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes sessions and the audit, which only the API's owner may; tenant and scope checked first.
AS $$
#variable_conflict use_column
DECLARE
    v_session uuid;
BEGIN
    PERFORM cogmem._require_tenant(start_session.tenant);
    PERFORM cogmem._require_scope(start_session.tenant, start_session.person, start_session.agent);
    IF length(start_session.goal) > 1000 OR length(start_session.project) > 200 THEN
        RAISE EXCEPTION 'a session goal has at most 1000 characters and a project name 200'
            USING ERRCODE = 'string_data_right_truncation', HINT = 'Name the project and the goal briefly.';
    END IF;
    INSERT INTO cogmem.sessions AS s (session_id, tenant, project, goal, person, agent)
    VALUES (cogmem._keyed_uuid(start_session.tenant), start_session.tenant, nullif(btrim(start_session.project), ''),
            cogmem._clean_text(start_session.goal), btrim(start_session.person), btrim(start_session.agent))
    RETURNING s.session_id INTO v_session;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (start_session.tenant, 'lifecycle', 'session_started',
            jsonb_build_object('session_id', v_session));  -- no project name: it may name a person
    RETURN v_session;
END;
$$;
COMMENT ON FUNCTION cogmem.start_session(text, text, text, text, text) IS
'Opens a working session (optionally for a project, a person and an agent) and returns its id: pass it as '
'the conversation of recall() and observe(), then end it with end_session(); its episode and the memories '
'it stores keep the session''s scope.';

-- Longer than a screen: the checks of a summary and its lists, the memories it stores through remember,
-- what the session touched, and the immutable episode, in one transaction.
CREATE OR REPLACE FUNCTION cogmem.end_session(
    session_id uuid,
    summary text,
    decisions text[] DEFAULT '{}',
    open_items text[] DEFAULT '{}',
    next_steps text[] DEFAULT '{}',
    facts text[] DEFAULT '{}',
    procedures text[] DEFAULT '{}',
    phase text DEFAULT NULL,
    memory_ids bigint[] DEFAULT '{}'
)
RETURNS TABLE (episode uuid, touched bigint[], remembered bigint[])
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_session    cogmem.sessions;
    v_language   regconfig;
    v_summary    text;
    v_source     jsonb;
    v_remembered bigint[] := '{}';
    v_touched    bigint[];
    v_id         bigint;
    v_item       text;
    v_max_chars  integer;
    v_longest    integer;
BEGIN
    SELECT * INTO v_session FROM cogmem.sessions AS s WHERE s.session_id = end_session.session_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown session %', coalesce(end_session.session_id::text, 'NULL')
            USING ERRCODE = 'no_data_found', HINT = 'Pass the id start_session() returned.';
    END IF;
    IF end_session.summary IS NULL OR btrim(end_session.summary) = '' THEN
        RAISE EXCEPTION 'summary must not be empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Say what was done in the session: the next one starts from it.';
    END IF;
    v_language := cogmem._require_tenant(v_session.tenant);
    -- An episode is read back into prompts: each of its texts obeys the tenant's limit for a memory.
    SELECT t.max_content_chars INTO v_max_chars FROM cogmem.tenants AS t WHERE t.tenant = v_session.tenant;
    SELECT max(length(x)) INTO v_longest
    FROM unnest(ARRAY[end_session.summary, end_session.phase] || end_session.decisions || end_session.open_items
                || end_session.next_steps) AS x;
    IF v_longest > v_max_chars THEN
        RAISE EXCEPTION 'a text of this episode has % characters, the limit for tenant "%" is %',
            v_longest, v_session.tenant, v_max_chars
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Summarise: the briefing reads episodes back into prompts (or raise cogmem.tenants.max_content_chars).';
    END IF;
    PERFORM cogmem._lock_tenant(v_session.tenant, false);
    SELECT * INTO v_session FROM cogmem.sessions AS s
    WHERE s.tenant = v_session.tenant AND s.session_id = end_session.session_id
    FOR UPDATE;
    IF v_session.ended_at IS NOT NULL THEN
        RAISE EXCEPTION 'session % already ended at %', v_session.session_id, v_session.ended_at
            USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Episodes are immutable; start a new session.';
    END IF;
    v_summary := (cogmem.redact(btrim(end_session.summary))).redacted;

    -- Durable facts and proven procedures become memories through the normal path.
    v_source := cogmem._with_said(jsonb_build_object('via', 'end_session', 'session_id', v_session.session_id,
                                                     'project', v_session.project),
                                  NULL, NULL, NULL, v_session.person, v_session.agent);
    FOREACH v_item IN ARRAY cogmem._clean_list(end_session.facts) LOOP
        SELECT r.memory_id INTO v_id FROM cogmem._remember(v_session.tenant, v_item, NULL, NULL, NULL, v_source, NULL) AS r;
        v_remembered := v_remembered || v_id;
    END LOOP;
    FOREACH v_item IN ARRAY cogmem._clean_list(end_session.procedures) LOOP
        SELECT r.memory_id INTO v_id
        FROM cogmem._remember(v_session.tenant, v_item, 'procedures', NULL, NULL, v_source, NULL) AS r;
        v_remembered := v_remembered || v_id;
    END LOOP;
    v_remembered := array_remove(v_remembered, NULL);  -- a fact held as a conflict is not a memory yet

    -- Touched: recalled in the session, created from its turns or at its end, or named by the caller.
    SELECT coalesce(array_agg(DISTINCT m.memory_id ORDER BY m.memory_id), '{}') INTO v_touched
    FROM cogmem.memories AS m
    WHERE m.tenant = v_session.tenant
      AND m.memory_id IN (
          SELECT unnest(r.item_memory_ids) FROM cogmem.recalls AS r
          WHERE r.tenant = v_session.tenant AND r.conversation = v_session.session_id::text
          UNION ALL
          SELECT t.memory_id FROM cogmem.sensory_turns AS t
          WHERE t.tenant = v_session.tenant AND t.conversation = v_session.session_id::text
          UNION ALL
          SELECT unnest(v_remembered || coalesce(end_session.memory_ids, '{}'))
      );

    INSERT INTO cogmem.episodes (tenant, session_id, project, phase, summary, decisions, open_items, next_steps,
                                 memory_ids, topics, started_at, ended_at, person, agent)
    VALUES (v_session.tenant, v_session.session_id, v_session.project,
            cogmem._clean_text(end_session.phase), v_summary,
            cogmem._clean_list(end_session.decisions), cogmem._clean_list(end_session.open_items),
            cogmem._clean_list(end_session.next_steps), v_touched,
            cogmem._detect_topics(v_session.tenant,
                                  concat_ws(' ', v_summary, array_to_string(end_session.decisions, ' '),
                                            array_to_string(end_session.open_items, ' ')), v_language),
            v_session.started_at, now(), v_session.person, v_session.agent);
    UPDATE cogmem.sessions AS s SET ended_at = now()
    WHERE s.tenant = v_session.tenant AND s.session_id = v_session.session_id;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (v_session.tenant, 'lifecycle', 'session_ended',
            jsonb_build_object('session_id', v_session.session_id, 'touched', to_jsonb(v_touched),
                               'remembered', to_jsonb(v_remembered)));
    RETURN QUERY SELECT v_session.session_id, v_touched, v_remembered;
END;
$$;
COMMENT ON FUNCTION cogmem.end_session(uuid, text, text[], text[], text[], text[], text[], text, bigint[]) IS
'Ends a session and archives it as an immutable episode; facts and procedures become memories through '
'remember(). Returns the episode id (the session id), the memories it touched and those it stored.';

-- The same with the tenant named first: a caller bound to one tenant (the MCP server, a router) cannot end
-- a session of another tenant its login may reach. Definer: the check reads cogmem.sessions.
CREATE OR REPLACE FUNCTION cogmem.end_session(
    tenant text,
    session_id uuid,
    summary text,
    decisions text[] DEFAULT '{}',
    open_items text[] DEFAULT '{}',
    next_steps text[] DEFAULT '{}',
    facts text[] DEFAULT '{}',
    procedures text[] DEFAULT '{}',
    phase text DEFAULT NULL,
    memory_ids bigint[] DEFAULT '{}'
)
RETURNS TABLE (episode uuid, touched bigint[], remembered bigint[])
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(end_session.tenant);
    IF NOT EXISTS (SELECT FROM cogmem.sessions AS s
                   WHERE s.tenant = end_session.tenant AND s.session_id = end_session.session_id) THEN
        RAISE EXCEPTION 'unknown session % in tenant "%"', coalesce(end_session.session_id::text, 'NULL'),
            end_session.tenant
            USING ERRCODE = 'no_data_found', HINT = 'Pass the id start_session() returned for this tenant.';
    END IF;
    RETURN QUERY SELECT * FROM cogmem.end_session(end_session.session_id, end_session.summary, end_session.decisions,
                                                  end_session.open_items, end_session.next_steps, end_session.facts,
                                                  end_session.procedures, end_session.phase, end_session.memory_ids);
END;
$$;
COMMENT ON FUNCTION cogmem.end_session(text, uuid, text, text[], text[], text[], text[], text[], text, bigint[]) IS
'end_session(session_id, ...) for a session of the named tenant; another tenant''s session is unknown.';

-- budget was integer before 0027: bigint takes what drivers send for a large number (sql/070-recall.sql).
DROP FUNCTION IF EXISTS cogmem.briefing_text(text, text, integer);
DROP FUNCTION IF EXISTS cogmem.briefing(text, text, integer);
DROP FUNCTION IF EXISTS cogmem.briefing_text(text, text, bigint);  -- before 0035: no scope
DROP FUNCTION IF EXISTS cogmem.briefing(text, text, bigint);
-- Longer than a screen: its sections are one statement, then the budget is filled in their order.
CREATE OR REPLACE FUNCTION cogmem.briefing(
    tenant text, project text DEFAULT NULL, budget bigint DEFAULT 800, person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS TABLE (section text, content text, at timestamptz, tokens integer)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it reads episodes, sessions and memories for the caller's tenant and scope, checked first.
AS $$
#variable_conflict use_column
DECLARE
    v_tenant  text := briefing.tenant;
    v_project text := nullif(btrim(briefing.project), '');
    v_person  text := btrim(briefing.person);
    v_agent   text := btrim(briefing.agent);
    t         cogmem.tenants;
    v_last    cogmem.episodes;
    v_used    integer := 0;
    v_line    record;
BEGIN
    PERFORM cogmem._require_tenant(v_tenant);
    PERFORM cogmem._require_scope(v_tenant, v_person, v_agent);
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = v_tenant;
    IF briefing.budget IS NULL OR briefing.budget <= 0 THEN
        RAISE EXCEPTION 'budget must be a positive number of tokens, got %', coalesce(briefing.budget::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The default is 800 tokens.';
    END IF;
    -- The scope's episodes and memories only (sql/015-scopes.sql), as recall sees them.
    SELECT * INTO v_last FROM cogmem.episodes AS e
    WHERE e.tenant = v_tenant AND (v_project IS NULL OR e.project = v_project)
      AND cogmem.in_scope(e.person, e.agent, NULL, v_person, v_agent, t)
    ORDER BY e.ended_at DESC LIMIT 1;

    FOR v_line IN
    WITH recent AS (
        SELECT e.* FROM cogmem.episodes AS e
        WHERE e.tenant = v_tenant AND (v_project IS NULL OR e.project = v_project)
          AND cogmem.in_scope(e.person, e.agent, NULL, v_person, v_agent, t)
        ORDER BY e.ended_at DESC LIMIT 5
    ),
    lines AS (
        -- Who the agent is and for whom (sql/055-identity.sql), first.
        (SELECT 0 AS part, 0::bigint AS n, 'core' AS section, cogmem._core_text(c) AS content, c.set_at AS at
         FROM cogmem.core_identity AS c WHERE c.tenant = v_tenant ORDER BY c.version DESC LIMIT 1)
        UNION ALL
        SELECT 1, 0, 'last_session', v_last.summary, v_last.ended_at
        WHERE v_last.summary IS NOT NULL
        UNION ALL
        SELECT 2, 0, 'phase', v_last.phase, v_last.ended_at WHERE v_last.phase IS NOT NULL
        UNION ALL
        SELECT 3, i.n, 'open_items', i.item, v_last.ended_at FROM unnest(v_last.open_items) WITH ORDINALITY AS i (item, n)
        UNION ALL
        SELECT 4, i.n, 'next_steps', i.item, v_last.ended_at FROM unnest(v_last.next_steps) WITH ORDINALITY AS i (item, n)
        UNION ALL
        -- Key decisions of the last five sessions, newest first.
        SELECT 5, row_number() OVER (ORDER BY r.ended_at DESC, d.n), 'decisions', d.item, r.ended_at
        FROM recent AS r, unnest(r.decisions) WITH ORDINALITY AS d (item, n)
        UNION ALL
        -- Procedures that apply: touched by those sessions, or on their topics; the most trusted first.
        SELECT 6, row_number() OVER (ORDER BY s.confidence DESC, m.memory_id), 'procedures', m.content, m.created_at
        FROM cogmem.memories AS m
        JOIN cogmem.memory_stats AS s ON s.tenant = m.tenant AND s.memory_id = m.memory_id
        WHERE m.tenant = v_tenant AND m.ring = 'procedures'
          AND cogmem.in_scope(m.person, m.agent, m.ring, v_person, v_agent, t)
          AND (m.memory_id IN (SELECT unnest(r.memory_ids) FROM recent AS r)
               OR m.topics && ARRAY(SELECT unnest(r.topics) FROM recent AS r))
        UNION ALL
        SELECT 7, row_number() OVER (ORDER BY o.started_at), 'open_sessions',
               format('session %s started %s and has not ended%s', o.session_id,
                      to_char(o.started_at, 'YYYY-MM-DD HH24:MI'), ': ' || o.goal),
               o.started_at
        FROM cogmem.sessions AS o
        WHERE o.tenant = v_tenant AND o.ended_at IS NULL AND (v_project IS NULL OR o.project = v_project)
          AND cogmem.in_scope(o.person, o.agent, NULL, v_person, v_agent, t)
    ),
    sized AS (
        SELECT l.*, greatest(1, ceil(length(l.content) / 4.0))::integer AS tokens FROM lines AS l
    )
    SELECT z.* FROM sized AS z ORDER BY z.part, z.n
    LOOP
        -- In order, each line that still fits the budget: a long one is skipped, shorter ones follow.
        IF v_used + v_line.tokens <= briefing.budget THEN
            v_used := v_used + v_line.tokens;
            section := v_line.section;
            content := v_line.content;
            at := v_line.at;
            tokens := v_line.tokens;
            RETURN NEXT;
        END IF;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION cogmem.briefing(text, text, bigint, text, text) IS
'The reload protocol: core identity, last session, phase, open items, next steps, key decisions (last '
'five sessions), applicable procedures and sessions left open, in that order, within a token budget; of '
'the scope of person and agent (never another person''s sessions).';

CREATE OR REPLACE FUNCTION cogmem.briefing_text(
    tenant text, project text DEFAULT NULL, budget bigint DEFAULT 800, person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS text
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT string_agg(g.block, E'\n\n' ORDER BY g.first)
        FROM (
            SELECT min(b.ord) AS first,
                   '## ' || CASE b.section
                                WHEN 'core' THEN 'Core identity'
                                WHEN 'last_session' THEN 'Last session (ended ' || to_char(max(b.at), 'YYYY-MM-DD HH24:MI') || ')'
                                WHEN 'phase' THEN 'Current phase'
                                WHEN 'open_items' THEN 'Open items'
                                WHEN 'next_steps' THEN 'Next steps'
                                WHEN 'decisions' THEN 'Key decisions'
                                WHEN 'procedures' THEN 'Procedures'
                                ELSE 'Sessions left open'
                            END || E'\n'
                   || string_agg(CASE WHEN b.section IN ('core', 'last_session', 'phase') THEN b.content
                                      ELSE '- ' || b.content END,
                                 E'\n' ORDER BY b.ord) AS block
            FROM cogmem.briefing($1, $2, $3, $4, $5) WITH ORDINALITY AS b (section, content, at, tokens, ord)
            GROUP BY b.section
        ) AS g
    );
END;
$$;
COMMENT ON FUNCTION cogmem.briefing_text(text, text, bigint, text, text) IS
'cogmem.briefing() as one Markdown block for a prompt (NULL when there is nothing to brief).';

CREATE OR REPLACE FUNCTION cogmem.analyze(
    tenant text, topic text, since timestamptz DEFAULT '-infinity', until timestamptz DEFAULT 'infinity'
)
RETURNS TABLE (kind text, ref text, at timestamptz, content text, topics text[], detail jsonb)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    -- By position: ANALYZE is a reserved word, so the parameters cannot be qualified by the function name.
    v_tenant   text := $1;
    v_since    timestamptz := $3;
    v_until    timestamptz := $4;
    v_language regconfig;
    v_topic    text;
    v_query    tsquery;
BEGIN
    v_language := cogmem._require_tenant(v_tenant);
    IF $2 IS NULL OR btrim($2) = '' THEN
        RAISE EXCEPTION 'topic must not be empty'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A topic of the taxonomy (''server'') or words to look for (''Globex'').';
    END IF;
    v_topic := lower(btrim($2));
    v_query := plainto_tsquery(v_language, $2);
    RETURN QUERY
    SELECT x.kind, x.ref, x.at, x.content, x.topics, x.detail
    FROM (
        SELECT 'episode' AS kind, e.session_id::text AS ref, e.ended_at AS at, e.summary AS content, e.topics,
               jsonb_build_object('project', e.project, 'phase', e.phase, 'decisions', to_jsonb(e.decisions),
                                  'open_items', to_jsonb(e.open_items), 'next_steps', to_jsonb(e.next_steps),
                                  'memory_ids', to_jsonb(e.memory_ids), 'started_at', e.started_at) AS detail
        FROM cogmem.episodes AS e
        WHERE e.tenant = v_tenant AND e.ended_at >= v_since AND e.ended_at < v_until
          AND (v_topic = ANY (e.topics)
               OR to_tsvector(v_language, concat_ws(' ', e.project, e.summary, array_to_string(e.decisions, ' '),
                                                    array_to_string(e.open_items, ' '))) @@ v_query)
        UNION ALL
        SELECT CASE WHEN m.ring = 'shocks' THEN 'incident' ELSE 'memory' END, m.memory_id::text, m.created_at,
               m.content, m.topics,
               jsonb_build_object('ring', m.ring, 'confidence', s.confidence, 'recalls', s.recall_count,
                                  'success_score', s.success_score, 'learning', l.memory_id IS NOT NULL,
                                  'errors', l.errors)
        FROM cogmem.memories AS m
        JOIN cogmem.memory_overview AS s ON s.tenant = m.tenant AND s.memory_id = m.memory_id  -- pending counts too
        LEFT JOIN cogmem.learnings AS l ON l.tenant = m.tenant AND l.memory_id = m.memory_id
        WHERE m.tenant = v_tenant AND m.created_at >= v_since AND m.created_at < v_until
          AND (v_topic = ANY (m.topics) OR m.search @@ v_query)
        UNION ALL
        SELECT 'conflict', c.conflict_id::text, c.opened_at, c.content, c.topics,
               jsonb_build_object('status', c.status, 'conflicts_with', to_jsonb(c.conflicts_with),
                                  'resolved_at', c.resolved_at)
        FROM cogmem.conflicts AS c
        WHERE c.tenant = v_tenant AND c.opened_at >= v_since AND c.opened_at < v_until
          AND (v_topic = ANY (c.topics) OR to_tsvector(v_language, c.content) @@ v_query)
    ) AS x
    ORDER BY x.at, x.kind, x.ref;
END;
$$;
COMMENT ON FUNCTION cogmem.analyze(text, text, timestamptz, timestamptz) IS
'The slow, thorough path: every episode, memory (incidents and learnings marked) and conflict of a topic '
'(in the taxonomy, or words in the text) in [since, until), oldest first, without a budget.';
