-- Decay: a memory's Ebbinghaus strength from its age and its ring's half-life.

-- No SET search_path here, on purpose: it would stop PostgreSQL from inlining this expression into
-- recall's ranking query, where it runs for every candidate. It names only pg_catalog functions, which
-- are found first whatever the caller's search_path.
CREATE OR REPLACE FUNCTION cogmem.strength(age interval, half_life interval)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN CASE
    WHEN half_life IS NULL THEN 1.0
    -- date_part, not extract: double precision arithmetic; extract's numeric cost twice as much per row.
    ELSE exp(-ln(2) * greatest(date_part('epoch', age), 0) / date_part('epoch', half_life))
END;
COMMENT ON FUNCTION cogmem.strength(interval, interval) IS
'Ebbinghaus strength exp(-ln 2 * age / half_life); 1 for rings that never decay (half_life NULL).';
