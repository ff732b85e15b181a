-- In-database embedding. When PostgreSQL's own Python can import cogmem_pg with the [embed] extra,
-- cogmem.embed() runs all-MiniLM-L6-v2 inside the server; otherwise it returns NULL and memories are
-- found by full text, and the first call of a session says why in a WARNING (an ordinary server's
-- Python has no cogmem_pg: that must cost a feature, not every remember). `SET cogmem.embed = off`
-- switches it off for a session (it costs milliseconds per call); callers that embed on the client side
-- never reach it. PL/Python is untrusted: only a superuser can create it, so without one the
-- NULL-returning SQL version is installed.

DO $install$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_available_extensions WHERE name = 'plpython3u')
       AND (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        CREATE EXTENSION IF NOT EXISTS plpython3u;
        EXECUTE $body$
        CREATE OR REPLACE FUNCTION cogmem.embed(content text)
        RETURNS public.vector
        LANGUAGE plpython3u STABLE STRICT PARALLEL SAFE SECURITY INVOKER
        SET search_path = pg_catalog, cogmem, public, pg_temp
        AS $py$
if plpy.execute("SELECT current_setting('cogmem.embed', true) AS v")[0]["v"] == "off":
    return None
if "cogmem_embed" not in GD:
    GD["cogmem_embed"] = None
    try:
        from cogmem_pg.embed import server_embed
        GD["cogmem_embed"] = server_embed
    except Exception as exc:
        import sys
        plpy.warning(f"cogmem.embed() returns NULL in this session: PostgreSQL's Python cannot import cogmem_pg ({exc})",
                     hint=f"Install cogmem-pg[embed] for the server's Python ({sys.version.split()[0]} in {sys.prefix}), "
                          "or embed on the client (the Python client does by default); SET cogmem.embed = off silences this.")
return GD["cogmem_embed"] and GD["cogmem_embed"](content, GD, plpy.warning)
        $py$
        $body$;
    ELSIF NOT EXISTS (SELECT FROM pg_catalog.pg_proc
                      WHERE proname = 'embed' AND pronamespace = 'cogmem'::regnamespace) THEN
        EXECUTE $body$
        CREATE FUNCTION cogmem.embed(content text)
        RETURNS public.vector
        LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY INVOKER
        SET search_path = pg_catalog, cogmem, public, pg_temp
        AS 'SELECT NULL::public.vector'
        $body$;
    END IF;
END;
$install$;
COMMENT ON FUNCTION cogmem.embed(text) IS
'Embeds text inside the server (all-MiniLM-L6-v2, 384 dimensions) when PostgreSQL''s Python has '
'cogmem-pg[embed] and the setting cogmem.embed is not off; NULL otherwise (the first call of a session '
'says why in a WARNING).';

CREATE OR REPLACE FUNCTION cogmem.server_can_embed()
RETURNS boolean
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$ SELECT cogmem.embed('probe') IS NOT NULL $$;
COMMENT ON FUNCTION cogmem.server_can_embed() IS 'True when cogmem.embed() works in this server.';
