-- recall: the outbound attention filter. One call = one logged cycle within a token budget.
--
-- Layers are filled in priority order (tenant_layers.priority). Allocations are tokens of a 3,200-token
-- budget (or of their sum, if larger) and scale with the budget asked for; the unallocated rest is a
-- reserve. Each layer may use the reserve plus the allocation of itself and every layer before it,
-- minus what those used: unused allocation flows on.
-- Never-cut layers (bios, shocks, dos_and_donts) are injected whole and bypass the topic filter;
-- when they overflow, they take budget from the layers after them.
--
-- Relevance is weighted reciprocal-rank fusion, sum(weight / (k + rank)), of up to three rankings:
-- full text (how many of the message's words, stemmed in the tenant's language, a memory holds), vector
-- cosine (when an embedding is given or the server can embed), and topic overlap (a tie-breaker).
-- Defaults k = 10, weights 0.5 / 1.0 / 0.1 per tenant, chosen by bench/run.py. The fused value is
-- weighted by confidence and Ebbinghaus strength
-- exp(-ln 2 * age_since_last_recall / half_life) with the ring's half-life (none: strength 1).

-- What recall says about an injected memory besides its score: its siblings (the few memories that
-- have any, p_noted) and the contradictions it is part of.
CREATE OR REPLACE FUNCTION cogmem._recall_notes(p_tenant text, p_picked bigint[], p_noted bigint[])
RETURNS TABLE (memory_id bigint, sibling_note text, dispute text)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- PL/pgSQL: it keeps its plan for the session (a SQL function with a SET clause is planned every call).
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH notes AS (
        -- Usually none: the gate skips a call that is planned anew each time.
        SELECT * FROM cogmem._sibling_notes(p_tenant, p_noted) WHERE cardinality(p_noted) > 0
    ),
    -- Memories a held instruction contradicts (sql/160-conflicts.sql), and facts stored although they
    -- contradict older ones (sql/060-remember.sql): the agent should know, on both sides.
    disputes AS (
        SELECT d.memory_id, string_agg(d.note, '; ' ORDER BY d.n) AS note
        FROM (
            SELECT w.id AS memory_id, 1 AS n,
                   'contradicted by open conflict ' || string_agg('#' || c.conflict_id, ', ' ORDER BY c.conflict_id)
                       AS note
            FROM cogmem.conflicts AS c, unnest(c.conflicts_with) AS w (id)
            WHERE c.tenant = p_tenant AND c.status = 'open'
            GROUP BY w.id
            UNION ALL
            -- Each link seen from both of its memories.
            SELECT x.memory_id, x.n, x.label || string_agg('#' || x.other, ', ' ORDER BY x.other)
            FROM cogmem.memory_contradictions AS l
            CROSS JOIN LATERAL (VALUES (l.contradicts_id, 2, 'contradicted by newer memory ', l.memory_id),
                                       (l.memory_id, 3, 'contradicts older memory ', l.contradicts_id))
                AS x (memory_id, n, label, other)
            WHERE l.tenant = p_tenant AND (l.memory_id = ANY (p_picked) OR l.contradicts_id = ANY (p_picked))
              AND x.memory_id = ANY (p_picked)
            GROUP BY x.memory_id, x.n, x.label
        ) AS d
        GROUP BY d.memory_id
    )
    SELECT coalesce(n.memory_id, d.memory_id), n.note, d.note
    FROM notes AS n FULL JOIN disputes AS d ON d.memory_id = n.memory_id;
END;
$$;
COMMENT ON FUNCTION cogmem._recall_notes(text, bigint[], bigint[]) IS
'Per injected memory: its sibling note (for those in p_noted) and the contradictions it takes part in.';

-- The cycle log: the cycle's own row and its audit row, in the recall's transaction. The row is pending:
-- its rehearsal of what it injected is applied from it (sql/058-rehearsal.sql), not item by item here.
-- Before 0032 the cycle kept no embedding of its message.
DROP FUNCTION IF EXISTS cogmem._log_recall(
    text, uuid, text, text, text[], integer, integer, integer, cogmem.layer[], bigint[], bigint[], real[], integer[],
    text[], text[]
);
DROP FUNCTION IF EXISTS cogmem._log_recall(
    text, uuid, text, text, text[], integer, integer, integer, cogmem.layer[], bigint[], bigint[], real[], integer[],
    text[], text[], public.vector
);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem._log_recall(
    p_tenant text, p_recall_id uuid, p_conversation text, p_message text, p_topics text[], p_budget integer,
    p_used integer, p_core_version integer, p_layers cogmem.layer[], p_memory_ids bigint[], p_rule_ids bigint[],
    p_scores real[], p_tokens integer[], p_reasons text[], p_audit_reasons text[], p_embedding public.vector,
    p_person text, p_agent text
)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_sha256 bytea;
BEGIN
    v_sha256 := sha256(convert_to(p_message, 'UTF8'));
    -- The items as one array per field in the cycle's own row (migration 0011): a row per item cost more
    -- than the rest of the logging (docs/scaling.md).
    INSERT INTO cogmem.recalls (tenant, recall_id, conversation, message_sha256, topics, budget, tokens_used,
                                core_version, item_layers, item_memory_ids, item_rule_ids, item_scores, item_tokens,
                                item_reasons, message_embedding, person, agent)
    VALUES (p_tenant, p_recall_id, p_conversation, v_sha256, p_topics, p_budget, p_used,
            p_core_version, p_layers, p_memory_ids, coalesce(p_rule_ids, '{}'), coalesce(p_scores, '{}'),
            coalesce(p_tokens, '{}'), coalesce(p_reasons, '{}'),
            -- Only a conversation has a next turn to compare with it.
            CASE WHEN p_conversation IS NOT NULL THEN p_embedding END, p_person, p_agent);
    INSERT INTO cogmem.audit_log (tenant, level, event, recall_id, detail)
    VALUES (p_tenant, 'recall', 'recalled', p_recall_id,
           jsonb_build_object(
               'message_sha256', encode(v_sha256, 'hex'),
               -- The conversation and the person as hashes: an id may name a person (a phone number, a
               -- ticket of theirs), and the audit, append-only, outlives their erasure. The agent by name.
               'conversation_sha256', encode(sha256(convert_to(p_conversation, 'UTF8')), 'hex'),
               'topics', to_jsonb(p_topics), 'budget', p_budget,
               'agent', p_agent,
               'person_sha256', encode(sha256(convert_to(lower(p_person), 'UTF8')), 'hex'),
               'tokens_used', p_used, 'core_version', p_core_version,
               'over_budget', CASE WHEN p_used > p_budget THEN p_used - p_budget END,
               -- Items as one array per field (cogmem.audit_recall_items zips them back), cheaper to
               -- build than an object per item.
               'items', jsonb_build_object('layer', to_jsonb(p_layers), 'memory_id', to_jsonb(p_memory_ids),
                                           'rule_id', to_jsonb(p_rule_ids), 'score', to_jsonb(p_scores),
                                           'tokens', to_jsonb(p_tokens), 'reason', to_jsonb(p_audit_reasons))));
    PERFORM cogmem._apply_backlog(p_tenant);
END;
$$;
COMMENT ON FUNCTION cogmem._log_recall(
    text, uuid, text, text, text[], integer, integer, integer, cogmem.layer[], bigint[], bigint[], real[], integer[],
    text[], text[], public.vector, text, text
) IS
'Logs one recall cycle: its row (pending rehearsal of what it injected; in a conversation, the message''s '
'embedding for the next turn to be compared with) and its audit row.';

-- The budget fill, a pure stage over arrays (tests/test_recall.py tests it without tables). Greedy, in
-- injection order: never-cut items always, the rest when they fit the budget up to their layer
-- (cumulative). What a never-cut item takes beyond its layer's share is said (over), and beyond the
-- whole budget too (beyond): never dropped.
CREATE OR REPLACE FUNCTION cogmem._fill_budget(
    p_tokens integer[], p_cumulative integer[], p_never_cut boolean[], p_budget integer, p_used integer,
    OUT picked integer[], OUT over integer[], OUT beyond integer[], OUT used integer
)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := 0;
BEGIN
    picked := '{}';
    over := '{}';
    beyond := '{}';
    used := p_used;
    FOR i IN 1 .. coalesce(cardinality(p_tokens), 0) LOOP
        IF p_never_cut[i] OR used + p_tokens[i] <= p_cumulative[i] THEN
            used := used + p_tokens[i];
            -- Element assignment appends in place; picked || i would copy the array each time.
            n := n + 1;
            picked[n] := i;
            over[n] := CASE WHEN p_never_cut[i] AND used > p_cumulative[i] THEN used - p_cumulative[i] END;
            beyond[n] := CASE WHEN p_never_cut[i] AND used > p_budget THEN used - p_budget END;
        END IF;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION cogmem._fill_budget(integer[], integer[], boolean[], integer, integer) IS
'The positions of the candidates that fit, in order, with each never-cut item''s overflow past its layer '
'(over) and past the whole budget (beyond), and the tokens used.';

-- Newer first (_recall_candidates): whether a newer memory may be placed before an older one by their
-- layers and scores. Within a layer only when it ranks below; before a candidate from any other layer
-- (a candidate is shown before every ranked layer). Like cogmem.strength: no SET search_path, so that it
-- is inlined into the pairs it judges; not STRICT, for the same reason.
CREATE OR REPLACE FUNCTION cogmem._placeable(
    p_older_layer cogmem.layer, p_older_score real, p_newer_layer cogmem.layer, p_newer_score real
)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN (p_older_layer = p_newer_layer AND p_older_score > p_newer_score)
OR (p_older_layer::text = 'candidates' AND p_newer_layer <> p_older_layer);
COMMENT ON FUNCTION cogmem._placeable(cogmem.layer, real, cogmem.layer, real) IS
'Whether recall may place a newer memory before an older one about the same thing: within a layer when it '
'ranks below, and before a candidate from any other layer.';

-- Token economy: the part of a long memory that matches the message, the sentences holding one of its
-- words and the sentence on either side, joined by "…". NULL when the whole is better (short, no sentence
-- matches, or the part is not much shorter): a memory is never cut to nothing.
CREATE OR REPLACE FUNCTION cogmem._excerpt(p_content text, p_query tsquery, p_language regconfig)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
DECLARE
    v_sentences text[];
    v_keep      boolean[];
    v_out       text := '';
    v_n         integer;
BEGIN
    IF p_query IS NULL THEN
        RETURN NULL;
    END IF;
    v_sentences := cogmem._sentences(p_content);
    v_n := cardinality(v_sentences);
    IF v_n < 3 THEN
        RETURN NULL;
    END IF;
    v_keep := array_fill(false, ARRAY[v_n]);
    FOR i IN 1 .. v_n LOOP
        IF to_tsvector(p_language, v_sentences[i]) @@ p_query THEN
            v_keep[greatest(i - 1, 1)] := true;
            v_keep[i] := true;
            v_keep[least(i + 1, v_n)] := true;
        END IF;
    END LOOP;
    IF NOT true = ANY (v_keep) THEN
        RETURN NULL;
    END IF;
    FOR i IN 1 .. v_n LOOP
        IF v_keep[i] THEN
            v_out := v_out || CASE WHEN i > 1 AND NOT v_keep[i - 1] THEN ' … ' WHEN i > 1 THEN ' ' ELSE '' END
                     || v_sentences[i];
        END IF;
    END LOOP;
    v_out := btrim(v_out) || CASE WHEN NOT v_keep[v_n] THEN ' …' ELSE '' END;
    RETURN CASE WHEN length(v_out) < 0.8 * length(p_content) THEN v_out END;
END;
$$;
COMMENT ON FUNCTION cogmem._excerpt(text, tsquery, regconfig) IS
'The sentences of a long text that hold a word of the query, with their neighbours, joined by "…"; NULL '
'when the whole text should be shown.';

DROP FUNCTION IF EXISTS cogmem._recall_candidates(
    cogmem.tenants, integer, bigint, cogmem.ring[], text[], public.vector, text[], tsquery
);  -- before 0028 it knew nothing of conversations
DROP FUNCTION IF EXISTS cogmem._recall_candidates(
    cogmem.tenants, integer, bigint, cogmem.ring[], text[], public.vector, text[], tsquery, text[], daterange
);  -- before 0035 it knew nothing of scopes
DROP FUNCTION IF EXISTS cogmem._recall_candidates(
    cogmem.tenants, integer, bigint, cogmem.ring[], text[], public.vector, text[], tsquery, text[], daterange,
    text, text
);  -- before 0041 nothing was superseded
-- A result type cannot be replaced: before issue 51 the candidates had no raw texts, and recall's rows no
-- text apart from the shown content.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_proc AS p
               WHERE p.oid = pg_catalog.to_regprocedure('cogmem._recall_candidates(cogmem.tenants, integer, bigint, '
                   'cogmem.ring[], text[], public.vector, text[], tsquery, text[], daterange, text, text, boolean)')
                 AND NOT 'texts' = ANY (p.proargnames)) THEN
        DROP FUNCTION cogmem._recall_candidates(
            cogmem.tenants, integer, bigint, cogmem.ring[], text[], public.vector, text[], tsquery, text[], daterange,
            text, text, boolean
        );
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.pg_proc AS p
               WHERE p.oid = pg_catalog.to_regprocedure('cogmem.recall(text, text, public.vector, text[], bigint, '
                   'text, text, text)')
                 AND NOT 'text' = ANY (p.proargnames)) THEN
        DROP FUNCTION cogmem.recall(text, text, public.vector, text[], bigint, text, text, text);
    END IF;
END;
$$;
-- recall's candidates: every memory that qualifies and every BIOS rule that applies, scored, with its
-- layer's cumulative share of the budget, as one array per field in injection order (layer priority,
-- then score). A turn of a conversation is ranked twice: alone, and as its window (itself plus
-- neighbour_weight times the turns before and after it), so that "Yes! It was amazing." after a question
-- about the concert is found with the question. Full text is weighted by how rare each shared word is in
-- the tenant (idf). One statement, so that the tenant's memories are read in one pass (a statement per
-- signal would read them five times): hence longer than a screen.
CREATE OR REPLACE FUNCTION cogmem._recall_candidates(
    t cogmem.tenants, p_budget integer, p_total_alloc bigint, p_protected cogmem.ring[], p_topics text[],
    p_embedding public.vector, p_lexemes text[], p_query tsquery, p_names text[], p_span daterange,
    p_person text, p_agent text, p_history boolean
)
RETURNS TABLE (
    layers cogmem.layer[], memory_ids bigint[], rule_ids bigint[], tokens integer[], cumulative integer[],
    never_cut boolean[], scores real[], contents text[], heads text[], tails text[], texts text[]
)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET enable_bitmapscan = off
-- The small global tables (BIOS rules, their subscriptions) have no index worth scanning, so their
-- sequential scans carry the disabled cost, which would buy a JIT compilation far slower than the query.
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
    -- The cosines from which a turn or an untopical memory is related, on the scale of the tenant's model.
    v_related_turn real := cogmem._model_similarity(t.embedding_model, 'conversation_similarity');
    v_related      real := cogmem._model_similarity(t.embedding_model, 'untopical_similarity');
    -- Two memories about the same thing, on that scale (as supersession judges it).
    v_same_thing   real := cogmem._model_similarity(t.embedding_model, 'supersede_similarity');
    -- Unconfirmed candidates of the never-cut rings are injected in their own layer, when the tenant has it
    -- (sql/060-remember.sql, _candidate_layer), most probable first.
    v_candidates   boolean := EXISTS (SELECT FROM cogmem.tenant_layers AS l
                                      WHERE l.tenant = t.tenant AND l.layer::text = 'candidates');
    -- A large tenant with its own indexes (sql/016-large-tenants.sql): only its reach is read, and the
    -- rarity of a word is counted through its index.
    v_reach        bigint[];
    v_words        text[];
    v_holding      bigint[];
    v_memories     double precision;
    v_large        boolean;
BEGIN
    SELECT r.reach, r.words, r.holding, r.memories INTO v_reach, v_words, v_holding, v_memories
    FROM cogmem._recall_reach(t, p_protected, p_topics, p_embedding, p_lexemes, p_person, p_agent, p_history) AS r;
    v_large := v_reach IS NOT NULL;
    RETURN QUERY
    WITH scaled AS (
        SELECT l.layer, l.priority, l.never_cut, l.half_life,
               floor(l.token_allocation::numeric * p_budget / greatest(p_total_alloc, 3200))::integer AS allocation
        FROM cogmem.tenant_layers AS l WHERE l.tenant = t.tenant
    ),
    layers AS (
        -- Cumulative allocation up to each layer. What no layer is allocated (the default split
        -- allocates 2,700 of 3,200 tokens) is a reserve open to every layer in priority order.
        -- The candidates' layer is bounded by its allocation instead (pooled.injected, below), so that the
        -- never-cut rings, however full, never take it: it may use the whole budget.
        SELECT s.*, CASE WHEN s.layer::text = 'candidates' THEN p_budget
                         ELSE (sum(s.allocation) OVER (ORDER BY s.priority)
                               + p_budget - sum(s.allocation) OVER ())::integer END AS cumulative
        FROM scaled AS s
    ),
    -- One pass over the tenant's memories (a large tenant's reach) yields every signal. Vector search is
    -- exact within a tenant that has no index of its own, so the pass is needed anyway; a scan per signal
    -- would read the rows again.
    -- A superseded memory (sql/036-supersession.sql) is read for what replaced it, unless the question is
    -- about the past: "Jill retired, so my taxes are handled by Tom Briggs now" shares neither words nor
    -- much meaning with "Who is my accountant?", which found "My accountant is Jill Harper" (its row, under
    -- its heir's id, is a proxy: its signals count for the heir, its content is never shown).
    signals AS MATERIALIZED (
        SELECT CASE WHEN m.valid_until IS NULL OR p_history THEN m.memory_id ELSE m.superseded_by END AS memory_id,
               CASE WHEN m.valid_until IS NOT NULL AND NOT p_history THEN m.memory_id END AS replaced,
               -- A proxy is outside any conversation: its heir's turns are not its neighbours.
               m.ring, m.topics, m.created_at, m.token_estimate, m.content,
               CASE WHEN m.valid_until IS NULL OR p_history THEN m.conversation END AS conversation,
               m.said_at, m.speaker, m.candidate_ring, m.candidate_p, m.superseded_by, m.valid_until,
               -- The message's words the memory holds: tsvector deletions, not an unnest per row.
               CASE WHEN m.search @@ p_query THEN tsvector_to_array(ts_delete(m.search, tsvector_to_array(
                   ts_delete(m.search, p_lexemes)))) END AS words,
               m.embedding OPERATOR(public.<=>) p_embedding AS distance,
               -- Topics are few: a filtered unnest costs a fifth of an INTERSECT subquery here.
               CASE WHEN m.topics && p_topics THEN (SELECT count(*) FROM unnest(m.topics) AS t
                                                    WHERE t = ANY (p_topics)) END AS shared
        -- One of the two, by a one-time filter of the one plan the session keeps.
        FROM (SELECT a.* FROM cogmem.memories AS a WHERE NOT v_large AND a.tenant = t.tenant
              UNION ALL
              SELECT a.* FROM cogmem.memories AS a WHERE v_large AND a.tenant = t.tenant AND a.memory_id = ANY (v_reach))
             AS m
        -- Only what the scope sees (sql/015-scopes.sql): never another person's memory, never-cut or not.
        WHERE m.tenant = t.tenant AND cogmem.in_scope(m.person, m.agent, m.ring, p_person, p_agent, t)
          -- A superseded memory as itself only for a question about the past; else as a proxy, if it has an heir.
          AND (m.valid_until IS NULL OR p_history OR m.superseded_by IS NOT NULL)
    ),
    -- How rare each of the message's words is among the tenant's memories: ln(memories / holding it).
    -- A large tenant's reach is not the tenant: there, the holders were counted through its index.
    rarity AS (
        SELECT w.word, ln((SELECT count(*) FROM signals)::double precision / count(*)) + 0.01 AS idf
        FROM signals AS s CROSS JOIN unnest(s.words) AS w (word)
        WHERE NOT v_large
        GROUP BY w.word
        UNION ALL
        SELECT h.word, ln(greatest(v_memories, h.holding) / greatest(h.holding, 1)) + 0.01
        FROM unnest(v_words, v_holding) AS h (word, holding)
        WHERE v_large
    ),
    lexical AS (
        SELECT s.memory_id, sum(r.idf) AS score
        FROM signals AS s CROSS JOIN unnest(s.words) AS w (word) JOIN rarity AS r ON r.word = w.word
        GROUP BY s.memory_id
    ),
    -- A turn and its window, in the order its conversation was said; outside a conversation the window is
    -- the memory alone.
    windowed AS MATERIALIZED (
        SELECT s.memory_id, s.replaced, s.ring, s.topics, s.created_at, s.token_estimate, s.content, s.conversation,
               s.said_at, s.speaker, s.candidate_ring, s.candidate_p, s.superseded_by, s.valid_until, s.distance,
               s.shared,
               x.score AS lexical_score,
               cardinality(s.words) AS shared_words,
               CASE WHEN s.conversation IS NULL THEN x.score
                    ELSE nullif(coalesce(x.score, 0) + t.neighbour_weight
                                * (coalesce(lag(x.score) OVER w, 0) + coalesce(lead(x.score) OVER w, 0)), 0)
               END AS window_lexical,
               CASE WHEN s.conversation IS NULL THEN 1 - s.distance
                    ELSE 1 - s.distance + t.neighbour_weight * (coalesce(1 - lag(s.distance) OVER w, 0)
                                                              + coalesce(1 - lead(s.distance) OVER w, 0))
               END AS window_similarity
        FROM signals AS s LEFT JOIN lexical AS x ON x.memory_id = s.memory_id
        WINDOW w AS (PARTITION BY s.conversation ORDER BY s.said_at, s.memory_id)
    ),
    -- Five rankings of at most 100 candidates each, plus every memory of a never-cut ring.
    -- An heir takes the best of its own signals and its proxy's (each ranking carries the one it ranks by).
    pool AS (
        SELECT c.memory_id, min(c.lexical_rank) AS lexical_rank, min(c.semantic_rank) AS semantic_rank,
               min(c.window_lexical_rank) AS window_lexical_rank,
               min(c.window_semantic_rank) AS window_semantic_rank, min(c.topic_rank) AS topic_rank,
               min(c.distance) AS distance, max(c.shared_words) AS shared_words, max(c.shared) AS shared,
               min(c.replaced) AS replaced, max(c.recalled_at) AS pending_recalled_at
        FROM (
            -- Top 100 first (a bounded heap sort), then numbered: row_number() over the whole tenant
            -- sorted all of it, for every ranking.
            SELECT x.memory_id, row_number() OVER (ORDER BY x.lexical_score DESC, x.memory_id) AS lexical_rank,
                   NULL::bigint AS semantic_rank, NULL::bigint AS window_lexical_rank,
                   NULL::bigint AS window_semantic_rank, NULL::bigint AS topic_rank,
                   NULL::double precision AS distance, x.shared_words, NULL::bigint AS shared, x.replaced,
                   NULL::timestamptz AS recalled_at
            FROM (SELECT y.memory_id, y.lexical_score, y.shared_words, y.replaced FROM windowed AS y
                  WHERE y.lexical_score IS NOT NULL ORDER BY y.lexical_score DESC, y.memory_id LIMIT 100) AS x
            UNION ALL
            SELECT x.memory_id, NULL, row_number() OVER (ORDER BY x.distance, x.memory_id), NULL, NULL, NULL,
                   x.distance, NULL, NULL, x.replaced, NULL
            FROM (SELECT y.memory_id, y.distance, y.replaced FROM windowed AS y WHERE y.distance IS NOT NULL
                  ORDER BY y.distance, y.memory_id LIMIT 100) AS x
            UNION ALL
            SELECT x.memory_id, NULL, NULL, row_number() OVER (ORDER BY x.window_lexical DESC, x.memory_id), NULL, NULL,
                   NULL, NULL, NULL, NULL, NULL
            FROM (SELECT y.memory_id, y.window_lexical FROM windowed AS y WHERE y.window_lexical IS NOT NULL
                  ORDER BY y.window_lexical DESC, y.memory_id LIMIT 100) AS x
            UNION ALL
            SELECT x.memory_id, NULL, NULL, NULL, row_number() OVER (ORDER BY x.window_similarity DESC, x.memory_id),
                   NULL, NULL, NULL, NULL, NULL, NULL
            FROM (SELECT y.memory_id, y.window_similarity FROM windowed AS y WHERE y.window_similarity IS NOT NULL
                  ORDER BY y.window_similarity DESC, y.memory_id LIMIT 100) AS x
            UNION ALL
            SELECT x.memory_id, NULL, NULL, NULL, NULL,
                   row_number() OVER (ORDER BY x.shared DESC, x.created_at DESC, x.memory_id), NULL, NULL, x.shared,
                   x.replaced, NULL
            FROM (SELECT y.memory_id, y.shared, y.created_at, y.replaced FROM windowed AS y WHERE y.shared IS NOT NULL
                  ORDER BY y.shared DESC, y.created_at DESC, y.memory_id LIMIT 100) AS x
            UNION ALL
            SELECT x.memory_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, x.replaced, NULL FROM windowed AS x
            WHERE x.ring = ANY (p_protected) OR (v_candidates AND x.candidate_ring IS NOT NULL)
            UNION ALL
            -- Rehearsals not yet applied to memory_stats (sql/058-rehearsal.sql): the last recall restarts
            -- the clock. Aggregated with the pool, not joined to it: the generic plan, which cannot see how
            -- many rows either holds, joined them by a nested loop (3,000 by 4,500 rows: 1.5 s).
            SELECT r.memory_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, r.last_recalled_at
            FROM cogmem.pending_stats AS r WHERE r.tenant = t.tenant AND r.last_recalled_at IS NOT NULL
        ) AS c
        GROUP BY c.memory_id
        -- A memory only recalled before, and in no ranking now, is not in the pool.
        HAVING count(*) > count(c.recalled_at)
    ),
    pooled AS MATERIALIZED (
        SELECT x.*, p.lexical_rank, p.semantic_rank, p.window_lexical_rank, p.window_semantic_rank, p.topic_rank,
               p.distance AS best_distance, p.shared_words AS best_words, p.shared AS best_shared,
               p.replaced AS found_for, p.pending_recalled_at,
               -- Its statistics by a lookup per memory of the pool: joined, the generic plan read every
               -- memory's row of the tenant once per memory of the pool (a tenant of 500: 110,000 rows).
               (SELECT s FROM cogmem.memory_stats AS s WHERE s.tenant = t.tenant AND s.memory_id = x.memory_id) AS stats,
               -- The most probable candidates that fit the candidates' allocation are injected there (a turn
               -- shown with its date and speaker: ~10 tokens more), one too long for it skipped; the others
               -- compete in their ring. So does one that a newer memory possibly supersedes: asked about
               -- first, the old value ("alarm at 06:45") came before the new one in every recall.
               x.waiting AND x.shown_tokens <= a.allocation
               AND sum(x.shown_tokens) FILTER (WHERE x.waiting AND x.shown_tokens <= a.allocation)
                       OVER (ORDER BY x.candidate_p DESC NULLS LAST, x.memory_id)
                   <= a.allocation AS injected
        FROM pool AS p
        JOIN (SELECT y.*, y.token_estimate + CASE WHEN y.conversation IS NOT NULL THEN 10 ELSE 0 END AS shown_tokens,
                     y.candidate_ring IS NOT NULL AND y.superseded_by IS NULL AS waiting
              FROM windowed AS y WHERE y.replaced IS NULL) AS x ON x.memory_id = p.memory_id
        -- The candidates' allocation on this budget; none (NULL) for a tenant without the layer.
        LEFT JOIN scaled AS a ON a.layer::text = 'candidates'
    ),
    scored AS (
        -- A turn of a conversation in a learned ring competes with the other turns on relevance alone: a
        -- classifier, not a person, chose its ring, so its ring's priority would put a chat's stray
        -- "procedure" ahead of the evidence on every recall.
        SELECT x.memory_id, l.layer,
               CASE WHEN x.conversation IS NOT NULL AND l.layer::text <> 'candidates' AND NOT l.never_cut
                    THEN f.priority ELSE l.priority END AS priority,
               l.never_cut,
               CASE WHEN x.conversation IS NOT NULL AND l.layer::text <> 'candidates' AND NOT l.never_cut
                    THEN f.cumulative ELSE l.cumulative END AS cumulative,
               x.token_estimate, x.content, x.topics,
               x.conversation, x.said_at, x.speaker, x.candidate_ring, x.candidate_p, x.superseded_by, x.valid_until,
               -- An heir is judged by the best of its own signals and its proxy's (signals, above).
               x.lexical_rank, greatest(x.shared_words, x.best_words) AS shared_words, x.semantic_rank,
               x.window_lexical_rank, coalesce(x.best_shared, x.shared) IS NOT NULL AS on_topic,
               CASE WHEN x.semantic_rank IS NOT NULL THEN 1 - least(x.distance, x.best_distance) END AS similarity,
               x.found_for,
               cardinality(x.topics) = 0 OR cardinality(p_topics) = 0 AS untopical,
               -- A candidate rule waiting to be confirmed does not fade (sql/060-remember.sql).
               cogmem.strength(now() - coalesce(greatest(s.last_recalled_at, x.pending_recalled_at), x.created_at),
                               CASE WHEN s.reinforced OR x.candidate_ring IS NOT NULL THEN NULL ELSE l.half_life END)
                   AS strength,
               -- A turn ranks as itself and as its window (the mean of the two, so that a memory outside
               -- a conversation, whose window is itself, scores as it always did).
               (coalesce(t.lexical_weight / (t.fusion_k + x.lexical_rank), 0)
                + coalesce(t.lexical_weight / (t.fusion_k + x.window_lexical_rank), 0)
                + coalesce(t.vector_weight / (t.fusion_k + x.semantic_rank), 0)
                + coalesce(t.vector_weight / (t.fusion_k + x.window_semantic_rank), 0)) / 2
               + coalesce(t.topic_weight / (t.fusion_k + x.topic_rank), 0) AS fused,
               -- The people the message names, by what they said; the span of time it asks about.
               CASE WHEN x.speaker IS NOT NULL AND split_part(cogmem._fold(x.speaker), ' ', 1) = ANY (p_names)
                    THEN t.speaker_boost ELSE 1 END
               * CASE WHEN p_span @> coalesce(x.said_at, x.created_at)::date THEN 1.5 ELSE 1 END
               -- Superseded, or possibly: after what replaced it.
               * CASE WHEN x.superseded_by IS NOT NULL OR x.valid_until IS NOT NULL THEN 0.3 ELSE 1 END AS boost,
               s.confidence
        FROM pooled AS x
        CROSS JOIN LATERAL (SELECT (x.stats).*) AS s
        -- A candidate waiting for a person is in its own layer, where the tenant has one.
        JOIN layers AS l ON l.layer::text = CASE WHEN x.injected THEN 'candidates' ELSE x.ring::text END
        JOIN layers AS f ON f.layer = 'fresh'
        WHERE s.memory_id IS NOT NULL  -- none read: not one the policies let this role see
    ),
    qualified AS (
        SELECT sc.*,
               CASE
                   WHEN sc.never_cut THEN 'never cut'
                   WHEN sc.layer::text = 'candidates' THEN 'shown until a person confirms or dismisses it'
                   WHEN sc.on_topic THEN 'topic'  -- the topics are named below, for those kept only
                   -- A turn of a conversation is judged by its ranks: the budget keeps the best.
                   WHEN sc.conversation IS NOT NULL AND (sc.lexical_rank IS NOT NULL OR sc.similarity >= v_related_turn)
                       THEN 'related turn of a conversation'
                   WHEN sc.conversation IS NOT NULL AND sc.window_lexical_rank IS NOT NULL
                       THEN 'next to a related turn'
                   WHEN sc.untopical AND (sc.lexical_rank IS NOT NULL OR sc.similarity >= v_related)
                       THEN 'related, no topic to filter on'
                   WHEN sc.similarity >= t.topic_bypass_similarity THEN 'off-topic but similar enough on its own'
                   -- Most of the message: the full-text ranking holds the memories with its words.
                   WHEN sc.lexical_rank IS NOT NULL AND sc.shared_words >= greatest(2, 0.5 * cardinality(p_lexemes))
                       THEN 'off-topic but matches most of the message'
               END AS why,
               -- Long and matching in words: the part that matches (sql/070-recall.sql, _excerpt).
               CASE WHEN NOT sc.never_cut AND t.excerpt_above > 0 AND sc.token_estimate > t.excerpt_above
                         AND sc.lexical_rank IS NOT NULL
                    THEN cogmem._excerpt(sc.content, p_query, t.language) END AS excerpt
        FROM scored AS sc
    ),
    -- A newer memory about the same thing as one kept (close in meaning, said later) is kept with it,
    -- though it shares neither topic nor words with the message: "We use Pipedrive as our CRM" is kept for
    -- "Which CRM?", and so is the later "Just logged the call in HubSpot". Among the 10 best of each
    -- ranked layer and the 20 nearest to the message (about 4% of a recall of an indexed tenant of 10,000;
    -- 40 and 40 cost as much and kept no more of our updates); it is then placed before the older one.
    -- Not for turns of a conversation (their neighbours are close without replacing each other).
    -- Each side read once, with its vector and date: joined as they were, the older side was ranked again
    -- and its memories fetched again for every newer one.
    kept_older AS MATERIALIZED (
        SELECT o.memory_id, o.place, coalesce(m.said_at, m.created_at) AS said, m.embedding
        FROM (SELECT q.memory_id,
                     row_number() OVER (PARTITION BY q.layer
                                        ORDER BY q.fused * q.boost * q.confidence * q.strength DESC, q.memory_id) AS place
              FROM qualified AS q
              WHERE p_embedding IS NOT NULL AND q.why IS NOT NULL AND NOT q.never_cut AND q.conversation IS NULL
                AND q.layer::text <> 'candidates') AS o
        JOIN cogmem.memories AS m ON m.tenant = t.tenant AND m.memory_id = o.memory_id
        WHERE o.place <= 10
    ),
    near_newer AS MATERIALIZED (
        SELECT n.memory_id, coalesce(m.said_at, m.created_at) AS said, m.embedding
        FROM qualified AS n
        JOIN cogmem.memories AS m ON m.tenant = t.tenant AND m.memory_id = n.memory_id
        WHERE p_embedding IS NOT NULL AND n.why IS NULL AND n.semantic_rank <= 20 AND NOT n.never_cut
          AND n.conversation IS NULL AND n.layer::text <> 'candidates'
    ),
    followed AS (
        SELECT DISTINCT ON (f.memory_id) f.memory_id, f.older
        FROM (SELECT DISTINCT ON (o.memory_id) n.memory_id, o.memory_id AS older, o.place
              FROM near_newer AS n
              JOIN kept_older AS o ON n.said > o.said
                                  AND 1 - (o.embedding OPERATOR(public.<=>) n.embedding) >= v_same_thing
              ORDER BY o.memory_id, o.embedding OPERATOR(public.<=>) n.embedding, n.said DESC) AS f
        ORDER BY f.memory_id, f.place
    ),
    candidates AS (
        SELECT q.layer, q.priority, q.never_cut, q.cumulative, q.memory_id, NULL::bigint AS rule_id,
               w.shown, greatest(1, ceil(length(w.shown) / 4.0))::integer AS tokens,
               -- A candidate by how likely it is a rule or an incident; the others by relevance.
               CASE WHEN q.layer::text = 'candidates' THEN coalesce(q.candidate_p, 0)
                    ELSE (q.fused * q.boost * q.confidence * q.strength)::real END AS score,
               CASE WHEN q.why = 'topic' THEN 'topic ' || array_to_string(ARRAY(
                   SELECT DISTINCT t FROM unnest(q.topics) AS t WHERE t = ANY (p_topics) ORDER BY t), ',')
                    ELSE coalesce(q.why, 'newer, about the same thing as #' || fo.older) END AS why,
               nullif(concat_ws('; ', 'lexical #' || q.lexical_rank,
                                'vector #' || q.semantic_rank || ' (' || round(q.similarity::numeric, 2) || ')',
                                CASE WHEN q.boost > 1 THEN 'boost ' || round(q.boost::numeric, 1) END,
                                'unconfirmed ' || q.candidate_ring || ' candidate',
                                'found through #' || q.found_for || ', which it superseded',
                                CASE WHEN q.valid_until IS NOT NULL
                                     THEN 'superseded' || coalesce(' by #' || q.superseded_by, '') || ' on '
                                          || to_char(q.valid_until, 'YYYY-MM-DD')
                                     WHEN q.superseded_by IS NOT NULL
                                     THEN 'possibly superseded by #' || q.superseded_by END,
                                CASE WHEN q.excerpt IS NOT NULL THEN 'excerpt' END), '')
                   AS details,
               'strength ' || round(q.strength::numeric, 2) AS tail,
               -- What was said, without the date and speaker it is shown with (issue 51).
               coalesce(q.excerpt, q.content) AS said,
               q.valid_until IS NOT NULL AS superseded
        FROM qualified AS q
        LEFT JOIN followed AS fo ON fo.memory_id = q.memory_id
        -- A turn is shown with when and by whom it was said.
        -- A superseded memory, shown for a question about the past, says until when it held.
        CROSS JOIN LATERAL (SELECT CASE WHEN q.valid_until IS NOT NULL
                                        THEN '[until ' || to_char(q.valid_until, 'YYYY-MM-DD') || '] ' END AS until) AS u
        CROSS JOIN LATERAL (SELECT CASE WHEN q.conversation IS NULL THEN coalesce(u.until, '') || coalesce(q.excerpt, q.content)
                                        ELSE '[' || cogmem._when_said(q.content, q.said_at) || '] ' || coalesce(u.until, '')
                                             || coalesce(q.speaker || ': ', '') || coalesce(q.excerpt, q.content)
                                   END AS shown) AS w
        -- A memory faded below the floor is out of attention (never-cut rings do not decay).
        WHERE (q.why IS NOT NULL OR fo.older IS NOT NULL) AND q.strength >= t.recall_min_strength
        UNION ALL
        SELECT l.layer, l.priority, true, l.cumulative, NULL, r.rule_id, r.rule, r.token_estimate,
               ((CASE r.severity WHEN 'must' THEN 1.0 WHEN 'should' THEN 0.6 ELSE 0.3 END)
                * (1 + coalesce(ts_rank_cd(to_tsvector(t.language, r.rule), p_query), 0)))::real,
               CASE WHEN r.always_on THEN 'always-on BIOS rule'
                    ELSE 'BIOS ' || r.category || ' rule for topic '
                         || array_to_string(ARRAY(SELECT unnest(r.topics || r.category)
                                                  INTERSECT SELECT unnest(p_topics) ORDER BY 1), ',') END,
               concat_ws('; ', r.severity::text, r.requirement, 'never cut'),
               NULL, r.rule, false
        FROM cogmem.bios_rules_in_force AS r
        JOIN layers AS l ON l.layer = 'bios'
        WHERE r.tenant = t.tenant
          AND (r.always_on OR r.category = ANY (p_topics) OR r.topics && p_topics)
        UNION ALL
        -- Gut patterns (sql/068-gut.sql) on the message's topics or near it in meaning, for a tenant that
        -- receives them; the reason gives the release's noisy figures only, rounded. rule_id is the
        -- pattern's id for this layer.
        SELECT l.layer, l.priority, false, l.cumulative, NULL, g.pattern_id, g.content, g.token_estimate,
               (coalesce(g.similarity, s.match_similarity) * (0.5 + 0.5 * coalesce(g.success, 0.5)))::real,
               format('gut pattern: seen in about %s teams', round(g.support / 5.0) * 5)
               || coalesce(format(', success about %s', round(g.success::numeric, 1))
                           || coalesce(format(' (%s to %s)', round(g.success_low::numeric, 1), round(g.success_high::numeric, 1)), ''), ''),
               nullif(concat_ws('; ', 'vector (' || round(g.similarity::numeric, 2) || ')',
                                'topic ' || nullif(array_to_string(ARRAY(SELECT unnest(g.topics)
                                                                         INTERSECT SELECT unnest(p_topics) ORDER BY 1), ','), '')), ''),
               NULL, g.content, false
        -- A pattern's vector is compared only with a message of its model; others match it by topic.
        FROM (SELECT x.*, CASE WHEN x.embedding_model = t.embedding_model
                               THEN 1 - (x.embedding OPERATOR(public.<=>) p_embedding) END AS similarity
              FROM cogmem.gut_patterns AS x WHERE x.withdrawn_release IS NULL AND t.gut_receive) AS g
        -- The one settings row through its key: a disabled sequential scan would cost the whole query
        -- its plan (and a JIT compilation).
        JOIN cogmem.gut_settings AS s ON s.only_row
        JOIN layers AS l ON l.layer = 'gut'
        WHERE g.topics && p_topics OR g.similarity >= s.match_similarity
        UNION ALL
        -- Documents (sql/069-resources.sql), for a tenant that has added one (it has the layer); rule_id is
        -- the chunk's id for this layer.
        SELECT l.layer, l.priority, false, l.cumulative, NULL, rc.chunk_id, rc.shown, rc.tokens, rc.score, rc.why,
               NULL, NULL, rc.shown, false
        FROM layers AS l
        CROSS JOIN LATERAL cogmem._resource_candidates(t, p_embedding, p_lexemes, p_query, p_person, p_agent) AS rc
        WHERE l.layer::text = 'resources'
    ),
    -- Newer first: of two memories of a ranked layer about the same thing (close in meaning), the one said
    -- later is placed just before the earlier one when it ranks below it, so that a changed fact ("actually
    -- I moved") comes before what it changed even when no correction was detected (sql/036-supersession.sql).
    -- Both stay: two facts that both hold lose nothing. Among the few that can fit a budget only. A turn of
    -- a conversation only before a turn of its own that it says it corrects (cogmem._correction_marks: "wait
    -- no", "THURSDAY not tuesday", "10:15 değil"): turns are shown with when they were said, and neighbouring
    -- turns are close in meaning without replacing each other (all placed so, LoCoMo's evidence recall at
    -- 1,000 tokens fell from 0.75 to 0.60; placed by the looser cues of the supersession test, our Turkish
    -- conversations' fell from 0.80 to 0.63). An unconfirmed candidate (shown before every ranked layer) is
    -- followed so by any newer memory about the same thing: "Please call me on my landline", asked about as
    -- a possible rule, came before "Can you stop using the landline? Mobile only" in every recall; a newer
    -- candidate less probable than the older ("alarm at 07:20, not 06:45") is placed before it among the
    -- candidates. Not at a lower cosine: at recall's "related" (0.35 for MiniLM), newer memories pushed the
    -- answer out of small budgets (bench/run.py's facts among 400 memories: 57% to 50% at 60 tokens).
    top AS MATERIALIZED (
        SELECT r.memory_id, r.layer, r.priority, r.score, m.embedding, coalesce(m.said_at, m.created_at) AS said,
               m.conversation, m.content, k.owned, k.negated
        FROM (SELECT x.memory_id, x.layer, x.priority, x.score,
                     row_number() OVER (PARTITION BY x.layer ORDER BY x.score DESC, x.memory_id) AS place
              FROM candidates AS x
              WHERE x.memory_id IS NOT NULL AND NOT x.never_cut) AS r
        JOIN cogmem.memories AS m ON m.tenant = t.tenant AND m.memory_id = r.memory_id
        -- Strict: not called at all for the turns without a word it looks for, nor for other memories.
        LEFT JOIN LATERAL cogmem._correction_marks(
            CASE WHEN m.conversation IS NOT NULL AND cogmem._may_correct(m.content) THEN m.content END) AS k ON true
        WHERE r.place <= 40 AND p_embedding IS NOT NULL
    ),
    -- One newer memory per older one, the closest to it: each memory about the same thing jumped the queue
    -- before (bench/run.py's facts among 400 memories, 43% lost from a budget of 60 tokens that kept 97%
    -- of them ranked by the vector alone).
    placed AS (
        SELECT DISTINCT ON (p.memory_id) p.memory_id, p.older, p.priority, p.score, p.corrects
        FROM (SELECT DISTINCT ON (x.older) x.*
              FROM (SELECT n.memory_id, o.memory_id AS older, o.priority, o.score, n.said,
                           o.embedding OPERATOR(public.<=>) n.embedding AS distance, false AS corrects
                    FROM top AS n
                    JOIN top AS o ON o.said < n.said AND n.conversation IS NULL AND o.conversation IS NULL
                                 AND cogmem._placeable(o.layer, o.score, n.layer, n.score)
                                 AND 1 - (o.embedding OPERATOR(public.<=>) n.embedding) >= v_same_thing
                    UNION ALL
                    -- A turn before a turn of its conversation that it says it corrects: one whose value it
                    -- negates, or, for a mistake owned, one it replaces by the supersession test; of the three
                    -- closest to it that rank above it (every pair tested made a Turkish chat's recall seven
                    -- times as long).
                    -- The negated value is test enough: "bu hafta salı değil çarşamba" is a one-off to the
                    -- test, and the answer to "which day this week?".
                    SELECT n.memory_id, o.memory_id, o.priority, o.score, n.said, o.distance, true
                    FROM (SELECT * FROM top WHERE owned OR negated <> '{}') AS n
                    CROSS JOIN LATERAL (
                        SELECT c.*, c.embedding OPERATOR(public.<=>) n.embedding AS distance
                        FROM top AS c
                        WHERE c.conversation = n.conversation AND c.said < n.said
                          AND cogmem._placeable(c.layer, c.score, n.layer, n.score)
                        ORDER BY c.embedding OPERATOR(public.<=>) n.embedding
                        LIMIT 3) AS o
                    WHERE n.negated && ARRAY(SELECT cogmem._value_key(v) FROM unnest(cogmem._values(o.content)) AS v)
                       OR n.owned AND (cogmem._supersession(o.content, n.content, (1 - o.distance)::real,
                                                            t.language, t.embedding_model)).score IS NOT NULL) AS x
              ORDER BY x.older, x.distance, x.said DESC) AS p
        ORDER BY p.memory_id, p.priority, p.score DESC
    )
    -- One sort, then aggregates in that order (an ORDER BY per aggregate would sort ten times).
    SELECT array_agg(c.layer), array_agg(c.memory_id), array_agg(c.rule_id),
           array_agg(c.tokens::integer), array_agg(c.cumulative),
           array_agg(c.never_cut), array_agg(c.score), array_agg(c.shown),
           array_agg(concat_ws('; ', c.why, c.details,
                               CASE WHEN c.corrects THEN 'corrects #' ELSE 'said after #' END || c.older
                               || ', placed before it')),
           array_agg(c.tail), array_agg(c.said)
    -- Within a priority the never-cut layers first: the candidates share the last never-cut ring's. A
    -- superseded memory (only for a question about the past) after every other, so after what replaced it
    -- whatever layer that went to.
    FROM (SELECT x.*, p.older, p.corrects FROM candidates AS x LEFT JOIN placed AS p ON p.memory_id = x.memory_id
          ORDER BY x.superseded, coalesce(p.priority, x.priority), x.never_cut DESC, coalesce(p.score, x.score) DESC,
                   p.older IS NULL, x.memory_id, x.rule_id) AS c;
END;
$$;
COMMENT ON FUNCTION cogmem._recall_candidates(
    cogmem.tenants, integer, bigint, cogmem.ring[], text[], public.vector, text[], tsquery, text[], daterange, text, text,
    boolean
) IS
'The memories and BIOS rules a recall may inject, scored and explained, with their layer''s budget share: '
'one array per field, in injection order. Turns of a conversation rank with their neighbours, are boosted '
'for the people and the span of time the message names, and are shown with when and by whom they were said. '
'Only memories the scope (p_person, p_agent) sees are candidates; superseded ones only when p_history (a '
'question about the past), after the rest.';

-- Longer than a screen for its declarations: a cycle is carried as arrays, one per field, from the
-- candidates (_recall_candidates) through the fill (_fill_budget) and the notes to the log (_log_recall).
DROP FUNCTION IF EXISTS cogmem.recall(text, text, public.vector, text[], bigint, text);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem.recall(
    tenant text,
    message text,
    embedding public.vector DEFAULT NULL,
    topics text[] DEFAULT NULL,
    budget bigint DEFAULT 3200,
    conversation text DEFAULT NULL,
    person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS TABLE (
    recall_id uuid, layer text, memory_id bigint, content text, tokens integer, score real, reason text,
    rule_id bigint, text text
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Every statement here reads one tenant's rows through an index. A session keeps its plans, and a
-- plan made while the table was nearly empty scans all of it, at a cost that grows with the table.
SET enable_seqscan = off
-- One plan per statement for the session: re-planning the ranking query for each call's tenant cost
-- more than running it (docs/scaling.md).
SET plan_cache_mode = force_generic_plan
-- The plans it was measured with.
SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
DECLARE
    v_tenant      text := recall.tenant;
    v_person      text;  -- the scope (sql/015-scopes.sql)
    v_agent       text;
    v_budget      integer;  -- recall.budget once it is known to fit
    v_recall_id   uuid;
    v_language    regconfig;
    t             cogmem.tenants;
    v_topics      text[];
    v_embedding   public.vector;
    v_lexemes     text[];
    v_query       tsquery;
    v_names       text[];
    v_total_alloc bigint;
    v_protected   cogmem.ring[];
    v_used        integer := 0;
    v_core        text;
    v_core_version integer;
    v_core_tokens integer := 0;
    v_linked      bigint[];
    v_noted       bigint[];
    v_picked_ids  bigint[];
    -- Every candidate in injection order (c_*), then the positions of those that fit.
    c_layers      cogmem.layer[];
    c_memory_ids  bigint[];
    c_rule_ids    bigint[];
    c_tokens      integer[];
    c_cumulative  integer[];
    c_never_cut   boolean[];
    c_scores      real[];
    c_contents    text[];
    c_heads       text[];
    c_tails       text[];
    c_texts       text[];
    v_picked      integer[];
    v_over        integer[];
    v_beyond      integer[];
    -- What was injected, in order.
    v_layers      cogmem.layer[];
    v_memory_ids  bigint[];
    v_rule_ids    bigint[];
    v_scores      real[];
    v_tokens      integer[];
    v_contents    text[];
    v_reasons     text[];
    v_audit_reasons text[];
    v_texts       text[];
BEGIN
    v_language := cogmem._require_tenant(v_tenant);
    PERFORM cogmem._require_scope(v_tenant, recall.person, recall.agent);
    v_person := btrim(recall.person);
    v_agent := btrim(recall.agent);
    v_recall_id := cogmem._keyed_uuid(v_tenant);  -- routable without the tenant (sql/001-ids.sql)
    PERFORM cogmem._lock_tenant(v_tenant, false);
    IF recall.message IS NULL THEN
        RAISE EXCEPTION 'message must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass what was said; '''' recalls by topics only.';
    END IF;
    IF recall.budget IS NULL OR recall.budget <= 0 OR recall.budget > 1000000 THEN
        RAISE EXCEPTION 'budget must be between 1 and 1000000 tokens, got %', coalesce(recall.budget::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The default is 3200 tokens.';
    END IF;
    v_budget := recall.budget;
    PERFORM cogmem._check_embedding(recall.embedding);

    t := cogmem._tenant_settings(v_tenant, recall.conversation);
    PERFORM cogmem._check_limits(t, recall.topics, '{}');
    SELECT sum(l.token_allocation),
           coalesce(array_agg(l.layer::text::cogmem.ring) FILTER (WHERE l.never_cut AND l.layer NOT IN ('bios', 'gut')), '{}')
    INTO v_total_alloc, v_protected
    FROM cogmem.tenant_layers AS l WHERE l.tenant = v_tenant;
    v_topics := coalesce(cogmem._normalize_topics(recall.topics),
                         cogmem._detect_topics(v_tenant, recall.message, v_language));
    v_embedding := cogmem._embedding(v_tenant, recall.embedding, recall.message, true);
    -- A new message of a conversation is also the reply to its last recall's answer (sql/059-followup.sql).
    PERFORM cogmem._judge_turn(v_tenant, recall.conversation, NULL, recall.message, v_embedding, NULL, recall.person,
                               recall.agent);
    v_lexemes := coalesce(tsvector_to_array(to_tsvector(v_language, recall.message)), '{}');
    v_query := cogmem._or_query(v_lexemes);
    -- The message's words as a speaker's name is matched (folded, "Elif'in" is Elif).
    v_names := regexp_split_to_array(cogmem._fold(recall.message), '[^a-z0-9çğıöşüâîû]+');
    -- The core identity (sql/055-identity.sql) comes first and is always injected: small by design, it
    -- takes its tokens before any layer.
    SELECT c.version, cogmem._core_text(c) INTO v_core_version, v_core
    FROM cogmem.core_identity AS c WHERE c.tenant = v_tenant ORDER BY c.version DESC LIMIT 1;
    IF v_core IS NOT NULL THEN
        v_core_tokens := greatest(1, ceil(length(v_core) / 4.0))::integer;
        v_used := v_core_tokens;
    END IF;

    SELECT * INTO c_layers, c_memory_ids, c_rule_ids, c_tokens, c_cumulative, c_never_cut, c_scores, c_contents,
                  c_heads, c_tails, c_texts
    FROM cogmem._recall_candidates(t, v_budget, v_total_alloc, v_protected, v_topics, v_embedding, v_lexemes,
                                   v_query, v_names, cogmem._asked_span(recall.message, now()), v_person, v_agent,
                                   cogmem._asks_history(recall.message));

    SELECT f.picked, f.over, f.beyond, f.used INTO v_picked, v_over, v_beyond, v_used
    FROM cogmem._fill_budget(c_tokens, c_cumulative, c_never_cut, v_budget, v_used) AS f;

    -- The few memories that have siblings: only they need a sibling note.
    SELECT coalesce(array_agg(l.memory_id) || array_agg(l.sibling_id), '{}') INTO v_linked
    FROM cogmem.memory_siblings AS l WHERE l.tenant = v_tenant;
    v_picked_ids := ARRAY(SELECT c_memory_ids[p.i] FROM unnest(v_picked) AS p (i) WHERE c_memory_ids[p.i] IS NOT NULL);
    v_noted := ARRAY(SELECT m.id FROM unnest(v_picked_ids) AS m (id) WHERE m.id = ANY (v_linked));
    WITH notes AS (
        SELECT * FROM cogmem._recall_notes(v_tenant, v_picked_ids, v_noted)
    ),
    picked AS (
        SELECT p.n, c_layers[p.i] AS layer, c_memory_ids[p.i] AS memory_id, c_rule_ids[p.i] AS rule_id,
               c_tokens[p.i] AS tokens, c_scores[p.i] AS score, c_contents[p.i] AS content, c_heads[p.i] AS head,
               c_texts[p.i] AS said, n.sibling_note, n.dispute,
               nullif(concat_ws('; ', c_tails[p.i], CASE
                   WHEN p.beyond IS NOT NULL THEN format(
                       'over the whole budget by %s tokens: the never-cut layers exceed it', p.beyond)
                   WHEN p.over IS NOT NULL THEN format(
                       'over the budget up to this layer by %s tokens, taken from later layers', p.over) END), '')
                   AS tail
        FROM unnest(v_picked, v_over, v_beyond) WITH ORDINALITY AS p (i, over, beyond, n)
        LEFT JOIN notes AS n ON n.memory_id = c_memory_ids[p.i]
    )
    SELECT array_agg(p.layer), array_agg(p.memory_id), array_agg(p.rule_id), array_agg(p.score), array_agg(p.tokens),
           array_agg(p.content), array_agg(concat_ws('; ', p.head, p.dispute, p.sibling_note, p.tail)),
           -- The audit says that siblings were mentioned, not their details (which quote content).
           array_agg(concat_ws('; ', p.head, p.dispute,
                               CASE WHEN p.sibling_note IS NOT NULL THEN 'siblings mentioned' END, p.tail)),
           array_agg(p.said)
    INTO v_layers, v_memory_ids, v_rule_ids, v_scores, v_tokens, v_contents, v_reasons, v_audit_reasons, v_texts
    FROM (SELECT * FROM picked ORDER BY n) AS p;
    v_layers := coalesce(v_layers, '{}');
    v_memory_ids := coalesce(v_memory_ids, '{}');

    RETURN QUERY
    SELECT v_recall_id, 'core', NULL::bigint, v_core, v_core_tokens, 1::real,
           format('core identity v%s, always injected', v_core_version), NULL::bigint, v_core
    WHERE v_core IS NOT NULL;
    RETURN QUERY
    SELECT v_recall_id, i.layer::text, i.memory_id, i.content, i.tokens, i.score, i.reason, i.rule_id, i.said
    FROM unnest(v_layers, v_memory_ids, v_contents, v_tokens, v_scores, v_reasons, v_rule_ids, v_texts)
         WITH ORDINALITY AS i (layer, memory_id, content, tokens, score, reason, rule_id, said, n)
    ORDER BY i.n;

    PERFORM cogmem._log_recall(v_tenant, v_recall_id, recall.conversation, recall.message, v_topics, v_budget,
                               v_used, v_core_version, v_layers, v_memory_ids, v_rule_ids, v_scores, v_tokens,
                               v_reasons, v_audit_reasons, v_embedding, v_person, v_agent);
    -- A recall that injects nothing returns no row, yet is logged and may get feedback: its id stays in
    -- the session (current_setting('cogmem.last_recall_id')), where the client reads it.
    PERFORM pg_catalog.set_config('cogmem.last_recall_id', v_recall_id::text, false);
END;
$$;
COMMENT ON FUNCTION cogmem.recall(text, text, public.vector, text[], bigint, text, text, text) IS
'Budgeted, ring-structured, topic-filtered recall. Returns what to inject (content, as shown: a turn with '
'its date and speaker), with layer, tokens, score and reason, and text: what was said, unformatted; logs '
'the cycle under recall_id for cogmem.feedback() and audit. person and agent scope it '
'(sql/015-scopes.sql): the tenant''s shared memories, the person''s and the agent''s; never another person''s.';

-- Never-cut rings are injected whole into every recall, so what a tenant keeps there is paid by every
-- recall: a ring beyond its allocation takes budget from the learned layers (and, past the budget,
-- exceeds it). Listed here and by every night, so a person can review what got in.
CREATE OR REPLACE VIEW cogmem.never_cut_overflow WITH (security_invoker = TRUE) AS
SELECT
    m.tenant,
    m.ring::text AS layer,
    count(*)::integer AS memories,
    sum(m.token_estimate)::integer AS tokens,
    l.token_allocation AS allocation,
    (sum(m.token_estimate) - l.token_allocation)::integer AS over
FROM cogmem.memories AS m
INNER JOIN cogmem.tenant_layers AS l ON m.tenant = l.tenant AND m.ring::text = l.layer::text
WHERE l.never_cut
GROUP BY m.tenant, m.ring, l.token_allocation
HAVING sum(m.token_estimate) > l.token_allocation;
COMMENT ON VIEW cogmem.never_cut_overflow IS
'Tenants whose never-cut rings (injected whole into every recall) hold more tokens than the ring''s '
'allocation of the default 3,200-token budget: memories, tokens, allocation and the excess.';

-- What each recall injected, item by item (the arrays of cogmem.recalls zipped back; migration 0011).
CREATE OR REPLACE VIEW cogmem.recall_items WITH (security_invoker = TRUE) AS
SELECT
    r.tenant,
    r.recall_id,
    i.position::integer AS position,
    i.layer,
    i.memory_id,
    i.rule_id,
    i.score,
    i.tokens,
    i.reason
FROM cogmem.recalls AS r
CROSS JOIN
    LATERAL unnest(
        r.item_layers, r.item_memory_ids, r.item_rule_ids, r.item_scores, r.item_tokens, r.item_reasons
    ) WITH ORDINALITY AS i (layer, memory_id, rule_id, score, tokens, reason, position);
COMMENT ON VIEW cogmem.recall_items IS
'What each recall injected, in order (position from 1), with layer, score, tokens and reason.';

-- Before 0014 feedback credited every injected memory; it now takes the memories the answer used.
DROP FUNCTION IF EXISTS cogmem.feedback(uuid, double precision);
DROP FUNCTION IF EXISTS cogmem.feedback(uuid, real);

CREATE OR REPLACE FUNCTION cogmem.feedback(recall_id uuid, outcome real, used bigint[] DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_tenant text;
    v_used   bigint[] := feedback.used;
BEGIN
    IF feedback.recall_id IS NULL THEN
        RAISE EXCEPTION 'recall_id must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the recall_id that cogmem.recall() returned.';
    END IF;
    IF feedback.outcome IS NULL OR NOT (feedback.outcome BETWEEN 0 AND 1) THEN
        RAISE EXCEPTION 'outcome must be between 0 and 1, got %', coalesce(feedback.outcome::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = '1 = the recalled memories helped, 0 = they did not.';
    END IF;
    SELECT r.tenant INTO v_tenant FROM cogmem.recalls AS r WHERE r.recall_id = feedback.recall_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown recall %', feedback.recall_id
            USING ERRCODE = 'no_data_found', HINT = 'Pass a recall_id returned by cogmem.recall().';
    END IF;
    PERFORM cogmem._require_tenant(v_tenant);
    -- A failure without used is charged to what the answer most likely rested on, the recall's best match
    -- among the ranked memories (as an implicit outcome is, sql/059-followup.sql): charged to everything
    -- injected, one bad answer weakened 8 to 32 memories, most of them innocent.
    IF v_used IS NULL AND feedback.outcome < 0.5 THEN
        v_used := cogmem._implicit_credit(v_tenant, feedback.recall_id, 'failed', NULL, NULL);
    END IF;
    -- Explicit: it replaces an implicit outcome read from the next turn, and none replaces it.
    RETURN cogmem._record_outcome(v_tenant, feedback.recall_id, feedback.outcome, v_used, 'explicit', 1);
END;
$$;
COMMENT ON FUNCTION cogmem.feedback(uuid, real, bigint[]) IS
'Records the outcome (0..1) of a recall cycle and credits the memories it injected, or only those of them '
'named in used (the ones the answer relied on); a failure (below 0.5) without used is charged to the best '
'match among the ranked memories only. success_score = mean outcome of the cycles a memory was credited in; '
'repeated feedback replaces. Returns the number of memories credited.';

-- Drivers send floating-point parameters as double precision, which PostgreSQL will not narrow to real
-- on its own when it picks a function: this overload accepts them.
CREATE OR REPLACE FUNCTION cogmem.feedback(recall_id uuid, outcome double precision, used bigint[] DEFAULT NULL)
RETURNS integer
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$ SELECT cogmem.feedback($1, $2::real, $3) $$;
COMMENT ON FUNCTION cogmem.feedback(uuid, double precision, bigint[]) IS
'cogmem.feedback(recall_id, outcome real, used) for double precision outcomes (what drivers send for a float).';

-- The same with the tenant named first. A caller bound to one tenant (the MCP server, a router in front of
-- shards) passes it, and a recall of another tenant the login may also reach is refused as a missing one.
-- Definer: the check reads cogmem.recalls, which application roles cannot.
DROP FUNCTION IF EXISTS cogmem.feedback(text, uuid, real, bigint[]);  -- before 0038: no agent
DROP FUNCTION IF EXISTS cogmem.feedback(text, uuid, double precision, bigint[]);
CREATE OR REPLACE FUNCTION cogmem.feedback(
    tenant text, recall_id uuid, outcome real, used bigint[] DEFAULT NULL, agent text DEFAULT NULL
)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(feedback.tenant);
    PERFORM cogmem._require_names(NULL, feedback.agent);
    -- A caller bound to an agent gives feedback on that agent's recalls only (others are unknown to it).
    IF NOT EXISTS (SELECT FROM cogmem.recalls AS r
                   WHERE r.tenant = feedback.tenant AND r.recall_id = feedback.recall_id
                     AND (feedback.agent IS NULL OR r.agent IS NULL OR r.agent = btrim(feedback.agent))) THEN
        RAISE EXCEPTION 'unknown recall % in tenant "%"', coalesce(feedback.recall_id::text, 'NULL'), feedback.tenant
            USING ERRCODE = 'no_data_found', HINT = 'Pass a recall_id that cogmem.recall() returned for this tenant.';
    END IF;
    RETURN cogmem.feedback(feedback.recall_id, feedback.outcome, feedback.used);
END;
$$;
COMMENT ON FUNCTION cogmem.feedback(text, uuid, real, bigint[], text) IS
'feedback(recall_id, outcome, used) for a recall of the named tenant (and agent, when one is given); another '
'tenant''s (or agent''s) recall is unknown.';

CREATE OR REPLACE FUNCTION cogmem.feedback(
    tenant text, recall_id uuid, outcome double precision, used bigint[] DEFAULT NULL, agent text DEFAULT NULL
)
RETURNS integer
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$ SELECT cogmem.feedback($1, $2, $3::real, $4, $5) $$;
COMMENT ON FUNCTION cogmem.feedback(text, uuid, double precision, bigint[], text) IS
'cogmem.feedback(tenant, recall_id, outcome real, used) for double precision outcomes.';
