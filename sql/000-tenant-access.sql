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
--
-- Who is calling and which tenants it reaches come first; then the policies; then granting a tenant.

-- Who is calling, and which tenants it reaches (row-level security, sql/000-tenant-access.sql).
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

-- The roles whose grants apply: the caller and what it is a member of, as pg_has_role decides (USAGE:
-- membership with inheritance). Walked from the caller, not tested for every role there is.
CREATE OR REPLACE FUNCTION cogmem.caller_roles()
RETURNS name[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_caller name := cogmem.caller();
BEGIN
    RETURN ARRAY(
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
    );
END;
$$;
COMMENT ON FUNCTION cogmem.caller_roles() IS 'The calling role and the roles whose grants it uses.';

CREATE OR REPLACE FUNCTION cogmem.reachable_tenants()
RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
-- Index lookups only, whatever the statistics say: a plan that reads all of tenant_access evaluates its
-- policy on every grant.
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $$
BEGIN
    -- A grant narrowed to a person reaches the tenant too: row-level security narrows it further
    -- (sql/015-scopes.sql).
    RETURN (
        SELECT pg_catalog.array_agg(a.tenant) FROM cogmem.tenant_access AS a
        WHERE a.role_name OPERATOR(pg_catalog.=) ANY (cogmem.caller_roles())
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

DROP FUNCTION IF EXISTS cogmem._reach(text);  -- renamed: it requires the tenant, it does not reach for it
-- The first statement of every function that names a tenant. Row-level security would hide a tenant the
-- caller does not reach all the same; this says so explicitly, and answers exactly as for a tenant that
-- does not exist, so that neither can be told from the other.
CREATE OR REPLACE FUNCTION cogmem._require_tenant(p_tenant text)
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
COMMENT ON FUNCTION cogmem._require_tenant(text) IS
'Checks that the caller reaches the tenant (an unreachable tenant is an unknown one); returns its language.';

DROP FUNCTION IF EXISTS cogmem._reach_every();  -- renamed: it requires an administrator
DROP FUNCTION IF EXISTS cogmem._reach_every(text);
-- The first statement of the administrative functions that name no single tenant.
CREATE OR REPLACE FUNCTION cogmem._require_admin()
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
COMMENT ON FUNCTION cogmem._require_admin() IS
'Raises insufficient_privilege unless the caller is a member of cogmem_admin (superusers are).';

-- The first statement of the administrative functions that may name one tenant (NULL: every tenant).
CREATE OR REPLACE FUNCTION cogmem._require_admin(p_tenant text)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM cogmem._require_admin();
    IF p_tenant IS NOT NULL THEN
        PERFORM cogmem._require_tenant(p_tenant);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._require_admin(text) IS
'cogmem._require_admin(), then, when a tenant is named, cogmem._require_tenant(tenant): an administrator, and a '
'tenant that exists.';

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

DROP FUNCTION IF EXISTS cogmem.grant_tenant(name, text, boolean);  -- before 0035: no person
CREATE OR REPLACE FUNCTION cogmem.grant_tenant(
    role_name name, tenant text, vault boolean DEFAULT FALSE, person text DEFAULT NULL
)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: tenant_access is written only by the API's owner, for administrators; its trigger audits it.
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_admin();
    IF grant_tenant.role_name IS NULL OR NOT EXISTS (SELECT FROM pg_roles AS r WHERE r.rolname = grant_tenant.role_name) THEN
        RAISE EXCEPTION 'role "%" does not exist', grant_tenant.role_name
            USING ERRCODE = 'undefined_object', HINT = 'CREATE ROLE it first, then GRANT cogmem_app (or cogmem_auditor) TO it.';
    END IF;
    IF grant_tenant.tenant IS NULL THEN
        RAISE EXCEPTION 'tenant must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass a tenant, or ''*'' for every tenant.';
    END IF;
    IF grant_tenant.tenant <> '*' THEN
        PERFORM cogmem._require_tenant(grant_tenant.tenant);
    ELSIF grant_tenant.person IS NOT NULL THEN
        RAISE EXCEPTION 'a grant of every tenant cannot be narrowed to a person'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Grant the person''s tenant by name.';
    END IF;
    IF grant_tenant.person IS NOT NULL AND grant_tenant.vault THEN
        RAISE EXCEPTION 'a grant narrowed to a person cannot hold the vault'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The vault is the whole tenant''s: grant it without person.';
    END IF;
    IF btrim(grant_tenant.person) = '' OR length(btrim(grant_tenant.person)) > 200 OR grant_tenant.person ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'person must be a name of 1 to 200 characters without control characters'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass the person as recall and remember name it, or NULL for the whole tenant.';
    END IF;
    INSERT INTO cogmem.tenant_access AS a (tenant, role_name, vault, person)
    VALUES (grant_tenant.tenant, grant_tenant.role_name, coalesce(grant_tenant.vault, false), btrim(grant_tenant.person))
    ON CONFLICT (tenant, role_name) DO UPDATE SET vault = excluded.vault, person = excluded.person
    WHERE (a.vault, a.person) IS DISTINCT FROM (excluded.vault, excluded.person);
END;
$$;
COMMENT ON FUNCTION cogmem.grant_tenant(name, text, boolean, text) IS
'Lets a role (and its members) reach a tenant (''*'' = every tenant); vault = also its vault; person = only '
'that person of the tenant (their memories and what the tenant shares). Audited.';

CREATE OR REPLACE FUNCTION cogmem.revoke_tenant(role_name name, tenant text)
RETURNS boolean
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._require_admin();
    WITH gone AS (
        DELETE FROM cogmem.tenant_access AS a WHERE a.role_name = $1 AND a.tenant = $2 RETURNING 1
    )
    SELECT EXISTS (SELECT FROM gone);
$$;
COMMENT ON FUNCTION cogmem.revoke_tenant(name, text) IS
'Takes a tenant grant away; true when there was one. Audited.';
