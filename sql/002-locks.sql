-- Locks: who waits for whom. Day calls share a tenant and a night has it alone; rows of memory_stats are
-- always locked in memory_id order, so that no two calls can deadlock.

-- Daytime calls (remember, recall, feedback, observe) share a tenant; a consolidation night has it to
-- itself. Each takes row locks on many memory_stats rows, and in no order a deadlock could be ruled
-- out by; this lock keeps the two apart, and the day's calls lock rows in memory_id order.
-- The lock is on the tenant's own row, not an advisory key: locking a row needs UPDATE on the table
-- and a view of the row, which only the API's owner has (an advisory lock any login could take, and
-- stall the tenant). The wait is bounded; a day call that times out says why.
CREATE OR REPLACE FUNCTION cogmem._lock_tenant(p_tenant text, p_exclusive boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
    v_wait text := coalesce(nullif(current_setting('cogmem.lock_wait', true), ''), '10s');
BEGIN
    -- The header's lock_timeout makes this setting local to the call (cogmem.lock_wait may change it).
    PERFORM set_config('lock_timeout', v_wait, true);
    IF p_exclusive THEN
        PERFORM FROM cogmem.tenants AS t WHERE t.tenant = p_tenant FOR UPDATE;
    ELSE
        PERFORM FROM cogmem.tenants AS t WHERE t.tenant = p_tenant FOR KEY SHARE;
    END IF;
EXCEPTION WHEN lock_not_available THEN
    RAISE EXCEPTION 'tenant "%" is busy: % held it for %', p_tenant,
        CASE WHEN p_exclusive THEN 'its calls' ELSE 'its night' END, v_wait
        USING ERRCODE = 'lock_not_available',
              HINT = CASE WHEN p_exclusive THEN 'The night skips it and takes it next time.'
                          ELSE 'Retry shortly: a night consolidates a tenant in seconds.' END;
END;
$$;
COMMENT ON FUNCTION cogmem._lock_tenant(text, boolean) IS
'Locks the tenant''s row for this transaction: shared for daytime calls, exclusive for a night; waits at '
'most 10 seconds (SET cogmem.lock_wait to change it).';

-- One writer at a time for what each write derives from the last (trust scores, identity versions).
CREATE OR REPLACE FUNCTION cogmem._serialize_tenant(p_tenant text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET lock_timeout = '10s'
AS $$
BEGIN
    PERFORM FROM cogmem.tenants AS t WHERE t.tenant = p_tenant FOR NO KEY UPDATE;
END;
$$;
COMMENT ON FUNCTION cogmem._serialize_tenant(text) IS
'Serialises one kind of per-tenant writer on the tenant''s row (it does not block the day''s calls).';

-- Every lock on rows of memory_stats goes through here (recall's rehearsal excepted, see _log_recall):
-- in memory_id order, so that two calls locking overlapping sets cannot deadlock.
CREATE OR REPLACE FUNCTION cogmem._lock_stats(p_tenant text, p_memory_ids bigint[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    PERFORM FROM cogmem.memory_stats AS s
    WHERE s.tenant = p_tenant AND s.memory_id = ANY (p_memory_ids)
    ORDER BY s.memory_id
    FOR UPDATE;
END;
$$;
COMMENT ON FUNCTION cogmem._lock_stats(text, bigint[]) IS
'Locks the statistics rows of the given memories in memory_id order (the one order every call uses).';
