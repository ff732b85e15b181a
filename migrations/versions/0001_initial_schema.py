"""Initial schema: tenants, layers, topics, memories, BIOS rules, recall log.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE SCHEMA IF NOT EXISTS cogmem;
COMMENT ON SCHEMA cogmem IS 'cogmem-pg: cognitive memory for AI agents';
-- pgvector lives in public: the functions pin search_path to pg_catalog, cogmem, public, pg_temp.
CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;

CREATE TYPE cogmem.ring AS ENUM ('shocks', 'dos_and_donts', 'long_term', 'habits', 'procedures', 'fresh');
COMMENT ON TYPE cogmem.ring IS 'Where a memory lives; each ring has its own injection and decay rules.';
CREATE TYPE cogmem.layer AS ENUM (
    'bios', 'shocks', 'dos_and_donts', 'gut', 'long_term', 'habits', 'procedures', 'fresh'
);
COMMENT ON TYPE cogmem.layer IS 'A slot of the recall budget: the six rings plus bios and gut.';
CREATE TYPE cogmem.severity AS ENUM ('must', 'should', 'may');
COMMENT ON TYPE cogmem.severity IS 'How binding a BIOS rule is.';

CREATE TABLE cogmem.tenants (
    tenant text PRIMARY KEY CHECK (tenant <> '' AND length(tenant) <= 200),
    language regconfig NOT NULL DEFAULT 'english',
    max_content_chars integer NOT NULL DEFAULT 8000 CHECK (max_content_chars BETWEEN 1 AND 1000000),
    duplicate_similarity real NOT NULL DEFAULT 0.92 CHECK (duplicate_similarity BETWEEN 0 AND 1),
    topic_bypass_similarity real NOT NULL DEFAULT 0.6 CHECK (topic_bypass_similarity BETWEEN 0 AND 1),
    -- Weighted reciprocal-rank fusion: score = sum(weight / (fusion_k + rank)); see bench/RESULTS.md.
    fusion_k integer NOT NULL DEFAULT 10 CHECK (fusion_k >= 1),
    lexical_weight real NOT NULL DEFAULT 0.5 CHECK (lexical_weight >= 0),
    vector_weight real NOT NULL DEFAULT 1.0 CHECK (vector_weight >= 0),
    topic_weight real NOT NULL DEFAULT 0.1 CHECK (topic_weight >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cogmem.tenants IS 'One row per tenant (customer, agent or workspace) with its settings.';

CREATE TABLE cogmem.tenant_layers (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    layer cogmem.layer NOT NULL,
    priority smallint NOT NULL,
    token_allocation integer NOT NULL CHECK (token_allocation >= 0),
    half_life interval CHECK (half_life > interval '0'),
    never_cut boolean NOT NULL DEFAULT false,
    PRIMARY KEY (tenant, layer)
);
COMMENT ON TABLE cogmem.tenant_layers IS
'Per-tenant recall budget split and decay: allocation in tokens, priority order, Ebbinghaus half-life '
'(NULL = never decays), and whether the layer is never cut.';

CREATE TABLE cogmem.default_topics (
    topic text PRIMARY KEY CHECK (topic = lower(topic) AND topic <> ''),
    keywords text[] NOT NULL
);
COMMENT ON TABLE cogmem.default_topics IS
'Global (not per tenant) topic taxonomy: keywords in English and Turkish. Tenants override per topic.';

CREATE TABLE cogmem.tenant_topics (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    topic text NOT NULL CHECK (topic = lower(topic) AND topic <> ''),
    keywords text[] NOT NULL,
    PRIMARY KEY (tenant, topic)
);
COMMENT ON TABLE cogmem.tenant_topics IS
'Per-tenant topic overrides: a row replaces the default keywords of that topic; empty keywords disable it.';

CREATE TABLE cogmem.topic_matchers (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    topic text NOT NULL,
    matcher tsquery NOT NULL,
    PRIMARY KEY (tenant, topic)
);
COMMENT ON TABLE cogmem.topic_matchers IS
'Each tenant''s taxonomy compiled to one tsquery per topic (derived; rebuilt when topics change).';

CREATE TABLE cogmem.memories (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    memory_id bigint GENERATED ALWAYS AS IDENTITY,
    ring cogmem.ring NOT NULL DEFAULT 'fresh',
    content text NOT NULL CHECK (content <> ''),
    topics text[] NOT NULL DEFAULT '{}',
    language regconfig NOT NULL DEFAULT 'english',
    search tsvector GENERATED ALWAYS AS (to_tsvector(language, content)) STORED,
    -- Normalised text: case, punctuation and spacing do not make a memory new.
    fingerprint text GENERATED ALWAYS AS (
        md5(btrim(lower(regexp_replace(content, '[[:space:][:punct:]]+', ' ', 'g'))))
    ) STORED,
    token_estimate integer GENERATED ALWAYS AS (greatest(1, ceil(length(content) / 4.0)::integer)) STORED,
    embedding public.vector(384),
    redactions text[] NOT NULL DEFAULT '{}',
    source jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(source) = 'object'),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, memory_id)
);
COMMENT ON TABLE cogmem.memories IS
'Learned memories, one ring each. Write through cogmem.remember(); read cogmem.memory_overview.';

-- What recall, feedback and the nightly consolidation change lives in a narrow table of its own:
-- updating it never rewrites the wide row or its vector, full-text and topic index entries (HOT updates).
CREATE TABLE cogmem.memory_stats (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    confidence real NOT NULL DEFAULT 0.5 CHECK (confidence BETWEEN 0 AND 1),
    reinforced boolean NOT NULL DEFAULT false,
    recall_count integer NOT NULL DEFAULT 0,
    rehearsal_count integer NOT NULL DEFAULT 0,
    outcome_count integer NOT NULL DEFAULT 0,
    outcome_sum real NOT NULL DEFAULT 0,
    success_score real GENERATED ALWAYS AS (
        CASE WHEN outcome_count > 0 THEN outcome_sum / outcome_count END
    ) STORED,
    last_recalled_at timestamptz,
    PRIMARY KEY (tenant, memory_id),
    FOREIGN KEY (tenant, memory_id) REFERENCES cogmem.memories ON DELETE CASCADE
) WITH (fillfactor = 70);
COMMENT ON TABLE cogmem.memory_stats IS
'Per-memory state: confidence, reinforced (decay stopped), recalls, rehearsals (heard again), feedback '
'outcomes (success_score = mean outcome), last rehearsal time (restarts the Ebbinghaus clock).';
CREATE UNIQUE INDEX memories_tenant_fingerprint_key ON cogmem.memories (tenant, fingerprint);
CREATE INDEX memories_search_idx ON cogmem.memories USING gin (search);
CREATE INDEX memories_topics_idx ON cogmem.memories USING gin (topics);
CREATE INDEX memories_tenant_ring_idx ON cogmem.memories (tenant, ring);
CREATE INDEX memories_embedding_idx ON cogmem.memories USING hnsw (embedding public.vector_cosine_ops);

CREATE TABLE cogmem.memory_events (
    tenant text NOT NULL,
    event_id bigint GENERATED ALWAYS AS IDENTITY,
    memory_id bigint NOT NULL,
    event text NOT NULL,
    detail jsonb NOT NULL DEFAULT '{}',
    at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, event_id)
);
COMMENT ON TABLE cogmem.memory_events IS
'What happened to each memory (created, duplicate rehearsal, redaction), without secret text.';
CREATE INDEX memory_events_memory_idx ON cogmem.memory_events (tenant, memory_id);

CREATE TABLE cogmem.bios_rules (
    rule_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant text REFERENCES cogmem.tenants ON DELETE CASCADE,
    category text NOT NULL CHECK (category = lower(category) AND category <> ''),
    rule text NOT NULL CHECK (rule <> ''),
    severity cogmem.severity NOT NULL DEFAULT 'must',
    preset text,
    requirement text,
    topics text[] NOT NULL DEFAULT '{}',
    always_on boolean NOT NULL DEFAULT false,
    token_estimate integer GENERATED ALWAYS AS (greatest(1, ceil(length(rule) / 4.0)::integer)) STORED,
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cogmem.bios_rules IS
'Given (not learned) rules. Global reference table: tenant NULL means every tenant. Immutable.';
CREATE UNIQUE INDEX bios_rules_scope_category_rule_key
ON cogmem.bios_rules ((coalesce(tenant, '')), category, md5(rule));

CREATE TABLE cogmem.bios_rule_events (
    rule_id bigint NOT NULL REFERENCES cogmem.bios_rules,
    event_id bigint GENERATED ALWAYS AS IDENTITY,
    event text NOT NULL CHECK (event IN ('retired')),
    reason text NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (rule_id, event_id)
);
COMMENT ON TABLE cogmem.bios_rule_events IS 'Append-only life events of BIOS rules (global, like the rules).';

CREATE TABLE cogmem.recalls (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    recall_id uuid NOT NULL DEFAULT gen_random_uuid(),
    conversation text,
    message_sha256 bytea NOT NULL,
    topics text[] NOT NULL,
    budget integer NOT NULL,
    tokens_used integer NOT NULL,
    outcome real CHECK (outcome BETWEEN 0 AND 1),
    feedback_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, recall_id)
);
COMMENT ON TABLE cogmem.recalls IS 'One row per recall cycle; outcome is set by cogmem.feedback().';
CREATE UNIQUE INDEX recalls_recall_id_key ON cogmem.recalls (recall_id);

CREATE TABLE cogmem.recall_items (
    tenant text NOT NULL,
    recall_id uuid NOT NULL,
    position smallint NOT NULL,
    layer cogmem.layer NOT NULL,
    memory_id bigint,
    rule_id bigint,
    score real NOT NULL,
    tokens integer NOT NULL,
    reason text NOT NULL,
    PRIMARY KEY (tenant, recall_id, position),
    FOREIGN KEY (tenant, recall_id) REFERENCES cogmem.recalls ON DELETE CASCADE,
    CHECK ((memory_id IS NULL) <> (rule_id IS NULL))
);
COMMENT ON TABLE cogmem.recall_items IS 'What each recall injected, with layer, score, tokens and reason.';
CREATE INDEX recall_items_memory_idx ON cogmem.recall_items (tenant, memory_id);
"""

TOPICS = {
    "server": [
        "server",
        "servers",
        "vm",
        "restart",
        "reboot",
        "nginx",
        "apache",
        "systemd",
        "service",
        "uptime",
        "cpu",
        "disk",
        "linux",
        "maintenance window",
        "sunucu",
        "makine",
        "yeniden başlat",
        "servis",
        "bakım",
    ],
    "network": [
        "network",
        "firewall",
        "vpn",
        "router",
        "switch",
        "latency",
        "bandwidth",
        "subnet",
        "load balancer",
        "ip",
        "port",
        "ağ",
        "güvenlik duvarı",
        "bağlantı",
    ],
    "dns": ["dns", "domain", "nameserver", "cname", "mx record", "a record", "ttl", "zone", "resolver", "alan adı"],
    "security": [
        "security",
        "password",
        "credential",
        "breach",
        "vulnerability",
        "mfa",
        "2fa",
        "certificate",
        "ssl",
        "tls",
        "encryption",
        "secret",
        "access control",
        "phishing",
        "güvenlik",
        "şifre",
        "parola",
        "sertifika",
        "yetki",
    ],
    "billing": [
        "billing",
        "invoice",
        "payment",
        "charge",
        "refund",
        "subscription",
        "pricing",
        "price",
        "vat",
        "bill",
        "pay",
        "bank transfer",
        "fatura",
        "ödeme",
        "abonelik",
        "ücret",
        "iade",
    ],
    "payments": ["card", "cardholder", "pan", "cvv", "pci", "payment card", "kart", "kredi kartı"],
    "database": [
        "database",
        "db",
        "postgres",
        "postgresql",
        "mysql",
        "sql",
        "query",
        "replica",
        "schema",
        "migration",
        "veritabanı",
        "tablo",
    ],
    "deployment": [
        "deploy",
        "deployment",
        "release",
        "rollout",
        "rollback",
        "pipeline",
        "kubernetes",
        "docker",
        "helm",
        "ci",
        "dağıtım",
        "yayın",
        "sürüm",
    ],
    "backup": ["backup", "restore", "snapshot", "recovery", "yedek", "yedekleme", "geri yükleme"],
    "email": ["email", "e-mail", "mail", "smtp", "inbox", "mailbox", "imap", "spam", "e-posta", "posta"],
    "meeting": ["meeting", "call", "agenda", "standup", "calendar", "toplantı", "görüşme", "ajanda"],
    "monitoring": [
        "monitoring",
        "alert",
        "alerting",
        "metrics",
        "logs",
        "logging",
        "grafana",
        "prometheus",
        "pager",
        "on call",
        "on-call",
        "nöbet",
        "izleme",
        "alarm",
    ],
    "support": ["customer", "ticket", "support", "complaint", "müşteri", "destek", "şikayet"],
}


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def upgrade() -> None:
    execute(UPGRADE)
    rows = ",\n".join(
        f"({_literal(topic)}, ARRAY[{', '.join(_literal(k) for k in words)}])" for topic, words in TOPICS.items()
    )
    execute(f"INSERT INTO cogmem.default_topics (topic, keywords) VALUES\n{rows};")


def downgrade() -> None:
    execute("DROP SCHEMA cogmem CASCADE")
