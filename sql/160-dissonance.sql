-- Dissonance: an instruction that contradicts an established memory is neither obeyed silently nor
-- stored over it. cogmem.remember() holds it in cogmem.conflicts and answers action = 'conflict' with
-- the memories it contradicts, until cogmem.resolve_conflict() decides:
--   paradigm_shift  the old memory was wrong: it drops to fresh with confidence 0.1 (and fades), the new
--                   one is stored, and the correction counts against trust (-3);
--   exception       the old memory stands: this once only, nothing is stored;
--   override        act now and keep both; the next night's consolidation reviews it.
-- Open conflicts are listed by cogmem.open_conflicts() and noted on the memories recall injects.
--
-- Established memories are the rules, long-term facts, habits and procedures: not fresh ones, and not
-- incidents (a shock records what happened, so it neither contradicts a rule nor is contradicted by one:
-- "Outage after a night restart" and "Never restart at night" agree). An instruction contradicts one
-- when it is close in meaning (cosine from tenants.dissonance_similarity, 0.4: MiniLM puts "Don't
-- restart web-1 at night" and "Restart web-1 tonight" at 0.81, "Always use Tailwind" and "Use inline
-- styles" at 0.42, unrelated operations notes below 0.15; without embeddings this test is skipped),
-- about the same things (at least two and 40% of the instruction's words in common: a runbook step
-- "restart nginx" is no answer to "don't restart the server at night"), and cogmem.contradicts() says so.
-- Callers with a better judge (an LLM) pass their verdict as remember's contradicts argument: the memory
-- ids it contradicts, or '{}' for none.

CREATE OR REPLACE FUNCTION cogmem.polarity(content text)
RETURNS smallint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- PL/pgSQL, not SQL: a SQL function with a SET clause is planned on every call.
AS $$
BEGIN
    RETURN CASE
        -- English negation and prohibition.
        WHEN content ~* ('\m(don''?t|do\s+not|doesn''?t|never|avoid|stop|no\s+longer|not|no|nothing|without|'
                         || 'mustn''?t|shouldn''?t|can''?t|cannot|won''?t|forbidden|prohibited)\M')
        -- Turkish: prohibition words, negative imperatives and negative verb forms (-ma/-me at the end of
        -- a sentence, -maz/-mez, -mıyor).
          OR content ~* '(^|[^a-zçğıöşü])(asla|sakın|yasak(tır)?|hiçbir\s+zaman|etme(yin|yiniz)?|yapma(yın|yınız)?)($|[^a-zçğıöşü])'
          OR content ~* '[a-zçğıöşü]{2,}(ma|me)(yın|yin|yınız|yiniz)?\s*[.!]*\s*$'
          OR content ~* '[a-zçğıöşü]{2,}(maz|mez|m[ıiuü]yor)(lar|ler|sınız|siniz|uz|üz)?($|[^a-zçğıöşü])'
            THEN -1
        ELSE 1
    END;
END;
$$;
COMMENT ON FUNCTION cogmem.polarity(text) IS
'-1 when a text negates or forbids (English and Turkish: don''t, never, avoid, asla, yapma, ...-ma, ...-maz), '
'else 1.';

CREATE OR REPLACE FUNCTION cogmem._exclusive_choice(content text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN coalesce(
        (regexp_match(content, '\m(?:always|only)\s+(?:use|run|pick|choose|go\s+with|deploy\s+(?:with|to|on))\s+'
                               || '(?:the\s+|an?\s+)?([[:alnum:]_.+#-]+)', 'i'))[1],
        (regexp_match(content, '\muse\s+only\s+(?:the\s+|an?\s+)?([[:alnum:]_.+#-]+)', 'i'))[1],
        (regexp_match(content, '(?:her\s+zaman|sadece|yalnızca|daima|mutlaka)\s+([[:alnum:]_.+#-]+?)(?:''[[:alpha:]]+)?\s+'
                               || '(?:kullan|çalıştır|seç)', 'i'))[1]
    );
END;
$$;
COMMENT ON FUNCTION cogmem._exclusive_choice(text) IS
'What an exclusive rule insists on: "Always use Tailwind" -> Tailwind (also only/use only, her zaman/sadece).';

CREATE OR REPLACE FUNCTION cogmem.contradicts(established text, instruction text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_choice  text := cogmem._exclusive_choice(established);
    v_details text[] := cogmem._details(established);
    v_other   text[] := cogmem._details(instruction);
BEGIN
    -- Different hosts, versions or environments: look-alikes for other contexts (siblings), no conflict.
    IF v_details <> '{}' AND v_other <> '{}' AND v_details <> v_other THEN
        RETURN false;
    END IF;
    RETURN cogmem.polarity(established) <> cogmem.polarity(instruction)
        -- An alternative to an exclusive choice: "use inline styles" against "always use Tailwind".
        OR (v_choice IS NOT NULL AND cogmem.polarity(instruction) = 1
            AND position(lower(v_choice) IN lower(instruction)) = 0);
END;
$$;
COMMENT ON FUNCTION cogmem.contradicts(text, text) IS
'Whether an instruction contradicts an established memory about the same thing: opposite polarity '
'(cogmem.polarity), or an alternative to what an exclusive rule insists on; never across different '
'discriminating details (hosts, versions, environments). Closeness is the caller''s test.';

CREATE OR REPLACE FUNCTION cogmem.open_conflicts(tenant text)
RETURNS TABLE (
    conflict_id bigint, content text, conflicts_with bigint[], established text[], verdict text,
    opened_at timestamptz
)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._tenant_language(open_conflicts.tenant);
    RETURN QUERY
    SELECT c.conflict_id, c.content, c.conflicts_with,
           ARRAY(SELECT m.content FROM unnest(c.conflicts_with) WITH ORDINALITY AS w (id, n)
                 JOIN cogmem.memories AS m ON m.tenant = c.tenant AND m.memory_id = w.id ORDER BY w.n),
           c.verdict, c.opened_at
    FROM cogmem.conflicts AS c
    WHERE c.tenant = open_conflicts.tenant AND c.status = 'open'
    ORDER BY c.conflict_id;
END;
$$;
COMMENT ON FUNCTION cogmem.open_conflicts(text) IS
'Unresolved conflicts of a tenant: the held instruction, the memories it contradicts and their text.';

CREATE OR REPLACE FUNCTION cogmem.resolve_conflict(conflict_id bigint, resolution text, note text DEFAULT NULL)
RETURNS TABLE (status text, memory_id bigint, weakened bigint[])
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_conflict cogmem.conflicts;
    v_stored   bigint;
    v_weakened bigint[] := '{}';
BEGIN
    IF resolve_conflict.resolution IS NULL
       OR resolve_conflict.resolution NOT IN ('paradigm_shift', 'exception', 'override') THEN
        RAISE EXCEPTION 'unknown resolution "%"', coalesce(resolve_conflict.resolution, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'paradigm_shift (the old memory was wrong), exception (this once, keep the old) or '
                         || 'override (act now, keep both, review tonight).';
    END IF;
    SELECT * INTO v_conflict FROM cogmem.conflicts AS c WHERE c.conflict_id = resolve_conflict.conflict_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown conflict %', coalesce(resolve_conflict.conflict_id::text, 'NULL')
            USING ERRCODE = 'no_data_found', HINT = 'Pass a conflict_id from remember() or open_conflicts().';
    END IF;
    PERFORM cogmem._lock_tenant(v_conflict.tenant, false);
    -- Again, locked: of two people resolving at once, the second sees the first's decision.
    SELECT * INTO v_conflict FROM cogmem.conflicts AS c
    WHERE c.tenant = v_conflict.tenant AND c.conflict_id = resolve_conflict.conflict_id
    FOR UPDATE;
    IF v_conflict.status <> 'open' THEN
        RAISE EXCEPTION 'conflict % is already resolved (%)', v_conflict.conflict_id, v_conflict.status
            USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'See cogmem.open_conflicts() for open ones.';
    END IF;

    IF resolve_conflict.resolution = 'paradigm_shift' THEN
        -- The old belief was wrong: out of its ring, little confidence left, so it fades and is forgotten.
        UPDATE cogmem.memory_stats AS s SET confidence = least(s.confidence, 0.1), reinforced = false
        WHERE s.tenant = v_conflict.tenant AND s.memory_id = ANY (v_conflict.conflicts_with);
        WITH moved AS (
            UPDATE cogmem.memories AS m SET ring = 'fresh', updated_at = now()
            WHERE m.tenant = v_conflict.tenant AND m.memory_id = ANY (v_conflict.conflicts_with)
            RETURNING m.memory_id
        )
        SELECT coalesce(array_agg(mv.memory_id ORDER BY mv.memory_id), '{}') INTO v_weakened FROM moved AS mv;
        INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
        SELECT v_conflict.tenant, 'lifecycle', w.id, 'weakened',
               jsonb_build_object('by', 'paradigm_shift', 'conflict_id', v_conflict.conflict_id)
        FROM unnest(v_weakened) AS w (id);
        PERFORM cogmem._trust_event(v_conflict.tenant, 'correction',
                                    format('paradigm shift (conflict %s)', v_conflict.conflict_id), v_weakened[1]);
    END IF;
    IF resolve_conflict.resolution IN ('paradigm_shift', 'override') THEN
        -- Stored through the normal path, never merged into a memory it contradicts.
        SELECT r.memory_id INTO v_stored
        FROM cogmem._remember(v_conflict.tenant, v_conflict.content, v_conflict.ring::text, v_conflict.topics,
                              v_conflict.embedding, v_conflict.source, '{}', v_conflict.conflicts_with) AS r;
    END IF;

    UPDATE cogmem.conflicts AS c
    SET status = resolve_conflict.resolution, resolved_at = now(), resolved_by = current_user,
        note = (cogmem.redact(resolve_conflict.note)).redacted, memory_id = v_stored
    WHERE c.tenant = v_conflict.tenant AND c.conflict_id = v_conflict.conflict_id;
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (v_conflict.tenant, 'metacognition', v_stored, 'conflict_resolved',
            jsonb_build_object('conflict_id', v_conflict.conflict_id, 'resolution', resolve_conflict.resolution,
                               'conflicts_with', to_jsonb(v_conflict.conflicts_with), 'weakened', to_jsonb(v_weakened)));
    RETURN QUERY SELECT resolve_conflict.resolution, v_stored, v_weakened;
END;
$$;
COMMENT ON FUNCTION cogmem.resolve_conflict(bigint, text, text) IS
'Decides an open conflict: paradigm_shift (weaken the old memories, store the new), exception (store '
'nothing) or override (store the new, keep both, reviewed at night). Returns what was stored and weakened.';
