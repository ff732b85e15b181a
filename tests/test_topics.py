"""sql/010-topics.sql: topic detection with a per-tenant taxonomy, English and Turkish."""

import psycopg
import pytest

from tests.conftest import one


@pytest.mark.parametrize(
    ("message", "topics"),
    [
        ("Let's open a maintenance window tonight and restart the servers", ["server"]),
        ("The invoice for October is overdue", ["billing"]),
        ("Point the CNAME for shop to the new load balancer", ["dns", "network"]),
        ("Nightly backups of the database failed", ["backup", "database"]),
        ("What a lovely day", []),
        ("", []),
    ],
)
def test_detect_topics_english(db, tenant, message, topics):
    assert one(db, "SELECT cogmem.detect_topics(%s, %s)", (tenant, message)) == topics


@pytest.mark.parametrize(
    ("message", "topics"),
    [
        ("Sunucuyu gece restart etme", ["server"]),
        ("Faturayı müşteriye e-posta ile gönder", ["billing", "email", "support"]),
        ("Veritabanı yedeklemesi tamamlandı", ["backup", "database"]),
    ],
)
def test_detect_topics_turkish(db, message, topics):
    db.execute("SELECT cogmem.create_tenant('firma', 'turkish')")
    assert one(db, "SELECT cogmem.detect_topics('firma', %s)", (message,)) == topics


def test_short_keywords_match_whole_words_only(db, tenant):
    # "ci" is a deployment keyword; it must not fire inside "city" or "decision".
    assert one(db, "SELECT cogmem.detect_topics(%s, 'A decision about the city office')", (tenant,)) == []
    assert one(db, "SELECT cogmem.detect_topics(%s, 'The CI is red again')", (tenant,)) == ["deployment"]


def test_tenant_overrides_a_topic(db, tenant):
    db.execute("SELECT cogmem.set_topic(%s, 'Kubernetes', ARRAY['k8s', 'kubectl', 'Pod'])", (tenant,))
    assert one(db, "SELECT cogmem.detect_topics(%s, 'kubectl shows a crashing pod')", (tenant,)) == ["kubernetes"]
    # Replacing a default topic's keywords; an empty list switches it off.
    db.execute("SELECT cogmem.set_topic(%s, 'billing', '{}')", (tenant,))
    assert one(db, "SELECT cogmem.detect_topics(%s, 'The invoice is overdue')", (tenant,)) == []
    db.execute("SELECT cogmem.create_tenant('other')")
    assert one(db, "SELECT cogmem.detect_topics('other', 'The invoice is overdue')") == ["billing"]
    rows = db.execute(
        "SELECT topic, keywords, overridden FROM cogmem.topic_keywords(%s) WHERE overridden", (tenant,)
    ).fetchall()
    assert rows == [("billing", [], True), ("kubernetes", ["k8s", "kubectl", "pod"], True)]


def test_detect_topics_errors(db, tenant):
    with pytest.raises(psycopg.errors.NullValueNotAllowed) as err:
        db.execute("SELECT cogmem.detect_topics(%s, NULL)", (tenant,))
    assert err.value.diag.message_primary == "message must not be NULL"
    with pytest.raises(psycopg.errors.UndefinedObject) as err:
        db.execute("SELECT cogmem.detect_topics('ghost', 'hello')")
    assert err.value.diag.message_hint == "Create it first: SELECT cogmem.create_tenant('ghost');"
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        db.execute("SELECT cogmem.set_topic(%s, ' ', '{x}')", (tenant,))
    assert err.value.diag.message_primary == "topic must not be NULL or empty"


def test_upgrades_extend_the_default_taxonomy_and_drop_only_what_misled(db):
    """0022 replaced whole keyword lists; a topic must keep every keyword it had unless it was dropped on
    purpose (words casual talk uses for other things)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "migrations" / "versions" / "0001_initial_schema.py"
    spec = importlib.util.spec_from_file_location("initial", path)
    initial = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(initial)
    dropped = {
        ("server", "servis"),
        ("network", "switch"),
        ("network", "port"),
        ("network", "bağlantı"),
        ("backup", "yedek"),
        ("payments", "card"),
        ("payments", "kart"),
    }
    now = dict(db.execute("SELECT topic, keywords FROM cogmem.default_topics").fetchall())
    lost = {(t, k) for t, words in initial.TOPICS.items() for k in words if k not in now[t]}
    assert lost == dropped
