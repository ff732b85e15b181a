"""A managed-like server (RDS, Cloud SQL, Azure, Supabase, Neon; issue 49): the installing role is no
superuser but may create roles, the platform created vector and pgcrypto, and PL/Python is not for it.
A cluster of its own, so that the installer creates cogmem's roles itself, as it would there.

Install; then an application login remembers, recalls and gives feedback through the client and SQL, a
night runs, a person is erased. Only the server's embedding and the Gut's release need PL/Python.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import psycopg
import pytest
from click.testing import CliRunner
from psycopg.conninfo import make_conninfo

from cogmem_pg.cli import main
from cogmem_pg.client import Client
from cogmem_pg.cluster import Cluster, temporary_cluster
from cogmem_pg.migrate import InstallError, head_revision, install

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def as_role(dsn: str, role: str) -> str:
    return make_conninfo(dsn, user=role)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    port = int(os.environ.get("COGMEM_TEST_PORT", "5439")) + 17
    with temporary_cluster(port, prefix="cogmem-managed-", server_python=False) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def managed(cluster) -> Iterator[str]:
    """The DSN of database app, owned by the role installer (LOGIN CREATEROLE), vector and pgcrypto made
    by the platform's superuser; cogmem installed by installer."""
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as platform:
        platform.execute("CREATE ROLE installer LOGIN CREATEROLE")
        platform.execute("CREATE DATABASE app OWNER installer")
    with psycopg.connect(cluster.dsn("app"), autocommit=True) as platform:
        platform.execute("CREATE EXTENSION vector")
        platform.execute("CREATE EXTENSION pgcrypto")
    dsn = as_role(cluster.dsn("app"), "installer")
    assert install(dsn) == head_revision()
    with psycopg.connect(dsn, autocommit=True) as installer:
        # The DBA's steps (docs/install.md): itself an admin, an application login that reaches one tenant.
        installer.execute("GRANT cogmem_admin TO installer")
        installer.execute("CREATE ROLE shop_app LOGIN IN ROLE cogmem_app")
        installer.execute("SELECT cogmem.create_tenant('shop')")
        installer.execute("SELECT cogmem.grant_tenant('shop_app', 'shop')")
    yield dsn


def test_the_installer_is_no_superuser_and_has_no_plpython(managed):
    with psycopg.connect(managed, autocommit=True) as conn:
        assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (False,)
        assert conn.execute("SELECT count(*) FROM pg_language WHERE lanname = 'plpython3u'").fetchone() == (0,)
        assert conn.execute("SELECT cogmem.server_can_embed()").fetchone() == (False,)
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="PL/Python") as raised:
            conn.execute("SELECT cogmem._gut_draw('{}', '{}')")
        assert "CREATE EXTENSION plpython3u" in (raised.value.diag.message_hint or "")


def test_installing_again_changes_nothing_and_doctor_says_what_is_off(managed):
    assert install(managed) == head_revision()
    result = CliRunner().invoke(main, ["--dsn", managed, "doctor"])
    assert "ok   schema" in result.output and "ok   extension  vector" in result.output
    assert "warn extension  plpython3u missing: the server does not embed" in result.output


def test_an_application_login_remembers_recalls_and_gives_feedback(managed):
    app = as_role(managed, "shop_app")
    rule = "Never ship an order before the payment has cleared."
    with Client(app) as client:  # the client embeds
        stored = client.remember("shop", rule, "rule", source={"person": "ayse"})
        assert stored.ring == "dos_and_donts" and stored.action == "created"
        client.remember("shop", "Ayşe's orders go to the Kadıköy depot.", source={"person": "ayse"})
        recalled = client.recall("shop", "Can we ship order 1142 now?", person="ayse")
        assert rule in [i.content for i in recalled.items if i.layer == "dos_and_donts"]
        assert client.feedback(recalled.recall_id, 1.0) >= 1
    with psycopg.connect(app, autocommit=True) as conn:  # plain SQL, no vector at all
        conn.execute("SELECT cogmem.remember('shop', 'The Kadıköy depot closes at 18:00.')")
        contents = [
            r[0] for r in conn.execute("SELECT content FROM cogmem.recall('shop', 'When does the depot close?')")
        ]
        assert "The Kadıköy depot closes at 18:00." in contents
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # the API is the only way in
            conn.execute("DELETE FROM cogmem.memories")


def test_a_night_runs_and_a_person_is_erased(managed):
    with psycopg.connect(managed, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM cogmem.consolidate(now(), 'shop')").fetchone()[0] >= 0
        conn.execute(
            "SELECT cogmem.remember('shop', 'Call Ayşe on 0532 000 00 00.', source => %s::jsonb)",
            ('{"person": "ayse"}',),
        )
        erased = conn.execute("SELECT * FROM cogmem.erase_person('shop', 'ayse', 'her request')").fetchall()
        assert erased
        left = conn.execute("SELECT count(*) FROM cogmem.memories WHERE tenant = 'shop' AND person = 'ayse'")
        assert left.fetchone() == (0,)


def test_an_extension_the_installer_may_not_create_is_named_with_who_must(managed, cluster):
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as platform:
        platform.execute("CREATE DATABASE other")  # the platform's: the installer may connect, not create
    with pytest.raises(InstallError, match="extension vector is not created in database 'other', and role 'installer'"):
        install(as_role(cluster.dsn("other"), "installer"))


def test_documents_and_the_langgraph_store_work_for_the_application_login(managed):
    """Resources embedded by the client, and LangGraph's store, where the server cannot embed."""
    from cogmem_pg.langgraph import CogmemStore

    with Client(as_role(managed, "shop_app")) as client:
        added = client.add_resource("shop", "Returns policy", "# Returns\n\nRefunds within 14 days, with the receipt.")
        assert added.chunks >= 1
        recalled = client.recall("shop", "Can a customer get a refund after ten days?")
        assert any(i.layer == "resources" and "14 days" in i.content for i in recalled.items)
        store = CogmemStore(client, "shop")
        store.put(("shop", "prefs"), "ayse", {"content": "Ayşe wants her invoices in Turkish."})
        assert store.get(("shop", "prefs"), "ayse").value["content"] == "Ayşe wants her invoices in Turkish."
        assert [i.key for i in store.search(("shop", "prefs"), query="which language for invoices?")] == ["ayse"]


def test_an_agent_remembers_and_recalls_through_mcp(managed):
    from cogmem_pg.mcp_server import build_server
    from tests.test_mcp import structured, talk

    with Client(as_role(managed, "shop_app")) as client:
        server = build_server(client, "shop", None, None)

        async def calls(mcp):
            stored = structured(await mcp.call_tool("remember", {"text": "Gift orders ship without an invoice."}))
            recalled = structured(await mcp.call_tool("recall", {"message": "Does a gift order get an invoice?"}))
            return stored, recalled

        stored, recalled = talk(server, calls)
        assert stored["memory_id"] and "Gift orders ship without an invoice." in json.dumps(recalled)
