-- Contradiction: does a new statement contradict an established memory (a rule, a long-term fact, a
-- habit, a procedure)? Found here, on the way in, for cogmem.remember() (sql/060-remember.sql): a
-- contradicting instruction is held as a conflict (cogmem._hold_conflict) and a contradicting fact is
-- stored, linked (cogmem._link_contradiction). Conflicts are listed and resolved in
-- sql/160-conflicts.sql, which comes after remember because resolving one may store the new memory.
--
-- Candidates are the established memories close to the statement: cosine at least
-- tenants.dissonance_similarity with an embedding, else two words in common. Of those, a logistic
-- regression over the pair's cues (below) decides, trained by bench/train_router.py on the train and dev
-- splits of bench/corpus/dissonance.jsonl (its weights in cogmem.routing_model, sql/025, model pair-embedding
-- or pair-cues; its threshold set for precision on out-of-fold predictions). The cues include the older
-- rule-based test, cogmem.contradicts(): opposite polarity, or an alternative to what an exclusive rule
-- insists on; an instruction that passes that test and shares most of its words is a conflict outright.
-- Shocks record what happened: they neither contradict nor are contradicted.

CREATE OR REPLACE FUNCTION cogmem.polarity(content text)
RETURNS smallint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- PL/pgSQL, not SQL: a SQL function with a SET clause is planned on every call.
AS $$
DECLARE
    v_turkish text;
BEGIN
    -- English negation and prohibition.
    IF content ~* ('\m(don''?t|do\s+not|doesn''?t|never|avoid|stop|no\s+longer|not|no|nothing|without|'
                   || 'mustn''?t|shouldn''?t|can''?t|cannot|won''?t|forbidden|prohibited)\M') THEN
        RETURN -1;
    END IF;
    -- Turkish: prohibition words, negative imperatives and negative verb forms (-ma/-me at the end of a
    -- sentence, -maz/-mez, -mıyor); only in Turkish text, where these endings mean that. A capital İ marks
    -- Turkish too, since folded, "SAKIN SİLME" has no Turkish letter left. Read folded once
    -- (cogmem._fold_turkish), so that capitals read as they are meant ("YENİDEN BAŞLATMA.").
    IF NOT (cogmem._looks_turkish(cogmem._fold(content)) OR strpos(content, 'İ') > 0) THEN
        RETURN 1;
    END IF;
    v_turkish := cogmem._fold_turkish(content);
    RETURN CASE
        WHEN v_turkish ~ ('(^|[^a-zçğöşü])(asla|sakin|yasak(tir)?|hiçbir\s+zaman|etme(yin|yiniz)?|'
                          || 'yapma(yin|yiniz)?)($|[^a-zçğöşü])')
          OR v_turkish ~ '[a-zçğöşü]{2,}(ma|me)(yin|yiniz)?\s*[.!]*\s*$'
          OR v_turkish ~ '[a-zçğöşü]{2,}(maz|mez|m[iuü]yor)(lar|ler|siniz|uz|üz)?($|[^a-zçğöşü])'
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
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY DEFINER
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

CREATE OR REPLACE FUNCTION cogmem._pair_cue_names()
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
RETURN ARRAY[
    'similarity', 'statement_share', 'established_share', 'two_shared', 'contradicts', 'polarity_flip',
    'choice_alternative', 'details_differ', 'details_same', 'change_marker', 'question', 'new_number',
    'feeling', 'first_person', 'established_rule', 'established_fact', 'established_procedure', 'also_marker',
    'exception_marker', 'turkish', 'statement_instruction', 'instruction_polarity_flip',
    'instruction_choice_alternative', 'instruction_contradicts'
];
COMMENT ON FUNCTION cogmem._pair_cue_names() IS
'Names of the cues of cogmem._pair_cues(), in the same order (the contradiction model''s columns).';

-- Signatures before the statement's cues were passed in.
DROP FUNCTION IF EXISTS cogmem._contradiction(text, text, text, double precision, regconfig, boolean);
DROP FUNCTION IF EXISTS cogmem._pair_cues(text, text, text, double precision, regconfig, boolean);

-- p_statement_cues are the statement's cogmem._inbound_cues (computed once by the caller, not once per
-- established memory it is compared with); p_similarity is the cosine of the two embeddings, NULL
-- without them; p_instruction whether the statement is an instruction (cogmem.classify).
CREATE OR REPLACE FUNCTION cogmem._pair_cues(
    p_established text, p_ring text, p_statement text, p_statement_cues real[], p_similarity double precision,
    p_language regconfig, p_instruction boolean
)
RETURNS real[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_old      text[] := coalesce(tsvector_to_array(to_tsvector(p_language, p_established)), '{}');
    v_new      text[] := coalesce(tsvector_to_array(to_tsvector(p_language, p_statement)), '{}');
    v_shared   integer;
    v_details  text[] := cogmem._details(p_established);
    v_other    text[] := cogmem._details(p_statement);
    v_cues     real[] := p_statement_cues;
    v_names    text[] := cogmem._inbound_cue_names();
    v_folded   text := ' ' || cogmem._fold(p_statement) || ' ';
    v_choice   text := cogmem._exclusive_choice(p_established);
    v_flip     boolean := cogmem.polarity(p_established) <> cogmem.polarity(p_statement);
    v_other_choice boolean;
    v_contradicts boolean := cogmem.contradicts(p_established, p_statement);
    v_instruction boolean := coalesce(p_instruction, false);
BEGIN
    v_other_choice := v_choice IS NOT NULL AND position(lower(v_choice) IN lower(p_statement)) = 0;
    v_shared := cardinality(ARRAY(SELECT unnest(v_old) INTERSECT SELECT unnest(v_new)));
    RETURN ARRAY[
        coalesce(p_similarity, 0),
        v_shared::real / greatest(cardinality(v_new), 1),
        v_shared::real / greatest(cardinality(v_old), 1),
        (v_shared >= 2)::integer,
        v_contradicts::integer,
        v_flip::integer,
        v_other_choice::integer,
        (v_details <> '{}' AND v_other <> '{}' AND v_details <> v_other)::integer,
        (v_details <> '{}' AND v_details = v_other)::integer,
        (v_folded ~ '[^a-zçğıöşü](now|no longer|anymore|any more|instead|switched|switch|moved|changed|upgraded|downgraded|replaced|left|new|from now on|starting|as of|stopped|quit|artık|yerine|değişti|değiştirdik|değiştirildi|geçtik|geçti|taşındı|taşıdık|ayrıldı|yeni|bundan sonra|bundan böyle|bıraktı|bıraktım)[^a-zçğıöşü]')::integer,
        v_cues[array_position(v_names, 'question')],
        (EXISTS (SELECT FROM unnest(v_other) AS d WHERE NOT d = ANY (v_details)))::integer,
        v_cues[array_position(v_names, 'feeling')],
        v_cues[array_position(v_names, 'first_person')],
        (p_ring = 'dos_and_donts')::integer,
        (p_ring IN ('long_term', 'habits'))::integer,
        (p_ring = 'procedures')::integer,
        (v_folded ~ '[^a-z](also|too|as well|additionally|ayrıca|aynı zamanda)[^a-z]')::integer,
        (v_folded ~ '[^a-zçğıöşü](except|unless|only if|but not|hariç|dışında|sadece bu|bu seferlik|just this once|this once)[^a-zçğıöşü]')::integer,
        v_cues[array_position(v_names, 'turkish')],
        v_instruction::integer,
        -- An instruction that reverses a rule is the conflict; a fact that merely negates is often not.
        (v_instruction AND v_flip)::integer,
        (v_instruction AND v_other_choice)::integer,
        (v_instruction AND v_contradicts)::integer
    ];
END;
$$;
COMMENT ON FUNCTION cogmem._pair_cues(text, text, text, real[], double precision, regconfig, boolean) IS
'Cues of an (established memory, new statement) pair, in the order of cogmem._pair_cue_names().';

CREATE OR REPLACE FUNCTION cogmem._pair_cue(p_cues public.vector, p_name text)
RETURNS real
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN (p_cues::real[])[array_position(cogmem._pair_cue_names(), p_name)];
END;
$$;
COMMENT ON FUNCTION cogmem._pair_cue(public.vector, text) IS 'One named cue of a pair''s cues.';

-- Whether a statement contradicts an established memory: the pair-embedding model with a cosine, the
-- pair-cues model without, each against its threshold.
DROP FUNCTION IF EXISTS cogmem._contradiction(text, text, text, real[], double precision, regconfig, boolean);
CREATE OR REPLACE FUNCTION cogmem._contradiction(
    p_established text, p_ring text, p_statement text, p_statement_cues real[], p_similarity double precision,
    p_language regconfig, p_instruction boolean, p_embedding_model text
)
RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_features public.vector := cogmem._pair_cues(p_established, p_ring, p_statement, p_statement_cues,
                                                  p_similarity, p_language, p_instruction)::public.vector;
    v_score    double precision;
    v_threshold real;
    v_model    text := CASE WHEN p_similarity IS NOT NULL THEN cogmem._dense_model('pair-embedding', p_embedding_model) END;
BEGIN
    -- An instruction that reverses a rule about the same things (the rule-based test: opposite polarity
    -- or another choice, two words and 40% of its words in common) is a conflict whatever the model
    -- says: held, a person decides, and nothing is lost.
    IF p_instruction AND cogmem._pair_cue(v_features, 'contradicts') = 1 AND cogmem._pair_cue(v_features, 'two_shared') = 1
       AND cogmem._pair_cue(v_features, 'statement_share') >= 0.4 THEN
        RETURN true;
    END IF;
    -- A cosine of a model no pair head was trained on is read as none (its scale is another).
    IF p_similarity IS NOT NULL AND v_model IS NULL THEN
        v_features := cogmem._pair_cues(p_established, p_ring, p_statement, p_statement_cues, NULL, p_language,
                                        p_instruction)::public.vector;
    END IF;
    SELECT m.bias - (m.weights OPERATOR(public.<#>) v_features), m.threshold INTO v_score, v_threshold
    FROM cogmem._routing_model_of(coalesce(v_model, 'pair-cues')) AS m
    WHERE m.head = 'contradicts' AND m.label = 'contradicts';
    RETURN 1 / (1 + exp(-least(greatest(v_score, -50), 50))) >= v_threshold;
END;
$$;
COMMENT ON FUNCTION cogmem._contradiction(text, text, text, real[], double precision, regconfig, boolean, text) IS
'Whether a new statement contradicts an established memory, by the contradiction model (sql/025) of the '
'embedding''s model (its cosine), else by the model without a cosine.';

-- A fact stored although it contradicts older memories: linked to them, and those that are not
-- protected (shocks, dos_and_donts are never weakened by a heuristic) lose half their confidence, so the
-- newer fact ranks first and the older one fades unless it is used. Statistics rows in memory_id order.
CREATE OR REPLACE FUNCTION cogmem._link_contradiction(
    p_tenant text, p_memory_id bigint, p_older bigint[], p_verdict text
)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_weakened bigint[];
BEGIN
    SELECT coalesce(array_agg(m.memory_id ORDER BY m.memory_id), '{}') INTO v_weakened
    FROM cogmem.memories AS m
    WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_older) AND m.ring NOT IN ('shocks', 'dos_and_donts');
    PERFORM cogmem._lock_stats(p_tenant, v_weakened);
    UPDATE cogmem.memory_stats AS s SET confidence = s.confidence * 0.5, reinforced = false
    WHERE s.tenant = p_tenant AND s.memory_id = ANY (v_weakened);
    INSERT INTO cogmem.memory_contradictions (tenant, memory_id, contradicts_id, verdict, weakened)
    SELECT p_tenant, p_memory_id, o.id, p_verdict, o.id = ANY (v_weakened)
    FROM unnest(p_older) AS o (id);
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    VALUES (p_tenant, 'metacognition', p_memory_id, 'contradiction_stored',
            jsonb_build_object('contradicts', to_jsonb(p_older), 'weakened', to_jsonb(v_weakened),
                               'verdict', p_verdict));
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    SELECT p_tenant, 'lifecycle', w.id, 'weakened', jsonb_build_object('by', 'contradiction', 'newer', p_memory_id)
    FROM unnest(v_weakened) AS w (id);
END;
$$;
COMMENT ON FUNCTION cogmem._link_contradiction(text, bigint, bigint[], text) IS
'Links a stored memory to the older memories it contradicts and halves the confidence of those that are '
'not in a protected ring; audited.';

-- The established memories a text may duplicate (close_ids, by sign bits) and those the contradiction
-- model says it contradicts (conflict_ids), within the text's scope (sql/015-scopes.sql): one person's
-- statement is never another's duplicate or contradiction. Named contradictions (p_contradicts
-- non-empty) skip both.
DROP FUNCTION IF EXISTS cogmem._detect_conflicts(
    text, regconfig, text, cogmem.ring, boolean, public.vector, real, bigint[], boolean
);  -- before 0035: no scope
CREATE OR REPLACE FUNCTION cogmem._detect_conflicts(
    p_tenant text, p_language regconfig, p_content text, p_ring cogmem.ring, p_instruction boolean,
    p_embedding public.vector, p_diss_sim real, p_contradicts bigint[], p_near_duplicates boolean,
    p_person text, p_agent text,
    OUT close_ids bigint[], OUT conflict_ids bigint[]
)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_bits_radius integer;
    v_bits        bit(384);
    v_words       text[];
    v_cues        real[];
    v_model       text := cogmem._embedding_model_of(p_tenant);
    v_indexed     boolean := cogmem._tenant_indexed(p_tenant);
BEGIN
    IF cardinality(p_contradicts) > 0 THEN
        conflict_ids := p_contradicts;
        RETURN;
    END IF;
    -- Full vectors are compared only for memories within a radius of sign bits (cosine 0.92, the
    -- near-duplicate default, is ~50 of 384 bits apart; cosine 0.4, the dissonance default, ~142): those
    -- bits come from an index-only scan. The radius is the expected distance plus dims/16 bits (~2.5
    -- standard deviations), at least a quarter of the bits. A near-duplicate beyond it would still be
    -- merged by the nightly consolidation. Two statements, so that no plan compares bits per row pair.
    v_bits_radius := cogmem.embedding_dimensions() / 4;
    -- An incident is what happened, not an instruction: it neither contradicts nor is contradicted.
    IF p_contradicts IS NULL AND p_ring = 'shocks' THEN
        p_contradicts := '{}';
    END IF;
    IF p_contradicts IS NULL THEN
        v_bits_radius := greatest(v_bits_radius, ceil(cogmem.embedding_dimensions() * acos(p_diss_sim) / pi())::integer + cogmem.embedding_dimensions() / 16);
        v_words := coalesce(tsvector_to_array(to_tsvector(p_language, p_content)), '{}');
        v_cues := cogmem._inbound_cues(p_content);  -- once, for every established memory compared
    END IF;
    IF p_embedding IS NOT NULL AND (p_near_duplicates OR p_contradicts IS NULL) THEN
        v_bits := public.binary_quantize(p_embedding)::bit(384);  -- once, not per compared row
        SELECT array_agg(b.memory_id) INTO close_ids
        FROM cogmem.memories AS b
        WHERE NOT v_indexed AND b.tenant = p_tenant AND b.embedding_bits OPERATOR(public.<~>) v_bits <= v_bits_radius
          AND cogmem._same_scope(b.person, b.agent, p_person, p_agent);
        -- A large tenant with its own index (sql/016-large-tenants.sql): its nearest within the same radius.
        IF v_indexed THEN
            close_ids := cogmem._nearest_within(p_tenant, p_embedding,
                                                cos(pi() * v_bits_radius / cogmem.embedding_dimensions()),
                                                p_person, p_agent);
        END IF;
        -- Contradiction (sql/035-contradiction.sql): an established memory close in meaning that the
        -- contradiction model says this text contradicts.
        IF close_ids IS NOT NULL AND p_contradicts IS NULL THEN
            SELECT array_agg(m.memory_id ORDER BY m.memory_id) INTO conflict_ids
            FROM cogmem.memories AS m
            CROSS JOIN LATERAL (SELECT 1 - (m.embedding OPERATOR(public.<=>) p_embedding) AS similarity) AS c
            WHERE m.tenant = p_tenant AND m.memory_id = ANY (close_ids) AND m.ring NOT IN ('fresh', 'shocks')
              AND c.similarity >= p_diss_sim
              AND cogmem._contradiction(m.content, m.ring::text, p_content, v_cues, c.similarity, p_language,
                                        p_instruction, v_model);
        END IF;
    ELSIF p_contradicts IS NULL THEN
        -- No embedding: closeness is two words in common, and the model without a cosine decides, for the
        -- 50 that share the most: every pair is read by the model, and in a large tenant the pairs that
        -- share two words were hundreds a call (docs/scaling.md).
        SELECT array_agg(m.memory_id ORDER BY m.memory_id) INTO conflict_ids
        FROM (SELECT a.memory_id, a.content, a.ring
              FROM cogmem.memories AS a, cogmem._or_query(v_words) AS q (query)
              WHERE a.tenant = p_tenant AND a.ring NOT IN ('fresh', 'shocks')
                AND cogmem._same_scope(a.person, a.agent, p_person, p_agent)
                AND a.search @@ q.query AND cogmem._shared_words(a.search, v_words) >= 2
              ORDER BY ts_rank(a.search, q.query) DESC, a.memory_id DESC
              LIMIT 50) AS m
        WHERE cogmem._contradiction(m.content, m.ring::text, p_content, v_cues, NULL, p_language, p_instruction, NULL);
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._detect_conflicts(
    text, regconfig, text, cogmem.ring, boolean, public.vector, real, bigint[], boolean, text, text
) IS
'The memories of the same scope close to a text in meaning, and those it contradicts by the contradiction '
'model.';

-- Held, not stored and not merged: a person (or the caller's judge) resolves it (sql/160-conflicts.sql).
CREATE OR REPLACE FUNCTION cogmem._hold_conflict(
    p_tenant text, p_content text, p_ring cogmem.ring, p_topics text[], p_embedding public.vector, p_source jsonb,
    p_redactions text[], p_conflicts bigint[], p_verdict text
)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_conflict_id bigint;
BEGIN
    INSERT INTO cogmem.conflicts AS c (tenant, content, ring, topics, embedding, source, redactions,
                                       conflicts_with, verdict)
    VALUES (p_tenant, p_content, p_ring, p_topics, p_embedding, p_source, p_redactions, p_conflicts, p_verdict)
    RETURNING c.conflict_id INTO v_conflict_id;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (p_tenant, 'metacognition', 'conflict_opened',
            jsonb_build_object('conflict_id', v_conflict_id, 'conflicts_with', to_jsonb(p_conflicts),
                               'verdict', p_verdict, 'ring', p_ring, 'topics', to_jsonb(p_topics),
                               'redactions', to_jsonb(p_redactions)));
    RETURN v_conflict_id;
END;
$$;
COMMENT ON FUNCTION cogmem._hold_conflict(
    text, text, cogmem.ring, text[], public.vector, jsonb, text[], bigint[], text
) IS
'Holds an instruction that contradicts established memories as an open conflict; audited. Returns its id.';
