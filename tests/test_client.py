"""cogmem_pg.client: the typed Python client, 1:1 with the SQL API."""

import dataclasses

import psycopg
import pytest

from cogmem_pg.client import Classification, Client, Judgement, Memory
from cogmem_pg.embed import default_embedder


@pytest.fixture
def client(dsn):
    with Client(dsn) as c:
        yield c


def test_round_trip(client):
    client.create_tenant("acme")
    memory = client.remember("acme", "Never restart the servers at night", "dos_and_donts", source={"who": "ayse"})
    assert isinstance(memory, Memory)
    assert (memory.ring, memory.topics, memory.action, memory.redactions) == (
        "dos_and_donts",
        ["server"],
        "created",
        [],
    )
    assert client.remember("acme", "never restart the servers at night!").action == "duplicate"
    rule_id = client.add_bios_rule("server", "Run a configuration test before any restart.", requirement="OPS-01")
    result = client.recall("acme", "Can we restart the servers tonight?")
    assert [i.layer for i in result.items] == ["bios", "dos_and_donts"]
    assert result.items[0].rule_id == rule_id and result.items[1].memory_id == memory.memory_id
    assert result.tokens == sum(i.tokens for i in result.items)
    assert result.as_prompt() == (
        "## bios\n- Run a configuration test before any restart.\n"
        "## dos_and_donts\n- Never restart the servers at night"
    )
    assert client.feedback(result.recall_id, 1.0) == 1
    assert client.detect_topics("acme", "invoice") == ["billing"]
    steps = "To rotate the web servers: 1. drain the node 2. restart nginx 3. check health."
    assert client.route(steps) == "procedures"
    assert client.redact("password=x") == ("password=[REDACTED]", ["password"])
    client.set_topic("acme", "kubernetes", ["kubectl"])
    assert client.detect_topics("acme", "kubectl apply") == ["kubernetes"]
    client.retire_bios_rule(rule_id, "superseded")
    assert [i.layer for i in client.recall("acme", "restart the servers").items] == ["dos_and_donts"]


def test_client_embeds_on_the_client_side(client, db):
    if default_embedder() is None:
        pytest.skip("the [embed] extra is not installed")
    client.create_tenant("acme")
    client.remember("acme", "Never reboot production machines after midnight")
    assert db.execute("SELECT embedding IS NOT NULL FROM cogmem.memories").fetchone() == (True,)


def test_remember_many_embeds_the_batch_on_the_client(client, db):
    client.create_tenant("acme")
    rows = client.remember_many(
        "acme",
        [
            {"content": "Never restart the servers at night", "ring": "dos_and_donts"},
            {"content": "Invoices go out on the 1st", "ring": "long_term"},
        ],
    )
    assert [(r.item, r.ring, r.action) for r in rows] == [(1, "dos_and_donts", "created"), (2, "long_term", "created")]
    embedded = db.execute("SELECT count(*) FILTER (WHERE embedding IS NOT NULL) FROM cogmem.memories").fetchone()
    assert embedded == (2 if default_embedder() is not None else 0,)
    assert [r.action for r in client.remember_many("acme", ["never restart the servers at night!"])] == ["duplicate"]


def test_a_batch_item_is_a_memory_with_its_position_first():
    """cogmem_pg/types.py: BatchMemory shares Memory's fields, and keeps cogmem.remember_many's column order
    (the JSON of `cogmem remember-many --json`); the types stay importable from cogmem_pg.client."""
    from cogmem_pg import client, types

    item = types.BatchMemory(3, 7, "fresh", ["server"], "created", [])
    assert isinstance(item, Memory)
    assert dataclasses.asdict(item) == {
        "item": 3, "memory_id": 7, "ring": "fresh", "topics": ["server"], "action": "created", "redactions": [],
        "conflict_id": None, "conflicts_with": None, "candidate": None, "excerpt_id": None, "suggestion": None,
    }  # fmt: skip
    public = {name for name in vars(types) if name[0].isupper() and getattr(types, name).__module__ == types.__name__}
    assert len(public) == 41 and all(getattr(client, name) is getattr(types, name) for name in [*public, "Ring"])


def test_joins_the_callers_transaction(client, dsn):
    client.create_tenant("acme")
    with psycopg.connect(dsn) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        client.remember("acme", "Invoices go out on the 1st", conn=conn)
        conn.rollback()
    assert client.recall("acme", "invoices").items == []


def test_errors_surface_as_psycopg_errors(client):
    with pytest.raises(psycopg.errors.UndefinedObject, match='unknown tenant "ghost"'):
        client.remember("ghost", "hello")


def test_observe_consolidate_and_siblings(client):
    client.create_tenant("acme")
    observed = client.observe("acme", "c1", "user", "Never deploy on Fridays.")
    assert (observed.ring, observed.action, observed.reason) == ("dos_and_donts", "created", "routed to dos_and_donts")
    decisions = {d.decision: d.memories for d in client.consolidate(tenant="acme")}
    assert decisions["protect"] == 1
    assert client.siblings("acme", observed.memory_id) == []


def test_metacognition_round_trip(client):
    client.create_tenant("acme")
    rule = client.remember("acme", "Never restart the servers at night", ring="dos_and_donts")
    held = client.remember("acme", "Restart the servers tonight")
    assert (held.action, held.memory_id, held.conflicts_with) == ("conflict", None, [rule.memory_id])
    (conflict,) = client.open_conflicts("acme")
    assert conflict.conflict_id == held.conflict_id and conflict.established == ["Never restart the servers at night"]
    resolved = client.resolve_conflict(held.conflict_id, "override", "approved once")
    assert resolved.status == "override" and resolved.memory_id is not None and resolved.weakened == []

    report = client.report_error("acme", "server", "Restarted web-1 at night and checkout broke.")
    assert (report.errors, report.blocking, report.repeated) == (1, False, False)
    for _ in range(3):
        report = client.report_error("acme", "server", "again", repeat_of=report.learning_id)
    assert report.blocking and client.trust("acme") == 50 - 3 * 7
    items = client.guard_check("acme", "server", "restart web-1 tonight")
    assert items[0].kind == "learning" and items[0].blocking
    client.acknowledge("acme", report.learning_id, "maintenance window agreed")
    assert not any(i.blocking for i in client.guard_check("acme", "server", "restart web-1 tonight"))
    assert client.trust_event("acme", "praise", "well done") == 32


def test_identity_sessions_and_briefing(client):
    client.create_tenant("acme")
    assert client.core_identity("acme") is None
    assert client.set_core_identity("acme", agent="Ops assistant", goals=["Keep the shop up"]) == 1
    assert client.core_identity("acme")["goals"] == ["Keep the shop up"]
    session = client.start_session("acme", "shop")
    episode = client.end_session(
        session, "Moved the shop to db-2.", open_items=["Switch DNS"], facts=["The shop runs on db-2."]
    )
    assert episode.episode == session and len(episode.remembered) == 1
    assert [line.section for line in client.briefing("acme", "shop")] == ["core", "last_session", "open_items"]
    assert client.briefing_text("acme", "shop").startswith("## Core identity\nAgent: Ops assistant")
    assert sorted(f.kind for f in client.analyze("acme", "shop")) == ["episode", "memory"]  # same moment


class ByPrefix:
    """A deterministic stand-in for an LLM classifier: 'RULE:' texts are rules about code style, and a rule
    contradicts the established memory it names by a word it reverses."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[int]]] = []

    def __call__(self, texts, established):
        verdicts = []
        for text, shown in zip(texts, established, strict=True):
            self.seen.append((text, [e.memory_id for e in shown]))
            ring = "dos_and_donts" if text.startswith("RULE:") else "fresh"
            contradicted = [e.memory_id for e in shown if "tabs" in e.content and "spaces" in text]
            verdicts.append(Classification(ring=ring, topics=["style"], contradicts=contradicted))
        return verdicts


def test_a_caller_side_classifier_decides_ring_topics_and_contradictions(dsn):
    judge = ByPrefix()
    with Client(dsn, classifier=judge) as client:
        client.create_tenant("acme")
        tabs = client.remember("acme", "RULE: indent with tabs in this repository")
        assert (tabs.ring, tabs.topics, tabs.action) == ("dos_and_donts", ["style"], "created")
        held = client.remember("acme", "RULE: indent with spaces from now on")
        assert (held.action, held.conflicts_with) == ("conflict", [tabs.memory_id])
        assert client.open_conflicts("acme")[0].verdict == "caller"
        # What the classifier was shown: the established memories the text might contradict.
        assert judge.seen[-1] == ("RULE: indent with spaces from now on", [tabs.memory_id])
        # Arguments the caller passes win over the classifier.
        assert client.remember("acme", "The style guide lives in the wiki", ring="long_term").ring == "long_term"
        batch = client.remember_many("acme", ["RULE: lines stay under 100 characters", {"content": "Lint runs in CI"}])
        assert [(b.ring, b.topics) for b in batch] == [("dos_and_donts", ["style"]), ("fresh", ["style"])]


def test_a_callers_judge_decides_what_the_next_turn_says(dsn, db):
    asked: list[tuple[str, str]] = []

    def my_llm(turn: str, question: str) -> Judgement | None:
        asked.append((turn, question))
        return Judgement("corrected", 0.7) if "wrong" in turn else None

    with Client(dsn, embedder=False, judge=my_llm) as client:
        client.create_tenant("acme")
        fact = client.remember("acme", "The staging database listens on port 6432.", "fresh").memory_id
        first = client.recall("acme", "Which port does staging use?", conversation="c1")
        client.remember("acme", "Which port does staging use?", conversation="c1")  # its own turn: not a reply
        client.remember("acme", "that's wrong, it is 5433", conversation="c1")
        second = client.recall("acme", "and the staging cache?", conversation="c2")
        client.recall("acme", "ok, and prod?", conversation="c2")  # the judge abstains
    assert asked == [
        ("that's wrong, it is 5433", "Which port does staging use?"),
        ("ok, and prod?", "and the staging cache?"),
    ]
    rows = db.execute(
        "SELECT recall_id, outcome, outcome_source, judged_verdict, judged_by, feedback_used FROM cogmem.recalls"
        " WHERE recall_id IN (%s, %s) ORDER BY created_at",
        (first.recall_id, second.recall_id),
    ).fetchall()
    by_id = {r[0]: r[1:] for r in rows}
    assert by_id[first.recall_id] == (0.0, "implicit", "corrected", "my_llm", [fact])
    assert by_id[second.recall_id] == (None, None, "neutral", "my_llm", None)


def test_the_databases_judge_from_the_client(client):
    verdict = client.judge_followup("süper, oldu teşekkürler")
    # The client embeds the turn, but without the question's embedding the cues model judges.
    assert verdict.verdict == "confirmed" and verdict.model == "followup-cues"
    client.create_tenant("acme")
    assert client.outcome_stats("acme") is None  # no recall yet


@pytest.mark.parametrize(
    "given, said",
    [
        ({"user": "nobody_here"}, 'role "nobody_here" does not exist'),
        ({"dbname": "no_such_db"}, 'database "no_such_db"'),
    ],
)
def test_a_login_the_server_refuses_fails_at_once_with_its_message(dsn, given, said):
    """Not after the pool's 30 s of retries, and with what the server said (issue 49)."""
    from psycopg.conninfo import make_conninfo

    with pytest.raises(psycopg.OperationalError, match=said):
        Client(make_conninfo(dsn, **given), embedder=False)


def test_errors_are_typed_and_carry_the_servers_hint(client, dsn):
    from cogmem_pg import errors

    with pytest.raises(errors.UnknownTenant) as unknown:
        client.recall("nowhere", "hello")
    assert isinstance(unknown.value, errors.NotFound) and isinstance(unknown.value, psycopg.errors.UndefinedObject)
    assert unknown.value.hint == "Create it first: SELECT cogmem.create_tenant('nowhere');"
    assert unknown.value.sqlstate == "42704"
    client.create_tenant("acme")
    with pytest.raises(errors.InvalidInput) as invalid:
        client.recall("acme", "hello", budget=0)
    assert str(invalid.value).startswith("budget must be between 1 and 1000000 tokens, got 0")
    assert invalid.value.hint == "The default is 3200 tokens."
    with pytest.raises(errors.NotFound):
        client.feedback(client.recall("acme", "hello").recall_id.__class__(int=1), 1.0)
    with pytest.raises(errors.PermissionDenied, match='role "nobody_here" does not exist'):
        Client(dsn.replace("user=postgres", "user=nobody_here"))


def test_a_recall_that_injects_nothing_still_has_an_id_for_feedback(client):
    client.create_tenant("acme")
    empty = client.recall("acme", "Anything about the weather?")
    assert empty.items == [] and empty.recall_id is not None
    assert client.feedback(empty.recall_id, 0.0) == 0  # nothing was injected, nothing is charged
    client.remember("acme", "The office wifi password rotates every Monday.", "long_term")
    assert client.recall("acme", "When does the wifi password rotate?").recall_id != empty.recall_id


def test_remember_takes_a_chat_as_frameworks_pass_it(client):
    client.create_tenant("acme")
    chat = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "I moved to Izmir last month.", "name": "Dana"},
        {"role": "assistant", "content": "Noted, I will ship to Izmir from now on."},
        {"role": "tool", "content": '{"ok": true}'},
        {"role": "user", "content": [{"type": "text", "text": "Please always email me, never call."}]},
    ]
    kept = client.remember("acme", chat, conversation="c-1", person="dana")
    assert [k.action for k in kept] == ["created"] * 3
    with client.connection() as conn:
        turns = conn.execute(
            "SELECT speaker, content, conversation, person FROM cogmem.memories WHERE tenant = 'acme' "
            "ORDER BY memory_id"
        ).fetchall()
    assert turns == [
        ("Dana", "I moved to Izmir last month.", "c-1", "dana"),
        ("assistant", "Noted, I will ship to Izmir from now on.", "c-1", "dana"),
        ("user", "Please always email me, never call.", "c-1", "dana"),
    ]

    class LangChainMessage:  # the shape of langchain_core's messages: type and content
        def __init__(self, type_: str, content: str) -> None:
            self.type, self.content = type_, content

    assert len(client.remember("acme", [LangChainMessage("human", "My cat is called Pamuk.")], person="dana")) == 1
    assert client.remember("acme", []) == []


def test_the_async_client_has_every_method_as_a_coroutine(dsn):
    import asyncio

    from cogmem_pg import AsyncClient, errors

    async def story() -> tuple:
        async with AsyncClient(dsn) as client:
            await client.create_tenant("acme")
            await client.remember("acme", "Never restart the servers at night", "dos_and_donts")
            both = await asyncio.gather(client.recall("acme", "Restart tonight?"), client.recall("acme", "Restart?"))
            credited = await client.feedback(both[0].recall_id, 1.0)
            try:
                await client.recall("nowhere", "hi")
            except errors.UnknownTenant as error:
                return [r.items[0].content for r in both], credited, error.hint
        raise AssertionError("an unknown tenant was not refused")

    contents, credited, hint = asyncio.run(story())
    assert contents == ["Never restart the servers at night"] * 2 and credited == 1
    assert hint == "Create it first: SELECT cogmem.create_tenant('nowhere');"
