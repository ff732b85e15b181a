"""Scopes inside a tenant (issue 35, part A): a person and an agent on what is remembered and recalled.

A memory's person (who it is about or from) and agent (who heard it) travel in its source, as its
conversation and speaker do (sql/060-remember.sql), so every store path carries them alike; here they
are generated columns of memories and held conflicts, which cannot drift from the source. Recalls,
sessions, raw turns, store items and episodes get them as plain columns, set by the API.

The same text is one memory per scope, not per tenant: one customer's "call me after 6" is not
another's. The unique fingerprint index takes the scope, NULLs not distinct (a tenant that uses no
scopes keeps exactly one memory per text).

Each tenant has a scope policy (sql/015-scopes.sql says what it means): whether a person's memories
heard by one agent are recalled by the others, and which agents' memories (without a person), of which
rings, every agent recalls. A grant of a tenant can be narrowed to one person (tenant_access.person).

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-04
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None

# A scope name is checked by the API (sql/015-scopes.sql); the tables still refuse what no check lets by.
_NAME = "CHECK (length({0}) BETWEEN 1 AND 200)"
_PLAIN = ("recalls", "sessions", "sensory_turns", "store_items", "episodes")


def upgrade() -> None:
    for table in ("memories", "conflicts"):
        execute(f"""
ALTER TABLE cogmem.{table}
    ADD COLUMN person text GENERATED ALWAYS AS (nullif(btrim(source ->> 'person'), '')) STORED
        {_NAME.format("person")},
    ADD COLUMN agent text GENERATED ALWAYS AS (nullif(btrim(source ->> 'agent'), '')) STORED
        {_NAME.format("agent")};
COMMENT ON COLUMN cogmem.{table}.person IS
'Who it is about or from (source ->> ''person''); NULL: shared by the tenant. Recall for another person '
'never injects it.';
COMMENT ON COLUMN cogmem.{table}.agent IS
'The agent that heard it (source ->> ''agent''); NULL: every agent''s. See the tenant''s scope policy.';
""")
    for table in _PLAIN:
        execute(f"""
ALTER TABLE cogmem.{table}
    ADD COLUMN person text {_NAME.format("person")},
    ADD COLUMN agent text {_NAME.format("agent")};
COMMENT ON COLUMN cogmem.{table}.person IS 'The person of its scope; NULL: none (sql/015-scopes.sql).';
COMMENT ON COLUMN cogmem.{table}.agent IS 'The agent of its scope; NULL: none (sql/015-scopes.sql).';
""")
    execute("""
DROP INDEX cogmem.memories_tenant_fingerprint_key;
CREATE UNIQUE INDEX memories_scope_fingerprint_key ON cogmem.memories (tenant, fingerprint, person, agent)
    NULLS NOT DISTINCT;
-- A person's memories, for their erasure and export; the agent's, for an agent's export.
CREATE INDEX memories_person_idx ON cogmem.memories (tenant, person) WHERE person IS NOT NULL;
CREATE INDEX memories_agent_idx ON cogmem.memories (tenant, agent) WHERE agent IS NOT NULL;
-- The sign bits the store compares a new text with, within its scope, from the index alone.
DROP INDEX cogmem.memories_tenant_bits_idx;
CREATE INDEX memories_tenant_bits_idx ON cogmem.memories (tenant, memory_id)
    INCLUDE (embedding_bits, ring, created_at, updated_at, person, agent);
COMMENT ON COLUMN cogmem.memories.fingerprint IS
'The normalised text (cogmem._fingerprint), unique per tenant and scope: the same text is one memory.';

ALTER TABLE cogmem.tenants
    ADD COLUMN scope_person_across_agents boolean NOT NULL DEFAULT true,
    ADD COLUMN scope_shared_agents text[] NOT NULL DEFAULT '{}',
    ADD COLUMN scope_shared_rings cogmem.ring[] NOT NULL
        DEFAULT '{shocks,dos_and_donts,long_term,habits,procedures,fresh}';
COMMENT ON COLUMN cogmem.tenants.scope_person_across_agents IS
'A person''s memories heard by one agent are recalled by the tenant''s other agents too; false: only by '
'the agent that heard them (a person''s memories heard by no agent, by every agent).';
COMMENT ON COLUMN cogmem.tenants.scope_shared_agents IS
'Agents whose memories without a person (in scope_shared_rings) every agent recalls; ''*'' = every agent. '
'Empty by default: an agent recalls only what it heard, besides what the tenant shares.';
COMMENT ON COLUMN cogmem.tenants.scope_shared_rings IS
'The rings scope_shared_agents share, e.g. {procedures}: one agent''s procedures for all.';

-- Trust is in an agent (sql/140-trust.sql): each agent's score moves by its own events; NULL, the tenant's.
ALTER TABLE cogmem.trust_events ADD COLUMN agent text CHECK (length(agent) BETWEEN 1 AND 200);
COMMENT ON COLUMN cogmem.trust_events.agent IS 'The agent whose trust the event moved; NULL: the tenant''s.';
CREATE INDEX trust_events_agent_idx ON cogmem.trust_events (tenant, agent, event_id);

ALTER TABLE cogmem.tenant_access
    ADD COLUMN person text CHECK (length(person) BETWEEN 1 AND 200),
    ADD CONSTRAINT tenant_access_person_not_everyone CHECK (person IS NULL OR tenant <> '*');
-- Row-level security asks, on every statement, whether the caller's grants are narrowed at all.
CREATE INDEX tenant_access_narrowed_idx ON cogmem.tenant_access (role_name) WHERE person IS NOT NULL;
COMMENT ON COLUMN cogmem.tenant_access.person IS
'Narrows the grant to one person of the tenant: their memories and what the tenant shares, nothing of '
'another person''s; NULL: the whole tenant.';
""")


def downgrade() -> None:
    execute("""
-- What reads these columns goes first; sql/ makes it again for the revision installed.
DO $drop$
DECLARE
    v_policy record;
BEGIN
    FOR v_policy IN SELECT p.polname, p.polrelid::regclass AS rel FROM pg_policy AS p
                    WHERE p.polname IN ('person_reads', 'person_inserts', 'person_updates', 'person_deletes')
    LOOP
        EXECUTE format('DROP POLICY %I ON %s', v_policy.polname, v_policy.rel);
    END LOOP;
END;
$drop$;
DROP VIEW IF EXISTS cogmem.memory_overview CASCADE;
DROP FUNCTION IF EXISTS cogmem.in_scope(text, text, cogmem.ring, text, text, cogmem.tenants) CASCADE;
DROP INDEX cogmem.tenant_access_narrowed_idx;
ALTER TABLE cogmem.tenant_access DROP COLUMN person;
DROP INDEX cogmem.trust_events_agent_idx;
ALTER TABLE cogmem.trust_events DROP COLUMN agent;
ALTER TABLE cogmem.tenants DROP COLUMN scope_person_across_agents, DROP COLUMN scope_shared_agents,
    DROP COLUMN scope_shared_rings;
DROP INDEX cogmem.memories_person_idx, cogmem.memories_agent_idx, cogmem.memories_scope_fingerprint_key,
    cogmem.memories_tenant_bits_idx;
CREATE INDEX memories_tenant_bits_idx ON cogmem.memories (tenant, memory_id)
    INCLUDE (embedding_bits, ring, created_at, updated_at);
CREATE UNIQUE INDEX memories_tenant_fingerprint_key ON cogmem.memories (tenant, fingerprint);
""")
    for table in ("memories", "conflicts", *_PLAIN):
        execute(f"ALTER TABLE cogmem.{table} DROP COLUMN person, DROP COLUMN agent;")
