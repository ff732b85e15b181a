-- Dates a text says, in English and Turkish: what a turn's "yesterday" meant when it was said, and what
-- span of time a question asks about ("last week", "in March", "geçen ay"). Pure functions: recall uses
-- them to tell when a turn happened and to prefer the turns of the span a question names
-- (tests/test_dates.py).
--
-- Words are read in the folded text (cogmem._fold), with explicit letter classes for Turkish.

CREATE OR REPLACE FUNCTION cogmem._month_number(p_word text)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN p_word ~ '^(jan|ocak)' THEN 1 WHEN p_word ~ '^(feb|şubat|subat)' THEN 2 WHEN p_word ~ '^(mar)' THEN 3
    WHEN p_word ~ '^(apr|nisan)' THEN 4 WHEN p_word ~ '^(may)' THEN 5 WHEN p_word ~ '^(jun|haziran)' THEN 6
    WHEN p_word ~ '^(jul|temmuz)' THEN 7 WHEN p_word ~ '^(aug|ağustos|agustos)' THEN 8
    WHEN p_word ~ '^(sep|eylül|eylul)' THEN 9 WHEN p_word ~ '^(oct|ekim)' THEN 10
    WHEN p_word ~ '^(nov|kasım|kasim)' THEN 11 WHEN p_word ~ '^(dec|aralık|aralik)' THEN 12
END;
COMMENT ON FUNCTION cogmem._month_number(text) IS
'The month (1-12) a folded English or Turkish month name (or its abbreviation) names; NULL otherwise.';

CREATE OR REPLACE FUNCTION cogmem._weekday_number(p_word text)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
-- ISO numbering: Monday 1 .. Sunday 7. "cumartesi" before "cuma", "pazartesi" before "pazar".
RETURN CASE
    WHEN p_word ~ '^(monday|pazartesi)' THEN 1 WHEN p_word ~ '^(tuesday|salı|sali)' THEN 2
    WHEN p_word ~ '^(wednesday|çarşamba|carsamba)' THEN 3 WHEN p_word ~ '^(thursday|perşembe|persembe)' THEN 4
    WHEN p_word ~ '^(friday|cuma)(?!rtesi)' THEN 5 WHEN p_word ~ '^(saturday|cumartesi)' THEN 6
    WHEN p_word ~ '^(sunday|pazar)' THEN 7
END;
COMMENT ON FUNCTION cogmem._weekday_number(text) IS
'The ISO weekday (Monday 1 .. Sunday 7) a folded English or Turkish day name names; NULL otherwise.';

-- The relative expressions of a text, each with the span of days it means for a text said on p_day:
-- (expression as written, first day, last day), in the order they appear.
CREATE OR REPLACE FUNCTION cogmem._relative_dates(p_text text, p_day date)
RETURNS TABLE (expression text, first_day date, last_day date)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
DECLARE
    v     text := cogmem._fold(p_text);
    m     text[];
    v_n   integer;
    v_day integer;
BEGIN
    IF p_text IS NULL OR p_day IS NULL THEN
        RETURN;
    END IF;
    FOR m IN
        SELECT x FROM regexp_matches(v,
            '(?:^|[^a-zçğıöşü0-9])('
            || 'the day before yesterday|day before yesterday|yesterday|last night|tonight|this morning|today|tomorrow'
            || '|last weekend|this weekend|next weekend|last week|this week|next week|last month|next month|last year'
            || '|(?:last|this past|next|this coming) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)'
            || '|(?:a|one|two|three|four|five|six|[0-9]+) (?:days?|weeks?|months?|years?) ago'
            || '|evvelsi gün|önceki gün|dün gece|dün|bu sabah|bu akşam|bugün|yarın|geçen hafta ?sonu|bu hafta ?sonu'
            || '|geçen hafta|bu hafta|haftaya|gelecek hafta|geçen ay|gelecek ay|geçen (?:yıl|sene)'
            || '|geçen (?:pazartesi|salı|çarşamba|perşembe|cumartesi|cuma|pazar)'
            || '|(?:bir|iki|üç|dört|beş|altı|[0-9]+) (?:gün|hafta|ay|yıl|sene) (?:önce|evvel)'
            || ')(?=$|[^a-zçğıöşü])', 'g') AS x
    LOOP
        expression := m[1];
        v_n := CASE split_part(expression, ' ', 1)
                   WHEN 'a' THEN 1 WHEN 'one' THEN 1 WHEN 'bir' THEN 1 WHEN 'two' THEN 2 WHEN 'iki' THEN 2
                   WHEN 'three' THEN 3 WHEN 'üç' THEN 3 WHEN 'four' THEN 4 WHEN 'dört' THEN 4
                   WHEN 'five' THEN 5 WHEN 'beş' THEN 5 WHEN 'six' THEN 6 WHEN 'altı' THEN 6
                   ELSE CASE WHEN split_part(expression, ' ', 1) ~ '^[0-9]{1,3}$'
                             THEN split_part(expression, ' ', 1)::integer END
               END;
        v_day := cogmem._weekday_number(split_part(expression, ' ', cardinality(string_to_array(expression, ' '))));
        first_day := CASE
                WHEN expression ~ '^(the day before yesterday|day before yesterday|evvelsi gün|önceki gün)$' THEN p_day - 2
                WHEN expression ~ '^(yesterday|last night|dün|dün gece)$' THEN p_day - 1
                WHEN expression ~ '^(tonight|this morning|today|bu sabah|bu akşam|bugün)$' THEN p_day
                WHEN expression ~ '^(tomorrow|yarın)$' THEN p_day + 1
                WHEN expression ~ '^(last weekend|geçen hafta ?sonu)$'
                    THEN p_day - extract(isodow FROM p_day)::integer - 1
                WHEN expression ~ '^(this weekend|bu hafta ?sonu)$'
                    THEN p_day - extract(isodow FROM p_day)::integer + 6
                WHEN expression = 'next weekend' THEN p_day - extract(isodow FROM p_day)::integer + 13
                WHEN expression ~ '^(last week|geçen hafta)$' THEN date_trunc('week', p_day)::date - 7
                WHEN expression ~ '^(this week|bu hafta)$' THEN date_trunc('week', p_day)::date
                WHEN expression ~ '^(next week|haftaya|gelecek hafta)$' THEN date_trunc('week', p_day)::date + 7
                WHEN expression ~ '^(last month|geçen ay)$' THEN (date_trunc('month', p_day) - interval '1 month')::date
                WHEN expression ~ '^(next month|gelecek ay)$' THEN (date_trunc('month', p_day) + interval '1 month')::date
                WHEN expression ~ '^(last year|geçen (yıl|sene))$' THEN (date_trunc('year', p_day) - interval '1 year')::date
                WHEN expression ~ '^(last|this past|geçen) ' AND v_day IS NOT NULL
                    THEN p_day - ((extract(isodow FROM p_day)::integer - v_day + 6) % 7 + 1)
                WHEN expression ~ '^(next|this coming) ' AND v_day IS NOT NULL
                    THEN p_day + ((v_day - extract(isodow FROM p_day)::integer + 6) % 7 + 1)
                WHEN expression ~ ' (days?|gün) ' THEN p_day - v_n
                WHEN expression ~ ' (weeks?|hafta) ' THEN p_day - 7 * v_n
                WHEN expression ~ ' (months?|ay) ' THEN (p_day - make_interval(months => v_n))::date
                WHEN expression ~ ' (years?|yıl|sene) ' THEN (p_day - make_interval(years => v_n))::date
            END;
        last_day := CASE
            WHEN expression ~ 'weekend|hafta ?sonu' THEN first_day + 1
            WHEN expression ~ '^(last week|this week|next week|geçen hafta|bu hafta|haftaya|gelecek hafta)$'
                THEN first_day + 6
            WHEN expression ~ '^(last month|next month|geçen ay|gelecek ay)$'
                THEN (first_day + interval '1 month' - interval '1 day')::date
            WHEN expression ~ '^(last year|geçen (yıl|sene))$' THEN (first_day + interval '1 year' - interval '1 day')::date
            ELSE first_day
        END;
        IF first_day IS NOT NULL THEN
            RETURN NEXT;
        END IF;
    END LOOP;
END;
$$;
COMMENT ON FUNCTION cogmem._relative_dates(text, date) IS
'The relative dates a text says (yesterday, last weekend, two weeks ago, dün, geçen hafta...), each with '
'the days it means for a text said on p_day, in order (English and Turkish).';

-- How recall shows when a turn was said: its day, and the days its relative dates meant.
CREATE OR REPLACE FUNCTION cogmem._when_said(p_content text, p_said_at timestamptz)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT to_char(p_said_at, 'YYYY-MM-DD') || coalesce('; ' || string_agg(
            r.expression || ' = ' || to_char(r.first_day, 'YYYY-MM-DD')
            || CASE WHEN r.last_day > r.first_day THEN '..' || to_char(r.last_day, 'YYYY-MM-DD') ELSE '' END,
            '; ' ORDER BY r.n), '')
        FROM (SELECT d.* FROM cogmem._relative_dates(p_content, p_said_at::date)
                  WITH ORDINALITY AS d (expression, first_day, last_day, n)
              ORDER BY d.n LIMIT 2) AS r
    );
END;
$$;
COMMENT ON FUNCTION cogmem._when_said(text, timestamptz) IS
'When a turn was said, as recall shows it: its day, then what its first relative dates meant '
'("2023-05-08; yesterday = 2023-05-07").';

-- The span of time a question asks about, if it names one: a month (with or without a year), a year, a
-- day, or a relative expression read from p_now. NULL when it names none.
CREATE OR REPLACE FUNCTION cogmem._asked_span(p_message text, p_now timestamptz)
RETURNS daterange
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, pg_temp
AS $$
DECLARE
    v       text := cogmem._fold(p_message);
    m       text[];
    v_month integer;
    v_year  integer;
    v_rel   record;
BEGIN
    IF p_message IS NULL THEN
        RETURN NULL;
    END IF;
    m := regexp_match(v, '(?:^|[^0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})(?:$|[^0-9])');
    IF m IS NOT NULL AND m[2]::integer BETWEEN 1 AND 12 AND m[3]::integer BETWEEN 1 AND 31 THEN
        RETURN daterange(make_date(m[1]::integer, m[2]::integer, 1) + (m[3]::integer - 1),
                         make_date(m[1]::integer, m[2]::integer, 1) + m[3]::integer);
    END IF;
    SELECT * INTO v_rel FROM cogmem._relative_dates(p_message, p_now::date) LIMIT 1;
    IF v_rel.first_day IS NOT NULL THEN
        RETURN daterange(v_rel.first_day, v_rel.last_day + 1);
    END IF;
    -- "may" is a month only beside a year or a day ("May 2023", "7 May"): otherwise the English verb.
    m := regexp_match(v, '(?:^|[^a-zçğıöşü])(january|february|march|april|june|july|august|september|october'
                         || '|november|december|ocak|şubat|mart|nisan|mayıs|haziran|temmuz|ağustos|eylül|ekim|kasım'
                         || '|aralık|may(?= +[0-9]))[a-zçğıöşü'']*(?:,? +(?:[0-9]{1,2},? +)?([0-9]{4}))?');
    IF m IS NULL THEN
        m := regexp_match(v, '[0-9]{1,2} +(may)()');
    END IF;
    v_year := coalesce(nullif(m[2], '')::integer, (regexp_match(v, '(?:^|[^0-9])((?:19|20|21)[0-9]{2})(?:$|[^0-9])'))[1]::integer);
    IF m IS NOT NULL THEN
        -- A month without a year: its last occurrence up to now.
        v_month := cogmem._month_number(m[1]);
        v_year := coalesce(v_year, extract(year FROM p_now)::integer
                                   - CASE WHEN v_month > extract(month FROM p_now) THEN 1 ELSE 0 END);
        RETURN daterange(make_date(v_year, v_month, 1), (make_date(v_year, v_month, 1) + interval '1 month')::date);
    END IF;
    IF v_year IS NOT NULL THEN
        RETURN daterange(make_date(v_year, 1, 1), make_date(v_year + 1, 1, 1));
    END IF;
    RETURN NULL;
END;
$$;
COMMENT ON FUNCTION cogmem._asked_span(text, timestamptz) IS
'The days a question asks about (a date, a relative expression read from p_now, a month, a year); NULL '
'when it names none.';
