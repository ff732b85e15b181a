-- Resource memory (migration 0036): documents a user shared (runbooks, policies, templates, contracts),
-- kept whole and recalled by the part that answers.
--
-- A document is redacted, then chunked by its structure: Markdown headings open sections; a section is
-- one chunk while it fits tenants.resource_chunk_tokens, else it is cut between paragraphs, list items
-- or sentences (code blocks stay whole when they can); nothing is dropped. Each chunk keeps its heading
-- path and is embedded with its title and headings, so that "§ Promote the replica" is found by what
-- the section is about. A new version of a title (in one scope) supersedes the old chunks, which stay for
-- the audit; resources do not decay by the Ebbinghaus clock.
--
-- Recall (sql/070-recall.sql) fills a 'resources' layer with the chunks most relevant to the message,
-- by the same fusion of full text and meaning as memories, each cited as "title § heading".

-- A block (paragraph, list, code) longer than p_max characters, cut into pieces that fit: between list
-- items, else sentences, else words. Every character of the block is in exactly one piece.
CREATE OR REPLACE FUNCTION cogmem._split_block(p_block text, p_max integer)
RETURNS SETOF text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_parts text[];
    v_piece text := '';
    v_part  text;
    -- Read once: the loop below must not look at the whole block per part (quadratic in a long block).
    v_code  boolean := p_block ~ '^\s{0,3}(```|~~~)';
    v_run   integer;
BEGIN
    IF length(p_block) <= p_max THEN
        RETURN NEXT p_block;
        RETURN;
    END IF;
    -- Code by its lines; list items (a line that starts with a marker), else sentences, else words.
    v_parts := CASE WHEN v_code THEN regexp_split_to_array(p_block, '\n')
                    ELSE regexp_split_to_array(p_block, '\n(?=\s*([-*+]|\d+[.)])\s)') END;
    IF cardinality(v_parts) < 2 THEN
        v_parts := regexp_split_to_array(p_block, '(?<=[.!?…:;])\s+');
    END IF;
    IF cardinality(v_parts) < 2 THEN
        v_parts := regexp_split_to_array(p_block, '\s+');
    END IF;
    FOREACH v_part IN ARRAY v_parts LOOP
        IF v_piece <> '' AND length(v_piece) + 1 + length(v_part) > p_max THEN
            RETURN NEXT v_piece;
            v_piece := '';
        END IF;
        IF length(v_part) > p_max AND cardinality(v_parts) > 1 THEN
            RETURN QUERY SELECT * FROM cogmem._split_block(v_part, p_max);
        ELSIF length(v_part) > p_max THEN
            -- One word longer than a chunk (a key, a URL): cut, never dropped. By one pass of a regular
            -- expression in runs of v_run characters (a divisor of p_max, as a bound may be 255 at most), p_max
            -- characters a piece: substr at each offset counts the characters before it again (quadratic).
            v_run := (SELECT max(d) FROM generate_series(1, least(p_max, 255)) AS d WHERE p_max % d = 0);
            RETURN QUERY
            SELECT string_agg(m.run[1], '' ORDER BY m.o)
            FROM regexp_matches(v_part, '.{1,' || v_run || '}', 'g') WITH ORDINALITY AS m (run, o)
            GROUP BY (m.o - 1) / (p_max / v_run)
            ORDER BY (m.o - 1) / (p_max / v_run);
        ELSE
            v_piece := CASE WHEN v_piece = '' THEN v_part
                            WHEN v_code OR v_part ~ '^\s*([-*+]|\d+[.)])\s'
                                THEN v_piece || E'\n' || v_part
                            ELSE v_piece || ' ' || v_part END;
        END IF;
    END LOOP;
    IF v_piece <> '' THEN
        RETURN NEXT v_piece;
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._split_block(text, integer) IS
'A block longer than p_max characters in pieces that fit, cut between list items, sentences or words.';

-- A section's blocks packed into chunks of at most p_max characters, in order.
CREATE OR REPLACE FUNCTION cogmem._pack_blocks(p_blocks text[], p_max integer)
RETURNS SETOF text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_chunk text := '';
    v_piece text;
BEGIN
    FOR v_piece IN SELECT k.piece FROM unnest(p_blocks) AS b (block), cogmem._split_block(b.block, p_max) AS k (piece) LOOP
        IF v_chunk <> '' AND length(v_chunk) + 2 + length(v_piece) > p_max THEN
            RETURN NEXT v_chunk;
            v_chunk := '';
        END IF;
        v_chunk := CASE WHEN v_chunk = '' THEN v_piece ELSE v_chunk || E'\n\n' || v_piece END;
    END LOOP;
    IF v_chunk <> '' THEN
        RETURN NEXT v_chunk;
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._pack_blocks(text[], integer) IS
'A section''s blocks as chunks of at most p_max characters: whole blocks together while they fit.';

-- Markdown (or plain text) by structure. Longer than a screen as one pass over the lines: headings,
-- code fences and blank lines decide where blocks and sections end.
CREATE OR REPLACE FUNCTION cogmem.chunk_text(body text, max_tokens bigint DEFAULT 160)
RETURNS TABLE (chunk integer, heading text, content text)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- Definer: applications may cut a text as add_resource would, but the helpers it cuts with (_pack_blocks,
-- _split_block) are internal. It reads no table and names no tenant, so there is no reach to check; its
-- size is bounded by the caller's own text (add_resource and chunk_resource check theirs first).
AS $$
DECLARE
    v_max     integer := least(greatest(coalesce(max_tokens, 160), 8), 100000)::integer * 4;
    v_line    text;
    v_fence   boolean := false;
    v_level   integer;
    v_titles  text[] := '{}';  -- the open headings, by level (1 to 6)
    v_heading text := '';
    v_block   text[] := '{}';  -- the open block's lines: appended in place, joined once (a text grown by ||
                               -- is copied at every line, quadratic in a long block)
    v_blocks  text[] := '{}';
    v_h1      integer;
    v_path    text[];
    v_from    integer;
    v_piece   text;
    n         integer := 0;
BEGIN
    IF body IS NULL THEN
        RETURN;
    END IF;
    -- One level-1 heading (outside code) is the document's title: the paths start below it.
    FOR v_line IN SELECT x FROM regexp_split_to_table(body, E'\n') AS x LOOP
        v_fence := v_fence <> (v_line ~ '^\s{0,3}(```|~~~)');
        v_h1 := coalesce(v_h1, 0)
                + CASE WHEN NOT v_fence AND length(v_line) <= 300 AND v_line ~ '^\s{0,3}#\s+\S' THEN 1 ELSE 0 END;
    END LOOP;
    v_fence := false;
    FOR v_line IN SELECT x FROM regexp_split_to_table(replace(body, E'\r\n', E'\n'), E'\n') WITH ORDINALITY AS l (x, o)
                  ORDER BY l.o LOOP
        IF v_line ~ '^\s{0,3}(```|~~~)' THEN
            v_fence := NOT v_fence;
        END IF;
        -- A heading is a line of at most 300 characters (a title's limit): a longer "# ..." line is a paragraph,
        -- or every chunk under it would carry it again in its heading path.
        v_level := CASE WHEN NOT v_fence AND length(v_line) <= 300
                        THEN length(substring(v_line FROM '^\s{0,3}(#{1,6})\s+\S')) END;
        IF v_level IS NOT NULL OR (NOT v_fence AND btrim(v_line) = '') THEN
            v_piece := btrim(array_to_string(v_block, E'\n'), E'\n');
            IF btrim(v_piece) <> '' THEN
                v_blocks := v_blocks || v_piece;
            END IF;
            v_block := '{}';
        END IF;
        IF v_level IS NOT NULL THEN
            FOR v_piece IN SELECT k.piece FROM cogmem._pack_blocks(v_blocks, v_max) AS k (piece) LOOP
                n := n + 1;
                chunk := n; heading := v_heading; content := v_piece;
                RETURN NEXT;
            END LOOP;
            v_blocks := '{}';
            v_titles := v_titles[1:v_level - 1] || array_fill(NULL::text, ARRAY[greatest(v_level - 1 - cardinality(v_titles), 0)])
                        || btrim(regexp_replace(v_line, '^\s{0,3}#{1,6}\s+|\s+#+\s*$', '', 'g'));
            v_path := CASE WHEN v_h1 = 1 THEN v_titles[2:] ELSE v_titles END;
            v_heading := array_to_string(v_path, ' > ');
            -- Every chunk of the section stores its path: a path is a title's length at most (300), the
            -- outermost headings giving way to "…" (six long headings would repeat 1,800 characters per chunk).
            IF length(v_heading) > 300 THEN
                v_heading := v_path[cardinality(v_path)];  -- a heading line is 300 characters at most
                FOR v_from IN REVERSE cardinality(v_path) .. 1 LOOP
                    EXIT WHEN length(array_to_string(v_path[v_from:], ' > ')) > 296;
                    v_heading := '… > ' || array_to_string(v_path[v_from:], ' > ');
                END LOOP;
            END IF;
        ELSIF v_fence OR btrim(v_line) <> '' OR v_line ~ '^\s{0,3}(```|~~~)' THEN
            v_block := v_block || v_line;
        END IF;
    END LOOP;
    v_piece := btrim(array_to_string(v_block, E'\n'), E'\n');
    IF btrim(v_piece) <> '' THEN
        v_blocks := v_blocks || v_piece;
    END IF;
    FOR v_piece IN SELECT k.piece FROM cogmem._pack_blocks(v_blocks, v_max) AS k (piece) LOOP
        n := n + 1;
        chunk := n; heading := v_heading; content := v_piece;
        RETURN NEXT;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION cogmem.chunk_text(text, bigint) IS
'A text''s chunks by structure: Markdown headings open sections (the path of headings above each chunk, '
'without a lone level-1 title, 300 characters at most), blank lines end paragraphs and lists, code fences stay together; a section '
'longer than max_tokens (4 characters each) is cut between blocks, list items, sentences or words.';

-- A document's body as add_resource and chunk_resource take it: text, within a size that chunking and
-- embedding in one call can bear (each chunk is embedded; a larger document is several resources).
CREATE OR REPLACE FUNCTION cogmem._check_resource_body(p_body text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_body IS NULL OR btrim(p_body) = '' THEN
        RAISE EXCEPTION 'body must not be empty'
            USING ERRCODE = CASE WHEN p_body IS NULL THEN 'null_value_not_allowed' ELSE 'invalid_parameter_value' END,
                  HINT = 'Pass the document''s text (Markdown headings, lists and paragraphs are kept as its structure).';
    END IF;
    IF length(p_body) > 1000000 THEN
        RAISE EXCEPTION 'body has % characters, the limit is 1000000', length(p_body)
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Split the document into parts (by chapter), each a resource of its own title.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._check_resource_body(text) IS
'Refuses a document body that is empty or longer than 1,000,000 characters, with what to do.';

-- A redacted document's chunks with the text each is embedded by (the title and headings, then the chunk):
-- what add_resource stores, and what chunk_resource shows a caller that embeds on its side. At most 10,000:
-- each chunk is a row and an embedding (computed in the database unless given), and the body's limit alone
-- lets one-line sections make 140,000; a document of prose cut at the smallest chunk size makes 8,000.
CREATE OR REPLACE FUNCTION cogmem._resource_chunks(p_title text, p_body text, p_tokens integer)
RETURNS TABLE (chunk integer, heading text, content text, embed_text text)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_count integer;
BEGIN
    RETURN QUERY
    SELECT c.chunk, c.heading, c.content,
           concat_ws(E'\n', btrim(p_title) || coalesce(' § ' || nullif(c.heading, ''), ''), c.content)
    FROM cogmem.chunk_text(p_body, p_tokens) AS c
    ORDER BY c.chunk;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count > 10000 THEN
        RAISE EXCEPTION 'body cuts into % chunks, the limit is 10000', v_count
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Split the document into parts (by chapter), each a resource of its own title, or join its '
                         'shortest sections.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._resource_chunks(text, text, integer) IS
'A redacted document''s chunks, each with the text it is embedded by (title § heading, then the chunk); '
'refuses more than 10,000.';

CREATE OR REPLACE FUNCTION cogmem.chunk_resource(tenant text, title text, body text)
RETURNS TABLE (chunk integer, heading text, content text, embed_text text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it reads the tenant's chunk size (the tenant is checked first); the body is trimmed and redacted
-- here as add_resource does it, so that both cut the same text.
AS $$
BEGIN
    PERFORM cogmem._require_tenant(chunk_resource.tenant);
    PERFORM cogmem._check_resource_body(chunk_resource.body);
    RETURN QUERY
    SELECT * FROM cogmem._resource_chunks(
        (cogmem.redact(btrim(chunk_resource.title))).redacted, (cogmem.redact(btrim(chunk_resource.body, E' \n\t'))).redacted,
        (cogmem._tenant_settings(chunk_resource.tenant)).resource_chunk_tokens);
END;
$$;
COMMENT ON FUNCTION cogmem.chunk_resource(text, text, text) IS
'The chunks add_resource would store for a document (redacted, cut at the tenant''s resource_chunk_tokens), '
'each with the text it is embedded by: for a caller that embeds on its side.';

-- What add_resource refuses before it stores anything; the body is checked again once redacted.
CREATE OR REPLACE FUNCTION cogmem._checked_resource(
    t cogmem.tenants, p_title text, p_body text, p_kind text, p_source jsonb
)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    IF p_title IS NULL OR btrim(p_title) = '' OR length(btrim(p_title)) > 300 OR p_title ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'title must be a name of 1 to 300 characters without control characters'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Name the document as people do: ''Database failover runbook''.';
    END IF;
    PERFORM cogmem._check_resource_body(p_body);
    IF p_kind IS NULL OR p_kind !~ '^[a-z][a-z_]{0,39}$' THEN
        RAISE EXCEPTION 'kind must be a lower-case word, got %', coalesce(quote_literal(p_kind), 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'e.g. runbook, policy, template, contract, guide, document (the default).';
    END IF;
    IF jsonb_typeof(coalesce(p_source, '{}')) <> 'object' THEN
        RAISE EXCEPTION 'source must be a JSON object, got %', jsonb_typeof(p_source)
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Pass provenance as an object, e.g. {"url": "..."}.';
    END IF;
    PERFORM cogmem._check_limits(t, NULL, p_source);
END;
$$;
COMMENT ON FUNCTION cogmem._checked_resource(cogmem.tenants, text, text, text, jsonb) IS
'Checks a document to add (title, body, kind, source), a clear error each.';

-- A tenant's recall gets its resources layer with its first resource (migration 0036 says why not sooner):
-- 400 tokens of the default budget's 500 unallocated, last in priority, so that memories keep theirs.
CREATE OR REPLACE FUNCTION cogmem._resource_layer(p_tenant text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    INSERT INTO cogmem.tenant_layers AS l (tenant, layer, priority, token_allocation, half_life, never_cut)
    SELECT p_tenant, 'resources', max(x.priority) + 1, 400, NULL, false
    FROM cogmem.tenant_layers AS x WHERE x.tenant = p_tenant
    ON CONFLICT DO NOTHING;
END;
$$;
COMMENT ON FUNCTION cogmem._resource_layer(text) IS
'Gives a tenant its resources recall layer (400 tokens, last), once.';

-- Longer than a screen as the steps of one version: checks, redaction, the current version, chunks and
-- their embeddings, the rows, the audit.
CREATE OR REPLACE FUNCTION cogmem.add_resource(
    tenant text,
    title text,
    body text,
    kind text DEFAULT 'document',
    source jsonb DEFAULT '{}',
    embeddings public.vector[] DEFAULT NULL,
    person text DEFAULT NULL,
    agent text DEFAULT NULL
)
RETURNS TABLE (resource_id bigint, version integer, action text, chunks integer, redactions text[])
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
-- Definer: it writes resources, their chunks and the audit, which only the API's owner may; the tenant
-- and the scope are checked first.
AS $$
#variable_conflict use_column
DECLARE
    v_tenant     text := add_resource.tenant;
    t            cogmem.tenants;
    v_title      text := btrim(add_resource.title);
    v_source     jsonb;
    v_body       text;
    v_redactions text[];
    v_old        cogmem.resources;
    v_id         bigint;
    v_chunks     record;
    v_count      integer;
    v_version    integer;
BEGIN
    PERFORM cogmem._require_tenant(v_tenant);
    PERFORM cogmem._require_scope(v_tenant, add_resource.person, add_resource.agent);
    t := cogmem._tenant_settings(v_tenant);
    PERFORM cogmem._checked_resource(t, add_resource.title, add_resource.body, add_resource.kind, add_resource.source);
    PERFORM cogmem._lock_tenant(v_tenant, false);
    -- Everything kept is redacted: the body, the title (recalled at the head of every chunk) and the source.
    SELECT r.redacted, r.redactions INTO v_body, v_redactions FROM cogmem.redact(btrim(add_resource.body, E' \n\t')) AS r;
    SELECT r.redacted, cogmem._union_kinds(v_redactions, r.redactions) INTO v_title, v_redactions
    FROM cogmem.redact(v_title) AS r;
    SELECT r.source, cogmem._union_kinds(v_redactions, r.redactions) INTO v_source, v_redactions
    FROM cogmem._redact_source(coalesce(add_resource.source, '{}')) AS r;
    v_source := cogmem._with_said(v_source, NULL, NULL, NULL, add_resource.person, add_resource.agent);
    SELECT * INTO v_old FROM cogmem.resources AS r
    WHERE r.tenant = v_tenant AND lower(r.title) = lower(v_title) AND r.superseded_at IS NULL
      AND cogmem._same_scope(r.person, r.agent, cogmem._person(v_source), cogmem._agent(v_source))
    FOR UPDATE;
    -- Versions count on after a retirement: a title's numbers are never used twice.
    SELECT coalesce(max(r.version), 0) + 1 INTO v_version FROM cogmem.resources AS r
    WHERE r.tenant = v_tenant AND lower(r.title) = lower(v_title)
      AND cogmem._same_scope(r.person, r.agent, cogmem._person(v_source), cogmem._agent(v_source));
    IF v_old.body_sha256 = sha256(convert_to(v_body, 'UTF8')) THEN
        RETURN QUERY SELECT v_old.resource_id, v_old.version, 'unchanged'::text,
                            (SELECT count(*)::integer FROM cogmem.resource_chunks AS c
                             WHERE c.tenant = v_tenant AND c.resource_id = v_old.resource_id),
                            v_redactions;
        RETURN;
    END IF;
    SELECT array_agg(c.heading ORDER BY c.chunk) AS headings, array_agg(c.content ORDER BY c.chunk) AS contents,
           array_agg(c.embed_text ORDER BY c.chunk) AS texts
    INTO v_chunks
    FROM cogmem._resource_chunks(v_title, v_body, t.resource_chunk_tokens) AS c;
    v_count := coalesce(cardinality(v_chunks.contents), 0);
    IF v_count = 0 THEN
        RAISE EXCEPTION 'body has no text beside its headings'
            USING ERRCODE = 'invalid_parameter_value', HINT = 'A document is recalled by its text; pass the sections'' text too.';
    END IF;
    IF add_resource.embeddings IS NOT NULL AND cardinality(add_resource.embeddings) <> v_count THEN
        RAISE EXCEPTION '% embeddings for % chunks', cardinality(add_resource.embeddings), v_count
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Embed the embed_text of each row cogmem.chunk_resource(tenant, title, body) returns, in order.';
    END IF;
    PERFORM cogmem._check_embedding(e) FROM unnest(add_resource.embeddings) AS e;
    PERFORM cogmem._resource_layer(v_tenant);

    -- The current version is superseded before the new one takes its place (one current per title).
    UPDATE cogmem.resources AS r SET superseded_at = now() WHERE r.tenant = v_tenant AND r.resource_id = v_old.resource_id;
    UPDATE cogmem.resource_chunks AS c SET current = false WHERE c.tenant = v_tenant AND c.resource_id = v_old.resource_id;
    INSERT INTO cogmem.resources AS r (tenant, title, kind, version, body, body_sha256, redactions, source)
    VALUES (v_tenant, v_title, add_resource.kind, v_version, v_body,
            sha256(convert_to(v_body, 'UTF8')), v_redactions, v_source)
    RETURNING r.resource_id INTO v_id;
    UPDATE cogmem.resources AS r SET superseded_by = v_id WHERE r.tenant = v_tenant AND r.resource_id = v_old.resource_id;
    INSERT INTO cogmem.resource_chunks (tenant, resource_id, position, heading, content, language, embedding, person, agent)
    SELECT v_tenant, v_id, x.n, x.heading, x.content, t.language,
           cogmem._embedding(v_tenant, add_resource.embeddings[x.n::integer], x.text),
           cogmem._person(v_source), cogmem._agent(v_source)
    FROM unnest(v_chunks.headings, v_chunks.contents, v_chunks.texts) WITH ORDINALITY AS x (heading, content, text, n);
    -- The title may name a person: the audit keeps its hash.
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (v_tenant, 'write', 'resource_added',
            jsonb_build_object('resource_id', v_id, 'version', v_version, 'kind', add_resource.kind,
                               'chunks', v_count, 'redactions', to_jsonb(v_redactions), 'supersedes', v_old.resource_id,
                               'title_sha256', encode(sha256(convert_to(lower(v_title), 'UTF8')), 'hex'),
                               'embedded', (SELECT count(*) FROM cogmem.resource_chunks AS c
                                            WHERE c.tenant = v_tenant AND c.resource_id = v_id AND c.embedding IS NOT NULL)));
    RETURN QUERY SELECT v_id, v_version, CASE WHEN v_version = 1 THEN 'created' ELSE 'new_version' END, v_count,
                        v_redactions;
END;
$$;
COMMENT ON FUNCTION cogmem.add_resource(text, text, text, text, jsonb, public.vector[], text, text) IS
'Adds a document (a runbook, a policy, a template, a contract): redacted, chunked by its structure, each '
'chunk embedded (embeddings: one per row of chunk_resource(), else in the database when it can), kept with '
'its provenance. The same title again (in the same scope) is a new version that supersedes the old one''s '
'chunks (kept for the audit), or unchanged when the text is the same. Recall injects the chunks most '
'relevant to a message in its resources layer. person and agent scope it (sql/015-scopes.sql).';

-- A retired document stops being recalled; its versions stay for the audit (erasure removes them).
CREATE OR REPLACE FUNCTION cogmem.retire_resource(tenant text, title text, person text DEFAULT NULL, agent text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes resources, their chunks and the audit; the tenant and the scope are checked first.
AS $$
#variable_conflict use_column
DECLARE
    v_id bigint;
BEGIN
    PERFORM cogmem._require_tenant(retire_resource.tenant);
    PERFORM cogmem._require_scope(retire_resource.tenant, retire_resource.person, retire_resource.agent);
    UPDATE cogmem.resources AS r SET superseded_at = now()
    WHERE r.tenant = retire_resource.tenant AND lower(r.title) = lower(btrim(retire_resource.title))
      AND r.superseded_at IS NULL
      AND cogmem._same_scope(r.person, r.agent, btrim(retire_resource.person), btrim(retire_resource.agent))
    RETURNING r.resource_id INTO v_id;
    IF v_id IS NULL THEN
        RETURN false;
    END IF;
    UPDATE cogmem.resource_chunks AS c SET current = false WHERE c.tenant = retire_resource.tenant AND c.resource_id = v_id;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES (retire_resource.tenant, 'write', 'resource_retired', jsonb_build_object('resource_id', v_id));
    RETURN true;
END;
$$;
COMMENT ON FUNCTION cogmem.retire_resource(text, text, text, text) IS
'Retires a document''s current version (no longer recalled, kept for the audit); false when there is none.';

-- recall's resources layer: the tenant's current chunks the scope sees, ranked by the fusion recall uses
-- for memories (full text weighted by rarity, and meaning), the best few, each cited as title § heading.
CREATE OR REPLACE FUNCTION cogmem._resource_candidates(
    t cogmem.tenants, p_embedding public.vector, p_lexemes text[], p_query tsquery, p_person text, p_agent text
)
RETURNS TABLE (chunk_id bigint, shown text, tokens integer, score real, why text)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH chunks AS MATERIALIZED (
        SELECT c.chunk_id, c.resource_id, c.heading, c.content,
               CASE WHEN c.search @@ p_query THEN tsvector_to_array(ts_delete(c.search, tsvector_to_array(
                   ts_delete(c.search, p_lexemes)))) END AS words,
               c.embedding OPERATOR(public.<=>) p_embedding AS distance
        FROM cogmem.resource_chunks AS c
        WHERE c.tenant = t.tenant AND c.current AND cogmem.in_scope(c.person, c.agent, NULL, p_person, p_agent, t)
    ),
    rarity AS (
        SELECT w.word, ln((SELECT count(*) FROM chunks)::double precision / count(*)) + 0.01 AS idf
        FROM chunks AS s CROSS JOIN unnest(s.words) AS w (word)
        GROUP BY w.word
    ),
    lexical AS (
        SELECT s.chunk_id, sum(r.idf) AS score
        FROM chunks AS s CROSS JOIN unnest(s.words) AS w (word) JOIN rarity AS r ON r.word = w.word
        GROUP BY s.chunk_id
    ),
    ranked AS (
        SELECT s.*, row_number() OVER (ORDER BY x.score DESC NULLS LAST, s.chunk_id) AS lexical_rank, x.score AS lexical,
               row_number() OVER (ORDER BY s.distance NULLS LAST, s.chunk_id) AS semantic_rank
        FROM chunks AS s LEFT JOIN lexical AS x ON x.chunk_id = s.chunk_id
    ),
    fused AS (
        SELECT y.* FROM (
            SELECT r.*,
                   CASE WHEN r.lexical IS NOT NULL THEN t.lexical_weight / (t.fusion_k + r.lexical_rank) ELSE 0 END
                   + CASE WHEN r.distance IS NOT NULL THEN t.vector_weight / (t.fusion_k + r.semantic_rank) ELSE 0 END
                       AS fused_score
            FROM ranked AS r
            WHERE r.lexical IS NOT NULL OR 1 - r.distance >= 0.2
        ) AS y
        ORDER BY y.fused_score DESC, y.chunk_id
        LIMIT 20
    )
    SELECT f.chunk_id,
           '[' || d.title || coalesce(' § ' || nullif(f.heading, ''), '') || '] ' || f.content,
           greatest(1, ceil(length('[' || d.title || coalesce(' § ' || nullif(f.heading, ''), '') || '] ' || f.content)
                            / 4.0))::integer,
           f.fused_score::real,
           -- The reason goes to the audit, which keeps no document text (a title may name a person): the
           -- content shown cites title § heading, the reason the resource and its ranks.
           concat_ws('; ', format('resource %s chunk %s', d.resource_id, f.chunk_id),
                     CASE WHEN f.lexical IS NOT NULL THEN 'lexical #' || f.lexical_rank END,
                     CASE WHEN f.distance IS NOT NULL
                          THEN 'vector #' || f.semantic_rank || ' (' || round((1 - f.distance)::numeric, 2) || ')' END,
                     'version ' || d.version)
    FROM fused AS f
    JOIN cogmem.resources AS d ON d.tenant = t.tenant AND d.resource_id = f.resource_id
    ORDER BY f.fused_score DESC, f.chunk_id;
END;
$$;
COMMENT ON FUNCTION cogmem._resource_candidates(cogmem.tenants, public.vector, text[], tsquery, text, text) IS
'The resource chunks a recall may inject: the current chunks its scope sees, ranked by full text (words '
'weighted by rarity) and meaning, the 20 best, each shown and cited as [title § heading].';
