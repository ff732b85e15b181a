"""The dashboard's web app: seven read-only pages over the views, for the role it connects as.

Every request borrows a connection from a small pool whose sessions are read-only
(default_transaction_read_only), so no page can write even if a query tried; the app has only GET routes.
What a page shows is what the connected role may read: row-level security picks the tenants, and a section
the role may not read says so (queries.py). A tenant the role does not reach answers 404, exactly like a
tenant that does not exist. Beyond loopback every request must carry the token (serve() refuses to start
without one)."""

from __future__ import annotations

import datetime
import hmac
import time
import uuid
from contextlib import asynccontextmanager
from importlib.resources import files
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg_pool import AsyncConnectionPool
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from cogmem_pg.dashboard import queries as q
from cogmem_pg.dashboard.charts import chart, number, series

_HERE = files("cogmem_pg.dashboard")
TEMPLATES = Jinja2Templates(directory=str(_HERE / "templates"))
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}
# Scripts and styles come from the app only: memory text is data, and the pages run no inline script.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
PAGES = (
    ("/", "Tenants"),
    ("/recall", "Recall"),
    ("/nights", "Nights"),
    ("/audit", "Audit"),
    ("/gut", "Gut"),
    ("/bios", "BIOS"),
)
# Read-only sessions. No JIT: its compile time is most of a dashboard query's; and memory enough to sort
# and group a month of recalls without spilling to disk (bench/plans/dashboard.md).
SESSION_OPTIONS = "-c default_transaction_read_only=on -c statement_timeout=30s -c jit=off -c work_mem=64MB"
CHART_TENANTS = 8  # lines a reader can tell apart
CHART_BARS = 20


def create_app(dsn: str, token: str | None = None) -> Starlette:
    pool = AsyncConnectionPool(
        dsn,
        min_size=2,
        max_size=8,  # a page's sections run at once, each on its own connection
        open=False,
        kwargs={
            "autocommit": True,
            "options": SESSION_OPTIONS,
            "application_name": "cogmem dashboard",
        },
    )

    @asynccontextmanager
    async def lifespan(app: Starlette):
        await pool.open(wait=True)
        async with pool.connection() as conn:
            app.state.role = await _who(conn)
        yield
        await pool.close()

    routes = [
        Route("/", tenants_page),
        Route("/tenants/", open_tenant),
        Route("/tenants/{tenant:path}", tenant_page),
        Route("/recall", recall_page),
        Route("/nights", nights_page),
        Route("/nights/{night}", night_page),
        Route("/audit", audit_page),
        Route("/audit/verify", verify_page),
        Route("/gut", gut_page),
        Route("/bios", bios_page),
        Mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(BaseHTTPMiddleware, dispatch=_guard)])
    app.state.pool = pool
    app.state.token = token
    return app


async def _guard(request: Request, call_next) -> Response:
    """Only reads; without a token only for a loopback Host (a page elsewhere that points its own name at
    127.0.0.1 must not read the dashboard through the visitor's browser); with one, only with it. Every
    response with the security headers."""
    token = request.app.state.token
    if request.method not in ("GET", "HEAD"):
        response: Response = PlainTextResponse("the dashboard is read-only", status_code=405)
    elif token is None and (request.url.hostname or "") not in LOOPBACK_NAMES:
        response = PlainTextResponse("this dashboard answers on loopback names only", status_code=400)
    else:
        response = _refuse_without_token(request, token) or await call_next(request)
    response.headers.update(SECURITY_HEADERS)
    return response


async def _who(conn) -> tuple[str, bool, list[str]]:
    """The role connected as, and the tenants it reaches (none known for a role that may not ask)."""
    (role,) = await (await conn.execute("SELECT current_user::text")).fetchone()
    try:
        reach = await conn.execute("SELECT cogmem.reaches_every_tenant(), cogmem.reachable_tenants()")
        every, reached = await reach.fetchone()
    except psycopg.errors.InsufficientPrivilege:
        return role, False, []
    return role, every, reached or []


def _refuse_without_token(request: Request, token: str | None) -> Response | None:
    """None when the request may pass. ?token= sets a cookie and redirects, so the token leaves the URL."""
    if token is None:
        return None
    given = request.query_params.get("token")
    if given is not None and hmac.compare_digest(given.encode(), token.encode()):
        # Back to the same page on this host: one leading slash, so "//elsewhere" cannot leave it.
        query = request.url.remove_query_params("token").query
        target = "/" + request.url.path.lstrip("/") + (f"?{query}" if query else "")
        redirect = RedirectResponse(target, status_code=303)
        secure = request.url.scheme == "https"
        redirect.set_cookie(_cookie(request), token, httponly=True, samesite="strict", secure=secure)
        return redirect
    bearer = request.headers.get("authorization", "")
    candidates = [
        bearer.removeprefix("Bearer ").strip() if bearer.startswith("Bearer ") else "",
        request.cookies.get(_cookie(request), ""),
    ]
    if any(c and hmac.compare_digest(c.encode(), token.encode()) for c in candidates):
        return None
    return PlainTextResponse(
        "a token is required: open the address with ?token=…, or send Authorization: Bearer …",
        status_code=401,
        headers={"WWW-Authenticate": "Bearer"},
    )


def _cookie(request: Request) -> str:
    """Browsers send a host's cookies to all its ports: the name says which dashboard the token is for."""
    return f"cogmem_dashboard_{request.url.port or 80}"


async def _render(request: Request, template: str, started: float, **context: Any) -> Response:
    role, every, reached = request.app.state.role
    response = TEMPLATES.TemplateResponse(
        request,
        template,
        {
            "pages": PAGES,
            "role": role,
            "reaches": _reach(every, reached),
            **context,
        },
    )
    response.headers["Server-Timing"] = f"page;dur={(time.perf_counter() - started) * 1000:.1f}"
    return response


def _reach(every: bool, reached: list[str]) -> str:
    if every:
        return "every tenant"
    if len(reached) > 3:
        return f"{len(reached)} tenants"
    return ", ".join(reached) or "no tenant"


async def _read(request: Request, sections: dict, **params: Any) -> dict[str, Any]:
    params = {"days": q.DAYS, "nights": q.NIGHTS, "top": q.TOP, "listed": q.LISTED, **params}
    return await q.read(request.app.state.pool, sections, params)


async def _require_tenant(request: Request, tenant: str) -> None:
    """404 for a tenant the role does not reach, exactly as for one that does not exist."""
    try:
        async with request.app.state.pool.connection() as conn:
            found = await q.rows(conn, q.TENANT_EXISTS, {"tenant": tenant})
    except psycopg.DataError:  # a name no tenant can have (a NUL byte)
        found = []
    if not found or isinstance(found, q.Denied):
        raise HTTPException(404, "no such tenant")


async def _tenant_param(request: Request) -> str | None:
    """The ?tenant= filter: none for all the role reaches; 404 for one it does not reach."""
    tenant = request.query_params.get("tenant") or None
    if tenant is not None:
        await _require_tenant(request, tenant)
    return tenant


def _ok(data: Any) -> list:
    """Rows of a section the role could read; none when it could not."""
    return [] if isinstance(data, q.Denied) else data


# --- Pages ------------------------------------------------------------------------------------------------
async def tenants_page(request: Request) -> Response:
    started = time.perf_counter()
    data = await _read(request, q.TENANTS, lines=CHART_TENANTS)
    listed = _tenant_rows(data)
    shown = _ok(listed)
    chart_tenants = [r["tenant"] for r in shown[:CHART_BARS]]
    census = [r for r in _ok(data["census"]) if r["tenant"] in set(chart_tenants)]
    _, rings = series(census, "tenant", "ring", "memories", xs=chart_tenants)
    days, growth = series(_ok(data["growth"]), "day", "tenant", "memories")
    charts = {
        "rings": chart(
            "bar", chart_tenants, rings, stacked=True, title=f"Memories per ring (the {CHART_BARS} largest)"
        ),
        "growth": chart(
            "line", days, growth, title=f"Memories held, last {q.DAYS} days (the {CHART_TENANTS} largest tenants)"
        ),
    }
    columns = [("tenant", "tenant"), ("memories", "memories"), *((r, r) for r in q.RINGS)]
    columns += [("night", "last night"), ("decisions", "its decisions"), ("created_at", "created")]
    return await _render(
        request,
        "tenants.html",
        started,
        data=data,
        rows=listed if isinstance(listed, q.Denied) else listed[: q.LISTED],
        total=len(shown),
        columns=columns,
        charts=charts,
        listed=q.LISTED,
    )


def _tenant_rows(data: dict[str, Any]) -> list[dict] | q.Denied:
    """One row per tenant (memories per ring, last night), the largest first."""
    if isinstance(data["tenants"], q.Denied):
        return data["tenants"]
    empty = {"memories": 0, **dict.fromkeys(q.RINGS, 0), "night": None, "decisions": None}
    rows = {t["tenant"]: {**empty, **t} for t in data["tenants"]}
    for c in _ok(data["census"]):
        row = rows.setdefault(c["tenant"], {**empty, "tenant": c["tenant"]})
        row[c["ring"]] = c["memories"]
        row["memories"] += c["memories"]
    for n in _ok(data["last_night"]):
        rows.get(n["tenant"], {}).update(night=n["night"], decisions=n["decisions"] or "nothing")
    return sorted(rows.values(), key=lambda r: (-r["memories"], r["tenant"]))


async def open_tenant(request: Request) -> Response:
    """The tenants page's box: a tenant by name."""
    name = request.query_params.get("name", "").strip()
    if not name:
        raise HTTPException(400, "a tenant's name, please")
    return RedirectResponse(f"/tenants/{quote(name, safe='')}", 303)


async def tenant_page(request: Request) -> Response:
    started = time.perf_counter()
    tenant = request.path_params["tenant"]
    await _require_tenant(request, tenant)
    data = await _read(request, q.TENANT, tenant=tenant)
    memories = (_ok(data["memories"]) or [{"strength": [], "top": [], "fading": []}])[0]
    tenths, rings = series(memories["strength"], "tenth", "ring", "memories", xs=range(10))
    days, curves = series(_ok(data["decay"]), "day", "layer", "strength")
    charts = {
        "strength": chart(
            "bar",
            [f"{int(t) / 10:.1f}–{(int(t) + 1) / 10:.1f}" for t in tenths],
            rings,
            stacked=True,
            title="Memories by strength",
        ),
        "decay": chart("line", days, curves, title="Strength after days without recall", x_title="days"),
    }
    return await _render(request, "tenant.html", started, tenant=tenant, data=data, memories=memories, charts=charts)


async def recall_page(request: Request) -> Response:
    started = time.perf_counter()
    tenant = await _tenant_param(request)
    data = await _read(request, q.RECALL, tenant=tenant)
    window = (_ok(data["window"]) or [{"daily": [], "budget": [], "injected": []}])[0]
    days, layers = series(window["budget"], "day", "layer", "tokens")
    daily = window["daily"]
    data["injected"] = window["injected"] if not isinstance(data["window"], q.Denied) else data["window"]
    charts = {
        "budget": chart("bar", days, layers, stacked=True, title="Tokens per recall, by layer"),
        "success": chart(
            "line",
            [str(r["day"]) for r in daily],
            {"success": [number(r["success"]) for r in daily]},
            title="Success rate (outcomes given)",
            y_max=1,
        ),
        "recalls": chart(
            "bar", [str(r["day"]) for r in daily], {"recalls": [r["recalls"] for r in daily]}, title="Recalls per day"
        ),
    }
    return await _render(request, "recall.html", started, tenant=tenant, data=data, charts=charts)


async def nights_page(request: Request) -> Response:
    started = time.perf_counter()
    tenant = await _tenant_param(request)
    data = await _read(request, q.NIGHTS_PAGE, tenant=tenant)
    every_night = sorted({r["night"] for r in _ok(data["nights"])})
    nights, decisions = series(_ok(data["decisions"]), "night", "decision", "memories", xs=every_night)
    link = "/nights/{label}?decision={dataset}" + (f"&tenant={quote(tenant)}" if tenant else "")
    charts = {"decisions": chart("bar", nights, decisions, stacked=True, title="Decisions per night", link=link)}
    return await _render(request, "nights.html", started, tenant=tenant, data=data, charts=charts)


async def night_page(request: Request) -> Response:
    started = time.perf_counter()
    try:
        night = datetime.date.fromisoformat(request.path_params["night"])
    except ValueError as exc:
        raise HTTPException(400, "a night is a date: YYYY-MM-DD") from exc
    tenant, decision = await _tenant_param(request), request.query_params.get("decision") or None
    if decision is not None and decision not in q.DECISIONS:
        raise HTTPException(400, f"no such decision: one of {', '.join(q.DECISIONS)}")
    chosen = [decision] if decision else list(q.DECISIONS)
    events = sorted({e for d in chosen for e in q.DECISIONS[d][0]})
    data = await _read(request, q.NIGHT, night=night, tenant=tenant, decision=decision, events=events)
    meaning = {d: q.DECISIONS[d][1] for d in chosen}
    return await _render(
        request, "night.html", started, night=night, tenant=tenant, decision=decision, data=data, meaning=meaning
    )


async def audit_page(request: Request) -> Response:
    started = time.perf_counter()
    recall = request.query_params.get("recall", "").strip()
    data = await _read(request, q.AUDIT)
    if not request.app.state.role[1]:  # archived months count every tenant's rows
        data["archives"] = q.Denied("archived months count every tenant's rows: for roles that reach every tenant")
    explained: Any = None
    if recall:
        try:
            recall_id = uuid.UUID(recall)
        except ValueError:
            explained = "not a recall id: a recall id is a UUID, as recall() returns it"
        else:
            explained = (await _read(request, q.EXPLAIN, recall=recall_id))["explain"]
    days, levels = series(_ok(data["daily"]), "day", "level", "events")
    charts = {"daily": chart("bar", days, levels, stacked=True, title=f"Audit events, last {q.DAYS} days")}
    return await _render(request, "audit.html", started, data=data, recall=recall, explained=explained, charts=charts)


async def verify_page(request: Request) -> Response:
    started = time.perf_counter()
    tenant: str | None
    if request.query_params.get("tenant") == "*":  # the chain of what concerns no one tenant (Gut releases)
        tenant, data = "*", await _read(request, q.VERIFY_GLOBAL)
    else:
        tenant = await _tenant_param(request)
        data = await _read(request, q.VERIFY, tenant=tenant)
    return await _render(request, "verify.html", started, tenant=tenant, data=data)


async def gut_page(request: Request) -> Response:
    started = time.perf_counter()
    data = await _read(request, q.GUT)
    ledger = _ok(data["ledger"])
    periods = [str(r["period"]) for r in ledger]
    charts = {
        "ledger": chart(
            "bar",
            periods,
            {"ε spent": [number(r["spent"]) for r in ledger], "ε budget": [number(r["budget"]) for r in ledger]},
            title="Privacy budget per period",
        ),
    }
    return await _render(request, "gut.html", started, data=data, charts=charts)


async def bios_page(request: Request) -> Response:
    started = time.perf_counter()
    data = await _read(request, q.BIOS)
    presets, categories = series(_ok(data["coverage"]), "preset", "category", "rules")
    charts = {
        "coverage": chart(
            "bar", presets, categories, stacked=True, title="Rules in force per preset and category", horizontal=True
        )
    }
    return await _render(request, "bios.html", started, data=data, charts=charts)


def show(value: Any) -> str:
    """A value as a table cell shows it."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {show(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(show(v) for v in value)
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, datetime.timedelta):
        return str(value - datetime.timedelta(microseconds=value.microseconds))
    return str(value)


TEMPLATES.env.tests["denied"] = lambda value: isinstance(value, q.Denied)
TEMPLATES.env.filters["show"] = show
