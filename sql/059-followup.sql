-- Success read from the conversation: the next turn of a conversation after a recall says what became
-- of the answer the recall fed. "thanks, that worked" confirms it, "no, that's wrong" or "still failing"
-- corrects it, the same question again repeats it, and everything else (a new topic, small talk, a
-- clarifying question, "great, another outage" about the world) says nothing of it.
--
-- Agents behind MCP, LangGraph or plain SQL rarely call cogmem.feedback(), and without outcomes nothing
-- is ever reinforced. The judge here is a logistic regression over the turn's lexical cues and terms and,
-- when there is one, its MiniLM embedding and its closeness to the question. It is trained by
-- bench/train_judge.py on our labelled follow-ups (bench/corpus/followups: English and Turkish, work and
-- life) and ships in the routing model's tables as the models followup-embedding and followup-cues. A
-- verdict is given only above the threshold chosen for precision; below it the judge abstains, and an
-- abstention changes nothing. An exact repeat of the question is a repeat without a model.
--
-- The outcome it sets is marked implicit and never replaces an explicit cogmem.feedback(); explicit
-- feedback that comes later replaces it (sql/070-recall.sql). Figures: bench/RESULTS.md.

CREATE OR REPLACE FUNCTION cogmem._followup_cue_names()
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
RETURN ARRAY[
    'turkish', 'thanks', 'worked', 'approval', 'starts_no', 'still_again', 'failure', 'wrong', 'asked_again',
    'but_how', 'question', 'topic_change', 'sarcasm', 'positive_emoji', 'laughing', 'short', 'long', 'you_said',
    'contrast', 'tried', 'now_done', 'appreciate', 'not_understood', 'ironic_emoji'
];
COMMENT ON FUNCTION cogmem._followup_cue_names() IS
'Names of the lexical cues of cogmem._followup_cues(), in the same order (the judge''s columns).';

-- One cue per element, 0 or 1. Words are looked up in the folded word list, phrases with LIKE in the
-- words joined by spaces (see cogmem._inbound_cues for why so few regular expressions).
CREATE OR REPLACE FUNCTION cogmem._followup_cues(turn text)
RETURNS real[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v text := cogmem._fold(turn);
    w text[];
    p text;
BEGIN
    w := array_remove(regexp_split_to_array(v, '[^a-z0-9çğıöşüâîû'']+'), '');
    p := ' ' || array_to_string(w, ' ') || ' ';
    RETURN ARRAY[
        cogmem._looks_turkish(v),
        w && '{thanks,thank,thx,ty,cheers,tysm,teşekkürler,teşekkür,tesekkurler,sağol,sağolun,saol,eyv,eyvallah,mersi}'
            OR p LIKE ANY ('{"% sağ ol %","% çok sağ %"}'::text[]),
        w && '{worked,works,fixed,solved,resolved,oldu,çalıştı,çözüldü,düzeldi,halloldu,geçti,tamamdır,yaradı}'
            OR p LIKE ANY ('{"% did the trick %","% that did it %","% goes through %","% went through %","% came up %","% comes up %","% is healthy %","% it''s healthy %","% back up %","% işe yaradı %"}'::text[]),
        w && '{perfect,great,awesome,exactly,brilliant,nice,cool,excellent,süper,harika,mükemmel,aynen,mantıklı,şahane,efsane}'
            OR p LIKE ANY ('{"% makes sense %","% good to know %","% tam da %","% that''s it %","% spot on %","% very helpful %","% so helpful %","% çok iyi %"}'::text[]),
        v ~ '^\s*(no|nope|nah|not|hayır|yok|değil|yo)\M',
        w && '{still,again,hala,hâlâ,yine,gene}' OR p LIKE ANY ('{"% same error %","% same thing %","% aynı hata %","% aynı şey %"}'::text[]),
        w && '{doesn''t,didn''t,dont,don''t,won''t,can''t,cannot,error,errors,fails,failed,failing,broken,worse,olmadı,olmuyor,çalışmadı,çalışmıyor,yapamadım,bulamadım,hata,veriyor,yaramadı}'
            OR p LIKE ANY ('{"% not working %","% no luck %","% nothing changed %","% didn''t help %","% işe yaramadı %","% değişen bir şey %"}'::text[]),
        w && '{wrong,incorrect,outdated,deprecated,yanlış,eski,removed}'
            OR p LIKE ANY ('{"% not true %","% that''s not %","% isn''t %","% there is no %","% there''s no %","% no such %","% doesn''t exist %","% öyle bir %","% diye bir %","% yok ki %"}'::text[]),
        p LIKE ANY ('{"% i asked %","% i meant %","% i mean %","% asking %","% my question %","% i said %","% not what %","% i wanted to know %","% sordum %","% soruyorum %","% demek istedim %","% onu değil %","% sormadım %","% onu sordum %","% dedim %","% kastettim %"}'::text[]),
        p LIKE ANY ('{"% but how %","% ok but %","% okay but %","% so what %","% but what %","% actually do %","% can you just %","% ama nasıl %","% peki ama %","% tamam da %","% tamam ama %"}'::text[]),
        strpos(v, '?') > 0 OR w && '{mi,mı,mu,mü,misin,mısın,musun,müsün,midir,mıdır}',
        w && '{btw,unrelated,anyway,anyways,alakasız}'
            OR p LIKE ANY ('{"% by the way %","% random question %","% different thing %","% another question %","% other thing %","% bu arada %","% başka bir %","% konu dışı %","% bir de %"}'::text[]),
        p LIKE ANY ('{"% oh great %","% yeah right %","% just great %","% great another %","% love that for %","% sure because %","% of course it %","% ne güzel %","% harika ya %","% tam da istediğim %"}'::text[]),
        turn ~ '[😍🙏👍🎉❤🥳💯👌✅😊🙌]',
        turn ~ '[😂😅🤣]' OR w && '{lol,haha,hahaha,lmao,jsjs}',
        cardinality(w) <= 3,
        cardinality(w) >= 25,
        p LIKE ANY ('{"% you said %","% you told %","% you suggested %","% your suggestion %","% your answer %","% dediğin %","% söylediğin %","% önerdiğin %","% dediğiniz %"}'::text[]),
        w && '{but,however,although,though,yet,ama,fakat,ancak,lakin}',
        w && '{tried,ran,did,switched,installed,followed,applied,added,used,restarted,denedim,yaptım,kurdum,ekledim,çalıştırdım,uyguladım,değiştirdim}',
        w && '{now}' AND (w && '{works,working,fine,healthy,connects,passes,loads,runs,good}')
            OR p LIKE ANY ('{"% şimdi oldu %","% artık %"}'::text[]),
        w && '{appreciate,appreciated,lifesaver,sayende,sayenizde,kurtardın,kurtardınız}'
            OR p LIKE ANY ('{"% iyi ki %","% saved me %","% saved my %","% you rock %","% eline sağlık %"}'::text[]),
        w && '{anlamadım,confused,confusing,unclear}'
            OR p LIKE ANY ('{"% don''t get it %","% dont get it %","% don''t understand %","% dont understand %","% didn''t answer %","% just tell me %","% cevap vermedin %","% soruma cevap %","% hala anlamadım %","% net söyle %"}'::text[]),
        turn ~ '[🙃🙄😒👏]'
    ]::boolean[]::integer[]::real[];
END;
$$;
COMMENT ON FUNCTION cogmem._followup_cues(text) IS
'Lexical cues of a follow-up turn, 0 or 1 each, in the order of cogmem._followup_cue_names() (English and '
'Turkish): thanks, it worked, approval, a leading no, still or again, failure, wrong, I asked, a question, a '
'change of topic, sarcasm, emoji (glad, laughing, ironic), length, appreciation and not understanding.';

-- The judge's probability of each verdict for a turn (sql/025-routing-model.sql, _model_scores). The
-- features are the cues, the cosine of the turn to the question and the turn's embedding
-- (followup-embedding of the embeddings' model, cogmem._dense_model), or the cues alone when either
-- embedding is missing or no head reads their model (followup-cues).
-- The cues come from the caller, which shows them too: computed once.
DROP FUNCTION IF EXISTS cogmem._followup_scores(text, real[], public.vector, public.vector);  -- before issue 47
CREATE OR REPLACE FUNCTION cogmem._followup_scores(
    p_turn text, p_cues real[], p_embedding public.vector, p_asked public.vector, p_embedding_model text
)
RETURNS TABLE (model text, label text, probability double precision, threshold real)
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_cues     public.vector := p_cues::public.vector;
    v_model    text := coalesce(CASE WHEN p_embedding IS NOT NULL AND p_asked IS NOT NULL
                                     THEN cogmem._dense_model('followup-embedding', p_embedding_model) END,
                                'followup-cues');
    v_features public.vector;
BEGIN
    v_features := CASE WHEN v_model = 'followup-cues' THEN v_cues
                       ELSE v_cues OPERATOR(public.||) ARRAY[1 - (p_embedding OPERATOR(public.<=>) p_asked)]::public.vector
                            OPERATOR(public.||) p_embedding END;
    RETURN QUERY
    SELECT v_model, p.label, p.probability, p.threshold
    FROM cogmem._model_scores(v_model, v_features, cogmem._inbound_terms(p_turn)) AS p
    WHERE p.head = 'followup';
END;
$$;
COMMENT ON FUNCTION cogmem._followup_scores(text, real[], public.vector, public.vector, text) IS
'The follow-up judge''s probability of each verdict (confirmed, corrected, repeated, neutral) for a turn and '
'its cues (cogmem._followup_cues), with the threshold each needs, and the model that judged '
'(followup-embedding, of the embeddings'' model, or followup-cues).';

-- Reads only the shared model, no tenant's data: any caller may judge a text, as any may classify one.
-- Definer: application roles cannot read the model's tables.
DROP FUNCTION IF EXISTS cogmem.judge_followup(text, public.vector, public.vector);  -- before issue 47: no model
CREATE OR REPLACE FUNCTION cogmem.judge_followup(
    turn text, embedding public.vector DEFAULT NULL, asked public.vector DEFAULT NULL,
    embedding_model text DEFAULT NULL
)
RETURNS TABLE (verdict text, confidence real, probabilities jsonb, model text, cues text[])
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_cues real[];
BEGIN
    IF judge_followup.turn IS NULL THEN
        RETURN;
    END IF;
    PERFORM cogmem._check_embedding(judge_followup.embedding);
    PERFORM cogmem._check_embedding(judge_followup.asked);
    v_cues := cogmem._followup_cues(judge_followup.turn);
    RETURN QUERY
    WITH p AS (SELECT * FROM cogmem._followup_scores(judge_followup.turn, v_cues, judge_followup.embedding,
                                                     judge_followup.asked, judge_followup.embedding_model)),
    -- A verdict only above its threshold (chosen for precision); else neutral: the judge abstains.
    chosen AS (
        SELECT coalesce((SELECT p.label FROM p WHERE p.label <> 'neutral' AND p.probability >= p.threshold
                         ORDER BY p.probability DESC LIMIT 1), 'neutral') AS verdict
    )
    SELECT c.verdict, (SELECT p.probability FROM p WHERE p.label = c.verdict)::real,
           (SELECT jsonb_object_agg(p.label, round(p.probability::numeric, 4)) FROM p),
           (SELECT p.model FROM p LIMIT 1),
           ARRAY(SELECT x.name FROM unnest(cogmem._followup_cue_names(), v_cues) AS x (name, value) WHERE x.value > 0)
    FROM chosen AS c;
END;
$$;
COMMENT ON FUNCTION cogmem.judge_followup(text, public.vector, public.vector, text) IS
'What a turn says of the answer before it: confirmed, corrected, repeated, or neutral (nothing, or not sure '
'enough: the judge abstains), with the probability of that verdict, every verdict''s probability, the model '
'(followup-embedding when the turn and the question (asked) have embeddings of a model it was trained on '
'(embedding_model, else the session''s cogmem.embedding_model, else MiniLM), else followup-cues) and the '
'lexical cues that fired. NULL for NULL.';

-- An outcome on a recall cycle, from cogmem.feedback() (explicit) or from the next turn (implicit). The
-- credit itself is applied from the cycle row (sql/058-rehearsal.sql): a second outcome for the same cycle
-- replaces the first there, taking back what the first credited. Its callers checked reach.
CREATE OR REPLACE FUNCTION cogmem._record_outcome(
    p_tenant text, p_recall_id uuid, p_outcome real, p_used bigint[], p_source text, p_confidence real,
    p_detail jsonb DEFAULT '{}'
)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_previous real;
    v_credited integer;
    v_injected bigint[];
    v_used     bigint[];
    v_unknown  bigint[];
BEGIN
    -- The tenant's row before the cycle's row: the order of every lock on both (sql/058-rehearsal.sql).
    PERFORM cogmem._lock_tenant(p_tenant, false);
    SELECT r.outcome, array_remove(r.item_memory_ids, NULL) INTO v_previous, v_injected
    FROM cogmem.recalls AS r WHERE r.tenant = p_tenant AND r.recall_id = p_recall_id
    FOR UPDATE;
    -- Only what the answer used earns its outcome: in a small tenant every memory is injected every
    -- time, and crediting them all gives a good fact and a bad one the same success score.
    IF p_used IS NOT NULL THEN
        SELECT coalesce(array_agg(DISTINCT u.id ORDER BY u.id), '{}') INTO v_used
        FROM unnest(p_used) AS u (id) WHERE u.id IS NOT NULL;
        v_unknown := ARRAY(SELECT u.id FROM unnest(v_used) AS u (id) WHERE NOT u.id = ANY (v_injected));
        IF cardinality(v_unknown) > 0 THEN
            RAISE EXCEPTION 'recall % did not inject memories %', p_recall_id, v_unknown
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'used names memory_ids from that recall''s rows; NULL credits all it injected.';
        END IF;
    END IF;
    UPDATE cogmem.recalls AS r
    SET outcome = p_outcome, feedback_at = now(), feedback_used = v_used, pending = true,
        outcome_source = p_source, outcome_confidence = p_confidence
    WHERE r.tenant = p_tenant AND r.recall_id = p_recall_id;
    SELECT count(*) INTO v_credited FROM unnest(v_injected) AS i (id) WHERE v_used IS NULL OR i.id = ANY (v_used);
    INSERT INTO cogmem.audit_log (tenant, level, event, recall_id, detail)
    VALUES (p_tenant, 'outcome', CASE p_source WHEN 'explicit' THEN 'feedback' ELSE 'implicit_feedback' END,
            p_recall_id,
            jsonb_build_object('outcome', p_outcome, 'replaces', v_previous, 'memories_credited', v_credited,
                               'used', to_jsonb(v_used), 'source', p_source, 'confidence', p_confidence) || p_detail);
    RETURN v_credited;
END;
$$;
COMMENT ON FUNCTION cogmem._record_outcome(text, uuid, real, bigint[], text, real, jsonb) IS
'Sets a recall cycle''s outcome (explicit or implicit, with its confidence), credited to the memories in '
'used (NULL: all it injected), and audits it. Returns the number of memories credited.';

-- What an implicit outcome is credited to. The answer rested most likely on the recall's best match among
-- the memories it ranked (the never-cut rings are injected whatever the question); a correction also
-- names the injected memories closest in meaning to it, the ones it contradicts. Crediting everything
-- injected would give a good fact and a bad one the same score in a tenant small enough to inject both.
CREATE OR REPLACE FUNCTION cogmem._implicit_credit(
    p_tenant text, p_recall_id uuid, p_verdict text, p_turn public.vector, p_similarity real
)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_best     bigint[];
    v_injected bigint[];
    v_named    bigint[] := '{}';
BEGIN
    SELECT ARRAY(SELECT i.memory_id FROM unnest(r.item_layers, r.item_memory_ids, r.item_scores)
                         WITH ORDINALITY AS i (layer, memory_id, score, position)
                 WHERE i.memory_id IS NOT NULL AND i.layer IN ('long_term', 'habits', 'procedures', 'fresh')
                 ORDER BY i.score DESC, i.position LIMIT 1),
           array_remove(r.item_memory_ids, NULL)
    INTO v_best, v_injected
    FROM cogmem.recalls AS r WHERE r.tenant = p_tenant AND r.recall_id = p_recall_id;
    IF p_verdict = 'corrected' AND p_turn IS NOT NULL THEN
        v_named := ARRAY(SELECT m.memory_id FROM cogmem.memories AS m
                         WHERE m.tenant = p_tenant AND m.memory_id = ANY (v_injected) AND m.embedding IS NOT NULL
                           AND 1 - (m.embedding OPERATOR(public.<=>) p_turn) >= p_similarity);
    END IF;
    RETURN nullif(ARRAY(SELECT DISTINCT x.id FROM unnest(v_best || v_named) AS x (id) ORDER BY x.id), '{}');
END;
$$;
COMMENT ON FUNCTION cogmem._implicit_credit(text, uuid, text, public.vector, real) IS
'The memories an implicit outcome is credited to: the recall''s best-scored memory of a ranked ring, and for '
'a correction the injected memories at least p_similarity close in meaning to the correcting turn; NULL '
'(all it injected) when the recall ranked none.';

-- What the next turn said of a recall, kept on the recall and audited, abstentions too. A verdict sets
-- the outcome (confirmed 1; corrected or repeated 0: the answer did not help) unless explicit feedback
-- came first. Its callers checked reach and hold the tenant's lock.
CREATE OR REPLACE FUNCTION cogmem._apply_judgement(
    p_tenant text, p_recall_id uuid, p_verdict text, p_confidence real, p_judged_by text, p_used bigint[],
    p_detail jsonb
)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    v_explicit boolean;
    v_detail   jsonb := jsonb_build_object('verdict', p_verdict, 'judged_by', p_judged_by) || p_detail;
BEGIN
    SELECT r.outcome_source = 'explicit' INTO v_explicit
    FROM cogmem.recalls AS r WHERE r.tenant = p_tenant AND r.recall_id = p_recall_id FOR UPDATE;
    -- Judged: the message's embedding has served its one purpose.
    UPDATE cogmem.recalls AS r
    SET judged_at = now(), judged_verdict = p_verdict, judged_confidence = p_confidence, judged_by = p_judged_by,
        message_embedding = NULL
    WHERE r.tenant = p_tenant AND r.recall_id = p_recall_id;
    IF p_verdict <> 'neutral' AND v_explicit IS NOT TRUE THEN
        PERFORM cogmem._record_outcome(p_tenant, p_recall_id, CASE p_verdict WHEN 'confirmed' THEN 1 ELSE 0 END,
                                       p_used, 'implicit', p_confidence, v_detail);
        RETURN 'applied';
    END IF;
    INSERT INTO cogmem.audit_log (tenant, level, event, recall_id, detail)
    VALUES (p_tenant, 'outcome', 'judged', p_recall_id,
            v_detail || jsonb_build_object('confidence', p_confidence, 'source', 'implicit',
                                           'applied', false,
                                           'why', CASE WHEN p_verdict = 'neutral' THEN 'abstained'
                                                       ELSE 'explicit feedback came first' END));
    RETURN CASE WHEN p_verdict = 'neutral' THEN 'abstained' ELSE 'explicit kept' END;
END;
$$;
COMMENT ON FUNCTION cogmem._apply_judgement(text, uuid, text, real, text, bigint[], jsonb) IS
'Records what the next turn said of a recall (verdict, confidence, judge) and sets its implicit outcome '
'unless the judge abstained (neutral) or explicit feedback came first; audits either way. Returns applied, '
'abstained or explicit kept.';

-- A name folded as a person reads it: compatible forms unified (NFKC), case, and everything but letters
-- and digits dropped, so that "Assistant", "assistant\u200b", "follow‐up" (a Unicode hyphen) and "follow_up"
-- are each one name.
CREATE OR REPLACE FUNCTION cogmem._folded_name(p_name text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN regexp_replace(lower(normalize(p_name, nfkc)), '[^[:alnum:]]', '', 'g');
COMMENT ON FUNCTION cogmem._folded_name(text) IS
'A name with compatible forms unified, lower case, letters and digits only: how look-alike names compare.';

-- Who speaks for the agent, however the caller or its framework spells it (OpenAI's assistant, Gemini's
-- model, a tool or function result, a system or developer prompt): such a turn never judges a recall.
CREATE OR REPLACE FUNCTION cogmem._agents_own_turn(p_speaker text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
RETURN coalesce(cogmem._folded_name(p_speaker) IN (
    'assistant', 'agent', 'ai', 'bot', 'chatbot', 'model', 'system', 'developer', 'tool', 'function', 'ipython'
), FALSE);
COMMENT ON FUNCTION cogmem._agents_own_turn(text) IS
'Whether a speaker or role names the agent''s side of a conversation (assistant, model, tool, system, ...), '
'compared folded.';

-- The next turn of a conversation: the conversation's latest recall in the same scope (the person and the
-- agent: in a conversation shared by two people, one's "that is wrong" says nothing of the other's
-- answer), within the tenant's window and not judged yet, is judged by it. Called by remember (after
-- storing the turn: p_turn_memory is its memory), observe, and recall (before logging its own cycle). A
-- turn that is the recall's own message (the same turn recalled for and then remembered, in either order)
-- is not a reply to it, nor is what the agent's side says.
DROP FUNCTION IF EXISTS cogmem._judge_turn(text, text, text, text, public.vector, bigint);  -- before 0038: no scope
CREATE OR REPLACE FUNCTION cogmem._judge_turn(
    p_tenant text, p_conversation text, p_speaker text, p_turn text, p_embedding public.vector,
    p_turn_memory bigint, p_person text, p_agent text
)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, cogmem, public, pg_temp
AS $$
DECLARE
    t           cogmem.tenants;
    v_recall    record;
    v_embedding public.vector := p_embedding;
    v_sha256    bytea;
    j           record;
BEGIN
    IF p_conversation IS NULL OR nullif(btrim(p_turn), '') IS NULL OR cogmem._agents_own_turn(p_speaker) THEN
        RETURN;
    END IF;
    SELECT * INTO t FROM cogmem.tenants AS x WHERE x.tenant = p_tenant;
    IF NOT t.implicit_feedback THEN
        RETURN;
    END IF;
    -- Locked: two turns at once judge it once (the second sees it judged).
    SELECT r.recall_id, r.message_sha256, r.message_embedding, r.judged_at INTO v_recall
    FROM cogmem.recalls AS r
    WHERE r.tenant = p_tenant AND r.conversation = p_conversation AND r.created_at >= now() - t.implicit_feedback_window
      AND r.person IS NOT DISTINCT FROM nullif(btrim(p_person), '')
      AND r.agent IS NOT DISTINCT FROM nullif(btrim(p_agent), '')
    ORDER BY r.created_at DESC LIMIT 1
    FOR UPDATE;
    v_sha256 := sha256(convert_to(p_turn, 'UTF8'));
    IF v_recall.recall_id IS NULL OR v_recall.judged_at IS NOT NULL OR v_recall.message_sha256 = v_sha256 THEN
        RETURN;
    END IF;
    IF p_turn_memory IS NOT NULL AND v_embedding IS NULL THEN
        SELECT m.embedding INTO v_embedding FROM cogmem.memories AS m
        WHERE m.tenant = p_tenant AND m.memory_id = p_turn_memory;
    END IF;
    -- The same question reworded by the caller on its way to remember: its own turn, still.
    IF v_embedding IS NOT NULL AND v_recall.message_embedding IS NOT NULL
       AND 1 - (v_embedding OPERATOR(public.<=>) v_recall.message_embedding)
           >= cogmem._model_similarity(cogmem._embedding_model_of(p_tenant), 'same_message_similarity') THEN
        RETURN;
    END IF;
    SELECT * INTO j FROM cogmem.judge_followup(p_turn, v_embedding, v_recall.message_embedding,
                                                 cogmem._embedding_model_of(p_tenant));
    PERFORM cogmem._apply_judgement(
        p_tenant, v_recall.recall_id, j.verdict, j.confidence, j.model,
        cogmem._implicit_credit(p_tenant, v_recall.recall_id, j.verdict, v_embedding, t.dissonance_similarity),
        jsonb_build_object('turn_memory', p_turn_memory, 'turn_sha256', encode(v_sha256, 'hex'),
                           'cues', to_jsonb(j.cues), 'probabilities', j.probabilities));
END;
$$;
COMMENT ON FUNCTION cogmem._judge_turn(text, text, text, text, public.vector, bigint, text, text) IS
'Judges the latest unjudged recall of a conversation and scope (within the tenant''s implicit_feedback_window) by '
'the turn that follows it, and records the verdict (sql/059-followup.sql).';

CREATE OR REPLACE FUNCTION cogmem.judge_recall(
    tenant text, recall_id uuid, verdict text, confidence real DEFAULT 1, judged_by text DEFAULT 'caller',
    used bigint[] DEFAULT NULL
)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, cogmem, public, pg_temp
-- Definer: it writes the cycle row and the audit log, which application roles cannot. Reach is checked
-- first, and a recall of another tenant is unknown.
AS $$
#variable_conflict use_column
BEGIN
    PERFORM cogmem._require_tenant(judge_recall.tenant);
    IF judge_recall.verdict IS NULL OR judge_recall.verdict NOT IN ('confirmed', 'corrected', 'repeated', 'neutral') THEN
        RAISE EXCEPTION 'verdict must be confirmed, corrected, repeated or neutral, got %',
                        coalesce(judge_recall.verdict, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'neutral records that the judge abstained.';
    END IF;
    IF judge_recall.confidence IS NULL OR NOT (judge_recall.confidence BETWEEN 0 AND 1) THEN
        RAISE EXCEPTION 'confidence must be between 0 and 1, got %', coalesce(judge_recall.confidence::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'The judge''s probability of its verdict.';
    END IF;
    -- The audit and the outcome reports tell the database's own judge from the caller's by this name:
    -- no look-alike of followup-* ("Followup-embedding", a Unicode hyphen), no invisible characters.
    IF cogmem._name_problem('judge', to_jsonb(judge_recall.judged_by)) IS NOT NULL
       OR cogmem._folded_name(judge_recall.judged_by) LIKE 'followup%' THEN
        RAISE EXCEPTION 'judged_by must name the caller''s judge, got %',
                        coalesce(quote_literal(left(judge_recall.judged_by, 60)), 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A name of 1 to 200 characters without control or invisible characters; followup-* (in any '
                         || 'spelling) names the database''s own models.';
    END IF;
    PERFORM cogmem._lock_tenant(judge_recall.tenant, false);
    IF NOT EXISTS (SELECT FROM cogmem.recalls AS r
                   WHERE r.tenant = judge_recall.tenant AND r.recall_id = judge_recall.recall_id) THEN
        RAISE EXCEPTION 'unknown recall % in tenant "%"', coalesce(judge_recall.recall_id::text, 'NULL'),
                        judge_recall.tenant
            USING ERRCODE = 'no_data_found', HINT = 'Pass a recall_id returned by cogmem.recall() for this tenant.';
    END IF;
    RETURN cogmem._apply_judgement(judge_recall.tenant, judge_recall.recall_id, judge_recall.verdict,
                                   judge_recall.confidence, judge_recall.judged_by,
                                   coalesce(judge_recall.used, cogmem._implicit_credit(judge_recall.tenant,
                                            judge_recall.recall_id, judge_recall.verdict, NULL, 1)),
                                   '{}');
END;
$$;
COMMENT ON FUNCTION cogmem.judge_recall(text, uuid, text, real, text, bigint[]) IS
'Records the caller''s own judge''s verdict on a recall (what the next turn said of its answer: confirmed, '
'corrected, repeated, or neutral to abstain) as implicit feedback, as the database''s judge would, credited '
'to used (default: the recall''s best-scored ranked memory); explicit feedback is never replaced. The '
'recall is then judged, and the next turn does not judge it again. Returns applied, abstained or explicit kept.';

-- Explicit feedback, implicit feedback and abstentions, kept apart.
CREATE OR REPLACE VIEW cogmem.outcome_stats WITH (security_invoker = TRUE) AS
SELECT
    r.tenant,
    count(*) AS recalls,
    count(*) FILTER (WHERE r.conversation IS NOT NULL) AS in_conversations,
    count(*) FILTER (WHERE r.outcome_source = 'explicit') AS explicit,
    count(*) FILTER (WHERE r.outcome_source = 'implicit') AS implicit,
    count(*) FILTER (WHERE r.judged_verdict = 'confirmed') AS judged_confirmed,
    count(*) FILTER (WHERE r.judged_verdict = 'corrected') AS judged_corrected,
    count(*) FILTER (WHERE r.judged_verdict = 'repeated') AS judged_repeated,
    count(*) FILTER (WHERE r.judged_verdict = 'neutral') AS abstained,
    avg(r.outcome) FILTER (WHERE r.outcome_source = 'explicit')::real AS explicit_success,
    avg(r.outcome) FILTER (WHERE r.outcome_source = 'implicit')::real AS implicit_success
FROM cogmem.recalls AS r
GROUP BY r.tenant;
COMMENT ON VIEW cogmem.outcome_stats IS
'Per tenant: recalls, those in a conversation, outcomes by source (explicit feedback, implicit from the next '
'turn), what the judge said of next turns (confirmed, corrected, repeated, abstained: an explicit outcome '
'may have overruled a verdict), and the success rate by source.';
