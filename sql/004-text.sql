-- Text: the checks a memory's text, topics and source pass, topic normalisation, the details that tell
-- siblings apart, and the lexeme helpers of full-text matching.

-- The tenant's limits on what one memory carries (migration 0017); a batch checks them per item
-- (sql/061-remember-many.sql, _batch_problem).
CREATE OR REPLACE FUNCTION cogmem._check_limits(t cogmem.tenants, p_topics text[], p_source jsonb)
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_longest integer := (SELECT max(length(x)) FROM unnest(p_topics) AS x);
BEGIN
    IF cardinality(p_topics) > t.max_topics THEN
        RAISE EXCEPTION '% topics, the limit for tenant "%" is %', cardinality(p_topics), t.tenant, t.max_topics
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Name the few topics that matter, or raise cogmem.tenants.max_topics (configure_tenant).';
    END IF;
    IF v_longest > t.max_topic_chars THEN
        RAISE EXCEPTION 'a topic has % characters, the limit for tenant "%" is %', v_longest, t.tenant, t.max_topic_chars
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'A topic is a word or two, e.g. ''kubernetes''; or raise cogmem.tenants.max_topic_chars.';
    END IF;
    IF octet_length(p_source::text) > t.max_source_bytes THEN
        RAISE EXCEPTION 'source has % bytes, the limit for tenant "%" is %', octet_length(p_source::text), t.tenant,
            t.max_source_bytes
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Keep provenance short (who, channel, a link); or raise cogmem.tenants.max_source_bytes.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._check_limits(cogmem.tenants, text[], jsonb) IS
'Refuses more topics, a longer topic or a larger source than the tenant allows, naming the limit.';

CREATE OR REPLACE FUNCTION cogmem._normalize_topics(p_topics text[])
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
RETURN (
    SELECT coalesce(array_agg(DISTINCT lower(btrim(t)) ORDER BY lower(btrim(t))), '{}')
    FROM unnest(p_topics) AS t
    WHERE t IS NOT NULL AND btrim(t) <> ''
);
COMMENT ON FUNCTION cogmem._normalize_topics(text[]) IS
'Lower-cased, trimmed, de-duplicated, sorted topics without empty entries; NULL for NULL.';

CREATE OR REPLACE FUNCTION cogmem._details(p_content text)
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Discriminating details: anything with a digit (IPs, versions, hosts like web-2, amounts, dates)
-- plus environment and OS words. Two texts that differ here are siblings, never duplicates.
RETURN (
    SELECT coalesce(array_agg(DISTINCT d ORDER BY d), '{}')
    FROM (
        SELECT lower(m[1]) AS d
        FROM regexp_matches(
            p_content,
            '([[:alnum:]_.:/-]*[0-9][[:alnum:]_.:/-]*|\m(?:staging|production|prod|dev|test|qa|linux|windows|'
            || 'macos|ubuntu|debian|centos|rhel|alpine|arm64|x86_64|amd64)\M)',
            'gi'
        ) AS m
    ) AS s
    WHERE d <> ''
);
COMMENT ON FUNCTION cogmem._details(text) IS
'Discriminating details of a text (numbers, IPs, versions, numbered hosts, environments, OS names).';

-- Like cogmem.strength: no SET search_path, so that it is inlined where it runs once per row (it names
-- only pg_catalog functions). A tsvector holds each lexeme once, so the lexemes ts_delete removes are
-- exactly those in common.
CREATE OR REPLACE FUNCTION cogmem._shared_words(search tsvector, words text[])
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN length(search) - length(ts_delete(search, words));
COMMENT ON FUNCTION cogmem._shared_words(tsvector, text[]) IS
'How many of the given (already stemmed) words a text''s tsvector holds.';

CREATE OR REPLACE FUNCTION cogmem._or_query(p_lexemes text[])
RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- PL/pgSQL, not SQL: a SQL function with a SET clause is planned on every call (docs/scaling.md).
AS $$
BEGIN
    RETURN (SELECT nullif(string_agg(quote_literal(l), ' | '), '')::tsquery FROM unnest(p_lexemes) AS l);
END;
$$;
COMMENT ON FUNCTION cogmem._or_query(text[]) IS
'A tsquery matching any of the given (already stemmed) lexemes; NULL when there are none.';

-- The caller's judgement of what a text is, as a ring: a ring's own name, or a kind an agent can name
-- without knowing the rings (MCP, LangGraph, an LLM's classifier). A preference is a rule about the person
-- ("always email me", "no meat"): kept like one, in that person's scope when one is given.
CREATE OR REPLACE FUNCTION cogmem._ring_of(p_kind text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE lower(btrim(p_kind))
    WHEN 'shocks' THEN 'shocks' WHEN 'dos_and_donts' THEN 'dos_and_donts' WHEN 'long_term' THEN 'long_term'
    WHEN 'habits' THEN 'habits' WHEN 'procedures' THEN 'procedures' WHEN 'fresh' THEN 'fresh'
    WHEN 'rule' THEN 'dos_and_donts' WHEN 'preference' THEN 'dos_and_donts' WHEN 'incident' THEN 'shocks'
    WHEN 'procedure' THEN 'procedures' WHEN 'habit' THEN 'habits' WHEN 'fact' THEN 'long_term'
    WHEN 'chat' THEN 'fresh'
END;
COMMENT ON FUNCTION cogmem._ring_of(text) IS
'The ring a ring name or a kind names (rule and preference: dos_and_donts, incident: shocks, procedure, '
'habit, fact: long_term, chat: fresh); NULL for anything else.';
