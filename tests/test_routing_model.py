"""sql/025-routing-model.sql and the model as data: cogmem_pg/data/routing-model.json, checked against its
pinned sha256, loaded into cogmem.routing_model / routing_terms / routing_model_version by the installer."""

import hashlib
import json
import re
import struct

import numpy as np
import psycopg
import pytest

from cogmem_pg import migrate
from cogmem_pg.paths import routing_model_file, routing_model_hash_file
from tests.conftest import one

MODEL = json.loads(routing_model_file().read_text(encoding="utf-8"))
SHA256 = hashlib.sha256(routing_model_file().read_bytes()).hexdigest()


UNITS = sum(r["model"] == "hidden" for r in MODEL["labels"])
# The router's six models (ring and instruction heads), the hidden layers and their outputs, the three
# contradiction models, the judge's three and the two preference heads.
ROWS = 6 * 6 + 4 * (UNITS + 4) + 3 * 2 + 3 * 4 + 2 * 2


def real(value: float) -> float:
    """The value as PostgreSQL's real holds it."""
    return struct.unpack("f", struct.pack("f", value))[0]


def test_the_pinned_hash_is_the_files():
    assert routing_model_hash_file().read_text(encoding="utf-8") == f"{SHA256}  routing-model.json\n"


# The first label's bias, as the file spells it (the tests below change it).
FIRST_BIAS = re.search(rb'"model":"embedding","head":"ring","label":"dos_and_donts","slot":0,("bias":[^,]+)',
                       routing_model_file().read_bytes()).group(1)  # fmt: skip


def test_the_preference_heads_read_the_embedding_and_the_routers_cues():
    """bench/train_router.py drops them when the cues change; a file that still had them would fail here."""
    heads = [r for r in MODEL["labels"] if r["model"].startswith("preference")]
    assert {r["model"] for r in heads} == {"preference", "preference@multilingual-e5-small-q4"}
    assert all(len(r["weights"]) == 384 + len(MODEL["cues"]) for r in heads)


def test_the_readers_give_the_files_numbers(db):
    rows = db.execute(
        "SELECT r.model, r.head, r.label, r.slot, r.bias::float8, r.threshold::float8,"
        " r.candidate_threshold::float8, r.weights::real[]::float8[]"
        " FROM (SELECT DISTINCT model FROM cogmem.routing_model) AS d, cogmem._routing_model_of(d.model) AS r"
        " ORDER BY r.model, r.head, r.slot"
    ).fetchall()
    want = sorted(
        (
            r["model"],
            r["head"],
            r["label"],
            r["slot"],
            *map(real, (r["bias"], r["threshold"], r["candidate_threshold"])),
            [real(w) for w in r["weights"]],
        )
        for r in MODEL["labels"]
    )
    # The router's rows: short and long statements, by MiniLM's and E5's vectors and by the cues (6 models,
    # 6 labels each), the hidden layers of the 4 embedding models (their units and 4 rings) and 3
    # contradiction models; and the follow-up judge's: 3 models, 4 verdicts.
    assert len(rows) == len(want) == ROWS
    assert sorted(tuple(r) for r in rows) == want  # bit for bit, as the literals they replaced
    assert one(db, "SELECT cogmem._routing_model_cues()") == MODEL["cues"]
    assert one(db, "SELECT count(*) FROM cogmem.routing_terms") == len(MODEL["terms"])
    model, head, term, weights = MODEL["terms"][0]
    assert (
        one(
            db,
            "SELECT weights FROM cogmem.routing_terms WHERE model = %s AND head = %s AND term = %s",
            (model, head, term),
        )
        == weights
    )
    assert one(db, "SELECT (sha256, metadata ->> 'commit') FROM cogmem.routing_model_version") == (
        SHA256,
        MODEL["commit"],
    )


def _model_files(tmp_path, monkeypatch, text: bytes, pinned: str) -> None:
    (tmp_path / "routing-model.json").write_bytes(text)
    (tmp_path / "routing-model.json.sha256").write_text(f"{pinned}  routing-model.json\n")
    monkeypatch.setattr(migrate, "routing_model_file", lambda: tmp_path / "routing-model.json")
    monkeypatch.setattr(migrate, "routing_model_hash_file", lambda: tmp_path / "routing-model.json.sha256")


def test_a_model_that_is_not_the_pinned_one_is_refused(fresh_database, tmp_path, monkeypatch):
    text = routing_model_file().read_bytes().replace(FIRST_BIAS, b'"bias":0.5', 1)
    _model_files(tmp_path, monkeypatch, text, SHA256)
    dsn = fresh_database()
    with pytest.raises(migrate.InstallError) as refused:
        migrate.install(dsn)
    assert str(refused.value) == (
        f"{tmp_path / 'routing-model.json'} has sha256 {hashlib.sha256(text).hexdigest()}, but "
        f"routing-model.json.sha256 pins {SHA256}: the routing model was changed without "
        "bench/train_router.py (re-run it, or restore both files from the release)"
    )
    assert migrate.current_revision(dsn) is None  # one transaction: nothing stays


def test_a_new_model_replaces_the_old_and_the_same_one_is_not_loaded_again(fresh_database, tmp_path, monkeypatch):
    dsn = fresh_database()
    migrate.install(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        loaded_at = one(conn, "SELECT loaded_at FROM cogmem.routing_model_version")
    migrate.install(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert one(conn, "SELECT loaded_at FROM cogmem.routing_model_version") == loaded_at

    text = routing_model_file().read_bytes().replace(FIRST_BIAS, b'"bias":0.5', 1)
    _model_files(tmp_path, monkeypatch, text, hashlib.sha256(text).hexdigest())
    migrate.install(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert one(conn, "SELECT sha256 FROM cogmem.routing_model_version") == hashlib.sha256(text).hexdigest()
        assert one(
            conn,
            "SELECT bias FROM cogmem._routing_model_of('embedding') WHERE head = 'ring' AND label = 'dos_and_donts'",
        ) == pytest.approx(0.5)
        assert one(conn, "SELECT count(*) FROM cogmem.routing_model") == ROWS
        assert one(conn, "SELECT count(*) FROM cogmem.routing_terms") == len(MODEL["terms"])


def test_a_models_scores_are_a_distribution_per_head(db):
    rows = db.execute(
        "SELECT s.head, sum(s.probability), count(*) FROM cogmem._model_scores("
        " 'cues', cogmem._inbound_cues('Never deploy on Fridays.')::vector,"
        " cogmem._inbound_terms('Never deploy on Fridays.')) AS s GROUP BY s.head ORDER BY s.head"
    ).fetchall()
    assert [(head, round(total, 9), n) for head, total, n in rows] == [("instruction", 1, 2), ("ring", 1, 4)]
    assert db.execute("SELECT * FROM cogmem._model_scores('no-such-model', '[1]', '{}')").fetchall() == []


@pytest.mark.parametrize("suffix", ["", "-long@multilingual-e5-small-q4"])
def test_the_hidden_layer_computes_what_the_trainers_network_does(db, suffix):
    """_hidden_layer_features: the units rectified, then the rings' softmax, as log-probabilities (what
    bench/train_router.py's MLPClassifier gives, log-clipped at 1e-6)."""
    hidden, output = (
        sorted((r for r in MODEL["labels"] if r["model"] == name + suffix), key=lambda r: r["slot"])
        for name in ("hidden", "hidden-output")
    )
    assert len(hidden) == UNITS >= 64 and [r["label"] for r in output] == sorted(r["label"] for r in output)
    vector = np.random.default_rng(7).normal(size=len(hidden[0]["weights"]))
    vector /= np.linalg.norm(vector)
    units = np.maximum(0.0, np.array([r["bias"] for r in hidden]) + np.array([r["weights"] for r in hidden]) @ vector)
    scores = np.array([r["bias"] for r in output]) + np.array([r["weights"] for r in output]) @ units
    scores -= scores.max()
    want = np.maximum(np.log(1e-6), scores - np.log(np.exp(scores).sum()))
    got = one(
        db,
        "SELECT cogmem._hidden_layer_features(%s, %s, %s::vector)::real[]",
        ("hidden" + suffix, "hidden-output" + suffix, vector.tolist()),
    )
    assert got == pytest.approx(want, abs=1e-3)
    assert one(db, "SELECT cogmem._hidden_layer_features('no-such-model', 'hidden-output', %s::vector)",
               (vector.tolist(),)) is None  # fmt: skip
