-- Inbound attention: which ring a new memory belongs to, when the caller does not say.
-- Order matters: an imperative rule wins over incident words in the same sentence
-- ("Don't restart at night, last time everything went sideways" is a rule).
-- Turkish patterns spell letters out: [[:alpha:]] does not cover ç, ğ, ı, ö, ş, ü under the C locale.

CREATE OR REPLACE FUNCTION cogmem.route(content text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- PL/pgSQL, not SQL: a SQL function with a SET clause is parsed and planned on every call.
AS $$
BEGIN
    RETURN CASE
        -- 1. An explicit rule: an imperative at the start of a sentence, or Turkish rule forms.
        WHEN content ~* '(^|[.!?;:\n]\s*)(please\s+|pls\s+)?(don''?t|do\s+not|never|always|avoid|make\s+sure|ensure)\M'
          OR content ~* '(^|[^a-zçğıöşü])(asla|her\s+zaman|kesinlikle|sakın|yasak(tır)?)($|[^a-zçğıöşü])'
          OR content ~* '[a-zçğıöşü]{2,}(ma|me)(yın|yin|yınız|yiniz)?\s*[.!]*\s*$'
          OR content ~* '(^|[^a-zçğıöşü])(etme|yapma)(yin|yın|yiniz|yınız)?($|[^a-zçğıöşü])'
          OR content ~* '[a-zçğıöşü]{2,}(malı|meli)(dır|dir|yız|yiz|sınız|siniz|sın|sin)?($|[^a-zçğıöşü])'
            THEN 'dos_and_donts'
        -- 2. An incident with impact.
        WHEN (content ~* '\m(outage|incident|went\s+down|was\s+down|is\s+down|crash(ed|es)?|data\s+loss|lost\s+data|breach(ed)?|corrupt(ed|ion)?|downtime|post-?mortem|sev[- ]?[12]|went\s+sideways|fell\s+over|failed\s+over)\M'
              OR content ~* '(kesinti|çöktü|çökme|veri\s+kaybı|arıza|saldırı|ihlal|erişilemedi|erişilemez)')
         AND (content ~* '\m(customers?|users?|clients?|hours?|minutes?|revenue|production|prod|all|everything|whole|entire|lost|money|sla|orders?|site|shop)\M'
              OR content ~* '(müşteri|kullanıcı|saat|dakika|tüm|bütün|her\s+şey|para|üretim|canlı|sipariş)')
            THEN 'shocks'
        -- 3. Numbered or sequenced steps.
        WHEN content ~* '(^|\s)(1[.)]|step\s*1\M|first\M)[^\n]*(\s2[.)]|\mstep\s*2\M|\mthen\M|\mnext\M|\mfinally\M)'
          OR content ~* '(^|\s)(önce|ilk\s+olarak|adım\s*1)\M.*(sonra|ardından|adım\s*2)'
          OR content ~ '(^|\n)\s*[-*]\s+[^\n]+\n\s*[-*]\s+'
            THEN 'procedures'
        -- 4. A rule stated without an imperative.
        WHEN content ~* '\m(must|mustn''?t|must\s+not|shall\s+not|should\s+never|never|always|is\s+(not\s+allowed|forbidden|prohibited|mandatory|required))\M'
            THEN 'dos_and_donts'
        ELSE 'fresh'
    END;
END;
$$;
COMMENT ON FUNCTION cogmem.route(text) IS
'Inbound router: explicit rules (English and Turkish) -> dos_and_donts, incidents with impact -> shocks, '
'numbered or sequenced steps -> procedures, anything else -> fresh. Habits are earned, never routed.';
