"""The results of :class:`cogmem_pg.client.Client`: a frozen dataclass per SQL function result, the
caller-side :class:`Classifier` protocol and its :class:`Classification`, and the caller-side :class:`Judge`
protocol and its :class:`Judgement`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol
from uuid import UUID

Ring = Literal["shocks", "dos_and_donts", "long_term", "habits", "procedures", "fresh"]
# What an agent can say a text is without knowing the rings; remember files each in its ring (sql/004-text.sql).
Kind = Literal["rule", "preference", "incident", "procedure", "habit", "fact", "chat"]


@dataclass(frozen=True)
class Established:
    """An established memory a new text might contradict (cogmem.related)."""

    memory_id: int
    ring: str
    content: str
    similarity: float


@dataclass(frozen=True)
class Classification:
    """A caller-side verdict on one text: its ring, its topics (None: let cogmem detect them), the ids
    of the established memories it contradicts (among those it was shown; empty: none), and of those it
    replaces, a correction or a changed fact (None: let cogmem find it; empty: none)."""

    ring: Ring
    topics: Sequence[str] | None = None
    contradicts: Sequence[int] = ()
    supersedes: Sequence[int] | None = None


class Classifier(Protocol):
    """Classifies texts; ``established[i]`` holds the memories text ``i`` might contradict."""

    def __call__(
        self, texts: Sequence[str], established: Sequence[Sequence[Established]]
    ) -> Sequence[Classification]: ...


Verdict = Literal["confirmed", "corrected", "repeated", "neutral"]


@dataclass(frozen=True)
class Judgement:
    """A caller-side verdict on what the next turn says of the last answer (neutral: nothing, abstain), with
    its confidence (0..1)."""

    verdict: Verdict
    confidence: float = 1.0


@dataclass(frozen=True)
class FollowupVerdict:
    """The database judge's verdict on a turn (cogmem.judge_followup)."""

    verdict: Verdict
    confidence: float | None
    probabilities: dict[str, float] | None
    model: str | None
    cues: list[str]


class Judge(Protocol):
    """Judges the user's next turn after an answer, given the message the answer was recalled for; None
    abstains."""

    def __call__(self, turn: str, asked: str) -> Judgement | None: ...


@dataclass(frozen=True)
class Memory:
    """What remember did. action is created, duplicate or conflict; a conflict stores nothing (memory_id
    is None) until resolve_conflict(conflict_id, ...) decides, and names the memories it contradicts.
    candidate: the never-cut ring the memory (or the sentence taken from it) may belong to, waiting for a
    person (pending_rules); excerpt_id: the memory keeping the sentence of a long turn that is a rule or an
    incident (the turn itself stays in fresh); suggestion: for a very long text, stored all the same, that
    add_resource would keep it as a document."""

    memory_id: int | None
    ring: str
    topics: list[str]
    action: str
    redactions: list[str]
    conflict_id: int | None = None
    conflicts_with: list[int] | None = None
    candidate: str | None = None
    excerpt_id: int | None = None
    suggestion: str | None = None


@dataclass(frozen=True)
class StoredMemory:
    """One memory as get_memory and list_memories return it (sql/185-app-verbs.sql): its text, ring, topics
    and scope, where and when it was said, what superseded it (superseded_by, and valid_until when surely),
    the never-cut ring it is a candidate for, and its confidence, strength and recalls."""

    memory_id: int
    ring: str
    content: str
    topics: list[str]
    person: str | None
    agent: str | None
    source: dict[str, Any]
    conversation: str | None
    speaker: str | None
    said_at: datetime | None
    created_at: datetime
    updated_at: datetime
    superseded_by: int | None
    valid_until: datetime | None
    candidate: str | None
    confidence: float
    strength: float
    recall_count: int
    last_recalled_at: datetime | None


@dataclass(frozen=True)
class HistoryEntry:
    """A row of memory_history: kind version (a version of the memory: event current, superseded or
    possibly_superseded, its content, superseded_by and valid_until) or kind event (an audit row of a
    version: created, rehearsed, superseded, erased, ... with its actor and detail)."""

    kind: str
    memory_id: int
    at: datetime
    event: str
    content: str | None
    superseded_by: int | None
    valid_until: datetime | None
    actor: str | None
    detail: dict[str, Any]
    audit_id: int | None


@dataclass(frozen=True)
class ResourceAdded:
    """What add_resource did: action is created, new_version (the old version's chunks are no longer
    recalled) or unchanged (the same text again); chunks: how many the version has."""

    resource_id: int
    version: int
    action: str
    chunks: int
    redactions: list[str]


@dataclass(frozen=True)
class ResourceChunk:
    """A chunk add_resource would store, and the text it is embedded by."""

    chunk: int
    heading: str
    content: str
    embed_text: str


@dataclass(frozen=True)
class GuardItem:
    kind: str
    memory_id: int | None
    content: str
    strength: float
    times_referenced: int
    blocking: bool


@dataclass(frozen=True)
class ErrorReport:
    learning_id: int
    errors: int
    repeats_since_ack: int
    blocking: bool
    repeated: bool


@dataclass(frozen=True)
class Conflict:
    conflict_id: int
    content: str
    conflicts_with: list[int]
    established: list[str]
    verdict: str
    opened_at: datetime


@dataclass(frozen=True)
class Episode:
    episode: UUID
    touched: list[int]
    remembered: list[int]


@dataclass(frozen=True)
class BriefingLine:
    section: str
    content: str
    at: datetime
    tokens: int


@dataclass(frozen=True)
class Finding:
    kind: str
    ref: str
    at: datetime
    content: str
    topics: list[str]
    detail: dict[str, Any]


@dataclass(frozen=True)
class Found:
    memory_id: int
    ring: str
    content: str
    topics: list[str]
    score: float


@dataclass(frozen=True)
class VaultEntry:
    name: str
    description: str | None
    subject: str | None
    version: int
    updated_at: datetime


@dataclass(frozen=True)
class TopicKeywords:
    topic: str
    keywords: list[str]
    overridden: bool


@dataclass(frozen=True)
class StoredItem:
    """A keyed store item (sql/180-store.sql); score is set by a search with a query."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    memory_id: int | None
    score: float | None = None


@dataclass(frozen=True)
class StorePut:
    """What cogmem.store_put did: the item's memory, remember's action ('stored': no text), redactions."""

    memory_id: int | None
    action: str
    redactions: list[str]


@dataclass(frozen=True)
class Resolution:
    status: str
    memory_id: int | None
    weakened: list[int]


@dataclass(frozen=True)
class _BatchItem:
    item: int


# A Memory, after its position: as a base listed after Memory, _BatchItem's field comes first, so the
# constructor, the fields and the JSON of a row keep the order cogmem.remember_many returns them in.
@dataclass(frozen=True)
class BatchMemory(Memory, _BatchItem):
    """One item of a remember_many batch: its position (from 1) and what became of it (memory_id is None
    when the item was held as a conflict)."""


@dataclass(frozen=True)
class _Previous:
    previous_id: int


# As BatchMemory: the base listed after Memory puts previous_id first, as cogmem.update_memory returns it.
@dataclass(frozen=True)
class MemoryUpdate(Memory, _Previous):
    """What update_memory did to PREVIOUS_ID: what remember did with the new text. memory_id is the new
    version (action created), or the memory the text already was (duplicate; previous_id itself when the
    text did not change), or None for an instruction held as a conflict (conflict_id), which leaves the old
    version current."""


@dataclass(frozen=True)
class PendingRule:
    """A candidate rule or incident waiting for a person, with the question to ask them."""

    memory_id: int
    ring: str
    content: str
    probability: float | None
    question: str
    created_at: datetime


@dataclass(frozen=True)
class RecallItem:
    recall_id: UUID
    layer: str
    memory_id: int | None
    content: str
    tokens: int
    score: float
    reason: str
    rule_id: int | None
    # What was said, without the date and speaker ``content`` shows it with: what to quote or store again.
    text: str | None = None


@dataclass(frozen=True)
class TenantIndex:
    tenant: str | None
    memories: int | None
    index_name: str
    state: str  # to build, ready, to rebuild, to drop
    statement: str | None


@dataclass(frozen=True)
class Observation:
    turn_id: int
    memory_id: int | None
    ring: str | None
    topics: list[str] | None
    action: str | None
    reason: str | None


@dataclass(frozen=True)
class Decision:
    tenant: str
    decision: str
    memories: int


@dataclass(frozen=True)
class Sibling:
    sibling_id: int
    content: str
    similarity: float
    differs: list[str]


@dataclass(frozen=True)
class ExplainedItem:
    item: int
    layer: str
    memory_id: int | None
    rule_id: int | None
    score: float
    tokens: int
    reason: str
    provenance: dict[str, Any] | None
    history: list[dict[str, Any]]
    outcomes: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class AuditCheck:
    tenant: str
    ok: bool
    rows_checked: int
    first_bad_id: int | None


@dataclass(frozen=True)
class GutSwitches:
    gut_contribute: bool
    gut_receive: bool
    contributions: int


@dataclass(frozen=True)
class GutRelease:
    release_id: int
    epsilon_spent: float
    delta_spent: float
    threshold: float
    published: int
    withdrawn: int
    remaining: float


@dataclass(frozen=True)
class GutPattern:
    pattern_id: int
    content: str
    topics: list[str]
    support: int
    success: float | None
    success_low: float | None
    success_high: float | None
    released_at: datetime


@dataclass(frozen=True)
class GutPeriod:
    period_start: datetime
    budget: float
    spent: float
    remaining: float
    releases: int
    published: int
    withdrawn: int


@dataclass(frozen=True)
class ExperimentArm:
    """A tenant's arm in an experiment (cogmem.experiment_create); arm None: its sessions are assigned."""

    tenant: str
    arm: int | None
    value: Any


@dataclass(frozen=True)
class Experiment:
    """An experiment (cogmem.experiment_status); tenants: how many each arm enrols ("session" when the
    unit is the session)."""

    experiment: str
    parameter: str
    arms: list[Any]
    unit: str
    metric: str
    state: str
    tenants: dict[str, int] | None
    created_at: datetime
    stopped_at: datetime | None
    adopted_arm: int | None
    adopted_at: datetime | None


@dataclass(frozen=True)
class ArmReport:
    """One arm of cogmem.experiment_report: its metric with a 95% interval valid at every look, the
    always-valid p-value that it beats every other arm, and the experiment's verdict."""

    arm: int
    value: Any
    units: int
    observations: float
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    p_better: float
    verdict: str
    decided_at: datetime | None


@dataclass(frozen=True)
class Recall:
    recall_id: UUID | None
    items: list[RecallItem] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(i.tokens for i in self.items)

    def layer(self, name: str) -> list[RecallItem]:
        return [i for i in self.items if i.layer == name]

    def as_prompt(self) -> str:
        """The recalled context as a block of text for a prompt, grouped by layer."""
        lines: list[str] = []
        current = None
        for item in self.items:
            if item.layer != current:
                current = item.layer
                lines.append(f"## {current}")
            lines.append(f"- {item.content}")
        return "\n".join(lines)
