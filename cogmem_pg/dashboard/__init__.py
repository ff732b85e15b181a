"""`cogmem dashboard`: a read-only web app over the views, for the role it connects as (app.py).

serve() runs it with uvicorn. On loopback it needs no token; on any other address it refuses to start
without one, and then every request must carry it."""

from __future__ import annotations

import ipaddress


class DashboardError(Exception):
    """The dashboard cannot start as asked (a token is missing beyond loopback)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


MIN_TOKEN = 16  # characters: a token is a secret, not a password to remember


def require_token(host: str, token: str | None) -> None:
    """Raises DashboardError when HOST is beyond loopback and no token is given, or a token is too short."""
    if not token and not is_loopback(host):
        raise DashboardError(
            f"refusing to serve on {host} without a token: give --token or COGMEM_DASHBOARD_TOKEN "
            "(on loopback, 127.0.0.1, none is needed)"
        )
    if token and len(token) < MIN_TOKEN:
        raise DashboardError(f"a token of at least {MIN_TOKEN} characters, please: openssl rand -hex 24 makes one")


def serve(dsn: str, host: str = "127.0.0.1", port: int = 8750, token: str | None = None) -> None:
    require_token(host, token)
    import uvicorn

    from cogmem_pg.dashboard.app import create_app

    uvicorn.run(create_app(dsn, token=token or None), host=host, port=port, log_level="warning")
