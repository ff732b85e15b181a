-- The knowledge vault: sensitive items (credentials, keys, account numbers) kept apart from memories.
-- Encrypted at rest with pgcrypto (OpenPGP symmetric, AES-256) under a random per-tenant data key;
-- never returned by recall; reachable only by roles granted the tenant's vault (cogmem.grant_tenant(...,
-- vault => true)); every read and write is audited without the secret.
--
-- The data keys live in cogmem.vault_keys in the same database: a dump of vault_items alone reveals
-- nothing, a dump of the whole database does. Keep backups as protected as the database.

CREATE OR REPLACE FUNCTION cogmem._vault_key(p_tenant text, p_create boolean)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_key bytea;
BEGIN
    SELECT k.data_key INTO v_key FROM cogmem.vault_keys AS k WHERE k.tenant = p_tenant;
    IF v_key IS NULL AND p_create THEN
        INSERT INTO cogmem.vault_keys (tenant, data_key) VALUES (p_tenant, public.gen_random_bytes(32))
        ON CONFLICT (tenant) DO NOTHING;
        SELECT k.data_key INTO v_key FROM cogmem.vault_keys AS k WHERE k.tenant = p_tenant;
    END IF;
    RETURN encode(v_key, 'hex');
END;
$$;
COMMENT ON FUNCTION cogmem._vault_key(text, boolean) IS 'The tenant''s vault data key (created on first use).';

DROP FUNCTION IF EXISTS cogmem._reach_vault(text, text);  -- renamed
DROP FUNCTION IF EXISTS cogmem._vault_check(text, text);  -- renamed: the first statement of a vault call
CREATE OR REPLACE FUNCTION cogmem._require_vault(p_tenant text, p_name text)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    PERFORM cogmem._require_tenant(p_tenant);
    IF NOT cogmem.may_use_vault(p_tenant) THEN
        RAISE EXCEPTION 'permission denied for the vault of tenant "%"', p_tenant
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'An administrator grants it: SELECT cogmem.grant_tenant(role, tenant, vault => true);';
    END IF;
    IF p_name IS NULL OR btrim(p_name) = '' OR length(p_name) > 200 THEN
        RAISE EXCEPTION 'vault item name must be 1 to 200 characters'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Name items like ''db/prod/password''.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._require_vault(text, text) IS
'The first statement of a vault call: the caller reaches the tenant and its vault; the item name is valid.';

CREATE OR REPLACE FUNCTION cogmem.vault_put(
    tenant text, name text, secret text, description text DEFAULT '', subject text DEFAULT NULL
)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_version integer;
BEGIN
    PERFORM cogmem._require_vault(vault_put.tenant, vault_put.name);
    IF vault_put.secret IS NULL OR vault_put.secret = '' THEN
        RAISE EXCEPTION 'secret must not be NULL or empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'To remove an item, use cogmem.vault_delete().';
    END IF;
    INSERT INTO cogmem.vault_items AS v (tenant, name, secret, description, subject)
    VALUES (vault_put.tenant, vault_put.name,
            public.pgp_sym_encrypt(vault_put.secret, cogmem._vault_key(vault_put.tenant, true),
                                   'cipher-algo=aes256, s2k-mode=1'),
            coalesce(vault_put.description, ''), vault_put.subject)
    ON CONFLICT (tenant, name) DO UPDATE
    SET secret = excluded.secret, description = excluded.description, subject = excluded.subject,
        version = v.version + 1, updated_at = now()
    RETURNING v.version INTO v_version;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (vault_put.tenant, 'governance', 'vault_written',
            jsonb_build_object('name', vault_put.name, 'version', v_version));
    RETURN v_version;
END;
$$;
COMMENT ON FUNCTION cogmem.vault_put(text, text, text, text, text) IS
'Stores (or replaces) an encrypted vault item; returns its version. subject links it to a person for '
'erasure. Audited without the secret.';

CREATE OR REPLACE FUNCTION cogmem.vault_get(tenant text, name text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_secret text;
BEGIN
    PERFORM cogmem._require_vault(vault_get.tenant, vault_get.name);
    SELECT public.pgp_sym_decrypt(v.secret, cogmem._vault_key(vault_get.tenant, false)) INTO v_secret
    FROM cogmem.vault_items AS v WHERE v.tenant = vault_get.tenant AND v.name = vault_get.name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no vault item "%" in tenant "%"', vault_get.name, vault_get.tenant
            USING ERRCODE = 'no_data_found', HINT = 'List the items with cogmem.vault_list(tenant).';
    END IF;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (vault_get.tenant, 'governance', 'vault_read', jsonb_build_object('name', vault_get.name));
    RETURN v_secret;
END;
$$;
COMMENT ON FUNCTION cogmem.vault_get(text, text) IS 'Decrypts and returns a vault item. Audited (the read, not the secret).';

CREATE OR REPLACE FUNCTION cogmem.vault_list(tenant text)
RETURNS TABLE (name text, description text, subject text, version integer, updated_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_vault(vault_list.tenant, 'list');
    RETURN QUERY
    SELECT v.name, v.description, v.subject, v.version, v.updated_at
    FROM cogmem.vault_items AS v WHERE v.tenant = vault_list.tenant ORDER BY v.name;
END;
$$;
COMMENT ON FUNCTION cogmem.vault_list(text) IS 'The names and descriptions of a tenant''s vault items, never the secrets.';

CREATE OR REPLACE FUNCTION cogmem.vault_delete(tenant text, name text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_vault(vault_delete.tenant, vault_delete.name);
    DELETE FROM cogmem.vault_items AS v WHERE v.tenant = vault_delete.tenant AND v.name = vault_delete.name;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (vault_delete.tenant, 'governance', 'vault_deleted', jsonb_build_object('name', vault_delete.name));
    RETURN true;
END;
$$;
COMMENT ON FUNCTION cogmem.vault_delete(text, text) IS 'Deletes a vault item; true when there was one. Audited.';
