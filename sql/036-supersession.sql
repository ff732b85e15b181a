-- Supersession: a statement that changes an earlier fact about the same thing ("Actually I moved, ship
-- to 9 Harrow Street") replaces it. The older memory is not deleted: it is marked superseded_by the
-- newer one and valid_until the newer one's said_at, kept for the audit, explain_recall and questions
-- about the past, and left out of every other recall (sql/070-recall.sql). Graphiti invalidates an edge
-- the same way (bi-temporal), Mem0 calls it UPDATE.
--
-- Two paths, one mark (cogmem._supersede): the caller's judgement (remember(..., supersedes => ids),
-- sql/060-remember.sql), and, without it, the test below, which looks at a new fact and the older facts
-- of the same scope close to it in meaning. It needs all of:
--   (a) the same thing: a cosine in the tenant model's supersede band, with a word or a value of the
--       subject in common;
--   (b) a value that differs: a number, a time, a day, an address, a name or a host the older fact does
--       not have, while the older has one the newer lacks (or the newer says it corrects); a correction
--       said with no value read makes the older only possibly superseded;
--   (c) nothing that says both hold: another holder or purpose ("my wife's number", "the work address",
--       "staging"; a holder named by the newer alone yields to a correction), a one-off ("just this
--       Friday", "bu seferlik"), an addition ("also", "ayrıca") or the old fact told as history ("I used to").
-- Tuned on bench/corpus/updates/upd-en and upd-tr, measured on writers it never saw (bench/understanding.py).
-- A pair it is unsure of keeps both: the older is marked possibly superseded and recalled after the
-- newer, nothing is hidden.

-- Lower-cased, without a Turkish suffix after an apostrophe (Kadıköy'de) or trailing punctuation.
CREATE OR REPLACE FUNCTION cogmem._value_word(p_word text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN lower(regexp_replace(p_word, '[''’][[:alpha:]]+$|[.,:;!?)-]+$', ''));
COMMENT ON FUNCTION cogmem._value_word(text) IS
'A value as cogmem._values compares it: lower-cased, without a suffix after an apostrophe or trailing punctuation.';

-- Days and months are values in both languages (lower-case in Turkish, so no capital marks them).
CREATE OR REPLACE FUNCTION cogmem._values(p_content text)
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
RETURN (
    SELECT coalesce(array_agg(DISTINCT s.v ORDER BY s.v), '{}')
    FROM (
        -- A word with a digit, an @ or a dotted name; a day or a month (any case).
        SELECT cogmem._value_word(m[1]) AS v
        FROM
            regexp_matches(
                p_content,
                '([[:alnum:]_./:+@-]*[0-9@][[:alnum:]_./:+@-]*'
                || '|\m(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|'
                || 'may|june|july|august|september|october|november|december|pazartesi|salı|çarşamba|perşembe|'
                || 'cuma|cumartesi|pazar|ocak|şubat|mart|nisan|mayıs|haziran|temmuz|ağustos|eylül|ekim|kasım|'
                || 'aralık)[[:alpha:]]*)',
                'gi'
            ) AS m
        UNION ALL
        -- A capitalised word not opening a sentence (case matters here).
        SELECT cogmem._value_word(m[1])
        FROM regexp_matches(p_content, '(?<=[^.!?:[:space:]][[:space:]])([[:upper:]][[:alnum:]''’-]*)', 'g') AS m
    ) AS s
    WHERE length(s.v) > 1 OR s.v ~ '[0-9]'
);
COMMENT ON FUNCTION cogmem._values(text) IS
'The values a fact states: words with a digit or an @ (numbers, times, addresses, hosts, e-mails), names '
'(capitalised, not opening a sentence), days and months, lower-cased, a Turkish suffix after an apostrophe cut.';

-- Who or what a fact is for: a holder or a purpose the other fact of a pair does not name makes two facts
-- that both hold ("my wife's number", "the work address", "staging", "eşimin numarası", "iş adresim").
CREATE OR REPLACE FUNCTION cogmem._qualifiers(p_content text)
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
RETURN (
    SELECT coalesce(array_agg(DISTINCT lower(m[1]) ORDER BY lower(m[1])), '{}')
    FROM regexp_matches(
        p_content,
        '\m(work|office|home|personal|private|business|billing|shipping|delivery|mailing|postal|staging|stage|prod|'
        || 'production|dev|development|test|qa|sandbox|backup|secondary|primary|replica|mobile|cell|landline|desk|'
        || 'wife|husband|partner|son|daughter|kids?|mom|mother|dad|father|brother|sister|boss|manager|assistant|'
        || 'colleague|friend|neighbou?r|summer|winter|weekends?|weekdays?|holidays?|own|'
        || 'iş|işyeri|ofis|ev|fatura|teslimat|kargo|yedek|replika|cep|sabit|eş|koca|karı|oğl|kız|anne|baba|kardeş|'
        || 'abi|abla|patron|müdür|arkadaş|komşu|yazın|kışın|hafta\s+sonu|hafta\s+içi|bayram|tatil|kendi)'
        || '(?:s|es|''s|’s|im|ım|um|üm|imin|ımın|umun|ümün|in|ın|un|ün|i|ı|u|ü|de|da|te|ta|deki|daki|teki|taki|'
        || 'yeri|yerim|ler|lar|leri|ları|lerin|ların)?\M',
        'gi'
    ) AS m
);
COMMENT ON FUNCTION cogmem._qualifiers(text) IS
'The holders and purposes a fact names (work, home, billing, staging, wife, son; iş, ev, fatura, eşim, '
'oğlum), by their stem: a pair of facts about different ones both hold.';

-- What the newer text of a pair says of the older: that it corrects it (correction), that both hold
-- (a one-off, an addition, another period, the old told as history: compatible). Turkish words are read
-- folded (cogmem._fold_turkish, ı as i): "ADRESİM DEĞİŞTİ" is a correction under every collation.
CREATE OR REPLACE FUNCTION cogmem._supersession_cues(p_content text, OUT correction boolean, OUT compatible boolean)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_turkish text := cogmem._fold_turkish(p_content);  -- read once for every Turkish pattern
BEGIN
    correction := p_content ~* ('\m(actually|correction|corrected|not\s+anymore|no\s+longer|any\s?more|changed?|'
                                || 'moved|switch(ed)?|replaced?|instead|now|new|from\s+now\s+on|going\s+forward|'
                                || 'scratch\s+that|i\s+meant|mistake|typo|wrong|updated?|rescheduled|pushed|renamed|'
                                || 'migrated|retired|decommissioned|upgraded|no\s+more|not\s+[[:alnum:]]+\s+but)\M')
               OR v_turkish ~ ('(^|[^a-zçğöşü])(artik|aslinda|düzeltme|değişti|değiştir|'
                                || 'değişik|taşindi|taşindik|taşindim|taşidik|yanliş|pardon|bundan\s+sonra|yerine|yeni|güncel|'
                                || 'ertelendi|geçtik|geçti|kapandi|iptal|degisti|tasindi|yanlis)')
               -- "oldu" (it became) and "kaydı" (it moved) as verbs only: "olduğu gibi" (as it is) and
               -- "kaydımı" (my registration) say nothing changed.
               OR v_turkish ~ '(^|[^a-zçğöşü])(oldu|kaydi)(k|m|n|lar)?($|[^a-zçğöşü])';
    compatible := p_content ~* ('\m(just\s+(this|today|tomorrow|for)|only\s+(this|today|tomorrow|for\s+this)|'
                                || 'this\s+(time|once)|for\s+this\s+(week|weekend|month|time)|one[\s-]off|one\s+time|'
                                || 'exception|temporar(y|ily)|also|too|as\s+well|another|additionally|'
                                || 'in\s+addition|second|extra|alternate|used\s+to|back\s+(when|then)|years\s+ago|'
                                || 'in\s+the\s+past|during|on\s+weekends|on\s+the\s+day\s+of|that\s+day)\M')
               OR p_content ~* '(?<!from\s)\mthis\s+(week|month)\M'
               OR v_turkish ~ ('(^|[^a-zçğöşü])(bu\s+seferlik|sadece\s+bu|yalnizca\s+bu|'
                                || 'bugünlük|mahsus|istisna|geçici|bir\s+kereliğine|ayrica|bir\s+de|ek\s+olarak|ikinci|başka\s+bir|'
                                || 'eskiden|yillar\s+önce|zamaninda|sadece\s+bugün|bu\s+ay($|[^a-zçğöşü]|a|lik)|'
                                || 'bu\s+hafta($|[^a-zçğöşü]|ya|lik)|kampanya)');
END;
$$;
COMMENT ON FUNCTION cogmem._supersession_cues(text) IS
'Whether a newer fact says it corrects an older one (actually, moved, no longer; artık, değişti, yanlış) and '
'whether it says both hold (just this Friday, also, used to; bu seferlik, ayrıca, eskiden).';

-- The test of the heading, for one pair. score: NULL when the newer does not replace the older, else how
-- surely they are about the same thing (the subject's words and values in common, plus the cosine), to
-- choose the one older fact replaced among several; sure: a value changed and the newer says it corrects
-- something (else the older is only possibly superseded). p_similarity: their cosine (NULL without
-- embeddings: then the words in common alone say whether they are about the same thing).
DROP FUNCTION IF EXISTS cogmem._supersession(text, text, real, regconfig, text);  -- 932810f: the score alone
CREATE OR REPLACE FUNCTION cogmem._supersession(
    p_older text, p_newer text, p_similarity real, p_language regconfig, p_model text,
    OUT score real, OUT sure boolean
)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_old     text[];
    v_new     text[];
    v_cues    record;
    v_changed boolean;
    v_shared  integer;
    v_mine    text[];
    v_theirs  text[];
BEGIN
    -- Too far in meaning to be about the same thing: decided before any text is read. A large tenant's close
    -- memories (a radius made for conflicts) held a dozen of these a call at a million memories.
    IF p_similarity < cogmem._model_similarity(p_model, 'supersede_similarity') THEN
        sure := false;
        RETURN;
    END IF;
    v_old := cogmem._values(p_older);
    v_new := cogmem._values(p_newer);
    v_cues := cogmem._supersession_cues(p_newer);
    -- (c) both hold: said so, or two holders or purposes named (staging and prod), or one named by the
    -- newer alone unless it says it corrects the older ("pay from my personal account, not the joint one").
    v_mine := cogmem._qualifiers(p_newer);
    v_theirs := cogmem._qualifiers(p_older);
    IF v_cues.compatible OR (v_mine <> '{}' AND v_theirs <> '{}' AND NOT (v_mine && v_theirs))
       OR (NOT v_cues.correction AND NOT (v_mine <@ v_theirs)) THEN
        RETURN;
    END IF;
    -- (b) a value of the newer that the older lacks, and one of the older gone (or a correction said). A
    -- correction without a value read ("vegetarian now") is only possibly one.
    v_changed := NOT (v_new <@ v_old) AND (NOT (v_old <@ v_new) OR v_cues.correction);
    IF NOT v_changed AND NOT v_cues.correction THEN
        RETURN;
    END IF;
    -- (a) the same thing: the subject's words or its values in common, and close in meaning.
    SELECT count(*) INTO v_shared
    FROM (SELECT unnest(tsvector_to_array(to_tsvector(p_language, p_older)))
          INTERSECT
          SELECT unnest(tsvector_to_array(to_tsvector(p_language, p_newer)))) AS w (word)
    -- Not a number, not a stem too short to mean a subject (Turkish stems cut to "ba", "ö"), not a
    -- function word the dictionary keeps (değil, göre; "lar" of backup'lar).
    WHERE w.word !~ '[0-9]' AND char_length(w.word) >= 3
      AND w.word NOT IN ('değil', 'gör', 'göre', 'lar', 'ler', 'için', 'olarak', 'yaz', 'get', 'use', 'now', 'new');
    v_shared := v_shared + cardinality(ARRAY(SELECT unnest(v_old) INTERSECT SELECT unnest(v_new)));
    score := CASE WHEN p_similarity IS NULL AND v_shared >= 2 THEN v_shared
                  WHEN v_shared >= 1 AND p_similarity >= cogmem._model_similarity(p_model, 'supersede_similarity')
                      THEN v_shared + p_similarity END;
    sure := score IS NOT NULL AND v_changed AND v_cues.correction;
END;
$$;
COMMENT ON FUNCTION cogmem._supersession(text, text, real, regconfig, text) IS
'Whether a newer fact replaces an older one: about the same thing (close in meaning, a word or a value of '
'the subject in common), a value changed or a correction said, nothing saying both hold. score: NULL for '
'no, else the words and values in common plus the cosine; sure: a value changed and a correction said '
'(sql/036-supersession.sql).';

-- The mark, for both paths: older memories superseded by a newer one ('caller' or 'detected': out of
-- recall from the newer one's said_at) or possibly superseded ('possible': recalled after it, marked).
-- A memory already superseded keeps what replaced it first. Rows locked in memory_id order (as
-- cogmem._lock_stats does), so that two calls cannot deadlock. Audited, one row per older memory.
CREATE OR REPLACE FUNCTION cogmem._supersede(p_tenant text, p_newer bigint, p_older bigint[], p_how text)
RETURNS bigint[]
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_until  timestamptz;
    v_marked bigint[];
BEGIN
    SELECT coalesce(n.said_at, n.created_at) INTO v_until
    FROM cogmem.memories AS n WHERE n.tenant = p_tenant AND n.memory_id = p_newer;
    PERFORM FROM cogmem.memories AS m
    WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_older) ORDER BY m.memory_id FOR UPDATE;
    WITH marked AS (
        UPDATE cogmem.memories AS m
        SET superseded_by = p_newer, valid_until = CASE WHEN p_how <> 'possible' THEN v_until END
        WHERE m.tenant = p_tenant AND m.memory_id = ANY (p_older) AND m.memory_id <> p_newer
          AND m.valid_until IS NULL AND (p_how <> 'possible' OR m.superseded_by IS NULL)
        RETURNING m.memory_id
    )
    SELECT coalesce(array_agg(k.memory_id ORDER BY k.memory_id), '{}') INTO v_marked FROM marked AS k;
    INSERT INTO cogmem.audit_log (tenant, level, memory_id, event, detail)
    SELECT p_tenant, 'lifecycle', k.id, CASE WHEN p_how = 'possible' THEN 'possibly_superseded' ELSE 'superseded' END,
           jsonb_build_object('by', p_newer, 'how', p_how, 'valid_until', CASE WHEN p_how <> 'possible' THEN v_until END)
    FROM unnest(v_marked) AS k (id);
    RETURN v_marked;
END;
$$;
COMMENT ON FUNCTION cogmem._supersede(text, bigint, bigint[], text) IS
'Marks older memories superseded by a newer one (how: caller, detected) or possibly superseded (possible); '
'returns those marked; audited.';

DROP FUNCTION IF EXISTS cogmem._checked_supersedes(cogmem.tenants, bigint[], text, text);  -- _named_in_scope (015)

-- The path without the caller's judgement: of the older facts of the same scope close to a new fact in
-- meaning (p_close, found for duplicates and conflicts already; without an embedding, those with a word of
-- it), the one it replaces, if any. Never a rule or an incident (never-cut rings change through
-- conflicts, a person deciding), never one already superseded. A changed value with a correction said
-- ("actually", "artık") makes it superseded; anything less, possibly.
DROP FUNCTION IF EXISTS cogmem._detect_superseded(cogmem.tenants, bigint, text, public.vector, bigint[], text, text);
CREATE OR REPLACE FUNCTION cogmem._detect_superseded(
    t cogmem.tenants, p_newer bigint, p_content text, p_embedding public.vector, p_close bigint[],
    p_person text, p_agent text, p_turn boolean
)
RETURNS bigint[]
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
SET enable_seqscan = off
-- The cost a disabled scan carries would buy a JIT compilation (0.7 s) for a lookup of a few ids.
SET jit = off
AS $$
DECLARE
    v_older record;
    -- Without an embedding, the older facts that share a word, as one query built once (not per row).
    v_query tsquery := CASE WHEN p_embedding IS NULL THEN cogmem._or_query(
                           coalesce(tsvector_to_array(to_tsvector(t.language, p_content)), '{}')) END;
BEGIN
    -- A turn of a conversation is evidence of what was said when, and questions about a conversation ask
    -- about then as often as now: on our conversations, superseding turns (even surely) cost evidence
    -- recall (0.80 to 0.74 at 1,000 tokens). Only the caller's verdict supersedes a turn.
    IF p_turn THEN
        RETURN '{}';
    END IF;
    -- Two branches, the second cut by a one-time filter when there is an embedding: one condition with an
    -- OR read the whole tenant (3.2 s a call in a tenant of a million), where the close ones are a few ids.
    -- Without an embedding, the 20 that share the most of its words: the older facts with a word in common
    -- ("the deploy of the shop") were thousands a call in a large tenant, each read for values (docs/scaling.md).
    SELECT m.memory_id, s.sure INTO v_older
    FROM (SELECT a.memory_id, a.content, a.embedding, a.ring, a.valid_until
          FROM cogmem.memories AS a WHERE a.tenant = t.tenant AND a.memory_id = ANY (p_close)
          UNION ALL
          (SELECT a.memory_id, a.content, a.embedding, a.ring, a.valid_until
           FROM cogmem.memories AS a
           WHERE p_embedding IS NULL AND a.tenant = t.tenant AND a.search @@ v_query
             AND a.memory_id <> p_newer AND a.ring NOT IN ('shocks', 'dos_and_donts') AND a.valid_until IS NULL
             AND cogmem._same_scope(a.person, a.agent, p_person, p_agent)
           ORDER BY ts_rank(a.search, v_query) DESC, a.memory_id DESC
           LIMIT 20)) AS m
    CROSS JOIN LATERAL cogmem._supersession(m.content, p_content,
                                            (1 - (m.embedding OPERATOR(public.<=>) p_embedding))::real,
                                            t.language, t.embedding_model) AS s
    WHERE m.memory_id <> p_newer
      AND m.ring NOT IN ('shocks', 'dos_and_donts') AND m.valid_until IS NULL AND s.score IS NOT NULL
    ORDER BY s.score DESC, m.memory_id DESC
    LIMIT 1;
    IF v_older.memory_id IS NULL THEN
        RETURN '{}';
    END IF;
    RETURN cogmem._supersede(t.tenant, p_newer, ARRAY[v_older.memory_id],
                             CASE WHEN v_older.sure THEN 'detected' ELSE 'possible' END);
END;
$$;
COMMENT ON FUNCTION cogmem._detect_superseded(cogmem.tenants, bigint, text, public.vector, bigint[], text, text, boolean) IS
'Finds and marks the older fact of the same scope that a new one replaces (superseded with a correction said, '
'else possibly superseded), among the close memories given (by words without an embedding); never a '
'never-cut memory, never for a turn of a conversation (p_turn).';

-- A value as a correction names it: a number without its unit ("4:40pm" is corrected as "not 4:40").
CREATE OR REPLACE FUNCTION cogmem._value_key(p_value text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN p_value ~ '^[0-9]' THEN regexp_replace(p_value, '[[:alpha:]]+$', '') ELSE p_value END;
COMMENT ON FUNCTION cogmem._value_key(text) IS
'A value of cogmem._values as a correction names it: a number without its unit.';

-- Whether a turn has a word that cogmem._correction_marks looks for, every one of them ('%scra%': "scrap"
-- and "scratch that"): recall reads the marks of those only (about one turn in eight of our
-- conversations), not of every turn it ranks. Like cogmem.strength: no SET search_path, so that it is
-- inlined (so it calls no function of ours). Folded as cogmem._fold folds: under the C collation lower()
-- leaves "DEĞİL" as it is.
CREATE OR REPLACE FUNCTION cogmem._may_correct(p_content text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
RETURN pg_catalog.translate(pg_catalog.lower(p_content COLLATE "C"), 'ÇĞİÖŞÜ', 'çğiöşü') LIKE ANY (  -- noqa: CP03, LT01, LT06
    ARRAY[
        '%not %', '%no longer%', '%instead%', '%rather than%', '%scra%', '%cancel%', '%değil%', '%yerine%',
        '%iptal%', '%correction%', '%meant%', '%misread%', '%misheard%', '%mistake%', '%typo%', '%my bad%',
        '%wait no%', '%wrong%', '%yanl%', '%düzeltme%', '%duzeltme%', '%hata yap%'
    ]
);
COMMENT ON FUNCTION cogmem._may_correct(text) IS
'Whether a turn has a word that cogmem._correction_marks looks for (a negation, a mistake owned).';

-- How a turn of a conversation says it corrects an earlier one (sql/070-recall.sql places it before the
-- turn it corrects): a mistake owned ("I misread", "typo", "wait no"; "yanlış yazmışım", "düzeltme"), or
-- the words it negates ("THURSDAY not tuesday", "landing 6:40 now, not 4:40", "10:15 değil 11:45"), to be
-- matched against the older turn's values. A case-insensitive match pairs no İ with i under any collation
-- ("10:15 DEĞİL" under C.UTF-8): the mistakes owned are read folded (cogmem._fold_turkish), and the words
-- that negate spell their capitals out, since the negated word keeps its case. Stricter than
-- _supersession_cues: neighbouring turns say "now" and "new" (yeni, artık, oldu) without correcting
-- anything (placed by those, our Turkish conversations' evidence recall at 1,000 tokens fell from 0.80 to
-- 0.63), and friends say "actually" and "wrong" in passing. Read once per turn, not per pair: per pair,
-- a recall of a Turkish chat took seven times as long (docs/understanding.md).
CREATE OR REPLACE FUNCTION cogmem._correction_marks(p_content text, OUT owned boolean, OUT negated text[])
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
    SELECT p_content ~* ('\m(correction|i\s+meant|misread|misheard|typo|my\s+(mistake|bad)|scratch\s+that|wait\s+no|'
                         || '(got|had|wrote|said|put|typed|read)\s+(it|that|the\s+[[:alpha:]]+)\s+wrong|'
                         || 'wrong\s+(date|day|time|number|address|one|name))\M')
           OR cogmem._fold_turkish(p_content) ~ ('(^|[^[:alpha:]])yanli[şs]\s+(yaz|s[öo]yle|oku|bak|hatirla|gör|anla)'
                                                 || '|(^|[^[:alpha:]])(d[üu]zeltme|hata\s+yapmişim)'),
           ARRAY(SELECT DISTINCT cogmem._value_key(cogmem._value_word(w.word))
                 FROM regexp_matches(p_content,
                                     '\m(?:not|no\s+longer|instead\s+of|rather\s+than|scrap|cancel)\s+(?:the\s+)?'
                                     || '([[:alnum:]_./:+@-]+)|([[:alnum:]_./:+@''’-]+)\s+(?:de[ğĞ][iİ]l|yer[iİ]ne|[iİ]ptal)',
                                     'gi') AS m
                 CROSS JOIN LATERAL (SELECT coalesce(m[1], m[2]) AS word) AS w
                 -- Only a value can be one of the older's values ("not sure" negates none).
                 WHERE w.word ~ '[0-9@]|^[[:upper:]]' OR cogmem._values(w.word) <> '{}'
                 ORDER BY 1)
$$;
COMMENT ON FUNCTION cogmem._correction_marks(text) IS
'How a turn says it corrects an earlier one: owned, a mistake owned ("typo", "wait no"; "yanlış yazmışım"); '
'negated, the words it negates ("not tuesday", "10:15 değil"), as cogmem._value_key keys them.';

-- A question about the past brings superseded memories back, after what replaced them (sql/070-recall.sql).
CREATE OR REPLACE FUNCTION cogmem._asks_history(p_message text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    RETURN p_message ~* ('\m(used\s+to|before|previous(ly)?|earlier|old|former(ly)?|originally|history|'
                         || 'changed\s+from|in\s+the\s+past|at\s+first|last\s+(one|time))\M')
        OR p_message ~* ('(^|[^[:alpha:]])(eskiden|önceki|önceden|eski|daha\s+önce|değişmeden\s+önce|geçmişte|'
                         || 'ilk\s+başta|eskisi)');
END;
$$;
COMMENT ON FUNCTION cogmem._asks_history(text) IS
'Whether a message asks about the past (used to, before, previous; eskiden, önceki): recall then shows '
'superseded memories too, after what replaced them, marked.';
