-- Least privilege: nothing is executable by PUBLIC; applications get the memory API, admins the rest.
-- Roles are cluster-wide and created once; the grants are re-applied after every upgrade.

DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'cogmem_app') THEN
        CREATE ROLE cogmem_app NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'cogmem_admin') THEN
        CREATE ROLE cogmem_admin NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'cogmem_auditor') THEN
        CREATE ROLE cogmem_auditor NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'cogmem_bi') THEN
        CREATE ROLE cogmem_bi NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'cogmem_gut') THEN
        CREATE ROLE cogmem_gut NOLOGIN;
    END IF;
END;
$roles$;
COMMENT ON ROLE cogmem_app IS 'cogmem-pg: applications that remember and recall.';
COMMENT ON ROLE cogmem_admin IS 'cogmem-pg: administrators (tenants, BIOS rules, topics, erasure); every tenant.';
COMMENT ON ROLE cogmem_auditor IS 'cogmem-pg: auditors: the audit trail and its verification, no memory content.';
COMMENT ON ROLE cogmem_bi IS 'cogmem-pg: BI tools: aggregate views only.';
COMMENT ON ROLE cogmem_gut IS
'cogmem-pg: Gut releases: reads opted-in tenants'' de-identified contributions, publishes patterns.';

-- The boundary. Tables belong to the schema owner (the installer), and no application role may write
-- one: cogmem_app, cogmem_admin, cogmem_auditor and cogmem_bi read under row-level security and write
-- only through the API. The functions that write run as cogmem_owner (SECURITY DEFINER): a NOLOGIN role
-- without superuser or BYPASSRLS, which holds the table rights they need and owns no table, so the
-- tenant policies bind it to what its caller reaches (cogmem.caller(), sql/000-tenant-access.sql). Each checks
-- the caller's reach in its first statement and pins its search_path. Nothing is executable by PUBLIC,
-- and no internal (_) helper by an application role.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA cogmem FROM public;
REVOKE ALL ON ALL PROCEDURES IN SCHEMA cogmem FROM public;
REVOKE ALL ON ALL TABLES IN SCHEMA cogmem FROM public;
REVOKE ALL ON ALL TABLES IN SCHEMA cogmem FROM cogmem_app, cogmem_admin, cogmem_auditor, cogmem_bi, cogmem_gut;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA cogmem FROM cogmem_app, cogmem_admin, cogmem_auditor, cogmem_bi, cogmem_gut;
REVOKE ALL ON ALL PROCEDURES IN SCHEMA cogmem FROM cogmem_app, cogmem_admin, cogmem_auditor, cogmem_bi, cogmem_gut;
GRANT USAGE ON SCHEMA cogmem TO cogmem_app, cogmem_admin, cogmem_auditor, cogmem_bi, cogmem_gut, cogmem_owner;
GRANT cogmem_app TO cogmem_admin;

DO $owner$
DECLARE
    v_function regprocedure;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'cogmem_owner') THEN
        CREATE ROLE cogmem_owner NOLOGIN NOINHERIT;
    END IF;
    -- An installer that is no superuser (a managed server's database owner, with CREATEROLE) may give its
    -- functions to cogmem_owner only as a member of it. It owns every table already: nothing is widened.
    -- From PostgreSQL 16 its creator holds only ADMIN on it (no SET): membership alone is not enough.
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        NULL;
    ELSIF current_setting('server_version_num')::int >= 160000 THEN
        IF NOT pg_catalog.pg_has_role(current_user, 'cogmem_owner', 'SET') THEN
            EXECUTE format('GRANT cogmem_owner TO %I WITH SET TRUE', current_user);
        END IF;
    ELSIF NOT pg_catalog.pg_has_role(current_user, 'cogmem_owner', 'MEMBER') THEN
        EXECUTE format('GRANT cogmem_owner TO %I', current_user);
    END IF;
    -- A new owner needs CREATE on the schema (a superuser skips the check): granted for the hand-over only.
    GRANT CREATE ON SCHEMA cogmem TO cogmem_owner;
    FOR v_function IN
        SELECT p.oid FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace = 'cogmem'::regnamespace AND p.prosecdef
          AND p.proowner <> 'cogmem_owner'::regrole
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO cogmem_owner', v_function);
    END LOOP;
    REVOKE CREATE ON SCHEMA cogmem FROM cogmem_owner;
    -- Definer functions resolve vector operators in public: nobody else may create objects there.
    IF has_schema_privilege('public', 'public', 'CREATE') THEN
        RAISE WARNING 'any role may create objects in schema public, where cogmem''s definer functions find pgvector'
            USING HINT = 'REVOKE CREATE ON SCHEMA public FROM PUBLIC; (the default since PostgreSQL 15)';
    END IF;
END;
$owner$;
COMMENT ON ROLE cogmem_owner IS
'cogmem-pg: runs the API''s writing functions (SECURITY DEFINER); NOLOGIN, bound by row-level security.';

-- What the definer functions do, and no more: append-only tables get no UPDATE or DELETE.
GRANT USAGE ON SCHEMA public TO cogmem_owner;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA cogmem TO cogmem_owner;
-- Partitions are written and read through their parent.
DO $partitions$
DECLARE
    v_partition regclass;
BEGIN
    FOR v_partition IN
        SELECT c.oid FROM pg_catalog.pg_class AS c
        WHERE c.relnamespace = 'cogmem'::regnamespace AND c.relispartition AND c.relkind = 'r'
    LOOP
        EXECUTE format('REVOKE ALL ON %s FROM cogmem_owner', v_partition);
    END LOOP;
END;
$partitions$;
-- Episodes and identity versions are deleted only by erasure (sql/130-erasure.sql), never changed.
REVOKE UPDATE, DELETE ON cogmem.audit_log, cogmem.audit_chain, cogmem.bios_rule_events FROM cogmem_owner;
-- A view without the row policies (sql/016-large-tenants.sql): read, never written through.
REVOKE INSERT, UPDATE, DELETE ON cogmem._memory_lookup FROM cogmem_owner;
REVOKE UPDATE ON cogmem.episodes, cogmem.core_identity FROM cogmem_owner;
-- The Gut's shard key is written by its owner alone (cogmem_pg.shards.share_gut_key), read by definers.
REVOKE INSERT, UPDATE, DELETE ON cogmem.gut_shard_key FROM cogmem_owner;
-- The routing model is written by the installer alone (cogmem_pg.migrate.load_routing_model).
REVOKE INSERT, UPDATE, DELETE ON cogmem.routing_model, cogmem.routing_terms, cogmem.routing_model_version
FROM cogmem_owner;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA cogmem TO cogmem_owner;
-- gut_import (sql/068-gut.sql) continues the ids a release on another shard made.
GRANT UPDATE ON SEQUENCE cogmem.gut_releases_release_id_seq, cogmem.gut_patterns_pattern_id_seq TO cogmem_owner;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA cogmem TO cogmem_owner;

-- Reads: row-level security decides which tenant's rows (sql/000-tenant-access.sql); vault_keys no one reads.
GRANT SELECT ON cogmem.tenants, cogmem.tenant_layers, cogmem.default_topics, cogmem.tenant_topics,
cogmem.topic_matchers, cogmem.bios_rules, cogmem.bios_rule_events, cogmem.active_bios_rules,
cogmem.bios_presets, cogmem.bios_preset_loads, cogmem.bios_subscriptions, cogmem.bios_rules_in_force,
cogmem.bios_coverage, cogmem.memory_overview, cogmem.memory_siblings, cogmem.never_cut_overflow,
cogmem.memories, cogmem.memory_stats, cogmem.recalls, cogmem.sensory_turns, cogmem.audit_log,
cogmem.trust_events, cogmem.learnings, cogmem.conflicts, cogmem.sessions, cogmem.episodes,
cogmem.core_identity, cogmem.memory_contradictions, cogmem.audit_chain, cogmem.tenant_access,
cogmem.audit_trail, cogmem.audit_recalls, cogmem.audit_recall_items, cogmem.memory_history,
cogmem.recall_items, cogmem.vault_items, cogmem.pending_rehearsals, cogmem.pending_stats, cogmem.store_items,
cogmem.outcome_stats, cogmem.resources, cogmem.resource_chunks TO cogmem_app;

-- Reach, asked by the policies as whoever reads a table; they tell a role only about itself.
GRANT EXECUTE ON FUNCTION cogmem.caller(), cogmem.caller_roles(), cogmem.reachable_tenants(),
cogmem.reaches_every_tenant(), cogmem.narrowed_reach(), cogmem.may_use_vault(text)
TO cogmem_app, cogmem_auditor, cogmem_bi;
-- The scope rule (sql/015-scopes.sql), for an application's own reads of the views for a scope.
GRANT EXECUTE ON FUNCTION cogmem.in_scope(text, text, cogmem.ring, text, text, cogmem.tenants) TO cogmem_app;

GRANT EXECUTE ON FUNCTION
cogmem.remember(text, text, text, text[], public.vector, jsonb, bigint[], text, text, timestamptz, text, text, bigint[], public.vector[]),
cogmem.remember_many(text, jsonb, public.vector[], text[], text, text),
cogmem.recall(text, text, public.vector, text[], bigint, text, text, text),
cogmem.add_resource(text, text, text, text, jsonb, public.vector[], text, text),
cogmem.chunk_resource(text, text, text),
cogmem.chunk_text(text, bigint),
cogmem.retire_resource(text, text, text, text),
cogmem.feedback(uuid, real, bigint[]),
cogmem.feedback(uuid, double precision, bigint[]),
cogmem.feedback(text, uuid, real, bigint[], text),
cogmem.feedback(text, uuid, double precision, bigint[], text),
cogmem.apply_rehearsals(text),
cogmem.detect_topics(text, text),
cogmem.topic_keywords(text),
cogmem.route(text, public.vector),
cogmem.classify(text, public.vector, text),
cogmem.clauses(text, public.vector, text),
cogmem.judge_followup(text, public.vector, public.vector, text),
cogmem.judge_recall(text, uuid, text, real, text, bigint[]),
cogmem.redact(text),
cogmem.embed(text),
cogmem.server_can_embed(),
cogmem.embedding_dimensions(),
cogmem.strength(interval, interval),
cogmem.observe(text, text, text, text, public.vector, timestamptz, text, text),
cogmem.attention(text, text, public.vector),
cogmem.siblings(text, bigint),
cogmem.trust(text, text),
cogmem.trust_event(text, text, text, bigint, text),
cogmem.guard_check(text, text, text, public.vector, text, text),
cogmem.report_error(text, text, text, text, bigint, public.vector, jsonb, text, text),
cogmem.acknowledge(text, bigint, text),
cogmem.polarity(text),
cogmem.contradicts(text, text),
cogmem.open_conflicts(text, text, text, boolean),
cogmem.related(text, text, public.vector, bigint, text, text),
cogmem.resolve_conflict(bigint, text, text),
cogmem.resolve_conflict(text, bigint, text, text, text),
cogmem.start_session(text, text, text, text, text),
cogmem.end_session(uuid, text, text[], text[], text[], text[], text[], text, bigint[]),
cogmem.end_session(text, uuid, text, text[], text[], text[], text[], text[], text, bigint[]),
cogmem.briefing(text, text, bigint, text, text),
cogmem.briefing_text(text, text, bigint, text, text),
cogmem.analyze(text, text, timestamptz, timestamptz),
cogmem.core_identity(text),
cogmem.set_core_identity(text, text, text, text[]),
cogmem.vault_put(text, text, text, text, text),
cogmem.vault_get(text, text),
cogmem.vault_list(text),
cogmem.vault_delete(text, text),
cogmem.explain_recall(uuid),
cogmem.gut_patterns_for(text),
cogmem.gut_deidentify(text),
cogmem.store_put(
    text, text[], text, jsonb, text, double precision, public.vector, text, text, text[], public.vector[], public.vector[]
),
cogmem.store_get(text, text[], text, boolean, text),
cogmem.store_delete(text, text[], text, text),
cogmem.store_search(text, text[], text, jsonb, bigint, bigint, public.vector, boolean, text, text, text),
cogmem.store_sweep(text),
cogmem.store_namespaces(text, text[], text[], bigint, bigint, bigint, text),
cogmem.pending_rules(text, text, text, boolean),
cogmem.confirm_ring(text, bigint, text, text),
cogmem.dismiss_candidate(text, bigint, text),
cogmem.get_memory(text, bigint, text, text),
cogmem.list_memories(text, text, text, text, timestamptz, timestamptz, bigint, bigint, boolean, boolean),
cogmem.update_memory(text, bigint, text, text, text[], public.vector, jsonb, text, text),
cogmem.delete_memory(text, bigint, text, text, text),
cogmem.memory_history(text, bigint, text, text)
TO cogmem_app;

-- Auditors read the trail and verify it; they see no memory text (the trail holds none).
GRANT SELECT ON cogmem.audit_log, cogmem.audit_chain, cogmem.audit_seal_state, cogmem.audit_heads,
cogmem.audit_trail, cogmem.audit_writes, cogmem.audit_recalls, cogmem.audit_recall_items, cogmem.audit_outcomes,
cogmem.audit_lifecycle, cogmem.audit_governance, cogmem.memory_history, cogmem.consolidation_nights,
cogmem.consolidation_decisions, cogmem.consolidation_report, cogmem.consolidation_runs, cogmem.bios_rules,
cogmem.bios_rule_events, cogmem.bios_preset_loads, cogmem.bios_subscriptions, cogmem.tenant_access, cogmem.audit_settings, cogmem.audit_archives TO cogmem_auditor;
GRANT EXECUTE ON FUNCTION cogmem.verify_audit(text), cogmem.explain_recall(uuid) TO cogmem_auditor;

-- The Gut's role: releases, the ledger and what it published; no tenant's memories.
GRANT SELECT ON cogmem.gut_ledger, cogmem.gut_releases, cogmem.gut_patterns, cogmem.gut_settings,
cogmem.gut_contributions, cogmem.gut_feedback, cogmem.tenant_access TO cogmem_gut;
GRANT EXECUTE ON FUNCTION cogmem.gut_release(double precision, jsonb), cogmem.gut_export(), cogmem.gut_state(),
cogmem.gut_import(jsonb), cogmem.caller(), cogmem.caller_roles(), cogmem.reachable_tenants(),
cogmem.reaches_every_tenant(), cogmem.narrowed_reach() TO cogmem_gut;
GRANT SELECT ON cogmem.gut_ledger, cogmem.gut_releases TO cogmem_auditor;

-- BI tools: aggregates only, through views that run with their owner's rights.
GRANT SELECT ON cogmem.audit_daily, cogmem.memory_census, cogmem.tenant_access TO cogmem_bi;

-- Administrators: every tenant, the administrative verbs, and every table to read. Maintenance that
-- needs the tables' owner (partitions, retention, pg_cron schedules, the nightly procedure, which
-- commits and so cannot be a definer) stays with the schema owner and pg_cron.
GRANT SELECT ON ALL TABLES IN SCHEMA cogmem TO cogmem_admin;
REVOKE SELECT ON cogmem.vault_keys, cogmem.gut_shard_key FROM cogmem_admin;
-- Without the row policies, it would show an administrator the words of another person's memories.
REVOKE SELECT ON cogmem._memory_lookup FROM cogmem_admin;
GRANT EXECUTE ON FUNCTION
cogmem.create_tenant(text, text, text),
cogmem.reembed_begin(text, text),
cogmem.reembed_pending(text, bigint, text, bigint),
cogmem.reembed_put(text, text, text[], bigint[], uuid[], public.vector[]),
cogmem.reembed_finish(text),
cogmem.reembed_cancel(text),
cogmem.reembed_progress(text),
cogmem.configure_tenant(text, jsonb, text),
cogmem.set_topic(text, text, text[]),
cogmem.add_bios_rule(text, text, text, text, text, text, text[], boolean, text, jsonb),
cogmem.retire_bios_rule(bigint, text),
cogmem.bios_preset_diff(text, jsonb, text),
cogmem.load_bios_preset(text, text, text, text, jsonb, text, boolean),
cogmem.subscribe_bios(text, text),
cogmem.unsubscribe_bios(text, text),
cogmem.grant_tenant(name, text, boolean, text),
cogmem.revoke_tenant(name, text),
cogmem.erase(text, bigint, text),
cogmem.erase_subject(text, text, text),
cogmem.erase_person(text, text, text),
cogmem.consolidate(timestamptz, text),
cogmem.seal_audit(bigint),
cogmem.verify_audit(text),
cogmem.audit_mark_exported(text, text),
cogmem.restore_memory_stats(text, jsonb),
cogmem.restore_siblings(text, jsonb),
cogmem.restore_episode(text, uuid, text, text, text, text[], text[], text[], bigint[], text[], timestamptz, timestamptz, text, text),
cogmem.gut_configure(text, boolean, boolean),
cogmem.experiment_create(text, text, jsonb, text, text, text[]),
cogmem.experiment_status(text),
cogmem.experiment_stop(text),
cogmem.experiment_adopt(text, bigint),
cogmem.experiment_report(text, timestamptz),
cogmem.tenant_indexes(bigint)
TO cogmem_admin;
