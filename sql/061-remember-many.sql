-- remember_many: a batch through the same path as remember(), in one statement where it can. Items are
-- checked first (a bad item names its index and nothing is stored), routed where they name no ring,
-- and those that stand alone are stored set-based; the rest go through remember's one store, in order.
-- An item that names what it replaces (supersedes, as remember's argument) always takes the one store.

-- Items of remember_many with their conversation, speaker, said_at and scope moved into their source. The
-- batch's person and agent apply to the items that name none, in their source or beside it.
DROP FUNCTION IF EXISTS cogmem._said_items(jsonb);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem._said_items(p_items jsonb, p_person text, p_agent text)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN (
    SELECT coalesce(jsonb_agg(said.item ORDER BY said.n), '[]')
    FROM (
        SELECT
            i.n,
            CASE
                WHEN jsonb_typeof(i.value) NOT IN ('object', 'string') THEN i.value
                WHEN
                    NOT (
                        jsonb_typeof(i.value) = 'object'
                        AND i.value ?| ARRAY['conversation', 'speaker', 'said_at', 'person', 'agent']
                    )
                    AND batch.person IS NULL AND batch.agent IS NULL
                    THEN i.value
                ELSE (
                    CASE WHEN jsonb_typeof(i.value) = 'object' THEN i.value ELSE jsonb_build_object('content', i.value) END
                    - ARRAY['conversation', 'speaker', 'said_at', 'person', 'agent']) || jsonb_build_object(
                    'source', jsonb_strip_nulls(jsonb_build_object(
                        'person', batch.person, 'agent', batch.agent
                    ))
                    || coalesce(i.value -> 'source', '{}')
                    || jsonb_strip_nulls(jsonb_build_object(
                        'conversation', i.value -> 'conversation',
                        'speaker', i.value -> 'speaker',
                        'said_at', i.value -> 'said_at',
                        'person', i.value -> 'person',
                        'agent', i.value -> 'agent'
                    ))
                )
            END AS item
        FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i (value, n)  -- noqa: RF02, RF03
        CROSS JOIN (VALUES (btrim(p_person), btrim(p_agent))) AS batch (person, agent)  -- noqa: RF02
    ) AS said
);
COMMENT ON FUNCTION cogmem._said_items(jsonb, text, text) IS
'A remember_many batch with each item''s conversation, speaker, said_at, person and agent moved into its '
'source; the batch''s person and agent for the items that name none.';

-- The text of a batch's item N (a text, or an object's content).
CREATE OR REPLACE FUNCTION cogmem._said_item_text(p_items jsonb, p_item integer)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN coalesce(p_items -> (p_item - 1) ->> 'content', p_items -> (p_item - 1) #>> '{}');
COMMENT ON FUNCTION cogmem._said_item_text(jsonb, integer) IS 'The text of item p_item (from 1) of a batch.';

-- What an item says it replaces, remember()'s supersedes (sql/036-supersession.sql): its ids, '{}' for
-- none, NULL when it says nothing (cogmem then detects it). _batch_problem checked they are integers.
CREATE OR REPLACE FUNCTION cogmem._item_supersedes(p_item jsonb)
RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN jsonb_typeof(p_item -> 'supersedes') = 'array'
        THEN array(SELECT s.id::bigint FROM jsonb_array_elements_text(p_item -> 'supersedes') AS s (id))  -- noqa: RF03
END;
COMMENT ON FUNCTION cogmem._item_supersedes(jsonb) IS
'The memory ids a remember_many item says it replaces (its supersedes), ''{}'' for none, NULL when it names none.';

-- What an item's parts embed to, remember()'s clause_embeddings (a rule said as one clause with its story,
-- cogmem._clause_rule): JSON arrays of numbers, one per part of cogmem.clauses(content), as vectors; NULL
-- when it gives none. _batch_problem checked them.
CREATE OR REPLACE FUNCTION cogmem._item_clause_embeddings(p_item jsonb)
RETURNS public.vector[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
        WHEN jsonb_typeof(p_item -> 'clause_embeddings') = 'array'
            THEN array(SELECT e.v::text::public.vector
                       FROM jsonb_array_elements(p_item -> 'clause_embeddings') WITH ORDINALITY AS e (v, n)
                       ORDER BY e.n)
    END;
$$;
COMMENT ON FUNCTION cogmem._item_clause_embeddings(jsonb) IS
'The vectors of a remember_many item''s clause_embeddings (as remember()''s), NULL when it gives none.';

-- What is wrong with an item's clause_embeddings, as remember() checks its own
-- (cogmem._check_clause_embeddings): NULL when nothing is, or it gives none.
CREATE OR REPLACE FUNCTION cogmem._item_clause_problem(p_item jsonb, p_dimensions integer)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT CASE
        WHEN jsonb_typeof(p_item -> 'clause_embeddings') IS NULL OR jsonb_typeof(p_item -> 'clause_embeddings') = 'null'
            THEN NULL
        WHEN jsonb_typeof(p_item -> 'clause_embeddings') <> 'array'
            THEN format('has clause_embeddings that are not arrays of %s numbers', p_dimensions)
        -- CASE, not OR, whose sides may be evaluated in any order: the length of a non-array is an error.
        WHEN EXISTS (SELECT FROM jsonb_array_elements(p_item -> 'clause_embeddings') AS v
                     WHERE CASE WHEN jsonb_typeof(v) <> 'array' THEN true
                                WHEN jsonb_array_length(v) <> p_dimensions THEN true
                                -- A number a real cannot hold is refused here, not by the vector's input.
                                ELSE EXISTS (SELECT FROM jsonb_array_elements(v) AS x
                                             WHERE CASE WHEN jsonb_typeof(x) <> 'number' THEN true
                                                        ELSE abs((x #>> '{}')::numeric) > 3.4e38 END) END)
            THEN format('has clause_embeddings that are not arrays of %s numbers', p_dimensions)
        WHEN jsonb_array_length(p_item -> 'clause_embeddings')
             <> coalesce(cardinality(cogmem.clauses(p_item ->> 'content')), 0)
            THEN format('has %s clause_embeddings, its content has %s parts (cogmem.clauses)',
                        jsonb_array_length(p_item -> 'clause_embeddings'),
                        coalesce(cardinality(cogmem.clauses(p_item ->> 'content')), 0))
        WHEN EXISTS (SELECT FROM unnest(cogmem._item_clause_embeddings(p_item)) AS v WHERE NOT cogmem._comparable(v))
            THEN 'has a clause embedding that cannot be compared (zero, or too small or too large)'
    END;
$$;
COMMENT ON FUNCTION cogmem._item_clause_problem(jsonb, integer) IS
'What is wrong with a remember_many item''s clause_embeddings (one array of p_dimensions numbers per part of '
'cogmem.clauses(content)), NULL when nothing is.';

-- The first item of a batch that cannot be stored, and what is wrong with it (no row: all are fine).
DROP FUNCTION IF EXISTS cogmem._batch_problem(jsonb, public.vector[], integer, integer);
CREATE OR REPLACE FUNCTION cogmem._batch_problem(
    t cogmem.tenants, p_items jsonb, p_embeddings public.vector[], p_dimensions integer
)
RETURNS TABLE (item integer, problem text)
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT c.n::integer, c.problem
    FROM (
        SELECT i.n, CASE
                WHEN jsonb_typeof(i.value) NOT IN ('object', 'string') THEN 'is neither a text nor an object'
                WHEN jsonb_typeof(i.value) = 'object' AND EXISTS (
                    SELECT FROM jsonb_object_keys(i.value) AS k
                    WHERE k NOT IN ('content', 'ring', 'topics', 'source', 'conversation', 'speaker', 'said_at',
                                    'person', 'agent', 'supersedes', 'clause_embeddings'))
                    THEN 'has unknown keys (known: content, ring, topics, source, conversation, speaker, said_at, '
                         || 'person, agent, supersedes, clause_embeddings)'
                WHEN jsonb_typeof(coalesce(i.value -> 'content', i.value)) <> 'string' THEN 'has no text content'
                WHEN btrim(coalesce(i.value ->> 'content', i.value #>> '{}')) = '' THEN 'has empty content'
                WHEN length(coalesce(i.value ->> 'content', i.value #>> '{}')) > t.max_content_chars
                    THEN format('has %s characters, the limit is %s',
                                length(coalesce(i.value ->> 'content', i.value #>> '{}')), t.max_content_chars)
                WHEN jsonb_typeof(i.value -> 'ring') NOT IN ('string', 'null')
                  OR (i.value ->> 'ring' IS NOT NULL AND cogmem._ring_of(i.value ->> 'ring') IS NULL)
                    THEN format('has unknown ring %s', i.value -> 'ring')
                WHEN jsonb_typeof(i.value -> 'topics') NOT IN ('array', 'null')
                  OR EXISTS (SELECT FROM jsonb_array_elements(CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array'
                                                                  THEN i.value -> 'topics' END) AS t
                             WHERE jsonb_typeof(t) <> 'string')
                    THEN 'has topics that are not an array of texts'
                WHEN jsonb_typeof(i.value -> 'source') NOT IN ('object', 'null') THEN 'has a source that is not an object'
                -- Memory ids: JSON integers that fit a bigint, checked against the tenant later.
                WHEN jsonb_typeof(i.value -> 'supersedes') NOT IN ('array', 'null')
                  OR EXISTS (SELECT FROM jsonb_array_elements(CASE WHEN jsonb_typeof(i.value -> 'supersedes') = 'array'
                                                                  THEN i.value -> 'supersedes' END) AS s
                             WHERE CASE WHEN jsonb_typeof(s) = 'number' AND s::text ~ '^-?[0-9]{1,19}$'
                                        THEN s::text::numeric NOT BETWEEN -9223372036854775808 AND 9223372036854775807
                                        ELSE true END)
                    THEN format('has supersedes that is not an array of memory ids: %s',
                                left((i.value -> 'supersedes')::text, 60))
                WHEN cogmem._item_clause_problem(i.value, p_dimensions) IS NOT NULL
                    THEN cogmem._item_clause_problem(i.value, p_dimensions)
                WHEN cogmem._said_problem(i.value) IS NOT NULL THEN cogmem._said_problem(i.value)
                WHEN cogmem._said_problem(i.value -> 'source') IS NOT NULL
                    THEN 'source ' || cogmem._said_problem(i.value -> 'source')
                WHEN jsonb_array_length(CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array' THEN i.value -> 'topics' END)
                     > t.max_topics
                    THEN format('has %s topics, the limit is %s', jsonb_array_length(i.value -> 'topics'), t.max_topics)
                WHEN (SELECT max(length(x)) FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array'
                                                                                 THEN i.value -> 'topics' END) AS x)
                     > t.max_topic_chars
                    THEN format('has a topic longer than %s characters', t.max_topic_chars)
                WHEN octet_length((i.value -> 'source')::text) > t.max_source_bytes
                    THEN format('has a source of %s bytes, the limit is %s', octet_length((i.value -> 'source')::text),
                                t.max_source_bytes)
                WHEN public.vector_dims(i.embedding) <> p_dimensions
                    THEN format('has an embedding of %s dimensions, expected %s',
                                public.vector_dims(i.embedding), p_dimensions)
                WHEN NOT cogmem._comparable(i.embedding)
                    THEN 'has an embedding that cannot be compared (zero, or too small or too large)'
            END AS problem
        -- Zipped, not embeddings[n]: subscripting an array of vectors walks it from the start every time.
        FROM ROWS FROM (jsonb_array_elements(p_items), unnest(p_embeddings))
             WITH ORDINALITY AS i (value, embedding, n)
    ) AS c
    WHERE c.problem IS NOT NULL
    ORDER BY c.n LIMIT 1;
$$;
COMMENT ON FUNCTION cogmem._batch_problem(cogmem.tenants, jsonb, public.vector[], integer) IS
'The first bad item of a remember_many batch, numbered from 1, with what is wrong with it.';

-- Redacted, routed, with topics and an embedding: a batch as remember() would see each item.
CREATE OR REPLACE FUNCTION cogmem._prepare_batch(
    p_tenant text, p_language regconfig, p_items jsonb, p_embeddings public.vector[]
)
RETURNS cogmem._batch_item[]
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_items cogmem._batch_item[];
    t       cogmem.tenants;
BEGIN
    t := cogmem._tenant_settings(p_tenant);
    -- Redact first, as remember() does: routing, topics, fingerprint and embedding never see a secret. A
    -- long turn routed to a never-cut ring carries the sentence that ring keeps (rule); the turn itself is
    -- stored as fresh (_store_batch, _remember). A buried rule's sentence is the candidate instead.
    -- Each step is its own subquery (OFFSET 0): pulled up, every reference to a step's column copied its
    -- whole expression (the routing's subquery thirty times over), and a batch of given rings took four
    -- times as long (bench/scale.py's remember_many rows).
    SELECT array_agg(ROW(p.n, r.redacted, k.ring::cogmem.ring,
                         p.ring IS NULL,
                         coalesce(cogmem._normalize_topics(p.topics), cogmem._detect_topics(p_tenant, r.redacted, p_language)),
                         e.embedding, s.source, cogmem._union_kinds(r.redactions, s.redactions),
                         cogmem._fingerprint(r.redacted), coalesce(x.rule, u.found ->> 'sentence'),
                         coalesce(k.candidate, u.found ->> 'ring'),
                         coalesce((u.found ->> 'probability')::real, k.candidate_p)
                     )::cogmem._batch_item ORDER BY p.n)
    INTO v_items
    FROM (
        SELECT i.n::integer AS n, coalesce(i.value ->> 'content', i.value #>> '{}') AS content,
               cogmem._ring_of(i.value ->> 'ring') AS ring,  -- a kind as its ring
               CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array'
                    THEN ARRAY(SELECT jsonb_array_elements_text(i.value -> 'topics')) END AS topics,
               i.embedding, cogmem._item_clause_embeddings(i.value) AS clauses,
               coalesce(CASE WHEN jsonb_typeof(i.value) = 'object' THEN i.value -> 'source' END, '{}') AS source
        FROM ROWS FROM (jsonb_array_elements(p_items), unnest(p_embeddings))
             WITH ORDINALITY AS i (value, embedding, n)
    ) AS p
    CROSS JOIN LATERAL cogmem.redact(btrim(p.content)) AS r
    CROSS JOIN LATERAL cogmem._redact_source(p.source) AS s
    CROSS JOIN LATERAL (SELECT cogmem._embedding(p_tenant, p.embedding, r.redacted) AS embedding OFFSET 0) AS e
    -- Routed only when the caller gave no ring (a CASE evaluates its subquery only then).
    CROSS JOIN LATERAL (
        SELECT CASE WHEN p.ring IS NULL THEN (SELECT to_jsonb(x) FROM cogmem.classify(r.redacted, e.embedding, t.embedding_model) AS x)
               END AS routed OFFSET 0
    ) AS c
    CROSS JOIN LATERAL (
        -- A turn of a conversation needs more certainty for a never-cut ring (as in _remember).
        SELECT coalesce(p.ring, CASE WHEN d.doubted THEN 'fresh' ELSE c.routed ->> 'ring' END) AS ring,
               CASE WHEN d.doubted THEN c.routed ->> 'ring' ELSE c.routed ->> 'candidate' END AS candidate,
               c.routed -> 'probabilities' AS probabilities,
               CASE WHEN d.doubted THEN d.ring_p ELSE (c.routed ->> 'candidate_probability')::real END AS candidate_p
        FROM (SELECT c.routed ->> 'ring' IN ('dos_and_donts', 'shocks') AND p.source ? 'conversation'
                     AND f.ring_p < t.turn_never_cut_probability AS doubted, f.ring_p
              FROM (SELECT (c.routed #>> ARRAY['probabilities', c.routed ->> 'ring'])::real AS ring_p) AS f) AS d OFFSET 0
    ) AS k
    CROSS JOIN LATERAL (SELECT CASE WHEN p.ring IS NULL AND (k.ring IN ('dos_and_donts', 'shocks') OR k.candidate IS NOT NULL)
                                    THEN cogmem._rule_sentence(r.redacted, coalesce(k.candidate, k.ring)) END AS rule OFFSET 0) AS x
    -- Routed nowhere protected: a rule or an incident among its sentences or one of its clauses, a candidate
    -- (as in _remember).
    -- A CASE, as the routing above: a function in a lateral FROM would be planned into a join that runs
    -- for every item.
    CROSS JOIN LATERAL (SELECT CASE WHEN p.ring IS NULL AND k.ring NOT IN ('dos_and_donts', 'shocks') AND k.candidate IS NULL
                                    THEN coalesce(
                                        (SELECT to_jsonb(b) FROM cogmem._buried_rule(r.redacted, k.probabilities) AS b),
                                        -- or one clause of it, with its story (_clause_rule, as in _remember)
                                        (SELECT to_jsonb(q) FROM cogmem._clause_rule(p_tenant, r.redacted, k.probabilities,
                                                                                     p.clauses, p.embedding IS NULL
                                                                                                AND e.embedding IS NOT NULL,
                                                                                     e.embedding IS NOT NULL) AS q))
                               END AS found OFFSET 0) AS u;
    RETURN v_items;
END;
$$;
COMMENT ON FUNCTION cogmem._prepare_batch(text, regconfig, jsonb, public.vector[]) IS
'A remember_many batch redacted first, then routed, given topics and embedded, in item order.';

DROP FUNCTION IF EXISTS cogmem._store_same_text(text, regconfig, cogmem._batch_item[]);  -- renamed
-- The set-based store for a batch that skips the checks by meaning: the same text only. Longer than a
-- screen as the steps of one batch, each set-based: insert, rehearse, audit, the rule sentences.
CREATE OR REPLACE FUNCTION cogmem._store_batch(p_tenant text, p_language regconfig, p_items cogmem._batch_item[])
RETURNS TABLE (item integer, memory_id bigint, ring text, topics text[], action text, redactions text[])
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_new_ids          bigint[];
    v_new_fingerprints text[];
    v_new_persons      text[];
    v_new_agents       text[];
    v_ids              bigint[];
    v_created          boolean[];
BEGIN

    -- The unique fingerprint index decides what is new, the first of equal items in the batch included.
    WITH inserted AS (
        INSERT INTO cogmem.memories AS m (tenant, ring, content, topics, language, embedding, redactions, source,
                                          fingerprint)
        SELECT p_tenant, CASE WHEN b.rule IS NOT NULL AND b.candidate IS NULL THEN 'fresh' ELSE b.ring END, b.content, b.topics, p_language,
               b.embedding, b.redactions, b.source, b.fingerprint
        FROM unnest(p_items) AS b
        ORDER BY b.item
        ON CONFLICT (tenant, fingerprint, person, agent) DO NOTHING
        RETURNING m.memory_id, m.fingerprint, m.person, m.agent
    )
    SELECT coalesce(array_agg(i.memory_id), '{}'), coalesce(array_agg(i.fingerprint), '{}'),
           coalesce(array_agg(i.person), '{}'), coalesce(array_agg(i.agent), '{}')
    INTO v_new_ids, v_new_fingerprints, v_new_persons, v_new_agents
    FROM inserted AS i;
    -- The same text in the same scope (sql/015-scopes.sql) is one memory.
    SELECT array_agg(n.id ORDER BY b.item), array_agg(b.first AND n.id IS NOT NULL ORDER BY b.item)
    INTO v_ids, v_created
    FROM (
        SELECT x.item, x.fingerprint, cogmem._person(x.source) AS person, cogmem._agent(x.source) AS agent,
               x.item = min(x.item) OVER (PARTITION BY x.fingerprint, cogmem._person(x.source),
                                                       cogmem._agent(x.source)) AS first
        FROM unnest(p_items) AS x
    ) AS b
    LEFT JOIN unnest(v_new_ids, v_new_fingerprints, v_new_persons, v_new_agents) AS n (id, fingerprint, person, agent)
        ON n.fingerprint = b.fingerprint AND cogmem._same_scope(n.person, n.agent, b.person, b.agent);
    IF array_position(v_ids, NULL) IS NOT NULL THEN
        -- Texts stored before: a new statement also sees those a concurrent writer won the race for.
        SELECT array_agg(coalesce(x.id, m.memory_id) ORDER BY x.ordinality) INTO v_ids
        FROM unnest(v_ids, p_items) WITH ORDINALITY AS x (id, item, content, ring, routed, topics, embedding, source,
                                                          redactions, fingerprint, rule, candidate, candidate_p,
                                                          ordinality)
        LEFT JOIN cogmem.memories AS m ON x.id IS NULL AND m.tenant = p_tenant AND m.fingerprint = x.fingerprint
            AND cogmem._same_scope(m.person, m.agent, cogmem._person(x.source), cogmem._agent(x.source));
    END IF;
    IF array_position(v_ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'item % matched a memory that was erased meanwhile', array_position(v_ids, NULL)
            USING ERRCODE = 'serialization_failure', HINT = 'Retry the batch.';
    END IF;

    INSERT INTO cogmem.memory_stats (tenant, memory_id) SELECT p_tenant, n.id FROM unnest(v_new_ids) AS n (id);
    -- Hearing a text again is a rehearsal (as in remember()).
    PERFORM cogmem._lock_stats(p_tenant, ARRAY(SELECT i.id FROM unnest(v_ids, v_created) AS i (id, created)
                                               WHERE NOT i.created));
    UPDATE cogmem.memory_stats AS s
    SET rehearsal_count = s.rehearsal_count + d.heard, last_recalled_at = now()
    FROM (
        SELECT i.id, count(*)::integer AS heard FROM unnest(v_ids, v_created) AS i (id, created)
        WHERE NOT i.created GROUP BY i.id
    ) AS d
    WHERE s.tenant = p_tenant AND s.memory_id = d.id;

    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    SELECT p_tenant, 'write', j.id, e.event, e.detail
    FROM unnest(p_items) WITH ORDINALITY AS b
    JOIN unnest(v_ids, v_created) WITH ORDINALITY AS j (id, created, ordinality) USING (ordinality)
    CROSS JOIN LATERAL (
        SELECT 'created' AS event,
               jsonb_build_object('ring', CASE WHEN b.rule IS NOT NULL AND b.candidate IS NULL THEN 'fresh' ELSE b.ring END,
                                  'routed', b.routed,
                                  'topics', to_jsonb(b.topics),
                                  'embedded', b.embedding IS NOT NULL, 'batch_item', b.item,
                                  'source_sha256', encode(sha256(convert_to(b.source::text, 'UTF8')), 'hex')) AS detail
        WHERE j.created
        UNION ALL
        SELECT 'redacted', jsonb_build_object('kinds', to_jsonb(b.redactions))
        WHERE j.created AND cardinality(b.redactions) > 0
        UNION ALL
        SELECT 'rehearsed', jsonb_build_object('match', 'same_text', 'batch_item', b.item)
        WHERE NOT j.created
    ) AS e;

    -- The rule sentences of the long turns just stored, through the one store; the candidates marked.
    PERFORM cogmem._keep_sentence(p_tenant, j.id, b.source, b.rule,
                                  CASE WHEN b.candidate IS NULL THEN b.ring::text END, b.candidate, b.candidate_p)
    FROM unnest(p_items) WITH ORDINALITY AS b
    JOIN unnest(v_ids, v_created) WITH ORDINALITY AS j (id, created, ordinality) USING (ordinality)
    WHERE j.created AND (b.rule IS NOT NULL OR b.candidate IS NOT NULL)
    ORDER BY b.item;

    RETURN QUERY
    SELECT b.item, j.id, m.ring::text, m.topics, CASE WHEN j.created THEN 'created' ELSE 'duplicate' END,
           b.redactions
    FROM unnest(p_items) WITH ORDINALITY AS b
    JOIN unnest(v_ids, v_created) WITH ORDINALITY AS j (id, created, ordinality) USING (ordinality)
    JOIN cogmem.memories AS m ON m.tenant = p_tenant AND m.memory_id = j.id
    ORDER BY b.item;
END;
$$;
COMMENT ON FUNCTION cogmem._store_batch(text, regconfig, cogmem._batch_item[]) IS
'Stores a prepared batch set-based: new texts become memories, texts stored before are rehearsed; audited.';

DROP FUNCTION IF EXISTS cogmem._batch_alone(cogmem.tenants, cogmem._batch_item[], boolean, boolean);  -- renamed
-- The items of a prepared batch that stand alone: remember() would store each of them as it is, whatever
-- came before or after it, so they are stored set-based and the rest go through the one store in order.
-- An item stands alone when its text is one the tenant holds (it is rehearsed, whatever else happens),
-- or when the first item of its text has an embedding and no memory or other item within the widest
-- radius of sign bits any check uses is a near-duplicate candidate (the duplicate similarity) or a
-- contradiction by the model, in either direction. Such a neighbour changes nobody's outcome, so order
-- does not matter for it. Longer than a screen: it is the
-- checks of remember() (sql/035-contradiction.sql, _detect_conflicts) written once for the whole batch.
DROP FUNCTION IF EXISTS cogmem._unrelated_batch_items(cogmem.tenants, cogmem._batch_item[]);
CREATE OR REPLACE FUNCTION cogmem._unrelated_batch_items(
    t cogmem.tenants, p_items cogmem._batch_item[], p_near_duplicates boolean, p_conflicts boolean
)
RETURNS integer[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_dims   integer := cogmem.embedding_dimensions();
    v_radius integer;
    v_alone  integer[];
BEGIN
    v_radius := greatest(v_dims / 4, ceil(v_dims * acos(t.dissonance_similarity) / pi())::integer + v_dims / 16);
    -- Items of the same text share a fate: one the tenant holds is rehearsed whatever else happens, and
    -- the rest follow the first of them, which alone is checked by meaning.
    WITH b AS MATERIALIZED (
        SELECT x.item, x.content, x.ring, x.fingerprint, x.embedding, x.rule, x.candidate, s.person, s.agent,
               public.binary_quantize(x.embedding)::bit(384) AS bits,
               x.item = min(x.item) OVER (PARTITION BY x.fingerprint, s.person, s.agent) AS first,
               EXISTS (SELECT FROM cogmem.memories AS m WHERE m.tenant = t.tenant AND m.fingerprint = x.fingerprint
                                                          AND cogmem._same_scope(m.person, m.agent, s.person, s.agent))
                   AS known
        FROM unnest(p_items) AS x
        CROSS JOIN LATERAL (SELECT cogmem._person(x.source) AS person, cogmem._agent(x.source) AS agent) AS s
    ),
    reps AS MATERIALIZED (
        SELECT b.* FROM b WHERE b.first AND NOT b.known
    ),
    -- The tenant's sign bits, read once from the covering index for the whole batch: the rows themselves
    -- are read only for the few memories within the radius of some item.
    tenant_bits AS MATERIALIZED (
        SELECT m.memory_id, m.embedding_bits, m.person, m.agent FROM cogmem.memories AS m WHERE m.tenant = t.tenant
    ),
    -- Each as the new statement, against every memory and every other first item of its scope as the
    -- established one.
    close AS (
        SELECT r.item, r.content, r.ring, r.embedding, NULL::integer AS other, m.content AS e_content,
               m.ring AS e_ring, 1 - (m.embedding OPERATOR(public.<=>) r.embedding) AS similarity
        FROM reps AS r
        JOIN tenant_bits AS n ON n.embedding_bits OPERATOR(public.<~>) r.bits <= v_radius
                             AND cogmem._same_scope(n.person, n.agent, r.person, r.agent)
        JOIN cogmem.memories AS m ON m.tenant = t.tenant AND m.memory_id = n.memory_id
        UNION ALL
        SELECT r.item, r.content, r.ring, r.embedding, o.item, o.content, o.ring,
               1 - (o.embedding OPERATOR(public.<=>) r.embedding)
        FROM reps AS r
        JOIN reps AS o ON o.item <> r.item AND o.bits OPERATOR(public.<~>) r.bits <= v_radius
                      AND cogmem._same_scope(o.person, o.agent, r.person, r.agent)
    ),
    -- Materialized: each first item looks its pairs up below, and the pairs are computed once.
    harmful AS MATERIALIZED (
        SELECT c.item, c.other
        FROM close AS c
        WHERE (p_near_duplicates AND c.similarity >= t.duplicate_similarity)
           OR (p_conflicts AND c.ring <> 'shocks' AND c.e_ring NOT IN ('fresh', 'shocks')
               AND c.similarity >= t.dissonance_similarity
               AND cogmem._contradiction(c.e_content, c.e_ring::text, c.content, cogmem._inbound_cues(c.content),
                                         c.similarity, t.language,
                                         c.ring IN ('dos_and_donts', 'procedures')
                                         OR (SELECT k.instruction FROM cogmem.classify(c.content, c.embedding, t.embedding_model) AS k),
                                         t.embedding_model))
    ),
    involved AS MATERIALIZED (
        SELECT r.fingerprint, r.person, r.agent FROM reps AS r
        WHERE r.bits IS NULL OR r.rule IS NOT NULL OR r.candidate IS NOT NULL
        UNION
        SELECT r.fingerprint, r.person, r.agent FROM reps AS r JOIN harmful AS h ON h.item = r.item
        UNION
        SELECT r.fingerprint, r.person, r.agent FROM reps AS r JOIN harmful AS h ON h.other = r.item
    )
    SELECT coalesce(array_agg(b.item ORDER BY b.item), '{}') INTO v_alone
    FROM b
    WHERE b.known OR NOT EXISTS (SELECT FROM involved AS i WHERE i.fingerprint = b.fingerprint
                                                              AND cogmem._same_scope(i.person, i.agent, b.person, b.agent));
    RETURN v_alone;
END;
$$;
COMMENT ON FUNCTION cogmem._unrelated_batch_items(cogmem.tenants, cogmem._batch_item[], boolean, boolean) IS
'The items of a prepared batch (their numbers, in order) that no check by meaning or by text relates to '
'anything in the tenant or the batch: remember() would store each of them as it is.';

-- Every check of a batch, as remember() makes them item by item in order (each sees the tenant and the
-- items before it), with the items that stand alone stored set-based.
CREATE OR REPLACE FUNCTION cogmem._remember_batch(
    p_tenant text, p_language regconfig, p_items jsonb, p_embeddings public.vector[], p_skip text[]
)
RETURNS TABLE (
    item integer, memory_id bigint, ring text, topics text[], action text, redactions text[], conflict_id bigint,
    conflicts_with bigint[]
)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_item     record;
    v_prepared cogmem._batch_item[];
    v_alone    integer[];
    v_naming   integer[];  -- the items that name what they replace
BEGIN
    -- The items that stand alone are stored set-based first, since no check of any item can
    -- see them. Without an embedding an item is compared by words with everything, so such a batch goes
    -- item by item throughout.
    v_prepared := cogmem._prepare_batch(p_tenant, p_language, p_items, p_embeddings);
    IF NOT EXISTS (SELECT FROM unnest(v_prepared) AS b WHERE b.embedding IS NULL) THEN
        v_alone := cogmem._unrelated_batch_items(cogmem._tenant_settings(p_tenant), v_prepared,
                                       NOT 'near_duplicates' = ANY (p_skip), NOT 'conflicts' = ANY (p_skip));
    END IF;
    -- An item that names what it replaces goes through the one store in order, and so do the items of its
    -- text in its scope (the first of them is the one stored): what it replaces may be what a later item
    -- is compared with.
    v_naming := ARRAY(SELECT i.n::integer FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i (value, n)
                      WHERE cardinality(cogmem._item_supersedes(i.value)) > 0);
    IF cardinality(v_naming) > 0 THEN
        v_alone := ARRAY(
            SELECT b.item FROM unnest(v_prepared) AS b
            WHERE b.item = ANY (v_alone)
              AND NOT EXISTS (SELECT FROM unnest(v_prepared) AS x
                              WHERE x.item = ANY (v_naming) AND x.fingerprint = b.fingerprint
                                AND cogmem._same_scope(cogmem._person(x.source), cogmem._agent(x.source),
                                                       cogmem._person(b.source), cogmem._agent(b.source)))
            ORDER BY b.item);
    END IF;
    IF cardinality(v_alone) > 0 THEN
        RETURN QUERY
        SELECT s.*, NULL::bigint, NULL::bigint[]
        FROM cogmem._store_batch(p_tenant, p_language,
                                     ARRAY(SELECT b FROM unnest(v_prepared) AS b
                                           JOIN unnest(v_alone) AS a (item) ON a.item = b.item
                                           ORDER BY b.item)) AS s;
    END IF;
    FOR v_item IN
        SELECT i.n::integer AS n, coalesce(i.value ->> 'content', i.value #>> '{}') AS content,
               i.value ->> 'ring' AS ring, i.embedding,
               CASE WHEN jsonb_typeof(i.value -> 'topics') = 'array'
                    THEN ARRAY(SELECT jsonb_array_elements_text(i.value -> 'topics')) END AS topics,
               CASE WHEN jsonb_typeof(i.value) = 'object' THEN i.value -> 'source' END AS source,
               cogmem._item_clause_embeddings(i.value) AS clauses,
               -- A batch that skips both checks by meaning detects nothing replaced (as _store_batch).
               coalesce(cogmem._item_supersedes(i.value),
                        CASE WHEN p_skip @> ARRAY['near_duplicates', 'conflicts'] THEN '{}'::bigint[] END) AS supersedes
        FROM ROWS FROM (jsonb_array_elements(p_items), unnest(p_embeddings))
             WITH ORDINALITY AS i (value, embedding, n)
        WHERE NOT i.n::integer = ANY (coalesce(v_alone, '{}'))
        ORDER BY i.n
    LOOP
        RETURN QUERY
        SELECT v_item.n, r.*
        FROM cogmem._remember(p_tenant, v_item.content, v_item.ring, v_item.topics, v_item.embedding, v_item.source,
                              CASE WHEN 'conflicts' = ANY (p_skip) THEN '{}'::bigint[] END, '{}',
                              NOT 'near_duplicates' = ANY (p_skip), v_item.supersedes, v_item.clauses) AS r;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION cogmem._remember_batch(text, regconfig, jsonb, public.vector[], text[]) IS
'remember_many() with its checks: the items that stand alone (cogmem._unrelated_batch_items) and name nothing '
'they replace stored set-based, then the others through the one store, in order; one row per item '
'(remember_many() puts them in item order).';

-- What the items of a batch say they replace, checked as remember() checks its supersedes (the tenant's
-- memories of the item's scope, sql/015-scopes.sql) before anything of the batch is stored: a wrong id
-- fails the batch with remember's error and HINT, naming the item. The ids must exist before the batch:
-- an item cannot name another item of it. Returns whether any item names one.
CREATE OR REPLACE FUNCTION cogmem._check_batch_supersedes(t cogmem.tenants, p_items jsonb)
RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_item    record;
    v_message text;
    v_hint    text;
    v_naming  boolean := false;
BEGIN
    FOR v_item IN
        SELECT i.n, cogmem._item_supersedes(i.value) AS ids, cogmem._person(i.value -> 'source') AS person,
               cogmem._agent(i.value -> 'source') AS agent
        FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i (value, n)
        WHERE cardinality(cogmem._item_supersedes(i.value)) > 0
        ORDER BY i.n
    LOOP
        BEGIN
            PERFORM cogmem._named_in_scope(t, v_item.ids, v_item.person, v_item.agent, 'supersedes',
                                           'that the text replaces');
        EXCEPTION WHEN no_data_found THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_hint = PG_EXCEPTION_HINT;
            RAISE EXCEPTION 'item %: %; nothing of this batch was stored', v_item.n, v_message
                USING ERRCODE = 'no_data_found', HINT = v_hint;
        END;
        v_naming := true;
    END LOOP;
    RETURN v_naming;
END;
$$;
COMMENT ON FUNCTION cogmem._check_batch_supersedes(cogmem.tenants, jsonb) IS
'Checks the supersedes of every item of a remember_many batch as remember() checks its own (no_data_found '
'with a HINT, naming the item), before anything is stored; whether any item names memories it replaces.';

DROP FUNCTION IF EXISTS cogmem.remember_many(text, jsonb, public.vector[]);  -- before skip and conflicts
DROP FUNCTION IF EXISTS cogmem.remember_many(text, jsonb, public.vector[], text[]);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem.remember_many(
    tenant text,
    items jsonb,
    embeddings public.vector[] DEFAULT NULL,
    skip text[] DEFAULT '{}',
    person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS TABLE (
    item integer, memory_id bigint, ring text, topics text[], action text, redactions text[], conflict_id bigint,
    conflicts_with bigint[], candidate text, excerpt_id bigint, suggestion text
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes memories, their statistics and audit rows, which only the API's owner may.
AS $$
#variable_conflict use_column
DECLARE
    v_tenant   text := remember_many.tenant;
    v_language regconfig;
    v_count    integer;
    v_bad      record;
    v_items    jsonb;
    v_naming   boolean;  -- an item names what it replaces
BEGIN
    v_language := cogmem._require_tenant(v_tenant);
    PERFORM cogmem._lock_tenant(v_tenant, false);
    IF remember_many.items IS NULL OR jsonb_typeof(remember_many.items) <> 'array' THEN
        RAISE EXCEPTION 'items must be a JSON array, got %', coalesce(jsonb_typeof(remember_many.items), 'NULL')
            USING ERRCODE = CASE WHEN remember_many.items IS NULL THEN 'null_value_not_allowed' ELSE 'invalid_parameter_value' END,
                  HINT = 'Pass a JSON array of texts or of {"content", "ring", "topics", "source"} objects.';
    END IF;
    v_count := jsonb_array_length(remember_many.items);
    IF v_count > 100000 THEN
        RAISE EXCEPTION 'a batch holds at most 100000 items, got %', v_count
            USING ERRCODE = 'program_limit_exceeded', HINT = 'Split it into batches of 1,000 to 10,000 items.';
    END IF;
    IF remember_many.embeddings IS NOT NULL AND cardinality(remember_many.embeddings) <> v_count THEN
        RAISE EXCEPTION '% embeddings for % items', cardinality(remember_many.embeddings), v_count
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass one embedding per item, in the same order (a NULL element embeds that item here).';
    END IF;
    IF remember_many.skip IS NULL OR NOT remember_many.skip <@ ARRAY['near_duplicates', 'conflicts'] THEN
        RAISE EXCEPTION 'skip names checks remember_many does not have: %', coalesce(remember_many.skip::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Skip near_duplicates, conflicts, both, or none (''{}'', the default).';
    END IF;
    SELECT p.item AS n, p.problem INTO v_bad
    FROM cogmem._batch_problem((SELECT x FROM cogmem.tenants AS x WHERE x.tenant = v_tenant),
                               remember_many.items, remember_many.embeddings, cogmem.embedding_dimensions()) AS p;
    IF v_bad.n IS NOT NULL THEN
        RAISE EXCEPTION 'item % %; nothing of this batch was stored', v_bad.n, v_bad.problem
            USING ERRCODE = CASE WHEN v_bad.problem LIKE 'has % characters, the limit is %' THEN 'string_data_right_truncation'
                                 ELSE 'invalid_parameter_value' END,
                  HINT = 'Items are texts or {"content", "ring", "topics", "source", "conversation", "speaker", "said_at", '
                         || '"person", "agent", "supersedes", "clause_embeddings"} objects, numbered from 1; supersedes is '
                         || 'an array of the memory ids the item replaces, [] for none; clause_embeddings one array of '
                         || 'numbers per text cogmem.clauses(content) returns.';
    END IF;
    v_items := cogmem._said_items(remember_many.items, remember_many.person, remember_many.agent);
    -- Every scope the batch writes in must be one the caller reaches (sql/015-scopes.sql).
    PERFORM cogmem._require_scope(v_tenant, s.person, s.agent)
    FROM (SELECT DISTINCT cogmem._person(i -> 'source') AS person, cogmem._agent(i -> 'source') AS agent
          FROM jsonb_array_elements(v_items) AS i) AS s;
    -- What items say they replace is checked first; a batch with one goes through the one store.
    v_naming := cogmem._check_batch_supersedes(cogmem._tenant_settings(v_tenant), v_items);
    IF remember_many.skip @> ARRAY['near_duplicates', 'conflicts'] AND NOT v_naming THEN
        RETURN QUERY
        WITH s AS MATERIALIZED (
            SELECT * FROM cogmem._store_batch(v_tenant, v_language,
                                                  cogmem._prepare_batch(v_tenant, v_language, v_items,
                                                                        remember_many.embeddings))
        )
        SELECT s.*, NULL::bigint, NULL::bigint[], a.candidate, a.excerpt_id,
               cogmem._resource_suggestion(v_tenant, cogmem._said_item_text(v_items, s.item))
        FROM s LEFT JOIN cogmem._remembered_as(v_tenant, ARRAY(SELECT y.memory_id FROM s AS y)) AS a
            ON a.memory_id = s.memory_id
        ORDER BY s.item;
        RETURN;
    END IF;
    RETURN QUERY
    WITH b AS MATERIALIZED (
        SELECT * FROM cogmem._remember_batch(v_tenant, v_language, v_items, remember_many.embeddings,
                                             remember_many.skip)
    )
    SELECT b.*, a.candidate, a.excerpt_id, cogmem._resource_suggestion(v_tenant, cogmem._said_item_text(v_items, b.item))
    FROM b LEFT JOIN cogmem._remembered_as(v_tenant, ARRAY(SELECT y.memory_id FROM b AS y)) AS a
        ON a.memory_id = b.memory_id
    ORDER BY b.item;
END;
$$;
COMMENT ON FUNCTION cogmem.remember_many(text, jsonb, public.vector[], text[], text, text) IS
'Stores a batch of memories in one call: items is a JSON array of texts or {"content", "ring", "topics", '
'"source", "conversation", "speaker", "said_at", "person", "agent", "supersedes", "clause_embeddings"} objects '
'(person and agent: the batch''s, for items that name none; supersedes: as remember()''s, the ids of memories '
'stored before the batch that the item replaces, [] for none; clause_embeddings: as remember()''s, one array of '
'numbers per text cogmem.clauses(content, embedding) returns), embeddings (optional) one vector per item. Each item gets what '
'remember() gives, in order, within the batch and against the tenant: redaction, routing, topics, '
'near-duplicates by meaning, conflicts, what it replaces. skip names checks a loader may skip on purpose '
'(near_duplicates, conflicts); skipping both stores the batch set-based, de-duplicating the same text only '
'(what an item says it replaces is still marked). One row per item, in order; a bad item rejects the whole '
'batch.';
