-- Siblings: memories alike in all but their details (another host, version, environment). They are never
-- merged; recall shows which one it injected and that others exist.

-- Siblings, the read side (the night links them, sql/090-consolidation.sql). Set-based, for many memories
-- at once: recall needs the siblings of everything it injects, and a call per memory adds up where the
-- night had linked many look-alikes.
CREATE OR REPLACE FUNCTION cogmem._siblings_of(p_tenant text, p_memory_ids bigint[])
RETURNS TABLE (memory_id bigint, sibling_id bigint, content text, similarity real, differs text[])
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT m.memory_id, o.memory_id, o.content, l.similarity,
           ARRAY(SELECT unnest(cogmem._details(o.content)) EXCEPT SELECT unnest(cogmem._details(m.content)) ORDER BY 1)
    FROM cogmem.memories AS m
    JOIN cogmem.memory_siblings AS l
      ON l.tenant = m.tenant AND (l.memory_id = m.memory_id OR l.sibling_id = m.memory_id)
    JOIN cogmem.memories AS o
      ON o.tenant = m.tenant AND o.memory_id = CASE WHEN l.memory_id = m.memory_id THEN l.sibling_id ELSE l.memory_id END
    WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_memory_ids)
    ORDER BY m.memory_id, o.memory_id;
$$;
COMMENT ON FUNCTION cogmem._siblings_of(text, bigint[]) IS
'The siblings of each given memory, with the details that set each apart (cogmem.siblings for many).';

CREATE OR REPLACE FUNCTION cogmem.siblings(tenant text, memory_id bigint)
RETURNS TABLE (sibling_id bigint, content text, similarity real, differs text[])
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT cogmem._require_tenant($1);
    SELECT s.sibling_id, s.content, s.similarity, s.differs FROM cogmem._siblings_of($1, ARRAY[$2]) AS s;
$$;
COMMENT ON FUNCTION cogmem.siblings(text, bigint) IS
'Memories that look like this one but apply elsewhere, with the details that set each apart.';

DROP FUNCTION IF EXISTS cogmem._sibling_note(text, bigint);  -- one memory at a time; see _sibling_notes
CREATE OR REPLACE FUNCTION cogmem._sibling_notes(p_tenant text, p_memory_ids bigint[])
RETURNS TABLE (memory_id bigint, note text)
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT s.memory_id,
           'sibling ' || string_agg('#' || s.sibling_id || ' for ' || array_to_string(s.differs, ','), ', '
                                    ORDER BY s.sibling_id)
    FROM cogmem._siblings_of(p_tenant, p_memory_ids) AS s
    GROUP BY s.memory_id;
$$;
COMMENT ON FUNCTION cogmem._sibling_notes(text, bigint[]) IS
'The part of a recall reason that points at look-alike memories for other contexts, per memory.';
