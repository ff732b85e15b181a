"""`cogmem dashboard`: a read-only web app over the views, for the role it connects as (app.py).

serve() runs it with uvicorn. On loopback it needs no token; on any other address it refuses to start
without one, and then every request must carry it."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time


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


class ServerThread:
    """The dashboard served from a thread of this process on a free port, as `cogmem dashboard` serves it:
    for the tests and the bench, which fetch its pages over real HTTP. url is where it answers."""

    def __init__(self, dsn: str, host: str = "127.0.0.1", token: str | None = None) -> None:
        import uvicorn

        from cogmem_pg.dashboard.app import create_app

        with socket.socket() as s:
            s.bind((host, 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(dsn, token=token), host=host, port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise DashboardError("the dashboard did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
