-- Topic detection: a per-tenant-overridable keyword taxonomy, matched in the tenant's language.
-- A keyword matches when the message has a word starting with it (keywords of 4+ letters, which
-- catches Turkish suffixes: "sunucuyu" -> sunucu) or the same stem in the tenant's language.

CREATE OR REPLACE FUNCTION cogmem.topic_keywords(tenant text)
RETURNS TABLE (topic text, keywords text[], overridden boolean)
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT coalesce(o.topic, d.topic), coalesce(o.keywords, d.keywords), o.topic IS NOT NULL
    FROM cogmem.default_topics AS d
    FULL JOIN (SELECT * FROM cogmem.tenant_topics AS t WHERE t.tenant = $1) AS o ON o.topic = d.topic
    ORDER BY 1;
$$;
COMMENT ON FUNCTION cogmem.topic_keywords(text) IS
'The effective topic taxonomy of a tenant: defaults, replaced per topic by the tenant''s own rows.';

CREATE OR REPLACE FUNCTION cogmem.set_topic(tenant text, topic text, keywords text[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_admin();
    PERFORM cogmem._require_tenant(set_topic.tenant);
    IF set_topic.topic IS NULL OR btrim(set_topic.topic) = '' THEN
        RAISE EXCEPTION 'topic must not be NULL or empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Name the topic, e.g. ''kubernetes''.';
    END IF;
    INSERT INTO cogmem.tenant_topics AS t (tenant, topic, keywords)
    VALUES (set_topic.tenant, lower(btrim(set_topic.topic)), coalesce(cogmem._normalize_topics(set_topic.keywords), '{}'))
    ON CONFLICT (tenant, topic) DO UPDATE SET keywords = excluded.keywords;
    PERFORM cogmem._refresh_topic_matchers(set_topic.tenant);
END;
$$;
COMMENT ON FUNCTION cogmem.set_topic(text, text, text[]) IS
'Adds or replaces a topic of a tenant''s taxonomy; an empty keyword list switches the topic off.';

CREATE OR REPLACE FUNCTION cogmem._keyword_query(p_language regconfig, p_keywords text[])
RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    -- Two alternatives per keyword: a prefix (or exact, for short words) match on unstemmed words,
    -- and a stem match in the tenant's language. Multi-word keywords match as phrases.
    SELECT string_agg(q, ' | ')::tsquery
    FROM (
        SELECT CASE
                   WHEN kw ~ '[[:space:]-]' THEN '(' || phraseto_tsquery('simple', kw)::text || ')'
                   WHEN length(kw) >= 4 THEN quote_literal(kw) || ':*'
                   ELSE quote_literal(kw)
               END AS q
        FROM unnest(p_keywords) AS k (kw)
        WHERE btrim(kw) <> ''
        UNION ALL
        SELECT '(' || phraseto_tsquery(p_language, k.kw)::text || ')'
        FROM unnest(p_keywords) AS k (kw)
        CROSS JOIN LATERAL (SELECT tsvector_to_array(to_tsvector(p_language, k.kw)) AS stems) AS x
        -- A stem only where it is as specific as the keyword: no word dropped as a stop word ("on call"
        -- is not "call") and no stem under 4 letters (Turkish "sürüm" stems to "sür", as "sürdüm" does).
        WHERE cardinality(x.stems) = cardinality(regexp_split_to_array(btrim(k.kw), '[[:space:]-]+'))
          AND NOT EXISTS (SELECT FROM unnest(x.stems) AS s (stem) WHERE length(s.stem) < 4)
    ) AS alternatives
    WHERE q <> '()';
$$;
COMMENT ON FUNCTION cogmem._keyword_query(regconfig, text[]) IS
'Compiles topic keywords into one tsquery over unstemmed prefixes and language stems.';

CREATE OR REPLACE FUNCTION cogmem._refresh_topic_matchers(p_tenant text)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    DELETE FROM cogmem.topic_matchers AS t WHERE t.tenant = p_tenant;
    INSERT INTO cogmem.topic_matchers (tenant, topic, matcher)
    SELECT p_tenant, k.topic, cogmem._keyword_query(t.language, k.keywords)
    FROM cogmem.tenants AS t
    CROSS JOIN LATERAL cogmem.topic_keywords(t.tenant) AS k
    WHERE t.tenant = p_tenant AND cogmem._keyword_query(t.language, k.keywords) IS NOT NULL;
$$;
COMMENT ON FUNCTION cogmem._refresh_topic_matchers(text) IS
'Recompiles a tenant''s topic matchers (after create_tenant, set_topic, or a taxonomy upgrade).';

CREATE OR REPLACE FUNCTION cogmem._detect_topics(p_tenant text, p_message text, p_language regconfig)
RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- PL/pgSQL, not SQL: a SQL function with a SET clause is planned on every call; this plan is cached.
AS $$
DECLARE
    v_words tsvector := to_tsvector('simple', p_message) || to_tsvector(p_language, p_message);
BEGIN
    RETURN (
        SELECT coalesce(array_agg(t.topic ORDER BY t.topic), '{}')
        FROM cogmem.topic_matchers AS t
        WHERE t.tenant = p_tenant AND v_words @@ t.matcher
    );
END;
$$;
COMMENT ON FUNCTION cogmem._detect_topics(text, text, regconfig) IS
'detect_topics without the input checks, for callers that already resolved the tenant language.';

CREATE OR REPLACE FUNCTION cogmem.detect_topics(tenant text, message text)
RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_language regconfig := cogmem._require_tenant(detect_topics.tenant);
BEGIN
    IF detect_topics.message IS NULL THEN
        RAISE EXCEPTION 'message must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the text to classify ('''' gives no topics).';
    END IF;
    RETURN cogmem._detect_topics(detect_topics.tenant, detect_topics.message, v_language);
END;
$$;
COMMENT ON FUNCTION cogmem.detect_topics(text, text) IS
'Topics of a message from the tenant''s taxonomy (see cogmem.topic_keywords), sorted.';

-- The default taxonomy may have changed with this upgrade: recompile every tenant's matchers.
SELECT cogmem._refresh_topic_matchers(t.tenant) FROM cogmem.tenants AS t;
