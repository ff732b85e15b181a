-- Tenants and their recall layers. Every row of cogmem carries its tenant.

CREATE OR REPLACE FUNCTION cogmem.create_tenant(tenant text, language text DEFAULT 'english')
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_tenant   text := create_tenant.tenant;
    v_language regconfig;
    v_existing regconfig;
BEGIN
    PERFORM cogmem._reach_every();
    IF v_tenant IS NULL THEN
        RAISE EXCEPTION 'tenant must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the tenant name, e.g. ''acme''.';
    END IF;
    IF btrim(v_tenant) = '' OR length(v_tenant) > 200 THEN
        RAISE EXCEPTION 'tenant name "%" is empty or longer than 200 characters', left(v_tenant, 40)
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use a short, stable identifier such as ''acme''.';
    END IF;
    BEGIN  -- to_regconfig() arrived only in PostgreSQL 16
        v_language := coalesce(create_tenant.language, 'english')::regconfig;
    EXCEPTION WHEN undefined_object OR invalid_name OR syntax_error THEN
        RAISE EXCEPTION 'unknown text search language "%"', create_tenant.language
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use an installed configuration: SELECT cfgname FROM pg_ts_config;';
    END;

    INSERT INTO cogmem.tenants (tenant, language) VALUES (v_tenant, v_language)
    ON CONFLICT (tenant) DO NOTHING;
    IF NOT FOUND THEN
        SELECT t.language INTO v_existing FROM cogmem.tenants AS t WHERE t.tenant = v_tenant;
        IF v_existing <> v_language THEN
            RAISE EXCEPTION 'tenant "%" already exists with language %', v_tenant, v_existing
                USING ERRCODE = 'unique_violation',
                      HINT = 'A tenant''s language is fixed once its memories are indexed; create a new tenant.';
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
COMMENT ON FUNCTION cogmem.create_tenant(text, text) IS
'Creates a tenant with a text-search language and the default recall layers. Idempotent.';
