-- Scheduling the nightly consolidation with pg_cron. pg_cron lives in one database per cluster
-- (cron.database_name); in that database cogmem installs it when it can, and these functions manage
-- the job. From any other database, the HINT says how to schedule from the pg_cron database.

-- pg_cron's database: its setting cron.database_name where this role may read it (a superuser's setting; a
-- managed server's installing role often may not), else the database pg_cron's launcher is connected to
-- (pg_stat_activity shows every session's database and application name to every role; the launcher's
-- is a superuser's session, which no login can pose as), else NULL: pg_cron does not run here. The install
-- and the HINTs must not fail on it.
CREATE OR REPLACE FUNCTION cogmem._cron_database()
RETURNS text
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN current_setting('cron.database_name', true);
EXCEPTION WHEN insufficient_privilege THEN
    RETURN (
        SELECT a.datname FROM pg_catalog.pg_stat_activity AS a
        INNER JOIN pg_catalog.pg_roles AS r ON a.usesysid = r.oid
        WHERE a.application_name = 'pg_cron scheduler' AND r.rolsuper
        LIMIT 1
    );
END;
$$;
COMMENT ON FUNCTION cogmem._cron_database() IS
'pg_cron''s database (cron.database_name, or where its launcher runs when this role may not read the '
'setting), or NULL when pg_cron does not run on this server.';

-- pg_cron's schema belongs to whoever created the extension: on a managed server the platform, which
-- grants USAGE on it to the roles that may schedule (RDS's rds_superuser, say). Without it every call
-- into cron fails on the bare "permission denied for schema cron"; this says who must grant what.
CREATE OR REPLACE FUNCTION cogmem._cron_require_usage()
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT has_schema_privilege('cron', 'USAGE') THEN
        RAISE EXCEPTION 'role "%" may not use pg_cron in database "%"', current_user, current_database()
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('pg_cron''s schema is its creator''s (on a managed server, the platform''s): '
                                'its administrator must run GRANT USAGE ON SCHEMA cron TO %I; '
                                'or run `cogmem consolidate` from any machine''s cron instead.', current_user);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._cron_require_usage() IS
'Raises 42501, saying who must grant what, when pg_cron is in this database but this role may not use '
'its schema.';

DO $install$
BEGIN
    IF current_database() = cogmem._cron_database()
       AND EXISTS (SELECT FROM pg_catalog.pg_available_extensions WHERE name = 'pg_cron')
       AND (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        CREATE EXTENSION IF NOT EXISTS pg_cron;
    END IF;
END;
$install$;

CREATE OR REPLACE FUNCTION cogmem._cron_schedule(p_job text, p_cron text, p_command text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_cron_database text := cogmem._cron_database();
BEGIN
    IF p_cron IS NULL OR btrim(p_cron) = '' THEN
        RAISE EXCEPTION 'cron schedule must not be NULL or empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use crontab syntax, e.g. ''0 3 * * *'' for 03:00 daily.';
    END IF;
    IF to_regnamespace('cron') IS NULL THEN
        RAISE EXCEPTION 'pg_cron is not installed in database "%"', current_database()
            USING ERRCODE = 'undefined_object',
                  HINT = CASE WHEN v_cron_database IS NULL THEN
                      format('pg_cron does not run on this server: a superuser adds it to shared_preload_libraries '
                             'and sets cron.database_name. Until then, have any machine''s cron run: %s '
                             '(the night: `cogmem consolidate`).', p_command)
                  ELSE
                      format('pg_cron runs in database %I (cron.database_name). Either CREATE EXTENSION pg_cron '
                             'there and run cogmem in it, or run there: SELECT cron.schedule_in_database('
                             '%L, %L, %L, %L);',
                             v_cron_database, p_job, p_cron, p_command, current_database())
                  END;
    END IF;
    PERFORM cogmem._cron_require_usage();
    -- cron.schedule() replaces a job of the same name: scheduling again only changes the time.
    RETURN cron.schedule(p_job, p_cron, p_command);
END;
$$;
COMMENT ON FUNCTION cogmem._cron_schedule(text, text, text) IS
'Schedules (or reschedules) a named pg_cron job, or explains how when pg_cron is elsewhere.';

CREATE OR REPLACE FUNCTION cogmem._cron_unschedule(p_job text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF to_regnamespace('cron') IS NULL THEN  -- checked first: cron.job does not even parse without it
        RETURN false;
    END IF;
    PERFORM cogmem._cron_require_usage();
    IF NOT EXISTS (SELECT FROM cron.job AS j WHERE j.jobname = p_job) THEN
        RETURN false;
    END IF;
    RETURN cron.unschedule(p_job);
END;
$$;
COMMENT ON FUNCTION cogmem._cron_unschedule(text) IS 'Removes a named pg_cron job; false when there was none.';

DROP FUNCTION IF EXISTS cogmem.schedule_nightly(text);  -- before workers existed
CREATE OR REPLACE FUNCTION cogmem.schedule_nightly(cron text DEFAULT '0 3 * * *', workers integer DEFAULT 1)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_first bigint;
    v_job   bigint;
BEGIN
    IF workers IS NULL OR workers NOT BETWEEN 1 AND 64 THEN
        RAISE EXCEPTION 'workers must be between 1 and 64, got %', coalesce(workers::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'One worker per spare core is a good start.';
    END IF;
    FOR w IN workers + 1 .. 64 LOOP  -- fewer workers than before: the extra jobs go
        PERFORM cogmem._cron_unschedule('cogmem-nightly-' || w);
    END LOOP;
    FOR w IN 1 .. workers LOOP
        v_job := cogmem._cron_schedule(
            CASE WHEN w = 1 THEN 'cogmem-nightly' ELSE 'cogmem-nightly-' || w END, cron,
            CASE WHEN workers = 1 THEN 'CALL cogmem.consolidate_nightly()'
                 ELSE format('CALL cogmem.consolidate_nightly(worker => %s, workers => %s)', w, workers) END);
        v_first := coalesce(v_first, v_job);
    END LOOP;
    RETURN v_first;
END;
$$;
COMMENT ON FUNCTION cogmem.schedule_nightly(text, integer) IS
'Schedules CALL cogmem.consolidate_nightly() with pg_cron (job "cogmem-nightly", and "cogmem-nightly-N" '
'for more workers, each a share of the tenants); returns the first job id.';

CREATE OR REPLACE FUNCTION cogmem.unschedule_nightly()
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_any boolean := false;
BEGIN
    IF to_regnamespace('cron') IS NULL THEN  -- checked first: cron.job does not even parse without it
        RETURN false;
    END IF;
    FOR j IN 1 .. 64 LOOP
        v_any := cogmem._cron_unschedule(CASE WHEN j = 1 THEN 'cogmem-nightly' ELSE 'cogmem-nightly-' || j END)
                 OR v_any;
    END LOOP;
    RETURN v_any;
END;
$$;
COMMENT ON FUNCTION cogmem.unschedule_nightly() IS
'Removes the pg_cron jobs "cogmem-nightly" (and its workers); false when there were none.';

CREATE OR REPLACE FUNCTION cogmem.schedule_audit(seal_cron text DEFAULT '* * * * *')
RETURNS bigint
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._cron_schedule('cogmem-audit-partitions', '10 0 * * *',
                                 'SELECT cogmem.audit_partitions_ensure(), cogmem.audit_apply_retention()');
    SELECT cogmem._cron_schedule('cogmem-audit-seal', seal_cron, 'SELECT cogmem.seal_audit()');
$$;
COMMENT ON FUNCTION cogmem.schedule_audit(text) IS
'Schedules the audit sealer (job "cogmem-audit-seal", every minute by default) and the monthly '
'partition upkeep and retention (job "cogmem-audit-partitions", daily); returns the sealer''s job id.';

CREATE OR REPLACE FUNCTION cogmem.unschedule_audit()
RETURNS boolean
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._cron_unschedule('cogmem-audit-partitions');
    SELECT cogmem._cron_unschedule('cogmem-audit-seal');
$$;
COMMENT ON FUNCTION cogmem.unschedule_audit() IS 'Removes both audit jobs; false when the sealer was not scheduled.';

-- Rehearsals and feedback are applied from the cycle log (sql/058-rehearsal.sql); readers add what is
-- pending, so the sooner it is applied the less they add.
CREATE OR REPLACE FUNCTION cogmem.schedule_rehearsals(cron text DEFAULT '* * * * *')
RETURNS bigint
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._cron_schedule('cogmem-rehearsals', cron, 'SELECT cogmem.apply_rehearsals()');
$$;
COMMENT ON FUNCTION cogmem.schedule_rehearsals(text) IS
'Schedules cogmem.apply_rehearsals() with pg_cron (job "cogmem-rehearsals", every minute by default); '
'returns the job id.';

CREATE OR REPLACE FUNCTION cogmem.unschedule_rehearsals()
RETURNS boolean
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._cron_unschedule('cogmem-rehearsals');
$$;
COMMENT ON FUNCTION cogmem.unschedule_rehearsals() IS
'Removes the pg_cron job "cogmem-rehearsals"; false when there was none.';

-- The Gut after the night (sql/068-gut.sql): contributions collected every night, one release a period.
CREATE OR REPLACE FUNCTION cogmem.schedule_gut(cron text DEFAULT '30 4 * * *')
RETURNS bigint
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._cron_schedule('cogmem-gut', cron, 'CALL cogmem.gut_nightly()');
$$;
COMMENT ON FUNCTION cogmem.schedule_gut(text) IS
'Schedules CALL cogmem.gut_nightly() with pg_cron (job "cogmem-gut", 04:30 by default); returns the job id.';

CREATE OR REPLACE FUNCTION cogmem.unschedule_gut()
RETURNS boolean
LANGUAGE sql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._cron_unschedule('cogmem-gut');
$$;
COMMENT ON FUNCTION cogmem.unschedule_gut() IS 'Removes the pg_cron job "cogmem-gut"; false when there was none.';
