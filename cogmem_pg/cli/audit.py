"""The audit trail: seal and verify its hash chains, export a finished month, explain a recall."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import psycopg
import psycopg.sql

from cogmem_pg.cli.common import Context, emit, json_option, pass_context, sql_errors


@click.group()
def audit() -> None:
    """The audit trail: seal it, verify it, explain a recall."""


@audit.command("seal")
@pass_context
def audit_seal(ctx: Context) -> None:
    """Append new audit rows to their tenants' hash chains (pg_cron does this every minute)."""
    with sql_errors():
        click.echo(f"sealed {ctx.client().seal_audit()} rows")


@audit.command("verify")
@click.option("--tenant", default=None, help="Only this tenant.")
@json_option
@pass_context
def audit_verify(ctx: Context, tenant: str | None, as_json: bool) -> None:
    """Recompute the hash chains; exit status 1 when any was tampered with."""
    with sql_errors():
        checks = ctx.client().verify_audit(tenant)
    for check in checks:
        verdict = "ok" if check.ok else f"TAMPERED at audit_id {check.first_bad_id}"
        emit([check], as_json, lambda c, verdict=verdict: f"{c.tenant:20} {c.rows_checked:>10} rows  {verdict}")
    if not all(check.ok for check in checks):
        sys.exit(1)


@audit.command("export")
@click.argument("partition")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@pass_context
def audit_export(ctx: Context, partition: str, directory: Path) -> None:
    """Write a finished month (PARTITION, e.g. audit_log_2026_01) to DIRECTORY as JSON lines with its chain
    hashes and a manifest, then record the export (only exported months are ever dropped)."""
    import hashlib

    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{partition}.jsonl"
    digest = hashlib.sha256()
    rows = 0
    with psycopg.connect(ctx.dsn()) as conn, sql_errors():
        try:
            exists = conn.execute(
                "SELECT 1 FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid"
                " WHERE i.inhparent = 'cogmem.audit_log'::regclass AND c.relname = %s",
                (partition,),
            ).fetchone()
            if not exists:
                raise click.ClickException(f"no audit partition named {partition!r}")
            query = psycopg.sql.SQL(
                "SELECT row_to_json(r)::text FROM (SELECT l.*, c.seq, encode(c.row_hash, 'hex') AS row_hash"
                " FROM cogmem.{} AS l LEFT JOIN cogmem.audit_chain AS c USING (tenant, audit_id)"
                " ORDER BY l.tenant, c.seq) AS r"
            ).format(psycopg.sql.Identifier(partition))
            with target.open("w", encoding="utf-8") as out, conn.cursor(name="audit_export") as cur:
                for (line,) in cur.execute(query):
                    out.write(line + "\n")
                    digest.update((line + "\n").encode())
                    rows += 1
            marked = conn.execute(
                "SELECT cogmem.audit_mark_exported(%s, %s)", (partition, str(target.resolve()))
            ).fetchone()
            conn.commit()
        except psycopg.Error:
            target.unlink(missing_ok=True)  # no half-written export is left behind
            raise
    manifest = {"partition": partition, "rows": rows, "sha256": digest.hexdigest(), "file": target.name}
    (directory / f"{partition}.manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    click.echo(f"exported {rows} rows of {partition} to {target} (recorded: {marked[0] if marked else 0} rows)")


@audit.command("explain")
@click.argument("recall_id")
@json_option
@pass_context
def audit_explain(ctx: Context, recall_id: str, as_json: bool) -> None:
    """Why RECALL_ID injected what it did: per item its layer, score, reason, provenance and history."""
    from uuid import UUID

    try:
        wanted = UUID(recall_id)
    except ValueError as exc:
        raise click.BadParameter(f"{recall_id!r} is not a UUID", param_hint="RECALL_ID") from exc
    with sql_errors():
        items = ctx.client().explain_recall(wanted)
    if as_json:
        emit(items, True, str)
        return
    for it in items:
        what = f"BIOS rule {it.rule_id}" if it.rule_id is not None else f"memory {it.memory_id}"
        click.echo(f"{it.item}. [{it.layer}] {what}  score {it.score:.4f}  {it.tokens} tokens")
        click.echo(f"   why:  {it.reason}")
        prov = it.provenance or {}
        if prov.get("kind") == "bios":
            req = f" ({prov.get('preset')} {prov.get('requirement')})" if prov.get("requirement") else ""
            click.echo(f"   from: {prov.get('severity')} rule in {prov.get('category')}{req}: {prov.get('rule')}")
        elif prov:
            click.echo(
                f"   from: created {str(prov.get('created_at', '?'))[:19]} by {prov.get('created_by', '?')} "
                f"in {prov.get('ring', '?')}{' (routed)' if prov.get('routed') else ''}"
            )
        else:
            click.echo("   from: erased or unknown")
        events = [
            f"{str(h['at'])[:10]} {h['event']}{' (after)' if h.get('after_this_recall') else ''}" for h in it.history
        ]
        if events:
            click.echo(f"   life: {', '.join(events)}")
    for o in items[0].outcomes if items else []:
        click.echo(f"outcome: {_outcome_line(o)}")


def _outcome_line(o: dict) -> str:
    """What set the recall's outcome: explicit feedback, or the next turn (its verdict, judge and text)."""
    at = str(o.get("at", "?"))[:19]
    if o.get("source", "explicit") == "explicit":
        return f"{at} feedback {o.get('outcome')} (explicit)"
    said = f' "{o["turn"]}"' if o.get("turn") else ""
    confidence = f" {o['confidence']:.2f}" if isinstance(o.get("confidence"), int | float) else ""
    told = f"outcome {o.get('outcome')}" if o.get("event") == "implicit_feedback" else f"nothing set ({o.get('why')})"
    return f"{at} next turn{said}: {o.get('verdict')}{confidence} by {o.get('judged_by')}, {told}"


COMMANDS = (audit,)
