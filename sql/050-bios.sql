-- BIOS: given (not learned) rules by category. Immutable; retired and reinstated only by append-only
-- events. Presets (cogmem_pg/presets/*.toml) are versioned rule sets: loading a version adds the rules
-- it has that are not in force, reinstates those it brings back, and retires those it dropped, all as
-- one audited load. A tenant takes the presets that apply to it (bios_subscriptions); rules of other
-- presets are not injected for it.

CREATE OR REPLACE TRIGGER bios_rules_immutable
BEFORE UPDATE OR DELETE ON cogmem.bios_rules
FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();
CREATE OR REPLACE TRIGGER bios_rules_no_truncate
BEFORE TRUNCATE ON cogmem.bios_rules
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change();
CREATE OR REPLACE TRIGGER bios_rule_events_immutable
BEFORE UPDATE OR DELETE ON cogmem.bios_rule_events
FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();
CREATE OR REPLACE TRIGGER bios_rule_events_no_truncate
BEFORE TRUNCATE ON cogmem.bios_rule_events
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change();
CREATE OR REPLACE TRIGGER bios_preset_loads_immutable
BEFORE UPDATE OR DELETE ON cogmem.bios_preset_loads
FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();
CREATE OR REPLACE TRIGGER bios_preset_loads_no_truncate
BEFORE TRUNCATE ON cogmem.bios_preset_loads
FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change();

CREATE OR REPLACE FUNCTION cogmem._bios_rule_digest(p_definition jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- jsonb's text form is canonical (keys sorted), so equal definitions give equal digests.
RETURN md5(p_definition::text);
COMMENT ON FUNCTION cogmem._bios_rule_digest(jsonb) IS
'The fingerprint of a normalised rule definition: the same rule in two preset versions has the same one.';

-- The schema of a rule and a preset (docs/bios.md). cogmem_pg/bios.py checks a file against the same
-- limits before it gets here (tests/test_bios.py holds the two equal); a caller may also pass JSON
-- directly, so every value is checked here too. Rules are immutable: what gets in stays.
CREATE OR REPLACE FUNCTION cogmem._bios_limits()
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
-- A rule's text, in any language, is at most 1,200 characters: 300 tokens at four characters a token,
-- the bios layer's default allocation, so that no one rule takes more than the whole layer is given.
RETURN jsonb_build_object(
    'rules', 1000, 'topics', 32, 'name', 64, 'title', 200, 'version', 40, 'sha256', 64, 'requirement', 200,
    'rationale', 500, 'rule', 1200, 'translation', 1200,
    'name_pattern', '^[a-z0-9][a-z0-9._-]{0,63}$',
    'version_pattern', '^([0-9]{1,9}(\.[0-9]{1,9}){0,3}|[0-9]{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?)$',
    'language_pattern', '^[a-z_][a-z0-9_]{0,62}$'
);
COMMENT ON FUNCTION cogmem._bios_limits() IS
'The limits of a BIOS rule and preset: lengths in characters, counts, and the patterns of names and versions.';

CREATE OR REPLACE FUNCTION cogmem._bios_text(p_what text, p_value jsonb, p_limit text, p_prose boolean DEFAULT FALSE)
RETURNS text
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_limit integer := (cogmem._bios_limits() ->> p_limit)::integer;
    v_text  text;
    v_bad   text;
BEGIN
    IF p_value IS NULL OR jsonb_typeof(p_value) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(p_value) <> 'string' THEN
        RAISE EXCEPTION '% must be a string, got % %', p_what, jsonb_typeof(p_value), left(p_value::text, 40)
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Give it as text, e.g. "Run a config test before restart."';
    END IF;
    v_text := btrim(p_value #>> '{}');
    -- C0 and C1 controls and DEL; prose may hold newlines and tabs.
    v_bad := substring(v_text FROM CASE WHEN p_prose THEN '[\u0001-\u0008\u000b-\u001f\u007f-\u009f]'
                                        ELSE '[\u0001-\u001f\u007f-\u009f]' END);
    IF v_bad IS NOT NULL THEN
        RAISE EXCEPTION '% holds control character U+%', p_what, upper(lpad(to_hex(ascii(v_bad)), 4, '0'))
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = CASE WHEN p_prose THEN 'Prose (rule, rationale, translations) may hold newlines and tabs, no other control character.'
                              ELSE 'Names, requirements, titles and versions are one line without control characters.' END;
    END IF;
    IF length(v_text) > v_limit THEN
        RAISE EXCEPTION '% has % characters, the limit is %', p_what, length(v_text), v_limit
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = format('Shorten it to at most %s characters; docs/bios.md lists the limits of a preset.', v_limit);
    END IF;
    RETURN v_text;
END;
$$;
COMMENT ON FUNCTION cogmem._bios_text(text, jsonb, text, boolean) IS
'A text value of a BIOS rule or preset, trimmed (NULL for none); refuses another JSON type, control '
'characters (prose: all but newline and tab) and a length over its limit, naming p_what.';

CREATE OR REPLACE FUNCTION cogmem._bios_name(p_what text, p_name text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF p_name IS NULL OR p_name = '' THEN
        RAISE EXCEPTION '% must not be NULL or empty', p_what
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use a name such as ''server'' or ''pci-dss-4.0''.';
    END IF;
    IF p_name !~ (cogmem._bios_limits() ->> 'name_pattern') THEN
        RAISE EXCEPTION '% % is not a name of lower-case letters, digits, ".", "_" and "-"', p_what, to_jsonb(p_name)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Start with a letter or digit, e.g. ''server'' or ''pci-dss-4.0''; at most 64 characters.';
    END IF;
    RETURN p_name;
END;
$$;
COMMENT ON FUNCTION cogmem._bios_name(text, text) IS
'Refuses a preset name, category or topic that is not lower-case letters, digits, ".", "_" and "-".';

CREATE OR REPLACE FUNCTION cogmem._bios_topics(p_where text, p_topics jsonb)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_topics jsonb := coalesce(nullif(p_topics, 'null'), '[]');
    v_limit  integer := (cogmem._bios_limits() ->> 'topics')::integer;
BEGIN
    IF jsonb_typeof(v_topics) <> 'array' THEN
        RAISE EXCEPTION '%BIOS rule topics must be an array of topic names, got %', p_where, jsonb_typeof(v_topics)
            USING ERRCODE = 'invalid_parameter_value', HINT = 'E.g. ["payments", "access"]: the category first.';
    END IF;
    IF jsonb_array_length(v_topics) > v_limit THEN
        RAISE EXCEPTION '%BIOS rule has % topics, the limit is %', p_where, jsonb_array_length(v_topics), v_limit
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Name the category and the few other topics it is needed for.';
    END IF;
    RETURN coalesce(cogmem._normalize_topics(ARRAY(
        SELECT cogmem._bios_name(format('%sBIOS rule topics[%s]', p_where, t.n),
                                 lower(cogmem._bios_text(format('%sBIOS rule topics[%s]', p_where, t.n), t.topic, 'name')))
        FROM jsonb_array_elements(v_topics) WITH ORDINALITY AS t (topic, n) ORDER BY t.n)), '{}');
END;
$$;
COMMENT ON FUNCTION cogmem._bios_topics(text, jsonb) IS
'A rule''s topics checked (each a name, at most the limit of them) and normalised (lower-case, sorted, once each).';

CREATE OR REPLACE FUNCTION cogmem._bios_translations(p_where text, p_translations jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_languages jsonb := coalesce(nullif(p_translations, 'null'), '{}');
    v_bad       text;
BEGIN
    IF jsonb_typeof(v_languages) <> 'object' THEN
        RAISE EXCEPTION '%BIOS rule translations must be an object of language: text', p_where
            USING ERRCODE = 'invalid_parameter_value', HINT = 'E.g. {"turkish": "Yeniden başlatmadan önce yapılandırmayı test edin."}';
    END IF;
    SELECT l.key INTO v_bad FROM jsonb_each(v_languages) AS l
    WHERE jsonb_typeof(l.value) <> 'string' OR btrim(l.value #>> '{}') = ''
       OR l.key !~ (cogmem._bios_limits() ->> 'language_pattern')
       OR NOT EXISTS (SELECT FROM pg_catalog.pg_ts_config AS c WHERE c.cfgname = l.key)
    LIMIT 1;
    IF v_bad IS NOT NULL THEN
        RAISE EXCEPTION '%BIOS rule translation % is not a text in a known language', p_where, to_jsonb(v_bad)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Keys are text search configurations (SELECT cfgname FROM pg_ts_config), values non-empty text.';
    END IF;
    RETURN (SELECT coalesce(jsonb_object_agg(l.key, cogmem._bios_text(format('%sBIOS rule translations.%s', p_where, l.key),
                                                                      l.value, 'translation', true)), '{}')
            FROM jsonb_each(v_languages) AS l);
END;
$$;
COMMENT ON FUNCTION cogmem._bios_translations(text, jsonb) IS
'A rule''s translations checked (known languages, texts within the rule''s limits) and trimmed.';

CREATE OR REPLACE FUNCTION cogmem._bios_rule_definition(p_rule jsonb, p_where text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_where    text := coalesce(p_where || ': ', '');
    v_keys     text[] := '{requirement,category,severity,topics,always_on,rationale,rule,translations}';
    v_bad      text;
    v_text     text;
    v_severity text;
BEGIN
    IF p_rule IS NULL OR jsonb_typeof(p_rule) <> 'object' THEN
        RAISE EXCEPTION '%a BIOS rule must be an object, got %', v_where, coalesce(jsonb_typeof(p_rule), 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'E.g. {"category": "server", "rule": "Run a config test before restart."}';
    END IF;
    v_bad := (SELECT string_agg(k, ', ' ORDER BY k) FROM jsonb_object_keys(p_rule) AS k WHERE NOT k = ANY (v_keys));
    IF v_bad IS NOT NULL THEN
        RAISE EXCEPTION '%BIOS rule has unknown keys %', v_where, v_bad
            USING ERRCODE = 'invalid_parameter_value', HINT = format('Keys: %s.', array_to_string(v_keys, ', '));
    END IF;
    v_text := cogmem._bios_text(v_where || 'BIOS rule text', p_rule -> 'rule', 'rule', true);
    IF v_text IS NULL OR v_text = '' THEN
        RAISE EXCEPTION '%BIOS rule text must not be NULL or empty', v_where
            USING ERRCODE = 'invalid_parameter_value', HINT = 'State the rule, e.g. ''Run a config test before restart.''';
    END IF;
    v_severity := coalesce(cogmem._bios_text(v_where || 'BIOS rule severity', p_rule -> 'severity', 'name'), 'must');
    IF NOT v_severity = ANY (enum_range(NULL::cogmem.severity)::text[]) THEN
        RAISE EXCEPTION '%unknown BIOS severity "%"', v_where, v_severity
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use one of: must, should, may.';
    END IF;
    IF jsonb_typeof(coalesce(p_rule -> 'always_on', 'null')) NOT IN ('boolean', 'null') THEN
        RAISE EXCEPTION '%BIOS rule always_on must be true or false, got % %', v_where,
            jsonb_typeof(p_rule -> 'always_on'), left((p_rule -> 'always_on')::text, 40)
            USING ERRCODE = 'invalid_parameter_value', HINT = 'true: injected in every recall of the tenants that take it.';
    END IF;
    RETURN jsonb_build_object(
        'category', cogmem._bios_name(v_where || 'BIOS rule category',
                                      lower(cogmem._bios_text(v_where || 'BIOS rule category', p_rule -> 'category', 'name'))),
        'rule', v_text, 'severity', v_severity,
        'requirement', nullif(cogmem._bios_text(v_where || 'BIOS rule requirement', p_rule -> 'requirement', 'requirement'), ''),
        'topics', to_jsonb(cogmem._bios_topics(v_where, p_rule -> 'topics')),
        'always_on', coalesce((p_rule ->> 'always_on')::boolean, false),
        'rationale', nullif(cogmem._bios_text(v_where || 'BIOS rule rationale', p_rule -> 'rationale', 'rationale', true), ''),
        'translations', cogmem._bios_translations(v_where, p_rule -> 'translations'));
END;
$$;
COMMENT ON FUNCTION cogmem._bios_rule_definition(jsonb, text) IS
'A rule definition checked against the schema (types, lengths, control characters, names) and normalised '
'(category lower-case, texts trimmed, topics sorted); raises naming where the rule came from.';

-- A tenant's own rule or preset load lives on the tenant's shard only: its id carries the tenant's
-- routing key (the router reads it back) in a range of its own, so that global rules and loads (their
-- table's identity) keep the same ids on every shard.
CREATE OR REPLACE FUNCTION cogmem._keyed_bios_id(p_tenant text, p_identity regclass)
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN p_tenant IS NULL THEN nextval(p_identity)
    ELSE (1::bigint << 62) | (cogmem._tenant_key(p_tenant)::bigint << 31) | nextval('cogmem.bios_tenant_id_seq')
END;
COMMENT ON FUNCTION cogmem._keyed_bios_id(text, regclass) IS
'A new id for a BIOS rule or load: of the table''s identity for every tenant''s, else 2^62, the tenant''s '
'routing key, then a number of this database.';

CREATE OR REPLACE FUNCTION cogmem._bios_preset_name(p_preset text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Strict: NULL stays NULL (a rule of no preset); a name is checked as a value of a file would be.
RETURN cogmem._bios_name('preset name', cogmem._bios_text('preset name', to_jsonb(p_preset), 'name'));
COMMENT ON FUNCTION cogmem._bios_preset_name(text) IS
'A preset''s name checked (one line, at most 64 characters, lower-case letters, digits, ".", "_" and "-").';

CREATE OR REPLACE FUNCTION cogmem._bios_insert(p_tenant text, p_preset text, p_definition jsonb)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_digest  text := cogmem._bios_rule_digest(p_definition);
    v_rule_id bigint;
BEGIN
    INSERT INTO cogmem.bios_rules (rule_id, tenant, category, rule, severity, preset, requirement, topics, always_on,
                                   rationale, translations, digest)
    OVERRIDING SYSTEM VALUE
    SELECT cogmem._keyed_bios_id(p_tenant, 'cogmem.bios_rules_rule_id_seq'), p_tenant, d.category, d.rule,
           d.severity, p_preset, d.requirement, d.topics, d.always_on, d.rationale, d.translations, v_digest
    FROM jsonb_to_record(p_definition) AS d (category text, rule text, severity cogmem.severity, requirement text,
                                             topics text[], always_on boolean, rationale text, translations jsonb)
    ON CONFLICT ((coalesce(tenant, '')), (coalesce(preset, '')), digest) DO NOTHING
    RETURNING rule_id INTO v_rule_id;
    IF v_rule_id IS NULL THEN  -- added before: adding it again adds nothing
        SELECT r.rule_id INTO v_rule_id FROM cogmem.bios_rules AS r
        WHERE coalesce(r.tenant, '') = coalesce(p_tenant, '') AND coalesce(r.preset, '') = coalesce(p_preset, '')
          AND r.digest = v_digest;
    END IF;
    RETURN v_rule_id;
END;
$$;
COMMENT ON FUNCTION cogmem._bios_insert(text, text, jsonb) IS
'Inserts a normalised rule unless the same definition is there already; returns its id either way.';

CREATE OR REPLACE FUNCTION cogmem.add_bios_rule(
    category text,
    rule text,
    severity text DEFAULT 'must',
    preset text DEFAULT NULL,
    tenant text DEFAULT NULL,
    requirement text DEFAULT NULL,
    topics text[] DEFAULT NULL,
    always_on boolean DEFAULT FALSE,
    rationale text DEFAULT NULL,
    translations jsonb DEFAULT NULL
)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes bios_rules, which only the API's owner may (sql/999-privileges.sql).
AS $$
BEGIN
    PERFORM cogmem._require_admin(add_bios_rule.tenant);
    RETURN cogmem._bios_insert(
        add_bios_rule.tenant, cogmem._bios_preset_name(nullif(btrim(add_bios_rule.preset), '')),
        cogmem._bios_rule_definition(jsonb_build_object(
            'category', add_bios_rule.category, 'rule', add_bios_rule.rule,
            'severity', coalesce(add_bios_rule.severity, 'NULL'), 'requirement', add_bios_rule.requirement,
            'topics', to_jsonb(add_bios_rule.topics), 'always_on', add_bios_rule.always_on,
            'rationale', add_bios_rule.rationale, 'translations', add_bios_rule.translations)));
END;
$$;
COMMENT ON FUNCTION cogmem.add_bios_rule(text, text, text, text, text, text, text[], boolean, text, jsonb) IS
'Adds a BIOS rule (tenant NULL = every tenant) and returns its id; the same rule again returns the same id. '
'A rule of a preset is injected for the tenants that take the preset (cogmem.subscribe_bios).';

CREATE OR REPLACE VIEW cogmem.active_bios_rules WITH (security_invoker = TRUE) AS
SELECT
    r.rule_id,
    r.tenant,
    r.category,
    r.severity,
    r.rule,
    r.requirement,
    r.preset,
    r.topics,
    r.always_on,
    r.token_estimate,
    r.created_at,
    r.rationale,
    r.translations,
    r.digest
FROM cogmem.bios_rules AS r
-- In force unless its latest event retired it.
WHERE coalesce((
    SELECT e.event FROM cogmem.bios_rule_events AS e
    WHERE e.rule_id = r.rule_id ORDER BY e.event_id DESC LIMIT 1
), '') <> 'retired';
COMMENT ON VIEW cogmem.active_bios_rules IS 'BIOS rules in force (not retired); tenant NULL = every tenant.';

CREATE OR REPLACE FUNCTION cogmem._bios_rule_event(p_rule_id bigint, p_event text, p_reason text, p_load_id bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF p_reason IS NULL OR btrim(p_reason) = '' THEN
        RAISE EXCEPTION 'retiring or reinstating a BIOS rule needs a reason'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Say why, e.g. ''superseded by PCI DSS 4.0.1''.';
    END IF;
    -- Already in that state: nothing to record.
    IF (p_event = 'retired') = NOT EXISTS (SELECT FROM cogmem.active_bios_rules AS a WHERE a.rule_id = p_rule_id) THEN
        RETURN false;
    END IF;
    INSERT INTO cogmem.bios_rule_events (rule_id, event, reason, load_id)
    VALUES (p_rule_id, p_event, btrim(p_reason), p_load_id);
    RETURN true;
END;
$$;
COMMENT ON FUNCTION cogmem._bios_rule_event(bigint, text, text, bigint) IS
'Appends a retired or reinstated event unless the rule is in that state already; says whether it did.';

CREATE OR REPLACE FUNCTION cogmem.retire_bios_rule(rule_id bigint, reason text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes bios_rule_events, which only the API's owner may (sql/999-privileges.sql).
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_admin();
    IF NOT EXISTS (SELECT FROM cogmem.bios_rules AS r WHERE r.rule_id = retire_bios_rule.rule_id) THEN
        RAISE EXCEPTION 'unknown BIOS rule %', retire_bios_rule.rule_id
            USING ERRCODE = 'no_data_found', HINT = 'List rules with SELECT * FROM cogmem.active_bios_rules;';
    END IF;
    PERFORM cogmem._bios_rule_event(retire_bios_rule.rule_id, 'retired', retire_bios_rule.reason, NULL);
END;
$$;
COMMENT ON FUNCTION cogmem.retire_bios_rule(bigint, text) IS
'Retires a BIOS rule by appending an event; the rule row itself never changes. Idempotent.';

CREATE OR REPLACE VIEW cogmem.bios_rules_in_force WITH (security_invoker = TRUE) AS
SELECT
    t.tenant,
    r.rule_id,
    r.category,
    r.severity,
    r.requirement,
    r.preset,
    r.topics,
    r.always_on,
    r.rationale,
    -- In the tenant's language when the rule has it.
    coalesce(r.translations ->> t.language::text, r.rule) AS rule,
    greatest(1, ceil(length(coalesce(r.translations ->> t.language::text, r.rule)) / 4.0))::integer AS token_estimate
FROM cogmem.tenants AS t
INNER JOIN cogmem.active_bios_rules AS r
    ON
        t.tenant = r.tenant
        OR r.tenant IS NULL AND (r.preset IS NULL OR EXISTS (
            SELECT FROM cogmem.bios_subscriptions AS s
            WHERE s.preset = r.preset AND (s.tenant IS NULL OR s.tenant = t.tenant)
        ));
COMMENT ON VIEW cogmem.bios_rules_in_force IS
'Per tenant, the BIOS rules recall and guard may inject: its own, global ones of no preset, and those of '
'the presets it takes; the text in the tenant''s language where the rule has a translation.';

CREATE OR REPLACE FUNCTION cogmem._bios_version_key(p_version text)
RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- A version of the grammar (_bios_limits: dotted numbers or a date) compares number by number
-- ("4.0.1" > "4.0", "2026-12" > "2026-03"), never as text; versions loaded before the grammar keep
-- the numbers they hold.
RETURN array(SELECT m[1]::integer FROM regexp_matches(p_version, '([0-9]{1,9})', 'g') AS m);
COMMENT ON FUNCTION cogmem._bios_version_key(text) IS 'A preset version as comparable numbers.';

CREATE OR REPLACE FUNCTION cogmem._bios_preset_plan(p_preset text, p_rules jsonb, p_tenant text)
RETURNS TABLE (change text, rule_id bigint, definition jsonb)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    PERFORM cogmem._bios_name('preset name', cogmem._bios_preset_name(p_preset));
    IF p_rules IS NULL OR jsonb_typeof(p_rules) <> 'array' OR jsonb_array_length(p_rules) = 0 THEN
        RAISE EXCEPTION 'preset "%" must bring a non-empty array of rules', p_preset
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Read it from its TOML file: cogmem bios load PRESET.';
    END IF;
    IF jsonb_array_length(p_rules) > (cogmem._bios_limits() ->> 'rules')::integer THEN
        RAISE EXCEPTION 'preset "%" brings % rules, the limit is %', p_preset, jsonb_array_length(p_rules),
            cogmem._bios_limits() ->> 'rules'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Split it into presets a tenant can take one by one.';
    END IF;
    RETURN QUERY
    WITH wanted AS (
        SELECT w.n, d.definition, cogmem._bios_rule_digest(d.definition) AS digest
        FROM jsonb_array_elements(p_rules) WITH ORDINALITY AS w (rule, n)
        CROSS JOIN LATERAL cogmem._bios_rule_definition(w.rule, format('rule %s of preset "%s"', w.n, p_preset))
            AS d (definition)
    ),
    present AS (
        SELECT r.rule_id, r.digest, r.category, r.rule, r.severity, r.requirement,
               EXISTS (SELECT FROM cogmem.active_bios_rules AS a WHERE a.rule_id = r.rule_id) AS active
        FROM cogmem.bios_rules AS r
        WHERE r.preset = p_preset AND r.tenant IS NOT DISTINCT FROM p_tenant
    )
    SELECT CASE WHEN p.rule_id IS NULL THEN 'add' WHEN p.active THEN 'keep' ELSE 'reinstate' END,
           p.rule_id, w.definition
    FROM (SELECT DISTINCT ON (w.digest) w.* FROM wanted AS w ORDER BY w.digest, w.n) AS w
    LEFT JOIN present AS p ON p.digest = w.digest
    UNION ALL
    SELECT 'retire', p.rule_id,
           jsonb_build_object('category', p.category, 'rule', p.rule, 'severity', p.severity, 'requirement', p.requirement)
    FROM present AS p
    WHERE p.active AND NOT EXISTS (SELECT FROM wanted AS w WHERE w.digest = p.digest);
END;
$$;
COMMENT ON FUNCTION cogmem._bios_preset_plan(text, jsonb, text) IS
'What loading these rules as the preset would do: add, keep, reinstate, or retire (a rule in force that '
'the file no longer has), per rule with its normalised definition.';

CREATE OR REPLACE FUNCTION cogmem.bios_preset_diff(preset text, rules jsonb, tenant text DEFAULT NULL)
RETURNS TABLE (change text, rule_id bigint, category text, requirement text, severity text, rule text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it changes nothing, but runs the internal plan that the load runs, which no role may call.
AS $$
BEGIN
    PERFORM cogmem._require_admin(bios_preset_diff.tenant);
    RETURN QUERY
    SELECT p.change, p.rule_id, p.definition ->> 'category', p.definition ->> 'requirement',
           p.definition ->> 'severity', p.definition ->> 'rule'
    FROM cogmem._bios_preset_plan(btrim(bios_preset_diff.preset), bios_preset_diff.rules, bios_preset_diff.tenant) AS p
    ORDER BY array_position(ARRAY['retire', 'add', 'reinstate', 'keep'], p.change),
             p.definition ->> 'category', p.definition ->> 'requirement', p.rule_id;
END;
$$;
COMMENT ON FUNCTION cogmem.bios_preset_diff(text, jsonb, text) IS
'What cogmem.load_bios_preset would change, without changing anything (cogmem bios diff PRESET).';

CREATE OR REPLACE FUNCTION cogmem._bios_check_version(
    p_preset text, p_tenant text, p_version text, p_sha256 text, p_downgrade boolean
)
RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_last cogmem.bios_preset_loads;
BEGIN
    IF p_version IS NULL OR p_version !~ (cogmem._bios_limits() ->> 'version_pattern') THEN
        RAISE EXCEPTION 'preset "%" version % is not dotted numbers or a date', p_preset, coalesce(to_jsonb(left(p_version, 40))::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'E.g. version = "2.0", "4.0.1" or "2026-03-15" in the preset file; versions compare number by number.';
    END IF;
    SELECT l.* INTO v_last FROM cogmem.bios_preset_loads AS l
    WHERE l.preset = p_preset AND l.tenant IS NOT DISTINCT FROM p_tenant ORDER BY l.load_id DESC LIMIT 1;
    IF v_last.version = p_version AND v_last.sha256 IS DISTINCT FROM p_sha256 THEN
        RAISE EXCEPTION 'preset "%" version % is loaded already, with other content', p_preset, p_version
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A version names one text: give the changed file a new version, then load it.';
    END IF;
    IF cogmem._bios_version_key(p_version) < cogmem._bios_version_key(v_last.version) AND NOT p_downgrade THEN
        RAISE EXCEPTION 'preset "%" version % is older than the loaded version %', p_preset, p_version, v_last.version
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'To go back on purpose, load it with downgrade => true (cogmem bios load --downgrade).';
    END IF;
    RETURN v_last.version IS NOT DISTINCT FROM p_version;  -- the same version again
END;
$$;
COMMENT ON FUNCTION cogmem._bios_check_version(text, text, text, text, boolean) IS
'Refuses a version loaded before with other content, or an older version unless asked; says whether '
'this version is the one loaded last.';

CREATE OR REPLACE FUNCTION cogmem._bios_apply(
    p_change text, p_rule_id bigint, p_definition jsonb, p_preset text, p_tenant text, p_version text, p_load_id bigint
)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    CASE p_change
        WHEN 'add' THEN
            RETURN cogmem._bios_insert(p_tenant, p_preset, p_definition);
        WHEN 'retire' THEN
            PERFORM cogmem._bios_rule_event(p_rule_id, 'retired', format('not in %s %s', p_preset, p_version), p_load_id);
        WHEN 'reinstate' THEN
            PERFORM cogmem._bios_rule_event(p_rule_id, 'reinstated', format('back in %s %s', p_preset, p_version), p_load_id);
        ELSE NULL;  -- keep
    END CASE;
    RETURN p_rule_id;
END;
$$;
COMMENT ON FUNCTION cogmem._bios_apply(text, bigint, jsonb, text, text, text, bigint) IS
'Carries out one step of a preset load; returns the rule''s id.';

CREATE OR REPLACE FUNCTION cogmem.load_bios_preset(
    preset text, version text, title text, sha256 text, rules jsonb,
    tenant text DEFAULT NULL, downgrade boolean DEFAULT FALSE
)
RETURNS TABLE (change text, rule_id bigint, category text, requirement text, severity text, rule text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes bios_rules, their events and bios_preset_loads, which only the API's owner may.
AS $$
DECLARE
    v_preset  text := btrim(load_bios_preset.preset);
    v_tenant  text := load_bios_preset.tenant;
    v_again   boolean;
    v_load_id bigint;
    v_plan    jsonb;
BEGIN
    PERFORM cogmem._require_admin(v_tenant);
    IF v_preset IS NULL OR v_preset = '' THEN
        RAISE EXCEPTION 'preset must be named'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Load presets with cogmem bios load <preset>.';
    END IF;
    PERFORM cogmem._bios_preset_name(v_preset), cogmem._bios_text('preset title', to_jsonb(load_bios_preset.title), 'title'),
            cogmem._bios_text('preset checksum', to_jsonb(load_bios_preset.sha256), 'sha256');
    -- One load of a preset at a time: two would both add what neither saw.
    PERFORM pg_advisory_xact_lock(hashtext('cogmem.bios_preset'), hashtext(v_preset));
    v_again := cogmem._bios_check_version(v_preset, v_tenant, load_bios_preset.version, load_bios_preset.sha256,
                                          coalesce(load_bios_preset.downgrade, false));
    v_plan := (SELECT coalesce(jsonb_agg(to_jsonb(p)), '[]')
               FROM cogmem._bios_preset_plan(v_preset, load_bios_preset.rules, v_tenant) AS p);
    IF NOT (v_again AND 'keep' = ALL (SELECT s ->> 'change' FROM jsonb_array_elements(v_plan) AS s)) THEN
        INSERT INTO cogmem.bios_preset_loads (load_id, preset, tenant, version, title, sha256, added, retired,
                                              reinstated, kept)
        OVERRIDING SYSTEM VALUE
        SELECT cogmem._keyed_bios_id(v_tenant, 'cogmem.bios_preset_loads_load_id_seq'), v_preset, v_tenant, load_bios_preset.version, coalesce(load_bios_preset.title, v_preset),
               coalesce(load_bios_preset.sha256, ''),
               count(*) FILTER (WHERE s.change = 'add'), count(*) FILTER (WHERE s.change = 'retire'),
               count(*) FILTER (WHERE s.change = 'reinstate'), count(*) FILTER (WHERE s.change = 'keep')
        FROM jsonb_to_recordset(v_plan) AS s (change text)
        RETURNING load_id INTO v_load_id;
    END IF;
    RETURN QUERY
    SELECT s.step ->> 'change',
           cogmem._bios_apply(s.step ->> 'change', (s.step ->> 'rule_id')::bigint, s.step -> 'definition', v_preset,
                              v_tenant, load_bios_preset.version, v_load_id),
           s.step #>> '{definition,category}', s.step #>> '{definition,requirement}',
           s.step #>> '{definition,severity}', s.step #>> '{definition,rule}'
    FROM jsonb_array_elements(v_plan) WITH ORDINALITY AS s (step, n)
    ORDER BY s.n;
END;
$$;
COMMENT ON FUNCTION cogmem.load_bios_preset(text, text, text, text, jsonb, text, boolean) IS
'Administrators: loads a version of a preset (what cogmem.bios_preset_diff shows is what it does) and '
'returns each rule''s change; a load that changes something is logged in cogmem.bios_preset_loads.';

CREATE OR REPLACE FUNCTION cogmem.subscribe_bios(preset text, tenant text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes bios_subscriptions, which only the API's owner may (sql/999-privileges.sql).
AS $$
#variable_conflict use_column
DECLARE
    v_new boolean;
BEGIN
    PERFORM cogmem._require_admin(subscribe_bios.tenant);
    IF NOT EXISTS (SELECT FROM cogmem.bios_rules AS r WHERE r.preset = subscribe_bios.preset AND r.tenant IS NULL) THEN
        RAISE EXCEPTION 'no BIOS preset "%" is loaded', subscribe_bios.preset
            USING ERRCODE = 'no_data_found', HINT = 'Load it first (cogmem bios load PRESET); cogmem bios list shows them.';
    END IF;
    INSERT INTO cogmem.bios_subscriptions (preset, tenant) VALUES (subscribe_bios.preset, subscribe_bios.tenant)
    ON CONFLICT (preset, (coalesce(tenant, ''))) DO NOTHING
    RETURNING true INTO v_new;
    RETURN coalesce(v_new, false);
END;
$$;
COMMENT ON FUNCTION cogmem.subscribe_bios(text, text) IS
'Administrators: a tenant takes a preset (tenant NULL = every tenant), so its rules are injected there; '
'returns whether the subscription is new.';

CREATE OR REPLACE FUNCTION cogmem.unsubscribe_bios(preset text, tenant text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it deletes from bios_subscriptions, which only the API's owner may (sql/999-privileges.sql).
AS $$
#variable_conflict use_column
DECLARE
    v_gone boolean;
BEGIN
    PERFORM cogmem._require_admin(unsubscribe_bios.tenant);
    DELETE FROM cogmem.bios_subscriptions AS s
    WHERE s.preset = unsubscribe_bios.preset AND s.tenant IS NOT DISTINCT FROM unsubscribe_bios.tenant
    RETURNING true INTO v_gone;
    IF v_gone IS NULL AND unsubscribe_bios.tenant IS NOT NULL AND EXISTS (
        SELECT FROM cogmem.bios_subscriptions AS s WHERE s.preset = unsubscribe_bios.preset AND s.tenant IS NULL) THEN
        RAISE EXCEPTION 'preset "%" is taken by every tenant, not by "%" alone', unsubscribe_bios.preset,
            unsubscribe_bios.tenant
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Unsubscribe every tenant (tenant NULL), then subscribe the tenants that take it one by one.';
    END IF;
    RETURN coalesce(v_gone, false);
END;
$$;
COMMENT ON FUNCTION cogmem.unsubscribe_bios(text, text) IS
'Administrators: a tenant stops taking a preset (tenant NULL = the subscription for every tenant); '
'returns whether there was one.';

CREATE OR REPLACE VIEW cogmem.bios_presets WITH (security_invoker = TRUE) AS
SELECT DISTINCT ON (l.preset, l.tenant)
    l.preset,
    l.tenant,
    l.version,
    l.title,
    l.sha256,
    l.loaded_at,
    count(*) OVER (PARTITION BY l.preset, l.tenant) AS loads,
    (
        SELECT count(*) FROM cogmem.active_bios_rules AS a
        WHERE a.preset = l.preset AND a.tenant IS NOT DISTINCT FROM l.tenant
    ) AS rules_active
FROM cogmem.bios_preset_loads AS l
ORDER BY l.preset ASC, l.tenant ASC, l.load_id DESC;
COMMENT ON VIEW cogmem.bios_presets IS
'Each loaded preset (tenant NULL = for every tenant): its last loaded version and the rules it has in force.';

CREATE OR REPLACE VIEW cogmem.bios_coverage WITH (security_invoker = TRUE) AS
SELECT
    a.preset,
    a.category,
    count(*) AS rules,
    count(*) FILTER (WHERE a.severity = 'must') AS must,
    count(*) FILTER (WHERE a.severity = 'should') AS should,
    count(*) FILTER (WHERE a.always_on) AS always_on,
    count(*) FILTER (WHERE a.translations ? 'turkish') AS in_turkish,
    count(*) FILTER (WHERE a.rationale IS NOT NULL) AS with_rationale,
    (
        SELECT CASE WHEN bool_or(s.tenant IS NULL) THEN 'every tenant' ELSE count(*) || ' tenants' END
        FROM cogmem.bios_subscriptions AS s WHERE s.preset = a.preset
    ) AS taken_by
FROM cogmem.active_bios_rules AS a
WHERE a.tenant IS NULL
GROUP BY a.preset, a.category;
COMMENT ON VIEW cogmem.bios_coverage IS
'Global rules in force per preset and category: how many, of which severity, translated, and who takes them.';
