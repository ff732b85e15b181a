"""The Gut: opt tenants in and out, release patterns, read the patterns and the privacy ledger."""

from __future__ import annotations

import click

from cogmem_pg.cli.common import Context, emit, json_option, pass_context, sql_errors


@click.group()
def gut() -> None:
    """The Gut: patterns shared across tenants under k-anonymity and a privacy budget (docs/gut.md)."""


@gut.command("opt-in")
@click.argument("tenant")
@click.option("--receive/--no-receive", default=None, help="Also switch receiving patterns on or off.")
@pass_context
def gut_opt_in(ctx: Context, tenant: str, receive: bool | None) -> None:
    """Let TENANT's proven memories, de-identified, contribute to the Gut (administrators)."""
    _gut_switch(ctx, tenant, True, receive)


@gut.command("opt-out")
@click.argument("tenant")
@click.option("--receive/--no-receive", default=None, help="Also switch receiving patterns on or off.")
@pass_context
def gut_opt_out(ctx: Context, tenant: str, receive: bool | None) -> None:
    """Stop TENANT contributing and remove what it contributed (administrators)."""
    _gut_switch(ctx, tenant, False, receive)


def _gut_switch(ctx: Context, tenant: str, contribute: bool, receive: bool | None) -> None:
    with sql_errors():
        switches = ctx.client().gut_configure(tenant, contribute=contribute, receive=receive)
    click.echo(
        f"{tenant}: contributes {'yes' if switches.gut_contribute else 'no'}, "
        f"receives {'yes' if switches.gut_receive else 'no'}, {switches.contributions} contributions"
    )


@gut.command("release")
@click.option("--epsilon", type=float, default=None, help="Privacy budget to spend (default: what is left).")
@json_option
@pass_context
def gut_release(ctx: Context, epsilon: float | None, as_json: bool) -> None:
    """Publish patterns from every opted-in tenant's contributions (the cogmem_gut role)."""
    with sql_errors():
        done = ctx.client().gut_release(epsilon)
    emit(
        [done],
        as_json,
        lambda d: (
            f"release {d.release_id}: epsilon {d.epsilon_spent:g} (delta {d.delta_spent:.1e}), "
            f"threshold {d.threshold:g}, {d.published} published, {d.withdrawn} withdrawn, "
            f"{d.remaining:g} left this period"
        ),
    )


@gut.command("patterns")
@click.argument("tenant")
@json_option
@pass_context
def gut_patterns(ctx: Context, tenant: str, as_json: bool) -> None:
    """The patterns TENANT receives, with their noisy support and success."""
    with sql_errors():
        patterns = ctx.client().gut_patterns(tenant)
    if as_json:
        emit(patterns, True, str)
        return
    for p in patterns:
        success = "-" if p.success is None else f"{p.success:.1f}"
        if p.success is not None and p.success_low is not None and p.success_high is not None:
            success += f" ({p.success_low:.1f} to {p.success_high:.1f})"
        click.echo(f"#{p.pattern_id:<5} ~{p.support:>4} teams  success {success:>3}  {p.content}")
    if not patterns:
        click.echo(f"{tenant} receives no patterns")


@gut.command("ledger")
@json_option
@pass_context
def gut_ledger(ctx: Context, as_json: bool) -> None:
    """Epsilon spent and left per budget period."""
    with sql_errors():
        periods = ctx.client().gut_ledger()
    if as_json:
        emit(periods, True, str)
        return
    for p in periods:
        click.echo(
            f"{p.period_start:%Y-%m-%d}  spent {p.spent:g} of {p.budget:g} ({p.remaining:g} left)  "
            f"{p.releases} releases, {p.published} published, {p.withdrawn} withdrawn"
        )
    if not periods:
        click.echo("no releases yet")


COMMANDS = (gut,)
