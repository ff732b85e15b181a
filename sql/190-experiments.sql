-- Calibration by experiment: an administrator names a setting and two or more values for it (arms); the
-- enrolled tenants (or their sessions) are assigned an arm at random and stably and see its value
-- everywhere (sql/021-experiment-arms.sql); experiment_report() compares the arms on what is already
-- logged, and says when one is better with a test that may be looked at as often as one likes.
--
-- The test. Each unit (tenant or session) has a ratio (successes over recalls with an outcome, or items
-- used over items injected); an arm's metric is the mean of its units' ratios, its variance estimated over
-- the units, not over the recalls: a tenant's recalls are alike, and counting them as independent (or
-- pooling them, so that the busiest tenant speaks for its arm) would find differences that are not there. Two arms are compared by a mixture sequential probability ratio test (mSPRT; Johari, Pekelis and
-- Walsh, "Always valid inference", 2017): with a normal mixture of width tau over the difference, the
-- likelihood ratio is a martingale under "no difference", so by Ville's inequality the chance that it
-- ever reaches 1/alpha, at any of any number of looks, is at most alpha. The report looks once a day
-- since the start (decided_at has that resolution; any schedule would be valid) and keeps the smallest
-- p-value of all looks, so a verdict, once reached, stays. Every pair of arms is tested at alpha divided
-- by the number of pairs (Bonferroni): an arm is better when it beats every other, so when the arms are
-- equal one is called better at most alpha of the time, however often the report is read.

-- Created, stopped and adopted experiments, and each tenant's enrolment with its arm, are governance.
CREATE OR REPLACE TRIGGER experiments_audit
AFTER INSERT OR UPDATE OR DELETE ON cogmem.experiments
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();
CREATE OR REPLACE TRIGGER experiment_tenants_audit
AFTER INSERT OR DELETE ON cogmem.experiment_tenants
FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

-- The log of the mixture likelihood ratio for an estimated difference theta of variance v, the mixing
-- distribution over the true difference being normal with mean 0 and standard deviation tau.
CREATE OR REPLACE FUNCTION cogmem._msprt_log_lambda(
    p_theta double precision, p_variance double precision, p_tau double precision
)
RETURNS double precision
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN p_variance > 0 THEN
        0.5 * ln(p_variance / (p_variance + p_tau ^ 2))
        + p_theta ^ 2 * p_tau ^ 2 / (2 * p_variance * (p_variance + p_tau ^ 2))
    END;
$$;
COMMENT ON FUNCTION cogmem._msprt_log_lambda(double precision, double precision, double precision) IS
'log of the normal-mixture SPRT statistic for an estimate theta of variance v (mixture width tau).';

-- The half-width of the confidence interval that holds at every look (the same test, inverted).
CREATE OR REPLACE FUNCTION cogmem._msprt_halfwidth(
    p_variance double precision, p_alpha double precision, p_tau double precision
)
RETURNS double precision
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN p_variance > 0 THEN
        sqrt(p_variance * (p_variance + p_tau ^ 2) / p_tau ^ 2
             * (ln((p_variance + p_tau ^ 2) / p_variance) - 2 * ln(p_alpha)))
    END;
$$;
COMMENT ON FUNCTION cogmem._msprt_halfwidth(double precision, double precision, double precision) IS
'Half-width of the always-valid (1 - alpha) confidence interval of an estimate of variance v (mixture width tau).';

-- One row per observation: its arm, its unit, when it was known, and its part of the ratio (s over m).
-- Only recalls made after the start, known by p_end. success_rate and items_used: a recall with feedback
-- (for items_used, feedback that named the memories used: one naming none credits them all, which says
-- nothing of what was used). corrections: a session counts when its first recall is made (m), a
-- correction when the next turn was judged one (s; sql/059-followup.sql).
CREATE OR REPLACE FUNCTION cogmem._experiment_observations(p_name text, p_end timestamptz)
RETURNS TABLE (arm integer, unit text, at timestamptz, s double precision, m double precision)
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT coalesce(a.arm, cogmem._experiment_arm(e.salt, r.conversation, jsonb_array_length(e.arms))),
           CASE e.unit WHEN 'tenant' THEN r.tenant ELSE jsonb_build_array(r.tenant, r.conversation)::text END,
           r.feedback_at,
           CASE e.metric WHEN 'success_rate' THEN r.outcome ELSE cardinality(r.feedback_used) END,
           CASE e.metric WHEN 'success_rate' THEN 1 ELSE cardinality(array_remove(r.item_memory_ids, NULL)) END
    FROM cogmem.experiments AS e
    JOIN cogmem.experiment_tenants AS a ON a.experiment = e.name
    JOIN cogmem.recalls AS r ON r.tenant = a.tenant
    WHERE e.name = p_name AND e.metric <> 'corrections' AND r.created_at >= e.created_at AND r.feedback_at <= p_end
      AND r.outcome IS NOT NULL AND (e.unit = 'tenant' OR r.conversation IS NOT NULL)
      AND (e.metric = 'success_rate'
           OR (r.feedback_used IS NOT NULL AND cardinality(array_remove(r.item_memory_ids, NULL)) > 0))
    UNION ALL
    SELECT coalesce(a.arm, cogmem._experiment_arm(e.salt, r.conversation, jsonb_array_length(e.arms))),
           CASE e.unit WHEN 'tenant' THEN r.tenant ELSE jsonb_build_array(r.tenant, r.conversation)::text END,
           c.at, c.s, c.m
    FROM cogmem.experiments AS e
    JOIN cogmem.experiment_tenants AS a ON a.experiment = e.name
    CROSS JOIN LATERAL (
        SELECT x.*, row_number() OVER (PARTITION BY x.conversation ORDER BY x.created_at, x.recall_id) AS nth
        FROM cogmem.recalls AS x
        WHERE x.tenant = a.tenant AND x.conversation IS NOT NULL AND x.created_at >= e.created_at
    ) AS r
    CROSS JOIN LATERAL (VALUES (r.created_at, 0, 1, r.nth = 1),
                               (r.judged_at, 1, 0, r.judged_verdict = 'corrected')) AS c (at, s, m, counts)
    WHERE e.name = p_name AND e.metric = 'corrections' AND c.counts AND c.at <= p_end;
$$;
COMMENT ON FUNCTION cogmem._experiment_observations(text, timestamptz) IS
'The recalls an experiment counts until p_end: arm, unit, when the outcome came, and s over m of the metric.';

-- The fewest units an arm needs before its variance, and so any verdict, is estimated: the spread of fewer
-- units' ratios says too little of how far arms differ by chance (the widening below divides by n - 3).
CREATE OR REPLACE FUNCTION cogmem._experiment_min_units()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 4;
$$;
COMMENT ON FUNCTION cogmem._experiment_min_units() IS
'The fewest units (tenants or sessions) an arm of an experiment needs before the report may reach a verdict.';

-- Each arm at each daily look: units seen, the estimate and its variance over the units. The unit of
-- assignment is the unit of analysis: each unit's ratio (its successes over its observations so far) counts
-- once, so one tenant's volume cannot decide (a tenant with 1,500 recalls weighs what a tenant with 5
-- does). The estimate is the mean of the units' ratios, its variance their sample variance over n, widened
-- by (n-1)/(n-3) because a few units estimate it poorly, and never below the binomial variance of all the
-- observations (a floor the mean of ratios cannot go under; for corrections per session, a count, the
-- Poisson variance); with fewer units than _experiment_min_units() it is unknown.
CREATE OR REPLACE FUNCTION cogmem._experiment_looks(p_name text, p_end timestamptz)
RETURNS TABLE (
    look integer, at timestamptz, arm integer, units bigint, observations double precision,
    estimate double precision, variance double precision
)
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    WITH e AS (
        SELECT x.created_at AS start, jsonb_array_length(x.arms) AS k, x.metric = 'corrections' AS counts,
               ceil(extract(EPOCH FROM p_end - x.created_at) / 86400)::integer AS looks
        FROM cogmem.experiments AS x WHERE x.name = p_name
    ), daily AS (
        SELECT o.arm, o.unit, greatest(1, ceil(extract(EPOCH FROM o.at - e.start) / 86400))::integer AS look,
               sum(o.s) AS ds, sum(o.m) AS dm
        FROM e, cogmem._experiment_observations(p_name, p_end) AS o GROUP BY 1, 2, 3
    ), first_seen AS (
        SELECT d.arm, d.unit, min(d.look) AS look FROM daily AS d GROUP BY d.arm, d.unit
    ), cumulative AS (  -- each unit at each look from its first: what it has added up to
        SELECT g.look, f.arm, f.unit,
               sum(coalesce(d.ds, 0)) OVER w AS s, sum(coalesce(d.dm, 0)) OVER w AS m
        FROM e CROSS JOIN first_seen AS f
        CROSS JOIN LATERAL generate_series(f.look, e.looks) AS g (look)
        LEFT JOIN daily AS d ON d.arm = f.arm AND d.unit = f.unit AND d.look = g.look
        WINDOW w AS (PARTITION BY f.arm, f.unit ORDER BY g.look)
    ), per_arm AS (
        SELECT c.look, c.arm, count(*) FILTER (WHERE c.m > 0) AS n, sum(c.s) AS s, sum(c.m) AS m,
               avg(c.s / c.m) FILTER (WHERE c.m > 0) AS mean, var_samp(c.s / c.m) FILTER (WHERE c.m > 0) AS spread
        FROM cumulative AS c GROUP BY c.look, c.arm
    )
    SELECT g.look, least(e.start + g.look * interval '1 day', p_end), a.arm, coalesce(t.n, 0)::bigint,
           coalesce(t.m, 0), t.mean,
           CASE WHEN t.n >= cogmem._experiment_min_units() THEN greatest(
               t.spread / t.n * (t.n - 1) / (t.n - 3),
               CASE WHEN e.counts THEN (t.s + 0.5) / t.m ^ 2
                    ELSE (t.s + 0.5) / (t.m + 1) * (1 - (t.s + 0.5) / (t.m + 1)) / t.m END)
           END
    FROM e CROSS JOIN generate_series(1, e.looks) AS g (look) CROSS JOIN generate_series(1, e.k) AS a (arm)
    LEFT JOIN per_arm AS t ON t.look = g.look AND t.arm = a.arm;
$$;
COMMENT ON FUNCTION cogmem._experiment_looks(text, timestamptz) IS
'Each arm of an experiment at each daily look until p_end: units, observations, the mean of the units'' '
'ratios and its variance over the units.';

-- One screen and a half: the test of every pair at every look, then one row per arm at the last look.
CREATE OR REPLACE FUNCTION cogmem.experiment_report(name text, as_of timestamptz DEFAULT now())
RETURNS TABLE (
    arm bigint, value jsonb, units bigint, observations double precision, estimate double precision,
    ci_low double precision, ci_high double precision, p_better double precision, verdict text,
    decided_at timestamptz
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: the internal helpers it calls are not the administrators' to execute.
AS $$
#variable_conflict use_column
DECLARE
    c_alpha constant double precision := 0.05;  -- the false "better" rate promised
    c_tau   constant double precision := 0.05;  -- the width of the mixture: differences of a few points of a rate
    v_exp   record;
    v_pairs integer;
    v_sign  integer;  -- 1: more is better; -1: fewer (corrections)
BEGIN
    PERFORM cogmem._require_admin();
    SELECT e.* INTO v_exp FROM cogmem.experiments AS e WHERE e.name = experiment_report.name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown experiment "%"', experiment_report.name
            USING ERRCODE = 'undefined_object', HINT = 'SELECT * FROM cogmem.experiment_status(); lists them.';
    END IF;
    v_pairs := jsonb_array_length(v_exp.arms) * (jsonb_array_length(v_exp.arms) - 1) / 2;
    v_sign := CASE WHEN v_exp.metric = 'corrections' THEN -1 ELSE 1 END;
    RETURN QUERY
    WITH looks AS (
        SELECT * FROM cogmem._experiment_looks(v_exp.name, least(experiment_report.as_of, v_exp.stopped_at))
    ), pairs AS (  -- j ahead of i at a look, and by how much evidence
        SELECT j.arm AS j, i.arm AS i, j.at,
               cogmem._msprt_log_lambda(j.estimate - i.estimate, j.variance + i.variance, c_tau) AS llr
        FROM looks AS j JOIN looks AS i ON i.look = j.look AND i.arm <> j.arm AND v_sign * (j.estimate - i.estimate) > 0
    ), beaten AS (
        SELECT p.j, p.i, max(p.llr) AS llr, min(p.at) FILTER (WHERE p.llr >= ln(v_pairs / c_alpha)) AS crossed_at
        FROM pairs AS p GROUP BY p.j, p.i
    ), arms AS (
        SELECT a.arm,
               CASE WHEN count(b.i) < jsonb_array_length(v_exp.arms) - 1 THEN 1  -- never ahead of some arm
                    -- No evidence (a variance not known yet) is a ratio of 1: least() alone would skip the NULL.
                    ELSE least(1, v_pairs * max(exp(-least(coalesce(b.llr, 0), 700)))) END AS p_better,
               CASE WHEN count(b.crossed_at) = jsonb_array_length(v_exp.arms) - 1 THEN max(b.crossed_at) END AS decided_at
        FROM generate_series(1, jsonb_array_length(v_exp.arms)) AS a (arm)
        LEFT JOIN beaten AS b ON b.j = a.arm
        GROUP BY a.arm
    ), winner AS (
        SELECT w.arm, w.decided_at FROM arms AS w WHERE w.decided_at IS NOT NULL
        ORDER BY w.decided_at, w.p_better, w.arm LIMIT 1
    ), too_few AS (  -- the arms whose variance is not known yet at the last look: no verdict can be reached
        SELECT string_agg(format('arm %s has %s', a.arm, coalesce(l.units, 0)), ', ' ORDER BY a.arm) AS arms
        FROM generate_series(1, jsonb_array_length(v_exp.arms)) AS a (arm)
        LEFT JOIN looks AS l ON l.arm = a.arm AND l.look = (SELECT max(x.look) FROM looks AS x)
        WHERE coalesce(l.units, 0) < cogmem._experiment_min_units()
    )
    SELECT a.arm::bigint, v_exp.arms -> (a.arm - 1), coalesce(l.units, 0), coalesce(l.observations, 0), l.estimate,
           l.estimate - cogmem._msprt_halfwidth(l.variance, c_alpha, c_tau),
           l.estimate + cogmem._msprt_halfwidth(l.variance, c_alpha, c_tau),
           a.p_better,
           coalesce((SELECT format('arm %s (%s = %s) is better', w.arm, v_exp.parameter, v_exp.arms -> (w.arm - 1))
                     FROM winner AS w),
                    (SELECT format('too few %ss yet: %s; a verdict needs %s an arm, as the spread between fewer '
                                   'tells too little of how far arms differ by chance',
                                   v_exp.unit, f.arms, cogmem._experiment_min_units())
                     FROM too_few AS f WHERE f.arms IS NOT NULL),
                    'no difference yet'),
           (SELECT w.decided_at FROM winner AS w)
    FROM arms AS a
    LEFT JOIN looks AS l ON l.arm = a.arm AND l.look = (SELECT max(x.look) FROM looks AS x)
    ORDER BY a.arm;
END;
$$;
COMMENT ON FUNCTION cogmem.experiment_report(text, timestamptz) IS
'Administrators: each arm of an experiment as of a time: units and observations so far, the metric''s '
'estimate with a 95% confidence interval valid at every look, the always-valid p-value that it beats '
'every other arm, and the verdict (which arm is better, too few units an arm yet, or no difference yet) with '
'when it was reached.';

-- The arms as the column stores them (3 and 3.0 are one arm), each a value the column accepts: of its
-- type, not NULL, and within its CHECK constraints (evaluated here over a row holding only that value).
CREATE OR REPLACE FUNCTION cogmem._experiment_checked_arms(p_parameter text, p_arms jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_arms  jsonb := '[]';
    v_value jsonb;
    v_typed jsonb;
    v_check text;
    v_ok    boolean;
BEGIN
    IF p_arms IS NULL OR jsonb_typeof(p_arms) <> 'array' OR jsonb_array_length(p_arms) NOT BETWEEN 2 AND 10 THEN
        RAISE EXCEPTION 'arms must be a JSON array of 2 to 10 values, got %', coalesce(left(p_arms::text, 80), 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'e.g. ''[2, 3, 5]''; for an interval ''["14 days", "30 days"]''.';
    END IF;
    FOR v_value IN SELECT x FROM jsonb_array_elements(p_arms) AS x LOOP
        BEGIN
            v_typed := to_jsonb(jsonb_populate_record(NULL::cogmem.tenants, jsonb_build_object(p_parameter, v_value)))
                       -> p_parameter;
        EXCEPTION WHEN data_exception THEN
            v_typed := NULL;
        END;
        IF v_typed IS NULL OR v_typed = 'null' THEN
            RAISE EXCEPTION 'arm % is not a value of % (%)', v_value, p_parameter,
                            (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute AS a
                             WHERE a.attrelid = 'cogmem.tenants'::regclass AND a.attname = p_parameter)
                USING ERRCODE = 'invalid_parameter_value', HINT = 'Give each arm as the setting''s type, e.g. 3, 0.9 or "30 days".';
        END IF;
        FOR v_check IN
            SELECT pg_get_expr(c.conbin, c.conrelid) FROM pg_constraint AS c
            JOIN pg_attribute AS a ON a.attrelid = c.conrelid AND a.attname = p_parameter
            WHERE c.conrelid = 'cogmem.tenants'::regclass AND c.contype = 'c' AND c.conkey = ARRAY[a.attnum]
        LOOP
            -- The expression comes from the catalog itself, over the column names of the table.
            EXECUTE format('SELECT %s FROM jsonb_populate_record(NULL::cogmem.tenants, $1) AS tenants', v_check)
            INTO v_ok USING jsonb_build_object(p_parameter, v_typed);
            IF NOT v_ok THEN
                RAISE EXCEPTION 'arm % of % is out of range: %', v_value, p_parameter, v_check
                    USING ERRCODE = 'check_violation', HINT = 'Each arm must be a value the setting may take.';
            END IF;
        END LOOP;
        IF v_arms @> jsonb_build_array(v_typed) THEN
            RAISE EXCEPTION 'arm % is given twice', v_value
                USING ERRCODE = 'invalid_parameter_value', HINT = 'Each arm is a different value.';
        END IF;
        v_arms := v_arms || jsonb_build_array(v_typed);
    END LOOP;
    RETURN v_arms;
END;
$$;
COMMENT ON FUNCTION cogmem._experiment_checked_arms(text, jsonb) IS
'The arms of an experiment on a setting, as the column stores them; raises on a value it may not take.';

-- What an experiment may vary, and on whom: a listed setting (the others are refused by name), a unit
-- that can hold it, tenants that exist, none of them already in a running experiment on the setting.
CREATE OR REPLACE FUNCTION cogmem._experiment_check(
    p_parameter text, p_unit text, p_metric text, p_tenants text[], p_arms jsonb
)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_listed  text := (SELECT string_agg(p.parameter, ', ') FROM cogmem._experiment_parameters() AS p);
    v_session boolean := (SELECT p.per_session FROM cogmem._experiment_parameters() AS p WHERE p.parameter = p_parameter);
    v_column  boolean := EXISTS (SELECT FROM pg_attribute AS a WHERE a.attrelid = 'cogmem.tenants'::regclass
                                 AND a.attname = p_parameter AND a.attnum > 0 AND NOT a.attisdropped);
    v_busy    record;
    v_arms    jsonb;
BEGIN
    IF v_session IS NULL AND v_column THEN
        RAISE EXCEPTION 'setting % may not be experimented on', p_parameter
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Experiments never change never-cut or BIOS behaviour, limits or the guard; they may vary: %s.', v_listed);
    ELSIF v_session IS NULL THEN
        RAISE EXCEPTION 'no setting named %', coalesce(p_parameter, 'NULL')
            USING ERRCODE = 'undefined_column', HINT = format('Experiments may vary: %s.', v_listed);
    END IF;
    IF p_unit IS NULL OR p_unit NOT IN ('tenant', 'session') OR (p_unit = 'session' AND NOT v_session) THEN
        RAISE EXCEPTION 'unit % cannot hold %', coalesce(p_unit, 'NULL'), p_parameter
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The unit is ''tenant'' or ''session''; a session holds only what recall reads (fusion_k, the weights, ...).';
    END IF;
    IF p_metric IS NULL OR p_metric NOT IN ('success_rate', 'items_used', 'corrections') THEN
        RAISE EXCEPTION 'unknown metric %', coalesce(p_metric, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'success_rate (recalls'' outcomes), items_used (the share of injected memories feedback '
                         'names used) or corrections (per session, judged from the next turn; fewer is better).';
    END IF;
    v_arms := cogmem._experiment_checked_arms(p_parameter, p_arms);
    PERFORM cogmem._require_tenant(x) FROM unnest(p_tenants) AS x;
    IF p_unit = 'tenant' AND cardinality(p_tenants) < jsonb_array_length(v_arms) THEN
        RAISE EXCEPTION 'an experiment with % arms needs at least as many tenants, got %',
                        jsonb_array_length(v_arms), cardinality(p_tenants)
            USING ERRCODE = 'invalid_parameter_value',
                  -- Only a setting recall reads may be held by a session: suggest that unit only where it is taken.
                  HINT = CASE WHEN v_session
                              THEN format('Enrol at least %s tenants, or use unit ''session''.', jsonb_array_length(v_arms))
                              ELSE format('Enrol at least %s tenants: a session cannot hold %s.',
                                          jsonb_array_length(v_arms), p_parameter) END;
    END IF;
    SELECT a.tenant, e.name INTO v_busy FROM cogmem.experiment_tenants AS a
    JOIN cogmem.experiments AS e ON e.name = a.experiment
    WHERE a.tenant = ANY (p_tenants) AND e.parameter = p_parameter AND e.stopped_at IS NULL
    ORDER BY a.tenant LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'tenant "%" is in running experiment "%" on %', v_busy.tenant, v_busy.name, p_parameter
            USING ERRCODE = 'object_in_use', HINT = format('Stop it first: SELECT cogmem.experiment_stop(%L);', v_busy.name);
    END IF;
    RETURN v_arms;
END;
$$;
COMMENT ON FUNCTION cogmem._experiment_check(text, text, text, text[], jsonb) IS
'Raises unless an experiment on the setting, with these arms, unit, metric and tenants, may start; returns '
'the arms as the column stores them.';

-- Definer: it writes cogmem.experiments and experiment_tenants, which only the API's owner may.
CREATE OR REPLACE FUNCTION cogmem.experiment_create(
    name text, parameter text, arms jsonb, unit text DEFAULT 'tenant', metric text DEFAULT 'success_rate',
    tenants text[] DEFAULT NULL
)
RETURNS TABLE (tenant text, arm bigint, value jsonb)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_tenants text[];
    v_arms    jsonb;
    v_salt    bigint := floor((random() - 0.5) * 2 ^ 63)::bigint;
BEGIN
    PERFORM cogmem._require_admin();
    IF experiment_create.name IS NULL OR btrim(experiment_create.name) = '' OR length(experiment_create.name) > 100
       OR experiment_create.name ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'experiment name % is empty, too long or holds control characters',
                        coalesce(to_jsonb(left(experiment_create.name, 40))::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use a short name such as ''promote-threshold-2026-12''.';
    END IF;
    -- Without a list, every tenant there is now; tenants created later stay outside.
    v_tenants := CASE WHEN experiment_create.tenants IS NULL THEN ARRAY(SELECT t.tenant FROM cogmem.tenants AS t ORDER BY 1)
                      ELSE ARRAY(SELECT DISTINCT x FROM unnest(experiment_create.tenants) AS x ORDER BY 1) END;
    v_arms := cogmem._experiment_check(experiment_create.parameter, experiment_create.unit, experiment_create.metric,
                                       v_tenants, experiment_create.arms);
    INSERT INTO cogmem.experiments (name, parameter, arms, unit, metric, salt)
    VALUES (experiment_create.name, experiment_create.parameter, v_arms, experiment_create.unit,
            experiment_create.metric, v_salt)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'experiment "%" exists', experiment_create.name
            USING ERRCODE = 'unique_violation', HINT = 'Experiments are kept for the record: choose another name.';
    END IF;
    -- Tenants: in the random order of the salt, dealt to the arms in turn: the arms differ by one at most.
    -- Sessions: each hashes to its arm when it recalls (sql/021-experiment-arms.sql).
    INSERT INTO cogmem.experiment_tenants (tenant, experiment, arm)
    SELECT x.t, experiment_create.name,
           CASE WHEN experiment_create.unit = 'tenant' THEN (x.n - 1) % jsonb_array_length(v_arms) + 1 END
    FROM unnest(ARRAY(SELECT u FROM unnest(v_tenants) AS u ORDER BY hashtextextended(u, v_salt), u))
         WITH ORDINALITY AS x (t, n);
    -- Tenants are dealt in turn, so the smallest arm has the floor of their share: started, so that an
    -- administrator may watch it, but told now rather than by a report that never decides.
    IF experiment_create.unit = 'tenant'
       AND cardinality(v_tenants) / jsonb_array_length(v_arms) < cogmem._experiment_min_units() THEN
        RAISE WARNING 'experiment "%" can reach no verdict: % tenants over % arms leave % in an arm, a verdict needs %',
                      experiment_create.name, cardinality(v_tenants), jsonb_array_length(v_arms),
                      cardinality(v_tenants) / jsonb_array_length(v_arms), cogmem._experiment_min_units()
            USING HINT = format('Stop it and enrol at least %s tenants; the spread between fewer tells too little.',
                                jsonb_array_length(v_arms) * cogmem._experiment_min_units());
    END IF;
    RETURN QUERY
    SELECT a.tenant, a.arm::bigint, v_arms -> (a.arm - 1) FROM cogmem.experiment_tenants AS a
    WHERE a.experiment = experiment_create.name ORDER BY a.tenant;
END;
$$;
COMMENT ON FUNCTION cogmem.experiment_create(text, text, jsonb, text, text, text[]) IS
'Administrators: starts an experiment on a tenant setting with two or more values (arms) over the named '
'tenants (NULL: every tenant now), assigned by tenant or by session; returns each tenant''s arm. Audited.';

CREATE OR REPLACE FUNCTION cogmem.experiment_status(name text DEFAULT NULL)
RETURNS TABLE (
    experiment text, parameter text, arms jsonb, unit text, metric text, state text, tenants jsonb,
    created_at timestamptz, stopped_at timestamptz, adopted_arm bigint, adopted_at timestamptz
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: as experiment_report, for the reach check's helper.
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_admin();
    IF experiment_status.name IS NOT NULL
       AND NOT EXISTS (SELECT FROM cogmem.experiments AS e WHERE e.name = experiment_status.name) THEN
        RAISE EXCEPTION 'unknown experiment "%"', experiment_status.name
            USING ERRCODE = 'undefined_object', HINT = 'SELECT * FROM cogmem.experiment_status(); lists them.';
    END IF;
    RETURN QUERY
    SELECT e.name, e.parameter, e.arms, e.unit, e.metric,
           CASE WHEN e.adopted_arm IS NOT NULL THEN 'adopted' WHEN e.stopped_at IS NOT NULL THEN 'stopped'
                ELSE 'running' END,
           -- Tenants enrolled per arm ("session": their sessions are assigned one by one).
           (SELECT jsonb_object_agg(coalesce(c.arm::text, 'session'), c.n)
            FROM (SELECT a.arm, count(*) AS n FROM cogmem.experiment_tenants AS a
                  WHERE a.experiment = e.name GROUP BY a.arm) AS c),
           e.created_at, e.stopped_at, e.adopted_arm::bigint, e.adopted_at
    FROM cogmem.experiments AS e
    WHERE experiment_status.name IS NULL OR e.name = experiment_status.name
    ORDER BY e.created_at DESC, e.name;
END;
$$;
COMMENT ON FUNCTION cogmem.experiment_status(text) IS
'Administrators: an experiment (or all, newest first): its setting, arms, unit, metric, state (running, '
'stopped, adopted) and the tenants enrolled per arm.';

-- Definer: it writes cogmem.experiments. Stopped, the tenants see their own settings again.
CREATE OR REPLACE FUNCTION cogmem.experiment_stop(name text)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_stopped timestamptz;
BEGIN
    PERFORM cogmem._require_admin();
    UPDATE cogmem.experiments AS e SET stopped_at = now()
    WHERE e.name = experiment_stop.name AND e.stopped_at IS NULL
    RETURNING e.stopped_at INTO v_stopped;
    IF NOT FOUND THEN
        SELECT e.stopped_at INTO v_stopped FROM cogmem.experiments AS e WHERE e.name = experiment_stop.name;
        RAISE EXCEPTION '%', CASE WHEN FOUND THEN format('experiment "%s" stopped at %s', experiment_stop.name, v_stopped)
                                  ELSE format('unknown experiment "%s"', experiment_stop.name) END
            USING ERRCODE = CASE WHEN FOUND THEN 'object_not_in_prerequisite_state' ELSE 'undefined_object' END,
                  HINT = 'SELECT * FROM cogmem.experiment_status(); lists the experiments and their state.';
    END IF;
    RETURN v_stopped;
END;
$$;
COMMENT ON FUNCTION cogmem.experiment_stop(text) IS
'Administrators: stops an experiment; its tenants see their own settings again. Audited.';

-- Definer: it writes cogmem.experiments and the enrolled tenants' settings, which only the API's owner may.
CREATE OR REPLACE FUNCTION cogmem.experiment_adopt(name text, arm bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_exp     record;
    v_verdict text;
    v_count   bigint;
BEGIN
    PERFORM cogmem._require_admin();
    SELECT e.* INTO v_exp FROM cogmem.experiments AS e WHERE e.name = experiment_adopt.name FOR UPDATE;
    IF NOT FOUND OR v_exp.adopted_arm IS NOT NULL THEN
        RAISE EXCEPTION '%', CASE WHEN FOUND THEN format('experiment "%s" adopted arm %s already', v_exp.name, v_exp.adopted_arm)
                                  ELSE format('unknown experiment "%s"', experiment_adopt.name) END
            USING ERRCODE = CASE WHEN FOUND THEN 'object_not_in_prerequisite_state' ELSE 'undefined_object' END,
                  HINT = 'SELECT * FROM cogmem.experiment_status(); lists the experiments and their state.';
    END IF;
    IF experiment_adopt.arm IS NULL OR experiment_adopt.arm NOT BETWEEN 1 AND jsonb_array_length(v_exp.arms) THEN
        RAISE EXCEPTION 'experiment "%" has no arm %', v_exp.name, coalesce(experiment_adopt.arm::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Its arms are 1 to %s: %s.', jsonb_array_length(v_exp.arms), v_exp.arms);
    END IF;
    v_verdict := (SELECT r.verdict FROM cogmem.experiment_report(v_exp.name) AS r LIMIT 1);
    UPDATE cogmem.experiments AS e
    SET stopped_at = coalesce(e.stopped_at, now()), adopted_arm = experiment_adopt.arm, adopted_at = now()
    WHERE e.name = v_exp.name;
    -- The name is a listed column (checked when the experiment was made); the value goes in typed by it.
    -- Each changed tenant is logged by the governance trigger of cogmem.tenants.
    EXECUTE format('UPDATE cogmem.tenants AS t SET %1$I = r.%1$I FROM jsonb_populate_record(NULL::cogmem.tenants, $1) AS r '
                   'WHERE t.tenant IN (SELECT a.tenant FROM cogmem.experiment_tenants AS a WHERE a.experiment = $2)',
                   v_exp.parameter)
    USING jsonb_build_object(v_exp.parameter, v_exp.arms -> (experiment_adopt.arm::integer - 1)), v_exp.name;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES ('*', 'governance', 'experiment_adopted',
            jsonb_build_object('experiment', v_exp.name, 'parameter', v_exp.parameter, 'arm', experiment_adopt.arm,
                               'value', v_exp.arms -> (experiment_adopt.arm::integer - 1), 'tenants', v_count,
                               'verdict', v_verdict));
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem.experiment_adopt(text, bigint) IS
'Administrators: ends an experiment by writing one arm''s value into the settings of every tenant it '
'enrolled; audited with the report''s verdict at that moment. Returns how many tenants it set.';
