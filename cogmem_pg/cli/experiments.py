"""Calibration by experiment: start one on a tenant setting, see its state and its report, stop it, adopt
the arm that won (administrators)."""

from __future__ import annotations

import json
from datetime import datetime

import click

from cogmem_pg.cli.common import Context, emit, json_option, parse_json, pass_context, sql_errors


@click.group()
def experiment() -> None:
    """Experiments: which value of a setting works best, measured on what the memory already logs."""


@experiment.command("create")
@click.argument("name")
@click.argument("parameter")
@click.argument("arms")
@click.option("--unit", type=click.Choice(["tenant", "session"]), default="tenant", show_default=True)
@click.option(
    "--metric",
    type=click.Choice(["success_rate", "items_used", "corrections"]),
    default="success_rate",
    show_default=True,
    help="What the arms are compared on (corrections: per session, fewer is better).",
)
@click.option("--tenant", "tenants", multiple=True, help="Enrol this tenant (repeat; default: every tenant now).")
@json_option
@pass_context
def experiment_create(
    ctx: Context, name: str, parameter: str, arms: str, unit: str, metric: str, tenants, as_json: bool
) -> None:
    """Start experiment NAME on PARAMETER with ARMS, a JSON array of its values (e.g. '[2, 3, 5]')."""
    values = parse_json(arms, "ARMS")
    with sql_errors():
        rows = ctx.client().experiment_create(name, parameter, values, unit, metric, list(tenants) or None)
    if as_json:
        emit(rows, True, str)
        return
    per_arm = {arm: sum(1 for r in rows if r.arm == arm) for arm in sorted({r.arm for r in rows if r.arm})}
    dealt = ", ".join(f"arm {a}: {n}" for a, n in per_arm.items()) or "by session"
    click.echo(f"experiment {name}: {parameter} in {json.dumps(values)} over {len(rows)} tenants ({dealt})")


@experiment.command("status")
@click.argument("name", required=False)
@json_option
@pass_context
def experiment_status(ctx: Context, name: str | None, as_json: bool) -> None:
    """Every experiment (or NAME), newest first."""
    with sql_errors():
        rows = ctx.client().experiment_status(name)
    emit(
        rows,
        as_json,
        lambda e: (
            f"{e.experiment:24} {e.state:8} {e.parameter} {json.dumps(e.arms)} by {e.unit}, {e.metric}"
            f" - tenants per arm {json.dumps(e.tenants)}" + (f", adopted arm {e.adopted_arm}" if e.adopted_arm else "")
        ),
    )


@experiment.command("report")
@click.argument("name")
@click.option("--as-of", type=click.DateTime(), default=None, help="The report as it stood then.")
@json_option
@pass_context
def experiment_report(ctx: Context, name: str, as_of: datetime | None, as_json: bool) -> None:
    """Each arm's metric and its 95% interval; the verdict: an arm is better, too few units yet, or no difference."""
    with sql_errors():
        rows = ctx.client().experiment_report(name, as_of)
    if as_json:
        emit(rows, True, str)
        return
    for r in rows:
        if r.estimate is None:
            click.echo(f"arm {r.arm} ({json.dumps(r.value)}): no observations yet")
            continue
        click.echo(
            f"arm {r.arm} ({json.dumps(r.value)}): {r.estimate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"
            f"  units {r.units}  observations {r.observations:g}  p {r.p_better:.3g}"
        )
    decided = f" (since {rows[0].decided_at:%Y-%m-%d %H:%M})" if rows and rows[0].decided_at else ""
    click.echo(f"verdict: {rows[0].verdict}{decided}" if rows else "verdict: no arms")


@experiment.command("stop")
@click.argument("name")
@pass_context
def experiment_stop(ctx: Context, name: str) -> None:
    """Stop NAME: its tenants see their own settings again."""
    with sql_errors():
        stopped = ctx.client().experiment_stop(name)
    click.echo(f"experiment {name} stopped at {stopped:%Y-%m-%d %H:%M:%S}")


@experiment.command("adopt")
@click.argument("name")
@click.argument("arm", type=int)
@pass_context
def experiment_adopt(ctx: Context, name: str, arm: int) -> None:
    """Write ARM's value into the settings of every tenant NAME enrolled (stops it; audited)."""
    with sql_errors():
        count = ctx.client().experiment_adopt(name, arm)
        adopted = ctx.client().experiment_status(name)[0]
    click.echo(f"experiment {name}: {adopted.parameter} = {json.dumps(adopted.arms[arm - 1])} set for {count} tenants")


COMMANDS = (experiment,)
