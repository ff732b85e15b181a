"""sql/022-reembed.sql and cogmem_pg.reembed: a tenant re-embedded with another model, online, resumably, swapped
in one transaction (issue 47)."""

import psycopg
import pytest

from cogmem_pg.embed import E5Embedder, EmbeddingUnavailable, default_embedder, to_literal
from tests.conftest import one, unit_vector

OTHER = "test-model-v2"
MINILM, E5 = "all-MiniLM-L6-v2-onnx-int8", "multilingual-e5-small-q4"


@pytest.fixture
def tenant(minilm_tenant):
    """Every tenant here is re-embedded from MiniLM's vectors (tests/conftest.py)."""
    return minilm_tenant


def _stored(db, tenant="acme"):
    """Every text of the tenant with a vector, and the vector's first component (which model made it)."""
    return db.execute(
        """SELECT 'memory', memory_id, embedding FROM cogmem.memories WHERE tenant = %(t)s
           UNION ALL SELECT 'chunk', chunk_id, embedding FROM cogmem.resource_chunks WHERE tenant = %(t)s
           UNION ALL SELECT 'turn', turn_id, embedding FROM cogmem.sensory_turns WHERE tenant = %(t)s""",
        {"t": tenant},
    ).fetchall()


def _put_all(db, rows, seed):
    """Puts a vector of the OTHER model for each pending row: unit_vector(seed + id)."""
    db.execute(
        "SELECT cogmem.reembed_put('acme', %s, %s, %s, %s, %s::vector[])",
        (
            OTHER,
            [r[0] for r in rows],
            [r[1] for r in rows],
            [r[3] for r in rows],
            [to_literal(unit_vector(seed + r[1])) for r in rows],
        ),
    )


def test_a_tenant_is_re_embedded_in_batches_and_swapped_at_once(db, tenant):
    for n, text in enumerate(["Invoices go out on the first", "Backups run at two", "Ayşe prefers e-mail"]):
        db.execute("SELECT cogmem.remember('acme', %s, embedding => %s::vector)", (text, to_literal(unit_vector(n))))
    db.execute(
        "SELECT cogmem.add_resource('acme', 'Runbook', %s, embeddings => ARRAY[%s::vector])",
        ("# Restarts\nRestart nginx with systemctl.", to_literal(unit_vector(7))),
    )
    db.execute(
        "SELECT cogmem.observe('acme', 'c1', 'user', 'hello there', embedding => %s::vector)",
        (to_literal(unit_vector(8)),),
    )
    before = _stored(db)
    progress = db.execute(
        "SELECT from_model, to_model, done, total FROM cogmem.reembed_begin('acme', %s)", (OTHER,)
    ).fetchone()
    assert progress == (MINILM, OTHER, 0, len(before))

    first = db.execute("SELECT * FROM cogmem.reembed_pending('acme', 2)").fetchall()
    assert [r[0] for r in first] == ["chunk", "memory"]  # kinds in name order, ids within
    _put_all(db, first, 1000)
    rest = db.execute(
        "SELECT * FROM cogmem.reembed_pending('acme', 100, %s, %s)", (first[-1][0], first[-1][1])
    ).fetchall()
    assert len(rest) == len(before) - 2
    # Until the swap the tenant is recalled by its old vectors, and a new memory gets one of the old model.
    assert _stored(db) == before
    db.execute(
        "SELECT cogmem.remember('acme', 'Deploys wait for Friday', embedding => %s::vector)",
        (to_literal(unit_vector(9)),),
    )
    _put_all(db, rest, 1000)
    assert one(db, "SELECT done FROM cogmem.reembed_progress('acme')") == len(before)

    # The memory written meanwhile is counted, not swapped: nothing changes until it is embedded too.
    assert db.execute("SELECT * FROM cogmem.reembed_finish('acme')").fetchone() == (False, MINILM, 1)
    assert one(db, "SELECT embedding_model FROM cogmem.tenants WHERE tenant = 'acme'") == MINILM
    late = db.execute("SELECT * FROM cogmem.reembed_pending('acme', 100)").fetchall()
    assert [r[2] for r in late] == ["Deploys wait for Friday"]
    _put_all(db, late, 1000)
    assert db.execute("SELECT * FROM cogmem.reembed_finish('acme')").fetchone() == (True, OTHER, 0)

    after = _stored(db)
    assert len(after) == len(before) + 1
    for kind, key, vector in after:
        assert vector.to_list() == pytest.approx(unit_vector(1000 + key), abs=1e-6), (kind, key)
    assert one(db, "SELECT embedding_model FROM cogmem.tenants WHERE tenant = 'acme'") == OTHER
    assert one(db, "SELECT count(*) FROM cogmem.reembedded_vectors") == 0
    # The change of model is in the audit trail, as every change of a tenant is.
    changed = one(
        db,
        """SELECT detail FROM cogmem.audit_log WHERE tenant = 'acme' AND event LIKE 'tenants%%'
           ORDER BY audit_id DESC LIMIT 1""",
    )
    assert OTHER in str(changed)


def test_a_changed_text_or_a_wrong_digest_is_embedded_again(db, tenant):
    db.execute(
        "SELECT cogmem.remember('acme', 'Backups run at two', embedding => %s::vector)", (to_literal(unit_vector(1)),)
    )
    db.execute("SELECT cogmem.reembed_begin('acme', %s)", (OTHER,))
    (row,) = db.execute("SELECT * FROM cogmem.reembed_pending('acme')").fetchall()
    wrong = (row[0], row[1], row[2], "00000000-0000-0000-0000-000000000000")
    _put_all(db, [wrong], 0)
    assert db.execute("SELECT id FROM cogmem.reembed_pending('acme')").fetchall() == [(row[1],)]
    _put_all(db, [row], 0)  # put again: the newer vector replaces the older
    assert db.execute("SELECT id FROM cogmem.reembed_pending('acme')").fetchall() == []


def test_re_embedding_refuses_what_would_mix_two_spaces(db, tenant, login):
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="no re-embedding under way") as exc:
        db.execute("SELECT * FROM cogmem.reembed_pending('acme')")
    assert "reembed_begin" in exc.value.diag.message_hint
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=f"already embedded with {MINILM}"):
        db.execute("SELECT cogmem.reembed_begin('acme', %s)", (MINILM,))
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="embedding model name"):
        db.execute("SELECT cogmem.reembed_begin('acme', 'two words')")
    db.execute("SELECT cogmem.reembed_begin('acme', %s)", (OTHER,))
    db.execute("SELECT cogmem.reembed_begin('acme', %s)", (OTHER,))  # the same again resumes
    with pytest.raises(psycopg.errors.ObjectInUse, match=f"already being re-embedded with {OTHER}"):
        db.execute("SELECT cogmem.reembed_begin('acme', %s)", (E5,))
    with pytest.raises(psycopg.errors.DataException, match=f"re-embedded with {OTHER}, these vectors are of {E5}"):
        db.execute(
            "SELECT cogmem.reembed_put('acme', %s, '{memory}', '{1}', ARRAY[gen_random_uuid()], ARRAY[%s::vector])",
            (E5, to_literal(unit_vector(1))),
        )
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="arrays of one length"):
        db.execute(
            "SELECT cogmem.reembed_put('acme', %s, '{memory,memory}', '{1}', ARRAY[gen_random_uuid()], "
            "ARRAY[%s::vector])",
            (OTHER, to_literal(unit_vector(1))),
        )
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="limit must be 1 to 10000"):
        db.execute("SELECT * FROM cogmem.reembed_pending('acme', 0)")
    # An application may not re-embed (nor read the texts through it): administrators only.
    app = login("cogmem_app")
    db.execute(f"SELECT cogmem.grant_tenant('{app.info.user}', 'acme')")
    for call in ("cogmem.reembed_pending('acme')", "cogmem.reembed_finish('acme')", "cogmem.reembed_cancel('acme')"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app.execute(f"SELECT * FROM {call}")
    assert one(db, "SELECT cogmem.reembed_cancel('acme')") is True
    assert one(db, "SELECT cogmem.reembed_cancel('acme')") is False
    assert one(db, "SELECT count(*) FROM cogmem.reembeddings") == 0


def test_an_erasure_takes_the_new_vectors_of_what_it_erases(db, tenant):
    for n, text in enumerate(["Ayşe Yılmaz lives in İzmir", "Backups run at two"]):
        db.execute("SELECT cogmem.remember('acme', %s, embedding => %s::vector)", (text, to_literal(unit_vector(n))))
    db.execute("SELECT cogmem.reembed_begin('acme', %s)", (OTHER,))
    _put_all(db, db.execute("SELECT * FROM cogmem.reembed_pending('acme')").fetchall(), 0)
    db.execute("SELECT * FROM cogmem.erase_subject('acme', 'Ayşe Yılmaz', 'request')")
    kept = db.execute(
        "SELECT m.content FROM cogmem.reembedded_vectors AS v JOIN cogmem.memories AS m ON m.memory_id = v.id"
    ).fetchall()
    assert kept == [("Backups run at two",)]
    assert one(db, "SELECT count(*) FROM cogmem.reembedded_vectors") == 1


def _e5():
    try:
        return E5Embedder()
    except EmbeddingUnavailable:
        pytest.skip("the [embed] extra is not installed")


@pytest.mark.skipif(default_embedder() is None, reason="the [embed] extra is not installed")
def test_the_client_re_embeds_resumes_and_its_cache_follows(dsn, db):
    from cogmem_pg.client import Client

    e5 = _e5()
    db.execute("SELECT cogmem.create_tenant('globex', 'turkish', %s)", (MINILM,))
    texts = ["Annem geçen ay İzmir'e taşındı.", "Faturalar ayın ilk günü kesilir.", "Yedekler gece ikide alınır."]
    with Client(dsn) as writer, Client(dsn) as admin:
        for text in texts:
            writer.remember("globex", text)

        def interrupt(progress):
            if not progress.finished:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            admin.reembed("globex", E5, batch=1, on_progress=interrupt)
        assert one(db, "SELECT done FROM cogmem.reembed_progress('globex')") == 1
        seen = []
        done = admin.reembed("globex", E5, batch=2, on_progress=seen.append)
        assert done.finished and done.to_model == E5 and done.from_model == MINILM
        assert seen[-1].done == seen[-1].total == len(texts)
        stored = dict(db.execute("SELECT content, embedding FROM cogmem.memories WHERE tenant = 'globex'").fetchall())
        for text in texts:
            assert stored[text].to_list() == pytest.approx(e5.embed([text])[0], abs=1e-4)

        # The writer still believes the tenant is MiniLM: its vector is refused, nothing is kept, and its
        # next call embeds with E5.
        with pytest.raises(psycopg.errors.DataException, match=f"holds vectors of {E5}"):
            writer.remember("globex", "Kargo salı günü gelir.")
        writer.remember("globex", "Kargo salı günü gelir.")
        assert one(db, "SELECT count(*) FROM cogmem.memories WHERE tenant = 'globex'") == len(texts) + 1
        found = writer.recall("globex", "Annem nerede yaşıyor?")
        assert any("İzmir" in item.content for item in found.items)


SETTINGS = (
    "duplicate_similarity", "merge_similarity", "sibling_similarity", "candidate_restated_similarity",
    "dissonance_similarity", "topic_bypass_similarity", "guard_similarity",
)  # fmt: skip


def _settings(db, name):
    return dict(
        zip(
            SETTINGS,
            db.execute(f"SELECT {', '.join(SETTINGS)} FROM cogmem.tenants WHERE tenant = %s", (name,)).fetchone(),
            strict=True,
        )
    )


def test_a_tenant_s_cosine_settings_follow_its_model(db, tenant):
    # MiniLM's thresholds are the columns' defaults; a tenant of E5 starts with E5's (sql/007-embed.sql).
    minilm = {
        k: pytest.approx(float(v))
        for k, v in one(db, "SELECT cogmem._similarity_defaults(%s)", (MINILM,)).items()
        if k in SETTINGS
    }
    assert _settings(db, "acme") == minilm
    db.execute("SELECT cogmem.create_tenant('globex', 'turkish', %s)", (E5,))
    e5 = one(db, "SELECT cogmem._similarity_defaults(%s)", (E5,))
    assert _settings(db, "globex") == {k: pytest.approx(float(e5[k])) for k in SETTINGS}
    assert e5["duplicate_similarity"] > 0.95 and e5["guard_similarity"] > 0.8  # E5's cosines run high
    # Re-embedded, a tenant takes the new model's values, but keeps what a person set.
    db.execute("""SELECT cogmem.configure_tenant('acme', '{"guard_similarity": 0.5}')""")
    db.execute("SELECT cogmem.reembed_begin('acme', %s)", (E5,))
    assert db.execute("SELECT finished FROM cogmem.reembed_finish('acme')").fetchone() == (True,)
    after = _settings(db, "acme")
    assert after["guard_similarity"] == pytest.approx(0.5)
    assert after["duplicate_similarity"] == pytest.approx(float(e5["duplicate_similarity"]))
