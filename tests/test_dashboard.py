"""The dashboard as a user sees it: a real Chromium (Debian's package, driven by Playwright) against a
dashboard server on the test cluster, holding the demo's story and a few nights, a Gut release, an erasure
and a second tenant who speaks Turkish.

Screenshots of every page are taken; with COGMEM_SCREENSHOTS=DIR (`make screenshots`) they are written
there, which is how docs/dashboard.md's pictures are made."""

from __future__ import annotations

import datetime
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from cogmem_pg.client import Client
from cogmem_pg.dashboard import ServerThread
from cogmem_pg.dashboard.app import create_app
from cogmem_pg.dashboard.queries import RINGS
from cogmem_pg.demo import run_demo
from cogmem_pg.migrate import install
from tests.conftest import CLUSTER
from tests.test_gut import BACKUP, BACKUP_TEXTS, generous, teams

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> Deploys need a ticket'
ODD_NAME = "R&D/<i>ops</i> 100%"  # a tenant's name may hold anything but control characters
TURKISH = [
    "Dün akşam yine uzun bir gün oldu, müşteri toplantısı iki saat sürdü ve sonunda hiçbir karar çıkmadı.",
    "Asla cuma günü production'a deploy yapmayın, geçen sefer bütün hafta sonu kayıp gitti.",
    "Yedekleme her gece 02:00'de alınıyor ve 30 gün saklanıyor.",
]
QUESTIONS = [
    ("kuzey", "production deploy cuma yapılabilir mi"),
    ("kuzey", "yedekleme ne zaman alınıyor"),
    ("acme", "can we restart the servers tonight"),
    ("acme", "when do the invoices go out"),
    ("acme", "what happened when the disk filled up"),
    ("kuzey", "dün toplantıda ne karar çıktı"),
]


# --- The data: the demo, and what a few days of use leave behind -----------------------------------------
@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    name = f"dash_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(CLUSTER.dsn("postgres"), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    dsn = CLUSTER.dsn(name)
    install(dsn)
    _history(dsn)
    yield dsn
    with psycopg.connect(CLUSTER.dsn("postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _history(dsn: str) -> None:
    assert run_demo(dsn, echo=lambda _: None) == 0
    with Client(dsn) as client:
        client.create_tenant("kuzey", "turkish")
        for text in TURKISH:
            client.remember("kuzey", text, source={"who": "deniz", "conversation": "sohbet-1"})
        client.remember("acme", HOSTILE, source={"who": "mallory"})
        client.create_tenant(ODD_NAME)
        client.remember(ODD_NAME, "Research keeps its notes in the lab wiki.")
        for n, (tenant, message) in enumerate(QUESTIONS * 2):
            result = client.recall(tenant, message, conversation=f"talk-{n}")
            if n % 3:
                client.feedback(result.recall_id, 1.0 if n % 4 else 0.0, tenant=tenant)
    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute("SET cogmem.embed = 'off'")
        # A week and a half of recalls: the API stamps now, so the history is set back by hand.
        db.execute(
            "UPDATE cogmem.recalls "
            "SET created_at = created_at - make_interval(days => abs(hashtext(recall_id::text)) % 10)"
        )
        generous(db, max_patterns_per_tenant=1)  # each team backs its backup lesson, not its secret
        teams(db, 6, [(BACKUP_TEXTS, BACKUP, 6)])
        db.execute("SELECT * FROM cogmem.gut_release(900)")
        for days_ago in (3, 2, 1, 0):
            db.execute("SELECT cogmem.consolidate(now() - make_interval(days => %s))", (days_ago,))
        db.execute("SELECT cogmem.erase_subject('acme', 'maria', 'asked to be forgotten')")
        # A never-cut ring over its allocation, for the Recall page's overflow.
        db.execute("""SELECT cogmem.configure_tenant('kuzey', '{"token_allocation": 20}', 'dos_and_donts')""")
        db.execute("SELECT cogmem.seal_audit()")


# --- Servers and the browser -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def roles(database: str) -> Iterator[dict[str, str]]:
    """Login roles as people use them: an operator (administrator, auditor and Gut), an application granted
    only acme, and a BI tool. Each maps to its DSN."""
    suffix = uuid.uuid4().hex[:8]
    made = {
        "operator": ("cogmem_admin, cogmem_auditor, cogmem_gut", None),
        "acme_app": ("cogmem_app", "acme"),
        "bi": ("cogmem_bi", "*"),
        "gut": ("cogmem_gut", None),
        "acme_auditor": ("cogmem_auditor", "acme"),
    }
    dsns = {}
    with psycopg.connect(database, autocommit=True) as db:
        for kind, (groups, tenant) in made.items():
            role = f"dash_{kind}_{suffix}"
            db.execute(f"CREATE ROLE {role} LOGIN IN ROLE {groups}")
            if tenant:
                db.execute("SELECT cogmem.grant_tenant(%s, %s)", (role, tenant))
            dsns[kind] = database.replace("user=postgres", f"user={role}")
    yield dsns
    with psycopg.connect(database, autocommit=True) as db:
        for kind in made:
            db.execute(f"DROP OWNED BY dash_{kind}_{suffix}")
            db.execute(f"DROP ROLE dash_{kind}_{suffix}")


@pytest.fixture(scope="module")
def servers(roles: dict[str, str]) -> Iterator[dict[str, ServerThread]]:
    running = {kind: ServerThread(dsn) for kind, dsn in roles.items()}
    yield running
    for server in running.values():
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("COGMEM_CHROMIUM") or shutil.which("chromium")
    assert chromium, "Debian's chromium is missing: scripts/setup.sh --browser installs it"
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=["--disable-dev-shm-usage"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    target = os.environ.get("COGMEM_SCREENSHOTS")
    path = Path(target) if target else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


class Visit:
    """A page as Chromium showed it: console errors, each chart's data and the tables' cells."""

    def __init__(self, browser, url: str) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.response = self.page.goto(url)
        if self.response.status == 200:
            self.page.wait_for_selector("body[data-charts=drawn]")

    def charts(self) -> dict[str, dict]:
        return self.page.evaluate(
            """Object.fromEntries(Object.values(Chart.instances).map(c => [c.canvas.id.slice(6), {
                   labels: c.data.labels, data: Object.fromEntries(c.data.datasets.map(d => [d.label, d.data]))}]))"""
        )

    def column(self, table: str, key: str) -> list[str]:
        return self.page.locator(f"#{table} td[data-key={key}]").all_inner_texts()

    def rows(self, table: str, *keys: str) -> list[tuple[str, ...]]:
        return list(zip(*(self.column(table, key) for key in keys), strict=True))

    def close(self) -> None:
        self.page.close()


def shown_census(visit: Visit) -> list[tuple[str, str, str]]:
    """The tenants table as (tenant, ring, memories) for each ring that holds any, like memory_census."""
    shown = visit.rows("tenants", "tenant", *RINGS)
    return sorted((row[0], ring, n) for row in shown for ring, n in zip(RINGS, row[1:], strict=True) if n != "0")


def as_role(dsn: str, query: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(query, params).fetchall()


def _recall_id(database: str) -> str:
    return str(as_role(database, "SELECT recall_id FROM cogmem.recalls WHERE tenant = 'acme' LIMIT 1")[0][0])


# --- Every page, in the browser --------------------------------------------------------------------------
PAGES = {
    "tenants": "/",
    "tenant": "/tenants/acme",
    "tenant-turkish": "/tenants/kuzey",
    "recall": "/recall",
    "nights": "/nights",
    "night": "/nights/{night}",
    "audit": "/audit?recall={recall}",
    "audit-verify": "/audit/verify",
    "gut": "/gut",
    "bios": "/bios",
}


@pytest.mark.parametrize("name", PAGES)
def test_every_page_loads_with_data_in_every_chart_and_no_console_error(browser, servers, database, shots, name):
    # The night that decided most, and a recall of the demo's.
    night = as_role(
        database,
        "SELECT night FROM cogmem.consolidation_decisions WHERE decision <> 'protect' ORDER BY memories DESC LIMIT 1",
    )[0][0]
    path = PAGES[name].format(night=night, recall=_recall_id(database) if "{recall}" in PAGES[name] else "")
    visit = Visit(browser, servers["operator"].url + path)
    try:
        assert visit.response.status == 200
        assert visit.errors == []
        for chart_name, chart in visit.charts().items():
            points = [v for values in chart["data"].values() for v in values if v]
            assert points, f"chart {chart_name} of {path} has no data point"
        assert "This role may not read" not in visit.page.content()  # the operator reads everything
        visit.page.screenshot(path=shots / f"{name}.png", full_page=True)
    finally:
        visit.close()


def test_the_numbers_shown_are_what_the_views_return(browser, servers, roles):
    operator = roles["operator"]
    visit = Visit(browser, servers["operator"].url + "/")
    census = as_role(operator, "SELECT tenant, ring, memories::text FROM cogmem.memory_census ORDER BY 1, 2")
    assert shown_census(visit) == census
    chart = visit.charts()["rings"]
    for tenant, ring, memories in census:
        assert chart["data"][ring][chart["labels"].index(tenant)] == int(memories)
    visit.close()

    visit = Visit(browser, servers["operator"].url + "/nights")
    decisions = as_role(
        operator,
        "SELECT night::text, decision, sum(memories)::int FROM cogmem.consolidation_report "
        "WHERE decision <> 'protect' GROUP BY 1, 2 HAVING sum(memories) > 0",
    )
    chart = visit.charts()["decisions"]
    assert len(chart["labels"]) == 4 and decisions  # four nights, some of them deciding something
    for night, decision, memories in decisions:
        assert chart["data"][decision][chart["labels"].index(night)] == memories
    visit.close()

    visit = Visit(browser, servers["operator"].url + "/tenants/acme")
    held = as_role(operator, "SELECT count(*) FROM cogmem.memory_overview WHERE tenant = 'acme'")[0][0]
    assert sum(v for values in visit.charts()["strength"]["data"].values() for v in values) == held
    visit.close()

    visit = Visit(browser, servers["operator"].url + "/recall")
    overflow = as_role(operator, "SELECT tenant, layer, over::text FROM cogmem.never_cut_overflow ORDER BY 1, 2")
    assert sorted(visit.rows("overflow", "tenant", "layer", "over")) == overflow and overflow
    outcomes = as_role(operator, "SELECT tenant, recalls::text, explicit::text FROM cogmem.outcome_stats ORDER BY 1")
    assert visit.rows("outcomes", "tenant", "recalls", "explicit") == outcomes
    visit.close()

    visit = Visit(browser, servers["operator"].url + "/gut")
    ledger = as_role(operator, "SELECT releases::text, published::text FROM cogmem.gut_ledger")
    assert visit.rows("ledger", "releases", "published") == ledger and ledger[0][1] != "0"
    assert visit.column("patterns", "support") == [
        str(s) for (s,) in as_role(operator, "SELECT support FROM cogmem.gut_patterns ORDER BY support DESC")
    ]
    visit.close()

    visit = Visit(browser, servers["operator"].url + "/bios")
    coverage = as_role(operator, "SELECT preset, category, rules::text FROM cogmem.bios_coverage ORDER BY 1, 2")
    assert visit.rows("coverage", "preset", "category", "rules") == coverage
    visit.close()


def test_a_night_bar_opens_that_nights_decisions_with_their_reasons(browser, servers):
    visit = Visit(browser, servers["operator"].url + "/nights")
    # Where Chart.js drew the first bar with a height, on the page.
    night, decision, x, y = visit.page.evaluate(
        """(() => { const c = Object.values(Chart.instances).find(c => c.canvas.id === 'chart-decisions');
                   const i = c.data.datasets.findIndex(d => d.data.some(v => v > 0));
                   const n = c.data.datasets[i].data.findIndex(v => v > 0);
                   const bar = c.getDatasetMeta(i).data[n], r = c.canvas.getBoundingClientRect();
                   return [c.data.labels[n], c.data.datasets[i].label, r.left + bar.x, r.top + (bar.y + bar.base) / 2];
                 })()"""
    )
    with visit.page.expect_navigation():
        visit.page.mouse.click(x, y)
    assert visit.page.url.endswith(f"/nights/{night}?decision={decision}")
    visit.page.wait_for_selector("#events")
    reasons = visit.column("events", "detail")
    assert reasons and all(reasons)
    visit.close()


def test_a_recall_id_typed_in_is_explained_and_a_wrong_one_is_said_so(browser, servers, database):
    visit = Visit(browser, servers["operator"].url + "/audit")
    visit.page.fill("input[name=recall]", _recall_id(database))
    visit.page.click("button:has-text('Explain')")
    visit.page.wait_for_selector("#explain")
    assert {"bios", "dos_and_donts"} <= set(visit.column("explain", "layer"))
    visit.page.fill("input[name=recall]", str(uuid.uuid4()))  # well formed, and no recall of anyone's
    visit.page.click("button:has-text('Explain')")
    assert "no such recall" in visit.page.inner_text("#explain")
    visit.page.fill("input[name=recall]", "not-a-uuid")
    visit.page.click("button:has-text('Explain')")
    assert "not a recall id" in visit.page.inner_text("#explain")
    visit.close()


def test_memory_text_is_shown_as_text_never_run(browser, servers):
    visit = Visit(browser, servers["operator"].url + "/tenants/acme")
    assert HOSTILE.split(">")[0] + ">" in visit.page.inner_text("body")
    assert "&lt;script&gt;window.pwned" in visit.page.content()
    assert visit.page.locator("img[src=x]").count() == 0
    assert visit.page.evaluate("window.pwned") is None
    assert "script-src 'self'" in visit.response.headers["content-security-policy"]
    assert visit.errors == []
    visit.close()


# --- Who sees what ----------------------------------------------------------------------------------------
def test_a_tenants_role_sees_its_tenant_and_nothing_of_another(browser, servers):
    url = servers["acme_app"].url
    visit = Visit(browser, url + "/")
    assert visit.column("tenants", "tenant") == ["acme"]
    assert visit.errors == []
    visit.close()
    with httpx.Client(base_url=url) as http:
        for path in (
            "/tenants/kuzey",
            "/tenants/nobody",
            "/audit/verify?tenant=kuzey",
            "/recall?tenant=kuzey",
            "/nights?tenant=kuzey",
            f"/nights/{datetime.date.today()}?tenant=kuzey",
        ):
            response = http.get(path)
            assert response.status_code == 404, path
            assert "deploy" not in response.text.lower() and "yedekleme" not in response.text.lower()
        for path in ("/recall", "/nights", "/audit", "/tenants/acme"):
            response = http.get(path)
            assert response.status_code == 200
            assert "kuzey" not in response.text, path
            assert not any(t.split()[0] in response.text for t in TURKISH)


def test_an_auditor_of_one_tenant_sees_its_trail_and_nothing_of_another(servers, database):
    night = as_role(database, "SELECT max(night) FROM cogmem.consolidation_nights")[0][0]
    with httpx.Client(base_url=servers["acme_auditor"].url) as http:
        for path in (
            "/tenants/kuzey",
            "/audit/verify?tenant=kuzey",
            "/nights?tenant=kuzey",
            f"/nights/{night}?tenant=kuzey",
        ):
            assert http.get(path).status_code == 404, path
        for path in ("/nights", f"/nights/{night}", "/audit", "/audit/verify?tenant=acme", "/tenants/acme"):
            response = http.get(path)
            assert response.status_code == 200, path
            assert "kuzey" not in response.text and "team-0" not in response.text, path
        audit = http.get("/audit").text
        assert "for roles that reach every tenant" in audit  # archived months count every tenant's rows
        verified = http.get("/audit/verify?tenant=acme").text
        assert "acme" in verified and ">yes<" in verified


def test_a_bi_role_sees_aggregates_and_is_told_what_it_may_not_read(browser, servers, roles):
    visit = Visit(browser, servers["bi"].url + "/")
    assert visit.response.status == 200 and visit.errors == []
    census = as_role(roles["bi"], "SELECT tenant, ring, memories::text FROM cogmem.memory_census ORDER BY 1, 2")
    assert shown_census(visit) == census and census
    assert "This role may not read" in visit.page.inner_text("#last-night")
    visit.close()
    visit = Visit(browser, servers["bi"].url + "/tenants/acme")
    assert visit.response.status == 200 and visit.errors == []
    assert "Never restart" not in visit.page.content()  # aggregates only: no memory text
    visit.close()


# --- The door ---------------------------------------------------------------------------------------------
def test_with_a_token_every_request_without_it_is_refused(roles):
    server = ServerThread(roles["operator"], host="0.0.0.0", token="s3cret-token-for-tests")
    try:
        with httpx.Client(base_url=server.url, follow_redirects=False) as http:
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                refused = http.get("/", headers=headers)
                assert refused.status_code == 401
                assert "acme" not in refused.text and refused.headers["www-authenticate"] == "Bearer"
            assert http.get("/static/dashboard.js").status_code == 401
            assert http.get("/", headers={"Authorization": "Bearer s3cret-token-for-tests"}).status_code == 200
            login = http.get("/recall?token=s3cret-token-for-tests&tenant=acme")
            assert login.status_code == 303 and login.headers["location"] == "/recall?tenant=acme"
            assert http.get("/recall?tenant=acme").status_code == 200  # the cookie carries it now
            away = http.get(server.url + "//elsewhere.example/?token=s3cret-token-for-tests")
            assert away.status_code == 303 and away.headers["location"] == "/elsewhere.example/"
    finally:
        server.stop()


def test_it_only_reads(roles, servers):
    with httpx.Client(base_url=servers["operator"].url) as http:
        assert http.post("/", data={"x": "1"}).status_code == 405
    import asyncio
    import concurrent.futures

    async def setting() -> str:
        app = create_app(roles["operator"])
        await app.state.pool.open()
        try:
            async with app.state.pool.connection() as conn:
                return (await (await conn.execute("SHOW default_transaction_read_only")).fetchone())[0]
        finally:
            await app.state.pool.close()

    # Playwright's loop owns this thread while the browser is open.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        assert pool.submit(asyncio.run, setting()).result() == "on"


def test_the_guts_role_reads_the_ledger_and_no_tenant(browser, servers, roles):
    visit = Visit(browser, servers["gut"].url + "/gut")
    assert visit.response.status == 200 and visit.errors == []
    ledger = as_role(roles["gut"], "SELECT releases::text, published::text FROM cogmem.gut_ledger")
    assert visit.rows("ledger", "releases", "published") == ledger
    visit.close()
    with httpx.Client(base_url=servers["gut"].url) as http:
        assert http.get("/tenants/acme").status_code == 404
        page = http.get("/")
        assert page.status_code == 200 and "This role may not read" in page.text and "acme" not in page.text


def test_a_tenant_of_any_name_opens_from_the_list_and_by_name(browser, servers):
    visit = Visit(browser, servers["operator"].url + "/")
    with visit.page.expect_navigation():
        visit.page.get_by_role("link", name=ODD_NAME).click()
    assert visit.response.status == 200 and visit.errors == []
    assert visit.page.inner_text("h1") == f"Tenant {ODD_NAME}" and visit.page.locator("h1 i").count() == 0
    assert "lab wiki" in visit.page.inner_text("#fading")
    visit.page.goto(servers["operator"].url + "/")
    visit.page.fill("#go input[name=name]", ODD_NAME)
    with visit.page.expect_navigation():
        visit.page.click("#go button")
    assert visit.page.inner_text("h1") == f"Tenant {ODD_NAME}"
    visit.close()
    with httpx.Client(base_url=servers["operator"].url) as http:
        assert http.get("/tenants/?name=%20").status_code == 400
        assert http.get("/tenants/a%00b").status_code == 404


def test_only_loopback_names_are_answered_without_a_token(servers):
    # A page elsewhere may point its own name at 127.0.0.1: the browser then sends that name as Host.
    with httpx.Client(base_url=servers["operator"].url) as http:
        rebound = http.get("/", headers={"Host": "attacker.example"})
        assert rebound.status_code == 400 and "acme" not in rebound.text
        assert http.get("/", headers={"Host": "localhost"}).status_code == 200


def test_an_auditors_audit_page_shows_why_and_no_memory_text(servers, database):
    # A recall answered from a document, then judged by the next turn (a PIN in it): the application sees
    # the turn (redacted) and the document's title; an auditor of the tenant sees the trail without either.
    with psycopg.connect(database, autocommit=True) as db:
        db.execute("SELECT cogmem.configure_tenant('acme', '{\"implicit_feedback\": true}')")
        db.execute(
            "SELECT * FROM cogmem.add_resource('acme', 'Vault rotation runbook', %s,"
            ' source => \'{"url": "wiki/vault"}\')',
            ("# Rotation\n\n## Staging\n\nRotate the staging vault keys every month with the rotate job.",),
        )
        recall_id = db.execute(
            "SELECT recall_id FROM cogmem.recall('acme', 'how do we rotate staging vault keys', conversation => 'v1')"
            " LIMIT 1"
        ).fetchone()[0]
        db.execute(
            "SELECT * FROM cogmem.remember('acme', 'works now, thank you! my PIN is 4921', conversation => 'v1')"
        )
    pages = {}
    for kind in ("acme_app", "acme_auditor"):
        with httpx.Client(base_url=servers[kind].url) as http:
            response = http.get(f"/audit?recall={recall_id}")
            assert response.status_code == 200, kind
            pages[kind] = response.text
    assert "implicit_feedback" in pages["acme_auditor"] and "turn_sha256" in pages["acme_auditor"]
    for text in ("works now", "Vault rotation runbook", "wiki/vault"):
        assert text in pages["acme_app"] and text not in pages["acme_auditor"], text
    assert "4921" not in pages["acme_app"] and "[REDACTED]" in pages["acme_app"]
