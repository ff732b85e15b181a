"""Documents beside the rings (resource memory): add one from a file, see how it is cut, retire it."""

from __future__ import annotations

from pathlib import Path

import click

from cogmem_pg.cli.common import Context, emit, json_option, pass_context, scope_options, sql_errors


@click.group()
def resource() -> None:
    """Documents (runbooks, policies, templates, contracts): recalled by the section that answers."""


def _read_document(file: Path) -> str:
    """FILE's text, or a one-line error that says what to do: a document is UTF-8 (the database's encoding)."""
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise click.BadParameter(
            f"{file} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            f"convert it first, e.g. iconv -f WINDOWS-1254 -t UTF-8 {file} > {file.stem}.utf8{file.suffix}",
            param_hint="FILE",
        ) from None
    if "\0" in text:  # a binary file that happens to decode (PostgreSQL's text holds no NUL)
        offset = len(text[: text.index("\0")].encode("utf-8"))
        raise click.BadParameter(
            f"{file} is not text (a NUL byte at offset {offset}); a document is Markdown or plain text",
            param_hint="FILE",
        )
    return text


@resource.command("add")
@click.argument("tenant")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--title", default=None, help="The document's name (default: its first '# ' heading, else the file name)."
)
@click.option("--kind", default="document", show_default=True, help="runbook, policy, template, contract, guide...")
@scope_options
@json_option
@pass_context
def resource_add(
    ctx: Context,
    tenant: str,
    file: Path,
    title: str | None,
    kind: str,
    person: str | None,
    agent: str | None,
    as_json: bool,
) -> None:
    """Add FILE (Markdown or plain text) as a document of TENANT; the same title again is a new version."""
    body = _read_document(file)
    heading = next((line[2:].strip() for line in body.splitlines() if line.startswith("# ")), None)
    name = title or heading or file.stem
    with sql_errors():
        added = ctx.client().add_resource(tenant, name, body, kind, {"file": file.name}, person=person, agent=agent)
    emit(
        [added],
        as_json,
        lambda a: (
            f"{a.action} resource {a.resource_id} ({name!r} v{a.version}): {a.chunks} chunks"
            + (f", redacted {','.join(a.redactions)}" if a.redactions else "")
        ),
    )


@resource.command("chunks")
@click.argument("tenant")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--title", default=None, help="The document's name (default: the file name).")
@json_option
@pass_context
def resource_chunks(ctx: Context, tenant: str, file: Path, title: str | None, as_json: bool) -> None:
    """How FILE would be cut into chunks for TENANT (nothing is stored)."""
    with sql_errors():
        chunks = ctx.client().chunk_resource(tenant, title or file.stem, _read_document(file))
    emit(chunks, as_json, lambda c: f"{c.chunk:>4} § {c.heading or '-'} ({len(c.content)} characters)")


@resource.command("retire")
@click.argument("tenant")
@click.argument("title")
@scope_options
@pass_context
def resource_retire(ctx: Context, tenant: str, title: str, person: str | None, agent: str | None) -> None:
    """Stop recalling TITLE (its versions stay for the audit)."""
    with sql_errors():
        gone = ctx.client().retire_resource(tenant, title, person=person, agent=agent)
    click.echo(f"{title!r} retired" if gone else f"no current document {title!r}")


COMMANDS = (resource,)
