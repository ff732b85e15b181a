-- The keyed store: values under a namespace (a path of labels) and a key, for frameworks that address
-- memory that way (LangGraph's BaseStore, cogmem_pg/langgraph.py). A value's text, when indexed, is also
-- a memory, stored through remember(): routed, redacted, deduplicated, checked for contradictions, and
-- from then on recalled, reinforced and decayed like any other. The value itself is kept as it was put,
-- after redaction: a secret in it (in a string, a key, a number, or under a name such as "pass") reads
-- back as the placeholder a memory would hold; namespace labels and keys are redacted the same way.
-- Values are bounded by the tenant's max_store_value_bytes, labels and keys by the index they key.
--
-- Replacing or deleting an item erases the memory created for it (not a near-duplicate it was linked
-- to, nor one another item shares); erasing that memory deletes the item (sql/130-erasure.sql); the
-- night's forgetting only unlinks it (sql/090-consolidation.sql), so the value stays readable.

-- A namespace and key key a btree index with the tenant, whose rows cannot pass 2,704 bytes: the limits
-- are in bytes (a CJK label is three per character), with room left for a tenant of 200 characters.
CREATE OR REPLACE FUNCTION cogmem._store_path_check(p_namespace text[], p_key text, p_role text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bad   record;
    v_bytes bigint;
BEGIN
    IF p_namespace IS NULL OR (p_role = 'item' AND cardinality(p_namespace) = 0) THEN
        RAISE EXCEPTION 'a store % needs a namespace of at least one label', p_role
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass a path such as ARRAY[''memories'', ''user-1''].';
    END IF;
    IF cardinality(p_namespace) > 32 THEN
        RAISE EXCEPTION 'invalid namespace: % labels, the limit is 32', cardinality(p_namespace)
            USING ERRCODE = 'invalid_parameter_value', HINT = 'A namespace is a short path, such as (''memories'', ''user-1'').';
    END IF;
    SELECT l.n, CASE WHEN coalesce(l.label, '') = '' THEN 'is empty' ELSE 'holds a period' END AS why INTO v_bad
    FROM unnest(p_namespace) WITH ORDINALITY AS l (label, n)
    WHERE coalesce(l.label, '') = '' OR strpos(l.label, '.') > 0 ORDER BY l.n LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'invalid namespace: label % %', v_bad.n, v_bad.why
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Labels are not empty and hold no period (a namespace is written a.b.c).';
    END IF;
    v_bytes := (SELECT sum(octet_length(l.label)) FROM unnest(p_namespace) AS l (label));
    IF v_bytes > 1000 THEN
        RAISE EXCEPTION 'a store namespace has % bytes, the limit is 1000', v_bytes
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Labels are names (ids), not content: at most 1,000 bytes of UTF-8 in all.';
    END IF;
    IF p_role = 'item' AND coalesce(p_key, '') = '' THEN
        RAISE EXCEPTION 'a store key must not be empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Keys name an item within its namespace.';
    END IF;
    IF p_role = 'item' AND octet_length(p_key) > 500 THEN
        RAISE EXCEPTION 'a store key has % bytes, the limit is 500', octet_length(p_key)
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Keys are names (ids), not content: at most 500 bytes of UTF-8; put content in the value.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._store_path_check(text[], text, text) IS
'Validates a store namespace (and, for an item, its key) with a clear error: at most 32 labels, none '
'empty or with a period, 1,000 bytes in all; a key of 1 to 500 bytes.';

-- Namespaces and keys are redacted like any text, so a secret typed into one is never kept, and a read
-- that names it finds what the write stored. Redaction can lengthen a path: it is checked again. The
-- person is part of an item's key (person_key, '' for none), so its bytes count toward the index's too.
DROP FUNCTION IF EXISTS cogmem._store_path(text[], text, text);  -- before 0038: no person
CREATE OR REPLACE FUNCTION cogmem._store_path(
    p_namespace text[], p_key text, p_role text, p_person text DEFAULT NULL, OUT namespace text[], OUT key text,
    OUT redactions text[], OUT person_key text
)
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_kinds text[];
BEGIN
    PERFORM cogmem._store_path_check(p_namespace, p_key, p_role);
    person_key := coalesce(btrim(p_person), '');
    IF octet_length(person_key) > 200 THEN
        RAISE EXCEPTION 'a store item''s person has % bytes, the limit is 200', octet_length(person_key)
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'The person keys the item with its namespace and key: at most 200 bytes of UTF-8.';
    END IF;
    SELECT r.redacted, r.redactions INTO key, v_kinds FROM cogmem.redact(p_key) AS r;  -- no row for no key
    WITH label AS MATERIALIZED (
        SELECT l.n, r.redacted, r.redactions
        FROM unnest(p_namespace) WITH ORDINALITY AS l (label, n) CROSS JOIN LATERAL cogmem.redact(l.label) AS r
    )
    SELECT coalesce((SELECT array_agg(l.redacted ORDER BY l.n) FROM label AS l), '{}'),
           ARRAY(SELECT DISTINCT k FROM (SELECT unnest(l.redactions) FROM label AS l
                                         UNION ALL SELECT unnest(v_kinds)) AS x (k) ORDER BY k)
    INTO namespace, redactions;
    IF cardinality(redactions) > 0 THEN
        PERFORM cogmem._store_path_check(namespace, key, p_role);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._store_path(text[], text, text, text) IS
'A store namespace and key checked and redacted (cogmem.redact()), and the person''s part of the key, as '
'the store keeps them.';

DROP FUNCTION IF EXISTS cogmem._redact_member(text, jsonb);  -- one pass over a value: _redact_json
DROP FUNCTION IF EXISTS cogmem._redact_value(jsonb);

-- A value that says where it was said (a turn of a conversation: text fields conversation, speaker and
-- said_at) says so to recall; fields that are not such texts are the value's own business, not an error.
CREATE OR REPLACE FUNCTION cogmem._store_said(p_value jsonb)
RETURNS jsonb
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT CASE WHEN cogmem._said_problem(s.said) IS NULL THEN s.said ELSE '{}' END
    FROM (SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}') AS said
          FROM jsonb_each(p_value) AS e
          WHERE e.key IN ('conversation', 'speaker', 'said_at') AND jsonb_typeof(e.value) = 'string') AS s;
$$;
COMMENT ON FUNCTION cogmem._store_said(jsonb) IS
'Where a store value says it was said: its text fields conversation, speaker and said_at, when valid.';

-- The memory an item created goes with the item, unless another item came to share it.
CREATE OR REPLACE FUNCTION cogmem._store_release(p_tenant text, p_memory_id bigint, p_owned boolean, p_reason text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF p_owned AND p_memory_id IS NOT NULL AND NOT EXISTS (
        SELECT FROM cogmem.store_items AS i WHERE i.tenant = p_tenant AND i.memory_id = p_memory_id
    ) THEN
        PERFORM cogmem._erase_memories(p_tenant, ARRAY[p_memory_id], p_reason);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._store_release(text, bigint, boolean, text) IS
'Erases the memory an item created once no item refers to it.';

-- Expired items go when the tenant next writes to the store; until then reads skip them.
CREATE OR REPLACE FUNCTION cogmem._store_sweep(p_tenant text)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_gone record;
    v_count integer := 0;
BEGIN
    FOR v_gone IN
        DELETE FROM cogmem.store_items AS i
        WHERE i.tenant = p_tenant AND i.expires_at <= now()
        RETURNING i.memory_id, i.owns_memory
    LOOP
        PERFORM cogmem._store_release(p_tenant, v_gone.memory_id, v_gone.owns_memory, 'store item expired');
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem._store_sweep(text) IS 'Deletes the tenant''s expired store items and their memories.';

-- What a put must be, before any work: a JSON object within the tenant's size (bytes of its JSON text,
-- refused whole, never cut), and a time to live that is a finite number of minutes (NaN passes "> 0").
CREATE OR REPLACE FUNCTION cogmem._store_put_check(t cogmem.tenants, p_value jsonb, p_ttl_minutes double precision)
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bytes integer;
BEGIN
    IF jsonb_typeof(p_value) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'a store value must be a JSON object'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Wrap it: {"content": ...}. To remove an item, use cogmem.store_delete().';
    END IF;
    v_bytes := octet_length(p_value::text);
    IF v_bytes > t.max_store_value_bytes THEN
        RAISE EXCEPTION 'a store value has % bytes, the limit for tenant "%" is %', v_bytes, t.tenant, t.max_store_value_bytes
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Keep large content elsewhere and store a reference to it; or raise '
                         || 'cogmem.tenants.max_store_value_bytes (configure_tenant).';
    END IF;
    IF p_ttl_minutes IS NOT NULL AND (p_ttl_minutes = 'NaN' OR NOT p_ttl_minutes > 0 OR p_ttl_minutes > 52560000) THEN
        RAISE EXCEPTION 'ttl_minutes must be above 0 and at most 52560000 (100 years), got %', p_ttl_minutes
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass NULL for an item that does not expire.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._store_put_check(cogmem.tenants, jsonb, double precision) IS
'Refuses a store value that is not an object or is over the tenant''s max_store_value_bytes, and a '
'time to live that is not a number of minutes above 0 and up to 100 years.';

-- The texts a value's redaction removed for their member's name ({"pass": "hunter5"}) leave the text
-- remembered for it too, wherever they stand as words in it: an item's memory holds no more than its
-- value. A text over the tenant's limit is left as it is, for remember() to refuse.
CREATE OR REPLACE FUNCTION cogmem._store_scrub(t cogmem.tenants, p_text text, p_secrets text[])
RETURNS text
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_secret text;
BEGIN
    IF p_text IS NULL OR length(p_text) > t.max_content_chars THEN
        RETURN p_text;
    END IF;
    -- Longest first, so that a secret holding another goes whole.
    FOR v_secret IN
        SELECT DISTINCT s, length(s) FROM unnest(p_secrets) AS s WHERE s <> '' AND strpos(p_text, s) > 0 ORDER BY length(s) DESC, s
    LOOP
        -- As a word: not inside a longer one. Every character but letters, digits and spaces is escaped.
        p_text := regexp_replace(
            p_text, '(^|[^[:alnum:]_])' || regexp_replace(v_secret, '([^[:alnum:][:space:]])', '\\\1', 'g') || '(?![[:alnum:]_])',
            '\1[REDACTED]', 'g');
    END LOOP;
    -- A placeholder can be longer than what it replaces: say so, not remember() about a text never sent.
    IF length(p_text) > t.max_content_chars THEN
        RAISE EXCEPTION 'the text to remember has % characters once the value''s secrets are replaced, the limit for tenant "%" is %',
            length(p_text), t.tenant, t.max_content_chars
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Remember a shorter text (index fields), or raise cogmem.tenants.max_content_chars.';
    END IF;
    RETURN p_text;
END;
$$;
COMMENT ON FUNCTION cogmem._store_scrub(cogmem.tenants, text, text[]) IS
'A text with the given secrets replaced wherever they stand as words: what a store item remembers.';

-- The vectors a put carries for its item (LangGraph's index: the caller's embedding function), one per text
-- of the value its index fields chose, each named by the field it came from; all of one dimension, the
-- function's. No dimension is fixed: an item of another function's vectors is simply not compared.
CREATE OR REPLACE FUNCTION cogmem._store_embeddings_check(p_fields text[], p_embeddings public.vector[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, public, pg_temp
AS $$
BEGIN
    IF cardinality(p_fields) IS DISTINCT FROM cardinality(p_embeddings) THEN
        RAISE EXCEPTION 'a store put has % embedded fields and % embeddings', coalesce(cardinality(p_fields), 0),
            coalesce(cardinality(p_embeddings), 0)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass one field name for each vector, in the same order (or neither).';
    END IF;
    IF cardinality(p_embeddings) > 1000 THEN
        RAISE EXCEPTION 'a store put has % embeddings, the limit is 1000', cardinality(p_embeddings)
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Index fewer fields of the value (LangGraph''s index fields, or index=[...] per put).';
    END IF;
    IF EXISTS (SELECT FROM unnest(p_fields, p_embeddings) AS x (f, e) WHERE nullif(x.f, '') IS NULL OR x.e IS NULL) THEN
        RAISE EXCEPTION 'a store put has an embedded field without a name or without a vector'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Name each vector by the path it was made from.';
    END IF;
    IF (SELECT count(DISTINCT public.vector_dims(e)) FROM unnest(p_embeddings) AS e) > 1 THEN
        RAISE EXCEPTION 'a store put has embeddings of % dimensions',
            (SELECT string_agg(DISTINCT public.vector_dims(e)::text, ' and ') FROM unnest(p_embeddings) AS e)
            USING ERRCODE = 'data_exception', HINT = 'Embed all of an item''s fields with one function.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._store_embeddings_check(text[], public.vector[]) IS
'Refuses a put''s item vectors unless each has a field name, there are at most 1,000, and all have one '
'dimension.';

DROP FUNCTION IF EXISTS cogmem.store_put(text, text[], text, jsonb, text, double precision, public.vector);  -- before 0035
DROP FUNCTION IF EXISTS cogmem.store_put(text, text[], text, jsonb, text, double precision, public.vector, text, text);  -- before 0044
DROP FUNCTION IF EXISTS cogmem.store_put(
    text, text[], text, jsonb, text, double precision, public.vector, text, text, text[], public.vector[]
);  -- before issue 48's clauses in the store
-- Longer than a screen as the list of a put's stages, each a call: checks, the tenant's store lock, the
-- sweep, redaction, the key's old memory released, the new one remembered, the item and its vectors written.
CREATE OR REPLACE FUNCTION cogmem.store_put(
    tenant text, namespace text[], key text, value jsonb, index_text text DEFAULT NULL,
    ttl_minutes double precision DEFAULT NULL, embedding public.vector DEFAULT NULL, person text DEFAULT NULL,
    agent text DEFAULT NULL, embedded_fields text[] DEFAULT NULL, embeddings public.vector[] DEFAULT NULL,
    clause_embeddings public.vector[] DEFAULT NULL
)
RETURNS TABLE (memory_id bigint, action text, redactions text[])
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes store items and memories, which only the API's owner may; tenant and scope checked first.
AS $$
#variable_conflict use_column
DECLARE
    t      cogmem.tenants;
    v_path record;
    v_old  cogmem.store_items;
    v_safe record;
    v_text text;
    v_mem  record;
BEGIN
    PERFORM cogmem._require_tenant(store_put.tenant);
    PERFORM cogmem._require_scope(store_put.tenant, store_put.person, store_put.agent);
    PERFORM cogmem._check_clause_embeddings(store_put.index_text, store_put.clause_embeddings);
    v_path := cogmem._store_path(store_put.namespace, store_put.key, 'item', store_put.person);
    t := cogmem._tenant_settings(store_put.tenant);
    PERFORM cogmem._store_put_check(t, store_put.value, store_put.ttl_minutes);
    PERFORM cogmem._store_embeddings_check(store_put.embedded_fields, store_put.embeddings);
    -- One store writer per tenant at a time, before any row is touched: a put locks its item, its old
    -- memory and the memory its text joins, a delete its item and then the memory, in other orders
    -- (issue 46: concurrent put and delete of one key deadlocked). Remember and recall are not held up.
    PERFORM cogmem._serialize_tenant(store_put.tenant);
    PERFORM cogmem._store_sweep(store_put.tenant);
    SELECT * INTO v_old FROM cogmem.store_items AS i
    WHERE i.tenant = store_put.tenant AND i.person_key = v_path.person_key AND i.namespace = v_path.namespace
      AND i.key = v_path.key
    FOR UPDATE;
    v_safe := cogmem._redact_json(store_put.value, 'a store value');
    v_text := cogmem._store_scrub(t, store_put.index_text, v_safe.secrets);
    -- The same text again keeps its memory, and with it what recall and feedback taught.
    SELECT m.memory_id, 'unchanged' AS action, '{}'::text[] AS redactions, NULL::bigint AS conflict_id INTO v_mem
    FROM cogmem.memories AS m
    WHERE m.tenant = store_put.tenant AND m.memory_id = v_old.memory_id
      AND m.content = (cogmem.redact(v_text)).redacted
      AND (store_put.ttl_minutes IS NULL) = (v_old.ttl_minutes IS NULL)
      AND cogmem._same_scope(m.person, m.agent, btrim(store_put.person), btrim(store_put.agent));
    IF v_mem.memory_id IS NULL THEN
        -- The key's previous memory is superseded by the key, not contradicted: it goes before the new
        -- text is checked against what else the tenant knows.
        UPDATE cogmem.store_items AS i SET memory_id = NULL
        WHERE i.tenant = store_put.tenant AND i.person_key = v_path.person_key AND i.namespace = v_path.namespace
          AND i.key = v_path.key;
        PERFORM cogmem._store_release(store_put.tenant, v_old.memory_id, v_old.owns_memory, 'store item replaced');
    END IF;
    IF v_mem.memory_id IS NULL AND nullif(btrim(v_text), '') IS NOT NULL THEN
        SELECT r.memory_id, r.action, r.redactions, r.conflict_id INTO v_mem
        -- A value that says what it is ({"kind": "rule"}, "preference", "incident", a ring's name) is filed
        -- there: the caller's judgement (another "kind" is the application's own field, and is routed).
        FROM cogmem._remember(store_put.tenant, v_text,
                              CASE WHEN store_put.ttl_minutes IS NOT NULL THEN 'fresh'
                                   ELSE cogmem._ring_of(v_safe.value ->> 'kind') END, NULL, store_put.embedding,
                              cogmem._with_said(jsonb_build_object('store', jsonb_build_object('namespace', v_path.namespace,
                                                                                               'key', v_path.key))
                                                || cogmem._store_said(v_safe.value),
                                                NULL, NULL, NULL, store_put.person, store_put.agent), NULL,
                              p_clause_embeddings => store_put.clause_embeddings) AS r;
    END IF;
    -- The vectors go with the value they were made from: a put without any leaves the item none.
    INSERT INTO cogmem.store_items AS i (tenant, namespace, key, value, memory_id, owns_memory, conflict_id,
                                         ttl_minutes, expires_at, person, agent, embedded_fields, embeddings)
    VALUES (store_put.tenant, v_path.namespace, v_path.key, v_safe.value, v_mem.memory_id,
            CASE WHEN v_mem.action = 'unchanged' THEN v_old.owns_memory ELSE coalesce(v_mem.action = 'created', false) END,
            v_mem.conflict_id, store_put.ttl_minutes,
            now() + make_interval(secs => store_put.ttl_minutes * 60), btrim(store_put.person), btrim(store_put.agent),
            CASE WHEN cardinality(store_put.embeddings) > 0 THEN store_put.embedded_fields END,
            CASE WHEN cardinality(store_put.embeddings) > 0 THEN store_put.embeddings END)
    ON CONFLICT (tenant, person_key, namespace, key) DO UPDATE
    SET value = excluded.value, memory_id = excluded.memory_id, owns_memory = excluded.owns_memory,
        conflict_id = excluded.conflict_id, ttl_minutes = excluded.ttl_minutes, expires_at = excluded.expires_at,
        updated_at = now(), agent = excluded.agent, embedded_fields = excluded.embedded_fields,
        embeddings = excluded.embeddings;
    RETURN QUERY SELECT v_mem.memory_id, coalesce(v_mem.action, 'stored'),
                        ARRAY(SELECT DISTINCT r FROM unnest(v_path.redactions || v_safe.redactions || v_mem.redactions) AS r
                              ORDER BY r);
END;
$$;
COMMENT ON FUNCTION cogmem.store_put(
    text, text[], text, jsonb, text, double precision, public.vector, text, text, text[], public.vector[],
    public.vector[]
) IS
'Puts a value (a JSON object, redacted: keys, strings, numbers, secret-named fields) under a namespace and '
'key (redacted too). index_text, when given, is remembered as the item''s memory (ring fresh when '
'ttl_minutes is set, else routed), without what the value''s redaction removed; it replaces the memory the '
'key had; a value''s "kind" naming a ring or a kind (rule, preference, incident, procedure, habit, fact, chat) '
'files it there. person and agent scope the item and its memory (sql/015-scopes.sql); the person is part of the '
'key (each person has its own keys, none: the tenant''s shared ones). embeddings (named by embedded_fields) '
'are the item''s own vectors, by the caller''s model, replacing any it had. clause_embeddings: as '
'remember()''s, the embeddings of cogmem.clauses(index_text, embedding), by the tenant''s model. Returns the '
'memory, remember''s action (''stored'' for a value without text) and what was redacted.';

DROP FUNCTION IF EXISTS cogmem.store_delete(text, text[], text);  -- before 0038: no person
CREATE OR REPLACE FUNCTION cogmem.store_delete(tenant text, namespace text[], key text, person text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_path record;
    v_gone record;
BEGIN
    PERFORM cogmem._require_tenant(store_delete.tenant);
    PERFORM cogmem._require_scope(store_delete.tenant, store_delete.person, NULL);  -- whether or not it exists
    v_path := cogmem._store_path(store_delete.namespace, store_delete.key, 'item', store_delete.person);
    PERFORM cogmem._serialize_tenant(store_delete.tenant);  -- as store_put, which says why
    DELETE FROM cogmem.store_items AS i
    WHERE i.tenant = store_delete.tenant AND i.person_key = v_path.person_key AND i.namespace = v_path.namespace
      AND i.key = v_path.key
    RETURNING i.memory_id, i.owns_memory INTO v_gone;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM cogmem._store_release(store_delete.tenant, v_gone.memory_id, v_gone.owns_memory, 'store item deleted');
    RETURN true;
END;
$$;
COMMENT ON FUNCTION cogmem.store_delete(text, text[], text, text) IS
'Deletes the person''s store item (none: the shared one; its namespace and key read as redacted), and '
'erases the memory it created; false if there was none.';

-- LangGraph's sweep_ttl: the tenant's expired items go now, not at its next write. Without any, nothing
-- is locked, so a sweeper that runs every few seconds never waits on the tenant's writers.
CREATE OR REPLACE FUNCTION cogmem.store_sweep(tenant text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it deletes store items and erases their memories, which only the API's owner may; the tenant
-- is checked first. What it deletes no read returns any more, whoever's scope it was in.
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(store_sweep.tenant);
    IF NOT EXISTS (SELECT FROM cogmem.store_items AS i WHERE i.tenant = store_sweep.tenant AND i.expires_at <= now()) THEN
        RETURN 0;
    END IF;
    PERFORM cogmem._serialize_tenant(store_sweep.tenant);  -- as store_put, which says why
    RETURN cogmem._store_sweep(store_sweep.tenant);
END;
$$;
COMMENT ON FUNCTION cogmem.store_sweep(text) IS
'Deletes the tenant''s expired store items now, and erases the memories they created; how many items.';

DROP FUNCTION IF EXISTS cogmem.store_get(text, text[], text, boolean);  -- before 0038: no person
CREATE OR REPLACE FUNCTION cogmem.store_get(
    tenant text, namespace text[], key text, refresh_ttl boolean DEFAULT TRUE, person text DEFAULT NULL
)
RETURNS TABLE (value jsonb, created_at timestamptz, updated_at timestamptz, memory_id bigint, expires_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_path record;
BEGIN
    PERFORM cogmem._require_tenant(store_get.tenant);
    IF store_get.person IS NOT NULL THEN  -- another person's key is refused whether or not it exists
        PERFORM cogmem._require_scope(store_get.tenant, store_get.person, NULL);
    END IF;
    v_path := cogmem._store_path(store_get.namespace, store_get.key, 'item', store_get.person);
    -- Only an item with a time to live is written: a read of any other stays a read.
    IF store_get.refresh_ttl THEN
        UPDATE cogmem.store_items AS i SET expires_at = now() + make_interval(secs => i.ttl_minutes * 60)
        WHERE i.tenant = store_get.tenant AND i.person_key = v_path.person_key AND i.namespace = v_path.namespace
          AND i.key = v_path.key AND i.ttl_minutes IS NOT NULL AND i.expires_at > now();
    END IF;
    RETURN QUERY
    SELECT i.value, i.created_at, i.updated_at, i.memory_id, i.expires_at
    FROM cogmem.store_items AS i
    WHERE i.tenant = store_get.tenant AND i.person_key = v_path.person_key AND i.namespace = v_path.namespace
      AND i.key = v_path.key AND (i.expires_at IS NULL OR i.expires_at > now());
END;
$$;
COMMENT ON FUNCTION cogmem.store_get(text, text[], text, boolean, text) IS
'The person''s item (none: the shared one) under a namespace and key, read as redacted (no row if none or '
'expired); refresh_ttl restarts its time to live.';

CREATE OR REPLACE FUNCTION cogmem._store_bad_operator(p_operator text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'unsupported filter operator "%"', p_operator
        USING ERRCODE = 'invalid_parameter_value', HINT = 'Use $eq, $ne, $gt, $gte, $lt or $lte.';
END;
$$;
COMMENT ON FUNCTION cogmem._store_bad_operator(text) IS 'Raises the error for an unknown filter operator.';

-- An order comparison of a filter: numbers as numbers (9 < 10), texts by their code points as Python
-- compares them; values of two kinds, or of a kind without an order, do not compare (the item fails).
CREATE OR REPLACE FUNCTION cogmem._store_compares(p_have jsonb, p_operator text, p_want jsonb)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_order integer;
BEGIN
    IF jsonb_typeof(p_have) = 'number' AND jsonb_typeof(p_want) = 'number' THEN
        v_order := sign((p_have #>> '{}')::numeric - (p_want #>> '{}')::numeric);
    ELSIF jsonb_typeof(p_have) = 'string' AND jsonb_typeof(p_want) = 'string' THEN
        v_order := CASE WHEN (p_have #>> '{}') COLLATE "C" < (p_want #>> '{}') COLLATE "C" THEN -1
                        WHEN (p_have #>> '{}') = (p_want #>> '{}') THEN 0 ELSE 1 END;
    ELSE
        RETURN false;
    END IF;
    RETURN CASE p_operator WHEN '$gt' THEN v_order > 0 WHEN '$gte' THEN v_order >= 0
                           WHEN '$lt' THEN v_order < 0 ELSE v_order <= 0 END;
END;
$$;
COMMENT ON FUNCTION cogmem._store_compares(jsonb, text, jsonb) IS
'Whether a value passes an order comparison of a store filter ($gt, $gte, $lt, $lte): numbers '
'numerically, texts by code point; false for values of different kinds.';

-- A filter as LangGraph defines it: field -> value (equal; a nested object matches recursively) or
-- field -> {"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": value}.
CREATE OR REPLACE FUNCTION cogmem._store_matches(p_value jsonb, p_filter jsonb)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_field record;
    v_op    record;
    v_have  jsonb;
    v_ok    boolean;
BEGIN
    FOR v_field IN SELECT f.key, f.value FROM jsonb_each(coalesce(p_filter, '{}')) AS f LOOP
        v_have := CASE WHEN jsonb_typeof(p_value) = 'object' THEN p_value -> v_field.key END;
        IF jsonb_typeof(v_field.value) = 'object' AND EXISTS (SELECT FROM jsonb_object_keys(v_field.value) AS k WHERE k LIKE '$%') THEN
            FOR v_op IN SELECT o.key, o.value FROM jsonb_each(v_field.value) AS o LOOP
                v_ok := CASE
                    WHEN v_op.key = '$eq' THEN v_have IS NOT DISTINCT FROM v_op.value
                    WHEN v_op.key = '$ne' THEN v_have IS DISTINCT FROM v_op.value
                    WHEN v_op.key IN ('$gt', '$gte', '$lt', '$lte') THEN cogmem._store_compares(v_have, v_op.key, v_op.value)
                    ELSE cogmem._store_bad_operator(v_op.key)
                END;
                IF v_ok IS NOT TRUE THEN
                    RETURN false;
                END IF;
            END LOOP;
        ELSIF jsonb_typeof(v_field.value) = 'object' THEN
            IF jsonb_typeof(v_have) IS DISTINCT FROM 'object' OR NOT cogmem._store_matches(v_have, v_field.value) THEN
                RETURN false;
            END IF;
        ELSIF v_have IS DISTINCT FROM v_field.value THEN
            RETURN false;
        END IF;
    END LOOP;
    RETURN true;
END;
$$;
COMMENT ON FUNCTION cogmem._store_matches(jsonb, jsonb) IS 'Whether a store value passes a LangGraph-style filter.';

-- The filter's fields that ask for a plain value (a string, number or boolean, or {"$eq": one}): what an
-- item that passes the filter must contain.
CREATE OR REPLACE FUNCTION cogmem._store_plain_fields(p_filter jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT coalesce(jsonb_object_agg(f.key, coalesce(f.value -> '$eq', f.value)), '{}')
    -- p_filter is a parameter, not a column to qualify.
    FROM jsonb_each(p_filter) AS f  -- noqa: RF03
    WHERE
        jsonb_typeof(coalesce(f.value -> '$eq', f.value)) IN ('string', 'number', 'boolean')
        AND (jsonb_typeof(f.value) <> 'object' OR f.value = jsonb_build_object('$eq', f.value -> '$eq'));
END;
COMMENT ON FUNCTION cogmem._store_plain_fields(jsonb) IS
'The plain-value fields of a store filter, as an object every matching value contains.';

-- How similar two vectors are, higher is nearer, as LangGraph's stores score a search: cosine similarity,
-- the inner product, or the negated euclidean distance. A zero vector has no direction: no cosine (NULL).
CREATE OR REPLACE FUNCTION cogmem._store_similarity(p_a public.vector, p_b public.vector, p_distance text)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, public, pg_temp
BEGIN ATOMIC
    SELECT nullif(
        CASE p_distance
            WHEN 'cosine' THEN 1 - (p_a OPERATOR(public.<=>) p_b)  -- noqa: LT01
            WHEN 'inner_product' THEN -(p_a OPERATOR(public.<#>) p_b)  -- noqa: LT01
            WHEN 'l2' THEN -(p_a OPERATOR(public.<->) p_b)  -- noqa: LT01
        END,
        'NaN'
    );
END;
COMMENT ON FUNCTION cogmem._store_similarity(public.vector, public.vector, text) IS
'The similarity of two vectors of one dimension by a store''s distance: cosine (1 - cosine distance), '
'inner_product, or l2 (minus the euclidean distance); NULL for a zero vector''s cosine.';

-- The items under a prefix that pass a filter, each scored for a query's vector: by the best of the
-- item's own vectors (vectors 'fields': the caller's model, the same dimension as the query's), or by
-- its memory's (vectors 'memories': the tenant's model). The memory's full-text rank comes with it, to
-- order what no vector scores.
DROP FUNCTION IF EXISTS cogmem._store_ranked(cogmem.tenants, text[], text, jsonb, public.vector);  -- before 0038
DROP FUNCTION IF EXISTS cogmem._store_ranked(cogmem.tenants, text[], text, jsonb, public.vector, text);  -- 0044
CREATE OR REPLACE FUNCTION cogmem._store_ranked(
    t cogmem.tenants, p_prefix text[], p_query text, p_filter jsonb, p_embedding public.vector, p_person text,
    p_vectors text, p_distance text
)
RETURNS TABLE (
    namespace text[], key text, value jsonb, created_at timestamptz, updated_at timestamptz, memory_id bigint,
    expires_at timestamptz, score double precision, lexical real, person_key text
)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_plain jsonb := cogmem._store_plain_fields(p_filter);  -- once: a function with a SET is not inlined
    v_dims  integer := public.vector_dims(p_embedding);
    -- Any of the query's first 256 distinct words: a longer query is a document, and a tsquery of
    -- thousands of terms exhausts the stack when it is matched.
    v_words tsquery := cogmem._or_query(ARRAY(SELECT w.lexeme FROM unnest(to_tsvector(t.language, p_query)) AS w
                                              ORDER BY w.positions[1], w.lexeme LIMIT 256));
BEGIN
    RETURN QUERY
    SELECT i.namespace, i.key, i.value, i.created_at, i.updated_at, i.memory_id, i.expires_at,
           CASE WHEN p_vectors = 'fields' THEN
                    (SELECT max(cogmem._store_similarity(e, p_embedding, p_distance)) FROM unnest(i.embeddings) AS e
                     WHERE public.vector_dims(e) = v_dims)
                WHEN public.vector_dims(m.embedding) = v_dims THEN cogmem._store_similarity(m.embedding, p_embedding, p_distance)
           END,
           CASE WHEN m.search @@ v_words THEN ts_rank_cd(m.search, v_words) END,
           i.person_key
    FROM cogmem.store_items AS i
    LEFT JOIN cogmem.memories AS m ON m.tenant = i.tenant AND m.memory_id = i.memory_id
    WHERE i.tenant = t.tenant AND i.namespace[1:cardinality(p_prefix)] = p_prefix
      AND (p_person IS NULL OR i.person_key = p_person)
      AND (i.expires_at IS NULL OR i.expires_at > now())
      -- Containment of the filter's plain fields is necessary and cheap; the full test decides.
      AND i.value @> v_plain
      AND (p_filter IS NULL OR cogmem._store_matches(i.value, p_filter));
END;
$$;
COMMENT ON FUNCTION cogmem._store_ranked(cogmem.tenants, text[], text, jsonb, public.vector, text, text, text) IS
'The store items under a prefix (of one person''s key, '''' for the shared ones, when given) that pass a '
'filter, each with its similarity to a query''s vector (by its own vectors or its memory''s) and its '
'memory''s full-text rank for the query.';

-- What a search is asked, before any work: paging of zero or more, a filter that is an object, and
-- vectors and a distance the store knows.
CREATE OR REPLACE FUNCTION cogmem._store_search_check(
    p_limit bigint, p_offset bigint, p_filter jsonb, p_vectors text, p_distance text
)
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_limit IS NULL OR p_limit < 0 OR p_offset IS NULL OR p_offset < 0 THEN
        RAISE EXCEPTION 'limit and offset must be zero or more'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The defaults are limit 10, offset 0.';
    END IF;
    IF p_filter IS NOT NULL AND jsonb_typeof(p_filter) <> 'object' THEN
        RAISE EXCEPTION 'a store filter must be a JSON object'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'For example {"kind": "preference", "stars": {"$gte": 4}}.';
    END IF;
    IF p_vectors IS NULL OR p_vectors NOT IN ('memories', 'fields') THEN
        RAISE EXCEPTION 'unknown store vectors "%"', p_vectors
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use ''memories'' (the tenant''s model) or ''fields'' (the vectors put with the items).';
    END IF;
    IF p_distance IS NULL OR p_distance NOT IN ('cosine', 'inner_product', 'l2') THEN
        RAISE EXCEPTION 'unknown store distance "%"', p_distance
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use cosine, inner_product or l2.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._store_search_check(bigint, bigint, jsonb, text, text) IS
'Refuses a store search''s negative paging, a filter that is not an object, and unknown vectors or distance.';

-- Paging was integer before 0027: bigint takes what drivers send for a large number (sql/070-recall.sql).
DROP FUNCTION IF EXISTS cogmem.store_search(text, text[], text, jsonb, integer, integer, public.vector, boolean);
DROP FUNCTION IF EXISTS cogmem.store_search(text, text[], text, jsonb, bigint, bigint, public.vector, boolean);  -- 0038
DROP FUNCTION IF EXISTS cogmem.store_search(text, text[], text, jsonb, bigint, bigint, public.vector, boolean, text);  -- 0044
CREATE OR REPLACE FUNCTION cogmem.store_search(
    tenant text, namespace_prefix text[] DEFAULT '{}', query text DEFAULT NULL, filter jsonb DEFAULT NULL,
    "limit" bigint DEFAULT 10, "offset" bigint DEFAULT 0, embedding public.vector DEFAULT NULL,
    refresh_ttl boolean DEFAULT TRUE, person text DEFAULT NULL, vectors text DEFAULT 'memories',
    distance text DEFAULT 'cosine'
)
RETURNS TABLE (
    namespace text[], key text, value jsonb, created_at timestamptz, updated_at timestamptz, memory_id bigint,
    score double precision
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_tenant cogmem.tenants;
    v_prefix text[];
    v_query  text := nullif(store_search.query, '');
    v_vector public.vector;
BEGIN
    PERFORM cogmem._require_tenant(store_search.tenant);
    IF store_search.person IS NOT NULL THEN
        PERFORM cogmem._require_scope(store_search.tenant, store_search.person, NULL);
    END IF;
    v_prefix := (cogmem._store_path(store_search.namespace_prefix, NULL, 'prefix')).namespace;
    PERFORM cogmem._store_search_check(store_search."limit", store_search."offset", store_search.filter,
                                       store_search.vectors, store_search.distance);
    IF v_query IS NOT NULL AND store_search.vectors = 'fields' AND store_search.embedding IS NULL THEN
        RAISE EXCEPTION 'a search by the items'' own vectors needs the query''s embedding'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Embed the query with the function the items were put with, or search vectors => ''memories''.';
    END IF;
    v_tenant := cogmem._tenant_settings(store_search.tenant);
    -- The memories' vectors are of the tenant's model: the query's is checked (or made) as recall's is.
    v_vector := CASE WHEN v_query IS NULL THEN NULL
                     WHEN store_search.vectors = 'fields' THEN store_search.embedding
                     ELSE cogmem._embedding((v_tenant).tenant, store_search.embedding, v_query, true) END;
    RETURN QUERY
    WITH page AS (
        SELECT r.* FROM cogmem._store_ranked(v_tenant, v_prefix, v_query, store_search.filter, v_vector,
                                             btrim(store_search.person), store_search.vectors, store_search.distance) AS r
        -- With a query, the most similar first, then what full text finds; else by namespace, then key.
        ORDER BY CASE WHEN v_query IS NOT NULL THEN r.score END DESC NULLS LAST,
                 CASE WHEN v_query IS NOT NULL THEN r.lexical END DESC NULLS LAST, r.namespace, r.key
        LIMIT store_search."limit" OFFSET store_search."offset"
    ),
    touched AS (
        UPDATE cogmem.store_items AS i SET expires_at = now() + make_interval(secs => i.ttl_minutes * 60)
        FROM page AS p
        WHERE store_search.refresh_ttl AND p.expires_at IS NOT NULL
          AND i.tenant = store_search.tenant AND i.person_key = p.person_key AND i.namespace = p.namespace
          AND i.key = p.key
    )
    SELECT p.namespace, p.key, p.value, p.created_at, p.updated_at, p.memory_id, p.score
    FROM page AS p
    ORDER BY CASE WHEN v_query IS NOT NULL THEN p.score END DESC NULLS LAST,
             CASE WHEN v_query IS NOT NULL THEN p.lexical END DESC NULLS LAST, p.namespace, p.key;
END;
$$;
COMMENT ON FUNCTION cogmem.store_search(
    text, text[], text, jsonb, bigint, bigint, public.vector, boolean, text, text, text
) IS
'Store items under a namespace prefix that pass the filter (a person''s only, when given; else every item '
'the caller reads). With a query, the most similar first: score is the similarity of the query''s '
'embedding to the best of the item''s own vectors (vectors ''fields'', the caller''s model) or to its '
'memory''s (''memories'', the tenant''s model), by distance cosine, inner_product or l2; items without '
'one come last (score NULL), by full text. Without a query, by namespace and key, score NULL.';

-- A namespace path with '*' labels matches from the start (prefix) or from the end (suffix).
CREATE OR REPLACE FUNCTION cogmem._store_path_matches(p_namespace text[], p_path text[], p_from_end boolean)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    -- From the end, label n of the pattern faces label n of the namespace's last labels.
    SELECT p_path IS NULL OR (
        cardinality(p_namespace) >= cardinality(p_path)
        AND NOT EXISTS (
            SELECT FROM unnest(p_path) WITH ORDINALITY AS x (label, n)
            WHERE
                x.label <> '*'
                AND x.label IS DISTINCT FROM
                p_namespace[x.n + p_from_end::integer * (cardinality(p_namespace) - cardinality(p_path))]
        )
    );
END;
COMMENT ON FUNCTION cogmem._store_path_matches(text[], text[], boolean) IS
'Whether a namespace matches a path pattern (''*'' for any label) from its start or its end.';

DROP FUNCTION IF EXISTS cogmem.store_namespaces(text, text[], text[], integer, integer, integer);
DROP FUNCTION IF EXISTS cogmem.store_namespaces(text, text[], text[], bigint, bigint, bigint);  -- before 0038
CREATE OR REPLACE FUNCTION cogmem.store_namespaces(
    tenant text, prefix text[] DEFAULT NULL, suffix text[] DEFAULT NULL, max_depth bigint DEFAULT NULL,
    "limit" bigint DEFAULT 100, "offset" bigint DEFAULT 0, person text DEFAULT NULL
)
RETURNS SETOF text[]
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_prefix text[];
    v_suffix text[];
BEGIN
    PERFORM cogmem._require_tenant(store_namespaces.tenant);
    IF store_namespaces.person IS NOT NULL THEN
        PERFORM cogmem._require_scope(store_namespaces.tenant, store_namespaces.person, NULL);
    END IF;
    -- Patterns as labels are kept ('*' stays '*').
    v_prefix := CASE WHEN store_namespaces.prefix IS NOT NULL THEN ARRAY(
        SELECT (cogmem.redact(l.label)).redacted FROM unnest(store_namespaces.prefix) WITH ORDINALITY AS l (label, n) ORDER BY l.n
    ) END;
    v_suffix := CASE WHEN store_namespaces.suffix IS NOT NULL THEN ARRAY(
        SELECT (cogmem.redact(l.label)).redacted FROM unnest(store_namespaces.suffix) WITH ORDINALITY AS l (label, n) ORDER BY l.n
    ) END;
    IF store_namespaces.max_depth IS NOT NULL AND store_namespaces.max_depth < 1 THEN
        RAISE EXCEPTION 'max_depth must be at least 1'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass NULL for namespaces of any depth.';
    END IF;
    RETURN QUERY
    SELECT DISTINCT i.namespace[1:least(coalesce(store_namespaces.max_depth, 32), cardinality(i.namespace))::integer] AS ns
    FROM cogmem.store_items AS i
    WHERE i.tenant = store_namespaces.tenant AND (i.expires_at IS NULL OR i.expires_at > now())
      AND (store_namespaces.person IS NULL OR i.person_key = btrim(store_namespaces.person))
      AND cogmem._store_path_matches(i.namespace, v_prefix, false)
      AND cogmem._store_path_matches(i.namespace, v_suffix, true)
    ORDER BY ns
    LIMIT greatest(store_namespaces."limit", 0) OFFSET greatest(store_namespaces."offset", 0);
END;
$$;
COMMENT ON FUNCTION cogmem.store_namespaces(text, text[], text[], bigint, bigint, bigint, text) IS
'The namespaces holding store items (a person''s only, when given), filtered by prefix and suffix patterns '
'(''*'' for any label), cut to max_depth, in order.';
