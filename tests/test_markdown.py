"""cogmem_pg/markdown.py and `cogmem export/import --markdown`: a vault of Markdown files in MIRIX's six memory
types (core, episodic, semantic, procedural, resource, knowledge vault), round-tripped."""

from click.testing import CliRunner

from cogmem_pg.cli import main
from tests.conftest import one

PROCEDURE = "To fail over the shop:\n## Before\n1. stop writes\n## Then\n2. promote db-1 3. switch DNS"


def remember(db, tenant, content, ring=None, source="{}"):
    return one(
        db,
        "SELECT memory_id FROM cogmem.remember(%s, %s, %s, source => %s::jsonb, contradicts => '{}')",
        (tenant, content, ring, source),
    )


def snapshot(db, tenant):
    """Everything the vault carries, keyed by text rather than by id (ids change on import)."""
    db.execute("SELECT cogmem.apply_rehearsals(%s)", (tenant,))  # as the export does
    memories = db.execute(
        """SELECT m.content, m.ring::text, m.topics, m.source, m.redactions, m.created_at, s.confidence, s.reinforced,
                  s.recall_count, s.rehearsal_count, s.outcome_count, s.outcome_sum, s.last_recalled_at
           FROM cogmem.memories AS m JOIN cogmem.memory_stats AS s USING (tenant, memory_id)
           WHERE m.tenant = %s ORDER BY m.content""",
        (tenant,),
    ).fetchall()
    siblings = db.execute(
        """SELECT a.content, b.content, l.similarity FROM cogmem.memory_siblings AS l
           JOIN cogmem.memories AS a ON a.tenant = l.tenant AND a.memory_id = l.memory_id
           JOIN cogmem.memories AS b ON b.tenant = l.tenant AND b.memory_id = l.sibling_id
           WHERE l.tenant = %s ORDER BY 1, 2""",
        (tenant,),
    ).fetchall()
    episodes = db.execute(
        """SELECT e.session_id, e.project, e.phase, e.summary, e.decisions, e.open_items, e.next_steps, e.topics,
                  e.started_at, e.ended_at, e.person, e.agent,
                  ARRAY(SELECT m.content FROM cogmem.memories AS m
                        WHERE m.tenant = e.tenant AND m.memory_id = ANY (e.memory_ids) ORDER BY m.content)
           FROM cogmem.episodes AS e WHERE e.tenant = %s ORDER BY e.ended_at""",
        (tenant,),
    ).fetchall()
    resources = db.execute(
        """SELECT title, kind, version, body, source, redactions, superseded_at IS NOT NULL,
                  ARRAY(SELECT c.heading || ': ' || c.content FROM cogmem.resource_chunks AS c
                        WHERE c.tenant = r.tenant AND c.resource_id = r.resource_id ORDER BY c.position)
           FROM cogmem.resources AS r WHERE r.tenant = %s ORDER BY lower(title), version""",
        (tenant,),
    ).fetchall()
    core = db.execute("SELECT agent, user_profile, goals FROM cogmem.core_identity(%s)", (tenant,)).fetchall()
    return memories, siblings, episodes, resources, core


def cli(*args):
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_export_import_round_trip_loses_nothing(db, dsn, tenant, tmp_path):
    rule = remember(
        db, tenant, "Never restart the servers at night", "dos_and_donts", source='{"who": "ayse", "channel": "slack"}'
    )
    remember(db, tenant, "The billing password=hunter2 is in the vault", ring="long_term")
    web1 = remember(db, tenant, "web-1 listens on 10.0.0.5", ring="long_term")
    web2 = remember(db, tenant, "web-2 listens on 10.0.0.6", ring="long_term")
    db.execute(
        "INSERT INTO cogmem.memory_siblings (tenant, memory_id, sibling_id, similarity) VALUES (%s, %s, %s, 0.95)",
        (tenant, web1, web2),
    )
    session = one(db, "SELECT cogmem.start_session(%s, 'shop', person => 'ayla', agent => 'ops')", (tenant,))
    recall_id = one(
        db,
        "SELECT recall_id FROM cogmem.recall(%s, 'restart the servers?', conversation => %s) LIMIT 1",
        (tenant, str(session)),
    )
    db.execute("SELECT cogmem.feedback(%s, 0.75)", (recall_id,))
    db.execute(
        """SELECT * FROM cogmem.end_session(%s, %s, decisions => %s, open_items => %s, procedures => %s,
                                            phase => 'cut-over')""",
        (
            session,
            "Moved the shop to db-2.\n## Not a section\nstill the summary",
            ["Keep db-1 as a replica"],
            ["Switch DNS"],
            [PROCEDURE],
        ),
    )
    turn = remember(db, tenant, "We moved the shop yesterday.", source='{"conversation": "c1", "person": "ayla"}')
    add = "SELECT cogmem.add_resource(%s, %s, %s, %s, person => %s)"
    db.execute(add, (tenant, "Failover", "## Steps\n\n1. Page the DBA.\n2. Promote db-2.", "runbook", None))
    db.execute(add, (tenant, "Failover", "## Steps\n\n1. Page the DBA.\n2. Promote db-3.", "runbook", None))
    db.execute(add, (tenant, "Old policy", "## Rule\n\nNo laptops at home.", "policy", "ayla"))
    db.execute("SELECT cogmem.retire_resource(%s, 'Old policy', 'ayla')", (tenant,))
    db.execute(
        "SELECT cogmem.set_core_identity(%s, 'The shop''s ops agent', 'Ayla, the owner', '{Keep it up}')", (tenant,)
    )
    db.execute("SELECT cogmem.vault_put(%s, 'db/password', 's3cr3t-Value', 'the primary''s password')", (tenant,))
    before = snapshot(db, tenant)
    assert [len(part) for part in before] == [6, 1, 1, 3, 1]

    out = cli("--dsn", dsn, "export", "--markdown", str(tmp_path), "--tenant", tenant)
    assert out == f"acme: 6 memories, 1 episodes, 3 resources -> {tmp_path / tenant}\n"
    vault = tmp_path / tenant
    assert sorted(p.name for p in vault.iterdir() if p.is_dir()) == sorted(
        ["core", "episodic", "semantic", "procedural", "resource", "knowledge_vault"]
    )
    note = (vault / "procedural" / f"{rule}.md").read_text(encoding="utf-8")
    assert note.startswith(f'---\nmemory_id: {rule}\nring: "dos_and_donts"\ntopics: ["server"]\n')
    assert f"## Episodes\n- [[episodic/session-{session}]]" in note
    assert f"- [[semantic/{web2}]]" in (vault / "semantic" / f"{web1}.md").read_text(encoding="utf-8")
    assert (vault / "episodic" / f"{turn}.md").exists()  # a turn of a conversation is episodic
    everything = "".join(p.read_text(encoding="utf-8") for p in vault.rglob("*.md"))
    assert "hunter2" not in everything and "s3cr3t-Value" not in everything
    assert "- db/password: the primary's password" in (vault / "knowledge_vault" / "index.md").read_text(
        encoding="utf-8"
    )
    episode = (vault / "episodic" / f"session-{session}.md").read_text(encoding="utf-8")
    assert "## Open items\n- Switch DNS" in episode and f"[[procedural/{rule}]]" in episode
    assert f"[[episodic/session-{session}]]" in (vault / "index.md").read_text(encoding="utf-8")
    assert "Ayla, the owner" in (vault / "core" / "identity.md").read_text(encoding="utf-8")

    db.execute("DELETE FROM cogmem.tenants WHERE tenant = %s", (tenant,))
    assert cli("--dsn", dsn, "import", "--markdown", str(tmp_path)) == (
        "acme: 6 memories, 1 episodes, 3 resources imported\n"
        "acme: the vault's secrets are never exported; put back: db/password\n"
    )
    assert snapshot(db, tenant) == before
    # Again: the same texts are not stored twice, the episode is there already.
    cli("--dsn", dsn, "import", "--markdown", str(tmp_path), "--tenant", tenant)
    assert snapshot(db, tenant) == before


def test_a_persons_export_holds_their_memory_only(db, dsn, tenant, tmp_path):
    remember(db, tenant, "Ayla prefers calls after six.", "habits", source='{"person": "ayla"}')
    remember(db, tenant, "Ben prefers e-mail.", "habits", source='{"person": "ben"}')
    remember(db, tenant, "The office closes at six.", "long_term")
    out = cli("--dsn", dsn, "export", "--markdown", str(tmp_path), "--tenant", tenant, "--person", "ayla")
    assert out.startswith("acme: 1 memories, 0 episodes, 0 resources")
    texts = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / tenant).rglob("*.md"))
    assert "Ayla prefers" in texts and "Ben" not in texts and "office" not in texts and '"person": "ayla"' in texts


def test_import_refuses_a_folder_that_is_not_an_export(dsn, tmp_path):
    result = CliRunner().invoke(main, ["--dsn", dsn, "import", "--markdown", str(tmp_path)])
    assert result.exit_code == 1 and "no exported tenant" in result.output
    result = CliRunner().invoke(main, ["--dsn", dsn, "export", "--markdown", str(tmp_path), "--tenant", "ghost"])
    assert result.exit_code == 1 and 'unknown tenant "ghost"' in result.output
