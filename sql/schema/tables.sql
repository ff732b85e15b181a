-- The cogmem schema's tables, sequences, indexes, constraints, triggers, policies and comments at the
-- head revision, as migrations/ leave them (functions and views: sql/*.sql). Generated: make schema.

CREATE SCHEMA cogmem;

COMMENT ON SCHEMA cogmem IS 'cogmem-pg: cognitive memory for AI agents';

CREATE TYPE cogmem.ring AS ENUM (
    'shocks',
    'dos_and_donts',
    'long_term',
    'habits',
    'procedures',
    'fresh'
);

COMMENT ON TYPE cogmem.ring IS 'Where a memory lives; each ring has its own injection and decay rules.';

CREATE TYPE cogmem._batch_item AS (
	item integer,
	content text,
	ring cogmem.ring,
	routed boolean,
	topics text[],
	embedding public.vector,
	source jsonb,
	redactions text[],
	fingerprint text,
	rule text,
	candidate text,
	candidate_p real
);

COMMENT ON TYPE cogmem._batch_item IS 'One prepared item of cogmem.remember_many() (internal).';

CREATE TYPE cogmem.layer AS ENUM (
    'bios',
    'shocks',
    'dos_and_donts',
    'gut',
    'long_term',
    'habits',
    'procedures',
    'fresh',
    'resources',
    'candidates'
);

COMMENT ON TYPE cogmem.layer IS 'A slot of the recall budget: the six rings plus bios, gut, resources and the unconfirmed candidates of the never-cut rings.';

CREATE TYPE cogmem.severity AS ENUM (
    'must',
    'should',
    'may'
);

COMMENT ON TYPE cogmem.severity IS 'How binding a BIOS rule is.';

CREATE TABLE cogmem.audit_log (
    tenant text NOT NULL,
    audit_id bigint NOT NULL,
    logged_at timestamp with time zone DEFAULT now() NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    level text NOT NULL,
    event text NOT NULL,
    memory_id bigint,
    recall_id uuid,
    actor text DEFAULT cogmem.caller() NOT NULL,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL,
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    CONSTRAINT audit_log_event_check CHECK ((event <> ''::text)),
    CONSTRAINT audit_log_level_check CHECK ((level = ANY (ARRAY['write'::text, 'recall'::text, 'outcome'::text, 'lifecycle'::text, 'governance'::text, 'metacognition'::text])))
)
PARTITION BY RANGE (logged_at);

COMMENT ON TABLE cogmem.audit_log IS 'Append-only audit trail of every write, recall, outcome, consolidation decision and governance act. Never holds memory text or secrets. Sealed into cogmem.audit_chain by cogmem.seal_audit().';

COMMENT ON COLUMN cogmem.audit_log.logged_at IS 'When the row was written: the partition key.';

COMMENT ON COLUMN cogmem.audit_log.at IS 'When the event happened (the as_of of a consolidation night).';

COMMENT ON COLUMN cogmem.audit_log.xid IS 'Writing transaction; lets the sealer know which rows are final.';

CREATE TABLE cogmem.tenants (
    tenant text NOT NULL,
    language regconfig DEFAULT 'english'::regconfig NOT NULL,
    max_content_chars integer DEFAULT 8000 NOT NULL,
    duplicate_similarity real DEFAULT 0.92 NOT NULL,
    topic_bypass_similarity real DEFAULT 0.6 NOT NULL,
    fusion_k integer DEFAULT 10 NOT NULL,
    lexical_weight real DEFAULT 0.5 NOT NULL,
    vector_weight real DEFAULT 1.0 NOT NULL,
    topic_weight real DEFAULT 0.1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    reinforce_min_recalls integer DEFAULT 2 NOT NULL,
    reinforce_min_success real DEFAULT 0.8 NOT NULL,
    promote_min_recalls integer DEFAULT 3 NOT NULL,
    promote_min_success real DEFAULT 0.9 NOT NULL,
    promote_automatically boolean DEFAULT true NOT NULL,
    weaken_min_recalls integer DEFAULT 2 NOT NULL,
    weaken_max_success real DEFAULT 0.3 NOT NULL,
    forget_after interval DEFAULT '30 days'::interval NOT NULL,
    forget_step real DEFAULT 0.1 NOT NULL,
    forget_below real DEFAULT 0.2 NOT NULL,
    merge_similarity real DEFAULT 0.92 NOT NULL,
    sensory_ttl interval DEFAULT '48:00:00'::interval NOT NULL,
    recall_min_strength real DEFAULT 0.05 NOT NULL,
    guard_similarity real DEFAULT 0.35 NOT NULL,
    guard_blocking_after integer DEFAULT 3 NOT NULL,
    dissonance_similarity real DEFAULT 0.4 NOT NULL,
    sibling_similarity real DEFAULT 0.85 NOT NULL,
    max_topics integer DEFAULT 32 NOT NULL,
    max_topic_chars integer DEFAULT 100 NOT NULL,
    max_source_bytes integer DEFAULT 16384 NOT NULL,
    gut_contribute boolean DEFAULT false NOT NULL,
    gut_receive boolean DEFAULT true NOT NULL,
    max_store_value_bytes integer DEFAULT 1048576 NOT NULL,
    neighbour_weight real DEFAULT 0.5 NOT NULL,
    speaker_boost real DEFAULT 2.0 NOT NULL,
    excerpt_above integer DEFAULT 48 NOT NULL,
    candidate_min_successes integer DEFAULT 2 NOT NULL,
    turn_never_cut_probability real DEFAULT 0.99 NOT NULL,
    candidate_restated_similarity real DEFAULT 0.7 NOT NULL,
    implicit_feedback boolean DEFAULT true NOT NULL,
    implicit_feedback_window interval DEFAULT '01:00:00'::interval NOT NULL,
    scope_person_across_agents boolean DEFAULT true NOT NULL,
    scope_shared_agents text[] DEFAULT '{}'::text[] NOT NULL,
    scope_shared_rings cogmem.ring[] DEFAULT '{shocks,dos_and_donts,long_term,habits,procedures,fresh}'::cogmem.ring[] NOT NULL,
    resource_chunk_tokens integer DEFAULT 160 NOT NULL,
    resource_suggest_chars integer DEFAULT 4000 NOT NULL,
    embedding_model text DEFAULT 'all-MiniLM-L6-v2-onnx-int8'::text NOT NULL,
    CONSTRAINT tenants_candidate_min_successes_check CHECK ((candidate_min_successes >= 1)),
    CONSTRAINT tenants_candidate_restated_similarity_check CHECK (((candidate_restated_similarity >= (0)::double precision) AND (candidate_restated_similarity <= (1)::double precision))),
    CONSTRAINT tenants_dissonance_similarity_check CHECK (((dissonance_similarity >= (0)::double precision) AND (dissonance_similarity <= (1)::double precision))),
    CONSTRAINT tenants_duplicate_similarity_check CHECK (((duplicate_similarity >= (0)::double precision) AND (duplicate_similarity <= (1)::double precision))),
    CONSTRAINT tenants_embedding_model_name CHECK ((embedding_model ~ '^[[:graph:]]{1,100}$'::text)),
    CONSTRAINT tenants_excerpt_above_check CHECK ((excerpt_above >= 0)),
    CONSTRAINT tenants_forget_after_check CHECK ((forget_after > '00:00:00'::interval)),
    CONSTRAINT tenants_forget_below_check CHECK (((forget_below >= (0)::double precision) AND (forget_below <= (1)::double precision))),
    CONSTRAINT tenants_forget_step_check CHECK (((forget_step >= (0)::double precision) AND (forget_step <= (1)::double precision))),
    CONSTRAINT tenants_fusion_k_check CHECK ((fusion_k >= 1)),
    CONSTRAINT tenants_guard_blocking_after_check CHECK ((guard_blocking_after >= 1)),
    CONSTRAINT tenants_guard_similarity_check CHECK (((guard_similarity >= (0)::double precision) AND (guard_similarity <= (1)::double precision))),
    CONSTRAINT tenants_implicit_feedback_window_check CHECK ((implicit_feedback_window > '00:00:00'::interval)),
    CONSTRAINT tenants_lexical_weight_check CHECK ((lexical_weight >= (0)::double precision)),
    CONSTRAINT tenants_max_content_chars_check CHECK (((max_content_chars >= 1) AND (max_content_chars <= 1000000))),
    CONSTRAINT tenants_max_source_bytes_check CHECK (((max_source_bytes >= 2) AND (max_source_bytes <= 1048576))),
    CONSTRAINT tenants_max_store_value_bytes_check CHECK (((max_store_value_bytes >= 2) AND (max_store_value_bytes <= 67108864))),
    CONSTRAINT tenants_max_topic_chars_check CHECK (((max_topic_chars >= 1) AND (max_topic_chars <= 1000))),
    CONSTRAINT tenants_max_topics_check CHECK (((max_topics >= 1) AND (max_topics <= 1000))),
    CONSTRAINT tenants_merge_similarity_check CHECK (((merge_similarity >= (0)::double precision) AND (merge_similarity <= (1)::double precision))),
    CONSTRAINT tenants_neighbour_weight_check CHECK (((neighbour_weight >= (0)::double precision) AND (neighbour_weight <= (1)::double precision))),
    CONSTRAINT tenants_not_everyone CHECK ((tenant <> '*'::text)),
    CONSTRAINT tenants_promote_min_recalls_check CHECK ((promote_min_recalls >= 1)),
    CONSTRAINT tenants_promote_min_success_check CHECK (((promote_min_success >= (0)::double precision) AND (promote_min_success <= (1)::double precision))),
    CONSTRAINT tenants_recall_min_strength_check CHECK (((recall_min_strength >= (0)::double precision) AND (recall_min_strength <= (1)::double precision))),
    CONSTRAINT tenants_reinforce_min_recalls_check CHECK ((reinforce_min_recalls >= 1)),
    CONSTRAINT tenants_reinforce_min_success_check CHECK (((reinforce_min_success >= (0)::double precision) AND (reinforce_min_success <= (1)::double precision))),
    CONSTRAINT tenants_resource_chunk_tokens_check CHECK (((resource_chunk_tokens >= 32) AND (resource_chunk_tokens <= 2000))),
    CONSTRAINT tenants_resource_suggest_chars_check CHECK ((resource_suggest_chars >= 200)),
    CONSTRAINT tenants_sensory_ttl_check CHECK ((sensory_ttl > '00:00:00'::interval)),
    CONSTRAINT tenants_sibling_similarity_check CHECK (((sibling_similarity >= (0)::double precision) AND (sibling_similarity <= (1)::double precision))),
    CONSTRAINT tenants_speaker_boost_check CHECK (((speaker_boost >= (1)::double precision) AND (speaker_boost <= (10)::double precision))),
    CONSTRAINT tenants_tenant_check CHECK (((tenant <> ''::text) AND (length(tenant) <= 200))),
    CONSTRAINT tenants_topic_bypass_similarity_check CHECK (((topic_bypass_similarity >= (0)::double precision) AND (topic_bypass_similarity <= (1)::double precision))),
    CONSTRAINT tenants_topic_weight_check CHECK ((topic_weight >= (0)::double precision)),
    CONSTRAINT tenants_turn_never_cut_probability_check CHECK (((turn_never_cut_probability >= (0)::double precision) AND (turn_never_cut_probability <= (1)::double precision))),
    CONSTRAINT tenants_vector_weight_check CHECK ((vector_weight >= (0)::double precision)),
    CONSTRAINT tenants_weaken_max_success_check CHECK (((weaken_max_success >= (0)::double precision) AND (weaken_max_success <= (1)::double precision))),
    CONSTRAINT tenants_weaken_min_recalls_check CHECK ((weaken_min_recalls >= 1))
);

COMMENT ON TABLE cogmem.tenants IS 'One row per tenant (customer, agent or workspace) with its settings.';

COMMENT ON COLUMN cogmem.tenants.recall_min_strength IS 'Learned memories weaker than this (Ebbinghaus strength) are not injected; never-cut rings always are.';

COMMENT ON COLUMN cogmem.tenants.guard_similarity IS 'Cosine similarity from which a rule or learning applies to an action in guard_check (trust moves it).';

COMMENT ON COLUMN cogmem.tenants.guard_blocking_after IS 'A learning whose mistake was repeated this many times since it was last acknowledged blocks its area.';

COMMENT ON COLUMN cogmem.tenants.dissonance_similarity IS 'Cosine similarity from which an instruction of opposite polarity contradicts an established memory.';

COMMENT ON COLUMN cogmem.tenants.max_topics IS 'Most topics one memory may carry.';

COMMENT ON COLUMN cogmem.tenants.max_topic_chars IS 'Longest topic, in characters.';

COMMENT ON COLUMN cogmem.tenants.max_source_bytes IS 'Largest source (provenance) of a memory, as JSON text in bytes.';

COMMENT ON COLUMN cogmem.tenants.gut_contribute IS 'The tenant''s proven memories, de-identified, feed the Gut (an administrator''s opt-in; off by default).';

COMMENT ON COLUMN cogmem.tenants.gut_receive IS 'Recall fills the gut layer with released patterns.';

COMMENT ON COLUMN cogmem.tenants.max_store_value_bytes IS 'Largest keyed store value (cogmem.store_put), as JSON text in bytes.';

COMMENT ON COLUMN cogmem.tenants.neighbour_weight IS 'How much a turn''s neighbours in its conversation add to its relevance (recall ranks the turn and its window too); 0 ranks turns alone.';

COMMENT ON COLUMN cogmem.tenants.speaker_boost IS 'Recall''s relevance of a turn whose speaker the message names is multiplied by this.';

COMMENT ON COLUMN cogmem.tenants.excerpt_above IS 'A learned memory longer than this many tokens is shown by recall as the sentences that match the message (and their neighbours), when that is much shorter; 0 shows memories whole.';

COMMENT ON COLUMN cogmem.tenants.candidate_min_successes IS 'A candidate rule or incident recalled with success this many times is promoted to its ring by the night.';

COMMENT ON COLUMN cogmem.tenants.turn_never_cut_probability IS 'A turn of a conversation (remembered with one) enters a never-cut ring only when the routing model is at least this sure; below, it is a candidate. Chats are full of emphatic talk that is no rule.';

COMMENT ON COLUMN cogmem.tenants.candidate_restated_similarity IS 'A new candidate rule or incident at least this close in meaning (cosine) to an older candidate of the same ring is that one said again in other words: the older one''s probability rises.';

COMMENT ON COLUMN cogmem.tenants.implicit_feedback IS 'Whether the next turn of a conversation may set the outcome of the recall before it (implicit feedback).';

COMMENT ON COLUMN cogmem.tenants.implicit_feedback_window IS 'How long after a recall the next turn of its conversation is still read as a reply to its answer.';

COMMENT ON COLUMN cogmem.tenants.scope_person_across_agents IS 'A person''s memories heard by one agent are recalled by the tenant''s other agents too; false: only by the agent that heard them (a person''s memories heard by no agent, by every agent).';

COMMENT ON COLUMN cogmem.tenants.scope_shared_agents IS 'Agents whose memories without a person (in scope_shared_rings) every agent recalls; ''*'' = every agent. Empty by default: an agent recalls only what it heard, besides what the tenant shares.';

COMMENT ON COLUMN cogmem.tenants.scope_shared_rings IS 'The rings scope_shared_agents share, e.g. {procedures}: one agent''s procedures for all.';

COMMENT ON COLUMN cogmem.tenants.resource_chunk_tokens IS 'The most tokens a resource chunk holds: a longer section is split between its paragraphs, list items or sentences.';

COMMENT ON COLUMN cogmem.tenants.resource_suggest_chars IS 'remember() of a text longer than this still stores it, and suggests add_resource() in its result.';

COMMENT ON COLUMN cogmem.tenants.embedding_model IS 'The model that made every vector of this tenant (one vector space per tenant); a re-embedding changes it.';

CREATE TABLE cogmem.core_identity (
    tenant text NOT NULL,
    version integer NOT NULL,
    agent text,
    user_profile text,
    goals text[] DEFAULT '{}'::text[] NOT NULL,
    set_at timestamp with time zone DEFAULT now() NOT NULL,
    set_by text DEFAULT cogmem.caller() NOT NULL,
    CONSTRAINT core_identity_version_check CHECK ((version >= 1))
);

COMMENT ON TABLE cogmem.core_identity IS 'Who the agent is, who the user is and the standing goals, per tenant; each change is a new version.';

CREATE TABLE cogmem.gut_contributions (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    source text NOT NULL,
    ring cogmem.ring NOT NULL,
    content text NOT NULL,
    embedding public.vector NOT NULL,
    topics text[] DEFAULT '{}'::text[] NOT NULL,
    success real NOT NULL,
    collected_at timestamp with time zone DEFAULT now() NOT NULL,
    embedding_model text DEFAULT 'all-MiniLM-L6-v2-onnx-int8'::text NOT NULL,
    CONSTRAINT gut_contributions_source_check CHECK ((source = ANY (ARRAY['memory'::text, 'learning'::text]))),
    CONSTRAINT gut_contributions_success_check CHECK (((success >= (0)::double precision) AND (success <= (1)::double precision)))
);

ALTER TABLE ONLY cogmem.gut_contributions FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE cogmem.gut_contributions IS 'What an opted-in tenant offers the Gut: de-identified text of a proven memory, its vector and success.';

COMMENT ON COLUMN cogmem.gut_contributions.embedding_model IS 'The model of the embedding (its tenant''s).';

CREATE TABLE cogmem.gut_feedback (
    tenant text NOT NULL,
    pattern_id bigint NOT NULL,
    outcome real NOT NULL,
    recalls integer NOT NULL,
    CONSTRAINT gut_feedback_outcome_check CHECK (((outcome >= (0)::double precision) AND (outcome <= (1)::double precision))),
    CONSTRAINT gut_feedback_recalls_check CHECK ((recalls > 0))
);

ALTER TABLE ONLY cogmem.gut_feedback FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE cogmem.gut_feedback IS 'Per tenant, the mean outcome of the recalls that injected a pattern.';

CREATE SEQUENCE cogmem.bios_tenant_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 2147483647
    CACHE 1;

COMMENT ON SEQUENCE cogmem.bios_tenant_id_seq IS 'The low 31 bits of the id of a tenant''s own BIOS rule or preset load (cogmem._keyed_bios_id).';

CREATE TABLE cogmem.memories (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    ring cogmem.ring DEFAULT 'fresh'::cogmem.ring NOT NULL,
    content text NOT NULL,
    topics text[] DEFAULT '{}'::text[] NOT NULL,
    language regconfig DEFAULT 'english'::regconfig NOT NULL,
    search tsvector GENERATED ALWAYS AS (to_tsvector(language, content)) STORED,
    token_estimate integer GENERATED ALWAYS AS (GREATEST(1, (ceil(((length(content))::numeric / 4.0)))::integer)) STORED,
    embedding public.vector(384),
    redactions text[] DEFAULT '{}'::text[] NOT NULL,
    source jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    embedding_bits bit(384) GENERATED ALWAYS AS ((public.binary_quantize(embedding))::bit(384)) STORED,
    fingerprint text NOT NULL,
    conversation text,
    speaker text,
    said_at timestamp with time zone,
    excerpt_of bigint,
    candidate_ring cogmem.ring,
    candidate_p real,
    person text GENERATED ALWAYS AS (NULLIF(btrim((source ->> 'person'::text)), ''::text)) STORED,
    agent text GENERATED ALWAYS AS (NULLIF(btrim((source ->> 'agent'::text)), ''::text)) STORED,
    superseded_by bigint,
    valid_until timestamp with time zone,
    CONSTRAINT memories_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT memories_candidate_p_check CHECK (((candidate_p >= (0)::double precision) AND (candidate_p <= (1)::double precision))),
    CONSTRAINT memories_candidate_ring_check CHECK ((candidate_ring = ANY (ARRAY['dos_and_donts'::cogmem.ring, 'shocks'::cogmem.ring]))),
    CONSTRAINT memories_content_check CHECK ((content <> ''::text)),
    CONSTRAINT memories_conversation_check CHECK (((length(conversation) >= 1) AND (length(conversation) <= 200))),
    CONSTRAINT memories_embedding_comparable CHECK (((embedding IS NULL) OR ((embedding OPERATOR(public.<=>) embedding) < (0.001)::double precision))),
    CONSTRAINT memories_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200))),
    CONSTRAINT memories_source_check CHECK ((jsonb_typeof(source) = 'object'::text)),
    CONSTRAINT memories_speaker_check CHECK (((length(speaker) >= 1) AND (length(speaker) <= 200))),
    CONSTRAINT memories_superseded_by_other CHECK ((superseded_by <> memory_id))
)
WITH (toast_tuple_target='8160');

COMMENT ON TABLE cogmem.memories IS 'Learned memories, one ring each. Write through cogmem.remember(); read cogmem.memory_overview.';

COMMENT ON COLUMN cogmem.memories.fingerprint IS 'The normalised text (cogmem._fingerprint), unique per tenant and scope: the same text is one memory.';

COMMENT ON COLUMN cogmem.memories.conversation IS 'The conversation (thread, session) the memory was said in; NULL for a memory said outside one.';

COMMENT ON COLUMN cogmem.memories.speaker IS 'Who said it, as the caller named them; NULL when not given.';

COMMENT ON COLUMN cogmem.memories.said_at IS 'When it was said (the caller''s time, or when it was stored); with conversation, the order of its turns.';

COMMENT ON COLUMN cogmem.memories.excerpt_of IS 'For a rule or incident taken from one sentence of a long turn: the turn''s memory (kept in fresh), whose erasure takes the sentence too; NULL otherwise.';

COMMENT ON COLUMN cogmem.memories.candidate_ring IS 'The never-cut ring this memory may belong to, awaiting confirmation (a candidate rule or incident); it does not decay while it waits. NULL when it is no candidate.';

COMMENT ON COLUMN cogmem.memories.candidate_p IS 'How likely the routing model found the candidate to be of its ring (raised when it is said again).';

COMMENT ON COLUMN cogmem.memories.person IS 'Who it is about or from (source ->> ''person''); NULL: shared by the tenant. Recall for another person never injects it.';

COMMENT ON COLUMN cogmem.memories.agent IS 'The agent that heard it (source ->> ''agent''); NULL: every agent''s. See the tenant''s scope policy.';

COMMENT ON COLUMN cogmem.memories.superseded_by IS 'The newer memory that replaces this one (a correction, a changed fact): set with valid_until when it is superseded, alone when it only possibly is (recalled after the newer, marked).';

COMMENT ON COLUMN cogmem.memories.valid_until IS 'When it stopped holding (the newer memory''s said_at): a superseded memory is out of recall unless the question asks about the past; NULL while it holds.';

CREATE TABLE cogmem.reembeddings (
    tenant text NOT NULL,
    from_model text NOT NULL,
    to_model text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    started_by text DEFAULT SESSION_USER NOT NULL,
    CONSTRAINT reembeddings_other_model CHECK ((to_model <> from_model)),
    CONSTRAINT reembeddings_to_model_name CHECK ((to_model ~ '^[[:graph:]]{1,100}$'::text))
);

COMMENT ON TABLE cogmem.reembeddings IS 'A tenant''s re-embedding under way: its vectors, made by from_model, are being made again by to_model (cogmem.reembed_begin ... reembed_finish).';

CREATE TABLE cogmem.bios_rule_events (
    rule_id bigint NOT NULL,
    event_id bigint NOT NULL,
    event text NOT NULL,
    reason text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    load_id bigint,
    CONSTRAINT bios_rule_events_event_check CHECK ((event = ANY (ARRAY['retired'::text, 'reinstated'::text])))
);

COMMENT ON TABLE cogmem.bios_rule_events IS 'Append-only life events of BIOS rules (global, like the rules).';

COMMENT ON COLUMN cogmem.bios_rule_events.load_id IS 'The preset load that retired or reinstated the rule, if one did.';

CREATE TABLE cogmem.bios_rules (
    rule_id bigint NOT NULL,
    tenant text,
    category text NOT NULL,
    rule text NOT NULL,
    severity cogmem.severity DEFAULT 'must'::cogmem.severity NOT NULL,
    preset text,
    requirement text,
    topics text[] DEFAULT '{}'::text[] NOT NULL,
    always_on boolean DEFAULT false NOT NULL,
    token_estimate integer GENERATED ALWAYS AS (GREATEST(1, (ceil(((length(rule))::numeric / 4.0)))::integer)) STORED,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    rationale text,
    translations jsonb DEFAULT '{}'::jsonb NOT NULL,
    digest text,
    CONSTRAINT bios_rules_category_check CHECK (((category = lower(category)) AND (category <> ''::text))),
    CONSTRAINT bios_rules_rationale_check CHECK ((rationale <> ''::text)),
    CONSTRAINT bios_rules_rule_check CHECK ((rule <> ''::text)),
    CONSTRAINT bios_rules_translations_check CHECK ((jsonb_typeof(translations) = 'object'::text))
);

COMMENT ON TABLE cogmem.bios_rules IS 'Given (not learned) rules. Global reference table: tenant NULL means every tenant. Immutable.';

COMMENT ON COLUMN cogmem.bios_rules.rationale IS 'Why the rule exists, in one line.';

COMMENT ON COLUMN cogmem.bios_rules.translations IS 'The rule in other languages, keyed by text-search configuration (tenants.language), e.g. turkish.';

COMMENT ON COLUMN cogmem.bios_rules.digest IS 'Fingerprint of the whole definition (cogmem._bios_rule_digest); NULL for rules added before 0022.';

CREATE TABLE cogmem.alembic_version (
    version_num character varying(32) NOT NULL
);

CREATE TABLE cogmem.audit_archives (
    partition_name text NOT NULL,
    range_from timestamp with time zone NOT NULL,
    range_to timestamp with time zone NOT NULL,
    rows bigint NOT NULL,
    exported_to text NOT NULL,
    exported_at timestamp with time zone DEFAULT now() NOT NULL,
    dropped_at timestamp with time zone,
    CONSTRAINT audit_archives_exported_to_check CHECK ((exported_to <> ''::text))
);

COMMENT ON TABLE cogmem.audit_archives IS 'Global: audit partitions exported elsewhere (and, after the retention period, dropped). The chain rows of a dropped month stay, so the chain after it still verifies.';

CREATE TABLE cogmem.audit_chain (
    tenant text NOT NULL,
    seq bigint NOT NULL,
    audit_id bigint NOT NULL,
    logged_at timestamp with time zone NOT NULL,
    row_hash bytea NOT NULL,
    sealed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT audit_chain_seq_check CHECK ((seq >= 1))
);

COMMENT ON TABLE cogmem.audit_chain IS 'The per-tenant SHA-256 hash chain over cogmem.audit_log, appended by cogmem.seal_audit().';

ALTER TABLE cogmem.audit_log ALTER COLUMN audit_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.audit_log_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.audit_log_default (
    tenant text NOT NULL,
    audit_id bigint NOT NULL,
    logged_at timestamp with time zone DEFAULT now() NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    level text NOT NULL,
    event text NOT NULL,
    memory_id bigint,
    recall_id uuid,
    actor text DEFAULT cogmem.caller() NOT NULL,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL,
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    CONSTRAINT audit_log_event_check CHECK ((event <> ''::text)),
    CONSTRAINT audit_log_level_check CHECK ((level = ANY (ARRAY['write'::text, 'recall'::text, 'outcome'::text, 'lifecycle'::text, 'governance'::text, 'metacognition'::text])))
);

CREATE TABLE cogmem.audit_seal_state (
    singleton boolean DEFAULT true NOT NULL,
    horizon xid8 NOT NULL,
    sealed_at timestamp with time zone,
    CONSTRAINT audit_seal_state_singleton_check CHECK (singleton)
);

COMMENT ON TABLE cogmem.audit_seal_state IS 'Global: every committed audit row written by a transaction older than horizon is sealed.';

CREATE TABLE cogmem.audit_settings (
    singleton boolean DEFAULT true NOT NULL,
    retention interval,
    CONSTRAINT audit_settings_retention_check CHECK ((retention >= '1 mon'::interval)),
    CONSTRAINT audit_settings_singleton_check CHECK (singleton)
);

COMMENT ON TABLE cogmem.audit_settings IS 'Global: how long audit partitions stay online (NULL = forever). Only sealed, exported months are dropped.';

COMMENT ON COLUMN cogmem.audit_settings.retention IS 'Months whose end is older than this are dropped once sealed and exported (cogmem.audit_apply_retention()).';

CREATE TABLE cogmem.bios_subscriptions (
    subscription_id bigint NOT NULL,
    preset text NOT NULL,
    tenant text,
    subscribed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT bios_subscriptions_preset_check CHECK ((preset <> ''::text))
);

COMMENT ON TABLE cogmem.bios_subscriptions IS 'The BIOS presets a tenant takes (tenant NULL = every tenant): only their rules are injected for it.';

CREATE TABLE cogmem.bios_preset_loads (
    load_id bigint NOT NULL,
    preset text NOT NULL,
    tenant text,
    version text NOT NULL,
    title text NOT NULL,
    sha256 text NOT NULL,
    added integer DEFAULT 0 NOT NULL,
    retired integer DEFAULT 0 NOT NULL,
    reinstated integer DEFAULT 0 NOT NULL,
    kept integer DEFAULT 0 NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT bios_preset_loads_preset_check CHECK ((preset <> ''::text))
);

COMMENT ON TABLE cogmem.bios_preset_loads IS 'Global reference table, append-only: each load of a BIOS preset that changed something (tenant NULL = for every tenant), with the version and checksum of its file.';

ALTER TABLE cogmem.bios_preset_loads ALTER COLUMN load_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.bios_preset_loads_load_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE cogmem.bios_rule_events ALTER COLUMN event_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.bios_rule_events_event_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE cogmem.bios_rules ALTER COLUMN rule_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.bios_rules_rule_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE cogmem.bios_subscriptions ALTER COLUMN subscription_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.bios_subscriptions_subscription_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.conflicts (
    tenant text NOT NULL,
    conflict_id bigint NOT NULL,
    content text NOT NULL,
    ring cogmem.ring NOT NULL,
    topics text[] NOT NULL,
    embedding public.vector,
    source jsonb DEFAULT '{}'::jsonb NOT NULL,
    redactions text[] DEFAULT '{}'::text[] NOT NULL,
    conflicts_with bigint[] NOT NULL,
    verdict text NOT NULL,
    status text DEFAULT 'open'::text NOT NULL,
    opened_at timestamp with time zone DEFAULT now() NOT NULL,
    resolved_at timestamp with time zone,
    resolved_by text,
    note text,
    memory_id bigint,
    reviewed_at timestamp with time zone,
    person text GENERATED ALWAYS AS (NULLIF(btrim((source ->> 'person'::text)), ''::text)) STORED,
    agent text GENERATED ALWAYS AS (NULLIF(btrim((source ->> 'agent'::text)), ''::text)) STORED,
    CONSTRAINT conflicts_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT conflicts_conflicts_with_check CHECK ((cardinality(conflicts_with) > 0)),
    CONSTRAINT conflicts_embedding_comparable CHECK (((embedding IS NULL) OR ((embedding OPERATOR(public.<=>) embedding) < (0.001)::double precision))),
    CONSTRAINT conflicts_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200))),
    CONSTRAINT conflicts_status_check CHECK ((status = ANY (ARRAY['open'::text, 'paradigm_shift'::text, 'exception'::text, 'override'::text]))),
    CONSTRAINT conflicts_verdict_check CHECK ((verdict = ANY (ARRAY['detected'::text, 'caller'::text])))
);

COMMENT ON TABLE cogmem.conflicts IS 'Instructions that contradicted an established memory, held (redacted) until resolved; memory_id is what the resolution stored, reviewed_at when a night reviewed an override.';

COMMENT ON COLUMN cogmem.conflicts.person IS 'Who it is about or from (source ->> ''person''); NULL: shared by the tenant. Recall for another person never injects it.';

COMMENT ON COLUMN cogmem.conflicts.agent IS 'The agent that heard it (source ->> ''agent''); NULL: every agent''s. See the tenant''s scope policy.';

ALTER TABLE cogmem.conflicts ALTER COLUMN conflict_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.conflicts_conflict_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.consolidation_decisions (
    tenant text NOT NULL,
    night date NOT NULL,
    decision text NOT NULL,
    memories integer NOT NULL
);

COMMENT ON TABLE cogmem.consolidation_decisions IS 'How many memories each decision touched, per tenant and night.';

CREATE TABLE cogmem.consolidation_nights (
    tenant text NOT NULL,
    night date NOT NULL,
    as_of timestamp with time zone NOT NULL,
    run_id bigint,
    started_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    finished_at timestamp with time zone
);

COMMENT ON TABLE cogmem.consolidation_nights IS 'One row per tenant and night consolidated; written in the same transaction as that night''s changes, so a night is done exactly once.';

CREATE TABLE cogmem.consolidation_runs (
    run_id bigint NOT NULL,
    as_of timestamp with time zone NOT NULL,
    tenant text,
    started_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    finished_at timestamp with time zone,
    tenants_done integer DEFAULT 0 NOT NULL,
    status text DEFAULT 'running'::text NOT NULL,
    worker integer DEFAULT 1 NOT NULL,
    workers integer DEFAULT 1 NOT NULL,
    pid integer,
    CONSTRAINT consolidation_runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'finished'::text, 'skipped'::text, 'interrupted'::text])))
);

COMMENT ON TABLE cogmem.consolidation_runs IS 'Global: each consolidation run (all tenants, or one), its as_of and how far it got.';

COMMENT ON COLUMN cogmem.consolidation_runs.pid IS 'The backend that runs it: gone while running = interrupted.';

ALTER TABLE cogmem.consolidation_runs ALTER COLUMN run_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.consolidation_runs_run_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.default_topics (
    topic text NOT NULL,
    keywords text[] NOT NULL,
    CONSTRAINT default_topics_topic_check CHECK (((topic = lower(topic)) AND (topic <> ''::text)))
);

COMMENT ON TABLE cogmem.default_topics IS 'Global (not per tenant) topic taxonomy: keywords in English and Turkish. Tenants override per topic.';

CREATE TABLE cogmem.episodes (
    tenant text NOT NULL,
    session_id uuid NOT NULL,
    project text,
    phase text,
    summary text NOT NULL,
    decisions text[] DEFAULT '{}'::text[] NOT NULL,
    open_items text[] DEFAULT '{}'::text[] NOT NULL,
    next_steps text[] DEFAULT '{}'::text[] NOT NULL,
    memory_ids bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    topics text[] DEFAULT '{}'::text[] NOT NULL,
    started_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone NOT NULL,
    person text,
    agent text,
    CONSTRAINT episodes_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT episodes_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200))),
    CONSTRAINT episodes_summary_check CHECK ((summary <> ''::text))
);

COMMENT ON TABLE cogmem.episodes IS 'Ended sessions, immutable: what was done, decisions, open items, next steps, the memories touched.';

COMMENT ON COLUMN cogmem.episodes.person IS 'The person of its scope; NULL: none (sql/015-scopes.sql).';

COMMENT ON COLUMN cogmem.episodes.agent IS 'The agent of its scope; NULL: none (sql/015-scopes.sql).';

CREATE TABLE cogmem.experiment_tenants (
    tenant text NOT NULL,
    experiment text NOT NULL,
    arm smallint,
    CONSTRAINT experiment_tenants_arm_check CHECK ((arm >= 1))
);

COMMENT ON TABLE cogmem.experiment_tenants IS 'The tenants an experiment enrols, and the arm of each (NULL when the unit is the session: each session of the tenant is assigned by its own hash).';

CREATE TABLE cogmem.experiments (
    name text NOT NULL,
    parameter text NOT NULL,
    arms jsonb NOT NULL,
    unit text DEFAULT 'tenant'::text NOT NULL,
    metric text DEFAULT 'success_rate'::text NOT NULL,
    salt bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    stopped_at timestamp with time zone,
    adopted_arm smallint,
    adopted_at timestamp with time zone,
    CONSTRAINT experiments_arms_check CHECK (((jsonb_typeof(arms) = 'array'::text) AND ((jsonb_array_length(arms) >= 2) AND (jsonb_array_length(arms) <= 10)))),
    CONSTRAINT experiments_check CHECK ((stopped_at >= created_at)),
    CONSTRAINT experiments_check1 CHECK (((adopted_arm >= 1) AND (adopted_arm <= jsonb_array_length(arms)))),
    CONSTRAINT experiments_check2 CHECK (((adopted_arm IS NULL) = (adopted_at IS NULL))),
    CONSTRAINT experiments_check3 CHECK (((adopted_arm IS NULL) OR (stopped_at IS NOT NULL))),
    CONSTRAINT experiments_metric_check CHECK ((metric = ANY (ARRAY['success_rate'::text, 'items_used'::text, 'corrections'::text]))),
    CONSTRAINT experiments_name_check CHECK (((btrim(name) <> ''::text) AND (length(name) <= 100))),
    CONSTRAINT experiments_unit_check CHECK ((unit = ANY (ARRAY['tenant'::text, 'session'::text])))
);

COMMENT ON TABLE cogmem.experiments IS 'Experiments on a tenant setting (parameter, a column of cogmem.tenants): its arms (a JSON array of values, arm 1 first), the unit assigned to an arm (tenant or session), the metric compared, the salt of the assignment, and when it stopped and which arm was adopted. Written by cogmem.experiment_*().';

CREATE TABLE cogmem.gut_releases (
    release_id bigint NOT NULL,
    released_at timestamp with time zone DEFAULT now() NOT NULL,
    period_start timestamp with time zone NOT NULL,
    epsilon double precision NOT NULL,
    delta double precision NOT NULL,
    k integer NOT NULL,
    max_patterns_per_tenant integer NOT NULL,
    threshold double precision NOT NULL,
    published integer NOT NULL,
    withdrawn integer NOT NULL,
    released_by name NOT NULL,
    mechanism text,
    key_model text,
    CONSTRAINT gut_releases_delta_check CHECK ((delta >= (0)::double precision)),
    CONSTRAINT gut_releases_epsilon_check CHECK ((epsilon > (0)::double precision)),
    CONSTRAINT gut_releases_mechanism_check CHECK ((mechanism = ANY (ARRAY['policy'::text, 'count'::text])))
);

COMMENT ON TABLE cogmem.gut_releases IS 'The privacy ledger: every release and the epsilon and delta it spent.';

COMMENT ON COLUMN cogmem.gut_releases.threshold IS 'What a noisy figure had to pass: a weight (policy) or a number of tenants (count).';

COMMENT ON COLUMN cogmem.gut_releases.key_model IS 'What clustered the lessons: the Gut''s multilingual model, or the memories'' own vectors where the server''s Python lacks it (NULL: released before this revision).';

CREATE TABLE cogmem.gut_settings (
    only_row boolean DEFAULT true NOT NULL,
    k integer DEFAULT 5 NOT NULL,
    epsilon_per_period double precision DEFAULT 1.0 NOT NULL,
    period interval DEFAULT '1 mon'::interval NOT NULL,
    delta double precision DEFAULT 0.000001 NOT NULL,
    max_patterns_per_tenant integer DEFAULT 3 NOT NULL,
    selection_share double precision DEFAULT 0.7 NOT NULL,
    cluster_similarity real DEFAULT 0.65 NOT NULL,
    min_success real DEFAULT 0.7 NOT NULL,
    match_similarity real DEFAULT 0.45 NOT NULL,
    mechanism text DEFAULT 'policy'::text NOT NULL,
    reports_per_tenant integer DEFAULT 1 NOT NULL,
    key_similarity real DEFAULT 0.45 NOT NULL,
    CONSTRAINT gut_settings_cluster_similarity_check CHECK (((cluster_similarity > (0)::double precision) AND (cluster_similarity < (1)::double precision))),
    CONSTRAINT gut_settings_delta_check CHECK (((delta > (0)::double precision) AND (delta < (0.001)::double precision))),
    CONSTRAINT gut_settings_epsilon_per_period_check CHECK ((epsilon_per_period > (0)::double precision)),
    CONSTRAINT gut_settings_k_check CHECK ((k >= 2)),
    CONSTRAINT gut_settings_key_similarity_check CHECK (((key_similarity > (0)::double precision) AND (key_similarity < (1)::double precision))),
    CONSTRAINT gut_settings_match_similarity_check CHECK (((match_similarity >= (0)::double precision) AND (match_similarity <= (1)::double precision))),
    CONSTRAINT gut_settings_max_patterns_per_tenant_check CHECK (((max_patterns_per_tenant >= 1) AND (max_patterns_per_tenant <= 100))),
    CONSTRAINT gut_settings_mechanism_check CHECK ((mechanism = ANY (ARRAY['policy'::text, 'count'::text]))),
    CONSTRAINT gut_settings_min_success_check CHECK (((min_success >= (0)::double precision) AND (min_success <= (1)::double precision))),
    CONSTRAINT gut_settings_only_row_check CHECK (only_row),
    CONSTRAINT gut_settings_period_check CHECK ((period > '00:00:00'::interval)),
    CONSTRAINT gut_settings_reports_per_tenant_check CHECK (((reports_per_tenant >= 1) AND (reports_per_tenant <= 100))),
    CONSTRAINT gut_settings_selection_share_check CHECK (((selection_share > (0)::double precision) AND (selection_share < (1)::double precision)))
);

COMMENT ON TABLE cogmem.gut_settings IS 'The Gut''s release parameters (one row; docs/gut.md says what each bounds).';

COMMENT ON COLUMN cogmem.gut_settings.mechanism IS 'How a release selects patterns: policy (each tenant spreads a weight of one; docs/gut.md) or count.';

COMMENT ON COLUMN cogmem.gut_settings.reports_per_tenant IS 'How many published patterns a tenant gives its success for, at most, in one release.';

COMMENT ON COLUMN cogmem.gut_settings.key_similarity IS 'The cosine at which lessons'' multilingual keys (centred per language) cluster into one pattern.';

CREATE TABLE cogmem.gut_patterns (
    pattern_id bigint NOT NULL,
    content text NOT NULL,
    embedding public.vector NOT NULL,
    topics text[] DEFAULT '{}'::text[] NOT NULL,
    support integer NOT NULL,
    success real,
    token_estimate integer NOT NULL,
    first_release bigint NOT NULL,
    last_release bigint NOT NULL,
    withdrawn_release bigint,
    success_low real,
    success_high real,
    embedding_model text DEFAULT 'all-MiniLM-L6-v2-onnx-int8'::text NOT NULL
);

COMMENT ON TABLE cogmem.gut_patterns IS 'Released patterns: k-anonymous, de-identified text; support and success are noisy (differentially private).';

COMMENT ON COLUMN cogmem.gut_patterns.success_low IS 'The lower end of the noisy success''s 90% interval.';

COMMENT ON COLUMN cogmem.gut_patterns.success_high IS 'The upper end of the noisy success''s 90% interval.';

COMMENT ON COLUMN cogmem.gut_patterns.embedding_model IS 'The model of the pattern''s vector: tenants of another model match it by its topics only.';

ALTER TABLE cogmem.gut_patterns ALTER COLUMN pattern_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.gut_patterns_pattern_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE cogmem.gut_releases ALTER COLUMN release_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.gut_releases_release_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.gut_runs (
    run_id bigint NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    tenants integer DEFAULT 0 NOT NULL,
    release_id bigint,
    note text
);

COMMENT ON TABLE cogmem.gut_runs IS 'Scheduled Gut runs: tenants collected, and the release made if any.';

ALTER TABLE cogmem.gut_runs ALTER COLUMN run_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.gut_runs_run_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.gut_shard_key (
    only_row boolean DEFAULT true NOT NULL,
    shard_key bytea NOT NULL,
    shared_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT gut_shard_key_only_row_check CHECK (only_row),
    CONSTRAINT gut_shard_key_shard_key_check CHECK ((length(shard_key) >= 32))
);

COMMENT ON TABLE cogmem.gut_shard_key IS 'The key every node of a sharded layout shares, which signs Gut releases and exports (HMAC). No role but the owner reads it; a single node has none.';

CREATE TABLE cogmem.learnings (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    area text NOT NULL,
    errors integer DEFAULT 1 NOT NULL,
    repeats_since_ack integer DEFAULT 0 NOT NULL,
    blocking boolean DEFAULT false NOT NULL,
    first_error_at timestamp with time zone DEFAULT now() NOT NULL,
    last_error_at timestamp with time zone DEFAULT now() NOT NULL,
    acknowledged_at timestamp with time zone,
    acknowledged_by text,
    acknowledgement text,
    CONSTRAINT learnings_errors_check CHECK ((errors >= 1)),
    CONSTRAINT learnings_repeats_since_ack_check CHECK ((repeats_since_ack >= 0))
);

COMMENT ON TABLE cogmem.learnings IS 'Lessons from reported mistakes (the lesson is the memory); blocking until acknowledged when repeated.';

ALTER TABLE cogmem.memories ALTER COLUMN memory_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.memories_memory_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.memory_stats (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    confidence real DEFAULT 0.5 NOT NULL,
    reinforced boolean DEFAULT false NOT NULL,
    recall_count integer DEFAULT 0 NOT NULL,
    rehearsal_count integer DEFAULT 0 NOT NULL,
    outcome_count integer DEFAULT 0 NOT NULL,
    outcome_sum real DEFAULT 0 NOT NULL,
    success_score real GENERATED ALWAYS AS (
CASE
    WHEN (outcome_count > 0) THEN (outcome_sum / (outcome_count)::double precision)
    ELSE NULL::double precision
END) STORED,
    last_recalled_at timestamp with time zone,
    forget_steps integer DEFAULT 0 NOT NULL,
    promotion_candidate boolean DEFAULT false NOT NULL,
    guard_count integer DEFAULT 0 NOT NULL,
    CONSTRAINT memory_stats_confidence_check CHECK (((confidence >= (0)::double precision) AND (confidence <= (1)::double precision)))
)
WITH (fillfactor='70');

COMMENT ON TABLE cogmem.memory_stats IS 'Per-memory state: confidence, reinforced (decay stopped), recalls, rehearsals (heard again), feedback outcomes (success_score = mean outcome), last rehearsal time (restarts the Ebbinghaus clock).';

COMMENT ON COLUMN cogmem.memory_stats.guard_count IS 'How often a guard check brought this memory up.';

CREATE TABLE cogmem.recalls (
    tenant text NOT NULL,
    recall_id uuid DEFAULT gen_random_uuid() NOT NULL,
    conversation text,
    message_sha256 bytea NOT NULL,
    topics text[] NOT NULL,
    budget integer NOT NULL,
    tokens_used integer NOT NULL,
    outcome real,
    feedback_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    core_version integer,
    item_layers cogmem.layer[] DEFAULT '{}'::cogmem.layer[] NOT NULL,
    item_memory_ids bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    item_rule_ids bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    item_scores real[] DEFAULT '{}'::real[] NOT NULL,
    item_tokens integer[] DEFAULT '{}'::integer[] NOT NULL,
    item_reasons text[] DEFAULT '{}'::text[] NOT NULL,
    feedback_used bigint[],
    pending boolean DEFAULT true NOT NULL,
    rehearsed boolean DEFAULT false NOT NULL,
    credited_outcome real,
    credited_used bigint[],
    outcome_source text,
    outcome_confidence real,
    message_embedding public.vector(384),
    judged_at timestamp with time zone,
    judged_verdict text,
    judged_confidence real,
    judged_by text,
    person text,
    agent text,
    CONSTRAINT recalls_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT recalls_items_aligned CHECK (((cardinality(item_memory_ids) = cardinality(item_layers)) AND (cardinality(item_rule_ids) = cardinality(item_layers)) AND (cardinality(item_scores) = cardinality(item_layers)) AND (cardinality(item_tokens) = cardinality(item_layers)) AND (cardinality(item_reasons) = cardinality(item_layers)))),
    CONSTRAINT recalls_judged_confidence_check CHECK (((judged_confidence >= (0)::double precision) AND (judged_confidence <= (1)::double precision))),
    CONSTRAINT recalls_judged_verdict_check CHECK ((judged_verdict = ANY (ARRAY['confirmed'::text, 'corrected'::text, 'repeated'::text, 'neutral'::text]))),
    CONSTRAINT recalls_judged_whole CHECK (((judged_at IS NULL) = (judged_verdict IS NULL))),
    CONSTRAINT recalls_outcome_check CHECK (((outcome >= (0)::double precision) AND (outcome <= (1)::double precision))),
    CONSTRAINT recalls_outcome_confidence_check CHECK (((outcome_confidence >= (0)::double precision) AND (outcome_confidence <= (1)::double precision))),
    CONSTRAINT recalls_outcome_source_check CHECK ((outcome_source = ANY (ARRAY['explicit'::text, 'implicit'::text]))),
    CONSTRAINT recalls_outcome_sourced CHECK (((outcome IS NULL) = (outcome_source IS NULL))),
    CONSTRAINT recalls_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200)))
);

COMMENT ON TABLE cogmem.recalls IS 'One row per recall cycle; outcome is set by cogmem.feedback().';

COMMENT ON COLUMN cogmem.recalls.core_version IS 'The core identity version this recall injected, if any.';

COMMENT ON COLUMN cogmem.recalls.item_layers IS 'What the recall injected, in order: one array per field, element i of each is item i (view cogmem.recall_items).';

COMMENT ON COLUMN cogmem.recalls.feedback_used IS 'The memories the feedback credited when the caller named them; NULL: every memory the cycle injected.';

COMMENT ON COLUMN cogmem.recalls.pending IS 'Holds a rehearsal or a feedback that memory_stats does not show yet (cogmem.apply_rehearsals()).';

COMMENT ON COLUMN cogmem.recalls.rehearsed IS 'Its recall count and last-recall time are in memory_stats.';

COMMENT ON COLUMN cogmem.recalls.credited_outcome IS 'The outcome memory_stats was credited with.';

COMMENT ON COLUMN cogmem.recalls.credited_used IS 'The memories that outcome was credited to (NULL: all injected).';

COMMENT ON COLUMN cogmem.recalls.outcome_source IS 'explicit: cogmem.feedback(); implicit: read from the next turn of the conversation (sql/059-followup.sql).';

COMMENT ON COLUMN cogmem.recalls.outcome_confidence IS '1 for explicit feedback; the judge''s probability of its verdict for an implicit one.';

COMMENT ON COLUMN cogmem.recalls.message_embedding IS 'The embedding of the message recalled for, in a conversation: the next turn is compared with it. Cleared once judged, by the night after implicit_feedback_window, and by erase_subject.';

COMMENT ON COLUMN cogmem.recalls.judged_verdict IS 'What the next turn said of the answer: confirmed, corrected, repeated, or neutral (the judge abstained).';

COMMENT ON COLUMN cogmem.recalls.judged_by IS 'The judge: followup-embedding or followup-cues (the database''s models), or the caller''s own.';

COMMENT ON COLUMN cogmem.recalls.person IS 'The person of its scope; NULL: none (sql/015-scopes.sql).';

COMMENT ON COLUMN cogmem.recalls.agent IS 'The agent of its scope; NULL: none (sql/015-scopes.sql).';

CREATE TABLE cogmem.memory_contradictions (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    contradicts_id bigint NOT NULL,
    verdict text NOT NULL,
    weakened boolean NOT NULL,
    linked_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT memory_contradictions_check CHECK ((memory_id <> contradicts_id)),
    CONSTRAINT memory_contradictions_verdict_check CHECK ((verdict = ANY (ARRAY['detected'::text, 'caller'::text])))
);

COMMENT ON TABLE cogmem.memory_contradictions IS 'A newer memory (memory_id) stored although it contradicts an older one (contradicts_id): facts are kept, never held; weakened says whether the older memory lost confidence (protected rings never do).';

CREATE TABLE cogmem.tenant_layers (
    tenant text NOT NULL,
    layer cogmem.layer NOT NULL,
    priority smallint NOT NULL,
    token_allocation integer NOT NULL,
    half_life interval,
    never_cut boolean DEFAULT false NOT NULL,
    CONSTRAINT tenant_layers_half_life_check CHECK ((half_life > '00:00:00'::interval)),
    CONSTRAINT tenant_layers_token_allocation_check CHECK ((token_allocation >= 0))
);

COMMENT ON TABLE cogmem.tenant_layers IS 'Per-tenant recall budget split and decay: allocation in tokens, priority order, Ebbinghaus half-life (NULL = never decays), and whether the layer is never cut.';

CREATE TABLE cogmem.memory_siblings (
    tenant text NOT NULL,
    memory_id bigint NOT NULL,
    sibling_id bigint NOT NULL,
    similarity real NOT NULL,
    linked_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT memory_siblings_check CHECK ((memory_id < sibling_id))
);

COMMENT ON TABLE cogmem.memory_siblings IS 'Look-alike memories that differ in discriminating details (host, IP, environment, OS, version): linked, never merged.';

CREATE TABLE cogmem.reembedded_vectors (
    tenant text NOT NULL,
    kind text NOT NULL,
    id bigint NOT NULL,
    text_md5 uuid NOT NULL,
    embedding public.vector(384) NOT NULL,
    CONSTRAINT reembedded_vectors_kind CHECK ((kind = ANY (ARRAY['memory'::text, 'chunk'::text, 'turn'::text, 'conflict'::text])))
);

COMMENT ON TABLE cogmem.reembedded_vectors IS 'The new model''s vectors of a re-embedding, waiting for the swap: per memory, chunk, turn or conflict, with the digest of the text embedded (a text changed since is embedded again).';

CREATE TABLE cogmem.resource_chunks (
    tenant text NOT NULL,
    chunk_id bigint NOT NULL,
    resource_id bigint NOT NULL,
    "position" integer NOT NULL,
    heading text DEFAULT ''::text NOT NULL,
    content text NOT NULL,
    language regconfig DEFAULT 'english'::regconfig NOT NULL,
    search tsvector GENERATED ALWAYS AS (to_tsvector(language, ((heading || ' '::text) || content))) STORED,
    token_estimate integer GENERATED ALWAYS AS (GREATEST(1, (ceil(((length(content))::numeric / 4.0)))::integer)) STORED,
    embedding public.vector(384),
    current boolean DEFAULT true NOT NULL,
    person text,
    agent text,
    CONSTRAINT resource_chunks_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT resource_chunks_content_check CHECK ((content <> ''::text)),
    CONSTRAINT resource_chunks_embedding_comparable CHECK (((embedding IS NULL) OR ((embedding OPERATOR(public.<=>) embedding) < (0.001)::double precision))),
    CONSTRAINT resource_chunks_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200))),
    CONSTRAINT resource_chunks_position_check CHECK (("position" >= 1))
);

COMMENT ON TABLE cogmem.resource_chunks IS 'A resource''s chunks, by structure (a section, or the part of one that fits tenants.resource_chunk_tokens): heading path, text, search vector, embedding; current = of the resource''s current version.';

COMMENT ON COLUMN cogmem.resource_chunks.heading IS 'The headings above the chunk, outermost first, joined by " > " (recall cites title § heading).';

ALTER TABLE cogmem.resource_chunks ALTER COLUMN chunk_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.resource_chunks_chunk_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.resources (
    tenant text NOT NULL,
    resource_id bigint NOT NULL,
    title text NOT NULL,
    kind text DEFAULT 'document'::text NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    body text NOT NULL,
    body_sha256 bytea NOT NULL,
    redactions text[] DEFAULT '{}'::text[] NOT NULL,
    source jsonb DEFAULT '{}'::jsonb NOT NULL,
    person text GENERATED ALWAYS AS (NULLIF(btrim((source ->> 'person'::text)), ''::text)) STORED,
    agent text GENERATED ALWAYS AS (NULLIF(btrim((source ->> 'agent'::text)), ''::text)) STORED,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    superseded_at timestamp with time zone,
    superseded_by bigint,
    CONSTRAINT resources_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT resources_body_check CHECK ((body <> ''::text)),
    CONSTRAINT resources_check CHECK (((superseded_by IS NULL) OR (superseded_at IS NOT NULL))),
    CONSTRAINT resources_kind_check CHECK ((kind ~ '^[a-z][a-z_]{0,39}$'::text)),
    CONSTRAINT resources_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200))),
    CONSTRAINT resources_source_check CHECK ((jsonb_typeof(source) = 'object'::text)),
    CONSTRAINT resources_title_check CHECK (((btrim(title) <> ''::text) AND (length(title) <= 300))),
    CONSTRAINT resources_version_check CHECK ((version >= 1))
);

COMMENT ON TABLE cogmem.resources IS 'Documents (runbooks, policies, templates, contracts), one row per version, redacted; recalled through their chunks (cogmem.resource_chunks). Written by cogmem.add_resource().';

COMMENT ON COLUMN cogmem.resources.body IS 'The document as stored (redacted): export writes it, import adds it again.';

COMMENT ON COLUMN cogmem.resources.superseded_at IS 'When a newer version (superseded_by) or a retirement replaced it; its chunks are no longer recalled.';

ALTER TABLE cogmem.resources ALTER COLUMN resource_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.resources_resource_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.routing_model (
    model text NOT NULL,
    head text NOT NULL,
    label text NOT NULL,
    slot integer NOT NULL,
    bias real NOT NULL,
    threshold real NOT NULL,
    candidate_threshold real NOT NULL,
    weights public.vector NOT NULL,
    CONSTRAINT routing_model_slot_check CHECK ((slot >= 0))
);

COMMENT ON TABLE cogmem.routing_model IS 'The routing model per model (embedding, cues, pair-embedding, pair-cues; -long for long texts), head and label: the label''s slot in its head, the bias, the threshold a never-cut ring, an instruction or a contradiction needs, that of a candidate, and the weights of the dense features.';

CREATE TABLE cogmem.routing_model_version (
    only_row boolean DEFAULT true NOT NULL,
    sha256 text NOT NULL,
    cues text[] NOT NULL,
    metadata jsonb NOT NULL,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT routing_model_version_only_row_check CHECK (only_row),
    CONSTRAINT routing_model_version_sha256_check CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text))
);

COMMENT ON TABLE cogmem.routing_model_version IS 'The routing model loaded (one row): the sha256 of its file, the cues it was trained on in order, and what bench/train_router.py said of it (commit, counts, thresholds).';

CREATE TABLE cogmem.routing_terms (
    model text NOT NULL,
    head text NOT NULL,
    term text NOT NULL,
    weights double precision[] NOT NULL
);

COMMENT ON TABLE cogmem.routing_terms IS 'The routing model''s term weights (words, word pairs, suffixes of cogmem._inbound_terms): per model, head and term, its weight for each label, in slot order.';

CREATE TABLE cogmem.sensory_turns (
    tenant text NOT NULL,
    turn_id bigint NOT NULL,
    conversation text NOT NULL,
    role text NOT NULL,
    content text NOT NULL,
    embedding public.vector(384),
    at timestamp with time zone NOT NULL,
    memory_id bigint,
    person text,
    agent text,
    CONSTRAINT sensory_turns_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT sensory_turns_embedding_comparable CHECK (((embedding IS NULL) OR ((embedding OPERATOR(public.<=>) embedding) < (0.001)::double precision))),
    CONSTRAINT sensory_turns_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200)))
);

COMMENT ON TABLE cogmem.sensory_turns IS 'Sensory register: raw conversation turns, kept for tenants.sensory_ttl (48 hours by default).';

COMMENT ON COLUMN cogmem.sensory_turns.person IS 'The person of its scope; NULL: none (sql/015-scopes.sql).';

COMMENT ON COLUMN cogmem.sensory_turns.agent IS 'The agent of its scope; NULL: none (sql/015-scopes.sql).';

ALTER TABLE cogmem.sensory_turns ALTER COLUMN turn_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.sensory_turns_turn_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.sessions (
    tenant text NOT NULL,
    session_id uuid DEFAULT gen_random_uuid() NOT NULL,
    project text,
    goal text,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    ended_at timestamp with time zone,
    person text,
    agent text,
    CONSTRAINT sessions_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT sessions_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200)))
);

COMMENT ON TABLE cogmem.sessions IS 'Working sessions of an agent (pass session_id as recall''s and observe''s conversation); ended ones are archived in cogmem.episodes.';

COMMENT ON COLUMN cogmem.sessions.person IS 'The person of its scope; NULL: none (sql/015-scopes.sql).';

COMMENT ON COLUMN cogmem.sessions.agent IS 'The agent of its scope; NULL: none (sql/015-scopes.sql).';

CREATE TABLE cogmem.store_items (
    tenant text NOT NULL,
    namespace text[] NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    memory_id bigint,
    owns_memory boolean DEFAULT false NOT NULL,
    conflict_id bigint,
    ttl_minutes double precision,
    expires_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    person text,
    agent text,
    person_key text GENERATED ALWAYS AS (COALESCE(person, ''::text)) STORED NOT NULL,
    embedded_fields text[],
    embeddings public.vector[],
    CONSTRAINT store_items_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT store_items_embeddings_check CHECK ((NOT (cardinality(embeddings) IS DISTINCT FROM cardinality(embedded_fields)))),
    CONSTRAINT store_items_key_check CHECK (((key <> ''::text) AND (length(key) <= 1000))),
    CONSTRAINT store_items_namespace_check CHECK (((cardinality(namespace) >= 1) AND (cardinality(namespace) <= 32))),
    CONSTRAINT store_items_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200))),
    CONSTRAINT store_items_ttl_minutes_check CHECK ((ttl_minutes > (0)::double precision)),
    CONSTRAINT store_items_value_check CHECK ((jsonb_typeof(value) = 'object'::text))
);

COMMENT ON TABLE cogmem.store_items IS 'Values under a namespace and key (a framework''s keyed store); an indexed value''s text is also a memory.';

COMMENT ON COLUMN cogmem.store_items.owns_memory IS 'The memory was created for this item, so replacing or deleting the item erases it.';

COMMENT ON COLUMN cogmem.store_items.person IS 'The person of its scope; NULL: none (sql/015-scopes.sql).';

COMMENT ON COLUMN cogmem.store_items.agent IS 'The agent of its scope; NULL: none (sql/015-scopes.sql).';

COMMENT ON COLUMN cogmem.store_items.person_key IS 'The person in the item''s key: its person, '''' for none (each person has its own namespaces and keys).';

COMMENT ON COLUMN cogmem.store_items.embedded_fields IS 'The path of the value each of embeddings was made from (LangGraph''s index fields); NULL: none.';

COMMENT ON COLUMN cogmem.store_items.embeddings IS 'The item''s vectors, by the caller''s embedding function (any one dimension); a search with the query''s vector of that function scores the item by the best of them. NULL: none (the memory''s vector serves).';

CREATE TABLE cogmem.tenant_access (
    tenant text NOT NULL,
    role_name name NOT NULL,
    vault boolean DEFAULT false NOT NULL,
    granted_by name DEFAULT cogmem.caller() NOT NULL,
    granted_at timestamp with time zone DEFAULT now() NOT NULL,
    person text,
    CONSTRAINT tenant_access_person_check CHECK (((length(person) >= 1) AND (length(person) <= 200))),
    CONSTRAINT tenant_access_person_not_everyone CHECK (((person IS NULL) OR (tenant <> '*'::text))),
    CONSTRAINT tenant_access_tenant_check CHECK ((tenant <> ''::text))
);

COMMENT ON TABLE cogmem.tenant_access IS 'Which database roles (and their members) may reach which tenant; tenant ''*'' means every tenant. vault = may also read that tenant''s vault.';

COMMENT ON COLUMN cogmem.tenant_access.person IS 'Narrows the grant to one person of the tenant: their memories and what the tenant shares, nothing of another person''s; NULL: the whole tenant.';

CREATE TABLE cogmem.tenant_topics (
    tenant text NOT NULL,
    topic text NOT NULL,
    keywords text[] NOT NULL,
    CONSTRAINT tenant_topics_topic_check CHECK (((topic = lower(topic)) AND (topic <> ''::text)))
);

COMMENT ON TABLE cogmem.tenant_topics IS 'Per-tenant topic overrides: a row replaces the default keywords of that topic; empty keywords disable it.';

CREATE TABLE cogmem.topic_matchers (
    tenant text NOT NULL,
    topic text NOT NULL,
    matcher tsquery NOT NULL
);

COMMENT ON TABLE cogmem.topic_matchers IS 'Each tenant''s taxonomy compiled to one tsquery per topic (derived; rebuilt when topics change).';

CREATE TABLE cogmem.trust_events (
    tenant text NOT NULL,
    event_id bigint NOT NULL,
    kind text NOT NULL,
    delta real NOT NULL,
    score real NOT NULL,
    memory_id bigint,
    cause text,
    at timestamp with time zone DEFAULT now() NOT NULL,
    agent text,
    CONSTRAINT trust_events_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT trust_events_kind_check CHECK ((kind = ANY (ARRAY['praise'::text, 'delegation'::text, 'caught_error'::text, 'correction'::text, 'repeated_error'::text, 'memory_churn'::text]))),
    CONSTRAINT trust_events_score_check CHECK (((score >= (0)::double precision) AND (score <= (100)::double precision)))
);

COMMENT ON TABLE cogmem.trust_events IS 'What moved a tenant''s trust score, by how much and why; score is the value after the event (from 50).';

COMMENT ON COLUMN cogmem.trust_events.agent IS 'The agent whose trust the event moved; NULL: the tenant''s.';

ALTER TABLE cogmem.trust_events ALTER COLUMN event_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME cogmem.trust_events_event_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE cogmem.vault_items (
    tenant text NOT NULL,
    name text NOT NULL,
    secret bytea NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    subject text,
    version integer DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT vault_items_name_check CHECK (((name <> ''::text) AND (length(name) <= 200)))
);

COMMENT ON TABLE cogmem.vault_items IS 'Sensitive items, encrypted with pgcrypto (PGP symmetric) under the tenant key.';

CREATE TABLE cogmem.vault_keys (
    tenant text NOT NULL,
    data_key bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE cogmem.vault_keys IS 'Per-tenant data keys of the vault. No role but the owner reads it; only cogmem.vault_put/get use it.';

ALTER TABLE ONLY cogmem.audit_log ATTACH PARTITION cogmem.audit_log_default DEFAULT;

ALTER TABLE ONLY cogmem.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);

ALTER TABLE ONLY cogmem.audit_archives
    ADD CONSTRAINT audit_archives_pkey PRIMARY KEY (partition_name);

ALTER TABLE ONLY cogmem.audit_chain
    ADD CONSTRAINT audit_chain_pkey PRIMARY KEY (tenant, seq);

ALTER TABLE ONLY cogmem.audit_chain
    ADD CONSTRAINT audit_chain_tenant_audit_id_key UNIQUE (tenant, audit_id);

ALTER TABLE ONLY cogmem.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (tenant, audit_id, logged_at);

ALTER TABLE ONLY cogmem.audit_log_default
    ADD CONSTRAINT audit_log_default_pkey PRIMARY KEY (tenant, audit_id, logged_at);

ALTER TABLE ONLY cogmem.audit_seal_state
    ADD CONSTRAINT audit_seal_state_pkey PRIMARY KEY (singleton);

ALTER TABLE ONLY cogmem.audit_settings
    ADD CONSTRAINT audit_settings_pkey PRIMARY KEY (singleton);

ALTER TABLE ONLY cogmem.bios_preset_loads
    ADD CONSTRAINT bios_preset_loads_pkey PRIMARY KEY (load_id);

ALTER TABLE ONLY cogmem.bios_rule_events
    ADD CONSTRAINT bios_rule_events_pkey PRIMARY KEY (rule_id, event_id);

ALTER TABLE ONLY cogmem.bios_rules
    ADD CONSTRAINT bios_rules_pkey PRIMARY KEY (rule_id);

ALTER TABLE ONLY cogmem.bios_subscriptions
    ADD CONSTRAINT bios_subscriptions_pkey PRIMARY KEY (subscription_id);

ALTER TABLE ONLY cogmem.conflicts
    ADD CONSTRAINT conflicts_conflict_id_key UNIQUE (conflict_id);

ALTER TABLE ONLY cogmem.conflicts
    ADD CONSTRAINT conflicts_pkey PRIMARY KEY (tenant, conflict_id);

ALTER TABLE ONLY cogmem.consolidation_decisions
    ADD CONSTRAINT consolidation_decisions_pkey PRIMARY KEY (tenant, night, decision);

ALTER TABLE ONLY cogmem.consolidation_nights
    ADD CONSTRAINT consolidation_nights_pkey PRIMARY KEY (tenant, night);

ALTER TABLE ONLY cogmem.consolidation_runs
    ADD CONSTRAINT consolidation_runs_pkey PRIMARY KEY (run_id);

ALTER TABLE ONLY cogmem.core_identity
    ADD CONSTRAINT core_identity_pkey PRIMARY KEY (tenant, version);

ALTER TABLE ONLY cogmem.default_topics
    ADD CONSTRAINT default_topics_pkey PRIMARY KEY (topic);

ALTER TABLE ONLY cogmem.episodes
    ADD CONSTRAINT episodes_pkey PRIMARY KEY (tenant, session_id);

ALTER TABLE ONLY cogmem.experiment_tenants
    ADD CONSTRAINT experiment_tenants_pkey PRIMARY KEY (tenant, experiment);

ALTER TABLE ONLY cogmem.experiments
    ADD CONSTRAINT experiments_pkey PRIMARY KEY (name);

ALTER TABLE ONLY cogmem.gut_contributions
    ADD CONSTRAINT gut_contributions_pkey PRIMARY KEY (tenant, memory_id);

ALTER TABLE ONLY cogmem.gut_feedback
    ADD CONSTRAINT gut_feedback_pkey PRIMARY KEY (tenant, pattern_id);

ALTER TABLE ONLY cogmem.gut_patterns
    ADD CONSTRAINT gut_patterns_pkey PRIMARY KEY (pattern_id);

ALTER TABLE ONLY cogmem.gut_releases
    ADD CONSTRAINT gut_releases_pkey PRIMARY KEY (release_id);

ALTER TABLE ONLY cogmem.gut_runs
    ADD CONSTRAINT gut_runs_pkey PRIMARY KEY (run_id);

ALTER TABLE ONLY cogmem.gut_settings
    ADD CONSTRAINT gut_settings_pkey PRIMARY KEY (only_row);

ALTER TABLE ONLY cogmem.gut_shard_key
    ADD CONSTRAINT gut_shard_key_pkey PRIMARY KEY (only_row);

ALTER TABLE ONLY cogmem.learnings
    ADD CONSTRAINT learnings_pkey PRIMARY KEY (tenant, memory_id);

ALTER TABLE ONLY cogmem.memories
    ADD CONSTRAINT memories_pkey PRIMARY KEY (tenant, memory_id);

ALTER TABLE ONLY cogmem.memory_contradictions
    ADD CONSTRAINT memory_contradictions_pkey PRIMARY KEY (tenant, memory_id, contradicts_id);

ALTER TABLE ONLY cogmem.memory_siblings
    ADD CONSTRAINT memory_siblings_pkey PRIMARY KEY (tenant, memory_id, sibling_id);

ALTER TABLE ONLY cogmem.memory_stats
    ADD CONSTRAINT memory_stats_pkey PRIMARY KEY (tenant, memory_id);

ALTER TABLE ONLY cogmem.recalls
    ADD CONSTRAINT recalls_pkey PRIMARY KEY (tenant, recall_id);

ALTER TABLE ONLY cogmem.reembedded_vectors
    ADD CONSTRAINT reembedded_vectors_pkey PRIMARY KEY (tenant, kind, id);

ALTER TABLE ONLY cogmem.reembeddings
    ADD CONSTRAINT reembeddings_pkey PRIMARY KEY (tenant);

ALTER TABLE ONLY cogmem.resource_chunks
    ADD CONSTRAINT resource_chunks_pkey PRIMARY KEY (tenant, chunk_id);

ALTER TABLE ONLY cogmem.resources
    ADD CONSTRAINT resources_pkey PRIMARY KEY (tenant, resource_id);

ALTER TABLE ONLY cogmem.routing_model
    ADD CONSTRAINT routing_model_model_head_slot_key UNIQUE (model, head, slot);

ALTER TABLE ONLY cogmem.routing_model
    ADD CONSTRAINT routing_model_pkey PRIMARY KEY (model, head, label);

ALTER TABLE ONLY cogmem.routing_model_version
    ADD CONSTRAINT routing_model_version_pkey PRIMARY KEY (only_row);

ALTER TABLE ONLY cogmem.routing_terms
    ADD CONSTRAINT routing_terms_pkey PRIMARY KEY (model, term, head);

ALTER TABLE ONLY cogmem.sensory_turns
    ADD CONSTRAINT sensory_turns_pkey PRIMARY KEY (tenant, turn_id);

ALTER TABLE ONLY cogmem.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (tenant, session_id);

ALTER TABLE ONLY cogmem.sessions
    ADD CONSTRAINT sessions_session_id_key UNIQUE (session_id);

ALTER TABLE ONLY cogmem.store_items
    ADD CONSTRAINT store_items_pkey PRIMARY KEY (tenant, person_key, namespace, key);

ALTER TABLE ONLY cogmem.tenant_access
    ADD CONSTRAINT tenant_access_pkey PRIMARY KEY (tenant, role_name);

ALTER TABLE ONLY cogmem.tenant_layers
    ADD CONSTRAINT tenant_layers_pkey PRIMARY KEY (tenant, layer);

ALTER TABLE ONLY cogmem.tenant_topics
    ADD CONSTRAINT tenant_topics_pkey PRIMARY KEY (tenant, topic);

ALTER TABLE ONLY cogmem.tenants
    ADD CONSTRAINT tenants_pkey PRIMARY KEY (tenant);

ALTER TABLE ONLY cogmem.topic_matchers
    ADD CONSTRAINT topic_matchers_pkey PRIMARY KEY (tenant, topic);

ALTER TABLE ONLY cogmem.trust_events
    ADD CONSTRAINT trust_events_pkey PRIMARY KEY (tenant, event_id);

ALTER TABLE ONLY cogmem.vault_items
    ADD CONSTRAINT vault_items_pkey PRIMARY KEY (tenant, name);

ALTER TABLE ONLY cogmem.vault_keys
    ADD CONSTRAINT vault_keys_pkey PRIMARY KEY (tenant);

CREATE INDEX audit_log_memory_idx ON ONLY cogmem.audit_log USING btree (tenant, memory_id) WHERE (memory_id IS NOT NULL);

CREATE INDEX audit_log_recall_idx ON ONLY cogmem.audit_log USING btree (tenant, recall_id) WHERE (recall_id IS NOT NULL);

CREATE INDEX audit_log_xid_idx ON ONLY cogmem.audit_log USING btree (xid);

CREATE INDEX audit_log_default_tenant_memory_id_idx ON cogmem.audit_log_default USING btree (tenant, memory_id) WHERE (memory_id IS NOT NULL);

CREATE INDEX audit_log_default_tenant_recall_id_idx ON cogmem.audit_log_default USING btree (tenant, recall_id) WHERE (recall_id IS NOT NULL);

CREATE INDEX audit_log_default_xid_idx ON cogmem.audit_log_default USING btree (xid);

CREATE INDEX bios_preset_loads_preset_idx ON cogmem.bios_preset_loads USING btree (preset, tenant, load_id);

CREATE UNIQUE INDEX bios_rules_definition_key ON cogmem.bios_rules USING btree (COALESCE(tenant, ''::text), COALESCE(preset, ''::text), digest);

CREATE INDEX bios_rules_preset_idx ON cogmem.bios_rules USING btree (preset, tenant);

CREATE UNIQUE INDEX bios_subscriptions_key ON cogmem.bios_subscriptions USING btree (preset, COALESCE(tenant, ''::text));

CREATE INDEX conflicts_open_idx ON cogmem.conflicts USING btree (tenant) WHERE (status = 'open'::text);

CREATE INDEX consolidation_decisions_night_idx ON cogmem.consolidation_decisions USING btree (night) INCLUDE (tenant, decision, memories) WHERE (memories > 0);

CREATE INDEX episodes_recent_idx ON cogmem.episodes USING btree (tenant, project, ended_at DESC);

CREATE INDEX experiment_tenants_experiment_idx ON cogmem.experiment_tenants USING btree (experiment);

CREATE INDEX experiments_running_idx ON cogmem.experiments USING btree (name) WHERE (stopped_at IS NULL);

CREATE INDEX gut_patterns_active_idx ON cogmem.gut_patterns USING btree (pattern_id) WHERE (withdrawn_release IS NULL);

CREATE INDEX gut_releases_period_idx ON cogmem.gut_releases USING btree (period_start);

CREATE INDEX learnings_area_idx ON cogmem.learnings USING btree (tenant, area);

CREATE INDEX memories_agent_idx ON cogmem.memories USING btree (tenant, agent) WHERE (agent IS NOT NULL);

CREATE INDEX memories_candidates_idx ON cogmem.memories USING btree (tenant, created_at) WHERE (candidate_ring IS NOT NULL);

CREATE INDEX memories_conversation_idx ON cogmem.memories USING btree (tenant, conversation, said_at, memory_id) WHERE (conversation IS NOT NULL);

CREATE INDEX memories_excerpt_of_idx ON cogmem.memories USING btree (tenant, excerpt_of) WHERE (excerpt_of IS NOT NULL);

CREATE INDEX memories_person_idx ON cogmem.memories USING btree (tenant, person) WHERE (person IS NOT NULL);

CREATE UNIQUE INDEX memories_scope_fingerprint_key ON cogmem.memories USING btree (tenant, fingerprint, person, agent) NULLS NOT DISTINCT;

CREATE INDEX memories_superseded_by_idx ON cogmem.memories USING btree (tenant, superseded_by) WHERE (superseded_by IS NOT NULL);

CREATE INDEX memories_tenant_bits_idx ON cogmem.memories USING btree (tenant, memory_id) INCLUDE (embedding_bits, ring, created_at, updated_at, person, agent, topics);

CREATE INDEX memories_tenant_ring_idx ON cogmem.memories USING btree (tenant, ring);

CREATE INDEX memory_contradictions_older_idx ON cogmem.memory_contradictions USING btree (tenant, contradicts_id);

CREATE INDEX memory_siblings_sibling_idx ON cogmem.memory_siblings USING btree (tenant, sibling_id);

CREATE INDEX recalls_awaiting_idx ON cogmem.recalls USING btree (tenant, created_at) WHERE (message_embedding IS NOT NULL);

CREATE INDEX recalls_conversation_idx ON cogmem.recalls USING btree (tenant, conversation, created_at) WHERE (conversation IS NOT NULL);

CREATE INDEX recalls_pending_idx ON cogmem.recalls USING btree (tenant) WHERE pending;

CREATE UNIQUE INDEX recalls_recall_id_key ON cogmem.recalls USING btree (recall_id);

CREATE INDEX resource_chunks_current_idx ON cogmem.resource_chunks USING btree (tenant, chunk_id) WHERE current;

CREATE INDEX resource_chunks_resource_idx ON cogmem.resource_chunks USING btree (tenant, resource_id, "position");

CREATE UNIQUE INDEX resources_current_key ON cogmem.resources USING btree (tenant, lower(title), person, agent) NULLS NOT DISTINCT WHERE (superseded_at IS NULL);

CREATE INDEX sensory_turns_conversation_idx ON cogmem.sensory_turns USING btree (tenant, conversation, at);

CREATE INDEX sessions_open_idx ON cogmem.sessions USING btree (tenant, project) WHERE (ended_at IS NULL);

CREATE INDEX store_items_expiry ON cogmem.store_items USING btree (tenant, expires_at) WHERE (expires_at IS NOT NULL);

CREATE INDEX store_items_memory ON cogmem.store_items USING btree (tenant, memory_id) WHERE (memory_id IS NOT NULL);

CREATE INDEX tenant_access_narrowed_idx ON cogmem.tenant_access USING btree (role_name) WHERE (person IS NOT NULL);

CREATE INDEX tenant_access_role_idx ON cogmem.tenant_access USING btree (role_name, tenant);

CREATE INDEX trust_events_agent_idx ON cogmem.trust_events USING btree (tenant, agent, event_id);

CREATE INDEX trust_events_memory_idx ON cogmem.trust_events USING btree (tenant, memory_id, at) WHERE (memory_id IS NOT NULL);

ALTER INDEX cogmem.audit_log_pkey ATTACH PARTITION cogmem.audit_log_default_pkey;

ALTER INDEX cogmem.audit_log_memory_idx ATTACH PARTITION cogmem.audit_log_default_tenant_memory_id_idx;

ALTER INDEX cogmem.audit_log_recall_idx ATTACH PARTITION cogmem.audit_log_default_tenant_recall_id_idx;

ALTER INDEX cogmem.audit_log_xid_idx ATTACH PARTITION cogmem.audit_log_default_xid_idx;

CREATE TRIGGER audit_chain_append_only BEFORE DELETE OR UPDATE ON cogmem.audit_chain FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER audit_chain_no_truncate BEFORE TRUNCATE ON cogmem.audit_chain FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER audit_log_append_only BEFORE DELETE OR UPDATE ON cogmem.audit_log FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON cogmem.audit_log_default FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER bios_preset_loads_audit AFTER INSERT ON cogmem.bios_preset_loads FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

CREATE TRIGGER bios_preset_loads_immutable BEFORE DELETE OR UPDATE ON cogmem.bios_preset_loads FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER bios_preset_loads_no_truncate BEFORE TRUNCATE ON cogmem.bios_preset_loads FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER bios_rule_events_audit AFTER INSERT ON cogmem.bios_rule_events FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

CREATE TRIGGER bios_rule_events_immutable BEFORE DELETE OR UPDATE ON cogmem.bios_rule_events FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER bios_rule_events_no_truncate BEFORE TRUNCATE ON cogmem.bios_rule_events FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER bios_rules_audit AFTER INSERT ON cogmem.bios_rules FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

CREATE TRIGGER bios_rules_immutable BEFORE DELETE OR UPDATE ON cogmem.bios_rules FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER bios_rules_no_truncate BEFORE TRUNCATE ON cogmem.bios_rules FOR EACH STATEMENT EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER bios_subscriptions_audit AFTER INSERT OR DELETE ON cogmem.bios_subscriptions FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

CREATE TRIGGER core_identity_immutable BEFORE UPDATE ON cogmem.core_identity FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER episodes_immutable BEFORE UPDATE ON cogmem.episodes FOR EACH ROW EXECUTE FUNCTION cogmem._refuse_change();

CREATE TRIGGER experiment_tenants_audit AFTER INSERT OR DELETE ON cogmem.experiment_tenants FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

CREATE TRIGGER experiments_audit AFTER INSERT OR DELETE OR UPDATE ON cogmem.experiments FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

CREATE TRIGGER memories_fingerprint BEFORE INSERT OR UPDATE OF content ON cogmem.memories FOR EACH ROW EXECUTE FUNCTION cogmem._set_fingerprint();

CREATE TRIGGER memories_forget_keyed_rows AFTER DELETE ON cogmem.memories REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION cogmem._forget_keyed_rows();

CREATE TRIGGER memories_said BEFORE INSERT ON cogmem.memories FOR EACH ROW EXECUTE FUNCTION cogmem._set_said();

CREATE TRIGGER memories_truncate_keyed_rows AFTER TRUNCATE ON cogmem.memories FOR EACH STATEMENT EXECUTE FUNCTION cogmem._forget_keyed_rows();

CREATE TRIGGER tenant_access_audit AFTER INSERT OR DELETE OR UPDATE ON cogmem.tenant_access FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

CREATE TRIGGER tenant_layers_audit AFTER DELETE OR UPDATE ON cogmem.tenant_layers FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

CREATE TRIGGER tenant_topics_audit AFTER INSERT OR DELETE OR UPDATE ON cogmem.tenant_topics FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

CREATE TRIGGER tenants_audit AFTER INSERT OR DELETE OR UPDATE ON cogmem.tenants FOR EACH ROW EXECUTE FUNCTION cogmem._audit_governance();

ALTER TABLE ONLY cogmem.bios_preset_loads
    ADD CONSTRAINT bios_preset_loads_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.bios_rule_events
    ADD CONSTRAINT bios_rule_events_load_id_fkey FOREIGN KEY (load_id) REFERENCES cogmem.bios_preset_loads(load_id);

ALTER TABLE ONLY cogmem.bios_rule_events
    ADD CONSTRAINT bios_rule_events_rule_id_fkey FOREIGN KEY (rule_id) REFERENCES cogmem.bios_rules(rule_id);

ALTER TABLE ONLY cogmem.bios_rules
    ADD CONSTRAINT bios_rules_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.bios_subscriptions
    ADD CONSTRAINT bios_subscriptions_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.conflicts
    ADD CONSTRAINT conflicts_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.consolidation_decisions
    ADD CONSTRAINT consolidation_decisions_tenant_night_fkey FOREIGN KEY (tenant, night) REFERENCES cogmem.consolidation_nights(tenant, night) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.consolidation_nights
    ADD CONSTRAINT consolidation_nights_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.core_identity
    ADD CONSTRAINT core_identity_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.episodes
    ADD CONSTRAINT episodes_tenant_session_id_fkey FOREIGN KEY (tenant, session_id) REFERENCES cogmem.sessions(tenant, session_id) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.experiment_tenants
    ADD CONSTRAINT experiment_tenants_experiment_fkey FOREIGN KEY (experiment) REFERENCES cogmem.experiments(name) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.experiment_tenants
    ADD CONSTRAINT experiment_tenants_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.gut_feedback
    ADD CONSTRAINT gut_feedback_pattern_id_fkey FOREIGN KEY (pattern_id) REFERENCES cogmem.gut_patterns(pattern_id);

ALTER TABLE ONLY cogmem.gut_feedback
    ADD CONSTRAINT gut_feedback_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.gut_patterns
    ADD CONSTRAINT gut_patterns_first_release_fkey FOREIGN KEY (first_release) REFERENCES cogmem.gut_releases(release_id);

ALTER TABLE ONLY cogmem.gut_patterns
    ADD CONSTRAINT gut_patterns_last_release_fkey FOREIGN KEY (last_release) REFERENCES cogmem.gut_releases(release_id);

ALTER TABLE ONLY cogmem.gut_patterns
    ADD CONSTRAINT gut_patterns_withdrawn_release_fkey FOREIGN KEY (withdrawn_release) REFERENCES cogmem.gut_releases(release_id);

ALTER TABLE ONLY cogmem.gut_runs
    ADD CONSTRAINT gut_runs_release_id_fkey FOREIGN KEY (release_id) REFERENCES cogmem.gut_releases(release_id);

ALTER TABLE ONLY cogmem.memories
    ADD CONSTRAINT memories_superseded_by_fkey FOREIGN KEY (tenant, superseded_by) REFERENCES cogmem.memories(tenant, memory_id) ON DELETE SET NULL (superseded_by);

ALTER TABLE ONLY cogmem.memories
    ADD CONSTRAINT memories_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.recalls
    ADD CONSTRAINT recalls_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.reembedded_vectors
    ADD CONSTRAINT reembedded_vectors_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.reembeddings(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.reembeddings
    ADD CONSTRAINT reembeddings_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.resource_chunks
    ADD CONSTRAINT resource_chunks_tenant_resource_id_fkey FOREIGN KEY (tenant, resource_id) REFERENCES cogmem.resources(tenant, resource_id) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.resources
    ADD CONSTRAINT resources_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.sensory_turns
    ADD CONSTRAINT sensory_turns_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.sessions
    ADD CONSTRAINT sessions_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.store_items
    ADD CONSTRAINT store_items_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.tenant_layers
    ADD CONSTRAINT tenant_layers_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.tenant_topics
    ADD CONSTRAINT tenant_topics_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.topic_matchers
    ADD CONSTRAINT topic_matchers_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.trust_events
    ADD CONSTRAINT trust_events_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.vault_items
    ADD CONSTRAINT vault_items_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE ONLY cogmem.vault_keys
    ADD CONSTRAINT vault_keys_tenant_fkey FOREIGN KEY (tenant) REFERENCES cogmem.tenants(tenant) ON DELETE CASCADE;

ALTER TABLE cogmem.audit_chain ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.audit_log ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.bios_preset_loads ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.bios_rules ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.bios_subscriptions ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.conflicts ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.consolidation_decisions ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.consolidation_nights ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.consolidation_runs ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.core_identity ENABLE ROW LEVEL SECURITY;

CREATE POLICY definer_reads ON cogmem.gut_shard_key FOR SELECT USING ((CURRENT_USER = 'cogmem_owner'::name));

ALTER TABLE cogmem.episodes ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.experiment_tenants ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.gut_contributions ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.gut_feedback ENABLE ROW LEVEL SECURITY;

CREATE POLICY gut_release_log ON cogmem.audit_log FOR INSERT WITH CHECK (((tenant = '*'::text) AND (level = 'governance'::text) AND (event = ANY (ARRAY['gut_released'::text, 'gut_imported'::text])) AND ( SELECT pg_has_role(cogmem.caller(), 'cogmem_gut'::name, 'USAGE'::text) AS pg_has_role)));

CREATE POLICY gut_release_reads ON cogmem.gut_contributions FOR SELECT USING (( SELECT pg_has_role(cogmem.caller(), 'cogmem_gut'::name, 'USAGE'::text) AS pg_has_role));

CREATE POLICY gut_release_reads ON cogmem.gut_feedback FOR SELECT USING (( SELECT pg_has_role(cogmem.caller(), 'cogmem_gut'::name, 'USAGE'::text) AS pg_has_role));

ALTER TABLE cogmem.gut_shard_key ENABLE ROW LEVEL SECURITY;

CREATE POLICY honest_writes ON cogmem.audit_log AS RESTRICTIVE FOR INSERT WITH CHECK (((actor = cogmem.caller()) AND (xid = pg_current_xact_id()) AND (logged_at = now())));

ALTER TABLE cogmem.learnings ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.memories ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.memory_contradictions ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.memory_siblings ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.memory_stats ENABLE ROW LEVEL SECURITY;

CREATE POLICY own_grants ON cogmem.tenant_access USING ((pg_has_role(cogmem.caller(), 'cogmem_admin'::name, 'USAGE'::text) OR pg_has_role(cogmem.caller(), (to_regrole(quote_ident((role_name)::text)))::oid, 'USAGE'::text)));

CREATE POLICY person_deletes ON cogmem.conflicts AS RESTRICTIVE FOR DELETE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_deletes ON cogmem.episodes AS RESTRICTIVE FOR DELETE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_deletes ON cogmem.memories AS RESTRICTIVE FOR DELETE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_deletes ON cogmem.recalls AS RESTRICTIVE FOR DELETE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_deletes ON cogmem.resource_chunks AS RESTRICTIVE FOR DELETE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_deletes ON cogmem.resources AS RESTRICTIVE FOR DELETE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_deletes ON cogmem.sensory_turns AS RESTRICTIVE FOR DELETE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_deletes ON cogmem.sessions AS RESTRICTIVE FOR DELETE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_deletes ON cogmem.store_items AS RESTRICTIVE FOR DELETE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_inserts ON cogmem.conflicts AS RESTRICTIVE FOR INSERT WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_inserts ON cogmem.episodes AS RESTRICTIVE FOR INSERT WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_inserts ON cogmem.memories AS RESTRICTIVE FOR INSERT WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_inserts ON cogmem.recalls AS RESTRICTIVE FOR INSERT WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_inserts ON cogmem.resource_chunks AS RESTRICTIVE FOR INSERT WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_inserts ON cogmem.resources AS RESTRICTIVE FOR INSERT WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_inserts ON cogmem.sensory_turns AS RESTRICTIVE FOR INSERT WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_inserts ON cogmem.sessions AS RESTRICTIVE FOR INSERT WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_inserts ON cogmem.store_items AS RESTRICTIVE FOR INSERT WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_reads ON cogmem.conflicts AS RESTRICTIVE FOR SELECT USING (((person IS NULL) OR (NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_reads ON cogmem.episodes AS RESTRICTIVE FOR SELECT USING (((person IS NULL) OR (NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_reads ON cogmem.memories AS RESTRICTIVE FOR SELECT USING (((person IS NULL) OR (NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_reads ON cogmem.memory_contradictions AS RESTRICTIVE FOR SELECT USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR (2 = ( SELECT count(*) AS count
   FROM cogmem.memories m
  WHERE ((m.tenant = memory_contradictions.tenant) AND (m.memory_id = ANY (ARRAY[memory_contradictions.memory_id, memory_contradictions.contradicts_id])))))));

CREATE POLICY person_reads ON cogmem.memory_siblings AS RESTRICTIVE FOR SELECT USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR (2 = ( SELECT count(*) AS count
   FROM cogmem.memories m
  WHERE ((m.tenant = memory_siblings.tenant) AND (m.memory_id = ANY (ARRAY[memory_siblings.memory_id, memory_siblings.sibling_id])))))));

CREATE POLICY person_reads ON cogmem.memory_stats AS RESTRICTIVE FOR SELECT USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR (EXISTS ( SELECT
   FROM cogmem.memories m
  WHERE ((m.tenant = memory_stats.tenant) AND (m.memory_id = memory_stats.memory_id))))));

CREATE POLICY person_reads ON cogmem.recalls AS RESTRICTIVE FOR SELECT USING (((person IS NULL) OR (NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_reads ON cogmem.resource_chunks AS RESTRICTIVE FOR SELECT USING (((person IS NULL) OR (NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_reads ON cogmem.resources AS RESTRICTIVE FOR SELECT USING (((person IS NULL) OR (NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_reads ON cogmem.sensory_turns AS RESTRICTIVE FOR SELECT USING (((person IS NULL) OR (NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_reads ON cogmem.sessions AS RESTRICTIVE FOR SELECT USING (((person IS NULL) OR (NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_reads ON cogmem.store_items AS RESTRICTIVE FOR SELECT USING (((person IS NULL) OR (NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_updates ON cogmem.conflicts AS RESTRICTIVE FOR UPDATE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person))) WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_updates ON cogmem.episodes AS RESTRICTIVE FOR UPDATE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person))) WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_updates ON cogmem.memories AS RESTRICTIVE FOR UPDATE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person))) WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_updates ON cogmem.recalls AS RESTRICTIVE FOR UPDATE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person))) WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_updates ON cogmem.resource_chunks AS RESTRICTIVE FOR UPDATE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person))) WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_updates ON cogmem.resources AS RESTRICTIVE FOR UPDATE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person))) WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_updates ON cogmem.sensory_turns AS RESTRICTIVE FOR UPDATE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person))) WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_updates ON cogmem.sessions AS RESTRICTIVE FOR UPDATE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person))) WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

CREATE POLICY person_updates ON cogmem.store_items AS RESTRICTIVE FOR UPDATE USING (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person))) WITH CHECK (((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)) OR ((( SELECT cogmem.narrowed_reach() AS narrowed_reach) -> tenant) ? person)));

ALTER TABLE cogmem.recalls ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.reembedded_vectors ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.reembeddings ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.resource_chunks ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.resources ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.sensory_turns ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.sessions ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.store_items ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.tenant_access ENABLE ROW LEVEL SECURITY;

CREATE POLICY tenant_isolation ON cogmem.audit_chain USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.audit_log USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.bios_preset_loads USING (((tenant IS NULL) OR (tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.bios_rules USING (((tenant IS NULL) OR (tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.bios_subscriptions USING (((tenant IS NULL) OR (tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.conflicts USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.consolidation_decisions USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.consolidation_nights USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.consolidation_runs USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.core_identity USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.episodes USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.experiment_tenants USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.gut_contributions USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.gut_feedback USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.learnings USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.memories USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.memory_contradictions USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.memory_siblings USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.memory_stats USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.recalls USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.reembedded_vectors USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.reembeddings USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.resource_chunks USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.resources USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.sensory_turns USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.sessions USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.store_items USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.tenant_layers USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.tenant_topics USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.tenants USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.topic_matchers USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

CREATE POLICY tenant_isolation ON cogmem.trust_events USING (((tenant = ANY (( SELECT cogmem.reachable_tenants() AS reachable_tenants)::text[])) OR ( SELECT cogmem.reaches_every_tenant() AS reaches_every_tenant)));

ALTER TABLE cogmem.tenant_layers ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.tenant_topics ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.tenants ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.topic_matchers ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.trust_events ENABLE ROW LEVEL SECURITY;

CREATE POLICY vault_access ON cogmem.vault_items USING ((cogmem.may_use_vault(tenant) OR pg_has_role(cogmem.caller(), 'cogmem_admin'::name, 'USAGE'::text)));

CREATE POLICY vault_access ON cogmem.vault_keys USING (cogmem.may_use_vault(tenant));

ALTER TABLE cogmem.vault_items ENABLE ROW LEVEL SECURITY;

ALTER TABLE cogmem.vault_keys ENABLE ROW LEVEL SECURITY;

CREATE POLICY whole_tenant_reads ON cogmem.audit_log AS RESTRICTIVE FOR SELECT USING ((NOT (( SELECT cogmem.narrowed_reach() AS narrowed_reach) ? tenant)));
