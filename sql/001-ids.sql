-- Ids that carry their tenant: the routing key a router in front of shards partitions by (docs/scaling.md),
-- and the random ids (a recall's, a session's) that begin with it.

-- A tenant's routing key: the partition key of a router in front of shards (docs/scaling.md). Ids that
-- calls take without the tenant (a recall's, a session's) begin with it, so the router can route them.
-- Like cogmem.strength: no SET search_path, so that it can be inlined.
CREATE OR REPLACE FUNCTION cogmem._tenant_key(p_tenant text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN pg_catalog.hashtext(p_tenant) & 2147483647;
COMMENT ON FUNCTION cogmem._tenant_key(text) IS 'A tenant''s routing key: its hashtext, non-negative.';

CREATE OR REPLACE FUNCTION cogmem._keyed_uuid(p_tenant text)
RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
-- A random (version 4) UUID whose first 32 bits are the tenant's key: 90 random bits remain.
RETURN encode(pg_catalog.overlay(uuid_send(gen_random_uuid()), int4send(cogmem._tenant_key(p_tenant)), 1, 4), 'hex')::uuid;
COMMENT ON FUNCTION cogmem._keyed_uuid(text) IS 'A random UUID that begins with the tenant''s routing key.';
