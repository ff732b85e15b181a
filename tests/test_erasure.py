"""sql/130-erasure.sql: the right to be forgotten, with a tombstone in an audit chain that still verifies."""

import re

import psycopg
import pytest

from tests.conftest import blend, one, unit_vector

PERSON = "Ayşe Yılmaz"


def remember(db, tenant, content, vector=None, source="{}"):
    return one(
        db,
        "SELECT memory_id FROM cogmem.remember(%s, %s, embedding => %s::vector, source => %s::jsonb)",
        (tenant, content, str(vector) if vector else None, source),
    )


def mentions_of_the_person(db) -> dict[str, int]:
    """How often each table of the schema holds the person's name, in any case."""
    tables = [
        r[0]
        for r in db.execute(
            "SELECT oid::regclass::text FROM pg_class"
            " WHERE relnamespace = 'cogmem'::regnamespace AND relkind IN ('r', 'p')"
        )
    ]
    return {
        rel: one(db, f"SELECT count(*) FROM {rel} AS t WHERE t::text ILIKE '%%yılmaz%%' OR t::text LIKE '%%Yılmaz%%'")
        for rel in tables
    }


def test_erase_subject_takes_everything_about_a_person(db, tenant):
    shipped = mentions_of_the_person(db)  # the routing model's words are the same in every install
    mentioned = remember(db, tenant, f"{PERSON} prefers invoices by e-mail")
    sourced = remember(db, tenant, "Prefers a call before maintenance", source='{"subject": "ayşe yılmaz"}')
    kept = remember(db, tenant, "The billing run starts on the first of the month")
    db.execute("SELECT cogmem.observe(%s, 'c9', 'user', %s)", (tenant, f"Hi, this is {PERSON} again"))
    db.execute("SELECT cogmem.vault_put(%s, 'iban', 'TR00 0000', subject => %s)", (tenant, PERSON))
    db.execute(
        "SELECT * FROM cogmem.remember(%s, %s, 'dos_and_donts', contradicts => %s)",
        (tenant, f"Always post {PERSON} paper invoices", [kept]),
    )
    db.execute("SELECT cogmem.trust_event(%s, 'praise', %s)", (tenant, f"{PERSON} said thanks"))
    db.execute(
        "SELECT * FROM cogmem.store_put(%s, '{contacts}', 'ayse', %s::jsonb)", (tenant, f'{{"name": "{PERSON}"}}')
    )
    db.execute("SELECT cogmem.set_core_identity(%s, 'the billing assistant', %s)", (tenant, f"{PERSON}, finance"))
    session = one(db, "SELECT cogmem.start_session(%s, 'billing', %s)", (tenant, f"call {PERSON} back"))
    db.execute("SELECT * FROM cogmem.end_session(%s, %s)", (session, f"Agreed the invoice dates with {PERSON}."))
    recall_id = one(db, "SELECT recall_id FROM cogmem.recall(%s, 'how does she want invoices') LIMIT 1", (tenant,))
    db.execute("SELECT cogmem.seal_audit()")

    erased = dict(
        db.execute("SELECT * FROM cogmem.erase_subject(%s, %s, 'KVKK request 2026/17')", (tenant, PERSON)).fetchall()
    )
    assert erased == {
        "memories": 2,
        "sensory_turns": 1,
        "vault_items": 1,
        "conflicts": 1,
        "episodes": 1,
        "core_identity": 1,
        "notes": 1,
        "store_items": 1,
        "resources": 0,
    }
    assert [r[0] for r in db.execute("SELECT memory_id FROM cogmem.memories")] == [kept]
    assert one(db, "SELECT count(*) FROM cogmem.memory_stats WHERE memory_id IN (%s, %s)", (mentioned, sourced)) == 0
    # Nothing of the person is left anywhere in the schema, the audit trail included.
    assert mentions_of_the_person(db) == shipped
    tombstones = db.execute(
        "SELECT memory_id, detail FROM cogmem.audit_writes WHERE event = 'erased' ORDER BY memory_id"
    ).fetchall()
    assert tombstones == [
        (mentioned, {"reason": "KVKK request 2026/17"}),
        (sourced, {"reason": "KVKK request 2026/17"}),
    ]
    request = one(db, "SELECT detail FROM cogmem.audit_governance WHERE event = 'erasure_requested'")
    assert len(request["subject_sha256"]) == 64 and request["erased"]["memories"] == 2
    # The history still explains the old recall, by id, and the chain still verifies.
    assert one(db, "SELECT count(*) FROM cogmem.explain_recall(%s)", (recall_id,)) >= 1
    db.execute("SELECT cogmem.seal_audit()")
    assert db.execute("SELECT ok FROM cogmem.verify_audit(%s)", (tenant,)).fetchall() == [(True,)]


def test_erase_subject_takes_a_conversation_id_that_names_them(db, tenant):
    db.execute("SELECT * FROM cogmem.recall(%s, 'invoices', conversation => %s)", (tenant, f"whatsapp {PERSON}"))
    db.execute("SELECT * FROM cogmem.recall(%s, 'invoices', conversation => 'ticket-7')", (tenant,))
    db.execute("SELECT * FROM cogmem.erase_subject(%s, %s)", (tenant, PERSON))
    kept = db.execute("SELECT conversation FROM cogmem.recalls ORDER BY conversation NULLS FIRST").fetchall()
    assert kept == [(None,), ("ticket-7",)]
    assert one(db, "SELECT count(*) FROM cogmem.audit_log WHERE detail::text ILIKE %s", (f"%{PERSON}%",)) == 0


def test_erase_one_memory_and_scrub_the_sibling_note_that_quotes_it(db, tenant):
    base = unit_vector(41)
    staging = remember(db, tenant, "Deploy the shop with make deploy on staging", base)
    production = remember(
        db, tenant, "Deploy the shop with make deploy on production", blend(base, unit_vector(42), 0.1)
    )
    db.execute(
        "UPDATE cogmem.memories SET created_at = now() - interval '2 hours', updated_at = now() - interval '2 hours'"
    )
    db.execute("SELECT * FROM cogmem.consolidate(now())")
    db.execute(
        "SELECT * FROM cogmem.recall(%s, 'deploy the shop on staging', embedding => %s::vector)", (tenant, str(base))
    )
    assert (
        one(db, "SELECT count(*) FROM cogmem.recall_items WHERE reason LIKE %s", (f"%#{production} for production%",))
        == 1
    )
    assert one(db, "SELECT cogmem.erase(%s, %s, 'wrong environment')", (tenant, production)) is True
    assert one(db, "SELECT cogmem.erase(%s, %s)", (tenant, production)) is False
    assert one(db, "SELECT count(*) FROM cogmem.recall_items WHERE reason LIKE '%%for production%%'") == 0
    assert one(db, "SELECT count(*) FROM cogmem.recall_items WHERE reason LIKE %s", (f"%#{production} (erased)%",)) == 1
    assert one(db, "SELECT count(*) FROM cogmem.memory_siblings") == 0
    assert [r[0] for r in db.execute("SELECT memory_id FROM cogmem.memories")] == [staging]


def test_erasing_several_memories_scrubs_each_from_a_reason_that_quotes_them_all(db, tenant):
    base = unit_vector(43)
    kept = remember(db, tenant, "Deploy the shop with make deploy on staging", base)
    gone = [
        remember(db, tenant, f"Deploy the shop with make deploy on {env}", blend(base, unit_vector(44 + i), 0.1))
        for i, env in enumerate(["production", "canary"])
    ]
    db.execute("UPDATE cogmem.memories SET created_at = now() - interval '2 hours', updated_at = created_at")
    db.execute("SELECT * FROM cogmem.consolidate(now())")
    recall_id = one(
        db, "SELECT recall_id FROM cogmem.recall(%s, 'deploy the shop', embedding => %s::vector)", (tenant, str(base))
    )
    before = db.execute(
        "SELECT position, memory_id, reason FROM cogmem.recall_items WHERE recall_id = %s ORDER BY position",
        (recall_id,),
    ).fetchall()
    note = next(reason for _pos, memory_id, reason in before if memory_id == kept)
    assert all(f"#{g} for " in note for g in gone), note
    assert one(db, "SELECT cogmem._erase_memories(%s, %s, 'both wrong')", (tenant, gone)) == 2
    after = db.execute(
        "SELECT position, memory_id, reason FROM cogmem.recall_items WHERE recall_id = %s ORDER BY position",
        (recall_id,),
    ).fetchall()
    scrubbed = next(reason for _pos, memory_id, reason in after if memory_id == kept)
    assert all(f"#{g} (erased)" in scrubbed and f"#{g} for " not in scrubbed for g in gone), scrubbed
    # Nothing else moved: same items in the same order, each reason with exactly the erased details gone.
    pattern = re.compile(r"#(" + "|".join(map(str, gone)) + r") for [^,;]*")
    assert after == [(p, m, pattern.sub(r"#\1 (erased)", r)) for p, m, r in before]


@pytest.mark.parametrize(
    "sql, params, sqlstate",
    [
        ("SELECT cogmem.erase(%s, NULL)", ("acme",), "22004"),
        ("SELECT cogmem.erase(%s, 1)", ("ghost",), "42704"),
        ("SELECT * FROM cogmem.erase_subject(%s, 'ab')", ("acme",), "22023"),
        ("SELECT * FROM cogmem.erase_subject(%s, NULL)", ("acme",), "22023"),
    ],
)
def test_bad_erasure_input(db, tenant, sql, params, sqlstate):
    remember(db, tenant, "Alice Abbott likes tea")
    with pytest.raises(psycopg.Error) as err:
        db.execute(sql, params)
    assert err.value.sqlstate == sqlstate
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 1


def test_like_wildcards_in_a_subject_match_literally(db, tenant):
    remember(db, tenant, "Discount code 50%_OFF applies to Bob")
    remember(db, tenant, "Discount code 50 percent off applies to Carol")
    assert dict(db.execute("SELECT * FROM cogmem.erase_subject(%s, '50%%_OFF')", (tenant,)).fetchall())["memories"] == 1
