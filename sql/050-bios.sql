-- BIOS: given (not learned) rules by category. Immutable; retired only by an append-only event.

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

CREATE OR REPLACE FUNCTION cogmem.add_bios_rule(
    category text,
    rule text,
    severity text DEFAULT 'must',
    preset text DEFAULT NULL,
    tenant text DEFAULT NULL,
    requirement text DEFAULT NULL,
    topics text[] DEFAULT NULL,
    always_on boolean DEFAULT FALSE
)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_category text := lower(btrim(add_bios_rule.category));
    v_rule     text := btrim(add_bios_rule.rule);
    v_rule_id  bigint;
BEGIN
    PERFORM cogmem._reach_every();
    IF v_category IS NULL OR v_category = '' THEN
        RAISE EXCEPTION 'BIOS rule category must not be NULL or empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use a topic name such as ''server'' or ''payments''.';
    END IF;
    IF v_rule IS NULL OR v_rule = '' THEN
        RAISE EXCEPTION 'BIOS rule text must not be NULL or empty'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'State the rule, e.g. ''Run a config test before restart.''';
    END IF;
    IF add_bios_rule.severity IS NULL
       OR NOT add_bios_rule.severity = ANY (enum_range(NULL::cogmem.severity)::text[]) THEN
        RAISE EXCEPTION 'unknown BIOS severity "%"', add_bios_rule.severity
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Use one of: must, should, may.';
    END IF;
    IF add_bios_rule.tenant IS NOT NULL THEN
        PERFORM cogmem._reach(add_bios_rule.tenant);
    END IF;

    INSERT INTO cogmem.bios_rules (tenant, category, rule, severity, preset, requirement, topics, always_on)
    VALUES (add_bios_rule.tenant, v_category, v_rule, add_bios_rule.severity::cogmem.severity,
            add_bios_rule.preset, add_bios_rule.requirement,
            coalesce(cogmem._normalize_topics(add_bios_rule.topics), '{}'), coalesce(add_bios_rule.always_on, false))
    ON CONFLICT ((coalesce(tenant, '')), category, md5(rule)) DO NOTHING
    RETURNING rule_id INTO v_rule_id;

    IF v_rule_id IS NULL THEN  -- loaded before: adding it again adds nothing
        SELECT r.rule_id INTO v_rule_id FROM cogmem.bios_rules AS r
        WHERE coalesce(r.tenant, '') = coalesce(add_bios_rule.tenant, '')
          AND r.category = v_category AND md5(r.rule) = md5(v_rule);
    END IF;
    RETURN v_rule_id;
END;
$$;
COMMENT ON FUNCTION cogmem.add_bios_rule(text, text, text, text, text, text, text[], boolean) IS
'Adds a BIOS rule (tenant NULL = every tenant) and returns its id; the same rule again returns the same id.';

CREATE OR REPLACE FUNCTION cogmem.retire_bios_rule(rule_id bigint, reason text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._reach_every();
    IF NOT EXISTS (SELECT FROM cogmem.bios_rules AS r WHERE r.rule_id = retire_bios_rule.rule_id) THEN
        RAISE EXCEPTION 'unknown BIOS rule %', retire_bios_rule.rule_id
            USING ERRCODE = 'no_data_found', HINT = 'List rules with SELECT * FROM cogmem.active_bios_rules;';
    END IF;
    IF retire_bios_rule.reason IS NULL OR btrim(retire_bios_rule.reason) = '' THEN
        RAISE EXCEPTION 'retiring a BIOS rule needs a reason'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Say why, e.g. ''superseded by PCI DSS 4.0.1''.';
    END IF;
    IF EXISTS (SELECT FROM cogmem.bios_rule_events AS e
               WHERE e.rule_id = retire_bios_rule.rule_id AND e.event = 'retired') THEN
        RETURN;
    END IF;
    INSERT INTO cogmem.bios_rule_events (rule_id, event, reason)
    VALUES (retire_bios_rule.rule_id, 'retired', retire_bios_rule.reason);
END;
$$;
COMMENT ON FUNCTION cogmem.retire_bios_rule(bigint, text) IS
'Retires a BIOS rule by appending an event; the rule row itself never changes. Idempotent.';

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
    r.created_at
FROM cogmem.bios_rules AS r
WHERE NOT EXISTS (
    SELECT FROM cogmem.bios_rule_events AS e
    WHERE e.rule_id = r.rule_id AND e.event = 'retired'
);
COMMENT ON VIEW cogmem.active_bios_rules IS 'BIOS rules in force (not retired); tenant NULL = every tenant.';

CREATE OR REPLACE FUNCTION cogmem.record_bios_preset(
    preset text, version text, title text, sha256 text, rules_added integer
)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes bios_presets, which only the API's owner may (sql/999-privileges.sql).
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._reach_every();
    IF record_bios_preset.preset IS NULL OR btrim(record_bios_preset.preset) = '' THEN
        RAISE EXCEPTION 'preset must be named'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Load presets with cogmem bios load <preset>.';
    END IF;
    INSERT INTO cogmem.bios_presets AS p (preset, version, title, sha256, rules_added)
    VALUES (record_bios_preset.preset, record_bios_preset.version, record_bios_preset.title,
            record_bios_preset.sha256, coalesce(record_bios_preset.rules_added, 0))
    ON CONFLICT (preset) DO UPDATE
    SET version = excluded.version, title = excluded.title, sha256 = excluded.sha256,
        rules_added = p.rules_added + excluded.rules_added, loaded_at = now();
END;
$$;
COMMENT ON FUNCTION cogmem.record_bios_preset(text, text, text, text, integer) IS
'Administrators: records that a preset (version, file hash) was loaded and how many of its rules were new.';
