"""migrations/ + cogmem_pg.migrate: upgrading an older install gives the same catalog as a fresh one."""

import uuid

import psycopg
import pytest

from cogmem_pg.migrate import current_revision, downgrade, head_revision, install
from cogmem_pg.schema import dump


def catalog(dsn: str) -> str:
    """The schema of cogmem as pg_dump prints it, without its volatile header lines."""
    return dump(dsn)


def test_upgrade_from_the_first_revision_equals_a_fresh_install(fresh_database):
    upgraded = fresh_database()
    assert install(upgraded, "0001", apply_sql=False) == "0001"
    with psycopg.connect(upgraded, autocommit=True) as conn:  # data written by the older release
        conn.execute("INSERT INTO cogmem.tenants (tenant) VALUES ('acme')")
    assert install(upgraded) == head_revision()

    fresh = fresh_database()
    install(fresh)
    assert catalog(upgraded) == catalog(fresh)
    assert current_revision(upgraded) == current_revision(fresh) == head_revision()


def test_downgrade_then_upgrade_over_live_functions_equals_a_fresh_install(fresh_database):
    cycled = fresh_database()
    install(cycled)
    downgrade(cycled, "0001")
    assert current_revision(cycled) == "0001"
    install(cycled)
    fresh = fresh_database()
    install(fresh)
    assert catalog(cycled) == catalog(fresh)


def test_install_is_idempotent(fresh_database):
    dsn = fresh_database()
    install(dsn)
    before = catalog(dsn)
    install(dsn)
    assert catalog(dsn) == before


def test_not_installed_has_no_revision(fresh_database):
    assert current_revision(fresh_database()) is None


def test_pgvector_in_another_schema_is_refused_clearly(fresh_database):
    from cogmem_pg.migrate import InstallError

    dsn = fresh_database()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA extensions")
        conn.execute("CREATE EXTENSION vector WITH SCHEMA extensions")
    with pytest.raises(InstallError, match="pgvector is installed in schema 'extensions'"):
        install(dsn)
    assert current_revision(dsn) is None


def test_recall_items_move_into_their_recall_row_and_back(fresh_database):
    """Migration 0011 folds recall_items rows into arrays of the recall row, in position order."""
    dsn = fresh_database()
    install(dsn, "0010", apply_sql=False)
    recall_id = str(uuid.uuid4())
    items = [  # stored out of order: the arrays must follow position
        (2, "fresh", 7, None, 0.25, 9, "topic server"),
        (1, "bios", None, 3, 1.0, 12, "always-on BIOS rule"),
    ]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO cogmem.tenants (tenant) VALUES ('acme')")
        conn.execute(
            """INSERT INTO cogmem.recalls (tenant, recall_id, message_sha256, topics, budget, tokens_used)
               VALUES ('acme', %s, '\\x00', '{server}', 3200, 21)""",
            (recall_id,),
        )
        conn.cursor().executemany(
            """INSERT INTO cogmem.recall_items (tenant, recall_id, position, layer, memory_id, rule_id, score, tokens,
                                                reason) VALUES ('acme', %s, %s, %s, %s, %s, %s, %s, %s)""",
            [(recall_id, *item) for item in items],
        )
    install(dsn)
    read_back = "SELECT position, layer::text, memory_id, rule_id, score, tokens, reason FROM cogmem.recall_items"
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute(
            "SELECT item_layers::text[], item_memory_ids, item_rule_ids FROM cogmem.recalls"
        ).fetchone() == (["bios", "fresh"], [None, 7], [3, None])
        assert conn.execute(read_back + " ORDER BY position").fetchall() == sorted(items)
        with pytest.raises(psycopg.errors.CheckViolation):  # the arrays stay aligned
            conn.execute("UPDATE cogmem.recalls SET item_scores = '{1}'")
    downgrade(dsn, "0010")
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute(read_back + " ORDER BY position").fetchall() == sorted(items)
        conn.execute("DELETE FROM cogmem.recalls")  # the cascade trigger is back
        assert conn.execute("SELECT count(*) FROM cogmem.recall_items").fetchone() == (0,)


def test_vectors_that_cannot_be_compared_are_dropped_and_kept_out(fresh_database):
    """Migration 0016: a zero vector stored before keeps its memory (found by full text) but loses the
    vector, so the night merges nothing with it; the CHECK keeps such vectors out from then on."""
    dsn = fresh_database()
    install(dsn, "0015", apply_sql=False)
    zero = "[" + ",".join(["0"] * 384) + "]"
    near = "[" + ",".join(["1"] + ["0"] * 383) + "]"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO cogmem.tenants (tenant) VALUES ('acme')")
        for n, vector in enumerate([zero, near, near], 1):
            conn.execute(
                "INSERT INTO cogmem.memories (tenant, memory_id, ring, content, topics, language, embedding)"
                " OVERRIDING SYSTEM VALUE VALUES ('acme', %s, 'long_term', %s, '{}', 'english', %s::vector)",
                (n, f"an unrelated fact {'x' * n}", vector),
            )
            conn.execute("INSERT INTO cogmem.memory_stats (tenant, memory_id) VALUES ('acme', %s)", (n,))
    install(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT memory_id, embedding IS NULL FROM cogmem.memories ORDER BY 1").fetchall() == [
            (1, True),
            (2, False),
            (3, False),
        ]
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE cogmem.memories SET embedding = %s::vector WHERE memory_id = 2", (zero,))
        conn.execute("SELECT * FROM cogmem.consolidate(now() + interval '1 hour')")
        # The two identical vectors merge; the memory that had the zero vector is untouched.
        assert [r[0] for r in conn.execute("SELECT memory_id FROM cogmem.memories ORDER BY 1")] == [1, 2]


def test_recalls_logged_before_the_rehearsal_log_are_not_applied_again(fresh_database):
    """Migration 0020: a cycle logged before it was rehearsed and credited at once, so it is not pending;
    a feedback replaced after the upgrade takes back exactly the credit given before it. Downgrading
    applies what is pending first, as the older schema expects."""
    dsn = fresh_database()
    install(dsn, "0019", apply_sql=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO cogmem.tenants (tenant) VALUES ('acme')")
        conn.execute(
            "INSERT INTO cogmem.memories (tenant, memory_id, ring, content, topics, language, fingerprint)"
            " OVERRIDING SYSTEM VALUE VALUES ('acme', 1, 'long_term', 'Restart one server at a time', '{server}',"
            " 'english', 'restart one server at a time')"
        )
        conn.execute(
            "INSERT INTO cogmem.memory_stats (tenant, memory_id, recall_count, outcome_count, outcome_sum)"
            " VALUES ('acme', 1, 1, 1, 0.5)"
        )
        recall_id = conn.execute(
            """INSERT INTO cogmem.recalls (tenant, message_sha256, topics, budget, tokens_used, outcome, item_layers,
                                           item_memory_ids, item_rule_ids, item_scores, item_tokens, item_reasons)
               VALUES ('acme', '\\x00', '{server}', 3200, 7, 0.5, '{long_term}', '{1}', '{NULL}', '{1}', '{7}',
                       '{topic server}') RETURNING recall_id"""
        ).fetchone()[0]
    install(dsn)
    stats = "SELECT recall_count, outcome_count, outcome_sum FROM cogmem.memory_stats WHERE memory_id = 1"
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT cogmem.apply_rehearsals()").fetchone() == (0,)
        assert conn.execute(stats).fetchone() == (1, 1, 0.5)
        conn.execute("SELECT cogmem.feedback(%s, 1.0)", (recall_id,))
        assert conn.execute("SELECT cogmem.apply_rehearsals()").fetchone() == (1,)
        assert conn.execute(stats).fetchone() == (1, 1, 1.0)
        conn.execute("SET cogmem.embed = off")
        conn.execute("SELECT cogmem.create_tenant('template')")  # its recall layers, for the raw tenant
        conn.execute(
            "INSERT INTO cogmem.tenant_layers SELECT (jsonb_populate_record(NULL::cogmem.tenant_layers,"
            " to_jsonb(l) || '{\"tenant\": \"acme\"}')).* FROM cogmem.tenant_layers AS l WHERE l.tenant = 'template'"
        )
        rows = conn.execute("SELECT memory_id FROM cogmem.recall('acme', 'restart the servers')").fetchall()
        assert rows == [(1,)]
        assert conn.execute("SELECT count(*) FROM cogmem.recalls WHERE pending").fetchone() == (1,)
    downgrade(dsn, "0019")
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute(stats).fetchone() == (2, 1, 1.0)


def test_an_upgrade_retires_the_rules_longer_than_a_rule_may_be(fresh_database):
    """A rule added before 0027 longer than 1200 characters, in English or a translation, was injected
    whole into every recall it applied to: the upgrade retires it, saying why; the others stay in force."""
    from psycopg.types.json import Jsonb

    dsn = fresh_database()
    install(dsn, "0024", apply_sql=False)  # the tables of the release before
    with psycopg.connect(dsn, autocommit=True) as conn:
        for rule, translations in (("Short.", {}), ("x" * 200_000, {}), ("Short too.", {"turkish": "y" * 1201})):
            conn.execute(
                "INSERT INTO cogmem.bios_rules (category, rule, translations) VALUES ('server', %s, %s)",
                (rule, Jsonb(translations)),
            )
    install(dsn)
    with psycopg.connect(dsn) as conn:
        active = conn.execute("SELECT rule FROM cogmem.active_bios_rules").fetchall()
        reasons = conn.execute("SELECT DISTINCT reason FROM cogmem.bios_rule_events").fetchall()
    assert active == [("Short.",)]
    assert reasons == [("longer than a BIOS rule may be: 1200 characters in any language (revision 0027)",)]
