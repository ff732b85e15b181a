-- Append-only tables (the audit trail, BIOS rules and preset loads, episodes' records): a trigger refuses
-- UPDATE, DELETE and TRUNCATE and says what to do instead.

CREATE OR REPLACE FUNCTION cogmem._refuse_change()
RETURNS trigger
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION '% on %.% is not allowed: % rows are immutable', tg_op, tg_table_schema, tg_table_name,
        tg_table_name
        USING ERRCODE = 'object_not_in_prerequisite_state',
              HINT = CASE WHEN tg_table_name LIKE 'audit_log%' THEN 'The audit trail is append-only. Erasure '
                          'leaves a tombstone instead: cogmem.erase(tenant, memory_id, reason).' ELSE CASE tg_table_name
                  WHEN 'bios_rules' THEN 'Retire a rule with cogmem.retire_bios_rule(rule_id, reason) and add a new one.'
                  WHEN 'bios_preset_loads' THEN 'Load a new version of the preset: cogmem.load_bios_preset(...).'
                  WHEN 'audit_chain' THEN 'The audit trail is append-only; cogmem.verify_audit() checks it.'
                  ELSE 'These rows are append-only.'
              END END;
END;
$$;
COMMENT ON FUNCTION cogmem._refuse_change() IS
'Trigger function that refuses UPDATE, DELETE and TRUNCATE on append-only tables.';
