-- Vectors: the embedding dimension (the column type decides it at install time) and the checks an
-- embedding passes before it is stored or compared.

CREATE OR REPLACE FUNCTION cogmem.embedding_dimensions()
RETURNS integer
LANGUAGE plpgsql STABLE SECURITY INVOKER PARALLEL SAFE
SET search_path = pg_catalog, cogmem, public, pg_temp
-- The column type is the single source of truth: the dimension is an install-time choice.
-- PL/pgSQL, not SQL: it caches the plan of its query for the session, and remember calls it every time.
AS $$
BEGIN
    RETURN (
        SELECT a.atttypmod FROM pg_catalog.pg_attribute AS a
        WHERE a.attrelid = 'cogmem.memories'::regclass AND a.attname = 'embedding'
    );
END;
$$;
COMMENT ON FUNCTION cogmem.embedding_dimensions() IS
'Dimension of stored embeddings (384 for all-MiniLM-L6-v2), read from the memories.embedding column.';

CREATE OR REPLACE FUNCTION cogmem._comparable(p_embedding public.vector)
RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, public, pg_temp
RETURN (p_embedding OPERATOR(public.<=>) p_embedding) < 0.001;  -- noqa: LT01
COMMENT ON FUNCTION cogmem._comparable(public.vector) IS
'Whether a vector has a direction cosine can compare (its cosine distance to itself is 0, not NaN).';

CREATE OR REPLACE FUNCTION cogmem._check_embedding(p_embedding public.vector)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_expected integer := cogmem.embedding_dimensions();
BEGIN
    IF p_embedding IS NOT NULL AND public.vector_dims(p_embedding) <> v_expected THEN
        RAISE EXCEPTION 'embedding has % dimensions, expected %', public.vector_dims(p_embedding), v_expected
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Embed with the model this schema was installed for, or pass NULL to embed here.';
    END IF;
    -- A vector whose cosine with itself is not 1 cannot be compared with anything: zero, or so small or
    -- so large that its norm under- or overflows. Its similarity would be NaN, which passes every
    -- threshold in PostgreSQL's ordering (NaN sorts above every number).
    IF p_embedding IS NOT NULL AND NOT cogmem._comparable(p_embedding) THEN
        RAISE EXCEPTION 'embedding cannot be compared: it is zero, or too small or too large in magnitude'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass a non-zero vector of ordinary magnitude (an L2-normalised embedding is), '
                         || 'or NULL to embed here.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._check_embedding(public.vector) IS
'Raises invalid_parameter_value when an embedding does not have the installed dimension.';
