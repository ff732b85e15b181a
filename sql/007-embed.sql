-- In-database embedding. When PostgreSQL's own Python can import cogmem_pg with the [embed] extra,
-- cogmem.embed() runs all-MiniLM-L6-v2 inside the server; otherwise it returns NULL and memories are
-- found by full text, and the first call of a session says why in a WARNING (an ordinary server's
-- Python has no cogmem_pg: that must cost a feature, not every remember). `SET cogmem.embed = off`
-- switches it off for a session (it costs milliseconds per call); callers that embed on the client side
-- never reach it. PL/Python is untrusted: only a superuser can create it, so without one the
-- NULL-returning SQL version is installed.

DO $install$
DECLARE
    -- One body for both functions: cogmem.embed(content) by MiniLM, and cogmem._embed_as(content, model,
    -- query) by a tenant's built-in model (E5's query side for a question); PL/Python's args holds the
    -- arguments after content for server_embed (none: its defaults, MiniLM's passage side).
    v_body text := $py$
if plpy.execute("SELECT current_setting('cogmem.embed', true) AS v")[0]["v"] == "off":
    return None
if "cogmem_embed" not in GD:
    GD["cogmem_embed"] = None
    try:
        from cogmem_pg.embed import server_embed
        GD["cogmem_embed"] = server_embed
    except Exception as exc:
        import sys
        plpy.warning(f"cogmem.embed() returns NULL in this session: PostgreSQL's Python cannot import cogmem_pg ({exc})",
                     hint=f"Install cogmem-pg[embed] for the server's Python ({sys.version.split()[0]} in {sys.prefix}), "
                          "or embed on the client (the Python client does by default); SET cogmem.embed = off silences this.")
return GD["cogmem_embed"] and GD["cogmem_embed"](content, GD, plpy.warning, *args[1:])
$py$;
    v_python boolean := EXISTS (SELECT FROM pg_catalog.pg_available_extensions WHERE name = 'plpython3u')
                        AND (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user);
    v_function text;
BEGIN
    IF v_python THEN
        CREATE EXTENSION IF NOT EXISTS plpython3u;
    ELSIF NOT EXISTS (SELECT FROM pg_catalog.pg_language WHERE lanname = 'plpython3u') THEN
        -- The one word a managed install gets about what it lacks (cogmem doctor reports it too).
        RAISE NOTICE '%', 'cogmem: no PL/Python (plpython3u) for this installer: the server does not embed '
                          || '(the client does) and the Gut''s release is off; everything else works'
            USING HINT = 'A superuser can CREATE EXTENSION plpython3u and run cogmem migrate again.';
    END IF;
    FOREACH v_function IN ARRAY ARRAY['embed(content text)', '_embed_as(content text, model text, query boolean)'] LOOP
        IF v_python THEN
            EXECUTE format($sql$
                CREATE OR REPLACE FUNCTION cogmem.%s
                RETURNS public.vector
                LANGUAGE plpython3u STABLE STRICT PARALLEL SAFE SECURITY INVOKER
                SET search_path = pg_catalog, cogmem, public, pg_temp
                AS %L $sql$, v_function, v_body);
        -- Without a superuser, a PL/Python version an earlier install made stays (it still works).
        ELSIF NOT EXISTS (SELECT FROM pg_catalog.pg_proc
                          WHERE proname = split_part(v_function, '(', 1) AND pronamespace = 'cogmem'::regnamespace) THEN
            EXECUTE format($sql$
                CREATE FUNCTION cogmem.%s
                RETURNS public.vector
                LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY INVOKER
                SET search_path = pg_catalog, cogmem, public, pg_temp
                AS 'SELECT NULL::public.vector' $sql$, v_function);
        END IF;
    END LOOP;
END;
$install$;
COMMENT ON FUNCTION cogmem._embed_as(text, text, boolean) IS
'Embeds text inside the server by a built-in model named as in tenants.embedding_model (query: E5''s '
'query side), when PostgreSQL''s Python has cogmem-pg[embed] and cogmem.embed is not off; NULL otherwise.';
COMMENT ON FUNCTION cogmem.embed(text) IS
'Embeds text inside the server (all-MiniLM-L6-v2, 384 dimensions) when PostgreSQL''s Python has '
'cogmem-pg[embed] and the setting cogmem.embed is not off; NULL otherwise (the first call of a session '
'says why in a WARNING).';

CREATE OR REPLACE FUNCTION cogmem.server_can_embed()
RETURNS boolean
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$ SELECT cogmem.embed('probe') IS NOT NULL $$;
COMMENT ON FUNCTION cogmem.server_can_embed() IS 'True when cogmem.embed() works in this server.';

-- One vector space per tenant (issue 47): every vector of a tenant is made by tenants.embedding_model,
-- fixed at creation. A vector from the caller joins the tenant only when the session has not declared
-- another model (a Python client given its own embedder declares it in cogmem.embedding_model); a vector
-- the server makes is made by the tenant's model, when the server's Python has it, or not at all (full
-- text finds what it says).
DROP FUNCTION IF EXISTS cogmem._embedding(text, public.vector, text);  -- before: no query side
CREATE OR REPLACE FUNCTION cogmem._embedding(
    p_tenant text, p_given public.vector, p_text text, p_query boolean DEFAULT FALSE
)
RETURNS public.vector
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_declared text := nullif(current_setting('cogmem.embedding_model', true), '');
    v_model    text;
BEGIN
    -- The common path (a batch calls this per item): a vector nobody declared needs no tenant read.
    IF p_given IS NOT NULL AND v_declared IS NULL THEN
        RETURN p_given;
    END IF;
    v_model := (SELECT t.embedding_model FROM cogmem.tenants AS t WHERE t.tenant = p_tenant);
    IF p_given IS NOT NULL THEN
        IF v_declared IS DISTINCT FROM v_model THEN
            RAISE EXCEPTION 'tenant "%" holds vectors of %, this session''s are of %', p_tenant, v_model, v_declared
                USING ERRCODE = 'data_exception',
                      HINT = format('Embed with %s for this tenant (Client(dsn, embedder=...) with that model), '
                                    'or keep texts of %s in a tenant created with it.', v_model, v_declared);
        END IF;
        RETURN p_given;
    END IF;
    RETURN CASE WHEN v_model = 'all-MiniLM-L6-v2-onnx-int8' THEN cogmem.embed(p_text)
                ELSE cogmem._embed_as(p_text, v_model, p_query) END;
END;
$$;
COMMENT ON FUNCTION cogmem._embedding(text, public.vector, text, boolean) IS
'The vector of a text for a tenant: the caller''s (refused when the session declares another model than '
'the tenant''s in cogmem.embedding_model), else the server''s by the tenant''s model (its query side for a '
'question, p_query) when the server has it, else NULL.';

-- The router's and the judge's dense heads read the vectors of the model they were trained on
-- (cogmem._dense_model): they are told the tenant's.
DROP FUNCTION IF EXISTS cogmem._routing_vector(text, public.vector);  -- before: MiniLM's heads alone
CREATE OR REPLACE FUNCTION cogmem._embedding_model_of(p_tenant text)
RETURNS text
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$ SELECT t.embedding_model FROM cogmem.tenants AS t WHERE t.tenant = p_tenant $$;
COMMENT ON FUNCTION cogmem._embedding_model_of(text) IS 'The model of a tenant''s vectors (tenants.embedding_model).';

-- The model of a new tenant's vectors when its creator names none, chosen by measurement (issue 47,
-- docs/models.md): multilingual E5 for every language but English (our Turkish evidence through recall:
-- 0.813 against MiniLM's 0.623 at 1,000 tokens), MiniLM for English (0.950 against E5's 0.919 at 3,200, at
-- half the cost per text). A database pins one for all: ALTER DATABASE ... SET
-- cogmem.default_embedding_model = 'multilingual-e5-small-q4'.
CREATE OR REPLACE FUNCTION cogmem._default_embedding_model(p_language regconfig)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN coalesce(
    nullif(current_setting('cogmem.default_embedding_model', TRUE), ''),
    CASE
        WHEN p_language = 'english'::regconfig THEN 'all-MiniLM-L6-v2-onnx-int8'
        ELSE 'multilingual-e5-small-q4'
    END
);
COMMENT ON FUNCTION cogmem._default_embedding_model(regconfig) IS
'The model of a new tenant''s vectors when none is named: the setting cogmem.default_embedding_model, else '
'all-MiniLM-L6-v2-onnx-int8 for English and multilingual-e5-small-q4 for every other language.';

-- A model's name, as tenants.embedding_model holds it (create_tenant, reembed_begin).
CREATE OR REPLACE FUNCTION cogmem._check_model_name(p_model text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_model IS NULL OR p_model !~ '^[[:graph:]]{1,100}$' THEN
        RAISE EXCEPTION 'embedding model name % is empty, longer than 100 characters or holds spaces',
                        coalesce(to_jsonb(left(p_model, 40))::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Name the model that makes the vectors, e.g. ''multilingual-e5-small-q4''.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._check_model_name(text) IS
'Raises invalid_parameter_value unless a model name is 1 to 100 printable characters without spaces.';

-- Every cosine threshold was set on MiniLM's cosines; another model spreads its cosines otherwise
-- (multilingual E5 puts unrelated sentences near 0.8, MiniLM near 0.06). A threshold keeps its meaning
-- when the same share of pairs passes it: bench/calibrate_similarity.py matches E5's to MiniLM's by
-- quantile over 3.1 million pairs of bench/corpus (docs/models.md). Gates that compare a question with
-- what is stored (guard, topic bypass, recall's related turns) take the values of E5's query side; the
-- same message seen from its two sides (question and passage) is at least 0.915 in 99% of texts.
-- Tenant settings take these at creation and when re-embedded (unless a person changed them).
-- MiniLM's supersede_similarity was 0.4 until 2026-12-07: a correction inside a longer message ("Booked
-- the service for the blue Tesla tomorrow, reg XY70 FGH") sits at 0.30-0.39 from the fact it replaces.
-- Chosen on the update writers the test is tuned on (upd-en, -3, -4: new first 0.910 at 0.4, 0.959 at
-- 0.3, compatible pairs wrongly superseded 2 of 178 at both); bench/run.py's evidence recall unchanged.
CREATE OR REPLACE FUNCTION cogmem._similarity_defaults(p_model text)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN p_model = 'multilingual-e5-small-q4'
        THEN '{"duplicate_similarity": 0.97, "merge_similarity": 0.97, "sibling_similarity": 0.955,
               "candidate_restated_similarity": 0.89, "dissonance_similarity": 0.84, "lesson_similarity": 0.92,
               "topic_bypass_similarity": 0.84, "guard_similarity": 0.82, "conversation_similarity": 0.815,
               "untopical_similarity": 0.82, "same_message_similarity": 0.95, "supersede_similarity": 0.86}'::jsonb
    ELSE '{"duplicate_similarity": 0.92, "merge_similarity": 0.92, "sibling_similarity": 0.85,
           "candidate_restated_similarity": 0.7, "dissonance_similarity": 0.4, "lesson_similarity": 0.8,
           "topic_bypass_similarity": 0.6, "guard_similarity": 0.35, "conversation_similarity": 0.2,
           "untopical_similarity": 0.35, "same_message_similarity": 0.98, "supersede_similarity": 0.3}'::jsonb
END;
COMMENT ON FUNCTION cogmem._similarity_defaults(text) IS
'The cosine thresholds of an embedding model, by name (MiniLM''s for a model not calibrated): the tenant '
'settings of that name and the gates of recall, report_error and the follow-up judge.';

CREATE OR REPLACE FUNCTION cogmem._model_similarity(p_model text, p_name text)
RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN (cogmem._similarity_defaults(p_model) ->> p_name)::real;
COMMENT ON FUNCTION cogmem._model_similarity(text, text) IS
'One cosine threshold of an embedding model (cogmem._similarity_defaults).';
