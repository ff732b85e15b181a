"""`cogmem dashboard`: the read-only web app (cogmem_pg/dashboard), served on loopback by default."""

from __future__ import annotations

import click

from cogmem_pg.cli.common import Context, pass_context


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8750, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--token",
    envvar="COGMEM_DASHBOARD_TOKEN",
    default=None,
    help="Required beyond loopback: every request must carry it (?token=… once, or Authorization: Bearer …).",
)
@pass_context
def dashboard(ctx: Context, host: str, port: int, token: str | None) -> None:
    """Serve the read-only dashboard: tenants, recall, nights, audit, Gut and BIOS, as the connected role sees
    them. It connects with the role the DSN gives and never writes."""
    try:
        import jinja2  # noqa: F401  (the extra's presence, checked before anything starts)
        import uvicorn  # noqa: F401

        from cogmem_pg.dashboard import DashboardError, require_token, serve
    except ImportError as exc:
        raise click.ClickException(
            f"the dashboard needs its extra ({exc.name} is missing): pip install 'cogmem-pg[dashboard]'"
        ) from exc
    try:
        require_token(host, token)
        dsn = ctx.dsn()
        shown = "[::1]" if host == "::1" else host
        click.echo(f"cogmem dashboard on http://{shown}:{port}/ (read-only; Ctrl-C stops it)", err=True)
        serve(dsn, host=host, port=port, token=token)
    except DashboardError as exc:
        raise click.UsageError(str(exc)) from exc


COMMANDS = (dashboard,)
