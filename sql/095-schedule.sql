-- Scheduling the nightly consolidation with pg_cron. pg_cron lives in one database per cluster
-- (cron.database_name); in that database cogmem installs it when it can, and these functions manage
-- the job. From any other database, the HINT says how to schedule from the pg_cron database.

DO $install$
BEGIN
    IF current_database() = current_setting('cron.database_name', true)
       AND EXISTS (SELECT FROM pg_catalog.pg_available_extensions WHERE name = 'pg_cron')
       AND (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        CREATE EXTENSION IF NOT EXISTS pg_cron;
    END IF;
END;
$install$;

CREATE OR REPLACE FUNCTION cogmem.schedule_nightly(cron text DEFAULT '0 3 * * *')
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_cron_database text := coalesce(current_setting('cron.database_name', true), 'postgres');
BEGIN
    IF schedule_nightly.cron IS NULL OR btrim(schedule_nightly.cron) = '' THEN
        RAISE EXCEPTION 'cron schedule must not be NULL or empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use crontab syntax, e.g. ''0 3 * * *'' for 03:00 daily.';
    END IF;
    IF to_regnamespace('cron') IS NULL THEN
        RAISE EXCEPTION 'pg_cron is not installed in database "%"', current_database()
            USING ERRCODE = 'undefined_object',
                  HINT = format('pg_cron runs in database %I (cron.database_name). Either CREATE EXTENSION pg_cron '
                                'there and run cogmem in it, or run there: SELECT cron.schedule_in_database('
                                '''cogmem-nightly'', %L, ''CALL cogmem.consolidate_nightly()'', %L);',
                                v_cron_database, schedule_nightly.cron, current_database());
    END IF;
    -- cron.schedule() replaces a job of the same name: scheduling again only changes the time.
    RETURN cron.schedule('cogmem-nightly', schedule_nightly.cron, 'CALL cogmem.consolidate_nightly()');
END;
$$;
COMMENT ON FUNCTION cogmem.schedule_nightly(text) IS
'Schedules CALL cogmem.consolidate_nightly() with pg_cron (job "cogmem-nightly"); returns the job id.';

CREATE OR REPLACE FUNCTION cogmem.unschedule_nightly()
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF to_regnamespace('cron') IS NULL THEN  -- checked first: cron.job does not even parse without it
        RETURN false;
    END IF;
    IF NOT EXISTS (SELECT FROM cron.job AS j WHERE j.jobname = 'cogmem-nightly') THEN
        RETURN false;
    END IF;
    RETURN cron.unschedule('cogmem-nightly');
END;
$$;
COMMENT ON FUNCTION cogmem.unschedule_nightly() IS 'Removes the pg_cron job "cogmem-nightly"; false when there was none.';
