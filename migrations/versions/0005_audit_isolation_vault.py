"""Audit trail (append-only, hash-chained), per-tenant access grants, the vault.

memory_events becomes part of cogmem.audit_log (levels write, recall, outcome, lifecycle, governance);
its rows move over. The log is partitioned by the month it was written in (logged_at), not by the
event's logical time (consolidation runs may simulate future nights). Functions, triggers, policies
and partitions beyond the first are created by sql/100-audit.sql, sql/110-isolation.sql and
sql/120-vault.sql.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA public;

-- '*' names events that concern every tenant (global BIOS rules, schema upgrades).
ALTER TABLE cogmem.tenants ADD CONSTRAINT tenants_not_everyone CHECK (tenant <> '*');

CREATE TABLE cogmem.audit_log (
    tenant text NOT NULL,
    audit_id bigint GENERATED ALWAYS AS IDENTITY,
    logged_at timestamptz NOT NULL DEFAULT now(),
    at timestamptz NOT NULL DEFAULT now(),
    level text NOT NULL CHECK (level IN ('write', 'recall', 'outcome', 'lifecycle', 'governance')),
    event text NOT NULL CHECK (event <> ''),
    memory_id bigint,
    recall_id uuid,
    actor text NOT NULL DEFAULT current_user,
    detail jsonb NOT NULL DEFAULT '{}',
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    PRIMARY KEY (tenant, audit_id, logged_at)
) PARTITION BY RANGE (logged_at);
COMMENT ON TABLE cogmem.audit_log IS
'Append-only audit trail of every write, recall, outcome, consolidation decision and governance act. '
'Never holds memory text or secrets. Sealed into cogmem.audit_chain by cogmem.seal_audit().';
COMMENT ON COLUMN cogmem.audit_log.logged_at IS 'When the row was written: the partition key.';
COMMENT ON COLUMN cogmem.audit_log.at IS 'When the event happened (the as_of of a consolidation night).';
COMMENT ON COLUMN cogmem.audit_log.xid IS 'Writing transaction; lets the sealer know which rows are final.';
CREATE TABLE cogmem.audit_log_default PARTITION OF cogmem.audit_log DEFAULT;
CREATE INDEX audit_log_memory_idx ON cogmem.audit_log (tenant, memory_id) WHERE memory_id IS NOT NULL;
CREATE INDEX audit_log_recall_idx ON cogmem.audit_log (tenant, recall_id) WHERE recall_id IS NOT NULL;
CREATE INDEX audit_log_xid_idx ON cogmem.audit_log (xid);

INSERT INTO cogmem.audit_log (tenant, logged_at, at, level, event, memory_id, actor, detail, xid)
OVERRIDING SYSTEM VALUE
SELECT e.tenant, e.at, e.at,
       CASE WHEN e.event IN ('created', 'rehearsed', 'redacted') THEN 'write' ELSE 'lifecycle' END,
       e.event, e.memory_id, current_user, e.detail, pg_current_xact_id()
FROM cogmem.memory_events AS e ORDER BY e.event_id;
DROP TABLE cogmem.memory_events;

-- One row per sealed audit row, in chain order per tenant:
-- row_hash = sha256(previous row_hash || canonical bytes of the audit row).
CREATE TABLE cogmem.audit_chain (
    tenant text NOT NULL,
    seq bigint NOT NULL CHECK (seq >= 1),
    audit_id bigint NOT NULL,
    logged_at timestamptz NOT NULL,
    row_hash bytea NOT NULL,
    sealed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, seq),
    UNIQUE (tenant, audit_id)
);
COMMENT ON TABLE cogmem.audit_chain IS
'The per-tenant SHA-256 hash chain over cogmem.audit_log, appended by cogmem.seal_audit().';

CREATE TABLE cogmem.audit_seal_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    horizon xid8 NOT NULL,
    sealed_at timestamptz
);
COMMENT ON TABLE cogmem.audit_seal_state IS
'Global: every committed audit row written by a transaction older than horizon is sealed.';
INSERT INTO cogmem.audit_seal_state (horizon) VALUES ('1');

-- Nightly consolidation may run as several workers, each a share of the tenants.
ALTER TABLE cogmem.consolidation_runs
    ADD COLUMN worker integer NOT NULL DEFAULT 1,
    ADD COLUMN workers integer NOT NULL DEFAULT 1;

CREATE TABLE cogmem.audit_settings (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    retention interval CHECK (retention >= interval '1 month')
);
COMMENT ON TABLE cogmem.audit_settings IS
'Global: how long audit partitions stay online (NULL = forever). Only sealed, exported months are dropped.';
COMMENT ON COLUMN cogmem.audit_settings.retention IS
'Months whose end is older than this are dropped once sealed and exported (cogmem.audit_apply_retention()).';
INSERT INTO cogmem.audit_settings (retention) VALUES (NULL);

CREATE TABLE cogmem.audit_archives (
    partition_name text PRIMARY KEY,
    range_from timestamptz NOT NULL,
    range_to timestamptz NOT NULL,
    rows bigint NOT NULL,
    exported_to text NOT NULL CHECK (exported_to <> ''),
    exported_at timestamptz NOT NULL DEFAULT now(),
    dropped_at timestamptz
);
COMMENT ON TABLE cogmem.audit_archives IS
'Global: audit partitions exported elsewhere (and, after the retention period, dropped). The chain rows '
'of a dropped month stay, so the chain after it still verifies.';

CREATE TABLE cogmem.tenant_access (
    tenant text NOT NULL CHECK (tenant <> ''),
    role_name name NOT NULL,
    vault boolean NOT NULL DEFAULT false,
    granted_by name NOT NULL DEFAULT current_user,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, role_name)
);
COMMENT ON TABLE cogmem.tenant_access IS
'Which database roles (and their members) may reach which tenant; tenant ''*'' means every tenant. '
'vault = may also read that tenant''s vault.';

CREATE TABLE cogmem.vault_keys (
    tenant text PRIMARY KEY REFERENCES cogmem.tenants ON DELETE CASCADE,
    data_key bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cogmem.vault_keys IS
'Per-tenant data keys of the vault. No role but the owner reads it; only cogmem.vault_put/get use it.';

CREATE TABLE cogmem.vault_items (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    name text NOT NULL CHECK (name <> '' AND length(name) <= 200),
    secret bytea NOT NULL,
    description text NOT NULL DEFAULT '',
    subject text,
    version integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, name)
);
COMMENT ON TABLE cogmem.vault_items IS 'Sensitive items, encrypted with pgcrypto (PGP symmetric) under the tenant key.';
""")


def downgrade() -> None:
    execute(r"""
DROP EVENT TRIGGER IF EXISTS cogmem_audit_grants;
DROP VIEW IF EXISTS cogmem.audit_recall_items, cogmem.audit_trail, cogmem.audit_writes, cogmem.audit_recalls,
    cogmem.audit_outcomes, cogmem.audit_lifecycle, cogmem.audit_governance, cogmem.audit_daily, cogmem.audit_heads,
    cogmem.memory_history, cogmem.memory_census;
DO $undo$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT p.policyname, p.tablename FROM pg_policies AS p WHERE p.schemaname = 'cogmem' LOOP
        EXECUTE format('DROP POLICY %I ON cogmem.%I', r.policyname, r.tablename);
    END LOOP;
    FOR r IN SELECT c.relname FROM pg_class AS c
             WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relrowsecurity LOOP
        EXECUTE format('ALTER TABLE cogmem.%I DISABLE ROW LEVEL SECURITY', r.relname);
    END LOOP;
    FOR r IN SELECT t.tgname, t.tgrelid::regclass AS tbl FROM pg_trigger AS t
             WHERE t.tgfoid = 'cogmem._audit_governance()'::regprocedure LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', r.tgname, r.tbl);
    END LOOP;
    FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc AS p
             WHERE p.pronamespace = 'cogmem'::regnamespace
               AND p.proname IN ('_audit_bytes', '_audit_governance', '_audit_grants', 'audit_partitions_ensure',
                                 'seal_audit', 'verify_audit', 'explain_recall', '_sees_every_tenant',
                                 '_granted_tenants', '_may_use_vault', 'grant_tenant', 'revoke_tenant',
                                 '_vault_key', '_vault_check', 'vault_put', 'vault_get', 'vault_list',
                                 'vault_delete', '_erase_memories', 'erase', 'erase_subject',
                                 'schedule_audit', 'unschedule_audit', 'audit_mark_exported',
                                 'audit_apply_retention', '_lock_tenant') LOOP
        EXECUTE format('DROP FUNCTION %s', r.fn);
    END LOOP;
END;
$undo$;
CREATE TABLE cogmem.memory_events (
    tenant text NOT NULL,
    event_id bigint GENERATED ALWAYS AS IDENTITY,
    memory_id bigint NOT NULL,
    event text NOT NULL,
    detail jsonb NOT NULL DEFAULT '{}',
    at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, event_id)
);
CREATE INDEX memory_events_memory_idx ON cogmem.memory_events (tenant, memory_id);
INSERT INTO cogmem.memory_events (tenant, memory_id, event, detail, at)
SELECT l.tenant, l.memory_id, l.event, l.detail, l.at FROM cogmem.audit_log AS l
WHERE l.memory_id IS NOT NULL AND l.level IN ('write', 'lifecycle') ORDER BY l.audit_id;
DROP TABLE cogmem.audit_log, cogmem.audit_chain, cogmem.audit_seal_state, cogmem.audit_settings,
    cogmem.audit_archives, cogmem.tenant_access,
    cogmem.vault_items, cogmem.vault_keys;
ALTER TABLE cogmem.tenants DROP CONSTRAINT tenants_not_everyone;
ALTER TABLE cogmem.consolidation_runs DROP COLUMN worker, DROP COLUMN workers;
DROP PROCEDURE IF EXISTS cogmem.consolidate_nightly(timestamptz, text, integer, integer);
""")
