-- Sleep: the nightly consolidation. Per tenant and night, in one transaction with the record of that
-- night, so re-running a night is a no-op and a crash leaves every tenant either done or untouched. The
-- scheduled night (consolidate_nightly) merges first in steps of their own transactions, so that a large
-- tenant's calls never wait for a whole night: a crash may leave some merges done, and the night reruns.
--
-- Decisions, in this order (thresholds are per-tenant columns of cogmem.tenants):
--   expire     sensory turns older than sensory_ttl are removed
--   merge      same ring, cosine > merge_similarity, same discriminating details: the weaker memory is
--              folded into the stronger one (statistics summed, topics united) and deleted; among the
--              20,000 newest memories of the day (more are left unmerged, counted as merge_skipped)
--   sibling    the details differ (host, IP, environment, OS, version), cosine > sibling_similarity:
--              linked, both kept
--   reinforce  recalled >= reinforce_min_recalls with success > reinforce_min_success: confidence 1,
--              decay stops
--   promote    fresh, recalled >= promote_min_recalls with success > promote_min_success: moves to
--              long_term (preferences and routines to habits), or is flagged when
--              promote_automatically is off
--   weaken     recalled >= weaken_min_recalls with success < weaken_max_success: confidence halves,
--              again every night it holds, down to 0.001 (it stays, ranked last, for a person to review)
--   fade       never recalled, not reinforced, unused for forget_after: confidence - forget_step for
--              every forget_after of disuse
--   forget     faded below forget_below: deleted (the deletion is recorded, the text is not kept)
--   protect    shocks and dos_and_donts are never weakened, faded, merged away or deleted
--   overflow   ... and never cut: the night counts their memories when a ring holds more tokens than
--              its allocation (cogmem.never_cut_overflow), for a person to review
--   review     conflicts resolved by override during the day (sql/160-conflicts.sql), both memories
--              kept: marked reviewed and logged with what each memory has earned so far, for a person
-- Protected rings and BIOS rules are otherwise left alone.
-- The audit trail gets one row per decision that touched memories, listing them (detail.memories, one
-- array per field, cheaper than an object per memory), rather than one row per
-- memory: a first night over a million memories writes thousands of audit rows, not half a million.
-- cogmem.memory_history shows them per memory again.

-- Statistics, learnings, sibling links and Gut contributions go with their memory; store items are unlinked. Once per DELETE statement rather than a
-- foreign-key cascade per row: a night forgets hundreds of thousands of memories (migrations 0004, 0012).
CREATE OR REPLACE FUNCTION cogmem._forget_keyed_rows()
RETURNS trigger
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_tenant text;
    v_ids    bigint[];
BEGIN
    IF tg_op = 'TRUNCATE' THEN
        DELETE FROM cogmem.memory_stats;
        DELETE FROM cogmem.learnings;
        DELETE FROM cogmem.memory_siblings;
        DELETE FROM cogmem.memory_contradictions;
        DELETE FROM cogmem.gut_contributions;
        UPDATE cogmem.store_items SET memory_id = NULL, owns_memory = false WHERE memory_id IS NOT NULL;
        RETURN NULL;
    END IF;
    -- Per tenant (a night or an erasure has one), whose few links one index range holds. A join with
    -- the deleted rows cost time on every statement, even with no links to remove.
    FOR v_tenant, v_ids IN SELECT g.tenant, array_agg(g.memory_id) FROM gone AS g GROUP BY g.tenant LOOP
        DELETE FROM cogmem.memory_stats AS s WHERE s.tenant = v_tenant AND s.memory_id = ANY (v_ids);
        DELETE FROM cogmem.learnings AS l WHERE l.tenant = v_tenant AND l.memory_id = ANY (v_ids);
        DELETE FROM cogmem.memory_siblings AS l
        WHERE l.tenant = v_tenant AND (l.memory_id = ANY (v_ids) OR l.sibling_id = ANY (v_ids));
        DELETE FROM cogmem.memory_contradictions AS l
        WHERE l.tenant = v_tenant AND (l.memory_id = ANY (v_ids) OR l.contradicts_id = ANY (v_ids));
        DELETE FROM cogmem.gut_contributions AS c WHERE c.tenant = v_tenant AND c.memory_id = ANY (v_ids);
        -- A keyed store item (sql/180-store.sql) keeps its value when its memory fades.
        UPDATE cogmem.store_items AS i SET memory_id = NULL, owns_memory = false
        WHERE i.tenant = v_tenant AND i.memory_id = ANY (v_ids);
    END LOOP;
    RETURN NULL;
END;
$$;
COMMENT ON FUNCTION cogmem._forget_keyed_rows() IS
'Trigger function: removes the statistics, learnings, sibling and contradiction links and Gut '
'contributions of deleted (or truncated) memories, and unlinks their keyed store items.';

CREATE OR REPLACE TRIGGER memories_forget_keyed_rows
AFTER DELETE ON cogmem.memories
REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._forget_keyed_rows();
CREATE OR REPLACE TRIGGER memories_truncate_keyed_rows
AFTER TRUNCATE ON cogmem.memories
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._forget_keyed_rows();

-- The night's pairs: each new or changed memory with its five nearest of the same ring and scope, above the
-- lower of the merge and sibling cosines. The tenant is a literal, so that the planner matches a large
-- tenant's own index (sql/016-large-tenants.sql): searched through the index, a night's new memories cost
-- what they number, where a pass over the tenant for each made the night grow with the square of it (a
-- day's 1% of 20,000 memories took 6.7 s, of a million it would take hours).
CREATE OR REPLACE FUNCTION cogmem._night_pairs(t cogmem.tenants, p_changed bigint[])
RETURNS TABLE (a_id bigint, b_id bigint, similarity double precision, same_details boolean)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Sorting off: a large tenant's nearest are then read in order from its index. The planner, which
-- misjudges how few memories share a scope, would rather sort the whole ring for each. JIT off: the
-- cost sorting off adds would buy a compilation slower than the query.
SET enable_sort = off
SET jit = off
SET "hnsw.ef_search" = 100
SET "hnsw.iterative_scan" = relaxed_order
AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT a.memory_id, b.memory_id, b.similarity, cogmem._details(a.content) = cogmem._details(b.content) '
        'FROM cogmem.memories AS a '
        'CROSS JOIN LATERAL ( '
        '    SELECT n.memory_id, n.content, 1 - (n.embedding OPERATOR(public.<=>) a.embedding) AS similarity '
        '    FROM cogmem.memories AS n '
        '    WHERE n.tenant = %L AND n.ring = a.ring AND n.memory_id <> a.memory_id AND n.embedding IS NOT NULL '
        -- One scope (sql/015-scopes.sql): one person's fact never merges with another's.
        '      AND cogmem._same_scope(n.person, n.agent, a.person, a.agent) '
        '    ORDER BY n.embedding OPERATOR(public.<=>) a.embedding LIMIT 5) AS b '
        'WHERE a.tenant = %L AND a.memory_id = ANY ($1) AND a.embedding IS NOT NULL '
        -- NaN (a zero vector) is no similarity, though PostgreSQL orders it above every number.
        '  AND b.similarity > least($2, $3) AND b.similarity <> ''NaN'' '
        'ORDER BY b.similarity DESC, a.memory_id, b.memory_id', t.tenant, t.tenant)
    USING p_changed, t.merge_similarity, t.sibling_similarity;
END;
$$;
COMMENT ON FUNCTION cogmem._night_pairs(cogmem.tenants, bigint[]) IS
'The night''s candidate pairs for merge and sibling: each given memory with its five nearest of the same '
'ring and scope, through a large tenant''s own index when it has one; closest first.';

-- The most new memories a night merges among (its newest): the first night after a bulk load of a million
-- would otherwise hold the tenant (its calls wait for its night) for half an hour. The others stay as they
-- are, unmerged, and are counted (merge_skipped): a merge only saves room and noise, and a loader that skips
-- the checks by meaning (remember_many's skip) chose that already. One number for the night in one
-- transaction (_night_merge) and the night in steps (consolidate_nightly).
CREATE OR REPLACE FUNCTION cogmem._night_merge_bound()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN 20000;
COMMENT ON FUNCTION cogmem._night_merge_bound() IS 'The most new memories one night merges among: 20,000.';

-- A tenant's memories new or changed since p_since (up to p_as_of), newest first: those below p_below
-- (NULL: all), at most p_most (NULL: all). An index-only scan (migration 0012), not a read of every row.
CREATE OR REPLACE FUNCTION cogmem._night_changed(
    p_tenant text, p_as_of timestamptz, p_since timestamptz, p_below bigint, p_most integer
)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN ARRAY(SELECT m.memory_id FROM cogmem.memories AS m
                 WHERE m.tenant = p_tenant AND m.created_at <= p_as_of
                   AND (m.created_at > p_since OR m.updated_at > p_since)
                   AND (p_below IS NULL OR m.memory_id < p_below)
                 ORDER BY m.memory_id DESC LIMIT p_most);
END;
$$;
COMMENT ON FUNCTION cogmem._night_changed(text, timestamptz, timestamptz, bigint, integer) IS
'A tenant''s memories new or changed since p_since, newest first: below p_below, at most p_most (NULL: no limit).';

-- merge and sibling: each new memory against its nearest neighbours in the same ring. The new and
-- changed ones come from an index-only scan (migration 0012), not from reading every row. Returns the
-- counts that are not zero (merge_skipped: new memories beyond a night's bound, left unmerged).
DROP FUNCTION IF EXISTS cogmem._night_merge(cogmem.tenants, timestamptz, timestamptz);  -- before the bound
CREATE OR REPLACE FUNCTION cogmem._night_merge(
    t cogmem.tenants, p_as_of timestamptz, p_since timestamptz, p_most bigint DEFAULT cogmem._night_merge_bound()
)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_counts  jsonb := '{}';
    v_changed bigint[];
    v_skipped bigint;
BEGIN
    v_changed := cogmem._night_changed(t.tenant, p_as_of, p_since, NULL, NULL);
    -- At most the p_most newest (cogmem._night_merge_bound says why).
    v_skipped := cardinality(v_changed) - p_most;
    IF v_skipped > 0 THEN
        v_changed := v_changed[1:p_most];
        v_counts := v_counts || jsonb_build_object('merge_skipped', v_skipped);
    END IF;
    RETURN v_counts || cogmem._night_merge_ids(t, p_as_of, v_changed);
END;
$$;
COMMENT ON FUNCTION cogmem._night_merge(cogmem.tenants, timestamptz, timestamptz, bigint) IS
'The night''s merge of near-duplicates and linking of siblings among the p_most newest memories new or '
'changed since p_since; the others are counted (merge_skipped) and left as they are.';

-- The merges and sibling links of the given memories with their nearest (_night_pairs), closest first.
CREATE OR REPLACE FUNCTION cogmem._night_merge_ids(t cogmem.tenants, p_as_of timestamptz, p_changed bigint[])
RETURNS jsonb
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_counts  jsonb := '{}';
    v_pair    record;
    v_keep    bigint;
    v_drop    bigint;
BEGIN
    FOR v_pair IN SELECT * FROM cogmem._night_pairs(t, p_changed)
    LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM cogmem.memories AS m WHERE m.tenant = t.tenant AND m.memory_id = v_pair.a_id)
                   OR NOT EXISTS (SELECT FROM cogmem.memories AS m WHERE m.tenant = t.tenant AND m.memory_id = v_pair.b_id);
        -- Never-cut memories are never merged away, nor a candidate rule waiting to be confirmed.
        IF NOT v_pair.same_details
           OR EXISTS (SELECT FROM cogmem.memories AS m
                      WHERE m.tenant = t.tenant AND m.memory_id IN (v_pair.a_id, v_pair.b_id)
                        AND (m.ring = ANY ('{shocks,dos_and_donts}'::cogmem.ring[]) OR m.candidate_ring IS NOT NULL)) THEN
            -- Linking keeps both, so it may reach further than merging (tenants.sibling_similarity).
            CONTINUE WHEN v_pair.similarity <= t.sibling_similarity;
            INSERT INTO cogmem.memory_siblings (tenant, memory_id, sibling_id, similarity)
            VALUES (t.tenant, least(v_pair.a_id, v_pair.b_id), greatest(v_pair.a_id, v_pair.b_id), v_pair.similarity)
            ON CONFLICT DO NOTHING;
            IF FOUND THEN
                v_counts := v_counts || jsonb_build_object('sibling', coalesce((v_counts ->> 'sibling')::int, 0) + 1);
            END IF;
            CONTINUE;
        END IF;
        CONTINUE WHEN v_pair.similarity <= t.merge_similarity;
        -- Keep the stronger: more confident, then more recalled, then older.
        SELECT m.memory_id INTO v_keep
        FROM cogmem.memories AS m JOIN cogmem.memory_stats AS s USING (tenant, memory_id)
        WHERE m.tenant = t.tenant AND m.memory_id IN (v_pair.a_id, v_pair.b_id)
        ORDER BY s.confidence DESC, s.recall_count DESC, m.memory_id
        LIMIT 1;
        v_drop := CASE WHEN v_keep = v_pair.a_id THEN v_pair.b_id ELSE v_pair.a_id END;
        UPDATE cogmem.memory_stats AS k
        SET recall_count = k.recall_count + d.recall_count,
            rehearsal_count = k.rehearsal_count + d.rehearsal_count,
            outcome_count = k.outcome_count + d.outcome_count,
            outcome_sum = k.outcome_sum + d.outcome_sum,
            last_recalled_at = greatest(k.last_recalled_at, d.last_recalled_at)
        FROM cogmem.memory_stats AS d
        WHERE k.tenant = t.tenant AND k.memory_id = v_keep AND d.tenant = t.tenant AND d.memory_id = v_drop;
        UPDATE cogmem.memories AS k
        SET topics = cogmem._normalize_topics(k.topics || d.topics), updated_at = p_as_of
        FROM cogmem.memories AS d
        WHERE k.tenant = t.tenant AND k.memory_id = v_keep AND d.tenant = t.tenant AND d.memory_id = v_drop;
        -- A keyed store item (sql/180-store.sql) follows its text into the kept memory, which it does not own.
        UPDATE cogmem.store_items AS i SET memory_id = v_keep, owns_memory = false
        WHERE i.tenant = t.tenant AND i.memory_id = v_drop;
        DELETE FROM cogmem.memories AS m WHERE m.tenant = t.tenant AND m.memory_id = v_drop;
        INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail, at)
        VALUES (t.tenant, 'lifecycle', v_keep, 'merged', jsonb_build_object('absorbed', v_drop, 'similarity', round(v_pair.similarity::numeric, 4)), p_as_of),
               (t.tenant, 'lifecycle', v_drop, 'deleted', jsonb_build_object('reason', 'merged', 'into', v_keep), p_as_of);
        v_counts := v_counts || jsonb_build_object('merge', coalesce((v_counts ->> 'merge')::int, 0) + 1);
    END LOOP;
    RETURN v_counts;
END;
$$;
COMMENT ON FUNCTION cogmem._night_merge_ids(cogmem.tenants, timestamptz, bigint[]) IS
'Merges near-duplicates and links siblings among the given memories and their nearest; returns the counts.';

-- The moment the night of p_as_of starts from for a tenant: its previous night's, or on a first night the
-- last day. A night is the UTC date of its as_of.
DROP FUNCTION IF EXISTS cogmem._night_since(text, date, timestamptz);  -- the night was also passed, derivable
CREATE OR REPLACE FUNCTION cogmem._night_since(p_tenant text, p_as_of timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN (SELECT coalesce(max(n.as_of), p_as_of - interval '1 day') FROM cogmem.consolidation_nights AS n
            WHERE n.tenant = p_tenant AND n.night < (p_as_of AT TIME ZONE 'UTC')::date);
END;
$$;
COMMENT ON FUNCTION cogmem._night_since(text, timestamptz) IS
'The as_of of a tenant''s night before the night of p_as_of, or a day before p_as_of on its first.';

-- The merge of a scheduled night in steps (cogmem.consolidate_nightly), each its own transaction holding
-- the tenant: the day's calls wait for one step, not for the whole merge (a day's 1% of a million
-- memories took minutes, and a call gives up after cogmem.lock_wait). The p_step newest new memories
-- below p_below; NULL lowest when nothing is left or the night is done, and NULL counts as well when the
-- day's calls hold the tenant (the night's own transaction then merges, or skips it and says so).
CREATE OR REPLACE FUNCTION cogmem._night_merge_step(
    p_tenant text, p_as_of timestamptz, p_below bigint, p_step integer, OUT counts jsonb, OUT lowest bigint
)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    t       cogmem.tenants := cogmem._tenant_settings(p_tenant);
    v_night date := (p_as_of AT TIME ZONE 'UTC')::date;
    v_ids   bigint[];
BEGIN
    counts := '{}';
    -- A night done (a run every minute finds most so) takes no lock: the rehearsal job skips a held tenant.
    IF EXISTS (SELECT FROM cogmem.consolidation_nights AS n WHERE n.tenant = p_tenant AND n.night = v_night) THEN
        RETURN;
    END IF;
    BEGIN
        PERFORM cogmem._lock_tenant(p_tenant, true);
    EXCEPTION WHEN lock_not_available THEN
        counts := NULL;  -- busy
        RETURN;
    END;
    v_ids := cogmem._night_changed(p_tenant, p_as_of, cogmem._night_since(p_tenant, p_as_of), p_below, p_step);
    IF cardinality(v_ids) > 0 THEN
        counts := cogmem._night_merge_ids(t, p_as_of, v_ids);
        lowest := v_ids[cardinality(v_ids)];
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._night_merge_step(text, timestamptz, bigint, integer) IS
'One step of a scheduled night''s merge: the p_step newest memories new since the last night below '
'p_below, with the tenant held; returns the counts and the lowest memory merged from (NULL: nothing left).';

-- What the merge steps left (cogmem.consolidate_nightly): the new memories below the last step's lowest,
-- counted as merge_skipped.
CREATE OR REPLACE FUNCTION cogmem._night_merge_left(p_tenant text, p_as_of timestamptz, p_below bigint)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_left bigint := cardinality(cogmem._night_changed(p_tenant, p_as_of, cogmem._night_since(p_tenant, p_as_of),
                                                       p_below, NULL));
BEGIN
    RETURN CASE WHEN v_left > 0 THEN jsonb_build_object('merge_skipped', v_left) ELSE '{}' END;
END;
$$;
COMMENT ON FUNCTION cogmem._night_merge_left(text, timestamptz, bigint) IS
'The memories new since the last night below p_below, as a night''s merge_skipped count (none: {}).';

-- Two nights' counts added key by key; NULL when either is (a merge in steps that found the tenant busy).
CREATE OR REPLACE FUNCTION cogmem._add_counts(p_one jsonb, p_other jsonb)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_sum jsonb := p_one;
    v_key text;
BEGIN
    IF p_one IS NULL OR p_other IS NULL THEN
        RETURN NULL;
    END IF;
    FOR v_key IN SELECT k.key FROM jsonb_object_keys(p_other) AS k (key) LOOP
        v_sum := v_sum || jsonb_build_object(v_key, coalesce((v_sum ->> v_key)::bigint, 0) + (p_other ->> v_key)::bigint);
    END LOOP;
    RETURN v_sum;
END;
$$;
COMMENT ON FUNCTION cogmem._add_counts(jsonb, jsonb) IS
'Counts of a night''s decisions added key by key; NULL when either side is NULL.';

-- reinforce
CREATE OR REPLACE FUNCTION cogmem._night_reinforce(t cogmem.tenants, p_as_of timestamptz, p_recalled bigint[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_count integer;
BEGIN
    WITH done AS (
        UPDATE cogmem.memory_stats AS s SET confidence = 1, reinforced = true
        WHERE s.tenant = t.tenant AND s.memory_id = ANY (p_recalled) AND NOT s.reinforced
          AND s.recall_count >= t.reinforce_min_recalls AND s.success_score > t.reinforce_min_success
        RETURNING s.memory_id
    ), logged AS (
        INSERT INTO cogmem.audit_log (tenant, level, event, detail, at)
        SELECT t.tenant, 'lifecycle', 'reinforced',
               jsonb_build_object('memories', jsonb_build_object('memory_id', jsonb_agg(d.memory_id ORDER BY d.memory_id))),
               p_as_of
        FROM done AS d HAVING count(*) > 0
    )
    SELECT count(*) INTO v_count FROM done;
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem._night_reinforce(cogmem.tenants, timestamptz, bigint[]) IS
'Reinforces recalled memories that proved useful (confidence 1); returns how many.';

-- promote: to habits (a preference) or long_term
CREATE OR REPLACE FUNCTION cogmem._night_promote(t cogmem.tenants, p_as_of timestamptz, p_recalled bigint[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_count integer;
BEGIN
    IF t.promote_automatically THEN
        WITH done AS (
            UPDATE cogmem.memories AS m
            SET ring = CASE WHEN cogmem._is_preference(m.content) THEN 'habits' ELSE 'long_term' END::cogmem.ring,
                updated_at = p_as_of
            FROM cogmem.memory_stats AS s
            WHERE m.tenant = t.tenant AND s.tenant = t.tenant AND s.memory_id = ANY (p_recalled)
              AND s.memory_id = m.memory_id AND m.ring = 'fresh'
              AND s.recall_count >= t.promote_min_recalls AND s.success_score > t.promote_min_success
            RETURNING m.memory_id, m.ring
        ), logged AS (
            INSERT INTO cogmem.audit_log (tenant, level, event, detail, at)
            SELECT t.tenant, 'lifecycle', 'promoted',
                   jsonb_build_object('from', 'fresh', 'memories', jsonb_build_object(
                       'memory_id', jsonb_agg(d.memory_id ORDER BY d.memory_id),
                       'to', jsonb_agg(d.ring ORDER BY d.memory_id))),
                   p_as_of
            FROM done AS d HAVING count(*) > 0
        )
        SELECT count(*) INTO v_count FROM done;
    ELSE
        UPDATE cogmem.memory_stats AS s SET promotion_candidate = true
        FROM cogmem.memories AS m
        WHERE m.tenant = t.tenant AND s.tenant = t.tenant AND s.memory_id = ANY (p_recalled)
          AND s.memory_id = m.memory_id AND m.ring = 'fresh' AND NOT s.promotion_candidate
          AND s.recall_count >= t.promote_min_recalls AND s.success_score > t.promote_min_success;
        GET DIAGNOSTICS v_count = ROW_COUNT;
    END IF;
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem._night_promote(cogmem.tenants, timestamptz, bigint[]) IS
'Promotes proven fresh memories (or marks them candidates, when promotion is not automatic).';

-- promote candidates: a candidate rule or incident said again, or recalled with success often enough, moves
-- to its ring; the audit says which and why.
CREATE OR REPLACE FUNCTION cogmem._night_confirm_candidates(t cogmem.tenants, p_as_of timestamptz)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_count integer;
BEGIN
    WITH due AS (
        SELECT m.memory_id, m.candidate_ring,
               CASE WHEN s.rehearsal_count > 0 THEN 'said again'
                    ELSE format('recalled with success %s times', s.outcome_count) END AS reason
        FROM cogmem.memories AS m JOIN cogmem.memory_stats AS s USING (tenant, memory_id)
        WHERE m.tenant = t.tenant AND m.candidate_ring IS NOT NULL
          AND (s.rehearsal_count > 0
               OR (s.outcome_count >= t.candidate_min_successes AND s.success_score > t.reinforce_min_success))
    ), done AS (
        UPDATE cogmem.memories AS m SET ring = d.candidate_ring, candidate_ring = NULL, candidate_p = NULL,
                                        updated_at = p_as_of
        FROM due AS d WHERE m.tenant = t.tenant AND m.memory_id = d.memory_id
        RETURNING m.memory_id, m.ring, d.reason
    ), logged AS (
        INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail, at)
        SELECT t.tenant, 'lifecycle', d.memory_id, 'candidate_promoted',
               jsonb_build_object('to', d.ring, 'reason', d.reason, 'by', 'night'), p_as_of
        FROM done AS d
    )
    SELECT count(*) INTO v_count FROM done;
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem._night_confirm_candidates(cogmem.tenants, timestamptz) IS
'Moves candidate rules and incidents said again, or recalled with success candidate_min_successes times, to '
'their ring; returns how many.';

-- weaken (every night it holds: the night record makes it once per night)
CREATE OR REPLACE FUNCTION cogmem._night_weaken(t cogmem.tenants, p_as_of timestamptz, p_recalled bigint[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_count integer;
BEGIN
    WITH done AS (
        UPDATE cogmem.memory_stats AS s SET confidence = greatest(s.confidence / 2, 0.001)
        FROM cogmem.memories AS m
        WHERE s.tenant = t.tenant AND s.memory_id = ANY (p_recalled) AND m.tenant = t.tenant
          AND m.memory_id = s.memory_id AND NOT m.ring = ANY ('{shocks,dos_and_donts}'::cogmem.ring[]) AND s.confidence > 0.001
          AND s.recall_count >= t.weaken_min_recalls AND s.success_score < t.weaken_max_success
        RETURNING s.memory_id, s.confidence
    ), logged AS (
        INSERT INTO cogmem.audit_log (tenant, level, event, detail, at)
        SELECT t.tenant, 'lifecycle', 'weakened',
               jsonb_build_object('memories', jsonb_build_object(
                   'memory_id', jsonb_agg(d.memory_id ORDER BY d.memory_id),
                   'confidence', jsonb_agg(d.confidence ORDER BY d.memory_id))),
               p_as_of
        FROM done AS d HAVING count(*) > 0
    )
    SELECT count(*) INTO v_count FROM done;
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem._night_weaken(cogmem.tenants, timestamptz, bigint[]) IS
'Halves the confidence of recalled memories that did not help (every night it holds).';

-- fade and forget in one pass: one forget_step per whole forget_after of disuse not yet charged
-- (forget_steps remembers); what ends below forget_below is deleted instead of updated.
CREATE OR REPLACE FUNCTION cogmem._night_forget(t cogmem.tenants, p_as_of timestamptz)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_count     integer;
    v_forgotten integer;
BEGIN
    WITH unused AS (
        SELECT s.memory_id, m.ring, s.confidence, s.forget_steps,
               CASE WHEN coalesce(s.last_recalled_at, m.created_at) <= p_as_of - t.forget_after
                    THEN floor(extract(EPOCH FROM p_as_of - coalesce(s.last_recalled_at, m.created_at))
                               / extract(EPOCH FROM t.forget_after))::integer
                    ELSE 0
               END AS steps
        FROM cogmem.memories AS m JOIN cogmem.memory_stats AS s USING (tenant, memory_id)
        WHERE m.tenant = t.tenant AND s.recall_count = 0 AND NOT s.reinforced AND NOT m.ring = ANY ('{shocks,dos_and_donts}'::cogmem.ring[])
          AND m.candidate_ring IS NULL  -- a candidate rule waits, never forgotten
    ), due AS (
        SELECT u.memory_id, u.ring, u.steps, u.steps > u.forget_steps AS faded,
               CASE WHEN u.steps > u.forget_steps
                    THEN greatest(0, round((u.confidence - (u.steps - u.forget_steps) * t.forget_step)::numeric, 6))
                    ELSE u.confidence
               END AS confidence
        FROM unused AS u
        WHERE u.steps > u.forget_steps OR u.confidence < t.forget_below
    ), faded AS (
        UPDATE cogmem.memory_stats AS s SET confidence = d.confidence, forget_steps = d.steps
        FROM due AS d
        WHERE s.tenant = t.tenant AND s.memory_id = d.memory_id AND d.faded AND d.confidence >= t.forget_below
    ), gone AS (
        DELETE FROM cogmem.memories AS m
        USING due AS d
        WHERE m.tenant = t.tenant AND m.memory_id = d.memory_id AND d.confidence < t.forget_below
        RETURNING m.memory_id, d.ring, d.confidence
    ), logged AS (
        INSERT INTO cogmem.audit_log (tenant, level, event, detail, at)
        SELECT t.tenant, 'lifecycle', 'deleted',
               jsonb_build_object('reason', 'forgotten', 'memories', jsonb_build_object(
                   'memory_id', jsonb_agg(g.memory_id ORDER BY g.memory_id),
                   'ring', jsonb_agg(g.ring ORDER BY g.memory_id),
                   'confidence', jsonb_agg(g.confidence ORDER BY g.memory_id))),
               p_as_of
        FROM gone AS g HAVING count(*) > 0
    )
    SELECT (SELECT count(*) FROM due AS d WHERE d.faded), (SELECT count(*) FROM gone) INTO v_count, v_forgotten;
    RETURN jsonb_build_object('fade', v_count, 'forget', v_forgotten);
END;
$$;
COMMENT ON FUNCTION cogmem._night_forget(cogmem.tenants, timestamptz) IS
'Fades unused memories and forgets those that fall below forget_below; returns both counts.';

-- review: overrides a person chose are looked at again the night after, with how both sides fared.
CREATE OR REPLACE FUNCTION cogmem._night_review(t cogmem.tenants, p_as_of timestamptz)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_count integer;
BEGIN
    WITH reviewed AS (
        UPDATE cogmem.conflicts AS c SET reviewed_at = p_as_of
        WHERE c.tenant = t.tenant AND c.status = 'override' AND c.reviewed_at IS NULL
        RETURNING c.conflict_id, c.memory_id, c.conflicts_with
    ), logged AS (
        INSERT INTO cogmem.audit_log (tenant, level, event, detail, at)
        SELECT t.tenant, 'lifecycle', 'conflicts_reviewed',
               jsonb_build_object('conflicts', jsonb_agg(jsonb_build_object(
                   'conflict_id', r.conflict_id, 'kept', r.memory_id, 'contradicted', to_jsonb(r.conflicts_with),
                   'success', (SELECT jsonb_object_agg(s.memory_id, s.success_score) FROM cogmem.memory_stats AS s
                               WHERE s.tenant = t.tenant
                                 AND s.memory_id = ANY (r.memory_id || r.conflicts_with))) ORDER BY r.conflict_id)),
               p_as_of
        FROM reviewed AS r HAVING count(*) > 0
    )
    SELECT count(*) INTO v_count FROM reviewed;
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem._night_review(cogmem.tenants, timestamptz) IS
'Marks the night''s overridden conflicts reviewed and logs how each side has done since; returns how many.';

DROP FUNCTION IF EXISTS cogmem._consolidate_tenant(text, timestamptz, bigint);  -- before the merge in steps
CREATE OR REPLACE FUNCTION cogmem._consolidate_tenant(
    p_tenant text, p_as_of timestamptz, p_run_id bigint, p_merged jsonb DEFAULT NULL
)
RETURNS TABLE (decision text, memories integer)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_night     date := (p_as_of AT TIME ZONE 'UTC')::date;
    v_since     timestamptz;
    t           cogmem.tenants;
    v_count     integer;
    v_counts    jsonb := '{}';
    v_protected cogmem.ring[] := '{shocks,dos_and_donts}';
    v_recalled  bigint[];
    v_overflow  jsonb;
BEGIN
    t := cogmem._tenant_settings(p_tenant);
    BEGIN
        PERFORM cogmem._lock_tenant(p_tenant, true);  -- the day's calls wait for this tenant's night
    EXCEPTION WHEN lock_not_available THEN
        -- Skipped, said, and done on a later night: never hung on one tenant.
        RAISE NOTICE 'cogmem: the night skipped tenant "%": its calls held it', p_tenant;
        INSERT INTO cogmem.audit_log (tenant, level, event, detail, at)
        VALUES (p_tenant, 'lifecycle', 'night_skipped', jsonb_build_object('reason', 'busy', 'run_id', p_run_id), p_as_of);
        RETURN;
    END;
    -- Only memories new or changed since the tenant's previous night (on a first night: the last day)
    -- need the near-duplicate search; remember() already rehearses duplicates as they arrive.
    v_since := cogmem._night_since(p_tenant, p_as_of);
    INSERT INTO cogmem.consolidation_nights (tenant, night, as_of, run_id)
    VALUES (p_tenant, v_night, p_as_of, p_run_id)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN;  -- this night is done for this tenant
    END IF;
    -- The day's rehearsals and feedback first (sql/058-rehearsal.sql): every decision reads them.
    PERFORM cogmem._apply_rehearsals(p_tenant);

    -- expire
    DELETE FROM cogmem.sensory_turns AS s WHERE s.tenant = p_tenant AND s.at < p_as_of - t.sensory_ttl;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('expire', v_count);
    -- A recall keeps its message's embedding only while it waits for the next turn (sql/059-followup.sql).
    UPDATE cogmem.recalls AS r SET message_embedding = NULL
    WHERE r.tenant = p_tenant AND r.message_embedding IS NOT NULL
      AND r.created_at < p_as_of - t.implicit_feedback_window;

    -- A scheduled night merged in steps before (p_merged, its counts); else the merge is done here.
    v_counts := v_counts || coalesce(p_merged, cogmem._night_merge(t, p_as_of, v_since));
    -- Reinforce, promote and weaken need recalled memories: one pass over the tenant's statistics finds
    -- them, and each decision looks up only those (three passes tripled the cost).
    SELECT coalesce(array_agg(s.memory_id), '{}') INTO v_recalled
    FROM cogmem.memory_stats AS s
    WHERE s.tenant = p_tenant
      AND s.recall_count >= least(t.reinforce_min_recalls, t.promote_min_recalls, t.weaken_min_recalls);
    v_counts := v_counts || jsonb_build_object('reinforce', cogmem._night_reinforce(t, p_as_of, v_recalled));
    v_counts := v_counts || jsonb_build_object('promote', cogmem._night_promote(t, p_as_of, v_recalled));
    v_counts := v_counts || jsonb_build_object('promote_candidate', cogmem._night_confirm_candidates(t, p_as_of));
    v_counts := v_counts || jsonb_build_object('weaken', cogmem._night_weaken(t, p_as_of, v_recalled));
    v_counts := v_counts || cogmem._night_forget(t, p_as_of);

    -- protect
    SELECT count(*) INTO v_count FROM cogmem.memories AS m WHERE m.tenant = p_tenant AND m.ring = ANY (v_protected);
    v_counts := v_counts || jsonb_build_object('protect', v_count);
    -- overflow: protected rings are never cut, so the night reports when they outgrow their allocation.
    SELECT coalesce(sum(o.memories), 0),
           jsonb_agg(jsonb_build_object('layer', o.layer, 'tokens', o.tokens, 'allocation', o.allocation)
                     ORDER BY o.layer)
    INTO v_count, v_overflow
    FROM cogmem.never_cut_overflow AS o WHERE o.tenant = p_tenant;
    v_counts := v_counts || jsonb_build_object('overflow', v_count);

    v_counts := v_counts || jsonb_build_object('review', cogmem._night_review(t, p_as_of));

    INSERT INTO cogmem.consolidation_decisions (tenant, night, decision, memories)
    SELECT p_tenant, v_night, e.key, e.value::integer FROM jsonb_each_text(v_counts) AS e
    ON CONFLICT DO NOTHING;
    UPDATE cogmem.consolidation_nights AS n SET finished_at = clock_timestamp()
    WHERE n.tenant = p_tenant AND n.night = v_night;
    -- Fades are counted, not logged one by one: each follows from these counts and the thresholds.
    INSERT INTO cogmem.audit_log (tenant, level, event, detail, at)
    VALUES (p_tenant, 'lifecycle', 'night_consolidated',
            v_counts || jsonb_build_object('night', v_night, 'run_id', p_run_id)
            || CASE WHEN v_overflow IS NOT NULL THEN jsonb_build_object('never_cut_overflow', v_overflow) ELSE '{}' END,
            p_as_of);

    RETURN QUERY SELECT e.key, e.value::integer FROM jsonb_each_text(v_counts) AS e ORDER BY e.key;
END;
$$;
COMMENT ON FUNCTION cogmem._consolidate_tenant(text, timestamptz, bigint, jsonb) IS
'One tenant''s night of consolidation (see the head of sql/090-consolidation.sql); a no-op when that night '
'is already done; p_merged: the counts of its merge done in steps before.';

CREATE OR REPLACE FUNCTION cogmem._consolidate(p_as_of timestamptz, p_tenant text)
RETURNS TABLE (tenant text, decision text, memories integer)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_run_id bigint;
    v_tenant text;
    v_done   integer := 0;
BEGIN
    IF p_as_of IS NULL THEN
        RAISE EXCEPTION 'as_of must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass the moment to consolidate up to, e.g. now().';
    END IF;
    IF p_tenant IS NOT NULL THEN
        PERFORM cogmem._require_tenant(p_tenant);
    END IF;
    IF pg_is_in_recovery() THEN
        RAISE NOTICE 'cogmem.consolidate skipped: this server is a read replica';
        RETURN;
    END IF;
    -- A second run at the same time is safe: each tenant's night is locked and done once, so a second
    -- caller waits for the tenants the first holds, then finds their nights done.
    INSERT INTO cogmem.consolidation_runs (as_of, tenant, pid) VALUES (p_as_of, p_tenant, pg_backend_pid())
    RETURNING run_id INTO v_run_id;
    FOR v_tenant IN
        SELECT t.tenant FROM cogmem.tenants AS t
        WHERE p_tenant IS NULL OR t.tenant = p_tenant
        ORDER BY t.tenant
    LOOP
        RETURN QUERY SELECT v_tenant, d.decision, d.memories
                     FROM cogmem._consolidate_tenant(v_tenant, p_as_of, v_run_id) AS d;
        v_done := v_done + 1;
    END LOOP;
    UPDATE cogmem.consolidation_runs AS r
    SET finished_at = clock_timestamp(), tenants_done = v_done, status = 'finished'
    WHERE r.run_id = v_run_id;
END;
$$;
COMMENT ON FUNCTION cogmem._consolidate(timestamptz, text) IS
'Implementation of cogmem.consolidate() (PL/pgSQL cannot name an input and an output column alike).';

CREATE OR REPLACE FUNCTION cogmem.consolidate(as_of timestamptz DEFAULT now(), tenant text DEFAULT NULL)
RETURNS TABLE (tenant text, decision text, memories integer)
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._require_admin();
    SELECT * FROM cogmem._consolidate(as_of, tenant);
$$;
COMMENT ON FUNCTION cogmem.consolidate(timestamptz, text) IS
'Runs the nightly consolidation up to as_of for every tenant (or one) in this transaction and returns '
'what each decision touched. Idempotent per night. CALL cogmem.consolidate_nightly() commits per tenant.';

-- How many new memories a step of a scheduled night's merge takes (SET cogmem.night_step, or ALTER ROLE
-- ... SET for the role pg_cron runs as): fewer, shorter waits for the day's calls; more, fewer commits.
CREATE OR REPLACE FUNCTION cogmem._night_step()
RETURNS integer
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_setting text := coalesce(nullif(current_setting('cogmem.night_step', true), ''), '100');
    -- A CASE, so that the cast is tried only on digits.
    v_valid   boolean := CASE WHEN v_setting ~ '^\s*[0-9]{1,5}\s*$'
                              THEN v_setting::integer BETWEEN 1 AND cogmem._night_merge_bound() ELSE false END;
BEGIN
    IF NOT v_valid THEN
        RAISE EXCEPTION 'cogmem.night_step must be a number of memories from 1 to %, not "%"',
                        cogmem._night_merge_bound(), v_setting
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'SET cogmem.night_step = 100 (the default), or RESET cogmem.night_step.';
    END IF;
    RETURN v_setting::integer;
END;
$$;
COMMENT ON FUNCTION cogmem._night_step() IS
'The new memories one step of a scheduled night''s merge takes: cogmem.night_step, 100 by default.';

-- A procedure that commits cannot carry a SET clause (PostgreSQL forbids transaction control then),
-- so it pins nothing and qualifies every name instead; the work happens in the functions above.
-- Tenants are independent, so a night can run as several workers (one pg_cron job each), every
-- worker taking its share of tenants by hash. A worker slot runs once at a time: a run whose session
-- is alive makes a second one skip; one whose session is gone was interrupted and is marked so. (Not
-- advisory locks: any login could hold one and make every night skip.) Tenants are safe regardless:
-- each tenant's night is locked and recorded once.
DROP PROCEDURE IF EXISTS cogmem.consolidate_nightly(timestamptz, text);  -- before workers existed
CREATE OR REPLACE PROCEDURE cogmem.consolidate_nightly(
    as_of timestamptz DEFAULT now(), tenant text DEFAULT NULL, worker integer DEFAULT 1, workers integer DEFAULT 1
)
LANGUAGE plpgsql
AS $$
DECLARE
    v_run_id bigint;
    v_tenant text;
    v_done   integer := 0;
    v_step   integer;
    v_round  integer;
    v_merged jsonb;
    v_counts jsonb;
    v_below  bigint;
BEGIN
    v_step := cogmem._night_step();
    IF workers IS NULL OR worker IS NULL OR workers NOT BETWEEN 1 AND 64 OR worker NOT BETWEEN 1 AND workers THEN
        RAISE EXCEPTION 'worker % of % is not a valid share', worker, workers
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use workers between 1 and 64 and worker between 1 and workers.';
    END IF;
    IF pg_catalog.pg_is_in_recovery() THEN
        RAISE NOTICE 'cogmem.consolidate_nightly skipped: this server is a read replica';
        RETURN;
    END IF;
    UPDATE cogmem.consolidation_runs AS r
    SET status = 'interrupted', finished_at = pg_catalog.clock_timestamp()
    WHERE r.status OPERATOR(pg_catalog.=) 'running'
      AND NOT EXISTS (SELECT FROM pg_catalog.pg_stat_activity AS a
                      WHERE a.pid OPERATOR(pg_catalog.=) r.pid AND a.backend_start OPERATOR(pg_catalog.<=) r.started_at);
    IF EXISTS (SELECT FROM cogmem.consolidation_runs AS r
               WHERE r.status OPERATOR(pg_catalog.=) 'running' AND r.worker OPERATOR(pg_catalog.=) consolidate_nightly.worker) THEN
        COMMIT;
        RAISE NOTICE 'cogmem.consolidate_nightly skipped: another consolidation is running';
        RETURN;
    END IF;
    INSERT INTO cogmem.consolidation_runs (as_of, tenant, worker, workers, pid)
    VALUES (consolidate_nightly.as_of, consolidate_nightly.tenant, worker, workers, pg_catalog.pg_backend_pid())
    RETURNING run_id INTO v_run_id;
    COMMIT;
    FOR v_tenant IN
        SELECT t.tenant FROM cogmem.tenants AS t
        WHERE (consolidate_nightly.tenant IS NULL OR t.tenant OPERATOR(pg_catalog.=) consolidate_nightly.tenant)
          -- OPERATOR() has one precedence for all: the parentheses say it.
          AND ((pg_catalog.hashtext(t.tenant)::bigint OPERATOR(pg_catalog.%) workers) OPERATOR(pg_catalog.+) workers)
              OPERATOR(pg_catalog.%) workers OPERATOR(pg_catalog.=) (worker OPERATOR(pg_catalog.-) 1)
        ORDER BY t.tenant
    LOOP
        -- The merge first, in steps of cogmem.night_step new memories, each committed (_night_merge_step),
        -- up to the night's bound (cogmem._night_merge_bound); then the rest of the night in one transaction.
        v_merged := '{}';
        v_below := NULL;
        FOR v_round IN 1 .. ((cogmem._night_merge_bound() OPERATOR(pg_catalog.+) v_step) OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog./) v_step LOOP
            SELECT s.counts, s.lowest INTO v_counts, v_below
            FROM cogmem._night_merge_step(v_tenant, consolidate_nightly.as_of, v_below, v_step) AS s;
            v_merged := cogmem._add_counts(v_merged, v_counts);
            COMMIT;
            EXIT WHEN v_below IS NULL;
        END LOOP;
        IF v_below IS NOT NULL THEN
            v_merged := cogmem._add_counts(v_merged, cogmem._night_merge_left(v_tenant, consolidate_nightly.as_of, v_below));
        END IF;
        PERFORM cogmem._consolidate_tenant(v_tenant, consolidate_nightly.as_of, v_run_id, v_merged);
        v_done := v_done + 1;
        UPDATE cogmem.consolidation_runs AS r SET tenants_done = v_done WHERE r.run_id OPERATOR(pg_catalog.=) v_run_id;
        COMMIT;  -- one tenant per transaction: a crash loses at most the tenant in progress
    END LOOP;
    UPDATE cogmem.consolidation_runs AS r SET finished_at = pg_catalog.clock_timestamp(), status = 'finished'
    WHERE r.run_id OPERATOR(pg_catalog.=) v_run_id;
    COMMIT;
END;
$$;
COMMENT ON PROCEDURE cogmem.consolidate_nightly(timestamptz, text, integer, integer) IS  -- noqa: LT01
'The scheduled form of cogmem.consolidate(): skips on a replica or while this worker slot runs elsewhere '
'(a run whose session is gone is marked interrupted), '
'merges each tenant in steps of cogmem.night_step new memories, each committed, then commits after each '
'tenant, records the run in cogmem.consolidation_runs. worker/workers: this run''s share of the tenants, for '
'several in parallel.';

CREATE OR REPLACE VIEW cogmem.consolidation_report WITH (security_invoker = TRUE) AS
SELECT
    n.tenant,
    n.night,
    n.as_of,
    n.run_id,
    n.started_at,
    n.finished_at,
    d.decision,
    d.memories
FROM cogmem.consolidation_nights AS n
INNER JOIN cogmem.consolidation_decisions AS d ON n.tenant = d.tenant AND n.night = d.night;
COMMENT ON VIEW cogmem.consolidation_report IS 'Per tenant and night: what each consolidation decision touched.';
