-- The inbound router's model (see sql/030-routing.sql) is data: cogmem_pg/data/routing-model.json, written
-- by bench/train_router.py with its sha256 pinned beside it, and loaded into cogmem.routing_model,
-- cogmem.routing_terms and cogmem.routing_model_version by the installer (cogmem_pg.migrate). These
-- functions are the only readers, in PL/pgSQL where it matters: their plans are kept for the session, not
-- made again on every call.

-- Before 0031 the weights were literals of these functions, and the terms one jsonb per head.
DROP FUNCTION IF EXISTS cogmem._routing_terms();

CREATE OR REPLACE FUNCTION cogmem._routing_model_cues()
RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$ SELECT v.cues FROM cogmem.routing_model_version AS v $$;
COMMENT ON FUNCTION cogmem._routing_model_cues() IS
'The cues the routing model was trained on, in order (cogmem._inbound_cue_names() must match).';

DROP FUNCTION IF EXISTS cogmem._routing_model();  -- every row, returned in full before a caller's WHERE

-- One model's rows: a plpgsql function returns every row it selects before its caller's WHERE applies, and
-- since the hidden layers (a thousand vectors of 384 numbers) reading every row on each score (as
-- _routing_model() did until issue 48) cost more than the rest of a classify. NULL names no model.
CREATE OR REPLACE FUNCTION cogmem._routing_model_of(p_model text)
RETURNS TABLE (
    model text, head text, label text, slot integer, bias real, threshold real,
    candidate_threshold real, weights public.vector
)
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT m.model, m.head, m.label, m.slot, m.bias, m.threshold, m.candidate_threshold, m.weights
    FROM cogmem.routing_model AS m
    WHERE m.model = p_model;
END;
$$;
COMMENT ON FUNCTION cogmem._routing_model_of(text) IS
'The routing model''s rows of P_MODEL (none for NULL; models embedding, cues, pair-embedding, pair-cues, '
'hidden, ...; -long for long texts, cogmem._is_long): per head and label, the label''s slot in its head, the '
'bias, the threshold a never-cut ring, an instruction or a contradiction needs, that of a candidate, and '
'the weights of the dense features.';

-- A term said twice counts twice, as it did when the terms were one jsonb per head.
CREATE OR REPLACE FUNCTION cogmem._routing_term_scores(p_model text, p_terms text[])
RETURNS TABLE (head text, slot integer, score double precision)
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT t.head, (w.n - 1)::integer, sum(w.weight)
    FROM unnest(p_terms) AS s (term)
    JOIN cogmem.routing_terms AS t ON t.model = p_model AND t.term = s.term
    CROSS JOIN LATERAL unnest(t.weights) WITH ORDINALITY AS w (weight, n)
    GROUP BY t.head, w.n;
END;
$$;
COMMENT ON FUNCTION cogmem._routing_term_scores(text, text[]) IS
'Per head and label slot of a routing model, the sum of the weights of the given terms (those the '
'model knows).';

-- A model's probability of each label, per head: bias - weights · features + the weights of the terms,
-- softmax per head (shifted by the head's largest score, so that exp() cannot overflow). The router
-- (sql/030-routing.sql) and the follow-up judge (sql/059-followup.sql) both score this way.
CREATE OR REPLACE FUNCTION cogmem._model_scores(p_model text, p_features public.vector, p_terms text[])
RETURNS TABLE (head text, label text, probability double precision, threshold real, candidate_threshold real)
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN QUERY
    WITH scores AS (
        SELECT m.head, m.label, m.threshold, m.candidate_threshold,
               m.bias - (m.weights OPERATOR(public.<#>) p_features) + coalesce(ts.score, 0) AS score  -- <#>: minus the dot product
        FROM cogmem._routing_model_of(p_model) AS m
        LEFT JOIN cogmem._routing_term_scores(p_model, p_terms) AS ts ON ts.head = m.head AND ts.slot = m.slot
    ),
    shifted AS (
        SELECT s.head, s.label, s.threshold, s.candidate_threshold,
               exp(s.score - max(s.score) OVER (PARTITION BY s.head)) AS e
        FROM scores AS s
    )
    SELECT x.head, x.label, x.e / sum(x.e) OVER (PARTITION BY x.head), x.threshold, x.candidate_threshold
    FROM shifted AS x;
END;
$$;
COMMENT ON FUNCTION cogmem._model_scores(text, public.vector, text[]) IS
'A routing model''s probability of each label per head for the given dense features and terms, with the '
'label''s thresholds.';

-- A dense head may read, beside the embedding, what a small network made of it: the router's ring
-- probabilities by one hidden layer of rectified units over the embedding (bench/train_router.py,
-- issue 48). A linear head over a sentence vector sees its topic more than what it does ("text, don't
-- call" is a standing wish, "text me when you land" is not); the hidden layer learns that, and the linear
-- head weighs it with the cues and terms. Its rows are models of their own: P_HIDDEN, one row per unit
-- (bias, weights over the embedding), and P_OUTPUT, one per ring (bias, weights over the units, scored by
-- _model_scores). Returns each ring's log-probability in slot order, never below ln(1e-6) as in training;
-- NULL without the rows.
CREATE OR REPLACE FUNCTION cogmem._hidden_layer_features(p_hidden text, p_output text, p_embedding public.vector)
RETURNS public.vector
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_units public.vector;
BEGIN
    SELECT array_agg(greatest(0, m.bias - (m.weights OPERATOR(public.<#>) p_embedding)) ORDER BY m.slot)::public.vector
    INTO v_units
    FROM cogmem._routing_model_of(p_hidden) AS m;
    IF v_units IS NULL THEN
        RETURN NULL;
    END IF;
    -- The output's labels are the rings, their slots in the trainer's (sorted) order.
    RETURN (SELECT array_agg(ln(greatest(s.probability, 1e-6)) ORDER BY s.label)::public.vector
            FROM cogmem._model_scores(p_output, v_units, '{}') AS s);
END;
$$;
COMMENT ON FUNCTION cogmem._hidden_layer_features(text, text, public.vector) IS
'The ring log-probabilities (slot order, at least ln(1e-6)) of the router''s hidden layer over an embedding: '
'P_HIDDEN''s rectified units, then P_OUTPUT''s softmax; NULL when P_HIDDEN has no rows.';

-- The dense heads read one embedding model's vectors: MiniLM's keep the names they had (embedding,
-- embedding-long, pair-embedding, followup-embedding), another model's carry its name after an @
-- (embedding@multilingual-e5-small-q4). A model no head was trained on gets NULL: its caller decides by
-- the cues alone, never by weights that read another space (which could put a casual sentence in a
-- never-cut ring).
CREATE OR REPLACE FUNCTION cogmem._dense_model(p_base text, p_embedding_model text)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_model text := coalesce(p_embedding_model, nullif(current_setting('cogmem.embedding_model', true), ''),
                             'all-MiniLM-L6-v2-onnx-int8');
    v_name  text := p_base || CASE WHEN v_model = 'all-MiniLM-L6-v2-onnx-int8' THEN '' ELSE '@' || v_model END;
BEGIN
    RETURN CASE WHEN EXISTS (SELECT FROM cogmem.routing_model AS m WHERE m.model = v_name) THEN v_name END;
END;
$$;
COMMENT ON FUNCTION cogmem._dense_model(text, text) IS
'The routing model of a dense head (embedding, embedding-long, pair-embedding, followup-embedding) for an '
'embedding model (NULL: the session''s cogmem.embedding_model, else MiniLM); NULL when none was trained on it.';
