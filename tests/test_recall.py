"""sql/070-recall.sql: budgeted, ring-structured, topic-filtered recall, and feedback."""

import hashlib
import random

import numpy as np
import psycopg
import pytest

from tests.conftest import blend, named, one, unit_vector

SERVER_MSG = "Let's open a maintenance window tonight and restart the servers"


def add(db, tenant, content, ring, topics, embedding=None):
    vector = None if embedding is None else np.asarray(embedding, dtype=np.float32)
    return one(
        db,
        "SELECT memory_id FROM cogmem.remember(%s, %s, %s, %s, %s)",
        (tenant, content, ring, topics, vector),
    )


def recall(db, tenant, message, **args):
    if isinstance(args.get("embedding"), list):
        args["embedding"] = np.asarray(args["embedding"], dtype=np.float32)
    return db.execute(
        f"SELECT * FROM cogmem.recall(%(tenant)s, %(message)s{named(args)})",
        {"tenant": tenant, "message": message, **args},
    ).fetchall()


def sized(words: int, word: str) -> str:
    """A text of exactly 4 * words characters: `words` tokens by the chars/4 estimate."""
    return " ".join([word] * words)[: 4 * words - 1] + "."


def test_empty_tenant_returns_nothing_and_logs_the_cycle(db, tenant):
    assert recall(db, tenant, SERVER_MSG) == []
    row = db.execute("SELECT topics, budget, tokens_used FROM cogmem.recalls").fetchone()
    assert row == (["server"], 3200, 0)


def test_billing_never_appears_in_a_server_recall(db, tenant):
    rule = add(db, tenant, "Don't restart the server at night.", "dos_and_donts", None)
    server = add(db, tenant, "The web servers sit behind the load balancer and restart in 30 seconds.", None, None)
    billing = add(
        db, tenant, "The server hosting invoice is paid monthly; restart billing runs on the 1st.", None, ["billing"]
    )
    dns = add(db, tenant, "DNS for acme.example is managed at the registrar.", None, None)
    rows = recall(db, tenant, SERVER_MSG)
    ids = [r[2] for r in rows]
    assert rule in ids and server in ids
    assert billing not in ids and dns not in ids
    assert [r[1] for r in rows] == ["dos_and_donts", "fresh"]


def test_off_topic_memory_needs_strong_similarity(db, tenant):
    query = unit_vector(100)
    similar = add(
        db,
        tenant,
        "Quarterly invoices are exported to the ERP.",
        "long_term",
        ["billing"],
        blend(query, unit_vector(101), 0.3),
    )
    unrelated = add(db, tenant, "Refunds need a second approval.", "long_term", ["billing"], unit_vector(102))
    rows = recall(db, tenant, SERVER_MSG, embedding=query)
    by_id = {r[2]: r for r in rows}
    assert similar in by_id and unrelated not in by_id
    assert by_id[similar][6].startswith("off-topic but similar enough on its own; vector #1 (0.9")


def test_never_cut_layers_survive_a_tiny_budget(db, tenant):
    db.execute("SELECT cogmem.add_bios_rule('server', 'Run a configuration test before any restart.')")
    db.execute("SELECT cogmem.add_bios_rule('billing', 'Invoices need two approvals.')")
    shock = add(db, tenant, "Outage: restarting db-1 at night took the shop down for 2 hours.", "shocks", ["server"])
    rule = add(db, tenant, "Never restart the database during business hours.", "dos_and_donts", ["database"])
    add(db, tenant, "The servers run Debian 12.", "long_term", ["server"])
    rows = recall(db, tenant, SERVER_MSG, budget=10)
    assert [(r[1], r[2]) for r in rows] == [("bios", None), ("shocks", shock), ("dos_and_donts", rule)]
    assert rows[0][3] == "Run a configuration test before any restart."
    # Only never-cut layers may exceed the budget, and each item says by how much it did.
    used = [sum(r[4] for r in rows[: n + 1]) for n in range(len(rows))]
    assert used[-1] > 10
    for row, total in zip(rows, used, strict=True):
        assert row[6].endswith(f"over the whole budget by {total - 10} tokens: the never-cut layers exceed it")
    assert db.execute(
        "SELECT detail -> 'over_budget', detail -> 'tokens_used' FROM cogmem.audit_log WHERE event = 'recalled'"
    ).fetchone() == (used[-1] - 10, used[-1])


def test_a_never_cut_item_within_the_budget_borrows_from_later_layers(db, tenant):
    rule = add(db, tenant, sized(500, "restart"), "dos_and_donts", ["server"])
    # Of a 1,000-token budget, dos_and_donts may use bios' 93, shocks' 93, its own 125 and the reserve 160.
    (row,) = recall(db, tenant, SERVER_MSG, budget=1000)
    assert row[2] == rule
    assert row[6].endswith("over the budget up to this layer by 29 tokens, taken from later layers")
    assert one(db, "SELECT detail -> 'over_budget' FROM cogmem.audit_log WHERE event = 'recalled'") is None


def test_budget_split_and_spill_over(db, tenant):
    for i in range(10):
        add(db, tenant, sized(100, f"server{i}"), "long_term", ["server"])
    for i in range(5):
        add(db, tenant, sized(100, f"server{i}x"), "fresh", ["server"])
    rows = recall(db, tenant, "server", budget=1000)
    # budget 1000 scales the 3,200-token split: long_term may use the reserve and every earlier layer's
    # unused allocation (752 tokens in all) -> 7 memories; fresh gets what habits and procedures left.
    assert [r[1] for r in rows].count("long_term") == 7
    assert [r[1] for r in rows].count("fresh") == 3
    assert sum(r[4] for r in rows) == 1000
    assert all(r[4] == 100 for r in rows)


def test_budget_is_never_exceeded_without_never_cut_layers(db, tenant):
    rng = random.Random(5)
    for i in range(40):
        ring = rng.choice(["long_term", "habits", "procedures", "fresh"])
        add(db, tenant, sized(rng.randint(5, 120), f"server{i}"), ring, ["server"])
    for budget in (1, 7, 50, 333, 800, 1500, 3200, 100000):
        rows = recall(db, tenant, "server restart", budget=budget)
        assert sum(r[4] for r in rows) <= budget
        ids = [r[2] for r in rows]
        assert len(ids) == len(set(ids))  # never twice in one cycle


def test_relevance_orders_a_layer(db, tenant):
    weak = add(db, tenant, "The servers are in Frankfurt.", "long_term", ["server"])
    strong = add(db, tenant, "Restart the servers one at a time in the maintenance window.", "long_term", ["server"])
    rows = recall(db, tenant, SERVER_MSG)
    assert [r[2] for r in rows] == [strong, weak]
    assert rows[0][5] > rows[1][5]
    assert rows[0][6].startswith("topic server; lexical #1")


def test_ebbinghaus_decay_lowers_old_fresh_memories(db, tenant):
    old = add(db, tenant, "Server web-1 restarts slowly.", "fresh", ["server"])
    new = add(db, tenant, "Server web-2 restarts slowly.", "fresh", ["server"])
    db.execute("UPDATE cogmem.memories SET created_at = now() - interval '14 days' WHERE memory_id = %s", (old,))
    rows = {r[2]: r for r in recall(db, tenant, "server restarts slowly")}
    assert rows[old][6].endswith("strength 0.25")  # two half-lives of 7 days
    assert rows[new][6].endswith("strength 1.00")
    assert rows[old][5] < rows[new][5]


def test_memories_faded_below_the_floor_are_not_injected(db, tenant):
    stale = add(db, tenant, "web-7 has the IP address 10.20.0.5.", "fresh", ["server"])
    current = add(db, tenant, "web-7 has the IP address 10.20.8.41.", "fresh", ["server"])
    rule = add(db, tenant, "Never change the IP of a server without a DNS update.", "dos_and_donts", ["server"])
    db.execute(
        "UPDATE cogmem.memories SET created_at = now() - interval '45 days' WHERE memory_id IN (%s, %s)", (stale, rule)
    )  # 45 days of a 7-day half-life: strength 0.01, below the default floor of 0.05
    assert [r[2] for r in recall(db, tenant, "What is the IP address of server web-7?")] == [rule, current]
    assert (
        one(db, "SELECT recall_count FROM cogmem.memory_overview WHERE memory_id = %s", (stale,)) == 0
    )  # not rehearsed
    db.execute("UPDATE cogmem.tenants SET recall_min_strength = 0 WHERE tenant = %s", (tenant,))
    assert {r[2] for r in recall(db, tenant, "What is the IP address of server web-7?")} == {rule, current, stale}


def test_deleting_a_recall_deletes_its_items(db, tenant):
    add(db, tenant, "Never restart the servers at night.", "dos_and_donts", ["server"])
    recall_id = recall(db, tenant, SERVER_MSG)[0][0]
    db.execute("DELETE FROM cogmem.recalls WHERE recall_id = %s", (recall_id,))
    assert one(db, "SELECT count(*) FROM cogmem.recall_items WHERE recall_id = %s", (recall_id,)) == 0


def test_protected_rings_do_not_decay(db, tenant):
    rule = add(db, tenant, "Never restart the servers at night.", "dos_and_donts", ["server"])
    db.execute("UPDATE cogmem.memories SET created_at = now() - interval '400 days' WHERE memory_id = %s", (rule,))
    (row,) = recall(db, tenant, SERVER_MSG)
    assert row[6].endswith("strength 1.00")


def test_bios_rules_by_topic_and_always_on(db, tenant):
    server = one(db, "SELECT cogmem.add_bios_rule('server', 'Run a configuration test before any restart.')")
    one(db, "SELECT cogmem.add_bios_rule('billing', 'Invoices need two approvals.')")
    always = one(db, "SELECT cogmem.add_bios_rule('security', 'Never paste secrets.', always_on => true)")
    retired = one(db, "SELECT cogmem.add_bios_rule('server', 'Reboot weekly.', 'may')")
    db.execute("SELECT cogmem.retire_bios_rule(%s, 'obsolete')", (retired,))
    rows = recall(db, tenant, SERVER_MSG)
    assert [(r[1], r[7]) for r in rows] == [("bios", server), ("bios", always)]
    assert rows[0][6] == "BIOS server rule for topic server; must; never cut"
    assert rows[1][6] == "always-on BIOS rule; must; never cut"


def test_recall_is_logged_and_rehearses_what_it_injected(db, tenant):
    injected = add(db, tenant, "Restart the servers one at a time.", "long_term", ["server"])
    ignored = add(db, tenant, "Invoices go out on the 1st.", "long_term", ["billing"])
    rows = recall(db, tenant, SERVER_MSG, conversation="ops-42")
    recall_id = rows[0][0]
    logged = db.execute(
        "SELECT layer::text, memory_id, tokens, score, reason FROM cogmem.recall_items WHERE recall_id = %s"
        " ORDER BY position",
        (recall_id,),
    ).fetchall()
    assert logged == [(r[1], r[2], r[4], r[5], r[6]) for r in rows]
    head = db.execute(
        "SELECT conversation, message_sha256, topics, tokens_used FROM cogmem.recalls WHERE recall_id = %s",
        (recall_id,),
    ).fetchone()
    assert head == ("ops-42", hashlib.sha256(SERVER_MSG.encode()).digest(), ["server"], rows[0][4])
    # The rehearsal is pending in the cycle row: readers add it, apply_rehearsals() moves it to memory_stats.
    counts = dict(db.execute("SELECT memory_id, recall_count FROM cogmem.memory_overview").fetchall())
    assert counts == {injected: 1, ignored: 0}
    assert dict(db.execute("SELECT memory_id, recall_count FROM cogmem.memory_stats").fetchall()) == {
        injected: 0,
        ignored: 0,
    }
    assert one(db, "SELECT cogmem.apply_rehearsals()") == 1
    assert dict(db.execute("SELECT memory_id, recall_count FROM cogmem.memory_stats").fetchall()) == counts
    assert one(db, "SELECT cogmem.apply_rehearsals()") == 0  # applied once
    assert dict(db.execute("SELECT memory_id, recall_count FROM cogmem.memory_overview").fetchall()) == counts


def test_feedback_credits_exactly_the_memories_of_that_recall(db, tenant):
    a = add(db, tenant, "Restart the servers one at a time.", "long_term", ["server"])
    b = add(db, tenant, "Invoices go out on the 1st.", "long_term", ["billing"])
    first = recall(db, tenant, SERVER_MSG)[0][0]
    second = recall(db, tenant, "When do invoices go out?")[0][0]
    assert one(db, "SELECT cogmem.feedback(%s, 1.0)", (first,)) == 1
    # Read through memory_overview, which adds the credit still pending in the cycle rows.
    stats = dict(
        (r[0], r[1:]) for r in db.execute("SELECT memory_id, outcome_count, success_score FROM cogmem.memory_overview")
    )
    assert stats == {a: (1, 1.0), b: (0, None)}
    # A second feedback for the same cycle replaces the first.
    assert one(db, "SELECT cogmem.feedback(%s, 0.25)", (first,)) == 1
    assert db.execute(
        "SELECT outcome_count, success_score FROM cogmem.memory_overview WHERE memory_id = %s", (a,)
    ).fetchone() == (1, 0.25)
    assert one(db, "SELECT cogmem.feedback(%s, 0.5)", (second,)) == 1
    assert db.execute(
        "SELECT outcome_count, success_score FROM cogmem.memory_overview WHERE memory_id = %s", (b,)
    ).fetchone() == (1, 0.5)
    db.execute("SELECT cogmem.apply_rehearsals()")
    assert db.execute(
        "SELECT outcome_count, success_score FROM cogmem.memory_stats WHERE memory_id = %s", (b,)
    ).fetchone() == (1, 0.5)
    assert one(db, "SELECT outcome FROM cogmem.recalls WHERE recall_id = %s", (first,)) == 0.25


def test_feedback_credits_only_what_the_answer_used(db, tenant):
    # A small tenant: every memory is injected in every cycle. Without `used`, the good fact and the
    # bad one would end with the same success score.
    good = add(db, tenant, "Restart the servers one at a time.", "long_term", ["server"])
    bad = add(db, tenant, "Restart all servers at once to save time.", "long_term", ["server"])
    for outcome, used in [(1.0, [good]), (0.0, [bad]), (1.0, [good]), (0.0, [bad])]:
        recall_id = recall(db, tenant, SERVER_MSG)[0][0]
        assert one(db, "SELECT cogmem.feedback(%s, %s, %s)", (recall_id, outcome, used)) == 1
    stats = dict(db.execute("SELECT memory_id, success_score FROM cogmem.memory_overview").fetchall())
    assert stats == {good: 1.0, bad: 0.0}
    assert db.execute(
        "SELECT detail -> 'used', detail -> 'memories_credited' FROM cogmem.audit_log"
        " WHERE event = 'feedback' ORDER BY audit_id LIMIT 1"
    ).fetchone() == ([good], 1)


def test_repeated_feedback_takes_back_exactly_what_it_gave(db, tenant):
    a = add(db, tenant, "Restart the servers one at a time.", "long_term", ["server"])
    b = add(db, tenant, "Drain a server before restarting it.", "long_term", ["server"])
    recall_id = recall(db, tenant, SERVER_MSG)[0][0]

    def stats():  # applied after each feedback: what a replaced one credited must be taken back exactly
        db.execute("SELECT cogmem.apply_rehearsals()")
        return dict(
            (r[0], r[1:]) for r in db.execute("SELECT memory_id, outcome_count, outcome_sum FROM cogmem.memory_stats")
        )

    assert one(db, "SELECT cogmem.feedback(%s, 1.0)", (recall_id,)) == 2
    assert stats() == {a: (1, 1.0), b: (1, 1.0)}
    assert one(db, "SELECT cogmem.feedback(%s, 0.5, used => %s)", (recall_id, [b, b])) == 1
    assert stats() == {a: (0, 0.0), b: (1, 0.5)}
    assert one(db, "SELECT cogmem.feedback(%s, 0.0, used => '{}')", (recall_id,)) == 0
    assert stats() == {a: (0, 0.0), b: (0, 0.0)}
    assert one(db, "SELECT cogmem.feedback(%s, 1.0)", (recall_id,)) == 2
    assert stats() == {a: (1, 1.0), b: (1, 1.0)}


def test_feedback_refuses_memories_the_recall_did_not_inject(db, tenant):
    a = add(db, tenant, "Restart the servers one at a time.", "long_term", ["server"])
    other = add(db, tenant, "Invoices go out on the 1st.", "long_term", ["billing"])
    recall_id = recall(db, tenant, SERVER_MSG)[0][0]
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        db.execute("SELECT cogmem.feedback(%s, 1.0, %s)", (recall_id, [a, other]))
    assert err.value.diag.message_primary == f"recall {recall_id} did not inject memories {{{other}}}"
    assert err.value.diag.message_hint.startswith("used names memory_ids from that recall")
    assert one(db, "SELECT outcome_count FROM cogmem.memory_overview WHERE memory_id = %s", (a,)) == 0


@pytest.mark.parametrize(
    ("recall_id", "outcome", "sqlstate", "message"),
    [
        ("00000000-0000-0000-0000-000000000000", 1.0, "P0002", "unknown recall 00000000-0000-0000-0000-000000000000"),
        (None, 1.0, "22004", "recall_id must not be NULL"),
        ("00000000-0000-0000-0000-000000000000", 1.5, "22023", "outcome must be between 0 and 1, got 1.5"),
        ("00000000-0000-0000-0000-000000000000", float("nan"), "22023", "outcome must be between 0 and 1, got NaN"),
        ("00000000-0000-0000-0000-000000000000", None, "22023", "outcome must be between 0 and 1, got NULL"),
    ],
)
def test_feedback_errors(db, recall_id, outcome, sqlstate, message):
    with pytest.raises(psycopg.Error) as err:
        db.execute("SELECT cogmem.feedback(%s::uuid, %s::real)", (recall_id, outcome))
    assert (err.value.sqlstate, err.value.diag.message_primary) == (sqlstate, message)
    assert err.value.diag.message_hint


@pytest.mark.parametrize(
    ("args", "sqlstate", "message"),
    [
        ({"budget": 0}, "22023", "budget must be between 1 and 1000000 tokens, got 0"),
        ({"budget": -5}, "22023", "budget must be between 1 and 1000000 tokens, got -5"),
        ({"budget": None}, "22023", "budget must be between 1 and 1000000 tokens, got NULL"),
        # Past 2^31 a driver sends bigint: a range error, not 42883 "function does not exist".
        ({"budget": 3_000_000_000}, "22023", "budget must be between 1 and 1000000 tokens, got 3000000000"),
        ({"budget": 2**63 - 1}, "22023", "budget must be between 1 and 1000000 tokens, got 9223372036854775807"),
        ({"embedding": "[1,2]"}, "22023", "embedding has 2 dimensions, expected 384"),
    ],
)
def test_recall_errors(db, tenant, args, sqlstate, message):
    with pytest.raises(psycopg.Error) as err:
        recall(db, tenant, SERVER_MSG, **args)
    assert (err.value.sqlstate, err.value.diag.message_primary) == (sqlstate, message)
    assert err.value.diag.message_hint
    assert one(db, "SELECT count(*) FROM cogmem.recalls") == 0


def test_a_budget_resolves_however_a_caller_writes_it(db, tenant):
    """budget is bigint: an int literal, the default, and parameters sent as smallint, integer or bigint
    reach the one function. (A bigint overload beside an integer one would make every call that leaves
    budget to its default ambiguous.)"""
    db.execute("SELECT cogmem.add_bios_rule('server', 'Run a config test before restart.', tenant => %s)", (tenant,))
    calls = [
        ("SELECT count(*) FROM cogmem.recall(%s, 'restart the server', budget => 3200)", ()),
        ("SELECT count(*) FROM cogmem.recall(%s, 'restart the server', NULL, NULL, 3200)", ()),
        ("SELECT count(*) FROM cogmem.recall(%s, 'restart the server')", ()),
        ("SELECT count(*) FROM cogmem.recall(%s, 'restart the server', budget => %s::smallint)", (3200,)),
        ("SELECT count(*) FROM cogmem.recall(%s, 'restart the server', budget => %s::integer)", (3200,)),
        ("SELECT count(*) FROM cogmem.recall(%s, 'restart the server', budget => %s::bigint)", (3200,)),
        ("SELECT count(*) FROM cogmem.recall(%s, 'restart the server', budget => %s)", (2**15,)),
    ]
    assert [one(db, sql, (tenant, *params)) for sql, params in calls] == [1] * len(calls)


def test_recall_needs_a_known_tenant_and_a_message(db, tenant):
    with pytest.raises(psycopg.errors.UndefinedObject):
        recall(db, "ghost", SERVER_MSG)
    with pytest.raises(psycopg.errors.NullValueNotAllowed) as err:
        recall(db, tenant, None)
    assert err.value.diag.message_primary == "message must not be NULL"


def test_an_on_topic_memory_outside_the_topic_shortlist_still_qualifies(db, tenant):
    # The topic ranking keeps the 100 newest on-topic memories; an older one found by relevance
    # is still on topic and must not be filtered out as off-topic.
    target = add(db, tenant, "Kernel livepatch is enabled on every server.", "fresh", ["server"])
    for i in range(105):
        add(db, tenant, f"Server web-{i} runs nginx.", "fresh", ["server"])
    rows = recall(db, tenant, "is livepatch enabled on the kernel", topics=["server"], budget=200)
    assert rows[0][2] == target
    assert rows[0][6].startswith("topic server; lexical #1")


@pytest.mark.parametrize(
    ("tokens", "cumulative", "never_cut", "budget", "used", "expected"),
    [
        # Everything fits.
        ([10, 20], [100, 100], [False, False], 100, 0, ([1, 2], [None, None], [None, None], 30)),
        # The second does not fit its layer's share; the third, smaller, still does (greedy, in order).
        ([50, 60, 40], [100, 100, 100], [False, False, False], 100, 0, ([1, 3], [None, None], [None, None], 90)),
        # Unused allocation flows on: the share up to a later layer is cumulative.
        ([30, 60], [40, 100], [False, False], 100, 0, ([1, 2], [None, None], [None, None], 90)),
        # Never cut: in whatever it costs, the overflow said against its layer and the whole budget.
        ([80, 50, 10], [60, 100, 100], [True, True, False], 100, 0, ([1, 2], [20, 30], [None, 30], 130)),
        # The core identity's tokens come first and count.
        ([50, 40], [100, 100], [False, False], 100, 30, ([1], [None], [None], 80)),
        # No candidates.
        ([], [], [], 100, 0, ([], [], [], 0)),
    ],
)
def test_the_budget_fill_is_a_pure_stage(db, tokens, cumulative, never_cut, budget, used, expected):
    row = db.execute(
        "SELECT picked, over, beyond, used FROM cogmem._fill_budget(%s::int[], %s::int[], %s::boolean[], %s, %s)",
        (tokens, cumulative, never_cut, budget, used),
    ).fetchone()
    assert row == expected


def test_recall_topics_have_the_tenants_limits(db, tenant):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        db.execute("SELECT * FROM cogmem.recall(%s, 'x', topics => %s)", (tenant, [f"t{n}" for n in range(40)]))
    assert err.value.diag.message_primary == f'40 topics, the limit for tenant "{tenant}" is 32'
    with pytest.raises(psycopg.errors.StringDataRightTruncation):
        db.execute("SELECT * FROM cogmem.recall(%s, 'x', topics => %s)", (tenant, ["y" * 500]))
    assert one(db, "SELECT count(*) FROM cogmem.recalls") == 0


# -- a conversation's shape ------------------------------------------------------------------------


def chat(db, tenant, turns, conversation="maya-jonas", day="2023-05-08 19:40+00"):
    """Remembers (speaker, text) turns of one conversation, said in order on one day; their memory ids."""
    ids = []
    for n, (speaker, text) in enumerate(turns):
        ids.append(
            one(
                db,
                "SELECT memory_id FROM cogmem.remember(%s, %s, 'fresh', '{}', conversation => %s, speaker => %s,"
                " said_at => %s::timestamptz + make_interval(secs => %s))",
                (tenant, text, conversation, speaker, day, n),
            )
        )
    return ids


FILLER = [
    ("Jonas", "The weather was grey all week, typical."),
    ("Maya", "I finally repainted the hallway a soft green."),
    ("Jonas", "My cousin started a pottery class on Tuesdays."),
    ("Maya", "Did you watch the cycling race on Sunday?"),
    ("Jonas", "No, I was stuck fixing the bike chain again."),
]


def test_a_turn_is_found_by_the_turn_it_answers(db, tenant):
    """'Yes, it was amazing' holds none of the question's words: its neighbour does, and brings it."""
    ids = chat(db, tenant, [*FILLER, ("Maya", "Did you make it to the jazz concert at the harbour?"),
                            ("Jonas", "Yes! Best night of the year, honestly."), *FILLER[:2]])  # fmt: skip
    answer = ids[len(FILLER) + 1]
    rows = recall(db, tenant, "How was the jazz concert at the harbour?", budget=60)
    reasons = {r[2]: r[6] for r in rows}
    assert answer in reasons and reasons[answer].startswith("next to a related turn")


def test_a_turn_is_shown_with_when_and_by_whom_it_was_said(db, tenant):
    (memory,) = chat(db, tenant, [("Caroline", "I went to a support group yesterday and it was so powerful.")])
    (row,) = recall(db, tenant, "support group")
    assert row[2] == memory
    assert row[3] == (
        "[2023-05-08; yesterday = 2023-05-07] Caroline: I went to a support group yesterday and it was so powerful."
    )
    assert row[4] == (len(row[3]) + 3) // 4  # it costs what it shows


def test_the_person_a_question_names_comes_first(db, tenant):
    chat(db, tenant, [("Maya", "I adopted a grey cat called Pixel."), ("Jonas", "I adopted a grey cat called Mochi.")])
    rows = recall(db, tenant, "What is the name of Jonas's cat?")
    assert rows[0][3].endswith("Jonas: I adopted a grey cat called Mochi.") and "boost 2.0" in rows[0][6]
    assert "boost" not in rows[1][6]


def test_a_long_turn_shows_the_part_that_matches(db, tenant):
    long_turn = (
        "Okay so the trip was chaos from the start. The train was late by an hour. Then the hotel lost our booking. "
        "We ended up in a tiny room above a bakery. The bakery made the best cardamom buns I have ever eaten. "
        "On the last day it rained nonstop. We mostly played cards. Honestly I would go back tomorrow."
    )
    (memory,) = chat(db, tenant, [("Maya", long_turn)])
    (row,) = recall(db, tenant, "Which buns did the bakery make?")
    assert row[2] == memory and "excerpt" in row[6]
    assert row[3] == (
        "[2023-05-08; tomorrow = 2023-05-09] Maya: … Then the hotel lost our booking. We ended up in a tiny room "
        "above a bakery. The bakery made the best cardamom buns I have ever eaten. On the last day it rained nonstop. …"
    )
    db.execute("SELECT cogmem.configure_tenant(%s, '{\"excerpt_above\": 0}')", (tenant,))
    (row,) = recall(db, tenant, "Which buns did the bakery make?")
    assert row[3].endswith("I would go back tomorrow.") and "excerpt" not in row[6]


def test_a_question_about_a_month_prefers_what_was_said_then(db, tenant):
    turn = ("Maya", "We planted tomatoes in the garden.")
    may = chat(db, tenant, [turn], conversation="c1", day="2023-05-10 10:00+00")
    june = chat(db, tenant, [(turn[0], turn[1] + " Again!")], conversation="c1", day="2023-06-10 10:00+00")
    assert recall(db, tenant, "What did we plant in the garden in June 2023?")[0][2] == june[0]
    assert recall(db, tenant, "What did we plant in the garden in May 2023?")[0][2] == may[0]


def test_a_turn_in_a_learned_ring_competes_with_the_other_turns(db, tenant):
    """A chat turn the router put in `procedures` does not go ahead of the evidence by its ring's priority:
    within a conversation, only relevance orders the turns."""
    ids = chat(db, tenant, [*FILLER, ("Maya", "Did you make it to the jazz concert at the harbour?")])
    stray = one(db, "SELECT memory_id FROM cogmem.remember(%s, %s, 'procedures', '{}', conversation => 'maya-jonas',"
                    " speaker => 'Jonas', said_at => '2023-05-09 10:00+00')",
                (tenant, "First you soak the beans overnight, then you boil them at the harbour cafe."))  # fmt: skip
    rows = recall(db, tenant, "How was the jazz concert at the harbour?")
    order = [r[2] for r in rows]
    assert order.index(ids[-1]) < order.index(stray)
    assert rows[order.index(stray)][1] == "procedures"  # its ring is still said


def test_recall_over_our_conversations_keeps_its_figures(dsn):
    """Two of our conversations between people (bench/corpus/conversations, English and Turkish), loaded
    and asked as bench/conversation.py does: the default path keeps its evidence recall, stays ahead of
    the RRF hybrid over the same turns by the issue's margin, and close to storing every turn in `fresh`
    (the target is 0.02 over a whole corpus; two conversations are noisier; the unconfirmed candidates a
    chat leaves, injected in every recall, take 0.004 more at 1,000 tokens)."""
    from bench.conversation import BUDGETS, load_ours, run

    chats = [c for c in load_ours() if c.id in ("en-hannah-zoe", "tr-selin-emre")]
    table = run(chats, dsn, ["RRF hybrid", "recall default", "recall all fresh"], BUDGETS)
    score = {(m, b): table.scores[(m, b, "all")].mean()[0] for m in table.methods() for b in BUDGETS}
    floors = {1000: 0.74, 3200: 0.87}  # what it reaches, less a margin
    for budget in BUDGETS:
        default = score[("recall default", budget)]
        assert default >= floors[budget], score
        assert default >= score[("RRF hybrid", budget)] + 0.05, score
        assert default >= score[("recall all fresh", budget)] - 0.035, score


def said(db, tenant, content, vector, said_at, **args):
    return one(
        db,
        f"SELECT memory_id FROM cogmem.remember(%(t)s, %(c)s, 'long_term', '{{office}}', %(v)s,"
        f" said_at => %(at)s{named(args)})",
        {"t": tenant, "c": content, "v": np.asarray(vector, dtype=np.float32), "at": said_at, **args},
    )


@pytest.mark.parametrize(("closeness", "placed"), [(0.45, True), (0.9, False)])
def test_of_two_memories_about_the_same_thing_the_newer_comes_first(db, tenant, closeness, placed):
    # Two facts close in meaning (a blend of 0.45 keeps a cosine of about 0.7) where nothing says one
    # replaced the other: both stay, and the one said later goes first although the older matches better.
    # Far apart in meaning (0.9: a cosine of about 0.1), on the same topic, relevance alone orders them.
    subject = unit_vector(61)
    old = said(db, tenant, "The office wifi password is tulip42.", subject, "2026-03-01")
    new = said(db, tenant, "Guests get the lobby network.", blend(subject, unit_vector(62), closeness), "2026-04-01")
    rows = recall(db, tenant, "What is the office wifi password?", embedding=subject, topics=["office"])
    assert {r[2] for r in rows} == {old, new}
    assert [r[2] for r in rows] == ([new, old] if placed else [old, new])
    assert rows[0][5] < rows[1][5] if placed else rows[0][5] > rows[1][5]  # the scores are kept as they were
    assert (f"said after #{old}, placed before it" in rows[0][6]) == placed


def test_turns_of_a_conversation_keep_their_order_by_relevance(db, tenant):
    subject = unit_vector(63)
    old = said(db, tenant, "The office wifi password is tulip42.", subject, "2026-03-01", conversation="c1")
    new = said(db, tenant, "Guests get the lobby network.", blend(subject, unit_vector(64), 0.45), "2026-03-02",
               conversation="c1")  # fmt: skip
    rows = recall(db, tenant, "What is the office wifi password?", embedding=subject)
    assert [r[2] for r in rows] == [old, new]


def test_a_failure_without_used_is_charged_to_the_best_match_only(db, tenant):
    # Charged to everything injected, one bad answer weakened every memory of a small tenant.
    best = add(db, tenant, "Restart the servers one at a time in the maintenance window.", "long_term", ["server"])
    other = add(db, tenant, "The servers are in Frankfurt.", "long_term", ["server"])
    recall_id, injected = None, set()
    for row in recall(db, tenant, SERVER_MSG):
        recall_id, injected = row[0], injected | {row[2]}
    assert injected == {best, other}
    assert one(db, "SELECT cogmem.feedback(%s, 0.0)", (recall_id,)) == 1
    stats = dict(db.execute("SELECT memory_id, outcome_count FROM cogmem.memory_overview").fetchall())
    assert stats == {best: 1, other: 0}
    # A success without used still credits all it injected.
    assert one(db, "SELECT cogmem.feedback(%s, 1.0)", (recall_id,)) == 2
