"""sql/069-resources.sql: documents beside the rings, chunked by structure, versioned, recalled by section."""

from __future__ import annotations

import json
import re

import psycopg
import pytest

from tests.conftest import one

RUNBOOK = """# Database failover runbook

Owner: the database team. Read it before touching the primary.

## Detecting a failed primary

The alert PrimaryDown fires after 30 seconds without a heartbeat.
Check the replication dashboard before anything else.

## Manual failover

### When it is allowed

Only during a maintenance window, or when the primary is down for more than five minutes.

### Steps

1. Page the on-call DBA and wait for an acknowledgement.
2. Freeze writes with `app-ctl freeze`.
3. Promote the replica with `patronictl failover --candidate db-b`.
4. Unfreeze writes once the new primary accepts them.

```
# never run this by hand
pg_ctl promote -D /var/lib/postgresql/15/main

# it bypasses the leader lock
```

## Contacts

The escalation contact is Mert Çelik, reachable on the db-primary rotation.
"""

POLITIKA = """# Masraf politikası

## Taksi ve ulaşım

Gece 22:00'den sonra biten toplantılarda taksi masrafı şirket tarafından karşılanır.

## Yemek

Müşteri yemeklerinde kişi başı üst sınır 1.500 TL'dir ve fatura zorunludur.
"""


def chunks(db, body: str, tokens: int = 160) -> list[tuple[int, str, str]]:
    return db.execute("SELECT * FROM cogmem.chunk_text(%s, %s)", (body, tokens)).fetchall()


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def test_a_document_is_cut_by_its_headings_and_nothing_is_lost(db):
    got = chunks(db, RUNBOOK)
    assert [h for _, h, _ in got] == [
        "", "Detecting a failed primary", "Manual failover > When it is allowed", "Manual failover > Steps",
        "Contacts",
    ]  # fmt: skip
    steps = got[3][2]
    assert steps.startswith("1. Page the on-call DBA") and "pg_ctl promote" in steps and "leader lock" in steps
    # Every line but the headings, in order: nothing dropped.
    joined = "\n".join(c for _, _, c in got)
    position = 0
    for line in RUNBOOK.splitlines():
        if line.strip() and not line.startswith("#") and not line.startswith("```"):
            position = joined.index(line.strip(), position)


def test_a_long_section_is_cut_between_list_items_sentences_and_words(db):
    items = "\n".join(f"- Item {n} says something about restoring backup number {n} carefully." for n in range(40))
    prose = " ".join(f"Sentence {n} explains the retention rule for archive {n}." for n in range(60))
    body = f"# Guide\n\n## Backups\n\n{items}\n\n{prose}\n\n{'x' * 2000}"
    got = chunks(db, body, 64)
    assert all(len(c) <= 64 * 4 for _, _, c in got)
    assert {h for _, h, _ in got} == {"Backups"}
    assert sum(1 for _, _, c in got if c.startswith("- Item")) >= 3  # lists cut between items
    assert all(c.count("- Item") == len(re.findall(r"(?:^|\n)- Item", c)) for _, _, c in got)
    # A word longer than a chunk is cut, not dropped.
    assert sum(map(len, re.findall("x{10,}", "".join(c for _, _, c in got)))) == 2000
    assert " ".join(c for _, _, c in got).count("Sentence ") == 60


def test_several_level_one_headings_are_part_of_the_path(db):
    got = chunks(db, "# Part A\n\ntext a\n\n## Detail\n\ntext b\n\n# Part B\n\ntext c")
    assert [(h, c) for _, h, c in got] == [("Part A", "text a"), ("Part A > Detail", "text b"), ("Part B", "text c")]


def test_add_resource_stores_a_version_and_the_same_text_again_changes_nothing(db, tenant):
    first = db.execute("SELECT * FROM cogmem.add_resource(%s, 'Database failover runbook', %s, 'runbook')",
                       (tenant, RUNBOOK)).fetchone()  # fmt: skip
    again = db.execute("SELECT * FROM cogmem.add_resource(%s, 'database failover RUNBOOK', %s, 'runbook')",
                       (tenant, RUNBOOK + "\n")).fetchone()  # fmt: skip
    assert first[1:3] == (1, "created") and first[3] == 5
    assert again == (first[0], 1, "unchanged", 5, [])
    rows = db.execute(
        "SELECT position, heading, current FROM cogmem.resource_chunks WHERE tenant = %s ORDER BY position", (tenant,)
    ).fetchall()
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5] and all(r[2] for r in rows)
    detail = one(db, "SELECT detail FROM cogmem.audit_log WHERE event = 'resource_added'")
    assert detail["chunks"] == 5 and detail["version"] == 1 and "Database" not in str(detail)


def test_a_new_version_replaces_the_old_in_recall_and_the_old_stays_for_the_audit(db, tenant):
    db.execute("SELECT cogmem.add_resource(%s, 'Failover', %s)", (tenant, RUNBOOK))
    newer = RUNBOOK.replace("Mert Çelik", "Ayşe Demir")
    new = db.execute("SELECT * FROM cogmem.add_resource(%s, 'Failover', %s)", (tenant, newer)).fetchone()
    assert new[1:3] == (2, "new_version")
    versions = db.execute(
        "SELECT version, superseded_by IS NOT NULL, superseded_at IS NOT NULL FROM cogmem.resources ORDER BY version"
    ).fetchall()
    assert versions == [(1, True, True), (2, False, False)]
    recalled = " ".join(
        r[0] for r in db.execute("SELECT content FROM cogmem.recall(%s, 'Who is the escalation contact?')", (tenant,))
    )
    assert "Ayşe Demir" in recalled and "Mert Çelik" not in recalled
    assert one(db, "SELECT count(*) FROM cogmem.resource_chunks WHERE content LIKE '%%Mert%%' AND NOT current") == 1
    assert one(db, "SELECT cogmem.retire_resource(%s, 'failover')", (tenant,)) is True
    assert one(db, "SELECT count(*) FROM cogmem.recall(%s, 'escalation contact') WHERE layer = 'resources'",
               (tenant,)) == 0  # fmt: skip
    assert one(db, "SELECT cogmem.retire_resource(%s, 'failover')", (tenant,)) is False


def test_recall_cites_the_section_that_answers_within_the_layers_allocation(db, tenant):
    assert one(db, "SELECT count(*) FROM cogmem.tenant_layers WHERE tenant = %s AND layer::text = 'resources'",
               (tenant,)) == 0  # fmt: skip
    db.execute("SELECT cogmem.add_resource(%s, 'Database failover runbook', %s, 'runbook')", (tenant, RUNBOOK))
    db.execute("SELECT cogmem.add_resource(%s, 'Masraf politikası', %s, 'policy')", (tenant, POLITIKA))
    rows = db.execute(
        "SELECT layer, content, tokens, reason, rule_id FROM cogmem.recall(%s, 'Which command promotes the replica?',"
        " budget => 400)",
        (tenant,),
    ).fetchall()
    resources = [r for r in rows if r[0] == "resources"]
    assert resources[0][1].startswith("[Database failover runbook § Manual failover > Steps] 1. Page the on-call")
    # The reason (kept by the audit) names the resource and chunk, not the title: the content cites it.
    assert re.match(r"resource \d+ chunk \d+; lexical #1", resources[0][3])
    assert "Database" not in str(one(db, "SELECT detail FROM cogmem.audit_log WHERE event = 'recalled'"))
    assert sum(r[2] for r in resources) <= 400 * 400 // 3200 + 400 * 500 // 3200  # its share and the reserve
    assert (
        one(db, "SELECT rule_ids[1] FROM (SELECT item_rule_ids AS rule_ids FROM cogmem.recalls) AS r")
        == resources[0][4]
    )
    taksi = db.execute(
        "SELECT content FROM cogmem.recall(%s, %s) WHERE layer = 'resources'",
        (tenant, "Toplantı geç biterse taksi parası ödeniyor mu?"),
    ).fetchall()
    assert taksi[0][0].startswith("[Masraf politikası § Taksi ve ulaşım]")


def test_a_resource_of_a_person_is_recalled_for_them_only(db, tenant):
    db.execute("SELECT cogmem.add_resource(%s, 'Contract', '## Terms\n\nAyla pays quarterly.', person => 'ayla')",
               (tenant,))  # fmt: skip
    db.execute(
        "SELECT cogmem.add_resource(%s, 'Contract', '## Terms\n\nBen pays monthly.', person => 'ben')", (tenant,)
    )
    for person, own in (("ayla", "quarterly"), ("ben", "monthly")):
        rows = db.execute(
            "SELECT content FROM cogmem.recall(%s, %s, person => %s) WHERE layer = 'resources'",
            (tenant, "When does the customer pay?", person),
        ).fetchall()
        got = " ".join(r[0] for r in rows)
        assert own in got and ({"quarterly", "monthly"} - {own}).pop() not in got
    assert one(db, "SELECT count(*) FROM cogmem.resources WHERE tenant = %s AND superseded_at IS NULL", (tenant,)) == 2
    counts = dict(db.execute("SELECT * FROM cogmem.erase_person(%s, 'ayla')", (tenant,)).fetchall())
    assert counts["resources"] == 1
    assert one(db, "SELECT count(*) FROM cogmem.resource_chunks WHERE content LIKE '%%quarterly%%'") == 0


def test_a_secret_in_a_document_is_never_stored_and_a_subjects_erasure_takes_its_documents(db, tenant):
    body = (
        "## Access\n\nThe admin password is password: hunter2hunter2 and the card is 4111 1111 1111 1111."
        "\n\nAsk Zeynep Kaya."
    )
    row = db.execute("SELECT * FROM cogmem.add_resource(%s, 'Access notes', %s)", (tenant, body)).fetchone()
    assert row[4] and "hunter2" not in one(db, "SELECT body FROM cogmem.resources")
    assert "4111 1111" not in one(db, "SELECT string_agg(content, ' ') FROM cogmem.resource_chunks")
    counts = dict(db.execute("SELECT * FROM cogmem.erase_subject(%s, 'Zeynep Kaya')", (tenant,)).fetchall())
    assert counts["resources"] == 1 and one(db, "SELECT count(*) FROM cogmem.resource_chunks") == 0


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("", "x"), psycopg.errors.InvalidParameterValue, "title must be a name of 1 to 300 characters"),
        (("T", None), psycopg.errors.NullValueNotAllowed, "body must not be empty"),
        (("T", "   "), psycopg.errors.InvalidParameterValue, "body must not be empty"),
        (
            ("T", "x", "Run Book"),
            psycopg.errors.InvalidParameterValue,
            "kind must be a lower-case word, got 'Run Book'",
        ),
        (("T", "x", "runbook", "[1]"), psycopg.errors.InvalidParameterValue, "source must be a JSON object, got array"),
    ],
)
def test_bad_input_is_refused_with_a_reason(db, tenant, args, error, message):
    placeholders = ", ".join(["%s"] * len(args))
    with pytest.raises(error) as e:
        db.execute(f"SELECT * FROM cogmem.add_resource(%s, {placeholders})", (tenant, *args))
    assert e.value.diag.message_primary.startswith(message)
    assert e.value.diag.message_hint


def test_embeddings_must_match_the_chunks(db, tenant):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="1 embeddings for 5 chunks"):
        db.execute(
            "SELECT * FROM cogmem.add_resource(%s, 'T', %s, embeddings => ARRAY[%s::vector])",
            (tenant, RUNBOOK, "[" + ",".join(["0.05"] * 384) + "]"),
        )
    shown = db.execute(
        "SELECT chunk, embed_text FROM cogmem.chunk_resource(%s, 'Runbook', %s)", (tenant, RUNBOOK)
    ).fetchall()
    assert shown[2][1].startswith("Runbook § Manual failover > When it is allowed\nOnly during a maintenance window")


def test_a_very_long_text_is_remembered_and_suggested_as_a_resource(db, tenant):
    db.execute("SELECT cogmem.configure_tenant(%s, '{\"resource_suggest_chars\": 500}')", (tenant,))
    long_text = RUNBOOK[:600]
    row = db.execute("SELECT memory_id, suggestion FROM cogmem.remember(%s, %s)", (tenant, long_text)).fetchone()
    assert row[0] is not None and row[1].startswith("600 characters, more than resource_suggest_chars (500)")
    short = db.execute("SELECT suggestion FROM cogmem.remember(%s, 'A short fact.')", (tenant,)).fetchone()
    assert short == (None,)
    batch = db.execute(
        "SELECT suggestion IS NOT NULL FROM cogmem.remember_many(%s, %s)", (tenant, json.dumps(["x y", long_text]))
    ).fetchall()
    assert batch == [(False,), (True,)]


def test_explain_recall_says_which_version_of_which_document(db, tenant):
    db.execute("SELECT cogmem.add_resource(%s, 'Database failover runbook', %s, 'runbook')", (tenant, RUNBOOK))
    recall_id = one(db, "SELECT recall_id FROM cogmem.recall(%s, 'Who is the escalation contact?') LIMIT 1", (tenant,))
    db.execute("SELECT cogmem.add_resource(%s, 'Database failover runbook', %s, 'runbook')", (tenant, RUNBOOK + "\nv2"))
    provenance = [
        r[0] for r in db.execute(
            "SELECT provenance FROM cogmem.explain_recall(%s) WHERE layer = 'resources' ORDER BY item", (recall_id,)
        )
    ]  # fmt: skip
    assert provenance and all(p["kind"] == "resource" and p["version"] == 1 for p in provenance)
    assert provenance[0]["heading"] == "Contacts" and provenance[0]["superseded_at"] is not None
    assert provenance[0]["title"] == "Database failover runbook" and provenance[0]["document_kind"] == "runbook"


def test_versions_count_on_after_a_retirement_and_a_body_of_headings_is_refused(db, tenant):
    add = "SELECT version, action FROM cogmem.add_resource(%s, 'Policy', %s)"
    assert db.execute(add, (tenant, "## A\n\none")).fetchone() == (1, "created")
    db.execute("SELECT cogmem.retire_resource(%s, 'Policy')", (tenant,))
    assert db.execute(add, (tenant, "## A\n\ntwo")).fetchone() == (2, "new_version")
    assert [r[0] for r in db.execute("SELECT version FROM cogmem.resources ORDER BY resource_id")] == [1, 2]
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="no text beside its headings"):
        db.execute(add, (tenant, "# Title\n\n## Empty\n\n## Also empty"))


def test_a_long_code_block_keeps_its_lines(db):
    code = "\n".join(f"    step_{n} --flag value-{n}" for n in range(60))
    got = chunks(db, f"## Script\n\n```\n{code}\n```", 64)
    assert len(got) > 1 and all("\n" in c for _, _, c in got)
    assert "\n".join(c for _, _, c in got).count("step_") == 60


@pytest.mark.parametrize("verb", ["add_resource", "chunk_resource"])
def test_a_document_over_the_size_limit_is_refused_by_both_verbs(db, tenant, verb):
    with pytest.raises(psycopg.errors.StringDataRightTruncation) as e:
        db.execute(f"SELECT * FROM cogmem.{verb}(%s, 'Manual', repeat(E'word word\\n', 100001))", (tenant,))
    assert e.value.diag.message_primary == "body has 1000010 characters, the limit is 1000000"
    assert e.value.diag.message_hint == "Split the document into parts (by chapter), each a resource of its own title."
    assert one(db, "SELECT count(*) FROM cogmem.resources") == 0


@pytest.mark.parametrize("verb", ["add_resource", "chunk_resource"])
def test_a_document_that_cuts_into_too_many_chunks_is_refused_by_both_verbs(db, tenant, verb):
    # 70 KB of one-line sections: 10,001 chunks, each embedded (about 5 ms each in the database) and stored.
    sections = "# Glossary\n\n" + "## s\nx\n" * 10001
    with pytest.raises(psycopg.errors.ProgramLimitExceeded) as e:
        db.execute(f"SELECT * FROM cogmem.{verb}(%s, 'Glossary', %s)", (tenant, sections))
    assert e.value.diag.message_primary == "body cuts into 10001 chunks, the limit is 10000"
    assert e.value.diag.message_hint == (
        "Split the document into parts (by chapter), each a resource of its own title, or join its shortest sections."
    )
    assert one(db, "SELECT count(*) FROM cogmem.resources") == 0
    at_the_limit = "# Glossary\n\n" + "## s\nx\n" * 10000
    assert one(db, "SELECT count(*) FROM cogmem.chunk_resource(%s, 'Glossary', %s)", (tenant, at_the_limit)) == 10000


def test_a_long_heading_line_is_a_paragraph_not_a_path_every_chunk_repeats(db):
    # A 51 KB "heading" over 200 tiny sections stored 10 MB of headings: a line longer than a title is text.
    body = "# " + "h" * 51000 + "\n" + "".join(f"## s{i}\nx\n" for i in range(200))
    chunks = db.execute("SELECT heading, content FROM cogmem.chunk_text(%s)", (body,)).fetchall()
    assert sum(len(h) for h, _ in chunks) < 1000 and max(len(h) for h, _ in chunks) <= 4
    assert "".join(c for _, c in chunks).count("h") >= 51000  # nothing of it lost


def test_an_application_cuts_a_text_as_add_resource_would(db, login):
    app = login("cogmem_app")
    mine = app.execute("SELECT chunk, heading, content FROM cogmem.chunk_text(%s)", (RUNBOOK,)).fetchall()
    assert mine == db.execute("SELECT chunk, heading, content FROM cogmem.chunk_text(%s)", (RUNBOOK,)).fetchall()
    assert len(mine) > 1
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute("SELECT * FROM cogmem._pack_blocks(ARRAY['x'], 10)")


@pytest.mark.parametrize("command", ["add", "chunks"])
def test_the_cli_says_a_file_is_not_utf8_and_how_to_convert_it(dsn, tmp_path, command):
    from tests.cli_helpers import invoke

    file = tmp_path / "runbook.md"
    file.write_bytes("# Yedekleme\n\nSunucuyu gece yeniden başlatma.\n".encode("cp1254"))
    result = invoke("--dsn", dsn, "resource", command, "acme", str(file))
    assert result.exit_code == 2  # a bad FILE, as a bad argument is: no traceback (invoke raises anything else)
    assert f"Invalid value for FILE: {file} is not UTF-8 text (byte 0xfe at offset" in result.output
    assert "iconv -f WINDOWS-1254 -t UTF-8" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("command", ["add", "chunks"])
def test_the_cli_says_a_file_with_a_nul_byte_is_not_text(dsn, tmp_path, command):
    from tests.cli_helpers import invoke

    file = tmp_path / "dump.md"
    file.write_bytes(b"# Dump\n\nhello\x00world\n")
    result = invoke("--dsn", dsn, "resource", command, "acme", str(file))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"Invalid value for FILE: {file} is not text (a NUL byte at offset 13)" in result.output
    assert "a document is Markdown or plain text" in result.output


def test_a_documents_title_and_source_are_redacted_everywhere_they_are_kept(db, tenant):
    added = db.execute(
        "SELECT * FROM cogmem.add_resource(%s, 'Payments card 4111 1111 1111 1111 password=Hunter2Title', %s,"
        " source => %s)",
        (tenant, "# Payments\n\nRefunds go through the payments desk.",
         '{"password": "SrcPass123!", "url": "https://bob:Sup3rS3cret!@db.example.com"}'),
    ).fetchone()  # fmt: skip
    assert added[4] == ["credential", "pan", "password"]
    kept = one(db, "SELECT row_to_json(r)::text FROM cogmem.resources AS r")
    kept += one(db, "SELECT json_agg(c)::text FROM cogmem.resource_chunks AS c")
    kept += str(db.execute("SELECT * FROM cogmem.recall(%s, 'how do refunds work')", (tenant,)).fetchall())
    kept += str(
        db.execute("SELECT * FROM cogmem.chunk_resource(%s, 'card 4111 1111 1111 1111', 'x')", (tenant,)).fetchall()
    )
    for secret in ("4111", "Hunter2Title", "SrcPass123!", "Sup3rS3cret!"):
        assert secret not in kept, secret
    assert one(db, "SELECT title FROM cogmem.resources") == "Payments card [REDACTED:PAN] password=[REDACTED]"
    assert one(db, "SELECT source ->> 'url' FROM cogmem.resources") == "https://bob:[REDACTED]@db.example.com"


def test_a_deep_path_of_long_headings_is_stored_within_a_titles_length(db):
    # Five nested 290-character headings over 200 tiny sections repeated 1,170 characters of path in each
    # chunk (234 KB of headings for a 3 KB body): the path keeps its innermost headings within 300.
    outer = "".join(f"{'#' * level} {chr(64 + level) * 290}\n" for level in range(1, 6))
    body = outer + "".join(f"###### s{i}\nx\n" for i in range(200))
    got = chunks(db, body)
    assert len(got) == 200 and max(len(h) for _, h, _ in got) <= 300
    assert sum(len(h) for _, h, _ in got) <= 300 * 200
    assert got[7][1] == "… > " + "E" * 290 + " > s7"
    assert chunks(db, "# T\n\n## A\n\n### B\n\ntext")[0][1] == "A > B"  # a short path stays whole


@pytest.mark.parametrize("tokens", [64, 257])
def test_a_word_longer_than_a_chunk_is_cut_in_chunks_of_the_limit(db, tokens):
    # Cut by one pass of a regular expression (runs of 128 or 4 characters, the divisors of 256 and 1,028).
    got = chunks(db, "ç" * 3000, tokens)
    assert [len(c) for _, _, c in got] == [tokens * 4] * (3000 // (tokens * 4)) + [3000 % (tokens * 4)]
    assert "".join(c for _, _, c in got) == "ç" * 3000
