-- The Gut: patterns distilled from many tenants, published only under k-anonymity and a privacy budget.
--
-- A tenant contributes only when an administrator opts it in (gut_configure). Its proven memories are
-- de-identified inside its own reach (_gut_collect, at its night or on opt-in), so nothing that names
-- its world ever sits in gut_contributions. A release (gut_release, the cogmem_gut role only) clusters
-- the contributions of every opted-in tenant by meaning and publishes a cluster when OpenDP's Laplace
-- threshold over its distinct tenants says so (cogmem_pg/gut.py, in PL/Python), with noisy support and
-- success, charging the privacy ledger (gut_releases). Recall fills its gut layer from gut_patterns.
-- docs/gut.md says what is guaranteed and what is not.

-- Typed placeholders for what names a tenant's world. Secrets went at remember() already (redact); the
-- tenant's rare words go at the release (only words k of a cluster's tenants use survive).
CREATE OR REPLACE FUNCTION cogmem.gut_deidentify(content text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v text := (cogmem.redact(content)).redacted;
BEGIN
    v := regexp_replace(v, '[[:alnum:]._%+-]+@[[:alnum:].-]+\.[[:alpha:]]{2,}', '<email>', 'g');
    v := regexp_replace(v, '@[[:alnum:]_.-]+', '<person>', 'g');
    v := regexp_replace(v, '\m[a-z][a-z0-9+.-]*://[^[:space:]]+', '<domain>', 'gi');
    v := regexp_replace(v, '\m\d{1,3}(\.\d{1,3}){3}(/\d{1,2})?(:\d+)?\M', '<ip>', 'g');
    v := regexp_replace(v, '\m[0-9a-f]{1,4}(:[0-9a-f]{0,4}){2,7}\M', '<ip>', 'gi');
    -- A dotted name ending in a top-level domain (or a country's two letters) is a host or domain; a
    -- file name or a setting (pg_hba.conf, min.insync.replicas) is not.
    v := regexp_replace(v, '\m[[:alnum:]_-]+(\.[[:alnum:]_-]+)*\.(com|net|org|io|dev|app|cloud|local|internal|lan|corp|intra|prod|stage|staging|info|biz|gov|edu|(?!(js|ts|py|sh|md|rb|go|cs|rs|gz|db|so|pl|el)\M)[[:alpha:]]{2})\M',
                        '<domain>', 'gi');
    -- Machine names: a word and a number (web-01, db3, prod-api-2), not an algorithm or a standard.
    v := regexp_replace(v, '\m(?![[:alnum:]-]*((sha|md|utf|ipv|http|tls|ssl|base|int|float|iso|rfc|cve)-?\d|ec2|s3|x509|log4j|k8s|i18n))[[:alpha:]][[:alnum:]]*(-[[:alnum:]]+)*-?\d+[[:alpha:]]?\M',
                        '<host>', 'gi');
    v := regexp_replace(v, '([$€£₺]\s?\d[\d.,]*|\m\d[\d.,]*\s?(usd|eur|gbp|try|tl|dollars?|euros?|lira)\M)', '<amount>', 'gi');
    v := regexp_replace(v, '\m(\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4})\M', '<date>', 'g');
    v := regexp_replace(v, '\m(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|ocak|şubat|mart|nisan|mayıs|haziran|temmuz|ağustos|eylül|ekim|kasım|aralık)[[:alpha:]]*\.?\s+\d{1,2}\M|\m\d{1,2}\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|ocak|şubat|mart|nisan|mayıs|haziran|temmuz|ağustos|eylül|ekim|kasım|aralık)[[:alpha:]]*',
                        '<date>', 'gi');
    v := regexp_replace(v, '\m(customer|client|account|müşteri|firma)\s+[[:upper:]][[:alnum:]&-]*', '\1 <customer>', 'g');
    v := regexp_replace(v, '\m(mr|mrs|ms|dr)\.?\s+[[:upper:]][[:alpha:]]+', '<person>', 'gi');
    v := regexp_replace(v, '\m[[:upper:]][[:lower:]]+\s+([Bb]ey|[Hh]anım)\M', '<person>', 'g');
    v := regexp_replace(v, '\m\d{1,2}:\d{2}(:\d{2})?\M', '<time>', 'g');
    v := regexp_replace(v, '\mv?\d+(\.\d+)+[[:alnum:]-]*', '<version>', 'gi');
    v := regexp_replace(v, '\m\d+([.,]\d+)?\M', '<number>', 'g');
    RETURN btrim(regexp_replace(v, '\s+', ' ', 'g'));
END;
$$;
COMMENT ON FUNCTION cogmem.gut_deidentify(text) IS
'A text as the Gut may see it: redacted, with typed placeholders (<email>, <person>, <domain>, <ip>, '
'<host>, <amount>, <date>, <time>, <customer>, <version>, <number>) for what names the tenant''s world.';

-- A tenant's contributions, made again from its proven memories (and the outcomes of its recalls that
-- injected patterns). Runs within the caller's reach: the night, the opt-in, or an administrator.
CREATE OR REPLACE FUNCTION cogmem._gut_collect(p_tenant text)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_min_success real := (SELECT s.min_success FROM cogmem.gut_settings AS s);
    v_count       integer;
BEGIN
    IF NOT (SELECT t.gut_contribute FROM cogmem.tenants AS t WHERE t.tenant = p_tenant) THEN
        DELETE FROM cogmem.gut_contributions AS c WHERE c.tenant = p_tenant;
        DELETE FROM cogmem.gut_feedback AS f WHERE f.tenant = p_tenant;
        RETURN 0;
    END IF;
    WITH proven AS (
        SELECT m.memory_id, CASE WHEN l.memory_id IS NULL THEN 'memory' ELSE 'learning' END AS source, m.ring,
               cogmem.gut_deidentify(m.content) AS content, m.embedding, m.topics,
               coalesce(s.success_score, s.confidence) AS success
        FROM cogmem.memories AS m
        JOIN cogmem.memory_stats AS s ON s.tenant = m.tenant AND s.memory_id = m.memory_id
        LEFT JOIN cogmem.learnings AS l ON l.tenant = m.tenant AND l.memory_id = m.memory_id
        WHERE m.tenant = p_tenant AND m.embedding IS NOT NULL
          AND (l.memory_id IS NOT NULL
               OR (m.ring IN ('long_term', 'habits', 'procedures', 'shocks', 'dos_and_donts')
                   AND (s.reinforced OR s.success_score >= v_min_success)))
    ), gone AS (
        DELETE FROM cogmem.gut_contributions AS c
        WHERE c.tenant = p_tenant AND NOT EXISTS (SELECT FROM proven AS p WHERE p.memory_id = c.memory_id)
    )
    INSERT INTO cogmem.gut_contributions AS c (tenant, memory_id, source, ring, content, embedding, topics, success)
    SELECT p_tenant, p.memory_id, p.source, p.ring, p.content, p.embedding, p.topics, p.success FROM proven AS p
    ON CONFLICT (tenant, memory_id) DO UPDATE
    SET source = excluded.source, ring = excluded.ring, content = excluded.content, embedding = excluded.embedding,
        topics = excluded.topics, success = excluded.success, collected_at = now()
    WHERE (c.ring, c.content, c.topics, c.success) IS DISTINCT FROM
          (excluded.ring, excluded.content, excluded.topics, excluded.success);
    SELECT count(*) INTO v_count FROM cogmem.gut_contributions AS c WHERE c.tenant = p_tenant;

    DELETE FROM cogmem.gut_feedback AS f WHERE f.tenant = p_tenant;
    INSERT INTO cogmem.gut_feedback (tenant, pattern_id, outcome, recalls)
    SELECT p_tenant, i.id, avg(r.outcome), count(*)
    FROM cogmem.recalls AS r, unnest(r.item_layers, r.item_rule_ids) AS i (layer, id)
    WHERE r.tenant = p_tenant AND r.outcome IS NOT NULL AND i.layer = 'gut'
      AND EXISTS (SELECT FROM cogmem.gut_patterns AS g WHERE g.pattern_id = i.id)
    GROUP BY i.id;
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem._gut_collect(text) IS
'Makes a tenant''s Gut contributions again from its proven memories and learnings (none unless it opted '
'in), and its feedback on the patterns it received; returns how many contributions it has.';

-- An administrator's switches. Opting out removes what the tenant contributed at once; released
-- patterns it supported lose it at the next release (and are withdrawn if they fall below k).
CREATE OR REPLACE FUNCTION cogmem.gut_configure(tenant text, contribute boolean DEFAULT NULL, receive boolean DEFAULT NULL)
RETURNS TABLE (gut_contribute boolean, gut_receive boolean, contributions integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    -- Definer: writes settings and contributions, which no application role may. Administrators only
    -- (they reach every tenant), and the tenant must exist.
    PERFORM cogmem._reach_every();
    PERFORM cogmem._reach(gut_configure.tenant);
    UPDATE cogmem.tenants AS t
    SET gut_contribute = coalesce(gut_configure.contribute, t.gut_contribute),
        gut_receive = coalesce(gut_configure.receive, t.gut_receive)
    WHERE t.tenant = gut_configure.tenant;
    RETURN QUERY
    SELECT t.gut_contribute, t.gut_receive, cogmem._gut_collect(t.tenant)
    FROM cogmem.tenants AS t WHERE t.tenant = gut_configure.tenant;
END;
$$;
COMMENT ON FUNCTION cogmem.gut_configure(text, boolean, boolean) IS
'Opts a tenant in or out of contributing to the Gut (off by default) and of receiving its patterns (on by '
'default); NULL leaves a switch as it is. Administrators only; audited as a change of the tenant.';

-- The explicit reach check of the Gut's global verbs: the cogmem_gut role (superusers are members).
CREATE OR REPLACE FUNCTION cogmem._reach_gut()
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT pg_catalog.pg_has_role(cogmem.caller(), 'cogmem_gut', 'USAGE') THEN
        RAISE EXCEPTION 'only the cogmem_gut role may release Gut patterns'
            USING ERRCODE = 'insufficient_privilege', HINT = 'GRANT cogmem_gut TO the role that runs releases.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._reach_gut() IS
'Raises insufficient_privilege unless the caller is a member of cogmem_gut, the only role that reads '
'across tenants (their de-identified contributions).';

-- What a release draws from: the de-identified contributions and the feedback on patterns, as JSON
-- (what a router gathers from every shard, sql/068 on each; docs/scaling.md).
CREATE OR REPLACE FUNCTION cogmem._gut_export_rows()
RETURNS jsonb
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
BEGIN ATOMIC
    SELECT jsonb_build_object(
        'contributions', coalesce((
            SELECT
                jsonb_agg(jsonb_build_object(
                    'tenant', c.tenant, 'memory_id', c.memory_id, 'content', c.content, 'topics', c.topics,
                    'success', c.success, 'embedding', c.embedding::text,
                    'ring', CASE WHEN c.source = 'learning' THEN 'procedures' ELSE c.ring::text END
                ) ORDER BY c.tenant, c.memory_id)
            FROM cogmem.gut_contributions AS c
        ), '[]'),
        'feedback', coalesce((
            SELECT
                jsonb_agg(jsonb_build_object(
                    'tenant', f.tenant, 'pattern_id', f.pattern_id, 'outcome', f.outcome, 'recalls', f.recalls
                ) ORDER BY f.tenant, f.pattern_id)
            FROM cogmem.gut_feedback AS f
        ), '[]')
    );
END;
COMMENT ON FUNCTION cogmem._gut_export_rows() IS 'The contributions and pattern feedback a release draws from, as JSON.';

CREATE OR REPLACE FUNCTION cogmem.gut_export()
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    -- Definer: the contributions of every opted-in tenant here, de-identified, for the Gut role only.
    PERFORM cogmem._reach_gut();
    RETURN cogmem._gut_export_rows();
END;
$$;
COMMENT ON FUNCTION cogmem.gut_export() IS
'This database''s de-identified Gut contributions and pattern feedback (JSON), for a release that gathers '
'every shard''s. The cogmem_gut role only.';

-- The noise and the clustering, in the server's Python with OpenDP (cogmem_pg/gut.py), over the
-- contributions and feedback it is given (the release below passes them, having checked it is the Gut's
-- role), and the active patterns it reads. Only opted-in tenants have contributions and feedback rows
-- (_gut_collect removes them on opting out).
DROP FUNCTION IF EXISTS cogmem._gut_draw(jsonb);  -- it takes the rows gathered from shards, too
CREATE OR REPLACE FUNCTION cogmem._gut_draw(p_params jsonb, p_gathered jsonb)
RETURNS jsonb
LANGUAGE plpython3u VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
import json
try:
    from cogmem_pg import gut
    import opendp  # noqa: F401
except ImportError as missing:
    plpy.error("the Gut's release needs cogmem_pg and OpenDP in the server's Python: %s" % missing,
               sqlstate="0A000",
               hint="pip install 'cogmem-pg[gut]' into the Python that PL/Python runs (the embedded cluster has it).")
p = json.loads(p_params)
gathered = json.loads(p_gathered)
items = [gut.Contribution(r["tenant"], r["memory_id"], r["content"], tuple(r["topics"]), r["success"],
                          json.loads(r["embedding"]), r["ring"]) for r in gathered["contributions"]]
previous = [(r["pattern_id"], json.loads(r["embedding"])) for r in plpy.execute(
    "SELECT pattern_id, embedding::text AS embedding FROM cogmem.gut_patterns WHERE withdrawn_release IS NULL")]
feedback = [(r["tenant"], r["pattern_id"], r["outcome"], r["recalls"]) for r in gathered["feedback"]]
params = gut.Params(k=p["k"], epsilon=p["epsilon"], delta=p["delta"],
                    max_patterns_per_tenant=p["max_patterns_per_tenant"],
                    selection_share=p["selection_share"], cluster_similarity=p["cluster_similarity"])
out = gut.release(items, params, previous, feedback)
out["patterns"] = [{"pattern_id": x.pattern_id, "content": x.content, "embedding": x.embedding,
                    "topics": x.topics, "support": x.support, "success": x.success} for x in out["patterns"]]
return json.dumps(out)
$$;
COMMENT ON FUNCTION cogmem._gut_draw(jsonb, jsonb) IS
'The patterns a release would publish, drawn with OpenDP from the opted-in tenants'' contributions and '
'feedback given as JSON (_gut_export_rows: this database''s, or every shard''s), and the epsilon and delta '
'they spend (JSON).';

-- What each period has spent of its budget. Periods start at the epoch's multiples of the setting.
CREATE OR REPLACE VIEW cogmem.gut_ledger WITH (security_invoker = TRUE) AS
SELECT
    r.period_start,
    s.epsilon_per_period AS budget,
    sum(r.epsilon) AS spent,
    s.epsilon_per_period - sum(r.epsilon) AS remaining,
    count(*) AS releases,
    sum(r.published) AS published,
    sum(r.withdrawn) AS withdrawn
FROM cogmem.gut_releases AS r CROSS JOIN cogmem.gut_settings AS s
GROUP BY r.period_start, s.epsilon_per_period;
COMMENT ON VIEW cogmem.gut_ledger IS 'The privacy budget per period: epsilon spent by releases and what is left.';

CREATE OR REPLACE FUNCTION cogmem._gut_period_start(p_at timestamptz, p_period interval)
RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN p_period = '1 month' THEN date_trunc('month', p_at)
                ELSE date_bin(p_period, p_at, timestamptz '2000-01-01 00:00:00+00') END
$$;
COMMENT ON FUNCTION cogmem._gut_period_start(timestamptz, interval) IS
'The start of the budget period holding a moment (calendar months for the default of 1 month).';

-- The ledger first: a release that would spend more than the period has left is refused before any
-- noise is drawn. Without an epsilon, a release spends what is left.
CREATE OR REPLACE FUNCTION cogmem._gut_charge(
    p_epsilon double precision, p_period_start timestamptz, p_budget double precision,
    OUT epsilon double precision, OUT remaining double precision
)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_spent double precision;
BEGIN
    SELECT coalesce(sum(r.epsilon), 0) INTO v_spent FROM cogmem.gut_releases AS r WHERE r.period_start = p_period_start;
    IF p_epsilon IS NULL AND p_budget - v_spent <= 1e-9 THEN
        RAISE EXCEPTION 'the Gut''s privacy budget for the period from % is spent', p_period_start
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Wait for the next period; SELECT * FROM cogmem.gut_ledger shows what was spent.';
    ELSIF p_epsilon IS NOT NULL AND NOT (p_epsilon > 0 AND p_epsilon < 'Infinity') THEN
        RAISE EXCEPTION 'epsilon must be a positive number, got %', p_epsilon
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass the share of the period''s budget to spend, e.g. 1.0.';
    ELSIF v_spent + p_epsilon > p_budget + 1e-9 THEN
        RAISE EXCEPTION 'a Gut release of epsilon % would exceed the privacy budget: % of % spent in the period from %',
                        p_epsilon, round(v_spent::numeric, 4), p_budget, p_period_start
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = CASE WHEN v_spent < p_budget
                              THEN format('At most %s is left in this period.', round((p_budget - v_spent)::numeric, 4))
                              ELSE 'Wait for the next period; SELECT * FROM cogmem.gut_ledger shows what was spent.' END;
    END IF;
    epsilon := coalesce(p_epsilon, p_budget - v_spent);
    remaining := p_budget - v_spent - epsilon;
END;
$$;
COMMENT ON FUNCTION cogmem._gut_charge(double precision, timestamptz, double precision) IS
'The epsilon a release spends (NULL: what the period has left) and what remains after it; refuses '
'(program_limit_exceeded) what would exceed the period''s budget, or a spent budget.';

-- Published clusters continue the pattern they match (same id, new text and figures); the rest are new.
-- Active patterns no cluster continues are withdrawn: their support fell below k or the noise said no.
CREATE OR REPLACE FUNCTION cogmem._gut_publish(p_release_id bigint, p_patterns jsonb)
RETURNS TABLE (published integer, withdrawn integer)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS gut_drawn (
        pattern_id bigint, content text, embedding public.vector, topics text[], support integer, success real
    ) ON COMMIT DROP;
    TRUNCATE gut_drawn;
    INSERT INTO gut_drawn
    SELECT (x ->> 'pattern_id')::bigint, x ->> 'content', (x ->> 'embedding')::public.vector,
           ARRAY(SELECT jsonb_array_elements_text(x -> 'topics')), (x ->> 'support')::integer, (x ->> 'success')::real
    FROM jsonb_array_elements(p_patterns) AS x;
    UPDATE cogmem.gut_patterns AS g
    SET withdrawn_release = p_release_id
    WHERE g.withdrawn_release IS NULL AND NOT EXISTS (SELECT FROM gut_drawn AS d WHERE d.pattern_id = g.pattern_id);
    GET DIAGNOSTICS withdrawn = ROW_COUNT;
    UPDATE cogmem.gut_patterns AS g
    SET content = d.content, embedding = d.embedding, topics = d.topics, support = d.support, success = d.success,
        token_estimate = ceil(length(d.content) / 4.0)::integer, last_release = p_release_id
    FROM gut_drawn AS d WHERE d.pattern_id = g.pattern_id;
    INSERT INTO cogmem.gut_patterns (content, embedding, topics, support, success, token_estimate, first_release, last_release)
    SELECT d.content, d.embedding, d.topics, d.support, d.success, ceil(length(d.content) / 4.0)::integer,
           p_release_id, p_release_id
    FROM gut_drawn AS d WHERE d.pattern_id IS NULL;
    published := (SELECT count(*) FROM gut_drawn);
    RETURN NEXT;
END;
$$;
COMMENT ON FUNCTION cogmem._gut_publish(bigint, jsonb) IS
'Writes a release''s patterns (continued or new) and withdraws the active ones it does not continue.';

DROP FUNCTION IF EXISTS cogmem.gut_release(double precision);  -- it takes gathered rows, too
CREATE OR REPLACE FUNCTION cogmem.gut_release(epsilon double precision DEFAULT NULL, gathered jsonb DEFAULT NULL)
RETURNS TABLE (
    release_id bigint, epsilon_spent double precision, delta_spent double precision, threshold integer,
    published integer, withdrawn integer, remaining double precision
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    s           cogmem.gut_settings;
    v_period    timestamptz;
    v_eps       double precision;
    v_remaining double precision;
    v_drawn     jsonb;
    v_id        bigint;
    v_pub       record;
BEGIN
    -- Definer: reads the de-identified contributions of every opted-in tenant and writes the global
    -- patterns and the ledger, which only the Gut role may: that is its reach.
    PERFORM cogmem._reach_gut();
    PERFORM pg_advisory_xact_lock(hashtext('cogmem.gut_release'));
    s := (SELECT x FROM cogmem.gut_settings AS x);
    v_period := cogmem._gut_period_start(now(), s.period);
    SELECT c.epsilon, c.remaining INTO v_eps, v_remaining
    FROM cogmem._gut_charge(gut_release.epsilon, v_period, s.epsilon_per_period) AS c;
    v_drawn := cogmem._gut_draw(jsonb_build_object(
        'k', s.k, 'epsilon', v_eps, 'delta', s.delta, 'max_patterns_per_tenant', s.max_patterns_per_tenant,
        'selection_share', s.selection_share, 'cluster_similarity', s.cluster_similarity),
        coalesce(gut_release.gathered, cogmem._gut_export_rows()));  -- every shard's, or this database's
    INSERT INTO cogmem.gut_releases AS r (period_start, epsilon, delta, k, max_patterns_per_tenant, threshold,
                                          published, withdrawn, released_by)
    VALUES (v_period, v_eps, (v_drawn ->> 'delta')::double precision, s.k, s.max_patterns_per_tenant,
            (v_drawn ->> 'threshold')::integer, 0, 0, cogmem.caller())
    RETURNING r.release_id INTO v_id;
    SELECT * INTO v_pub FROM cogmem._gut_publish(v_id, v_drawn -> 'patterns');
    UPDATE cogmem.gut_releases AS r SET published = v_pub.published, withdrawn = v_pub.withdrawn WHERE r.release_id = v_id;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES ('*', 'governance', 'gut_released',
            jsonb_build_object('release_id', v_id, 'epsilon', v_eps, 'delta', v_drawn -> 'delta', 'k', s.k,
                               'threshold', v_drawn -> 'threshold', 'published', v_pub.published,
                               'withdrawn', v_pub.withdrawn, 'period_start', v_period));
    RETURN QUERY
    SELECT v_id, v_eps, (v_drawn ->> 'delta')::double precision, (v_drawn ->> 'threshold')::integer,
           v_pub.published, v_pub.withdrawn, v_remaining;
END;
$$;
COMMENT ON FUNCTION cogmem.gut_release(double precision, jsonb) IS
'Releases Gut patterns from every opted-in tenant''s contributions (gathered: every shard''s, from '
'gut_export), spending epsilon (default: what the period has left) of the privacy budget; refused over '
'budget. The cogmem_gut role only; audited.';

-- A release made on one shard, written the same on the others: its ledger rows and patterns, with their ids.
CREATE OR REPLACE FUNCTION cogmem.gut_state()
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    -- Definer: the ledger and the published patterns, which the Gut role writes.
    PERFORM cogmem._reach_gut();
    RETURN jsonb_build_object(
        'releases', (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY r.release_id), '[]') FROM cogmem.gut_releases AS r),
        'patterns', (SELECT coalesce(jsonb_agg(to_jsonb(g) ORDER BY g.pattern_id), '[]') FROM cogmem.gut_patterns AS g));
END;
$$;
COMMENT ON FUNCTION cogmem.gut_state() IS 'The Gut''s ledger and patterns (JSON), for gut_import on the other shards.';

CREATE OR REPLACE FUNCTION cogmem.gut_import(state jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_count integer;
BEGIN
    -- Definer: writes the global ledger and patterns, as a release here would; the Gut role only.
    PERFORM cogmem._reach_gut();
    INSERT INTO cogmem.gut_releases OVERRIDING SYSTEM VALUE
    SELECT * FROM jsonb_populate_recordset(NULL::cogmem.gut_releases, gut_import.state -> 'releases')
    ON CONFLICT (release_id) DO NOTHING;  -- a release, once made, does not change: the same everywhere
    INSERT INTO cogmem.gut_patterns AS g OVERRIDING SYSTEM VALUE
    SELECT * FROM jsonb_populate_recordset(NULL::cogmem.gut_patterns, gut_import.state -> 'patterns')
    ON CONFLICT (pattern_id) DO UPDATE
    SET content = excluded.content, embedding = excluded.embedding, topics = excluded.topics,
        support = excluded.support, success = excluded.success, token_estimate = excluded.token_estimate,
        last_release = excluded.last_release, withdrawn_release = excluded.withdrawn_release;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    PERFORM setval(pg_get_serial_sequence('cogmem.gut_releases', 'release_id'),
                   greatest((SELECT max(r.release_id) FROM cogmem.gut_releases AS r), 1));
    PERFORM setval(pg_get_serial_sequence('cogmem.gut_patterns', 'pattern_id'),
                   greatest((SELECT max(p.pattern_id) FROM cogmem.gut_patterns AS p), 1));
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem.gut_import(jsonb) IS
'Writes a release made on another shard (gut_state there): its ledger rows and patterns, with their ids; '
'returns the patterns written. The cogmem_gut role only.';

-- What a tenant receives: the active patterns, unless it turned receiving off.
CREATE OR REPLACE FUNCTION cogmem.gut_patterns_for(tenant text)
RETURNS TABLE (pattern_id bigint, content text, topics text[], support integer, success real, released_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    -- Definer: the patterns are global rows no application role reads directly; reach checked first.
    PERFORM cogmem._reach(gut_patterns_for.tenant);
    RETURN QUERY
    SELECT g.pattern_id, g.content, g.topics, g.support, g.success, r.released_at
    FROM cogmem.gut_patterns AS g
    JOIN cogmem.gut_releases AS r ON r.release_id = g.last_release
    JOIN cogmem.tenants AS t ON t.tenant = gut_patterns_for.tenant AND t.gut_receive
    WHERE g.withdrawn_release IS NULL
    ORDER BY g.support DESC, g.pattern_id;
END;
$$;
COMMENT ON FUNCTION cogmem.gut_patterns_for(text) IS
'The Gut patterns a tenant receives (none when its gut_receive is off), with their noisy support and success.';

-- The scheduled run, after the night: every opted-in tenant's contributions made again (a commit per 50
-- tenants), then a release spending the period's budget when the period has had none. A procedure that
-- commits cannot pin its search_path: names and operators are qualified.
CREATE OR REPLACE PROCEDURE cogmem.gut_nightly(release boolean DEFAULT TRUE)
LANGUAGE plpgsql
AS $$
DECLARE
    v_run_id  bigint;
    v_tenant  text;
    v_done    integer := 0;
    v_release bigint;
BEGIN
    IF pg_catalog.pg_is_in_recovery() THEN
        RAISE NOTICE 'cogmem.gut_nightly skipped: this server is a read replica';
        RETURN;
    END IF;
    IF NOT pg_catalog.pg_try_advisory_lock(pg_catalog.hashtext('cogmem.gut_nightly')) THEN
        RAISE NOTICE 'cogmem.gut_nightly skipped: another run holds its lock';
        RETURN;
    END IF;
    INSERT INTO cogmem.gut_runs DEFAULT VALUES RETURNING run_id INTO v_run_id;
    COMMIT;
    FOR v_tenant IN
        SELECT t.tenant FROM cogmem.tenants AS t
        WHERE t.gut_contribute
           OR EXISTS (SELECT FROM cogmem.gut_contributions AS c WHERE c.tenant OPERATOR(pg_catalog.=) t.tenant)
        ORDER BY t.tenant
    LOOP
        PERFORM cogmem._gut_collect(v_tenant);
        v_done := v_done OPERATOR(pg_catalog.+) 1;
        IF v_done OPERATOR(pg_catalog.%) 50 OPERATOR(pg_catalog.=) 0 THEN
            UPDATE cogmem.gut_runs AS r SET tenants = v_done WHERE r.run_id OPERATOR(pg_catalog.=) v_run_id;
            COMMIT;
        END IF;
    END LOOP;
    UPDATE cogmem.gut_runs AS r SET tenants = v_done WHERE r.run_id OPERATOR(pg_catalog.=) v_run_id;
    COMMIT;
    BEGIN
        IF release AND NOT EXISTS (
            SELECT FROM cogmem.gut_releases AS r
            WHERE r.period_start OPERATOR(pg_catalog.=)
                  cogmem._gut_period_start(pg_catalog.now(), (SELECT s.period FROM cogmem.gut_settings AS s))
        ) THEN
            SELECT r.release_id INTO v_release FROM cogmem.gut_release() AS r;
        END IF;
        UPDATE cogmem.gut_runs AS r
        SET finished_at = pg_catalog.clock_timestamp(), release_id = v_release,
            note = CASE WHEN v_release IS NULL THEN 'no release: this period has one already' END
        WHERE r.run_id OPERATOR(pg_catalog.=) v_run_id;
    EXCEPTION WHEN OTHERS THEN
        PERFORM pg_catalog.pg_advisory_unlock(pg_catalog.hashtext('cogmem.gut_nightly'));
        RAISE;
    END;
    COMMIT;
    PERFORM pg_catalog.pg_advisory_unlock(pg_catalog.hashtext('cogmem.gut_nightly'));
END;
$$;
COMMENT ON PROCEDURE cogmem.gut_nightly(boolean) IS  -- noqa: LT01
'The scheduled Gut run: collects every opted-in tenant''s contributions (commits per 50 tenants), then '
'releases once per budget period; recorded in cogmem.gut_runs.';
