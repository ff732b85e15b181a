-- One tenant with a million memories (issue 50, docs/scaling.md "One large tenant").
--
-- Recall (sql/070-recall.sql) reads a tenant's memories in one pass, which is the fastest way while a tenant
-- holds thousands and costs seconds at a million. A tenant above a size gets two indexes of its own, partial
-- on its name: HNSW over its vectors and GIN over its words. Recall then reads only its *reach*: the
-- memories those indexes, the never-cut rings, the candidates and the recent topics bring, with their
-- conversation neighbours, and ranks them exactly as before. Below the size, or before its indexes exist,
-- nothing changes.
--
-- The indexes are made by an administrator or a scheduler (`cogmem index-tenants`), outside any
-- transaction (CREATE INDEX CONCURRENTLY), never by recall or remember: an index build on a busy table is
-- an operator's decision.

-- pgvector's library defines its settings (hnsw.*) when it loads: a function's SET of one before that is of
-- an unknown setting, which only a superuser may write. A vector read loads it.
SELECT '[0]'::public.vector AS loads_pgvector;

-- The default never-cut rings, as the predicate of a large tenant's index of its rules and incidents: they
-- are a small share of its memories, which a filtered walk of the whole graph would pass over at length.
CREATE OR REPLACE FUNCTION cogmem._rules_predicate()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN 'ring = ANY (''{dos_and_donts,shocks}''::cogmem.ring[])';
COMMENT ON FUNCTION cogmem._rules_predicate() IS
'The condition of a large tenant''s index of its rules and incidents, written alike in the index and the query.';

-- One name per tenant and kind, whatever the tenant's name holds (a hash: names are identifiers of 63 bytes).
CREATE OR REPLACE FUNCTION cogmem._tenant_index_name(p_tenant text, p_kind text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN 'memories_' || p_kind || '_' || left(md5(p_tenant), 16);
COMMENT ON FUNCTION cogmem._tenant_index_name(text, text) IS
'The name of a large tenant''s own index of cogmem.memories: kind ''vectors'' (HNSW), ''rules'' (HNSW over '
'its rules and incidents) or ''words'' (GIN).';

-- All three indexes, built and valid (a concurrent build that failed leaves an invalid one, which serves nothing).
CREATE OR REPLACE FUNCTION cogmem._tenant_indexed(p_tenant text)
RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT count(*) = 3 FROM pg_catalog.pg_index AS i
            WHERE i.indisvalid AND i.indexrelid IN (
                pg_catalog.to_regclass('cogmem.' || cogmem._tenant_index_name(p_tenant, 'vectors')),
                pg_catalog.to_regclass('cogmem.' || cogmem._tenant_index_name(p_tenant, 'rules')),
                pg_catalog.to_regclass('cogmem.' || cogmem._tenant_index_name(p_tenant, 'words'))));
END;
$$;
COMMENT ON FUNCTION cogmem._tenant_indexed(text) IS
'Whether the tenant has its three own valid indexes, so that recall reads its reach, not all of it.';

-- The turns said just before and just after each of the given memories that is a turn of a conversation.
CREATE OR REPLACE FUNCTION cogmem._neighbours(p_tenant text, p_ids bigint[])
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
BEGIN
    RETURN ARRAY(
        SELECT n.memory_id
        FROM cogmem.memories AS m
        CROSS JOIN LATERAL (
            (SELECT p.memory_id FROM cogmem.memories AS p
             WHERE p.tenant = m.tenant AND p.conversation = m.conversation
               AND (p.said_at, p.memory_id) < (m.said_at, m.memory_id)
             ORDER BY p.said_at DESC, p.memory_id DESC LIMIT 1)
            UNION ALL
            (SELECT p.memory_id FROM cogmem.memories AS p
             WHERE p.tenant = m.tenant AND p.conversation = m.conversation
               AND (p.said_at, p.memory_id) > (m.said_at, m.memory_id)
             ORDER BY p.said_at, p.memory_id LIMIT 1)
        ) AS n
        WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_ids) AND m.conversation IS NOT NULL);
END;
$$;
COMMENT ON FUNCTION cogmem._neighbours(text, bigint[]) IS
'The turns said just before and after each given memory that is a turn of a conversation (its window).';

-- What replaced each of the given memories that is superseded (sql/036-supersession.sql).
CREATE OR REPLACE FUNCTION cogmem._heirs(p_tenant text, p_ids bigint[])
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
BEGIN
    RETURN ARRAY(SELECT m.superseded_by FROM cogmem.memories AS m
                 WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_ids) AND m.valid_until IS NOT NULL
                   AND m.superseded_by IS NOT NULL);
END;
$$;
COMMENT ON FUNCTION cogmem._heirs(text, bigint[]) IS
'The memories that superseded the given ones, for those superseded (recall reads a superseded memory for its heir).';

-- The memories as a large tenant's own indexes find them. Row-level security would forbid those indexes:
-- its policies come first, and the full-text match (like most operators) is not leakproof, so the planner
-- may not evaluate it before them, in an index or elsewhere. This view runs with its owner's rights (the
-- tables' owner, whom the policies do not bind) and keeps the reader's tenants itself, as the aggregate
-- views do (sql/101-audit-views.sql). Only cogmem_owner reads it, inside the API, and only ids leave it:
-- recall reads the rows themselves again under the policies (sql/070-recall.sql, signals).
CREATE OR REPLACE VIEW cogmem._memory_lookup AS
SELECT
    m.tenant,
    m.memory_id,
    m.search,
    m.embedding,
    m.ring,
    m.person,
    m.agent,
    m.valid_until,
    m.candidate_ring,
    m.candidate_p,
    m.topics,
    m.created_at,
    m.superseded_by
FROM cogmem.memories AS m
WHERE (SELECT cogmem.reaches_every_tenant()) OR m.tenant IN (SELECT unnest(cogmem.reachable_tenants()));
COMMENT ON VIEW cogmem._memory_lookup IS
'Internal: the memories of the reader''s tenants, with the columns a large tenant''s own indexes serve, read '
'without the row policies that would forbid those indexes. cogmem_owner only; ids only leave it.';

-- remember's close memories in a large tenant (sql/035-contradiction.sql): the nearest of the same scope
-- through the tenant's own index, within the cosine its sign-bit radius stands for, instead of a scan of
-- every memory's sign bits. Forty nearest are more than a near-duplicate, a conflict or a replaced fact ever
-- needs, and pgvector's default search list (40) finds them, at a quarter of the cost of a hundred through a
-- list of 200 (docs/scaling.md).
CREATE OR REPLACE FUNCTION cogmem._nearest_within(
    p_tenant text, p_embedding public.vector, p_similarity double precision, p_person text, p_agent text
)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
-- Sorting off, so that the nearest are read in order from the index: the planner, which misjudges how
-- few memories share a scope, sorted the whole tenant instead at a million memories (3.7 s a call). The
-- costs the settings add would then buy a JIT compilation (0.8 s) for a query of milliseconds.
SET enable_sort = off
SET jit = off
SET "hnsw.ef_search" = 40
SET "hnsw.iterative_scan" = relaxed_order
AS $$
DECLARE
    v_found bigint[];
BEGIN
    -- The tenant as a literal, so that the planner matches its partial index.
    EXECUTE format('SELECT array_agg(x.memory_id) FROM (SELECT m.memory_id, m.embedding OPERATOR(public.<=>) $1 AS d '
                   'FROM cogmem._memory_lookup AS m WHERE m.tenant = %L AND m.embedding IS NOT NULL '
                   'AND cogmem._same_scope(m.person, m.agent, $2, $3) '
                   'ORDER BY m.embedding OPERATOR(public.<=>) $1 LIMIT 40) AS x WHERE 1 - x.d >= $4', p_tenant)
    INTO v_found USING p_embedding, p_person, p_agent, p_similarity;
    RETURN v_found;
END;
$$;
COMMENT ON FUNCTION cogmem._nearest_within(text, public.vector, double precision, text, text) IS
'A large tenant''s memories of the given scope nearest to a vector (at most 40) with at least the given '
'cosine, through the tenant''s own HNSW index; NULL when none.';

-- A large tenant's reach: the memories that recall ranks (sql/070-recall.sql), found through the tenant's own
-- indexes, plus how many memories hold each word of the message (for its rarity). No row when the tenant
-- has no indexes: recall then reads the whole tenant. Statements are built with the tenant as a literal, so
-- that the planner matches the partial indexes; every bound is a number of rows, never a share of the tenant.
-- Longer than a screen for its bounds: each signal's statement is a few lines, and they are read together.
CREATE OR REPLACE FUNCTION cogmem._recall_reach(
    t cogmem.tenants, p_protected cogmem.ring[], p_topics text[], p_embedding public.vector, p_lexemes text[],
    p_person text, p_agent text, p_history boolean
)
RETURNS TABLE (reach bigint[], words text[], holding bigint[], memories double precision)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET enable_bitmapscan = on
-- The nearest come in order from the graph; the planner, misled by the scope's filter, would sort every
-- memory of the never-cut rings by distance instead (the few sorts left here have no other way).
SET enable_sort = off
-- The graph is asked for the rows it must find, and walks on while the scope filters rows out.
SET "hnsw.ef_search" = 200
SET "hnsw.iterative_scan" = relaxed_order
SET jit = off
AS $$
DECLARE
    c_nearest   CONSTANT integer := 200;   -- twice the 100 that recall ranks by cosine
    c_whole     CONSTANT integer := 500;   -- never-cut rings up to this size come whole, as for any tenant
    c_counted   CONSTANT integer := 1000;  -- holders of a word counted up to here, unless the statistics know it
    c_worded    CONSTANT integer := 1000;  -- holders of the message's rarest words, in all
    c_recent    CONSTANT integer := 5000;  -- topics are matched among the most recent memories
    c_topical   CONSTANT integer := 200;   -- the best of those kept
    c_proposed  CONSTANT integer := 200;   -- the most probable unconfirmed candidates
    -- What recall's own pass keeps: the tenant, the caller's scope, the present unless asked about the past
    -- (and a superseded memory with an heir: recall reads it for its heir, sql/070-recall.sql, signals).
    v_visible   text := format('m.tenant = %L AND cogmem.in_scope(m.person, m.agent, m.ring, $2, $3, $4) '
                               'AND (m.valid_until IS NULL OR $5 OR m.superseded_by IS NOT NULL)', t.tenant);
    v_found     bigint[];
    v_word      text;
    v_count     bigint;
BEGIN
    IF NOT cogmem._tenant_indexed(t.tenant) THEN
        RETURN;
    END IF;
    reach := '{}';
    -- The tenant's size as its vector index last counted it (a build, VACUUM or ANALYZE): rarity needs its
    -- order of magnitude, and a count would read every row.
    memories := greatest(1, (SELECT c.reltuples FROM pg_class AS c
                             WHERE c.oid = to_regclass('cogmem.' || cogmem._tenant_index_name(t.tenant, 'vectors'))));
    -- The never-cut rings whole while they are small enough to inject whole anyway; else ranked by meaning.
    -- Counted in the index on (tenant, ring) alone, whatever the scope: a scope sees fewer, never more.
    EXECUTE format('SELECT count(*) FROM (SELECT FROM cogmem._memory_lookup AS m WHERE m.tenant = %L '
                   'AND m.ring = ANY ($1) LIMIT %s) AS x', t.tenant, c_whole + 1)
    INTO v_count USING p_protected;
    IF v_count <= c_whole THEN
        EXECUTE format('SELECT ARRAY(SELECT m.memory_id FROM cogmem._memory_lookup AS m WHERE %s AND m.ring = ANY ($1))',
                       v_visible)
        INTO reach USING p_protected, p_person, p_agent, t, p_history;
    ELSIF p_embedding IS NOT NULL THEN
        -- The rules' own index serves the default never-cut rings; a tenant that protects others walks the
        -- whole graph for them.
        EXECUTE format('SELECT ARRAY(SELECT m.memory_id FROM cogmem._memory_lookup AS m WHERE %s AND m.ring = ANY ($1) '
                       'AND %s AND m.embedding IS NOT NULL ORDER BY m.embedding OPERATOR(public.<=>) $6 LIMIT %s)',
                       v_visible, CASE WHEN p_protected <@ '{dos_and_donts,shocks}' THEN cogmem._rules_predicate()
                                       ELSE 'true' END, c_nearest)
        INTO v_found USING p_protected, p_person, p_agent, t, p_history, p_embedding;
        reach := v_found;
    END IF;
    IF p_embedding IS NOT NULL THEN
        EXECUTE format('SELECT ARRAY(SELECT m.memory_id FROM cogmem._memory_lookup AS m WHERE %s AND m.embedding IS NOT NULL '
                       'ORDER BY m.embedding OPERATOR(public.<=>) $1 LIMIT %s)', v_visible, c_nearest)
        INTO v_found USING p_embedding, p_person, p_agent, t, p_history;
        reach := reach || v_found;
    END IF;
    EXECUTE format('SELECT ARRAY(SELECT m.memory_id FROM cogmem._memory_lookup AS m WHERE %s AND m.candidate_ring IS NOT NULL '
                   'ORDER BY m.candidate_p DESC NULLS LAST, m.memory_id LIMIT %s)', v_visible, c_proposed)
    INTO v_found USING NULL::text, p_person, p_agent, t, p_history;
    reach := reach || v_found;
    -- How many memories hold each word, then the holders of the rarest words, within a bound for all of
    -- them: the rare words rank a memory most.
    words := '{}';
    holding := '{}';
    FOREACH v_word IN ARRAY p_lexemes LOOP
        -- A frequent word's share of the table, from ANALYZE's statistics, stands for its share of the
        -- tenant; the others are counted, up to a bound.
        v_count := (SELECT round(e.freq * memories) FROM pg_stats AS s
                    CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e (word, freq)
                    WHERE s.schemaname = 'cogmem' AND s.tablename = 'memories' AND s.attname = 'search'
                      AND e.word = v_word LIMIT 1);
        IF v_count IS NULL OR v_count < c_counted THEN
            EXECUTE format('SELECT count(*) FROM (SELECT FROM cogmem._memory_lookup AS m WHERE m.tenant = %L '
                           'AND m.search @@ $1 LIMIT %s) AS x', t.tenant, c_counted)
            INTO v_count USING cogmem._or_query(ARRAY[v_word]);
        END IF;
        words := words || v_word;
        holding := holding || v_count;
    END LOOP;
    v_count := 0;
    FOR v_word IN SELECT w.word FROM unnest(words, holding) AS w (word, holding)
                  WHERE w.holding > 0 ORDER BY w.holding, w.word LOOP
        EXIT WHEN v_count >= c_worded;
        EXECUTE format('SELECT ARRAY(SELECT m.memory_id FROM cogmem._memory_lookup AS m WHERE m.tenant = %L AND m.search @@ $1 '
                       'LIMIT %s)', t.tenant, c_worded - v_count)
        INTO v_found USING cogmem._or_query(ARRAY[v_word]);
        reach := reach || v_found;
        v_count := v_count + cardinality(v_found);
    END LOOP;
    -- Topics among the most recent memories (from the covering index alone: recall's pass applies the
    -- scope), in recall's order: the most topics shared, then the newest (sql/070-recall.sql, pool).
    IF cardinality(p_topics) > 0 THEN
        EXECUTE format('SELECT ARRAY(SELECT x.memory_id FROM (SELECT m.memory_id, m.topics, m.created_at '
                       'FROM cogmem._memory_lookup AS m WHERE m.tenant = %L ORDER BY m.memory_id DESC LIMIT %s) AS x '
                       'WHERE x.topics && $1 ORDER BY cardinality(ARRAY(SELECT unnest(x.topics) INTERSECT '
                       'SELECT unnest($1))) DESC, x.created_at DESC, x.memory_id LIMIT %s)',
                       t.tenant, c_recent, c_topical)
        INTO v_found USING p_topics;
        reach := reach || v_found;
    END IF;
    -- A turn ranks with its neighbours (sql/070-recall.sql, windowed); a superseded memory found stands for
    -- what replaced it, unless the question is about the past.
    reach := reach || cogmem._neighbours(t.tenant, reach)
             || CASE WHEN NOT p_history THEN cogmem._heirs(t.tenant, reach) END;
    reach := ARRAY(SELECT DISTINCT r FROM unnest(reach) AS r);
    RETURN NEXT;
END;
$$;
COMMENT ON FUNCTION cogmem._recall_reach(
    cogmem.tenants, cogmem.ring[], text[], public.vector, text[], text, text, boolean
) IS
'A large tenant''s reach for one recall, through its own indexes: the never-cut rings whole up to 500 (else '
'their nearest in meaning), the nearest memories in meaning, the most probable candidates, the holders of '
'the message''s rarest words (1,000 in all), the most topical recent memories, and the conversation '
'neighbours of all of them; with how many memories hold each word and the tenant''s size. No row when it '
'has no indexes.';

-- The statements that give each large tenant its indexes, and take them from a tenant that no longer needs
-- them. Statements, not actions: CREATE INDEX CONCURRENTLY runs outside a transaction, so a function cannot
-- run it; `cogmem index-tenants` runs them one by one, and a DBA may read them first.
CREATE OR REPLACE FUNCTION cogmem.tenant_indexes(above bigint DEFAULT 20000)
RETURNS TABLE (tenant text, memories bigint, index_name text, state text, statement text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it counts every tenant's memories, which only the API's owner may read; administrators only.
AS $$
#variable_conflict use_column
DECLARE
    c_rules text;
BEGIN
    PERFORM cogmem._require_admin();
    c_rules := cogmem._rules_predicate();
    IF tenant_indexes.above IS NULL OR tenant_indexes.above < 1 THEN
        RAISE EXCEPTION 'above must be a positive number of memories, got %', coalesce(tenant_indexes.above::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The default is 20000: below it one pass is faster.';
    END IF;
    RETURN QUERY
    WITH sizes AS (
        SELECT m.tenant, count(*) AS memories FROM cogmem.memories AS m GROUP BY m.tenant
    ),
    wanted AS (
        SELECT s.tenant, s.memories, k.kind, cogmem._tenant_index_name(s.tenant, k.kind) AS index_name,
               CASE k.kind WHEN 'vectors' THEN 'USING hnsw (embedding public.vector_cosine_ops) WHERE'
                           WHEN 'rules' THEN 'USING hnsw (embedding public.vector_cosine_ops) WHERE ' || c_rules || ' AND'
                           ELSE 'USING gin (search) WHERE' END AS method
        FROM sizes AS s CROSS JOIN (VALUES ('vectors'), ('rules'), ('words')) AS k (kind)
    ),
    present AS (
        SELECT c.relname::text AS index_name, i.indisvalid AS valid
        FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'cogmem.memories'::regclass AND c.relname ~ '^memories_(vectors|rules|words)_[0-9a-f]{16}$'
    )
    SELECT w.tenant, w.memories, coalesce(w.index_name, p.index_name), x.state,
           CASE x.state WHEN 'to build' THEN x.create_it
                        WHEN 'to rebuild' THEN x.drop_it || '; ' || x.create_it
                        WHEN 'to drop' THEN x.drop_it END
    FROM wanted AS w
    FULL JOIN present AS p ON p.index_name = w.index_name
    CROSS JOIN LATERAL (
        SELECT CASE WHEN w.tenant IS NULL OR w.memories < tenant_indexes.above / 2 THEN 'to drop'
                    WHEN p.index_name IS NULL THEN 'to build'
                    WHEN NOT p.valid THEN 'to rebuild'
                    ELSE 'ready' END AS state,
               format('DROP INDEX CONCURRENTLY IF EXISTS cogmem.%I', p.index_name) AS drop_it,
               format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON cogmem.memories %s tenant = %L',
                      w.index_name, w.method, w.tenant) AS create_it
    ) AS x
    -- A tenant between half the size and the size keeps what it has: no flapping around the line.
    WHERE p.index_name IS NOT NULL OR w.memories >= tenant_indexes.above
    ORDER BY 2 DESC NULLS LAST, 3;
END;
$$;
COMMENT ON FUNCTION cogmem.tenant_indexes(bigint) IS
'Administrators: each large tenant''s own indexes (HNSW over its vectors and over its rules and incidents, GIN '
'over its words) and their state: '
'to build (the tenant holds at least `above` memories), ready, to rebuild (a failed concurrent build), to drop '
'(the tenant fell below half of `above`, or is gone). statement is what to run, outside a transaction; '
'`cogmem index-tenants` runs them.';
