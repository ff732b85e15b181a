"""sql/007-embed.sql on an ordinary server: PostgreSQL's own Python cannot import cogmem_pg.

A second private cluster, started without any PYTHONPATH (as a DBA's server is), with the schema
installed by a superuser and used by an application login that is no superuser. Nothing embeds on the
client either: every call works on full text, and the session is told once why there are no vectors.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import psycopg
import pytest

from cogmem_pg.cluster import Cluster
from cogmem_pg.migrate import install
from tests.conftest import CLUSTER

_HOME = Path(tempfile.mkdtemp(prefix="cogmem-plain-"))
os.chmod(_HOME, 0o755)


@pytest.fixture(scope="module")
def plain() -> Iterator[Cluster]:
    cluster = Cluster(
        home=_HOME / "cluster",
        port=CLUSTER.port + 1,
        settings={"fsync": "off", "synchronous_commit": "off"},
        server_python=False,
    )
    cluster.start()
    install(cluster.dsn())
    yield cluster
    cluster.stop()
    shutil.rmtree(_HOME, ignore_errors=True)


class Notice(NamedTuple):
    severity: str | None
    message_primary: str | None
    message_hint: str | None


@pytest.fixture
def app(plain: Cluster) -> Iterator[tuple[psycopg.Connection, list[Notice], str]]:
    """A fresh tenant and an application login granted it, with the server's notices collected."""
    tenant, role = f"plain_{uuid.uuid4().hex[:8]}", f"plain_app_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(plain.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN IN ROLE cogmem_app")
        admin.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
        admin.execute("SELECT cogmem.grant_tenant(%s, %s)", (role, tenant))
    notices: list[Notice] = []
    conn = psycopg.connect(plain.dsn().replace("user=postgres", f"user={role}"), autocommit=True)
    # A Diagnostic is valid only during the callback: keep its fields.
    conn.add_notice_handler(lambda d: notices.append(Notice(d.severity, d.message_primary, d.message_hint)))
    yield conn, notices, tenant
    conn.close()
    with psycopg.connect(plain.dsn(), autocommit=True) as admin:
        admin.execute(f"DROP OWNED BY {role}")
        admin.execute(f"DROP ROLE {role}")


def warnings(notices: list[Notice]) -> list[Notice]:
    return [n for n in notices if n.severity == "WARNING"]


def test_the_server_cannot_embed_and_says_why_once(app):
    conn, notices, _ = app
    assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (False,)
    assert conn.execute("SELECT cogmem.server_can_embed()").fetchone() == (False,)
    assert conn.execute("SELECT cogmem.embed('hello') IS NULL").fetchone() == (True,)
    assert conn.execute("SELECT cogmem.server_can_embed()").fetchone() == (False,)
    (warning,) = warnings(notices)
    assert warning.message_primary.startswith(
        "cogmem.embed() returns NULL in this session: PostgreSQL's Python cannot import cogmem_pg ("
    )
    assert "No module named 'cogmem_pg'" in warning.message_primary
    assert warning.message_hint.startswith("Install cogmem-pg[embed] for the server's Python (3.")
    assert warning.message_hint.endswith("SET cogmem.embed = off silences this.")


def test_switched_off_it_says_nothing(app):
    conn, notices, _ = app
    conn.execute("SET cogmem.embed = off")
    assert conn.execute("SELECT cogmem.server_can_embed()").fetchone() == (False,)
    assert warnings(notices) == []


@pytest.mark.parametrize(
    ("language", "rule", "question"),
    [
        ("english", "Never restart the web servers at night.", "Can we restart the web servers tonight?"),
        ("turkish", "Sunucuları gece asla yeniden başlatma.", "Sunucuları bu gece yeniden başlatabilir miyiz?"),
    ],
)
def test_the_memory_api_works_on_full_text(plain, app, language, rule, question):
    conn, notices, tenant = app
    with psycopg.connect(plain.dsn(), autocommit=True) as admin:
        admin.execute("UPDATE cogmem.tenants SET language = %s WHERE tenant = %s", (language, tenant))
    # Routed without an embedding the model may keep a rule in fresh (it is conservative); here the rule is
    # given its ring, and what is under test is that every call works on full text.
    memory_id, ring, action = conn.execute(
        "SELECT memory_id, ring, action FROM cogmem.remember(%s, %s, 'dos_and_donts')", (tenant, rule)
    ).fetchone()
    assert (ring, action) == ("dos_and_donts", "created")
    assert conn.execute("SELECT model FROM cogmem.classify(%s)", (rule,)).fetchone() == ("cues",)
    assert conn.execute(
        "SELECT embedded FROM cogmem.memory_overview WHERE memory_id = %s", (memory_id,)
    ).fetchone() == (False,)

    items = conn.execute("SELECT layer, memory_id FROM cogmem.recall(%s, %s)", (tenant, question)).fetchall()
    assert ("dos_and_donts", memory_id) in items

    guard = conn.execute(
        "SELECT kind, memory_id FROM cogmem.guard_check(%s, 'server', %s)", (tenant, question)
    ).fetchall()
    assert ("rule", memory_id) in guard

    learning = conn.execute(
        "SELECT learning_id, errors FROM cogmem.report_error(%s, 'server', %s)",
        (tenant, "Restarted web-1 at night; checkout broke."),
    ).fetchone()
    assert learning[1] == 1

    turn = conn.execute(
        "SELECT memory_id, action FROM cogmem.observe(%s, 'c1', 'user', 'I prefer short answers in the morning.')",
        (tenant,),
    ).fetchone()
    assert turn[1] == "created"
    assert len(warnings(notices)) == 1  # one session, one warning


def test_a_gut_release_says_what_the_server_lacks_and_charges_nothing(plain):
    with psycopg.connect(plain.dsn(), autocommit=True) as admin:
        with pytest.raises(psycopg.errors.FeatureNotSupported) as refused:
            admin.execute("SELECT * FROM cogmem.gut_release(0.5)")
        assert "needs cogmem_pg and OpenDP in the server's Python" in refused.value.diag.message_primary
        assert refused.value.diag.message_hint.startswith("pip install 'cogmem-pg[gut]'")
        assert admin.execute("SELECT count(*) FROM cogmem.gut_releases").fetchone() == (0,)


def test_an_administrator_loads_presets_and_the_app_gets_them_in_its_language(plain, app):
    """The BIOS on a DBA's server: a login that is cogmem_admin but no superuser loads and subscribes; the
    application's Turkish tenant then gets the rules, in Turkish, from recall and guard_check."""
    from cogmem_pg.bios import counts, load_preset, read_preset, subscribe

    conn, _, tenant = app
    role = f"plain_admin_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(plain.dsn(), autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {role} LOGIN IN ROLE cogmem_admin")
        owner.execute("UPDATE cogmem.tenants SET language = 'turkish' WHERE tenant = %s", (tenant,))
    try:
        with psycopg.connect(plain.dsn().replace("user=postgres", f"user={role}"), autocommit=True) as admin:
            preset, changes = load_preset(admin, "operations")
            assert counts(changes)["add"] == len(preset.rules) or counts(changes)["keep"] == len(preset.rules)
            subscribe(admin, "operations", tenant)
        conn.execute("SET cogmem.embed = off")
        question = "Nginx ayarını değiştirdim, sunucuyu şimdi yeniden başlatayım mı?"
        texts = {
            r[0]
            for r in conn.execute("SELECT content FROM cogmem.recall(%s, %s) WHERE layer = 'bios'", (tenant, question))
        }
        turkish = {r["translations"]["turkish"] for r in read_preset("operations").rules if r["category"] == "server"}
        assert turkish <= texts
        guard = {
            r[0]
            for r in conn.execute(
                "SELECT content FROM cogmem.guard_check(%s, 'server', %s) WHERE kind = 'bios'", (tenant, question)
            )
        }
        assert any(t in g for g in guard for t in turkish)
    finally:
        with psycopg.connect(plain.dsn(), autocommit=True) as owner:
            owner.execute(f"DROP OWNED BY {role}")
            owner.execute(f"DROP ROLE {role}")
