"""The API is the only way in: a NOLOGIN owner runs the writing functions, rows name the real caller.

- Role cogmem_owner (NOLOGIN, no superuser, no BYPASSRLS): owns the SECURITY DEFINER functions of sql/
  and holds the table rights they need; application roles keep none (sql/999-privileges.sql).
- cogmem.caller(): the role a call acts for. Inside a definer function current_user is the owner, so the
  caller is the role set with SET ROLE, else the session's login. Columns that record who acted default
  to it (audit_log.actor, tenant_access.granted_by, core_identity.set_by); it is created here because
  those defaults need it, and sql/000-helpers.sql re-creates it unchanged.
- The reach helpers the policies call become public, read-only functions (reachable_tenants,
  reaches_every_tenant, may_use_vault): a policy runs them as whoever queries the table.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

CALLER = """
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
"""


def upgrade() -> None:
    execute("""
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'cogmem_owner') THEN
        CREATE ROLE cogmem_owner NOLOGIN NOINHERIT;
    END IF;
END;
$roles$;
""")
    execute(CALLER)
    execute("""
ALTER TABLE cogmem.audit_log ALTER COLUMN actor SET DEFAULT cogmem.caller();
ALTER TABLE cogmem.tenant_access ALTER COLUMN granted_by SET DEFAULT cogmem.caller();
ALTER TABLE cogmem.core_identity ALTER COLUMN set_by SET DEFAULT cogmem.caller();
-- Policies and views that call them are re-created by the sql/ files, which run next.
DROP FUNCTION IF EXISTS cogmem._granted_tenants() CASCADE;
DROP FUNCTION IF EXISTS cogmem._sees_every_tenant() CASCADE;
DROP FUNCTION IF EXISTS cogmem._may_use_vault(text) CASCADE;
DROP FUNCTION IF EXISTS cogmem._tenant_language(text) CASCADE;
""")


def downgrade() -> None:
    execute("""
ALTER TABLE cogmem.audit_log ALTER COLUMN actor SET DEFAULT current_user;
ALTER TABLE cogmem.tenant_access ALTER COLUMN granted_by SET DEFAULT current_user;
ALTER TABLE cogmem.core_identity ALTER COLUMN set_by SET DEFAULT current_user;
-- The policies that call them go too; the sql/ files of the older release bring their own.
DROP FUNCTION IF EXISTS cogmem.caller() CASCADE;
DROP FUNCTION IF EXISTS cogmem.reachable_tenants() CASCADE;
DROP FUNCTION IF EXISTS cogmem.reaches_every_tenant() CASCADE;
DROP FUNCTION IF EXISTS cogmem.may_use_vault(text) CASCADE;
-- The batch stages of this release take cogmem._batch_item, which revision 0006 drops on its way down.
DROP FUNCTION IF EXISTS cogmem._prepare_batch(text, regconfig, jsonb, public.vector[]);
DROP FUNCTION IF EXISTS cogmem._store_same_text(text, regconfig, cogmem._batch_item[]);
DROP FUNCTION IF EXISTS cogmem._store_batch(text, regconfig, cogmem._batch_item[]);  -- its name since issue 32
""")
