-- Tenant isolation: row-level security on every table that has a tenant column.
--
-- A role reaches a tenant when it (or a role it belongs to) is granted that tenant in
-- cogmem.tenant_access (tenant '*' = every tenant), or when it is a member of cogmem_admin. The table
-- owner and superusers bypass row-level security, as PostgreSQL defines. The API's writing functions run
-- as cogmem_owner (sql/999-privileges.sql), which owns no table, so the policies bind it too; they ask
-- what cogmem.caller() reaches, so no function, view or table reaches a tenant its caller cannot, and a
-- tenant one may not see answers exactly like a tenant that does not exist.
--
-- Global tables (no tenant column) hold no tenant data: default_topics, bios_rule_events,
-- consolidation_runs, audit_seal_state, alembic_version. vault_keys and gut_shard_key are readable by no
-- role at all.

-- The helpers the policies use (reaches_every_tenant, reachable_tenants, may_use_vault) are in
-- sql/000-helpers.sql: views in earlier files use them too.

ALTER TABLE cogmem.tenant_access ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS own_grants ON cogmem.tenant_access;
-- Not through reaches_every_tenant(): that reads this table, and a policy must not recurse.
-- A grant to a dropped role reaches nothing: to_regrole gives NULL, and so does pg_has_role.
CREATE POLICY own_grants ON cogmem.tenant_access
USING (
    pg_has_role(cogmem.caller(), 'cogmem_admin', 'USAGE')
    OR pg_has_role(cogmem.caller(), to_regrole(quote_ident(role_name)), 'USAGE')
);

-- One policy per tenant table. The sub-selects are evaluated once per statement (init plans), and only
-- when needed: the grants first, so a role that reaches the tenant never asks whether it sees them all.
DO $policies$
DECLARE
    v_table regclass;
BEGIN
    FOR v_table IN
        SELECT c.oid::regclass
        FROM pg_class AS c
        JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = 'tenant' AND NOT a.attisdropped
        WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relkind IN ('r', 'p')
          AND NOT c.relispartition AND c.relname NOT IN ('tenant_access', 'vault_keys', 'vault_items')
    LOOP
        EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', v_table);
        EXECUTE format('DROP POLICY IF EXISTS tenant_isolation ON %s', v_table);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %s USING (%stenant = ANY ((SELECT cogmem.reachable_tenants())::text[]) '
            'OR (SELECT cogmem.reaches_every_tenant()))',
            v_table,
            -- Global BIOS rules, preset loads and subscriptions (tenant NULL) apply to everyone.
            CASE WHEN v_table IN ('cogmem.bios_rules'::regclass, 'cogmem.bios_preset_loads'::regclass,
                                  'cogmem.bios_subscriptions'::regclass) THEN 'tenant IS NULL OR ' ELSE '' END);
    END LOOP;
END;
$policies$;

-- Audit rows are written by whoever acts, for a tenant they reach, in their own name and transaction:
-- no role can forge another's entry or slip one under the sealer's horizon.
DROP POLICY IF EXISTS honest_writes ON cogmem.audit_log;
CREATE POLICY honest_writes ON cogmem.audit_log AS RESTRICTIVE FOR INSERT
WITH CHECK (actor = cogmem.caller() AND xid = pg_current_xact_id() AND logged_at = now());

-- The Gut's release reads every opted-in tenant's de-identified contributions, and logs its release as
-- a global governance row; nothing else of a tenant's is open to it (sql/068-gut.sql).
DROP POLICY IF EXISTS gut_release_reads ON cogmem.gut_contributions;
CREATE POLICY gut_release_reads ON cogmem.gut_contributions FOR SELECT
USING ((SELECT pg_has_role(cogmem.caller(), 'cogmem_gut', 'USAGE')));
DROP POLICY IF EXISTS gut_release_reads ON cogmem.gut_feedback;
CREATE POLICY gut_release_reads ON cogmem.gut_feedback FOR SELECT
USING ((SELECT pg_has_role(cogmem.caller(), 'cogmem_gut', 'USAGE')));
DROP POLICY IF EXISTS gut_release_log ON cogmem.audit_log;
CREATE POLICY gut_release_log ON cogmem.audit_log FOR INSERT
WITH CHECK (
    tenant = '*' AND level = 'governance' AND event IN ('gut_released', 'gut_imported')
    AND (SELECT pg_has_role(cogmem.caller(), 'cogmem_gut', 'USAGE'))
);
-- The shard key that signs Gut releases and exports: read only inside the API's definer functions
-- (never by a role that could carry it off to sign a release of its own), written only by its owner.
DROP POLICY IF EXISTS definer_reads ON cogmem.gut_shard_key;
CREATE POLICY definer_reads ON cogmem.gut_shard_key FOR SELECT USING (current_user = 'cogmem_owner');

-- The vault needs a grant of its own: reaching a tenant's memories is not enough.
ALTER TABLE cogmem.vault_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE cogmem.vault_keys ENABLE ROW LEVEL SECURITY;
-- Administrators see the (encrypted) items, to list and erase them, but not the keys.
DROP POLICY IF EXISTS vault_access ON cogmem.vault_items;
CREATE POLICY vault_access ON cogmem.vault_items
USING (cogmem.may_use_vault(tenant) OR pg_has_role(cogmem.caller(), 'cogmem_admin', 'USAGE'));
DROP POLICY IF EXISTS vault_access ON cogmem.vault_keys;
CREATE POLICY vault_access ON cogmem.vault_keys
USING (cogmem.may_use_vault(tenant));

CREATE OR REPLACE FUNCTION cogmem.grant_tenant(role_name name, tenant text, vault boolean DEFAULT FALSE)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    IF grant_tenant.role_name IS NULL OR NOT EXISTS (SELECT FROM pg_roles AS r WHERE r.rolname = grant_tenant.role_name) THEN
        RAISE EXCEPTION 'role "%" does not exist', grant_tenant.role_name
            USING ERRCODE = 'undefined_object', HINT = 'CREATE ROLE it first, then GRANT cogmem_app (or cogmem_auditor) TO it.';
    END IF;
    IF grant_tenant.tenant IS NULL THEN
        RAISE EXCEPTION 'tenant must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass a tenant, or ''*'' for every tenant.';
    END IF;
    IF grant_tenant.tenant <> '*' THEN
        PERFORM cogmem._reach(grant_tenant.tenant);
    END IF;
    INSERT INTO cogmem.tenant_access AS a (tenant, role_name, vault)
    VALUES (grant_tenant.tenant, grant_tenant.role_name, coalesce(grant_tenant.vault, false))
    ON CONFLICT (tenant, role_name) DO UPDATE SET vault = excluded.vault
    WHERE a.vault IS DISTINCT FROM excluded.vault;
END;
$$;
COMMENT ON FUNCTION cogmem.grant_tenant(name, text, boolean) IS
'Lets a role (and its members) reach a tenant (''*'' = every tenant); vault = also its vault. Audited.';

CREATE OR REPLACE FUNCTION cogmem.revoke_tenant(role_name name, tenant text)
RETURNS boolean
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._reach_every();
    WITH gone AS (
        DELETE FROM cogmem.tenant_access AS a WHERE a.role_name = $1 AND a.tenant = $2 RETURNING 1
    )
    SELECT EXISTS (SELECT FROM gone);
$$;
COMMENT ON FUNCTION cogmem.revoke_tenant(name, text) IS
'Takes a tenant grant away; true when there was one. Audited.';
