-- Audit: an append-only, tamper-evident trail in five levels.
--   write       memory created, rehearsed as a duplicate, redacted, erased (a tombstone)
--   recall      every recall cycle: message hash, topics, budget, each injected item and why
--   outcome     feedback on a cycle
--   lifecycle   every consolidation decision (fades as counts per night)
--   governance  tenants and their settings, topics, BIOS rules, access grants, vault use, erasure
--               requests, schema upgrades
-- Rows never hold memory text or secrets, so erasure leaves the trail (and its hash chain) intact.
--
-- Writers only INSERT; hashing is off the hot path. cogmem.seal_audit() (scheduled every minute by
-- cogmem.schedule_audit()) appends each new row to its tenant's chain in cogmem.audit_chain:
--   row_hash(n) = sha256(row_hash(n-1) || canonical bytes of row n)
-- Which rows are final is decided by transaction ids, not by audit_id order: after a seal, every
-- committed row written by a transaction older than audit_seal_state.horizon is in the chain.

CREATE OR REPLACE FUNCTION cogmem._audit_bytes(r cogmem.audit_log)
RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Unit separators between fields; times as exact epoch numerics (independent of TimeZone); jsonb's
-- text form is canonical (keys sorted, no insignificant whitespace).
RETURN convert_to(
    concat_ws(
        E'\x1f', r.tenant, r.audit_id, extract(EPOCH FROM r.logged_at), extract(EPOCH FROM r.at), r.level,
        r.event, coalesce(r.memory_id::text, ''), coalesce(r.recall_id::text, ''), r.actor, r.detail::text,
        r.xid
    ),
    'UTF8'
);
COMMENT ON FUNCTION cogmem._audit_bytes(cogmem.audit_log) IS
'The canonical encoding of an audit row that the hash chain covers.';

-- Append-only, for every role including the owner (cogmem._refuse_change is in sql/050-bios.sql).
CREATE OR REPLACE TRIGGER audit_log_append_only
BEFORE UPDATE OR DELETE ON cogmem.audit_log
FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();
CREATE OR REPLACE TRIGGER audit_chain_append_only
BEFORE UPDATE OR DELETE ON cogmem.audit_chain
FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();
CREATE OR REPLACE TRIGGER audit_chain_no_truncate
BEFORE TRUNCATE ON cogmem.audit_chain
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change();

CREATE OR REPLACE FUNCTION cogmem.audit_partitions_ensure(months integer DEFAULT 3)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_from    date;
    v_name    text;
    v_created integer := 0;
    v_part    regclass;
BEGIN
    IF months IS NULL OR months < 1 OR months > 120 THEN
        RAISE EXCEPTION 'months must be between 1 and 120, got %', coalesce(months::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The default, 3, keeps this and the next two months ready.';
    END IF;
    FOR i IN 0 .. months - 1 LOOP
        v_from := (date_trunc('month', now()) + make_interval(months => i))::date;
        v_name := format('audit_log_%s', to_char(v_from, 'YYYY_MM'));
        CONTINUE WHEN to_regclass('cogmem.' || v_name) IS NOT NULL;
        -- A month that already has rows in the default partition stays there: moving them would delete.
        CONTINUE WHEN EXISTS (SELECT FROM cogmem.audit_log_default AS d
                              WHERE d.logged_at >= v_from AND d.logged_at < v_from + interval '1 month');
        EXECUTE format('CREATE TABLE cogmem.%I PARTITION OF cogmem.audit_log FOR VALUES FROM (%L) TO (%L)',
                       v_name, v_from, (v_from + interval '1 month')::date);
        v_created := v_created + 1;
    END LOOP;
    -- Row triggers are inherited by partitions; TRUNCATE triggers are not.
    FOR v_part IN SELECT i.inhrelid::regclass FROM pg_inherits AS i WHERE i.inhparent = 'cogmem.audit_log'::regclass LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change()', v_part);
    END LOOP;
    RETURN v_created;
END;
$$;
COMMENT ON FUNCTION cogmem.audit_partitions_ensure(integer) IS
'Creates the monthly partitions of cogmem.audit_log for this month and the next months-1; returns how '
'many it created. Run nightly by the schedule (cogmem.schedule_audit()).';

SELECT cogmem.audit_partitions_ensure();

-- max_rows was integer before 0027: bigint takes what drivers send for a large number (sql/070-recall.sql).
DROP FUNCTION IF EXISTS cogmem.seal_audit(integer);
CREATE OR REPLACE FUNCTION cogmem.seal_audit(max_rows bigint DEFAULT 1000000)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_from    xid8;
    v_to      xid8 := pg_snapshot_xmin(pg_current_snapshot());
    r         record;
    v_tenant  text;
    v_seq     bigint;
    v_hash    bytea;
    v_count   bigint := 0;
    v_tenants text[] := '{}';
    v_seqs    bigint[] := '{}';
    v_ids     bigint[] := '{}';
    v_times   timestamptz[] := '{}';
    v_hashes  bytea[] := '{}';
BEGIN
    PERFORM cogmem._require_admin();
    IF max_rows IS NULL OR max_rows < 1 OR max_rows > 1000000000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 1000000000, got %', coalesce(max_rows::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The default, 1000000, seals a busy minute at once.';
    END IF;
    IF pg_is_in_recovery() THEN
        RETURN 0;
    END IF;
    SELECT s.horizon INTO v_from FROM cogmem.audit_seal_state AS s FOR UPDATE;  -- one sealer at a time
    IF v_from > pg_snapshot_xmax(pg_current_snapshot()) THEN
        -- Restored from another cluster, whose transaction ids ran ahead of this one's: look at every row
        -- once (the anti-join skips what is sealed) and take this cluster's horizon from here on.
        v_from := '1';
    END IF;
    FOR r IN
        SELECT l.tenant, l.audit_id, l.logged_at,
               cogmem._audit_bytes(l) AS bytes
        FROM cogmem.audit_log AS l
        WHERE l.xid >= v_from
          AND NOT EXISTS (SELECT FROM cogmem.audit_chain AS c WHERE c.tenant = l.tenant AND c.audit_id = l.audit_id)
        ORDER BY l.tenant, l.audit_id
        LIMIT max_rows + 1
    LOOP
        v_count := v_count + 1;
        EXIT WHEN v_count > max_rows;
        IF v_tenant IS DISTINCT FROM r.tenant THEN
            v_tenant := r.tenant;
            SELECT c.seq, c.row_hash INTO v_seq, v_hash
            FROM cogmem.audit_chain AS c WHERE c.tenant = v_tenant ORDER BY c.seq DESC LIMIT 1;
            v_seq := coalesce(v_seq, 0);
            v_hash := coalesce(v_hash, ''::bytea);
        END IF;
        v_seq := v_seq + 1;
        v_hash := sha256(v_hash || r.bytes);
        v_tenants := v_tenants || r.tenant;
        v_seqs := v_seqs || v_seq;
        v_ids := v_ids || r.audit_id;
        v_times := v_times || r.logged_at;
        v_hashes := v_hashes || v_hash;
    END LOOP;
    INSERT INTO cogmem.audit_chain (tenant, seq, audit_id, logged_at, row_hash)
    SELECT * FROM unnest(v_tenants, v_seqs, v_ids, v_times, v_hashes);
    IF v_count <= max_rows THEN  -- everything visible was sealed: the horizon may move
        UPDATE cogmem.audit_seal_state SET horizon = greatest(horizon, v_to), sealed_at = now();
    END IF;
    RETURN least(v_count, max_rows);
END;
$$;
COMMENT ON FUNCTION cogmem.seal_audit(bigint) IS
'Appends new audit rows (at most max_rows) to their tenants'' hash chains; returns how many. Safe to run '
'concurrently with writers and with itself (sealers queue).';

CREATE OR REPLACE FUNCTION cogmem.verify_audit(tenant text DEFAULT NULL)
RETURNS TABLE (tenant text, ok boolean, rows_checked bigint, first_bad_id bigint)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._require_tenant($1) WHERE $1 IS NOT NULL;
    WITH archived AS (
        SELECT a.range_from, a.range_to FROM cogmem.audit_archives AS a WHERE a.dropped_at IS NOT NULL
    ), chain AS (
        SELECT c.tenant, c.seq, c.audit_id, c.logged_at, c.row_hash,
               lag(c.row_hash, 1, ''::bytea) OVER w AS previous_hash,
               lag(c.seq, 1, 0::bigint) OVER w AS previous_seq
        FROM cogmem.audit_chain AS c
        WHERE $1 IS NULL OR c.tenant = $1
        WINDOW w AS (PARTITION BY c.tenant ORDER BY c.seq)
    ), checked AS (
        -- A sealed row is good when it is there, unchanged, in its place, with no link missing before it.
        -- A row of a month that was exported and dropped is taken as archived: its successor is still
        -- checked against its stored hash, so the chain after it verifies.
        SELECT ch.tenant, ch.seq, ch.audit_id,
               ch.seq = ch.previous_seq + 1
               AND (l.audit_id IS NULL
                    AND EXISTS (SELECT FROM archived AS a WHERE ch.logged_at >= a.range_from AND ch.logged_at < a.range_to)
                    OR
                    l.audit_id IS NOT NULL
                    AND ch.row_hash = sha256(ch.previous_hash || cogmem._audit_bytes(l))) AS good
        FROM chain AS ch
        LEFT JOIN cogmem.audit_log AS l
          ON l.tenant = ch.tenant AND l.audit_id = ch.audit_id AND l.logged_at = ch.logged_at
    ), strays AS (
        -- Rows old enough to be sealed but missing from the chain were slipped in around the sealer.
        SELECT l.tenant, min(l.audit_id) AS audit_id
        FROM cogmem.audit_log AS l
        WHERE ($1 IS NULL OR l.tenant = $1)
          AND l.xid < (SELECT s.horizon FROM cogmem.audit_seal_state AS s)
          -- (unless restored from a cluster whose transaction ids ran ahead: the next seal sorts that out)
          AND (SELECT s.horizon FROM cogmem.audit_seal_state AS s) <= pg_snapshot_xmax(pg_current_snapshot())
          AND NOT EXISTS (SELECT FROM cogmem.audit_chain AS c WHERE c.tenant = l.tenant AND c.audit_id = l.audit_id)
        GROUP BY l.tenant
    ), per_tenant AS (
        SELECT k.tenant, count(*) AS rows_checked,
               (array_agg(k.audit_id ORDER BY k.seq) FILTER (WHERE NOT k.good))[1] AS first_bad_id
        FROM checked AS k
        GROUP BY k.tenant
    )
    SELECT coalesce(p.tenant, s.tenant),
           p.first_bad_id IS NULL AND s.audit_id IS NULL,
           coalesce(p.rows_checked, 0),
           coalesce(p.first_bad_id, s.audit_id)
    FROM per_tenant AS p
    FULL JOIN strays AS s ON s.tenant = p.tenant
    ORDER BY 1;
$$;
COMMENT ON FUNCTION cogmem.verify_audit(text) IS
'Recomputes every tenant''s (or one tenant''s) audit hash chain: ok is false when a sealed row was '
'altered, removed or reordered, or a row was slipped in unsealed; first_bad_id is the first such row.';

CREATE OR REPLACE FUNCTION cogmem.audit_mark_exported(partition_name text, exported_to text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_bounds  text;
    v_from    timestamptz;
    v_to      timestamptz;
    v_rows    bigint;
    v_pending bigint;
BEGIN
    PERFORM cogmem._require_admin();
    SELECT pg_get_expr(c.relpartbound, c.oid) INTO v_bounds
    FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'cogmem.audit_log'::regclass AND c.relname = audit_mark_exported.partition_name;
    IF v_bounds IS NULL OR v_bounds = 'DEFAULT' THEN
        RAISE EXCEPTION 'no monthly audit partition named "%"', audit_mark_exported.partition_name
            USING ERRCODE = 'undefined_object',
                  HINT = 'SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = ''cogmem.audit_log''::regclass;';
    END IF;
    IF audit_mark_exported.exported_to IS NULL OR btrim(audit_mark_exported.exported_to) = '' THEN
        RAISE EXCEPTION 'exported_to must say where the export went'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'e.g. ''s3://audit-archive/2026-01/'' or a file path.';
    END IF;
    v_from := substring(v_bounds FROM 'FROM \(''([^'']+)''\)')::timestamptz;
    v_to := substring(v_bounds FROM 'TO \(''([^'']+)''\)')::timestamptz;
    IF v_to > now() THEN
        RAISE EXCEPTION 'audit partition "%" is still being written (it ends %)', audit_mark_exported.partition_name, v_to
            USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Export a month after it has ended.';
    END IF;
    -- Through the parent (pruned to the month): partitions carry no grants of their own.
    SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT FROM cogmem.audit_chain AS c
                                                        WHERE c.tenant = l.tenant AND c.audit_id = l.audit_id))
    INTO v_rows, v_pending
    FROM cogmem.audit_log AS l WHERE l.logged_at >= v_from AND l.logged_at < v_to;
    IF v_pending > 0 THEN
        RAISE EXCEPTION 'audit partition "%" has % unsealed rows', audit_mark_exported.partition_name, v_pending
            USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Run SELECT cogmem.seal_audit(); and export again.';
    END IF;
    INSERT INTO cogmem.audit_archives AS a (partition_name, range_from, range_to, rows, exported_to)
    VALUES (audit_mark_exported.partition_name, v_from, v_to, v_rows, audit_mark_exported.exported_to)
    ON CONFLICT (partition_name) DO UPDATE SET exported_to = excluded.exported_to, exported_at = now(), rows = excluded.rows;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES ('*', 'governance', 'audit_exported',
            jsonb_build_object('partition', audit_mark_exported.partition_name, 'rows', v_rows,
                               'exported_to', audit_mark_exported.exported_to));
    RETURN v_rows;
END;
$$;
COMMENT ON FUNCTION cogmem.audit_mark_exported(text, text) IS
'Records that a finished, fully sealed month of the audit trail was exported (cogmem audit export does '
'both); returns its rows. Only exported months are ever dropped.';

CREATE OR REPLACE FUNCTION cogmem.audit_apply_retention()
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_keep    interval := (SELECT s.retention FROM cogmem.audit_settings AS s);
    v_archive record;
    v_dropped integer := 0;
BEGIN
    IF v_keep IS NULL THEN
        RETURN 0;  -- keep everything online
    END IF;
    FOR v_archive IN
        SELECT a.* FROM cogmem.audit_archives AS a
        WHERE a.dropped_at IS NULL AND a.range_to < now() - v_keep
          AND to_regclass(format('cogmem.%I', a.partition_name)) IS NOT NULL
        ORDER BY a.range_from
    LOOP
        EXECUTE format('ALTER TABLE cogmem.audit_log DETACH PARTITION cogmem.%I', v_archive.partition_name);
        EXECUTE format('DROP TABLE cogmem.%I', v_archive.partition_name);
        UPDATE cogmem.audit_archives AS a SET dropped_at = now() WHERE a.partition_name = v_archive.partition_name;
        INSERT INTO cogmem.audit_log (tenant, level, event, detail)
        VALUES ('*', 'governance', 'audit_partition_dropped',
                jsonb_build_object('partition', v_archive.partition_name, 'rows', v_archive.rows,
                                   'exported_to', v_archive.exported_to, 'retention', v_keep::text));
        v_dropped := v_dropped + 1;
    END LOOP;
    RETURN v_dropped;
END;
$$;
COMMENT ON FUNCTION cogmem.audit_apply_retention() IS
'Drops the audit months older than audit_settings.retention that were sealed and exported; returns how '
'many. Run daily by cogmem.schedule_audit().';

-- Governance: changes to tenants, their settings and topics, BIOS rules and access grants are logged
-- by triggers, so they are audited however they are made (API or plain SQL).
CREATE OR REPLACE FUNCTION cogmem._audit_governance()
RETURNS trigger
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_new    jsonb := CASE WHEN tg_op <> 'DELETE' THEN to_jsonb(NEW) END;
    v_old    jsonb := CASE WHEN tg_op <> 'INSERT' THEN to_jsonb(OLD) END;
    v_row    jsonb := coalesce(v_new, v_old);
    v_detail jsonb;
BEGIN
    IF tg_op = 'UPDATE' THEN
        SELECT jsonb_build_object('changed', coalesce(jsonb_object_agg(n.key, n.value), '{}'),
                                  'previous', coalesce(jsonb_object_agg(n.key, v_old -> n.key), '{}'))
        INTO v_detail
        FROM jsonb_each(v_new) AS n
        WHERE n.value IS DISTINCT FROM v_old -> n.key;
        IF v_detail -> 'changed' = '{}' THEN
            RETURN NULL;  -- nothing changed, nothing to say
        END IF;
    ELSE
        v_detail := jsonb_build_object('row', v_row);
    END IF;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (coalesce(v_row ->> 'tenant', '*'), 'governance',
            tg_table_name || CASE tg_op WHEN 'INSERT' THEN '_added' WHEN 'UPDATE' THEN '_changed' ELSE '_removed' END,
            v_detail || jsonb_build_object('table', tg_table_name));
    RETURN NULL;
END;
$$;
COMMENT ON FUNCTION cogmem._audit_governance() IS
'Trigger function: logs a governance row (tenant ''*'' for global rows) for each changed settings row.';

CREATE OR REPLACE TRIGGER tenants_audit
AFTER INSERT OR UPDATE OR DELETE ON cogmem.tenants
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();
CREATE OR REPLACE TRIGGER tenant_layers_audit
AFTER UPDATE OR DELETE ON cogmem.tenant_layers
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();
CREATE OR REPLACE TRIGGER tenant_topics_audit
AFTER INSERT OR UPDATE OR DELETE ON cogmem.tenant_topics
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();
CREATE OR REPLACE TRIGGER bios_rules_audit
AFTER INSERT ON cogmem.bios_rules
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();
CREATE OR REPLACE TRIGGER bios_rule_events_audit
AFTER INSERT ON cogmem.bios_rule_events
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();
CREATE OR REPLACE TRIGGER bios_preset_loads_audit
AFTER INSERT ON cogmem.bios_preset_loads
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();
CREATE OR REPLACE TRIGGER bios_subscriptions_audit
AFTER INSERT OR DELETE ON cogmem.bios_subscriptions
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();
CREATE OR REPLACE TRIGGER tenant_access_audit
AFTER INSERT OR UPDATE OR DELETE ON cogmem.tenant_access
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

-- GRANT and REVOKE on cogmem objects: an event trigger, which only a superuser may create.
CREATE OR REPLACE FUNCTION cogmem._audit_grants()
RETURNS event_trigger
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    -- The installer's own grants are part of the schema upgrade, which it logs as one row.
    IF to_regclass('cogmem.audit_log') IS NULL OR current_setting('cogmem.installing', true) = 'on' THEN
        RETURN;
    END IF;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    SELECT '*', 'governance', lower(c.command_tag),
           jsonb_build_object('object_type', c.object_type, 'statement', left(current_query(), 2000))
    FROM pg_event_trigger_ddl_commands() AS c
    WHERE c.command_tag IN ('GRANT', 'REVOKE')
      AND current_query() ~* '\mcogmem\.'
    LIMIT 1;
END;
$$;
COMMENT ON FUNCTION cogmem._audit_grants() IS
'Event trigger function: logs GRANT and REVOKE statements that name cogmem objects.';

DO $grants$
BEGIN
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user)
       AND NOT EXISTS (SELECT FROM pg_catalog.pg_event_trigger WHERE evtname = 'cogmem_audit_grants') THEN
        CREATE EVENT TRIGGER cogmem_audit_grants ON ddl_command_end
        WHEN TAG IN ('GRANT', 'REVOKE')
        EXECUTE FUNCTION cogmem._audit_grants();
    END IF;
END;
$grants$;
