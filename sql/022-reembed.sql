-- Re-embedding a tenant into another model's vector space (issue 47), online. A tenant has one vector
-- space (tenants.embedding_model); changing the model means making every vector again:
--   reembed_begin   records the re-embedding (from the tenant's model to another);
--   reembed_pending the texts still to embed, in (kind, id) order, a batch at a time (resumable: a batch
--                   already put is not pending again, unless its text changed since);
--   reembed_put     the new vectors of a batch, beside the old ones (recall goes on reading the old);
--   reembed_finish  with the tenant held as a night holds it, the swap in one transaction: every vector
--                   at once, and the model. Texts written meanwhile are counted, not swapped: embed them
--                   and finish again.
-- The vectors are made where the model is, by the client (cogmem reembed, Client.reembed): a managed
-- server without PL/Python can be re-embedded too.

-- A tenant's texts of one kind that have no new vector yet (or one made from a text changed since), as
-- each is embedded: memories, the chunks of resources (title § heading, then the chunk, as
-- sql/069-resources.sql embeds them), sensory turns and held conflicts. One kind at a time, each an index
-- range of its primary key after the cursor: a batch costs its own size, not the tenant's.
CREATE OR REPLACE FUNCTION cogmem._reembed_texts(p_tenant text, p_kind text, p_after bigint, p_limit integer)
RETURNS TABLE (kind text, id bigint, content text)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT p_kind, x.id, x.content
    FROM (
        SELECT c.chunk_id AS id,
               concat_ws(E'\n', btrim(r.title) || coalesce(' § ' || nullif(c.heading, ''), ''), c.content) AS content
        FROM cogmem.resource_chunks AS c
        JOIN cogmem.resources AS r ON r.tenant = c.tenant AND r.resource_id = c.resource_id
        WHERE p_kind = 'chunk' AND c.tenant = p_tenant AND c.chunk_id > p_after
        UNION ALL
        SELECT f.conflict_id, f.content FROM cogmem.conflicts AS f
        WHERE p_kind = 'conflict' AND f.tenant = p_tenant AND f.conflict_id > p_after
        UNION ALL
        SELECT m.memory_id, m.content FROM cogmem.memories AS m
        WHERE p_kind = 'memory' AND m.tenant = p_tenant AND m.memory_id > p_after
        UNION ALL
        SELECT s.turn_id, s.content FROM cogmem.sensory_turns AS s
        WHERE p_kind = 'turn' AND s.tenant = p_tenant AND s.turn_id > p_after
    ) AS x
    WHERE NOT EXISTS (SELECT FROM cogmem.reembedded_vectors AS v
                      WHERE v.tenant = p_tenant AND v.kind = p_kind AND v.id = x.id
                        AND v.text_md5 = md5(x.content)::uuid)
    ORDER BY x.id
    LIMIT p_limit;
END;
$$;
COMMENT ON FUNCTION cogmem._reembed_texts(text, text, bigint, integer) IS
'A tenant''s texts of one kind (chunk, conflict, memory, turn) after an id, in id order, as each is '
'embedded, that have no new vector of the re-embedding yet (or one of a text changed since).';

-- The re-embedding under way for a tenant, or an error that says how to start one.
CREATE OR REPLACE FUNCTION cogmem._reembedding(p_tenant text)
RETURNS cogmem.reembeddings
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    r cogmem.reembeddings;
BEGIN
    SELECT * INTO r FROM cogmem.reembeddings AS x WHERE x.tenant = p_tenant;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'tenant "%" has no re-embedding under way', p_tenant
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Start one: SELECT * FROM cogmem.reembed_begin(tenant, model); (or cogmem reembed TENANT --model M)';
    END IF;
    RETURN r;
END;
$$;
COMMENT ON FUNCTION cogmem._reembedding(text) IS
'The tenant''s re-embedding under way; raises object_not_in_prerequisite_state when there is none.';

CREATE OR REPLACE FUNCTION cogmem.reembed_progress(tenant text)
RETURNS TABLE (from_model text, to_model text, started_at timestamptz, done bigint, total bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it counts the tenant's vectors to be, which only the API's owner reads; an administrator first.
AS $$
DECLARE
    r cogmem.reembeddings;
BEGIN
    PERFORM cogmem._require_admin(reembed_progress.tenant);
    r := cogmem._reembedding(reembed_progress.tenant);
    RETURN QUERY
    SELECT r.from_model, r.to_model, r.started_at,
           (SELECT count(*) FROM cogmem.reembedded_vectors AS v WHERE v.tenant = r.tenant),
           (SELECT count(*) FROM cogmem.memories AS m WHERE m.tenant = r.tenant)
           + (SELECT count(*) FROM cogmem.resource_chunks AS c WHERE c.tenant = r.tenant)
           + (SELECT count(*) FROM cogmem.sensory_turns AS s WHERE s.tenant = r.tenant)
           + (SELECT count(*) FROM cogmem.conflicts AS f WHERE f.tenant = r.tenant);
END;
$$;
COMMENT ON FUNCTION cogmem.reembed_progress(text) IS
'A tenant''s re-embedding under way: from which model to which, since when, vectors made and texts in all.';

CREATE OR REPLACE FUNCTION cogmem.reembed_begin(tenant text, model text)
RETURNS TABLE (from_model text, to_model text, started_at timestamptz, done bigint, total bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it records the re-embedding, which only the API's owner writes; an administrator first.
AS $$
DECLARE
    v_tenant text := reembed_begin.tenant;
    v_from   text;
    v_under  text;
BEGIN
    PERFORM cogmem._require_admin(v_tenant);
    PERFORM cogmem._check_model_name(reembed_begin.model);
    SELECT t.embedding_model INTO v_from FROM cogmem.tenants AS t WHERE t.tenant = v_tenant;
    SELECT r.to_model INTO v_under FROM cogmem.reembeddings AS r WHERE r.tenant = v_tenant;
    IF v_under IS NOT NULL AND v_under <> reembed_begin.model THEN
        RAISE EXCEPTION 'tenant "%" is already being re-embedded with %', v_tenant, v_under
            USING ERRCODE = 'object_in_use',
                  HINT = 'Finish it, or cancel it first: SELECT cogmem.reembed_cancel(tenant);';
    END IF;
    IF v_under IS NULL AND v_from = reembed_begin.model THEN
        RAISE EXCEPTION 'tenant "%" is already embedded with %', v_tenant, v_from
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Nothing to do: its vectors are of that model.';
    END IF;
    -- The same model again resumes: the vectors already put are kept.
    INSERT INTO cogmem.reembeddings AS r (tenant, from_model, to_model) VALUES (v_tenant, v_from, reembed_begin.model)
    ON CONFLICT ON CONSTRAINT reembeddings_pkey DO NOTHING;
    RETURN QUERY SELECT * FROM cogmem.reembed_progress(v_tenant);
END;
$$;
COMMENT ON FUNCTION cogmem.reembed_begin(text, text) IS
'Starts re-embedding a tenant with another model (or resumes the one under way with that model); returns '
'its progress. The tenant is recalled with its old vectors until reembed_finish.';

CREATE OR REPLACE FUNCTION cogmem.reembed_pending(
    tenant text, "limit" bigint DEFAULT 256, after_kind text DEFAULT NULL, after_id bigint DEFAULT NULL
)
RETURNS TABLE (kind text, id bigint, content text, text_md5 uuid)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it reads the tenant's texts for their new vectors; an administrator first.
AS $$
DECLARE
    v_kind text;
    v_left bigint := reembed_pending."limit";
    v_got  integer;
BEGIN
    PERFORM cogmem._require_admin(reembed_pending.tenant);
    PERFORM cogmem._reembedding(reembed_pending.tenant);
    IF v_left IS NULL OR v_left NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'limit must be 1 to 10000, not %', coalesce(v_left::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Batches of 64 to 512 texts suit most embedders.';
    END IF;
    -- Kinds in name order; within one, ids after the last one seen (the caller's cursor).
    FOREACH v_kind IN ARRAY ARRAY['chunk', 'conflict', 'memory', 'turn'] LOOP
        CONTINUE WHEN after_kind IS NOT NULL AND v_kind < after_kind;
        RETURN QUERY
        SELECT x.kind, x.id, x.content, md5(x.content)::uuid
        FROM cogmem._reembed_texts(reembed_pending.tenant, v_kind,
                                   CASE WHEN v_kind = after_kind THEN coalesce(after_id, 0) ELSE 0 END, v_left::integer) AS x;
        GET DIAGNOSTICS v_got = ROW_COUNT;
        v_left := v_left - v_got;
        EXIT WHEN v_left = 0;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION cogmem.reembed_pending(text, bigint, text, bigint) IS
'The next texts of a re-embedding to embed (kind, id, content, digest), after the cursor (after_kind, '
'after_id) when given; texts whose vector was put and has not changed since are skipped.';

CREATE OR REPLACE FUNCTION cogmem.reembed_put(
    tenant text, model text, kinds text[], ids bigint[], text_md5s uuid[], embeddings public.vector[]
)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes the new vectors, which only the API's owner may; an administrator first.
AS $$
DECLARE
    r       cogmem.reembeddings;
    v_count integer := cardinality(reembed_put.ids);
    v_put   bigint;
BEGIN
    PERFORM cogmem._require_admin(reembed_put.tenant);
    r := cogmem._reembedding(reembed_put.tenant);
    IF reembed_put.model IS DISTINCT FROM r.to_model THEN
        RAISE EXCEPTION 'tenant "%" is being re-embedded with %, these vectors are of %', r.tenant, r.to_model,
                        coalesce(reembed_put.model, 'NULL')
            USING ERRCODE = 'data_exception', HINT = format('Embed with %s, or cancel and begin again.', r.to_model);
    END IF;
    IF v_count IS NULL OR cardinality(reembed_put.kinds) IS DISTINCT FROM v_count
       OR cardinality(reembed_put.text_md5s) IS DISTINCT FROM v_count
       OR cardinality(reembed_put.embeddings) IS DISTINCT FROM v_count THEN
        RAISE EXCEPTION 'kinds, ids, text_md5s and embeddings must be arrays of one length'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'One element per row of cogmem.reembed_pending(), in any order.';
    END IF;
    PERFORM cogmem._check_embedding(e) FROM unnest(reembed_put.embeddings) AS e;
    INSERT INTO cogmem.reembedded_vectors AS v (tenant, kind, id, text_md5, embedding)
    SELECT r.tenant, x.kind, x.id, x.text_md5, x.embedding
    FROM unnest(reembed_put.kinds, reembed_put.ids, reembed_put.text_md5s, reembed_put.embeddings)
         AS x (kind, id, text_md5, embedding)
    ON CONFLICT ON CONSTRAINT reembedded_vectors_pkey DO UPDATE
    SET text_md5 = excluded.text_md5, embedding = excluded.embedding;
    GET DIAGNOSTICS v_put = ROW_COUNT;
    RETURN v_put;
END;
$$;
COMMENT ON FUNCTION cogmem.reembed_put(text, text, text[], bigint[], uuid[], public.vector[]) IS
'Keeps the new model''s vectors of texts reembed_pending() gave (kind, id and digest as it gave them); '
'returns how many. Refuses vectors of another model than the re-embedding''s.';

-- The swap: every vector of the tenant, the Gut's copies of its memories' vectors, and its model, in one
-- transaction, with the tenant held as a night holds it (day calls wait, at most cogmem.lock_wait). The
-- recalls' question vectors, which the follow-up judge compares the next turn with, are of the old model:
-- they are dropped (the judge then reads the turn alone, as for a recall without one).
CREATE OR REPLACE FUNCTION cogmem.reembed_finish(tenant text)
RETURNS TABLE (finished boolean, model text, remaining bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it rewrites the tenant's vectors and its model, which only the API's owner may; an administrator first.
AS $$
DECLARE
    r      cogmem.reembeddings;
    v_left bigint := 0;
    v_kind text;
BEGIN
    PERFORM cogmem._require_admin(reembed_finish.tenant);
    r := cogmem._reembedding(reembed_finish.tenant);
    PERFORM cogmem._lock_tenant(r.tenant, true);
    FOREACH v_kind IN ARRAY ARRAY['chunk', 'conflict', 'memory', 'turn'] LOOP
        v_left := v_left + (SELECT count(*) FROM cogmem._reembed_texts(r.tenant, v_kind, 0, 2147483647));
    END LOOP;
    IF v_left > 0 THEN  -- written since the last batch: the caller embeds them and finishes again
        RETURN QUERY SELECT false, r.from_model, v_left;
        RETURN;
    END IF;
    UPDATE cogmem.memories AS m SET embedding = v.embedding FROM cogmem.reembedded_vectors AS v
    WHERE v.tenant = r.tenant AND v.kind = 'memory' AND m.tenant = r.tenant AND m.memory_id = v.id;
    UPDATE cogmem.resource_chunks AS c SET embedding = v.embedding FROM cogmem.reembedded_vectors AS v
    WHERE v.tenant = r.tenant AND v.kind = 'chunk' AND c.tenant = r.tenant AND c.chunk_id = v.id;
    UPDATE cogmem.sensory_turns AS s SET embedding = v.embedding FROM cogmem.reembedded_vectors AS v
    WHERE v.tenant = r.tenant AND v.kind = 'turn' AND s.tenant = r.tenant AND s.turn_id = v.id;
    UPDATE cogmem.conflicts AS f SET embedding = v.embedding FROM cogmem.reembedded_vectors AS v
    WHERE v.tenant = r.tenant AND v.kind = 'conflict' AND f.tenant = r.tenant AND f.conflict_id = v.id;
    UPDATE cogmem.gut_contributions AS g SET embedding = m.embedding, embedding_model = r.to_model
    FROM cogmem.memories AS m
    WHERE g.tenant = r.tenant AND m.tenant = r.tenant AND m.memory_id = g.memory_id AND m.embedding IS NOT NULL;
    UPDATE cogmem.recalls AS x SET message_embedding = NULL
    WHERE x.tenant = r.tenant AND x.message_embedding IS NOT NULL;
    UPDATE cogmem.tenants AS t SET embedding_model = r.to_model WHERE t.tenant = r.tenant;  -- audited (governance)
    PERFORM cogmem._adopt_model_similarities(r.tenant, r.from_model, r.to_model);
    DELETE FROM cogmem.reembeddings AS x WHERE x.tenant = r.tenant;
    RETURN QUERY SELECT true, r.to_model, 0::bigint;
END;
$$;
COMMENT ON FUNCTION cogmem.reembed_finish(text) IS
'Swaps a re-embedding in, in one transaction: every vector of the tenant and its embedding_model. When '
'texts were written since the last batch, swaps nothing and returns how many remain (embed them, finish again).';

CREATE OR REPLACE FUNCTION cogmem.reembed_cancel(tenant text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it deletes the re-embedding's vectors, which only the API's owner may; an administrator first.
AS $$
BEGIN
    PERFORM cogmem._require_admin(reembed_cancel.tenant);
    DELETE FROM cogmem.reembeddings AS x WHERE x.tenant = reembed_cancel.tenant;
    RETURN FOUND;
END;
$$;
COMMENT ON FUNCTION cogmem.reembed_cancel(text) IS
'Drops a tenant''s re-embedding under way and its new vectors (the old ones were never touched); whether there was one.';

-- An erasure removes the texts; the new vectors made of them go too (a vector says something of its text).
CREATE OR REPLACE FUNCTION cogmem._forget_reembedded(p_tenant text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM cogmem.reembeddings AS x WHERE x.tenant = p_tenant) THEN
        RETURN;
    END IF;
    DELETE FROM cogmem.reembedded_vectors AS v
    WHERE v.tenant = p_tenant
      AND NOT CASE v.kind
          WHEN 'memory' THEN EXISTS (SELECT FROM cogmem.memories AS m WHERE m.tenant = p_tenant AND m.memory_id = v.id)
          WHEN 'chunk' THEN EXISTS (SELECT FROM cogmem.resource_chunks AS c WHERE c.tenant = p_tenant AND c.chunk_id = v.id)
          WHEN 'turn' THEN EXISTS (SELECT FROM cogmem.sensory_turns AS s WHERE s.tenant = p_tenant AND s.turn_id = v.id)
          ELSE EXISTS (SELECT FROM cogmem.conflicts AS f WHERE f.tenant = p_tenant AND f.conflict_id = v.id)
      END;
END;
$$;
COMMENT ON FUNCTION cogmem._forget_reembedded(text) IS
'Deletes the new vectors of a re-embedding under way whose memory, chunk, turn or conflict is gone (erasure).';
