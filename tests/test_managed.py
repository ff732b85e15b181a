"""A managed-like server (RDS, Cloud SQL, Azure, Supabase, Neon; issue 49): the installing role is no
superuser but may create roles, the platform created vector and pgcrypto, and PL/Python is not for it.
A cluster of its own, so that the installer creates cogmem's roles itself, as it would there.

Install; then an application login remembers, recalls and gives feedback through the client and SQL, a
night runs (from SQL, `cogmem consolidate` and pg_cron), a person is erased, and the dashboard shows it all
to the logins a DBA would give it. Only the server's embedding and the Gut's release need PL/Python.
"""

from __future__ import annotations

import html
import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import psycopg
import pytest
from click.testing import CliRunner
from psycopg.conninfo import make_conninfo

from cogmem_pg.cli import main
from cogmem_pg.client import Client
from cogmem_pg.cluster import Cluster, temporary_cluster
from cogmem_pg.dashboard import ServerThread
from cogmem_pg.migrate import InstallError, head_revision, install

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def as_role(dsn: str, role: str) -> str:
    return make_conninfo(dsn, user=role)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    port = int(os.environ.get("COGMEM_TEST_PORT", "5439")) + 17
    # pg_cron preloaded by the platform, serving the managed database, as platforms that offer it set it up.
    settings = {"cron.database_name": "'app'"}
    with temporary_cluster(port, prefix="cogmem-managed-", settings=settings, server_python=False) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def managed(cluster) -> Iterator[str]:
    """The DSN of database app, owned by the role installer (LOGIN CREATEROLE), vector, pgcrypto and pg_cron
    made by the platform's superuser; cogmem installed by installer."""
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as platform:
        platform.execute("CREATE ROLE installer LOGIN CREATEROLE")
        platform.execute("CREATE DATABASE app OWNER installer")
    with psycopg.connect(cluster.dsn("app"), autocommit=True) as platform:
        platform.execute("CREATE EXTENSION vector")
        platform.execute("CREATE EXTENSION pgcrypto")
        platform.execute("CREATE EXTENSION pg_cron")  # its schema stays the platform's until it grants it
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
            stored = structured(await mcp.call_tool("remember", {"content": "Gift orders ship without an invoice."}))
            recalled = structured(await mcp.call_tool("recall", {"message": "Does a gift order get an invoice?"}))
            return stored, recalled

        stored, recalled = talk(server, calls)
        assert stored["memory_id"] and "Gift orders ship without an invoice." in json.dumps(recalled)


# --- The night from pg_cron ------------------------------------------------------------------------------
def test_pg_cron_runs_the_night_as_the_installer_once_the_platform_grants_its_schema(managed, cluster):
    with psycopg.connect(managed, autocommit=True) as conn:
        conn.execute("SELECT cogmem.create_tenant('night_shift')")  # a night only the job will run
        conn.execute("SELECT cogmem.remember('night_shift', 'Close the till at 22:00 and count it twice.')")
        # The platform created pg_cron; until it grants its schema, the error says who must grant what.
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
            conn.execute("SELECT cogmem.schedule_nightly()")
        assert refused.value.diag.message_primary == 'role "installer" may not use pg_cron in database "app"'
        assert refused.value.diag.message_hint == (
            "pg_cron's schema is its creator's (on a managed server, the platform's): its administrator must run "
            "GRANT USAGE ON SCHEMA cron TO installer; or run `cogmem consolidate` from any machine's cron instead."
        )
        doctor = CliRunner().invoke(main, ["--dsn", managed, "doctor"]).output
        assert "warn pg_cron    installed, but role installer may not use it" in doctor
    with psycopg.connect(cluster.dsn("app"), autocommit=True) as platform:
        platform.execute("GRANT USAGE ON SCHEMA cron TO installer")  # the platform's step for its admin role
    with psycopg.connect(managed, autocommit=True) as conn:
        try:
            job = conn.execute("SELECT cogmem.schedule_nightly('* * * * *')").fetchone()[0]
            assert conn.execute(
                "SELECT username, database, command FROM cron.job WHERE jobid = %s", (job,)
            ).fetchone() == (
                "installer",
                "app",
                "CALL cogmem.consolidate_nightly()",
            )
            doctor = CliRunner().invoke(main, ["--dsn", managed, "doctor"]).output
            assert "ok   pg_cron    installed" in doctor and "ok   schedule   cogmem-nightly scheduled" in doctor
            # The next minute's run, as the installer: it consolidates night_shift and records the run.
            night = """SELECT r.status, r.tenant, d.status FROM cogmem.consolidation_nights AS n
                       JOIN cogmem.consolidation_runs AS r ON r.run_id = n.run_id
                       JOIN cron.job_run_details AS d ON d.jobid = %s AND d.start_time <= r.started_at
                       WHERE n.tenant = 'night_shift' ORDER BY d.start_time DESC LIMIT 1"""
            deadline, ran = time.monotonic() + 75, None
            while time.monotonic() < deadline and ran != ("finished", None, "succeeded"):
                time.sleep(2)
                ran = conn.execute(night, (job,)).fetchone()
            assert ran == ("finished", None, "succeeded"), conn.execute(
                "SELECT status, return_message FROM cron.job_run_details"
            ).fetchall()
        finally:
            conn.execute("SELECT cogmem.unschedule_nightly()")
        assert conn.execute("SELECT count(*) FROM cron.job").fetchone() == (0,)


def test_outside_pg_crons_database_the_hint_names_it_though_the_installer_may_not_read_the_setting(managed, cluster):
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as platform:
        platform.execute("CREATE DATABASE crm OWNER installer")
    with psycopg.connect(cluster.dsn("crm"), autocommit=True) as platform:
        platform.execute("CREATE EXTENSION vector")
        platform.execute("CREATE EXTENSION pgcrypto")
    crm = as_role(cluster.dsn("crm"), "installer")
    assert install(crm) == head_revision()
    with psycopg.connect(crm, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # pg_cron's setting is a superuser's
            conn.execute("SHOW cron.database_name")
        with pytest.raises(psycopg.errors.UndefinedObject) as refused:
            conn.execute("SELECT cogmem.schedule_nightly()")
        assert refused.value.diag.message_primary == 'pg_cron is not installed in database "crm"'
        assert refused.value.diag.message_hint == (
            "pg_cron runs in database app (cron.database_name). Either CREATE EXTENSION pg_cron there and run "
            "cogmem in it, or run there: SELECT cron.schedule_in_database('cogmem-nightly', '0 3 * * *', "
            "'CALL cogmem.consolidate_nightly()', 'crm');"
        )


# --- The dashboard ---------------------------------------------------------------------------------------
@contextmanager
def dashboard(dsn: str) -> Iterator[httpx.Client]:
    """`cogmem dashboard` on DSN (served from a thread, as the command serves it), and a client of it."""
    server = ServerThread(dsn)
    try:
        with httpx.Client(base_url=server.url) as http:
            yield http
    finally:
        server.stop()


def cells(page: str, table: str, key: str) -> list[str]:
    """The text of column KEY of the table TABLE, as the page shows it."""
    body = page.split(f'<table id="{table}">', 1)[1].split("</table>", 1)[0]
    found = re.findall(rf'<td data-key="{key}">(.*?)</td>', body, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in found]


def chart(page: str, name: str) -> dict[str, list]:
    """A chart's data as the page hands it to Chart.js: {dataset: values}."""
    spec = json.loads(re.search(rf'<script type="application/json" id="spec-{name}">(.*?)</script>', page, re.S)[1])
    return {d["label"]: d["data"] for d in spec["datasets"]}


DASHBOARD_PAGES = ("/", "/tenants/shop", "/recall", "/recall?tenant=shop", "/nights", "/nights?tenant=shop",
                   "/audit", "/audit/verify?tenant=shop", "/gut", "/bios")  # fmt: skip


def test_the_dashboard_shows_the_managed_tenant_to_the_logins_a_dba_gives_it(managed):
    """The dashboard served as the installer, as an operator login (admin, auditor, Gut), as the shop's
    application and as a BI login: each sees of the shop's memories, recalls and night what it may read."""
    with psycopg.connect(managed, autocommit=True) as conn:
        conn.execute("CREATE ROLE ops LOGIN IN ROLE cogmem_admin, cogmem_auditor, cogmem_gut")
        conn.execute("CREATE ROLE shop_bi LOGIN IN ROLE cogmem_bi")
        conn.execute("SELECT cogmem.grant_tenant('shop_bi', 'shop')")
        conn.execute("SELECT cogmem.create_tenant('back_office')")  # no login of the shop's reaches it
        conn.execute("SELECT cogmem.remember('back_office', 'Payroll runs on the 25th.')")
    rule = "Never refund an order in cash."
    with Client(as_role(managed, "shop_app")) as client:
        client.remember("shop", rule, "rule")
        recall_id = client.recall("shop", "A customer wants a cash refund for order 77").recall_id
        client.feedback(recall_id, 1.0)
    night = CliRunner().invoke(main, ["--dsn", managed, "consolidate", "--tenant", "shop"])  # a cron line's night
    assert night.exit_code == 0, night.output
    assert CliRunner().invoke(main, ["--dsn", managed, "audit", "seal"]).exit_code == 0

    def read(role: str, query: str) -> list[tuple]:
        with psycopg.connect(as_role(managed, role), autocommit=True) as conn:
            return conn.execute(query).fetchall()

    [(last_night,)] = read(
        "installer", "SELECT max(night)::text FROM cogmem.consolidation_nights WHERE tenant = 'shop'"
    )
    for role in ("installer", "ops"):  # those who read everything
        with dashboard(as_role(managed, role)) as http:
            pages = {path: http.get(path) for path in (*DASHBOARD_PAGES, f"/audit?recall={recall_id}")}
        for path, response in pages.items():
            assert response.status_code == 200, (role, path)
            assert "This role may not read" not in response.text and "Not available" not in response.text, (role, path)
        tenants = pages["/"].text
        assert f"{role} · every tenant" in tenants
        assert sorted(cells(tenants, "tenants", "tenant")) == [
            t for (t,) in read(role, "SELECT tenant FROM cogmem.tenants ORDER BY 1")
        ]
        shop = cells(tenants, "tenants", "tenant").index("shop")
        census = dict(read(role, "SELECT ring, memories::text FROM cogmem.memory_census WHERE tenant = 'shop'"))
        assert {ring: cells(tenants, "tenants", ring)[shop] for ring in census} == census
        assert cells(tenants, "tenants", "night")[shop] == last_night
        strength = chart(pages["/tenants/shop"].text, "strength")
        [(held,)] = read(role, "SELECT count(*) FROM cogmem.memory_overview WHERE tenant = 'shop'")
        assert sum(map(sum, strength.values())) == held
        recall = pages["/recall?tenant=shop"].text
        outcomes = read(role, "SELECT recalls::text, explicit::text FROM cogmem.outcome_stats WHERE tenant = 'shop'")
        shown = list(zip(cells(recall, "outcomes", "recalls"), cells(recall, "outcomes", "explicit"), strict=True))
        assert shown == outcomes
        assert sum(chart(recall, "recalls")["recalls"]) == int(outcomes[0][0])
        assert last_night in cells(pages["/nights?tenant=shop"].text, "nights", "night")
        verified = pages["/audit/verify?tenant=shop"].text
        assert cells(verified, "verify", "tenant") == ["shop"] and cells(verified, "verify", "ok") == ["yes"]
        assert "dos_and_donts" in cells(pages[f"/audit?recall={recall_id}"].text, "explain", "layer")

    with dashboard(as_role(managed, "shop_app")) as http:
        tenants, own, nights = http.get("/").text, http.get("/tenants/shop").text, http.get("/nights").text
        assert http.get("/tenants/back_office").status_code == 404
    assert cells(tenants, "tenants", "tenant") == ["shop"] and rule in own and "Payroll" not in tenants + own
    assert "This role may not read this: permission denied for table consolidation_nights" in nights

    with dashboard(as_role(managed, "shop_bi")) as http:
        tenants = http.get("/").text
    census = read("shop_bi", "SELECT tenant, ring, memories::text FROM cogmem.memory_census ORDER BY 1, 2")
    assert census and {t for t, _, _ in census} == {"shop"}
    assert {ring: cells(tenants, "tenants", ring)[0] for _, ring, _ in census} == {r: n for _, r, n in census}
    assert rule not in tenants  # aggregates, no memory text
