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
END;
$roles$;
COMMENT ON ROLE cogmem_app IS 'cogmem-pg: applications that remember and recall.';
COMMENT ON ROLE cogmem_admin IS 'cogmem-pg: administrators (tenants, BIOS rules, topics, erasure); every tenant.';
COMMENT ON ROLE cogmem_auditor IS 'cogmem-pg: auditors: the audit trail and its verification, no memory content.';
COMMENT ON ROLE cogmem_bi IS 'cogmem-pg: BI tools: aggregate views only.';

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA cogmem FROM public;
REVOKE ALL ON ALL TABLES IN SCHEMA cogmem FROM public;
GRANT USAGE ON SCHEMA cogmem TO cogmem_app, cogmem_admin, cogmem_auditor, cogmem_bi;
GRANT cogmem_app TO cogmem_admin;

-- The functions run as the caller (security invoker), so the app role needs these table rights.
GRANT SELECT ON cogmem.tenants, cogmem.tenant_layers, cogmem.default_topics, cogmem.tenant_topics,
cogmem.topic_matchers, cogmem.bios_rules, cogmem.bios_rule_events, cogmem.active_bios_rules,
cogmem.bios_presets, cogmem.memory_overview, cogmem.memory_siblings, cogmem.never_cut_overflow TO cogmem_app;
GRANT SELECT, INSERT, UPDATE ON cogmem.memories, cogmem.memory_stats, cogmem.recalls, cogmem.sensory_turns
TO cogmem_app;
GRANT SELECT, INSERT ON cogmem.audit_log, cogmem.trust_events TO cogmem_app;
GRANT SELECT, INSERT, UPDATE ON cogmem.learnings, cogmem.conflicts, cogmem.sessions TO cogmem_app;
GRANT SELECT, INSERT ON cogmem.episodes, cogmem.core_identity, cogmem.memory_contradictions TO cogmem_app;
GRANT SELECT ON cogmem.audit_chain TO cogmem_app;
-- Row-level security decides which tenant's rows (sql/110-isolation.sql); the vault has its own grant.
GRANT SELECT ON cogmem.tenant_access, cogmem.audit_trail, cogmem.audit_recalls, cogmem.audit_recall_items,
cogmem.memory_history, cogmem.recall_items TO cogmem_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON cogmem.vault_items TO cogmem_app;
GRANT SELECT, INSERT ON cogmem.vault_keys TO cogmem_app;

GRANT EXECUTE ON FUNCTION
cogmem.remember(text, text, text, text[], public.vector, jsonb, bigint[]),
cogmem.remember_many(text, jsonb, public.vector[]),
cogmem.recall(text, text, public.vector, text[], integer, text),
cogmem.feedback(uuid, real, bigint[]),
cogmem.feedback(uuid, double precision, bigint[]),
cogmem.detect_topics(text, text),
cogmem.topic_keywords(text),
cogmem.route(text, public.vector),
cogmem.classify(text, public.vector),
cogmem._fold(text),
cogmem._looks_turkish(text),
cogmem._inbound_terms(text),
cogmem._inbound_cue_names(),
cogmem._inbound_cues(text),
cogmem._inbound_scores(text, public.vector),
cogmem._routing_model(),
cogmem._routing_model_cues(),
cogmem._routing_terms(),
cogmem._link_contradiction(text, bigint, bigint[], text),
cogmem.redact(text),
cogmem.embed(text),
cogmem.server_can_embed(),
cogmem.embedding_dimensions(),
cogmem._tenant_language(text),
cogmem._check_embedding(public.vector),
cogmem._normalize_topics(text[]),
cogmem._details(text),
cogmem._keyword_query(regconfig, text[]),
cogmem._detect_topics(text, text, regconfig),
cogmem._luhn_valid(text),
cogmem._rehearse(text, bigint, text[], jsonb),
cogmem._remember(text, text, text, text[], public.vector, jsonb, bigint[], bigint[]),
cogmem._or_query(text[]),
cogmem.strength(interval, interval),
cogmem._shared_words(tsvector, text[]),
cogmem.observe(text, text, text, text, public.vector, timestamptz),
cogmem.attention(text, text, public.vector),
cogmem.siblings(text, bigint),
cogmem._siblings_of(text, bigint[]),
cogmem._sibling_notes(text, bigint[]),
cogmem.trust(text),
cogmem.trust_event(text, text, text, bigint),
cogmem._trust_event(text, text, text, bigint),
cogmem._trust_delta(text),
cogmem._area(text),
cogmem.guard_check(text, text, text, public.vector),
cogmem.report_error(text, text, text, text, bigint, public.vector, jsonb),
cogmem.acknowledge(text, bigint, text),
cogmem.polarity(text),
cogmem._exclusive_choice(text),
cogmem.contradicts(text, text),
cogmem._pair_cue_names(),
cogmem._pair_cue(public.vector, text),
cogmem._pair_cues(text, text, text, real[], double precision, regconfig, boolean),
cogmem._contradiction(text, text, text, real[], double precision, regconfig, boolean),
cogmem.open_conflicts(text),
cogmem.related(text, text, public.vector, integer),
cogmem.resolve_conflict(bigint, text, text),
cogmem.start_session(text, text, text),
cogmem.end_session(uuid, text, text[], text[], text[], text[], text[], text, bigint[]),
cogmem._clean_text(text),
cogmem._clean_list(text[]),
cogmem.briefing(text, text, integer),
cogmem.briefing_text(text, text, integer),
cogmem.analyze(text, text, timestamptz, timestamptz),
cogmem._core_text(cogmem.core_identity),
cogmem.core_identity(text),
cogmem.set_core_identity(text, text, text, text[]),
cogmem._is_preference(text),
cogmem._sees_every_tenant(),
cogmem._granted_tenants(),
cogmem._may_use_vault(text),
cogmem._lock_tenant(text, boolean),
cogmem._vault_key(text, boolean),
cogmem._vault_check(text, text),
cogmem.vault_put(text, text, text, text, text),
cogmem.vault_get(text, text),
cogmem.vault_list(text),
cogmem.vault_delete(text, text),
cogmem.explain_recall(uuid)
TO cogmem_app;

-- Auditors read the trail and verify it; they see no memory text (the trail holds none).
GRANT SELECT ON cogmem.audit_log, cogmem.audit_chain, cogmem.audit_seal_state, cogmem.audit_heads,
cogmem.audit_trail, cogmem.audit_writes, cogmem.audit_recalls, cogmem.audit_recall_items, cogmem.audit_outcomes,
cogmem.audit_lifecycle, cogmem.audit_governance, cogmem.memory_history, cogmem.consolidation_nights,
cogmem.consolidation_decisions, cogmem.consolidation_report, cogmem.consolidation_runs, cogmem.bios_rules,
cogmem.bios_rule_events, cogmem.tenant_access, cogmem.audit_settings, cogmem.audit_archives TO cogmem_auditor;
GRANT EXECUTE ON FUNCTION
cogmem.verify_audit(text),
cogmem.explain_recall(uuid),
cogmem._audit_bytes(cogmem.audit_log),
cogmem._sees_every_tenant(),
cogmem._granted_tenants()
TO cogmem_auditor;

-- BI tools: aggregates only, through views that run with their owner's rights.
GRANT SELECT ON cogmem.audit_daily, cogmem.memory_census, cogmem.tenant_access TO cogmem_bi;
GRANT EXECUTE ON FUNCTION cogmem._sees_every_tenant(), cogmem._granted_tenants() TO cogmem_bi;
-- Consolidation is maintenance: cogmem_admin (below) and the pg_cron job's owner run it.

GRANT ALL ON ALL TABLES IN SCHEMA cogmem TO cogmem_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA cogmem TO cogmem_admin;
GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA cogmem TO cogmem_admin;
REVOKE ALL ON ALL PROCEDURES IN SCHEMA cogmem FROM public;
