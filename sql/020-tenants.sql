-- Tenants and their recall layers. Every row of cogmem carries its tenant.

DROP FUNCTION IF EXISTS cogmem.create_tenant(text, text);  -- before 0039: no embedding model
CREATE OR REPLACE FUNCTION cogmem.create_tenant(
    tenant text, language text DEFAULT 'english', embedding_model text DEFAULT NULL
)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_tenant   text := create_tenant.tenant;
    v_language regconfig;
    v_existing regconfig;
    v_model    text;
BEGIN
    PERFORM cogmem._require_admin();
    IF v_tenant IS NULL THEN
        RAISE EXCEPTION 'tenant must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the tenant name, e.g. ''acme''.';
    END IF;
    IF btrim(v_tenant) = '' OR length(v_tenant) > 200 THEN
        RAISE EXCEPTION 'tenant name "%" is empty or longer than 200 characters', left(v_tenant, 40)
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use a short, stable identifier such as ''acme''.';
    END IF;
    IF v_tenant ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'tenant name % holds control characters (tabs, newlines)', to_jsonb(left(v_tenant, 40))
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use a short, stable identifier such as ''acme''.';
    END IF;
    -- One spelling per name: "école" typed as one character or as e and a combining accent is one tenant.
    v_tenant := normalize(v_tenant, NFC);
    BEGIN  -- to_regconfig() arrived only in PostgreSQL 16
        v_language := coalesce(create_tenant.language, 'english')::regconfig;
        -- The cast also takes a number as an object id ('0', '1.2' as a schema): only a name that is there.
        IF create_tenant.language ~ '^[[:space:]]*[0-9]+[[:space:]]*$'
           OR NOT EXISTS (SELECT FROM pg_catalog.pg_ts_config AS c WHERE c.oid = v_language) THEN
            RAISE EXCEPTION USING ERRCODE = 'undefined_object';
        END IF;
    EXCEPTION WHEN undefined_object OR invalid_name OR syntax_error OR invalid_schema_name THEN
        RAISE EXCEPTION 'unknown text search language "%"', create_tenant.language
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use an installed configuration: SELECT cfgname FROM pg_ts_config;';
    END;

    v_model := coalesce(create_tenant.embedding_model, cogmem._default_embedding_model(v_language));
    PERFORM cogmem._check_model_name(v_model);

    -- Cosine settings on the scale of the tenant's model (sql/007-embed.sql), in the row it is created with:
    -- one audited act, as a person sees it.
    INSERT INTO cogmem.tenants (tenant, language, embedding_model, duplicate_similarity, merge_similarity,
                                sibling_similarity, candidate_restated_similarity, dissonance_similarity,
                                topic_bypass_similarity, guard_similarity)
    SELECT v_tenant, v_language, v_model, (d ->> 'duplicate_similarity')::real, (d ->> 'merge_similarity')::real,
           (d ->> 'sibling_similarity')::real, (d ->> 'candidate_restated_similarity')::real,
           (d ->> 'dissonance_similarity')::real, (d ->> 'topic_bypass_similarity')::real,
           (d ->> 'guard_similarity')::real
    FROM cogmem._similarity_defaults(v_model) AS d
    ON CONFLICT (tenant) DO NOTHING;
    IF NOT FOUND THEN
        SELECT t.language INTO v_existing FROM cogmem.tenants AS t WHERE t.tenant = v_tenant;
        IF v_existing <> v_language THEN
            RAISE EXCEPTION 'tenant "%" already exists with language %', v_tenant, v_existing
                USING ERRCODE = 'unique_violation',
                      HINT = 'A tenant''s language is fixed once its memories are indexed; create a new tenant.';
        END IF;
        IF create_tenant.embedding_model IS NOT NULL
           AND (SELECT t.embedding_model FROM cogmem.tenants AS t WHERE t.tenant = v_tenant) <> v_model THEN
            RAISE EXCEPTION 'tenant "%" already exists with vectors of another model than %', v_tenant, v_model
                USING ERRCODE = 'unique_violation',
                      HINT = 'A tenant has one vector space; re-embed it to change the model.';
        END IF;
        RETURN;
    END IF;

    -- Default budget split (3,200 tokens) in priority order; unused allocation flows to later layers.
    INSERT INTO cogmem.tenant_layers (tenant, layer, priority, token_allocation, half_life, never_cut)
    VALUES
        (v_tenant, 'bios', 1, 300, NULL, true),
        (v_tenant, 'shocks', 2, 300, NULL, true),
        (v_tenant, 'dos_and_donts', 3, 400, NULL, true),
        (v_tenant, 'gut', 4, 400, NULL, false),
        (v_tenant, 'long_term', 5, 500, interval '60 days', false),
        (v_tenant, 'habits', 6, 200, interval '90 days', false),
        (v_tenant, 'procedures', 7, 300, interval '90 days', false),
        (v_tenant, 'fresh', 8, 300, interval '7 days', false);
    PERFORM cogmem._refresh_topic_matchers(v_tenant);
END;
$$;
COMMENT ON FUNCTION cogmem.create_tenant(text, text, text) IS
'Creates a tenant with a text-search language, the model that makes its vectors (default: the setting '
'cogmem.default_embedding_model, else all-MiniLM-L6-v2-onnx-int8 for English and multilingual-e5-small-q4 '
'for every other language) and the default recall layers. Idempotent.';

-- Settings are plain columns of cogmem.tenants and cogmem.tenant_layers, which no application role may
-- write (sql/999-privileges.sql): administrators change them here, and the change is audited by the
-- tables' governance triggers (sql/100-audit-chain.sql).
CREATE OR REPLACE FUNCTION cogmem.configure_tenant(tenant text, settings jsonb, layer text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes tenants or tenant_layers, which only the API's owner may.
AS $$
DECLARE
    v_table   regclass := CASE WHEN configure_tenant.layer IS NULL THEN 'cogmem.tenants' ELSE 'cogmem.tenant_layers' END;
    v_fixed   text[] := CASE WHEN configure_tenant.layer IS NULL THEN '{tenant,language,created_at,embedding_model}' ELSE '{tenant,layer}' END;
    v_allowed text[];
    v_unknown text[];
    v_row     jsonb;
BEGIN
    PERFORM cogmem._require_admin();
    PERFORM cogmem._require_tenant(configure_tenant.tenant);
    IF configure_tenant.settings IS NULL OR jsonb_typeof(configure_tenant.settings) <> 'object'
       OR configure_tenant.settings = '{}' THEN
        RAISE EXCEPTION 'settings must be a non-empty JSON object'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'e.g. ''{"merge_similarity": 0.95}''';
    END IF;
    IF configure_tenant.layer IS NOT NULL AND NOT configure_tenant.layer = ANY (enum_range(NULL::cogmem.layer)::text[]) THEN
        RAISE EXCEPTION 'unknown layer "%"', configure_tenant.layer
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Use one of: %s.', array_to_string(enum_range(NULL::cogmem.layer)::text[], ', '));
    END IF;
    v_allowed := ARRAY(SELECT a.attname::text FROM pg_attribute AS a
                       WHERE a.attrelid = v_table AND a.attnum > 0 AND NOT a.attisdropped
                         AND a.attgenerated = '' AND NOT a.attname = ANY (v_fixed) ORDER BY a.attnum);
    v_unknown := ARRAY(SELECT k FROM jsonb_object_keys(configure_tenant.settings) AS k
                       WHERE NOT k = ANY (v_allowed) ORDER BY k);
    IF cardinality(v_unknown) > 0 THEN
        RAISE EXCEPTION 'no setting named %', array_to_string(v_unknown, ', ')
            USING ERRCODE = 'undefined_column', HINT = format('Settings: %s.', array_to_string(v_allowed, ', '));
    END IF;
    -- Names are checked against the catalog above and quoted; values go in as a record, typed by it.
    EXECUTE format(
        'UPDATE %s AS t SET %s FROM jsonb_populate_record(NULL::%s, $1) AS r WHERE t.tenant = $2 %s RETURNING to_jsonb(t)',
        v_table,
        (SELECT string_agg(format('%I = r.%I', k, k), ', ') FROM jsonb_object_keys(configure_tenant.settings) AS k),
        v_table,
        CASE WHEN configure_tenant.layer IS NULL THEN '' ELSE 'AND t.layer = $3::cogmem.layer' END)
    INTO v_row
    USING configure_tenant.settings, configure_tenant.tenant, configure_tenant.layer;
    RETURN v_row;
END;
$$;
COMMENT ON FUNCTION cogmem.configure_tenant(text, jsonb, text) IS
'Administrators: changes a tenant''s settings (columns of cogmem.tenants) or, with layer, one recall '
'layer''s (cogmem.tenant_layers: priority, token_allocation, half_life, never_cut). Audited. Returns the row.';

-- A re-embedded tenant's cosine settings follow its model: each takes the new model's value, unless a
-- person set it to another than the old model's (a new tenant is created with its model's values).
-- Through configure_tenant, as a person's change goes (its callers are administrators): checked, and
-- audited by the governance trigger; nothing to change, nothing written.
CREATE OR REPLACE FUNCTION cogmem._adopt_model_similarities(p_tenant text, p_from text, p_to text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    o jsonb := cogmem._similarity_defaults(p_from);
    t jsonb := (SELECT to_jsonb(x) FROM cogmem.tenants AS x WHERE x.tenant = p_tenant);
    v_changes jsonb;
BEGIN
    SELECT jsonb_object_agg(k.key, k.value) INTO v_changes
    FROM jsonb_each(cogmem._similarity_defaults(p_to)) AS k
    WHERE t ? k.key  -- a setting of the tenant's (the others are gates in the SQL)
      AND (t ->> k.key)::real = (o ->> k.key)::real
      AND (t ->> k.key)::real <> (k.value #>> '{}')::real;
    IF v_changes IS NOT NULL THEN
        PERFORM cogmem.configure_tenant(p_tenant, v_changes);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._adopt_model_similarities(text, text, text) IS
'Sets a tenant''s cosine settings to an embedding model''s values (cogmem._similarity_defaults), keeping '
'those a person changed from the previous model''s.';
