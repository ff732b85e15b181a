"""sql/090-consolidation.sql: the nightly consolidation, simulated night by night."""

import json
from datetime import datetime, timedelta

import numpy as np
import psycopg
import pytest

from tests.conftest import blend, one, unit_vector
from tests.test_large_tenants import build, load

STALE = "staging server IP: 192.168.1.50"
RULE = "Don't restart the server at night"


def remember(db, tenant, content, ring=None, topics=None):
    return one(db, "SELECT memory_id FROM cogmem.remember(%s, %s, %s, %s)", (tenant, content, ring, topics))


def recall_with_outcome(db, tenant, message, topics, outcome, used=None):
    rows = db.execute(
        "SELECT recall_id, memory_id FROM cogmem.recall(%s, %s, topics => %s)", (tenant, message, topics)
    ).fetchall()
    db.execute("SELECT cogmem.feedback(%s, %s, %s)", (rows[0][0], outcome, used))
    return [r[1] for r in rows]


def night(db, start: datetime, n: int, tenant: str | None = None) -> dict[str, int]:
    rows = db.execute(
        "SELECT tenant, decision, memories FROM cogmem.consolidate(%s, %s)", (start + timedelta(days=n), tenant)
    ).fetchall()
    return {decision: count for _, decision, count in rows}


def memory(db, tenant, memory_id):
    return db.execute(
        "SELECT ring::text, round(confidence::numeric, 4)::float, reinforced FROM cogmem.memory_overview"
        " WHERE tenant = %s AND memory_id = %s",
        (tenant, memory_id),
    ).fetchone()


def test_180_nights_then_five_years(db, tenant):
    stale = remember(db, tenant, STALE)
    start = one(db, "SELECT created_at FROM cogmem.memories WHERE memory_id = %s", (stale,))
    rule = remember(db, tenant, RULE, ring="dos_and_donts")
    # In fresh by the caller's word: routed, it may be a candidate rule, whose promotion is its own (test_candidates).
    proven = remember(
        db, tenant, "Invoices for Acme are sent from billing@acme.example", topics=["billing"], ring="fresh"
    )
    failing = remember(
        db, tenant, "The VAT rate for card payments is 18 percent", topics=["payments"], ring="long_term"
    )
    assert one(db, "SELECT ring::text FROM cogmem.memories WHERE memory_id = %s", (stale,)) == "fresh"

    for _ in range(3):  # recalled three times, and it helped every time
        assert proven in recall_with_outcome(
            db, tenant, "who sends the invoices from billing@acme.example", ["billing"], 1.0, [proven]
        )
    for _ in range(2):  # recalled twice, and it was wrong both times
        assert failing in recall_with_outcome(db, tenant, "what VAT rate do card payments use", ["payments"], 0.0)
    stats = dict(db.execute("SELECT memory_id, success_score FROM cogmem.memory_overview").fetchall())
    assert (stats[proven], stats[failing], stats[stale]) == (1.0, 0.0, None)

    first = night(db, start, 1)
    assert first["promote"] == 1 and first["reinforce"] == 1 and first["weaken"] == 1
    assert memory(db, tenant, proven) == ("long_term", 1.0, True)
    assert memory(db, tenant, failing) == ("long_term", 0.25, False)
    # One audit row per decision, its memories as one array per field; the history zips them back.
    history = db.execute(
        "SELECT memory_id, event, detail FROM cogmem.memory_history WHERE level = 'lifecycle' ORDER BY event"
    ).fetchall()
    assert history == [
        (proven, "promoted", {"from": "fresh", "to": "long_term"}),
        (proven, "reinforced", {}),
        (failing, "weakened", {"confidence": 0.25}),
    ]
    assert night(db, start, 2)["weaken"] == 1
    assert memory(db, tenant, failing)[1] == 0.125  # again, night after night
    night(db, start, 3)
    assert memory(db, tenant, failing)[1] == 0.0625

    # The stale fact is never recalled: -0.1 per 30 days of disuse, deleted below 0.2, i.e. on night 120.
    confidence = {}
    for n in range(4, 181):
        decisions = night(db, start, n)
        row = memory(db, tenant, stale)
        confidence[n] = row[1] if row else None
        if n == 120:
            assert decisions["forget"] == 1
    assert (confidence[29], confidence[30], confidence[60], confidence[90], confidence[119]) == (
        0.5,
        0.4,
        0.3,
        0.2,
        0.2,
    )
    assert confidence[120] is None
    deleted = db.execute(
        "SELECT detail->>'reason', at FROM cogmem.memory_history WHERE memory_id = %s AND event = 'deleted'", (stale,)
    ).fetchone()
    assert deleted == ("forgotten", start + timedelta(days=120))
    assert STALE not in one(db, "SELECT string_agg(t::text, ' ') FROM cogmem.memory_history AS t")

    for n in range(187, 5 * 365 + 1, 7):  # weekly nights for five years
        night(db, start, n)
    assert memory(db, tenant, rule) == ("dos_and_donts", 0.5, False)
    rows = db.execute(
        "SELECT layer, memory_id FROM cogmem.recall(%s, 'Can we restart the server tonight?')", (tenant,)
    ).fetchall()
    assert ("dos_and_donts", rule) in rows
    assert memory(db, tenant, proven) == ("long_term", 1.0, True)  # reinforced: it no longer fades


def test_history_reads_decisions_logged_before_migration_0012(db, tenant):
    # Older rows list one object per memory (the audit is immutable: they stay so).
    db.execute(
        """INSERT INTO cogmem.audit_log (tenant, level, event, detail) VALUES (%s, 'lifecycle', 'deleted',
           '{"reason": "forgotten", "memories": [{"memory_id": 7, "ring": "fresh", "confidence": 0.1},
                                                 {"memory_id": 9, "ring": "habits", "confidence": 0}]}')""",
        (tenant,),
    )
    assert db.execute(
        "SELECT memory_id, detail FROM cogmem.memory_history WHERE event = 'deleted' ORDER BY memory_id"
    ).fetchall() == [
        (7, {"reason": "forgotten", "ring": "fresh", "confidence": 0.1}),
        (9, {"reason": "forgotten", "ring": "habits", "confidence": 0}),
    ]


def test_a_proven_preference_becomes_a_habit_or_a_candidate(db, tenant):
    start = one(db, "SELECT now()")
    habit = remember(db, tenant, "Ali prefers maintenance calls in the morning", topics=["meeting"])
    for _ in range(3):
        recall_with_outcome(db, tenant, "when does Ali like maintenance calls", ["meeting"], 1.0)
    night(db, start, 1)
    assert memory(db, tenant, habit)[0] == "habits"

    db.execute("SELECT cogmem.create_tenant('careful')")
    db.execute("UPDATE cogmem.tenants SET promote_automatically = false WHERE tenant = 'careful'")
    fact = remember(db, "careful", "Invoices are sent on the 1st", topics=["billing"])
    for _ in range(3):
        recall_with_outcome(db, "careful", "when are invoices sent", ["billing"], 1.0)
    assert night(db, start, 1, "careful")["promote"] == 1
    assert memory(db, "careful", fact)[0] == "fresh"
    assert one(db, "SELECT promotion_candidate FROM cogmem.memory_stats WHERE memory_id = %s", (fact,)) is True


def backfill(db, tenant, memory_id, vector):
    db.execute(
        "UPDATE cogmem.memories SET embedding = %s, updated_at = now() WHERE tenant = %s AND memory_id = %s",
        (np.asarray(vector, dtype=np.float32), tenant, memory_id),
    )


def test_near_duplicates_merge_with_summed_statistics(db, tenant):
    start = one(db, "SELECT now()")
    a = remember(db, tenant, "Nightly backups of db-1 run at 02:00", topics=["backup"])
    b = remember(db, tenant, "db-1 is backed up every night at 02:00", topics=["backup", "database"])
    recall_with_outcome(db, tenant, "when do the backups of db-1 run", ["backup"], 1.0)
    recall_with_outcome(db, tenant, "db-1 backup time", ["backup"], 0.5)
    db.execute("UPDATE cogmem.memory_stats SET confidence = 0.7 WHERE memory_id = %s", (b,))
    base = unit_vector(21)
    backfill(db, tenant, a, base)  # embeddings arrive later, e.g. from a backfill job
    backfill(db, tenant, b, blend(base, unit_vector(22), 0.12))  # cosine 0.99: a near-duplicate for either model
    db.execute("SELECT cogmem.apply_rehearsals()")  # the night would apply them first
    before = db.execute(
        "SELECT sum(recall_count), sum(outcome_count), sum(outcome_sum) FROM cogmem.memory_stats"
        " WHERE memory_id IN (%s, %s)",
        (a, b),
    ).fetchone()
    assert night(db, start, 1)["merge"] == 1
    kept = db.execute("SELECT memory_id, topics FROM cogmem.memories").fetchall()
    assert kept == [(b, ["backup", "database"])]  # the more confident one stays
    after = db.execute(
        "SELECT recall_count, outcome_count, outcome_sum FROM cogmem.memory_stats WHERE memory_id = %s", (b,)
    ).fetchone()
    assert after == before
    events = db.execute(
        "SELECT memory_id, event, detail->>'into' FROM cogmem.memory_history"
        " WHERE event IN ('merged', 'deleted') ORDER BY memory_id"
    ).fetchall()
    assert events == [(a, "deleted", str(b)), (b, "merged", None)]


def test_staging_and_production_stay_siblings(db, tenant):
    start = one(db, "SELECT now()")
    staging = remember(db, tenant, "Deploy the shop with make deploy on staging", topics=["deployment"])
    production = remember(db, tenant, "Deploy the shop with make deploy on production", topics=["deployment"])
    base = unit_vector(31)
    backfill(db, tenant, staging, base)
    backfill(db, tenant, production, blend(base, unit_vector(32), 0.1))
    assert night(db, start, 1)["sibling"] == 1
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 2
    assert db.execute("SELECT sibling_id, differs FROM cogmem.siblings(%s, %s)", (tenant, staging)).fetchall() == [
        (production, ["production"])
    ]
    rows = db.execute(
        "SELECT memory_id, reason FROM cogmem.recall(%s, 'how do I deploy the shop on staging')", (tenant,)
    ).fetchall()
    reasons = dict(rows)
    assert f"sibling #{production} for production" in reasons[staging]
    # The link goes with either memory (one statement-level trigger, no per-row cascade).
    db.execute("DELETE FROM cogmem.memories WHERE memory_id = %s", (production,))
    assert one(db, "SELECT count(*) FROM cogmem.memory_siblings") == 0


def test_statistics_learnings_and_links_go_with_their_memories_in_one_or_many_tenants(db, tenant):
    db.execute("SELECT cogmem.create_tenant('globex')")
    ids = {t: [remember(db, t, f"{t} note {i} about web-{i}") for i in range(3)] for t in (tenant, "globex")}
    for t, (a, b, _c) in ids.items():
        db.execute(
            "INSERT INTO cogmem.memory_siblings (tenant, memory_id, sibling_id, similarity) VALUES (%s, %s, %s, 0.9)",
            (t, a, b),
        )
        db.execute("INSERT INTO cogmem.learnings (tenant, memory_id, area) VALUES (%s, %s, 'deploy')", (t, b))

    def left(t):
        return (
            one(db, "SELECT count(*) FROM cogmem.memory_stats WHERE tenant = %s", (t,)),
            one(db, "SELECT count(*) FROM cogmem.memory_siblings WHERE tenant = %s", (t,)),
            one(db, "SELECT count(*) FROM cogmem.learnings WHERE tenant = %s", (t,)),
        )

    # One tenant's statement (a night, an erasure): the sibling side of a link is enough to drop it.
    db.execute("DELETE FROM cogmem.memories WHERE memory_id = %s", (ids[tenant][1],))
    assert left(tenant) == (2, 0, 0) and left("globex") == (3, 1, 1)
    # A statement across tenants (a tenant dropped with others, a DBA's cleanup): each tenant in turn.
    db.execute("DELETE FROM cogmem.memories WHERE memory_id = ANY (%s)", ([ids[tenant][0], ids["globex"][0]],))
    assert left(tenant) == (1, 0, 0) and left("globex") == (2, 0, 1)
    assert (
        one(
            db,
            "SELECT count(*) FROM cogmem.memory_stats AS s WHERE NOT EXISTS (SELECT FROM cogmem.memories AS m"
            " WHERE m.tenant = s.tenant AND m.memory_id = s.memory_id)",
        )
        == 0
    )
    db.execute("TRUNCATE cogmem.memories")
    assert left(tenant) == (0, 0, 0) and left("globex") == (0, 0, 0)


def test_rerunning_a_night_changes_nothing(db, tenant):
    start = one(db, "SELECT now()")
    remember(db, tenant, STALE)
    night(db, start, 45)
    snapshot = db.execute("SELECT * FROM cogmem.memories JOIN cogmem.memory_stats USING (tenant, memory_id)").fetchall()
    events = one(db, "SELECT count(*) FROM cogmem.memory_history")
    assert night(db, start, 45) == {}
    assert (
        db.execute("SELECT * FROM cogmem.memories JOIN cogmem.memory_stats USING (tenant, memory_id)").fetchall()
        == snapshot
    )
    assert one(db, "SELECT count(*) FROM cogmem.memory_history") == events
    assert one(db, "SELECT count(*) FROM cogmem.consolidation_runs WHERE status = 'finished'") == 2
    report = dict(db.execute("SELECT decision, memories FROM cogmem.consolidation_report").fetchall())
    assert report["fade"] == 1 and report["forget"] == 0


def test_a_crash_after_some_tenants_is_completed_by_the_next_run(db, tenant):
    start = one(db, "SELECT now()")
    db.execute("SELECT cogmem.create_tenant('beta')")
    remember(db, tenant, STALE)
    remember(db, "beta", STALE)
    as_of = start + timedelta(days=31)
    # The run died after committing acme's night: only that tenant's night is recorded.
    db.execute("SELECT * FROM cogmem._consolidate_tenant(%s, %s, NULL)", (tenant, as_of))
    rows = db.execute("SELECT tenant, decision, memories FROM cogmem.consolidate(%s)", (as_of,)).fetchall()
    assert {r[0] for r in rows} == {"beta"}
    assert db.execute(
        "SELECT tenant, round(confidence::numeric, 2)::float FROM cogmem.memory_stats ORDER BY 1"
    ).fetchall() == [("acme", 0.4), ("beta", 0.4)]


def test_nightly_procedure_commits_per_tenant_and_respects_the_lock(db, dsn, tenant):
    remember(db, tenant, STALE)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CALL cogmem.consolidate_nightly(now() + interval '31 days')")
    assert db.execute("SELECT status, tenants_done FROM cogmem.consolidation_runs").fetchall() == [("finished", 1)]
    assert one(db, "SELECT round(confidence::numeric, 2)::float FROM cogmem.memory_stats") == 0.4

    # A run whose session is alive makes a second run of its worker slot skip.
    notices: list[str] = []
    with psycopg.connect(dsn, autocommit=True) as holder, psycopg.connect(dsn, autocommit=True) as conn:
        db.execute(
            "INSERT INTO cogmem.consolidation_runs (as_of, worker, workers, pid, tenants_done)"
            " VALUES (now(), 1, 1, %s, 3)",
            (one(holder, "SELECT pg_backend_pid()"),),
        )
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute("CALL cogmem.consolidate_nightly(now() + interval '61 days')")
    assert notices == ["cogmem.consolidate_nightly skipped: another consolidation is running"]
    assert one(db, "SELECT count(*) FROM cogmem.consolidation_runs") == 2
    # Its session is gone now: the next run says it was interrupted, keeps how far it got, and runs.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CALL cogmem.consolidate_nightly(now() + interval '61 days')")
    assert db.execute("SELECT status, tenants_done FROM cogmem.consolidation_runs ORDER BY run_id").fetchall() == [
        ("finished", 1),
        ("interrupted", 3),
        ("finished", 1),
    ]


def test_no_login_without_a_grant_can_stall_a_tenant_or_the_night(db, dsn, tenant, login):
    """The day/night exclusion and the single-runner rule take no lock a stranger can hold: the advisory
    keys they used do nothing now, and the tenant's row cannot be locked without UPDATE on it."""
    remember(db, tenant, STALE)
    stranger = login(None)
    stranger.autocommit = False
    stranger.execute("SELECT pg_advisory_lock(hashtext('cogmem.tenant'), hashtext(%s))", (tenant,))
    stranger.execute("SELECT pg_advisory_lock(hashtext('cogmem.consolidate'))")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        stranger.execute("SELECT FROM cogmem.tenants FOR KEY SHARE")
    stranger.rollback()
    stranger.execute("SELECT pg_advisory_lock(hashtext('cogmem.tenant'), hashtext(%s))", (tenant,))
    stranger.execute("SELECT pg_advisory_lock(hashtext('cogmem.consolidate'))")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET lock_timeout = '2s'")
        conn.execute("SELECT * FROM cogmem.remember(%s, 'The stranger cannot hold this up.')", (tenant,))
        conn.execute("SELECT * FROM cogmem.recall(%s, 'stranger')", (tenant,)).fetchall()
        conn.execute("CALL cogmem.consolidate_nightly(now() + interval '31 days')")
    assert one(db, "SELECT status FROM cogmem.consolidation_runs") == "finished"
    stranger.rollback()


def test_a_busy_tenant_is_skipped_by_the_night_and_a_day_call_is_told_why(db, dsn, tenant):
    remember(db, tenant, STALE)
    with psycopg.connect(dsn) as night, psycopg.connect(dsn, autocommit=True) as day:
        night.execute("SELECT * FROM cogmem.consolidate(now() + interval '31 days')").fetchall()  # holds the row
        day.execute("SET cogmem.lock_wait = '200ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable) as err:
            day.execute("SELECT * FROM cogmem.recall(%s, 'anything')", (tenant,))
        assert err.value.diag.message_primary == f'tenant "{tenant}" is busy: its night held it for 200ms'
        night.rollback()
    with psycopg.connect(dsn) as day, psycopg.connect(dsn, autocommit=True) as night:
        day.execute("SELECT * FROM cogmem.recall(%s, 'anything')", (tenant,)).fetchall()  # a call in flight
        notices: list[str] = []
        night.add_notice_handler(lambda d: notices.append(d.message_primary))
        night.execute("SET cogmem.lock_wait = '200ms'")
        night.execute("CALL cogmem.consolidate_nightly(now() + interval '31 days')")
        assert notices == [f'cogmem: the night skipped tenant "{tenant}": its calls held it']
        day.rollback()
    assert one(db, "SELECT count(*) FROM cogmem.consolidation_nights") == 0
    assert one(db, "SELECT count(*) FROM cogmem.audit_log WHERE event = 'night_skipped'") == 1


def test_consolidate_input_errors(db, tenant):
    with pytest.raises(psycopg.errors.NullValueNotAllowed) as err:
        db.execute("SELECT * FROM cogmem.consolidate(NULL)")
    assert err.value.diag.message_hint == "Pass the moment to consolidate up to, e.g. now()."
    with pytest.raises(psycopg.errors.UndefinedObject):
        db.execute("SELECT * FROM cogmem.consolidate(now(), 'ghost')")


def test_nightly_workers_share_the_tenants(db, dsn):
    tenants = [f"w{n:02d}" for n in range(12)]
    for t in tenants:
        db.execute("SELECT cogmem.create_tenant(%s)", (t,))
        remember(db, t, STALE)
    with psycopg.connect(dsn, autocommit=True) as one_, psycopg.connect(dsn, autocommit=True) as two:
        one_.execute("CALL cogmem.consolidate_nightly(now() + interval '31 days', worker => 1, workers => 2)")
        two.execute("CALL cogmem.consolidate_nightly(now() + interval '31 days', worker => 2, workers => 2)")
    done = db.execute("SELECT worker, tenants_done, status FROM cogmem.consolidation_runs ORDER BY worker").fetchall()
    assert [(w, s) for w, _, s in done] == [(1, "finished"), (2, "finished")]
    assert sum(n for _, n, _ in done) == len(tenants) and all(n > 0 for _, n, _ in done)
    assert one(db, "SELECT count(DISTINCT tenant) FROM cogmem.consolidation_nights") == len(tenants)
    for bad in ["worker => 3, workers => 2", "worker => 0", "workers => 65, worker => 1", "workers => NULL"]:
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            db.execute(f"CALL cogmem.consolidate_nightly(now(), {bad})")


def test_never_cut_rings_beyond_their_allocation_are_listed_and_reported_by_the_night(db, tenant):
    start = datetime.now().astimezone()
    rules = [
        remember(db, tenant, f"Never touch the {word} cluster without a ticket; " + "ask first. " * 40, "dos_and_donts")
        for word in ("red", "green", "blue", "amber")
    ]
    remember(db, tenant, "Outage: db-1 filled its disk and the shop was down for two hours.", "shocks")
    tokens = one(db, "SELECT sum(token_estimate) FROM cogmem.memories WHERE ring = 'dos_and_donts'")
    assert tokens > 400
    assert db.execute("SELECT * FROM cogmem.never_cut_overflow").fetchall() == [
        (tenant, "dos_and_donts", len(rules), tokens, 400, tokens - 400)
    ]
    assert night(db, start, 1)["overflow"] == len(rules)
    assert one(
        db, "SELECT detail -> 'never_cut_overflow' FROM cogmem.audit_log WHERE event = 'night_consolidated'"
    ) == [{"layer": "dos_and_donts", "tokens": tokens, "allocation": 400}]
    assert one(
        db, "SELECT memories FROM cogmem.consolidation_report WHERE tenant = %s AND decision = 'overflow'", (tenant,)
    ) == len(rules)


def test_duplicates_and_siblings_on_the_test_split(db):
    # Each labelled pair of bench/corpus/duplicates.jsonl remembered, then a night (bench/inbound.py).
    from bench import inbound
    from bench.corpus import pairs

    decided = inbound.duplicates(db, pairs("duplicates", "test"))
    assert sum(t == p for t, p in decided) / len(decided) >= 0.55
    siblings = [p for t, p in decided if t == "sibling"]
    assert siblings.count("sibling") / len(siblings) >= 0.7
    # Nothing different is ever merged away: a distinct pair or a sibling pair is never a duplicate.
    assert not [t for t, p in decided if p == "duplicate" and t != "duplicate"]


def test_a_large_tenants_night_finds_its_pairs_through_its_own_index(db, tenant):
    # A day's memories against a tenant of hundreds, searched through the tenant's own HNSW index
    # (sql/016-large-tenants.sql), where a pass over the tenant for each grew with the square of it.
    start = one(db, "SELECT now()")
    load(db, tenant, 300)
    build(db, tenant)
    base, other = unit_vector(41), unit_vector(43)
    texts, vectors = zip(
        ("Nightly backups of db-1 run at 02:00", base),
        ("db-1 is backed up every night at 02:00", blend(base, unit_vector(42), 0.12)),
        ("Deploy the shop with make deploy on staging", other),
        ("Deploy the shop with make deploy on production", blend(other, unit_vector(44), 0.1)),
        strict=True,
    )
    db.execute(
        "SELECT count(*) FROM cogmem.remember_many(%s, %s, %s, skip => '{near_duplicates,conflicts}')",
        (
            tenant,
            json.dumps([{"content": t, "ring": "long_term"} for t in texts]),
            [np.asarray(v, dtype=np.float32) for v in vectors],
        ),
    )
    index = one(db, "SELECT cogmem._tenant_index_name(%s, 'vectors')", (tenant,))
    scans = "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = %s"
    before = one(db, scans, (index,))
    decided = night(db, start, 1)
    assert (decided["merge"], decided["sibling"]) == (1, 1)
    db.execute("SELECT pg_stat_force_next_flush()")
    assert one(db, scans, (index,)) > before


def test_a_night_merges_among_its_newest_memories_only(db, tenant):
    # The first night after a bulk load would otherwise hold the tenant while it searched every memory.
    older, newer = unit_vector(45), unit_vector(46)
    ids = [
        remember(db, tenant, text)
        for text in ["Backups of db-1 run at 02:00", "db-1 is backed up at 02:00"]
        + [f"Server web-{n} is in rack {n}" for n in range(8)]
        + ["Backups of db-2 run at 03:00", "db-2 is backed up at 03:00"]
    ]
    for memory_id, vector in [(ids[0], older), (ids[1], blend(older, unit_vector(47), 0.1)),
                              (ids[-2], newer), (ids[-1], blend(newer, unit_vector(48), 0.1))]:  # fmt: skip
        backfill(db, tenant, memory_id, vector)
    counts = one(
        db,
        "SELECT cogmem._night_merge(t, now() + interval '1 day', now() - interval '1 day', 5)"
        " FROM cogmem.tenants AS t WHERE t.tenant = %s",
        (tenant,),
    )
    assert counts == {"merge": 1, "merge_skipped": 7}
    remaining = {r[0] for r in db.execute("SELECT memory_id FROM cogmem.memories WHERE tenant = %s", (tenant,))}
    assert {ids[0], ids[1]} <= remaining and len({ids[-2], ids[-1]} & remaining) == 1


def test_a_scheduled_night_merges_in_steps_to_the_same_end(db, dsn, tenant):
    # Each step is a transaction of its own: a large tenant's calls wait for one step, not for its night.
    texts = [f"Backups of db-{n} run at 0{n}:00" for n in range(4)] + [
        f"db-{n} is backed up at 0{n}:00" for n in range(4)
    ]
    texts += [f"Server web-{n} is in rack {n}" for n in range(6)]
    db.execute("SELECT cogmem.create_tenant('beta')")
    start = one(db, "SELECT now()")
    for t in (tenant, "beta"):
        ids = [remember(db, t, text) for text in texts]
        for n in range(4):  # each backup with its near-duplicate
            backfill(db, t, ids[n], unit_vector(60 + n))
            backfill(db, t, ids[4 + n], blend(unit_vector(60 + n), unit_vector(70 + n), 0.1))
    in_one = night(db, start, 1, tenant)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET cogmem.night_step = 3")
        conn.execute("CALL cogmem.consolidate_nightly(%s, 'beta')", (start + timedelta(days=1),))
    in_steps = dict(db.execute("SELECT decision, memories FROM cogmem.consolidation_decisions WHERE tenant = 'beta'"))
    assert in_one["merge"] == 4 and in_steps == {k: v for k, v in in_one.items()}
    kept = "SELECT array_agg(content ORDER BY content) FROM cogmem.memories WHERE tenant = %s"
    assert one(db, kept, (tenant,)) == one(db, kept, ("beta",))
    merged_in = "SELECT count(DISTINCT xmin::text) FROM cogmem.audit_log WHERE tenant = %s AND event = 'merged'"
    assert one(db, merged_in, (tenant,)) == 1 and one(db, merged_in, ("beta",)) > 1
    for bad in ["0", "20001", "many", "-1"]:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
            db.execute(f"SET cogmem.night_step = '{bad}'")
            db.execute("CALL cogmem.consolidate_nightly(now(), 'beta')")
        assert err.value.diag.message_hint == "SET cogmem.night_step = 100 (the default), or RESET cogmem.night_step."
        db.rollback()
