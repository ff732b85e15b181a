-- Audit views: the trail (sql/100-audit-chain.sql) by level, per memory and per day, for auditors and BI
-- tools. They read through row-level security: each role sees the tenants it reaches.

CREATE OR REPLACE VIEW cogmem.audit_heads WITH (security_invoker = TRUE) AS
SELECT DISTINCT ON (c.tenant)
    c.tenant,
    c.seq,
    c.audit_id,
    encode(c.row_hash, 'hex') AS head_sha256,
    c.sealed_at
FROM cogmem.audit_chain AS c
ORDER BY c.tenant ASC, c.seq DESC;
COMMENT ON VIEW cogmem.audit_heads IS
'The latest hash of each tenant''s chain: publish or store it elsewhere, and a rewrite of the whole '
'chain from an earlier point becomes detectable too.';

-- Documented, stable views for BI tools. They run with the reader's rights (row-level security applies).
CREATE OR REPLACE VIEW cogmem.audit_trail WITH (security_invoker = TRUE) AS
SELECT
    l.audit_id,
    l.tenant,
    l.logged_at,
    l.at,
    l.level,
    l.event,
    l.memory_id,
    l.recall_id,
    l.actor,
    l.detail,
    c.seq IS NOT NULL AS sealed
FROM cogmem.audit_log AS l
LEFT JOIN cogmem.audit_chain AS c ON l.tenant = c.tenant AND l.audit_id = c.audit_id;
COMMENT ON VIEW cogmem.audit_trail IS 'Every audit row, with whether it is sealed into the hash chain yet.';

CREATE OR REPLACE VIEW cogmem.audit_writes WITH (security_invoker = TRUE) AS
SELECT * FROM cogmem.audit_trail WHERE level = 'write';
COMMENT ON VIEW cogmem.audit_writes IS 'Level 1: memories created, rehearsed, redacted, erased.';

CREATE OR REPLACE VIEW cogmem.audit_recalls WITH (security_invoker = TRUE) AS
SELECT
    t.audit_id,
    t.tenant,
    t.recall_id,
    t.at,
    t.actor,
    t.detail ->> 'message_sha256' AS message_sha256,
    -- The conversation's hash since revision 0038 (an id may name a person, and the audit outlives an
    -- erasure); the id itself in rows audited before.
    coalesce(t.detail ->> 'conversation_sha256', t.detail ->> 'conversation') AS conversation,
    array(SELECT jsonb_array_elements_text(t.detail -> 'topics')) AS topics,
    (t.detail ->> 'budget')::integer AS budget,
    (t.detail ->> 'tokens_used')::integer AS tokens_used,
    -- Items are an object of arrays (an array of objects before migration 0007).
    coalesce(jsonb_array_length(t.detail -> 'items' -> 'layer'), jsonb_array_length(t.detail -> 'items')) AS items,
    t.sealed
FROM cogmem.audit_trail AS t WHERE t.level = 'recall';
COMMENT ON VIEW cogmem.audit_recalls IS
'Level 2: one row per recall cycle (conversation: the SHA-256 of its id, which groups a conversation''s '
'recalls and names no one; the id itself in recalls audited before revision 0038).';

CREATE OR REPLACE VIEW cogmem.audit_recall_items WITH (security_invoker = TRUE) AS
SELECT
    l.tenant,
    l.recall_id,
    l.at,
    i.item,
    i.layer,
    i.memory_id,
    i.rule_id,
    i.score,
    i.tokens,
    i.reason
FROM cogmem.audit_log AS l
CROSS JOIN
    LATERAL (
        -- Recalls log their items as an object of arrays, one per field, read here by position.
        SELECT
            e.item::integer AS item,
            e.layer,
            (l.detail -> 'items' -> 'memory_id' ->> (e.item - 1)::integer)::bigint AS memory_id,
            (l.detail -> 'items' -> 'rule_id' ->> (e.item - 1)::integer)::bigint AS rule_id,
            (l.detail -> 'items' -> 'score' ->> (e.item - 1)::integer)::real AS score,
            (l.detail -> 'items' -> 'tokens' ->> (e.item - 1)::integer)::integer AS tokens,
            l.detail -> 'items' -> 'reason' ->> (e.item - 1)::integer AS reason
        FROM jsonb_array_elements_text(l.detail -> 'items' -> 'layer') WITH ORDINALITY AS e (layer, item)
        UNION ALL
        -- Rows written before migration 0007 hold an array of objects (the audit is immutable: they stay so).
        SELECT
            r.item,
            r.layer,
            r.memory_id,
            r.rule_id,
            r.score,
            r.tokens,
            r.reason
        FROM jsonb_to_recordset(CASE WHEN jsonb_typeof(l.detail -> 'items') = 'array' THEN l.detail -> 'items' END)
            AS r (item integer, layer text, memory_id bigint, rule_id bigint, score real, tokens integer, reason text)
    ) AS i
WHERE l.level = 'recall';
COMMENT ON VIEW cogmem.audit_recall_items IS 'Level 2, item by item: what each recall injected and why.';

CREATE OR REPLACE VIEW cogmem.audit_outcomes WITH (security_invoker = TRUE) AS
SELECT
    t.audit_id,
    t.tenant,
    t.recall_id,
    t.at,
    t.actor,
    (t.detail ->> 'outcome')::real AS outcome,
    (t.detail ->> 'replaces')::real AS replaces,
    (t.detail ->> 'memories_credited')::integer AS memories_credited,
    t.sealed,
    -- Before 0032 every outcome was explicit feedback.
    coalesce(t.detail ->> 'source', 'explicit') AS source,
    t.detail ->> 'verdict' AS verdict,
    coalesce((t.detail ->> 'confidence')::real, 1) AS confidence,
    t.detail ->> 'judged_by' AS judged_by,
    t.event
FROM cogmem.audit_trail AS t WHERE t.level = 'outcome';
COMMENT ON VIEW cogmem.audit_outcomes IS
'Level 3: outcomes of recall cycles (a later one replaces an earlier): explicit feedback (event feedback), '
'implicit feedback read from the next turn (implicit_feedback, with verdict, confidence and judge), and '
'judgements that set nothing (judged: the judge abstained, or explicit feedback came first).';

CREATE OR REPLACE VIEW cogmem.audit_lifecycle WITH (security_invoker = TRUE) AS
SELECT * FROM cogmem.audit_trail WHERE level = 'lifecycle';
COMMENT ON VIEW cogmem.audit_lifecycle IS
'Level 4: consolidation decisions (merged, reinforced, promoted, weakened, deleted; nightly counts).';

CREATE OR REPLACE VIEW cogmem.audit_governance WITH (security_invoker = TRUE) AS
SELECT * FROM cogmem.audit_trail WHERE level = 'governance';
COMMENT ON VIEW cogmem.audit_governance IS
'Level 5: tenants and settings, topics, BIOS rules, access grants, vault use, erasure, schema upgrades.';

CREATE OR REPLACE VIEW cogmem.memory_history WITH (security_invoker = TRUE) AS
SELECT
    l.tenant,
    l.memory_id,
    l.audit_id,
    l.at,
    l.level,
    l.event,
    l.actor,
    l.detail
FROM cogmem.audit_log AS l
WHERE l.memory_id IS NOT NULL
UNION ALL
-- Consolidation logs one row per decision, listing the memories it touched: one array per field
-- (migration 0012 on), zipped back here, or, in older rows, an array of one object per memory.
SELECT
    l.tenant,
    e.memory_id::bigint AS memory_id,
    l.audit_id,
    l.at,
    l.level,
    l.event,
    l.actor,
    (l.detail - 'memories') || coalesce((
        SELECT jsonb_object_agg(f.key, f.value -> (e.n - 1)::integer)
        FROM jsonb_each(l.detail -> 'memories') AS f
        WHERE f.key <> 'memory_id'
    ), '{}') AS detail
FROM cogmem.audit_log AS l
CROSS JOIN LATERAL jsonb_array_elements_text(l.detail -> 'memories' -> 'memory_id') WITH ORDINALITY AS e (memory_id, n)
WHERE l.level = 'lifecycle' AND jsonb_typeof(l.detail -> 'memories') = 'object'
UNION ALL
SELECT
    l.tenant,
    (e.item ->> 'memory_id')::bigint AS memory_id,
    l.audit_id,
    l.at,
    l.level,
    l.event,
    l.actor,
    (l.detail - 'memories') || (e.item - 'memory_id') AS detail
FROM cogmem.audit_log AS l
CROSS JOIN LATERAL jsonb_array_elements(l.detail -> 'memories') AS e (item)
WHERE l.level = 'lifecycle' AND jsonb_typeof(l.detail -> 'memories') = 'array';
COMMENT ON VIEW cogmem.memory_history IS
'What happened to each memory, from the audit trail (lifecycle batches expanded per memory).';

-- For cogmem_bi: aggregates only. These views run with their owner's rights, so a BI role needs no
-- access to rows and gets counts, never contents; of the tenants it was granted (or all, with '*').
CREATE OR REPLACE VIEW cogmem.audit_daily AS
SELECT
    l.tenant,
    (l.at AT TIME ZONE 'UTC')::date AS day,
    l.level,
    l.event,
    count(*) AS events
FROM cogmem.audit_log AS l
WHERE (SELECT cogmem.reaches_every_tenant()) OR l.tenant IN (SELECT unnest(cogmem.reachable_tenants()))
GROUP BY l.tenant, (l.at AT TIME ZONE 'UTC')::date, l.level, l.event;
COMMENT ON VIEW cogmem.audit_daily IS 'Events per tenant, day (UTC), level and event. Aggregates only.';

-- Recalls not yet applied count too (sql/058-rehearsal.sql). Read from the cycle rows themselves: a view
-- that applies its reader's row-level security, as pending_stats does, would check this view's reader.
CREATE OR REPLACE VIEW cogmem.memory_census AS
WITH pending AS (
    SELECT
        r.tenant,
        i.memory_id,
        count(*) AS recalls
    FROM cogmem.recalls AS r
    CROSS JOIN LATERAL unnest(r.item_memory_ids) AS i (memory_id)
    WHERE r.pending AND NOT r.rehearsed
    GROUP BY r.tenant, i.memory_id
)

SELECT
    m.tenant,
    m.ring::text AS ring,
    count(*) AS memories,
    sum(m.token_estimate) AS tokens,
    avg(s.confidence)::real AS avg_confidence,
    avg(s.success_score)::real AS avg_success,
    sum(s.recall_count + coalesce(p.recalls, 0)::integer) AS recalls
FROM cogmem.memories AS m
INNER JOIN cogmem.memory_stats AS s ON m.tenant = s.tenant AND m.memory_id = s.memory_id
LEFT JOIN pending AS p ON m.tenant = p.tenant AND m.memory_id = p.memory_id
WHERE (SELECT cogmem.reaches_every_tenant()) OR m.tenant IN (SELECT unnest(cogmem.reachable_tenants()))
GROUP BY m.tenant, m.ring;
COMMENT ON VIEW cogmem.memory_census IS 'Memories per tenant and ring with mean confidence. Aggregates only.';
