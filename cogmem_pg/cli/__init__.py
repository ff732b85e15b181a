"""The `cogmem` command line. With DATABASE_URL (or --dsn) it uses that server; without, the embedded
cluster under .cogmem/ (started, and the schema installed, on first use).

`main` is the click group; each module below holds one group of commands (common.py what they share)
and lists them in COMMANDS, which `main` takes here. The command modules import nothing from this one."""

from __future__ import annotations

from typing import Any

import click

from cogmem_pg.cli import (
    app_verbs,
    audit,
    bios,
    cluster,
    conflicts,
    dashboard,
    erasure,
    experiments,
    guard,
    gut,
    memory,
    resources,
    sessions,
    shards,
    store,
    tenants,
    vault,
)
from cogmem_pg.cli.common import Context

MODULES = (
    cluster,
    memory,
    app_verbs,
    tenants,
    bios,
    guard,
    conflicts,
    sessions,
    vault,
    store,
    resources,
    audit,
    gut,
    shards,
    erasure,
    experiments,
    dashboard,
)


@click.group()
@click.option("--dsn", envvar="DATABASE_URL", help="PostgreSQL connection string (default: embedded cluster).")
@click.version_option(package_name="cogmem-pg")
@click.pass_context
def main(ctx: click.Context, dsn: str | None) -> None:
    """cogmem-pg: cognitive memory for AI agents, inside PostgreSQL."""
    ctx.obj = Context(dsn)


@main.result_callback()
@click.pass_context
def _finish(ctx: click.Context, *_: Any, **__: Any) -> None:
    if ctx.obj.exit_code:
        ctx.exit(ctx.obj.exit_code)


for _module in MODULES:
    for _command in _module.COMMANDS:
        main.add_command(_command)
