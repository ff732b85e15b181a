-- Redaction before storage: "PCI-DSS: never log card data" holds for the memory store itself.

CREATE OR REPLACE FUNCTION cogmem._luhn_valid(p_digits text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_sum   integer := 0;
    v_digit integer;
    v_len   integer := length(p_digits);
BEGIN
    IF p_digits !~ '^[0-9]{13,19}$' THEN
        RETURN false;
    END IF;
    FOR i IN 0 .. v_len - 1 LOOP
        v_digit := substr(p_digits, v_len - i, 1)::integer;
        IF i % 2 = 1 THEN
            v_digit := v_digit * 2;
            IF v_digit > 9 THEN
                v_digit := v_digit - 9;
            END IF;
        END IF;
        v_sum := v_sum + v_digit;
    END LOOP;
    RETURN v_sum % 10 = 0;
END;
$$;
COMMENT ON FUNCTION cogmem._luhn_valid(text) IS 'True for a 13-19 digit string that passes the Luhn check.';

-- IBAN: two letters, two check digits, 11 to 30 letters and digits; the check is mod 97 (ISO 13616).
CREATE OR REPLACE FUNCTION cogmem._iban_valid(p_iban text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_moved  text := upper(substr(p_iban, 5) || substr(p_iban, 1, 4));
    v_digits text := '';
    v_char   text;
BEGIN
    IF p_iban !~ '^[A-Za-z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$' THEN
        RETURN false;
    END IF;
    FOREACH v_char IN ARRAY regexp_split_to_array(v_moved, '') LOOP
        v_digits := v_digits || CASE WHEN v_char ~ '[0-9]' THEN v_char ELSE (ascii(v_char) - 55)::text END;
    END LOOP;
    RETURN v_digits::numeric % 97 = 1;
END;
$$;
COMMENT ON FUNCTION cogmem._iban_valid(text) IS 'True for an IBAN (without separators) whose mod-97 check holds.';

-- What the patterns see: compatibility forms folded (NFKC: full-width digits and letters, no-break
-- spaces) and invisible format characters dropped (zero-width space, joiners, word joiner, BOM, soft
-- hyphen), so that pass<U+200B>word= or a card in full-width digits is a secret like any other.
CREATE OR REPLACE FUNCTION cogmem._unmasked(p_text text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
-- ASCII has no compatibility forms and no format characters (one byte per character is ASCII in UTF-8).
RETURN CASE
    WHEN octet_length(p_text) = length(p_text) THEN p_text
    ELSE regexp_replace(normalize(p_text, NFKC), '[\u00AD\u200B-\u200D\u2060\uFEFF]', '', 'g')  -- noqa: CP02
END;
COMMENT ON FUNCTION cogmem._unmasked(text) IS
'A text with compatibility forms folded (NFKC) and format characters removed: what redaction matches.';

-- Card numbers and IBANs: digits in groups, with any one separator between them (space, dash, dot; a
-- no-break or zero-width space is one after _unmasked), but never a run inside an identifier (a UUID,
-- a hash, a hex string): no letter, digit or joined separator on either side. Card numbers start with
-- 2 to 6 (the issuer ranges of the card networks), which keeps millisecond timestamps out.
CREATE OR REPLACE FUNCTION cogmem._redact_numbers(INOUT redacted text, INOUT redactions text[])
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
DECLARE
    v_match text;
BEGIN
    -- A card wrapped over a line break (a narrow mail, a chat bubble): groups of digits on either side
    -- of one line end, first, so that neither half is taken for a number of its own.
    FOR v_match IN
        SELECT m[1] FROM regexp_matches(
            redacted, '(?<![[:alnum:]_]|[[:alnum:]][.-])([2-6][0-9]{3}(?:[ .-]?[0-9]{4}){0,3}[ \t]*\r?\n[ \t]*'
                      || '[0-9]{1,4}(?:[ .-]?[0-9]{1,4}){0,3})(?![[:alnum:]_]|[.-][[:alnum:]])', 'g'
        ) AS m
    LOOP
        -- Years in a list (2023 2024 / 2025 2026) are not a card, whatever their checksum.
        IF cogmem._luhn_valid(regexp_replace(v_match, '[^0-9]', '', 'g'))
           AND v_match !~ '^(?:(?:19|20)[0-9]{2}[[:space:].-]*)+$' THEN
            redacted := replace(redacted, v_match, '[REDACTED:PAN]');
            redactions := array_append(redactions, 'pan');
        END IF;
    END LOOP;
    FOR v_match IN
        SELECT m[1] FROM regexp_matches(
            redacted, '(?<![[:alnum:]_]|[[:alnum:]][.-])([2-6](?:[ .-]?[0-9]){12,18})(?![[:alnum:]_]|[.-][[:alnum:]])', 'g'
        ) AS m
    LOOP
        IF cogmem._luhn_valid(regexp_replace(v_match, '[^0-9]', '', 'g')) THEN
            redacted := replace(redacted, v_match, '[REDACTED:PAN]');
            redactions := array_append(redactions, 'pan');
        END IF;
    END LOOP;
    FOR v_match IN
        SELECT m[1] FROM regexp_matches(
            redacted, '(?<![[:alnum:]_])([A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30})(?![[:alnum:]_])', 'g'
        ) AS m
    LOOP
        IF cogmem._iban_valid(replace(v_match, ' ', '')) THEN
            redacted := replace(redacted, v_match, '[REDACTED:IBAN]');
            redactions := array_append(redactions, 'iban');
        END IF;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION cogmem._redact_numbers(text, text[]) IS
'Replaces Luhn-valid card numbers and mod-97-valid IBANs, grouped or not, outside identifiers.';

-- Anything a pattern of cogmem.redact() could match matches this one, case aside (it also fires on much
-- harmless text): a text, with its disguises removed, that does not is returned as it is. Callers that
-- redact many texts at once test it first (an inlined constant costs nothing). One literal: no operator
-- to resolve in the caller's search_path.
CREATE OR REPLACE FUNCTION cogmem._secret_hint()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN '[0-9](?:[ .-]?[0-9]){12}|[0-9]{4}[ \t]*\r?\n[ \t]*[0-9]|[A-Z]{2}[0-9]{2} ?[A-Z0-9]{4}|private key|passw|pwd|passphrase|passcode|\mpin\M|secret|api[_-]?key|access[_-]?key|token|şifre|parola|bearer|akia|gh[pousr]_|xox[abprs]-|sk-|[rs]k_(?:live|test)_|aiza|glpat-|eyj[a-z0-9_-]+\.eyj|://[^[:space:]/@]*@|[[:alpha:]][^[:space:]:]*:[^[:space:]:/\\]{8}';
COMMENT ON FUNCTION cogmem._secret_hint() IS
'A pattern (for ~*) that every text cogmem.redact() would change matches, once unmasked.';

-- Longer than a screen as its table of secrets, one row a kind with the reason for its pattern: one
-- place to read what is redacted and why.
CREATE OR REPLACE FUNCTION cogmem.redact(content text, OUT redacted text, OUT redactions text[])
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_seen   text := cogmem._unmasked(content);
    v_before text;
    v_rule   record;
    -- What a password of user:password may and may not hold (a word's characters, its ends).
    v_in     CONSTANT text := '[^[:space:]"''`<>(){}\[\],;/\\|:]';
    v_out    CONSTANT text := '[[:space:]"''`<>(){}\[\],;/\\|:]';
BEGIN
    redacted := v_seen;
    redactions := '{}';
    -- Most texts hold no secret: one test for anything any pattern below could match spares them the
    -- per-kind passes (it may fire on harmless text; the patterns then decide).
    IF v_seen !~* cogmem._secret_hint() THEN
        redacted := content;  -- untouched: nothing a person wrote is changed without a secret in it
        RETURN;
    END IF;
    SELECT r.redacted, r.redactions INTO redacted, redactions FROM cogmem._redact_numbers(redacted, redactions) AS r;

    -- Secrets by pattern: (kind, pattern, replacement, flags, a simpler pattern without which it cannot
    -- match), applied in order.
    FOR v_rule IN
        SELECT * FROM (VALUES
            -- The first quantifier is non-greedy, which makes the whole expression non-greedy (ARE rule).
            ('private_key',
             '-----BEGIN [A-Z ]{0,40}?PRIVATE KEY(?: BLOCK)?-----.*?(-----END [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)',
             '[REDACTED:PRIVATE_KEY]', 'g', NULL),
            -- A quoted value, or a bare one up to a space, separator, quote or closing brace (ARE matches
            -- the longest alternative, so the bare form must not be able to swallow a quoted value).
            ('password',
             '((?:password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?key|'
             || 'auth[_-]?token|token|şifre(?:si)?|parola(?:sı)?)["'']?\s*[:=]\s*)("[^"]*"|''[^'']*''|[^[:space:],;"''}]+)',
             '\1[REDACTED]', 'gi', NULL),
            ('bearer_token', '(\mbearer\s+)[A-Za-z0-9._~+/=-]{8,}', '\1[REDACTED]', 'gi', NULL),
            -- A PIN said as one: "my PIN is 4921", "PIN kodu: 0042" (four to eight digits; "pin 3" is a part).
            ('password',
             '(\mpin(?:[[:space:]]+(?:code|kodu|kodum))?(?:[[:space:]]+(?:is|was|olarak))?[[:space:]]*[:=]?[[:space:]]*)'
             || '([0-9]{4,8})\M',
             '\1[REDACTED]', 'gi', NULL),
            -- A table row whose first cell names a secret (| Password | Hunter2! |): the next cell, when it
            -- looks like a value (one word with a digit or a symbol: not "string" or "Required").
            ('password',
             '(\|[[:space:]]*(?:password|passwd|passphrase|passcode|pwd|pin|secret|api[ _-]?key|token|şifre|parola)'
             || '[[:space:]]*\|[[:space:]]*)([^|[:space:]]*[0-9!#$%&*+=?@^~][^|[:space:]]*)(?=[[:space:]]*\|)',
             '\1[REDACTED]', 'gi', NULL),
            -- Said in a sentence: "the admin password is Hunter2!", "şifresi 4921Ab", "parola olarak X": the
            -- word after, when it holds a digit or a symbol (not "the password is in the vault").
            ('password',
             '(\m(?:password|passwd|passphrase|passcode|şifre(?:si|miz|m)?|parola(?:sı|mız|m)?)'
             || '(?:[[:space:]]+(?:is|was|is now|will be|olarak|şu|de|da))?[[:space:]]+)'
             || '(?![0-9]+[[:space:]]*(?:minutes?|hours?|days?|dakika|saat|gün|characters?|karakter))'
             || '([^[:space:]]*[0-9!#$%&*+=?@^~][^[:space:]]*)',
             '\1[REDACTED]', 'gi', NULL),
            -- A password in a URL's user information: scheme://user:password@host.
            ('credential', '(\m[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]/?#@:]*:)[^[:space:]/?#@]+@', '\1[REDACTED]@', 'g',
             '://[^[:space:]/@]*@'),
            -- user:password on its own, precisely: the user starts a word with a letter and is not a URI
            -- scheme or a hash's name; the password follows the colon at once, has 8 to 128 characters
            -- with a digit, a letter and a capital or a symbol (not just . - _, as in versions and image
            -- tags such as node:18-alpine), is not hex (an id) and ends its word (a final period ends the
            -- sentence). Ratios, times, IPv6, "Note: text", host:port and paths (C:\, a/b) never match.
            -- Case matters here: no 'i'.
            ('credential',
             '(^|[[:space:]"''`(\[{<=,;])'
             || '(?!(?:https?|ftps?|mailto|tel|urn|file|data|sips?|xmpp|wss?|git|ssh|md5|sha[0-9-]*|blake[0-9a-z]*|crc[0-9]*|base64):)'
             || '([A-Za-z][A-Za-z0-9._+@-]{0,63}):'
             || '(?=' || v_in || '*[0-9])(?=' || v_in || '*[A-Za-z])(?=' || v_in || '*[A-Z!#$%&*+=?@^~])'
             || '(?![0-9A-Fa-f-]+(?:' || v_out || '|\.|$))'
             || v_in || '{7,127}(?!\.)' || v_in || '(?=\.*(?:' || v_out || '|$))',
             '\1\2:[REDACTED]', 'g', ':[^[:space:]:/\\]{8}'),
            ('api_token',
             '\m(AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}'
             -- Stripe's secret and restricted keys, Google's API keys, GitLab's personal tokens, and a JWT
             -- (header, claims and signature, base64url; the header and claims open with {" as eyJ).
             || '|[rs]k_(?:live|test)_[A-Za-z0-9]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}'
             -- Ends where the token's alphabet ends (a final - or _ is part of it, which \M would cut off).
             || '|eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,})(?![A-Za-z0-9_-])',
             '[REDACTED:TOKEN]', 'g', NULL)
        ) AS r (kind, pattern, replacement, flags, needs)
    LOOP
        CONTINUE WHEN redacted !~ v_rule.needs;
        v_before := redacted;
        redacted := regexp_replace(redacted, v_rule.pattern, v_rule.replacement, v_rule.flags);
        IF redacted <> v_before THEN
            redactions := array_append(redactions, v_rule.kind);
        END IF;
    END LOOP;

    IF cardinality(redactions) = 0 THEN
        redacted := content;  -- the quick test fired on harmless text: keep it exactly as written
    END IF;
    SELECT coalesce(array_agg(DISTINCT r ORDER BY r), '{}') INTO redactions FROM unnest(redactions) AS r;
END;
$$;
COMMENT ON FUNCTION cogmem.redact(text) IS
'Removes card numbers (Luhn-valid PANs), IBANs, private keys, passwords in key=value form, user:password '
'credentials (alone or in a URL), bearer and API tokens, seen through disguises (full-width forms, '
'zero-width characters, any separator between digit groups); returns the redacted text and the kinds '
'removed (never the removed values). A text without a secret comes back exactly as written.';

-- A person's text as kept: trimmed, redacted, NULL when empty.
CREATE OR REPLACE FUNCTION cogmem._clean_text(p_text text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN (cogmem.redact(nullif(btrim(p_text), ''))).redacted;
END;
$$;
COMMENT ON FUNCTION cogmem._clean_text(text) IS 'A text trimmed and redacted; NULL when empty.';

-- Each entry cleaned (cogmem._clean_text), empty ones dropped, order kept.
CREATE OR REPLACE FUNCTION cogmem._clean_list(p_items text[])
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN ARRAY(SELECT cogmem._clean_text(i.item)
                 FROM unnest(coalesce(p_items, '{}')) WITH ORDINALITY AS i (item, n)
                 WHERE btrim(i.item) <> '' ORDER BY i.n);
END;
$$;
COMMENT ON FUNCTION cogmem._clean_list(text[]) IS 'Redacted, trimmed entries of a list, without empty ones.';

-- A JSON member whose name says it holds a secret ({"pass": 1234}, {"dbPassword": "..."}, {"x-api-key":
-- ...}): its value is a secret whatever its type. The name's last word decides (camelCase splits words),
-- so max_tokens, token_count or password_hint are not secrets; a short word (pass, cvv) must be a whole
-- word, so bypass is not either.
-- Every name cogmem._secret_name() accepts matches this (for ~*), once unmasked; callers asking about
-- many names test it first (an inlined constant).
CREATE OR REPLACE FUNCTION cogmem._secret_name_hint()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN 'pass|pwd|secret|token|key|authorization|credential|şifre|parola|cv[vc]';
COMMENT ON FUNCTION cogmem._secret_name_hint() IS
'A pattern (for ~*) that every name cogmem._secret_name() accepts matches, once unmasked.';

CREATE OR REPLACE FUNCTION cogmem._secret_name(p_name text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
DECLARE
    v_words text := rtrim(lower(regexp_replace(cogmem._unmasked(p_name), '([[:lower:][:digit:]])([[:upper:]])', '\1 \2', 'g')),
                          ' _-.:="''');
BEGIN
    RETURN v_words ~ '(password|passwords|passwd|passphrase|pwd|secret|secrets|token|apikey|authorization|credentials?|şifre|parola)$'
        OR v_words ~ '(^|[^[:alnum:]])(pass|cvv2?|cvc2?)$'
        OR v_words ~ '(api|access|secret|private|signing)[^[:alnum:]]*key$';
END;
$$;
COMMENT ON FUNCTION cogmem._secret_name(text) IS
'Whether a JSON member''s name says its value is a secret (pass, pwd, password, secret, token, api key, '
'authorization, credentials, şifre, parola, cvv; as the name''s last word, camelCase or not).';

-- A JSON value (a store value, a memory's or a document's source: p_what names it in errors) redacted in
-- one statement over all its nodes, so the cost grows with its size: every key,
-- string and number through cogmem.redact() (a card sent as a JSON number is a card), and every scalar
-- under a member whose name says secret (cogmem._secret_name()) replaced, whatever its type. The nodes,
-- numbered by their path, are written back as JSON text in document order and parsed once (building
-- jsonb member by member copies the value each time). secrets: the texts removed for their member's
-- name, which the item's memory must not hold either.
DROP FUNCTION IF EXISTS cogmem._redact_json(jsonb);  -- before 0038: a store value's only
CREATE OR REPLACE FUNCTION cogmem._redact_json(
    p_value jsonb, p_what text, OUT value jsonb, OUT redactions text[], OUT secrets text[]
)
LANGUAGE plpgsql IMMUTABLE STRICT SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_text  text;
    v_deep  boolean;
    v_clash text;
BEGIN
    WITH RECURSIVE node (path, key, value, secret) AS (
        SELECT '{}'::integer[], NULL::text, p_value, false
        UNION ALL
        SELECT n.path || c.n::integer, c.key, c.value,
               -- A name that cannot be a secret's, by a quick test, is not asked about.
               CASE WHEN n.secret THEN true
                    WHEN c.key ~* cogmem._secret_name_hint() OR octet_length(c.key) <> length(c.key)
                        THEN coalesce(cogmem._secret_name(c.key), false)
                    ELSE false END
        FROM node AS n
        CROSS JOIN LATERAL (
            SELECT o.key, o.value, o.n
            FROM jsonb_each(CASE WHEN jsonb_typeof(n.value) = 'object' THEN n.value END) WITH ORDINALITY AS o (key, value, n)
            UNION ALL
            SELECT NULL, a.value, a.n
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(n.value) = 'array' THEN n.value END) WITH ORDINALITY AS a (value, n)
        ) AS c
        WHERE cardinality(n.path) < 64  -- the 65th level is seen, not opened
    ),
    part AS MATERIALIZED (
        SELECT n.path, jsonb_typeof(n.value) AS kind, coalesce(k.redacted, n.key) AS key,
               CASE WHEN jsonb_typeof(n.value) IN ('object', 'array') THEN NULL
                    WHEN n.secret AND jsonb_typeof(n.value) <> 'null' THEN '"[REDACTED]"'
                    WHEN cardinality(t.redactions) > 0 THEN to_json(t.redacted)::text
                    ELSE n.value::text END AS scalar,
               coalesce(k.redactions, '{}') || coalesce(t.redactions, '{}')
               || CASE WHEN n.secret AND jsonb_typeof(n.value) IN ('string', 'number', 'boolean') THEN '{password}'::text[] END
               AS redactions,
               CASE WHEN n.secret AND jsonb_typeof(n.value) IN ('string', 'number') THEN n.value #>> '{}' END AS secret
        FROM node AS n
        -- A text redact() would return as it is (ASCII, no hint of a secret) is not passed to it (strict).
        LEFT JOIN LATERAL cogmem.redact(
            CASE WHEN n.key ~* cogmem._secret_hint() OR octet_length(n.key) <> length(n.key) THEN n.key END
        ) AS k ON true
        LEFT JOIN LATERAL cogmem.redact(
            CASE WHEN NOT n.secret AND jsonb_typeof(n.value) IN ('string', 'number')
                      AND (n.value #>> '{}' ~* cogmem._secret_hint() OR octet_length(n.value #>> '{}') <> length(n.value #>> '{}'))
                 THEN n.value #>> '{}' END
        ) AS t ON true
    )
    SELECT (SELECT bool_or(cardinality(p.path) = 64 AND p.kind IN ('object', 'array')) FROM part AS p),
           (SELECT p.key FROM part AS p WHERE p.key IS NOT NULL
            GROUP BY trim_array(p.path, 1), p.key HAVING count(*) > 1 ORDER BY p.key LIMIT 1),
           -- Each node opens at its path || 0 (after a comma and its name, if it has them), a container
           -- closes after all its members.
           (SELECT string_agg(x.token, '' ORDER BY x.at) FROM (
                SELECT p.path || 0 AS at,
                       CASE WHEN p.path[cardinality(p.path)] > 1 THEN ',' ELSE '' END
                       || CASE WHEN p.key IS NOT NULL THEN to_json(p.key)::text || ':' ELSE '' END
                       || CASE p.kind WHEN 'object' THEN '{' WHEN 'array' THEN '[' ELSE p.scalar END AS token
                FROM part AS p
                UNION ALL
                SELECT p.path || 2147483647, CASE p.kind WHEN 'object' THEN '}' ELSE ']' END
                FROM part AS p WHERE p.kind IN ('object', 'array')
            ) AS x),
           ARRAY(SELECT DISTINCT r FROM part AS p CROSS JOIN unnest(p.redactions) AS r ORDER BY r),
           ARRAY(SELECT p.secret FROM part AS p WHERE p.secret IS NOT NULL)
    INTO v_deep, v_clash, v_text, redactions, secrets;
    IF v_deep THEN
        RAISE EXCEPTION '% nests more than 64 levels deep', p_what
            USING ERRCODE = 'program_limit_exceeded', HINT = 'Flatten it: 64 levels of objects and arrays at most.';
    END IF;
    IF v_clash IS NOT NULL THEN
        RAISE EXCEPTION 'two keys of % read "%" once redacted', p_what, v_clash
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A secret in a key is redacted, and keys that differ only in their secret would become one: '
                         || 'keep secrets out of keys.';
    END IF;
    value := v_text::jsonb;
END;
$$;
COMMENT ON FUNCTION cogmem._redact_json(jsonb, text) IS
'A JSON value with every key, string and number redacted, and every scalar under a secret''s name; what '
'was redacted; the texts removed for their name. Refuses keys redaction makes equal, and over 64 levels.';

-- Where a memory or a document came from (source), as kept: redacted like a store value, after a quick
-- test that spares the usual source (a conversation, a speaker, a date) the walk over its nodes.
CREATE OR REPLACE FUNCTION cogmem._redact_source(p_source jsonb, OUT source jsonb, OUT redactions text[])
LANGUAGE plpgsql IMMUTABLE STRICT SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_text text := p_source::text;
BEGIN
    source := p_source;
    redactions := '{}';
    IF v_text ~* cogmem._secret_hint() OR v_text ~* cogmem._secret_name_hint() OR octet_length(v_text) <> length(v_text) THEN
        SELECT r.value, r.redactions INTO source, redactions FROM cogmem._redact_json(p_source, 'a source') AS r;
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._redact_source(jsonb) IS
'A source (JSON) redacted as a store value is (cogmem._redact_json), and the kinds removed.';

-- The kinds redacted from a text and from its source, as one sorted set.
CREATE OR REPLACE FUNCTION cogmem._union_kinds(p_kinds text[], p_more text[])
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN cardinality(p_more) > 0 THEN (SELECT array_agg(DISTINCT k ORDER BY k) FROM unnest(p_kinds || p_more) AS k)
    ELSE p_kinds
END;
COMMENT ON FUNCTION cogmem._union_kinds(text[], text[]) IS 'Two lists of redacted kinds as one sorted set.';
