-- Shared helpers: input checks with clear errors, topic normalisation, token and detail extraction.
-- Idempotent: re-applied after every upgrade (CREATE OR REPLACE only).

-- Who is calling, and which tenants it reaches (row-level security, sql/110-isolation.sql).
--
-- The writing functions run as the NOLOGIN role cogmem_owner (SECURITY DEFINER, sql/999-privileges.sql),
-- where current_user names the owner. cogmem.caller() names the role the call acts for: current_user
-- outside a definer function; inside one, the role chosen with SET ROLE (a definer function leaves that
-- setting alone) or else the login. A role used through group membership acts as itself, and its
-- groups' grants apply through pg_has_role. The policies evaluate reach for caller(), so the owner is
-- bound to the caller's tenants as the caller would be. Created by migration 0015 (column defaults
-- need it); re-created here unchanged.
CREATE OR REPLACE FUNCTION cogmem.caller()
RETURNS name
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- SET ROLE sets the role setting, which a definer function does not change; session_user is the login.
    IF current_user OPERATOR(pg_catalog.<>) 'cogmem_owner' THEN
        RETURN current_user;
    ELSIF pg_catalog.current_setting('role') OPERATOR(pg_catalog.<>) 'none' THEN
        RETURN pg_catalog.current_setting('role')::name;
    END IF;
    RETURN session_user;
END;
$$;
COMMENT ON FUNCTION cogmem.caller() IS
'The role a call acts for: current_user, or inside the API''s definer functions the SET ROLE role or the login.';

-- The policies run these once per statement and table, so they are PL/pgSQL (a SQL function with a SET
-- clause is parsed and planned on every call) and read only the caller's own rows of tenant_access.
-- They are public: a policy runs them as whoever reads the table, and they tell a role only about itself.
CREATE OR REPLACE FUNCTION cogmem.reaches_every_tenant()
RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN pg_catalog.pg_has_role(cogmem.caller(), 'cogmem_admin', 'USAGE')  -- superusers are members
        OR EXISTS (SELECT FROM cogmem.tenant_access AS a WHERE a.tenant OPERATOR(pg_catalog.=) '*')
        -- A role that bypasses row-level security keeps doing so through the API.
        OR (SELECT r.rolbypassrls FROM pg_catalog.pg_roles AS r WHERE r.rolname OPERATOR(pg_catalog.=) cogmem.caller());
END;
$$;
COMMENT ON FUNCTION cogmem.reaches_every_tenant() IS
'True for members of cogmem_admin and for roles granted tenant ''*'' (row-level security shows a role '
'only its own grants).';

CREATE OR REPLACE FUNCTION cogmem.reachable_tenants()
RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
-- Index lookups only, whatever the statistics say: a plan that reads all of tenant_access evaluates its
-- policy on every grant.
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $$
DECLARE
    v_caller name := cogmem.caller();
BEGIN
    -- The roles whose grants apply: the caller and what it is a member of, as pg_has_role decides
    -- (USAGE: membership with inheritance). Walked from the caller, not tested for every role there is.
    RETURN (
        SELECT pg_catalog.array_agg(a.tenant) FROM cogmem.tenant_access AS a
        WHERE a.role_name OPERATOR(pg_catalog.=) ANY (ARRAY(
            WITH RECURSIVE reach (oid) AS (
                SELECT pg_catalog.to_regrole(pg_catalog.quote_ident(v_caller))::oid
                UNION
                -- A lookup per role reached (OFFSET 0 keeps it one), not a pass over every membership.
                SELECT m.roleid FROM reach, LATERAL (
                    SELECT a.roleid FROM pg_catalog.pg_auth_members AS a
                    WHERE a.member OPERATOR(pg_catalog.=) reach.oid OFFSET 0
                ) AS m
            )
            SELECT pg_catalog.pg_get_userbyid(reach.oid) FROM reach
            WHERE pg_catalog.pg_has_role(v_caller, reach.oid, 'USAGE')
        ))
    );
END;
$$;
COMMENT ON FUNCTION cogmem.reachable_tenants() IS 'The tenants the calling role was granted.';

CREATE OR REPLACE FUNCTION cogmem.may_use_vault(tenant text)
RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- Membership is checked here, not left to the row-level security of tenant_access: administrators
    -- see every grant there, and must not hold every vault by that. A dropped role reaches nothing
    -- (to_regrole gives NULL). Superusers and BYPASSRLS roles read every vault directly, and so through
    -- the API too.
    RETURN (SELECT r.rolsuper OR r.rolbypassrls FROM pg_catalog.pg_roles AS r
            WHERE r.rolname OPERATOR(pg_catalog.=) cogmem.caller())
        OR EXISTS (
            SELECT FROM cogmem.tenant_access AS a
            WHERE a.vault AND a.tenant OPERATOR(pg_catalog.=) ANY (ARRAY[may_use_vault.tenant, '*'])
              AND pg_catalog.pg_has_role(
                  cogmem.caller(), pg_catalog.to_regrole(pg_catalog.quote_ident(a.role_name)), 'USAGE')
        );
END;
$$;
COMMENT ON FUNCTION cogmem.may_use_vault(text) IS 'Whether the calling role was granted this tenant''s vault.';

-- A tenant's routing key: the partition key of a router in front of shards (docs/scaling.md). Ids that
-- calls take without the tenant (a recall's, a session's) begin with it, so the router can route them.
-- Like cogmem.strength: no SET search_path, so that it can be inlined.
CREATE OR REPLACE FUNCTION cogmem._tenant_key(p_tenant text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN pg_catalog.hashtext(p_tenant) & 2147483647;
COMMENT ON FUNCTION cogmem._tenant_key(text) IS 'A tenant''s routing key: its hashtext, non-negative.';

CREATE OR REPLACE FUNCTION cogmem._keyed_uuid(p_tenant text)
RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
-- A random (version 4) UUID whose first 32 bits are the tenant's key: 90 random bits remain.
RETURN encode(pg_catalog.overlay(uuid_send(gen_random_uuid()), int4send(cogmem._tenant_key(p_tenant)), 1, 4), 'hex')::uuid;
COMMENT ON FUNCTION cogmem._keyed_uuid(text) IS 'A random UUID that begins with the tenant''s routing key.';

-- The first statement of every function that names a tenant. Row-level security would hide a tenant the
-- caller does not reach all the same; this says so explicitly, and answers exactly as for a tenant that
-- does not exist, so that neither can be told from the other.
CREATE OR REPLACE FUNCTION cogmem._reach(p_tenant text)
RETURNS regconfig
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_language regconfig;
BEGIN
    IF p_tenant IS NULL THEN
        RAISE EXCEPTION 'tenant must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the tenant name, e.g. ''acme''.';
    END IF;
    IF pg_catalog.btrim(p_tenant) OPERATOR(pg_catalog.=) '' THEN
        RAISE EXCEPTION 'tenant must not be empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass the tenant name, e.g. ''acme''.';
    END IF;
    SELECT t.language INTO v_language FROM cogmem.tenants AS t
    WHERE t.tenant OPERATOR(pg_catalog.=) p_tenant
      AND (p_tenant OPERATOR(pg_catalog.=) ANY (cogmem.reachable_tenants()) OR cogmem.reaches_every_tenant());
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown tenant "%"', p_tenant
            USING ERRCODE = 'undefined_object',
                  HINT = CASE WHEN p_tenant IS NFC NORMALIZED
                              THEN pg_catalog.format('Create it first: SELECT cogmem.create_tenant(%L);', p_tenant)
                              ELSE 'Tenant names are stored in Unicode NFC: pass normalize(name, NFC).' END;
    END IF;
    RETURN v_language;
END;
$$;
COMMENT ON FUNCTION cogmem._reach(text) IS
'Checks that the caller reaches the tenant (an unreachable tenant is an unknown one); returns its language.';

-- The first statement of the administrative functions that name no single tenant.
CREATE OR REPLACE FUNCTION cogmem._reach_every()
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT pg_catalog.pg_has_role(cogmem.caller(), 'cogmem_admin', 'USAGE') THEN
        RAISE EXCEPTION 'permission denied: % is not a cogmem administrator', cogmem.caller()
            USING ERRCODE = 'insufficient_privilege', HINT = 'GRANT cogmem_admin TO the role that runs this.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._reach_every() IS
'Raises insufficient_privilege unless the caller is a member of cogmem_admin (superusers are).';

-- The first statement of the administrative functions that may name one tenant (NULL: every tenant).
CREATE OR REPLACE FUNCTION cogmem._reach_every(p_tenant text)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM cogmem._reach_every();
    IF p_tenant IS NOT NULL THEN
        PERFORM cogmem._reach(p_tenant);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._reach_every(text) IS
'cogmem._reach_every(), then, when a tenant is named, cogmem._reach(tenant): an administrator, and a '
'tenant that exists.';

-- Daytime calls (remember, recall, feedback, observe) share a tenant; a consolidation night has it to
-- itself. Each takes row locks on many memory_stats rows, and in no order a deadlock could be ruled
-- out by; this lock keeps the two apart, and the day's calls lock rows in memory_id order.
-- The lock is on the tenant's own row, not an advisory key: locking a row needs UPDATE on the table
-- and a view of the row, which only the API's owner has (an advisory lock any login could take, and
-- stall the tenant). The wait is bounded; a day call that times out says why.
CREATE OR REPLACE FUNCTION cogmem._lock_tenant(p_tenant text, p_exclusive boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
    v_wait text := coalesce(nullif(current_setting('cogmem.lock_wait', true), ''), '10s');
BEGIN
    -- The header's lock_timeout makes this setting local to the call (cogmem.lock_wait may change it).
    PERFORM set_config('lock_timeout', v_wait, true);
    IF p_exclusive THEN
        PERFORM FROM cogmem.tenants AS t WHERE t.tenant = p_tenant FOR UPDATE;
    ELSE
        PERFORM FROM cogmem.tenants AS t WHERE t.tenant = p_tenant FOR KEY SHARE;
    END IF;
EXCEPTION WHEN lock_not_available THEN
    RAISE EXCEPTION 'tenant "%" is busy: % held it for %', p_tenant,
        CASE WHEN p_exclusive THEN 'its calls' ELSE 'its night' END, v_wait
        USING ERRCODE = 'lock_not_available',
              HINT = CASE WHEN p_exclusive THEN 'The night skips it and takes it next time.'
                          ELSE 'Retry shortly: a night consolidates a tenant in seconds.' END;
END;
$$;
COMMENT ON FUNCTION cogmem._lock_tenant(text, boolean) IS
'Locks the tenant''s row for this transaction: shared for daytime calls, exclusive for a night; waits at '
'most 10 seconds (SET cogmem.lock_wait to change it).';

-- One writer at a time for what each write derives from the last (trust scores, identity versions).
CREATE OR REPLACE FUNCTION cogmem._serialize_tenant(p_tenant text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET lock_timeout = '10s'
AS $$
BEGIN
    PERFORM FROM cogmem.tenants AS t WHERE t.tenant = p_tenant FOR NO KEY UPDATE;
END;
$$;
COMMENT ON FUNCTION cogmem._serialize_tenant(text) IS
'Serialises one kind of per-tenant writer on the tenant''s row (it does not block the day''s calls).';

-- Every lock on rows of memory_stats goes through here (recall's rehearsal excepted, see _log_recall):
-- in memory_id order, so that two calls locking overlapping sets cannot deadlock.
CREATE OR REPLACE FUNCTION cogmem._lock_stats(p_tenant text, p_memory_ids bigint[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    PERFORM FROM cogmem.memory_stats AS s
    WHERE s.tenant = p_tenant AND s.memory_id = ANY (p_memory_ids)
    ORDER BY s.memory_id
    FOR UPDATE;
END;
$$;
COMMENT ON FUNCTION cogmem._lock_stats(text, bigint[]) IS
'Locks the statistics rows of the given memories in memory_id order (the one order every call uses).';

CREATE OR REPLACE FUNCTION cogmem.embedding_dimensions()
RETURNS integer
LANGUAGE plpgsql STABLE SECURITY INVOKER PARALLEL SAFE
SET search_path = pg_catalog, cogmem, public, pg_temp
-- The column type is the single source of truth: the dimension is an install-time choice.
-- PL/pgSQL, not SQL: it caches the plan of its query for the session, and remember calls it every time.
AS $$
BEGIN
    RETURN (
        SELECT a.atttypmod FROM pg_catalog.pg_attribute AS a
        WHERE a.attrelid = 'cogmem.memories'::regclass AND a.attname = 'embedding'
    );
END;
$$;
COMMENT ON FUNCTION cogmem.embedding_dimensions() IS
'Dimension of stored embeddings (384 for all-MiniLM-L6-v2), read from the memories.embedding column.';

-- The tenant's limits on what one memory carries (migration 0017); a batch checks them per item
-- (sql/060-remember.sql, _batch_problem).
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

CREATE OR REPLACE FUNCTION cogmem._comparable(p_embedding public.vector)
RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, public, pg_temp
RETURN (p_embedding OPERATOR(public.<=>) p_embedding) < 0.001;  -- noqa: LT01
COMMENT ON FUNCTION cogmem._comparable(public.vector) IS
'Whether a vector has a direction cosine can compare (its cosine distance to itself is 0, not NaN).';

CREATE OR REPLACE FUNCTION cogmem._check_embedding(p_embedding public.vector)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_expected integer := cogmem.embedding_dimensions();
BEGIN
    IF p_embedding IS NOT NULL AND public.vector_dims(p_embedding) <> v_expected THEN
        RAISE EXCEPTION 'embedding has % dimensions, expected %', public.vector_dims(p_embedding), v_expected
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Embed with the model this schema was installed for, or pass NULL to embed here.';
    END IF;
    -- A vector whose cosine with itself is not 1 cannot be compared with anything: zero, or so small or
    -- so large that its norm under- or overflows. Its similarity would be NaN, which passes every
    -- threshold in PostgreSQL's ordering (NaN sorts above every number).
    IF p_embedding IS NOT NULL AND NOT cogmem._comparable(p_embedding) THEN
        RAISE EXCEPTION 'embedding cannot be compared: it is zero, or too small or too large in magnitude'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass a non-zero vector of ordinary magnitude (an L2-normalised embedding is), '
                         || 'or NULL to embed here.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._check_embedding(public.vector) IS
'Raises invalid_parameter_value when an embedding does not have the installed dimension.';

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

-- No SET search_path here, on purpose: it would stop PostgreSQL from inlining this expression into
-- recall's ranking query, where it runs for every candidate. It names only pg_catalog functions, which
-- are found first whatever the caller's search_path.
CREATE OR REPLACE FUNCTION cogmem.strength(age interval, half_life interval)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN CASE
    WHEN half_life IS NULL THEN 1.0
    -- date_part, not extract: double precision arithmetic; extract's numeric cost twice as much per row.
    ELSE exp(-ln(2) * greatest(date_part('epoch', age), 0) / date_part('epoch', half_life))
END;
COMMENT ON FUNCTION cogmem.strength(interval, interval) IS
'Ebbinghaus strength exp(-ln 2 * age / half_life); 1 for rings that never decay (half_life NULL).';

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

CREATE OR REPLACE FUNCTION cogmem._refuse_change()
RETURNS trigger
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION '% on %.% is not allowed: % rows are immutable', tg_op, tg_table_schema, tg_table_name,
        tg_table_name
        USING ERRCODE = 'object_not_in_prerequisite_state',
              HINT = CASE WHEN tg_table_name LIKE 'audit_log%' THEN 'The audit trail is append-only. Erasure '
                          'leaves a tombstone instead: cogmem.erase(tenant, memory_id, reason).' ELSE CASE tg_table_name
                  WHEN 'bios_rules' THEN 'Retire a rule with cogmem.retire_bios_rule(rule_id, reason) and add a new one.'
                  WHEN 'bios_preset_loads' THEN 'Load a new version of the preset: cogmem.load_bios_preset(...).'
                  WHEN 'audit_chain' THEN 'The audit trail is append-only; cogmem.verify_audit() checks it.'
                  ELSE 'These rows are append-only.'
              END END;
END;
$$;
COMMENT ON FUNCTION cogmem._refuse_change() IS
'Trigger function that refuses UPDATE, DELETE and TRUNCATE on append-only tables.';
