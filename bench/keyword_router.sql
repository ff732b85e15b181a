-- The keyword router of the release before the learned model (sql/030-routing.sql at 716163a), kept
-- as the baseline it replaced (bench/inbound.py applies it to the same statements).
CREATE OR REPLACE FUNCTION pg_temp.keyword_route(content text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
SELECT CASE
    WHEN content ~* '(^|[.!?;:\n]\s*)(please\s+|pls\s+)?(don''?t|do\s+not|never|always|avoid|make\s+sure|ensure)\M'
      OR content ~* '(^|[^a-zçğıöşü])(asla|her\s+zaman|kesinlikle|sakın|yasak(tır)?)($|[^a-zçğıöşü])'
      OR content ~* '[a-zçğıöşü]{2,}(ma|me)(yın|yin|yınız|yiniz)?\s*[.!]*\s*$'
      OR content ~* '(^|[^a-zçğıöşü])(etme|yapma)(yin|yın|yiniz|yınız)?($|[^a-zçğıöşü])'
      OR content ~* '[a-zçğıöşü]{2,}(malı|meli)(dır|dir|yız|yiz|sınız|siniz|sın|sin)?($|[^a-zçğıöşü])'
        THEN 'dos_and_donts'
    WHEN (content ~* '\m(outage|incident|went\s+down|was\s+down|is\s+down|crash(ed|es)?|data\s+loss|lost\s+data|breach(ed)?|corrupt(ed|ion)?|downtime|post-?mortem|sev[- ]?[12]|went\s+sideways|fell\s+over|failed\s+over)\M'
          OR content ~* '(kesinti|çöktü|çökme|veri\s+kaybı|arıza|saldırı|ihlal|erişilemedi|erişilemez)')
     AND (content ~* '\m(customers?|users?|clients?|hours?|minutes?|revenue|production|prod|all|everything|whole|entire|lost|money|sla|orders?|site|shop)\M'
          OR content ~* '(müşteri|kullanıcı|saat|dakika|tüm|bütün|her\s+şey|para|üretim|canlı|sipariş)')
        THEN 'shocks'
    WHEN content ~* '(^|\s)(1[.)]|step\s*1\M|first\M)[^\n]*(\s2[.)]|\mstep\s*2\M|\mthen\M|\mnext\M|\mfinally\M)'
      OR content ~* '(^|\s)(önce|ilk\s+olarak|adım\s*1)\M.*(sonra|ardından|adım\s*2)'
      OR content ~ '(^|\n)\s*[-*]\s+[^\n]+\n\s*[-*]\s+'
        THEN 'procedures'
    WHEN content ~* '\m(must|mustn''?t|must\s+not|shall\s+not|should\s+never|never|always|is\s+(not\s+allowed|forbidden|prohibited|mandatory|required))\M'
        THEN 'dos_and_donts'
    ELSE 'fresh'
END
$$;
