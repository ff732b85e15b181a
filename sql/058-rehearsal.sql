-- Rehearsal from the cycle log. Every recall is a rehearsal of what it injected (one more recall, and its
-- Ebbinghaus clock restarts), and feedback credits an outcome to what it names. Neither touches
-- memory_stats inside the call: the cycle row (cogmem.recalls, written in the recall's own transaction)
-- holds the injected items as arrays and is the durable record, marked pending. cogmem.apply_rehearsals()
-- adds what is pending to memory_stats, set-based, once per memory per batch: from pg_cron every minute
-- (cogmem.schedule_rehearsals()), at the start of every tenant's night before any decision, from recall
-- itself when a tenant's backlog passes cogmem.rehearsal_backlog, and on demand.
--
-- Readers never see stale figures: memory_overview and recall's strength add what is still pending
-- (cogmem.pending_stats), and the night applies it first. A crash loses nothing: a pending row stays
-- pending until the transaction that applied it commits.
--
-- Locks, always in this order: the tenant's row (FOR KEY SHARE; a night holds it FOR UPDATE), the cycle
-- rows being applied (FOR UPDATE SKIP LOCKED: a feedback in progress is taken next time), then the
-- statistics rows in memory_id order (cogmem._lock_stats).

-- Per item of every pending cycle: whether its rehearsal is still to count, and the change in feedback
-- credit (what the cycle's outcome gives now, less what memory_stats was credited before).
CREATE OR REPLACE VIEW cogmem.pending_rehearsals WITH (security_invoker = TRUE) AS
WITH items AS (
    SELECT
        r.tenant,
        r.recall_id,
        i.memory_id,
        r.rehearsed,
        r.created_at,
        r.outcome,
        r.credited_outcome,
        (r.outcome IS NOT NULL AND (r.feedback_used IS NULL OR i.memory_id = any(r.feedback_used)))::integer AS gets,
        (
            r.credited_outcome IS NOT NULL AND (r.credited_used IS NULL OR i.memory_id = any(r.credited_used))
        )::integer AS had
    FROM cogmem.recalls AS r
    CROSS JOIN LATERAL unnest(r.item_memory_ids) AS i (memory_id)
    WHERE r.pending AND i.memory_id IS NOT NULL
)

SELECT
    x.tenant,
    x.recall_id,
    x.memory_id,
    CASE WHEN NOT x.rehearsed THEN x.created_at END AS recalled_at,
    x.gets - x.had AS outcome_count,
    x.gets * coalesce(x.outcome, 0)::double precision - x.had * coalesce(x.credited_outcome, 0)::double precision
        AS outcome_sum
FROM items AS x;
COMMENT ON VIEW cogmem.pending_rehearsals IS
'Per memory injected by a pending recall cycle: its rehearsal time if not yet counted, and the feedback '
'credit not yet in memory_stats (cogmem.apply_rehearsals() applies it).';

CREATE OR REPLACE VIEW cogmem.pending_stats WITH (security_invoker = TRUE) AS
SELECT
    p.tenant,
    p.memory_id,
    count(p.recalled_at)::integer AS recall_count,
    max(p.recalled_at) AS last_recalled_at,
    sum(p.outcome_count)::integer AS outcome_count,
    sum(p.outcome_sum) AS outcome_sum
FROM cogmem.pending_rehearsals AS p
GROUP BY p.tenant, p.memory_id;
COMMENT ON VIEW cogmem.pending_stats IS
'What memory_stats does not show yet, per memory: recalls, the last of them, and feedback credit. '
'Readers add it to memory_stats; cogmem.apply_rehearsals() moves it there.';

-- One tenant's pending cycles into memory_stats. The caller holds the tenant's row (shared by the day's
-- calls, exclusive by a night).
CREATE OR REPLACE FUNCTION cogmem._apply_rehearsals(p_tenant text)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_claimed  uuid[];
    v_ids      bigint[];
    v_recalls  integer[];
    v_last     timestamptz[];
    v_outcomes integer[];
    v_credit   double precision[];
BEGIN
    SELECT coalesce(array_agg(c.recall_id), '{}') INTO v_claimed
    FROM (SELECT r.recall_id FROM cogmem.recalls AS r WHERE r.tenant = p_tenant AND r.pending
          FOR UPDATE SKIP LOCKED) AS c;
    IF cardinality(v_claimed) = 0 THEN
        RETURN 0;
    END IF;
    -- The claimed rows are locked: what this statement reads of them is what the claim saw. One read,
    -- per memory in memory_id order, which is also the order the locks are taken in.
    SELECT coalesce(array_agg(d.memory_id ORDER BY d.memory_id), '{}'), array_agg(d.recalls ORDER BY d.memory_id),
           array_agg(d.last_recalled_at ORDER BY d.memory_id), array_agg(d.outcomes ORDER BY d.memory_id),
           array_agg(d.credit ORDER BY d.memory_id)
    INTO v_ids, v_recalls, v_last, v_outcomes, v_credit
    FROM (SELECT p.memory_id, count(p.recalled_at)::integer AS recalls, max(p.recalled_at) AS last_recalled_at,
                 sum(p.outcome_count)::integer AS outcomes, sum(p.outcome_sum) AS credit
          FROM cogmem.pending_rehearsals AS p WHERE p.tenant = p_tenant AND p.recall_id = ANY (v_claimed)
          GROUP BY p.memory_id) AS d;
    PERFORM cogmem._lock_stats(p_tenant, v_ids);
    UPDATE cogmem.memory_stats AS s
    SET recall_count = s.recall_count + d.recalls,
        last_recalled_at = greatest(s.last_recalled_at, d.last_recalled_at),
        outcome_count = s.outcome_count + d.outcomes,
        outcome_sum = s.outcome_sum + d.credit
    FROM unnest(v_ids, v_recalls, v_last, v_outcomes, v_credit) AS d (memory_id, recalls, last_recalled_at, outcomes, credit)
    WHERE s.tenant = p_tenant AND s.memory_id = d.memory_id;
    UPDATE cogmem.recalls AS r
    SET pending = false, rehearsed = true, credited_outcome = r.outcome, credited_used = r.feedback_used
    WHERE r.tenant = p_tenant AND r.recall_id = ANY (v_claimed);
    RETURN cardinality(v_claimed);
END;
$$;
COMMENT ON FUNCTION cogmem._apply_rehearsals(text) IS
'Applies one tenant''s pending recall cycles (rehearsals and feedback credit) to memory_stats; returns how '
'many cycles. The caller holds the tenant''s row.';

-- The backlog a recall tolerates before it applies its tenant's pending cycles itself: every recall adds
-- what is pending, at a cost of the pending cycles times their items, so it must stay small. Applying
-- a few cycles at once still updates each memory's row once for all of them.
CREATE OR REPLACE FUNCTION cogmem._apply_backlog(p_tenant text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_setting text := coalesce(nullif(current_setting('cogmem.rehearsal_backlog', true), ''), '8');
    v_limit   integer;
BEGIN
    IF v_setting !~ '^\s*0*[1-9][0-9]{0,8}\s*$' THEN
        RAISE EXCEPTION 'cogmem.rehearsal_backlog must be a whole number of cycles from 1, got "%"', v_setting
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'SET cogmem.rehearsal_backlog = 8 (the default), or RESET it.';
    END IF;
    v_limit := v_setting::integer;
    IF (SELECT count(*) FROM (SELECT FROM cogmem.recalls AS r WHERE r.tenant = p_tenant AND r.pending
                              LIMIT v_limit) AS b) >= v_limit THEN
        PERFORM cogmem._apply_rehearsals(p_tenant);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._apply_backlog(text) IS
'Applies the tenant''s pending cycles when there are cogmem.rehearsal_backlog (default 8) or more.';

-- Tenants whose night holds them are skipped, not waited for: the night applies their cycles itself.
CREATE OR REPLACE FUNCTION cogmem.apply_rehearsals(tenant text DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: memory_stats is written only through the API. Reach: the tenant named, else row-level
-- security on recalls limits the pending cycles seen to the caller's tenants.
AS $$
#variable_conflict use_column
DECLARE
    v_applied integer := 0;
    v_tenant  text;
BEGIN
    IF apply_rehearsals.tenant IS NOT NULL THEN
        PERFORM cogmem._require_tenant(apply_rehearsals.tenant);
    END IF;
    FOR v_tenant IN
        SELECT DISTINCT r.tenant FROM cogmem.recalls AS r
        WHERE r.pending AND (apply_rehearsals.tenant IS NULL OR r.tenant = apply_rehearsals.tenant)
        ORDER BY r.tenant
    LOOP
        PERFORM FROM cogmem.tenants AS t WHERE t.tenant = v_tenant FOR KEY SHARE SKIP LOCKED;
        IF FOUND THEN
            v_applied := v_applied + cogmem._apply_rehearsals(v_tenant);
        END IF;
    END LOOP;
    RETURN v_applied;
END;
$$;
COMMENT ON FUNCTION cogmem.apply_rehearsals(text) IS
'Applies pending recall cycles (rehearsals and feedback credit) to memory_stats, for one tenant or every '
'tenant the caller reaches; returns how many cycles. Scheduled by cogmem.schedule_rehearsals().';

CREATE OR REPLACE VIEW cogmem.memory_overview WITH (security_invoker = TRUE) AS
SELECT
    m.tenant,
    m.memory_id,
    m.ring,
    m.content,
    m.topics,
    m.token_estimate,
    s.confidence,
    s.reinforced,
    s.recall_count + coalesce(p.recall_count, 0) AS recall_count,
    s.rehearsal_count,
    s.outcome_count + coalesce(p.outcome_count, 0) AS outcome_count,
    CASE
        WHEN s.outcome_count + coalesce(p.outcome_count, 0) > 0
            THEN
                ((s.outcome_sum + coalesce(p.outcome_sum, 0)) / (s.outcome_count + coalesce(p.outcome_count, 0)))::real
    END AS success_score,
    greatest(s.last_recalled_at, p.last_recalled_at) AS last_recalled_at,
    cogmem.strength(
        now() - coalesce(greatest(s.last_recalled_at, p.last_recalled_at), m.created_at),
        CASE WHEN s.reinforced OR m.candidate_ring IS NOT NULL THEN NULL ELSE l.half_life END
    ) AS strength,
    m.embedding IS NOT NULL AS embedded,
    m.redactions,
    m.source,
    m.created_at,
    m.updated_at,
    m.candidate_ring,
    m.conversation,
    m.speaker,
    m.said_at,
    m.person,
    m.agent,
    m.superseded_by,
    m.valid_until
FROM cogmem.memories AS m
INNER JOIN cogmem.memory_stats AS s ON m.tenant = s.tenant AND m.memory_id = s.memory_id
INNER JOIN cogmem.tenant_layers AS l ON m.tenant = l.tenant AND m.ring::text = l.layer::text
LEFT JOIN cogmem.pending_stats AS p ON m.tenant = p.tenant AND m.memory_id = p.memory_id;
COMMENT ON VIEW cogmem.memory_overview IS
'Each memory with its usage statistics (what is still pending included) and current Ebbinghaus strength, '
'for people and BI tools; superseded_by and valid_until say what replaced it and since when.';

CREATE OR REPLACE FUNCTION cogmem._rehearse(
    p_tenant text, p_memory_id bigint, p_redactions text[], p_detail jsonb
)
RETURNS TABLE (memory_id bigint, ring text, topics text[], action text, redactions text[])
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    -- Hearing it again is a rehearsal: its Ebbinghaus clock restarts.
    UPDATE cogmem.memory_stats AS s
    SET rehearsal_count = s.rehearsal_count + 1, last_recalled_at = now()
    WHERE s.tenant = p_tenant AND s.memory_id = p_memory_id;
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (p_tenant, 'write', p_memory_id, 'rehearsed', p_detail);
    RETURN QUERY
    SELECT m.memory_id, m.ring::text, m.topics, 'duplicate'::text, p_redactions
    FROM cogmem.memories AS m WHERE m.tenant = p_tenant AND m.memory_id = p_memory_id;
END;
$$;
COMMENT ON FUNCTION cogmem._rehearse(text, bigint, text[], jsonb) IS
'Rehearses an existing memory heard again and reports it as a duplicate.';
