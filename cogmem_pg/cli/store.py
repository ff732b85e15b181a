"""The keyed store (LangGraph's BaseStore) on the command line: NAMESPACE is dotted, VALUE a JSON object."""

from __future__ import annotations

import json

import click

from cogmem_pg.cli.common import Context, emit, json_option, parse_json, pass_context, scope_options, sql_errors
from cogmem_pg.client import store_text

# A person's items are its own: the person is part of an item's key (sql/180-store.sql).
person_option = click.option("--person", default=None, help="The person whose item it is (default: the shared ones).")


@click.group()
def store() -> None:
    """The keyed store (LangGraph's BaseStore): NAMESPACE is dotted, e.g. memories.user-1."""


def _namespace(dotted: str, what: str = "NAMESPACE") -> list[str]:
    """A dotted namespace as its labels ('' is none); an empty label is refused, not dropped, so that
    a..b never names a.b."""
    labels = dotted.split(".") if dotted else []
    if "" in labels:
        raise click.BadParameter(
            f"{dotted!r} has an empty label (labels are joined by single periods)", param_hint=what
        )
    return labels


def _json_object(text: str | None, what: str) -> dict | None:
    if text is None:
        return None
    value = parse_json(text, what)
    if not isinstance(value, dict):
        raise click.BadParameter('must be a JSON object, e.g. \'{"content": "..."}\'', param_hint=what)
    return value


@store.command("put")
@click.argument("tenant")
@click.argument("namespace")
@click.argument("key")
@click.argument("value")
@click.option("--text", "index_text", default=None, help="The text to remember it by (default: the value's strings).")
@click.option("--no-index", is_flag=True, help="Store the value without a memory.")
@click.option("--ttl", type=float, default=None, help="Minutes to live (the memory goes to the fresh ring).")
@scope_options
@json_option
@pass_context
def store_put(
    ctx: Context,
    tenant: str,
    namespace: str,
    key: str,
    value: str,
    index_text: str | None,
    no_index: bool,
    ttl: float | None,
    person: str | None,
    agent: str | None,
    as_json: bool,
) -> None:
    """Put VALUE (a JSON object) under NAMESPACE and KEY."""
    data = _json_object(value, "VALUE")
    assert data is not None
    if index_text is None and not no_index:
        index_text = store_text(data)
    with sql_errors():
        done = ctx.client().store_put(
            tenant, _namespace(namespace), key, data, None if no_index else index_text, ttl, person=person, agent=agent
        )
    emit(
        [done],
        as_json,
        lambda d: (
            f"{d.action}: memory {d.memory_id or '-'}"
            + (f", redacted {', '.join(d.redactions)}" if d.redactions else "")
        ),
    )


@store.command("get")
@click.argument("tenant")
@click.argument("namespace")
@click.argument("key")
@person_option
@pass_context
def store_get(ctx: Context, tenant: str, namespace: str, key: str, person: str | None) -> None:
    """Print the value under NAMESPACE and KEY (exit 1 if there is none)."""
    with sql_errors():
        item = ctx.client().store_get(tenant, _namespace(namespace), key, person=person)
    if item is None:
        raise click.ClickException(f"no item {key!r} in {namespace!r}")
    click.echo(json.dumps(item.value, ensure_ascii=False))


@store.command("rm")
@click.argument("tenant")
@click.argument("namespace")
@click.argument("key")
@person_option
@pass_context
def store_rm(ctx: Context, tenant: str, namespace: str, key: str, person: str | None) -> None:
    """Delete the item (and erase the memory it created)."""
    with sql_errors():
        gone = ctx.client().store_delete(tenant, _namespace(namespace), key, person=person)
    click.echo("deleted" if gone else "no such item")


@store.command("search")
@click.argument("tenant")
@click.argument("prefix", default="")
@click.option("--query", default=None, help="The most similar to this text first (score: the similarity).")
@click.option("--filter", "filter_json", default=None, help='Filter on the value, e.g. \'{"stars": {"$gte": 4}}\'.')
@click.option("--limit", default=10, show_default=True)
@click.option("--offset", default=0, show_default=True)
@click.option("--person", default=None, help="Only this person's items (default: every item you read).")
@json_option
@pass_context
def store_search(
    ctx: Context,
    tenant: str,
    prefix: str,
    query: str | None,
    filter_json: str | None,
    limit: int,
    offset: int,
    person: str | None,
    as_json: bool,
) -> None:
    """Items under PREFIX (a dotted namespace; all when empty)."""
    with sql_errors():
        items = ctx.client().store_search(
            tenant,
            _namespace(prefix, "PREFIX"),
            query,
            _json_object(filter_json, "--filter"),
            limit,
            offset,
            person=person,
        )
    emit(
        items,
        as_json,
        lambda i: (
            f"{'.'.join(i.namespace)} {i.key}"
            + (f"  {i.score:.4f}" if i.score is not None else "")
            + f"  {json.dumps(i.value, ensure_ascii=False)}"
        ),
    )


@store.command("ls")
@click.argument("tenant")
@click.option("--prefix", default=None, help="Dotted; '*' matches any label.")
@click.option("--suffix", default=None, help="Dotted; '*' matches any label.")
@click.option("--depth", "max_depth", type=int, default=None, help="Cut namespaces to this many labels.")
@click.option("--limit", default=100, show_default=True)
@click.option("--person", default=None, help="Only this person's namespaces (default: every one you read).")
@json_option
@pass_context
def store_ls(
    ctx: Context,
    tenant: str,
    prefix: str | None,
    suffix: str | None,
    max_depth: int | None,
    limit: int,
    person: str | None,
    as_json: bool,
) -> None:
    """The namespaces holding items."""
    with sql_errors():
        names = ctx.client().store_namespaces(
            tenant,
            None if prefix is None else _namespace(prefix, "--prefix"),
            None if suffix is None else _namespace(suffix, "--suffix"),
            max_depth,
            limit,
            person=person,
        )
    emit([list(n) for n in names], as_json, lambda n: ".".join(n))


@store.command("sweep")
@click.argument("tenant")
@pass_context
def store_sweep(ctx: Context, tenant: str) -> None:
    """Delete the tenant's expired items now (and erase the memories they created)."""
    with sql_errors():
        swept = ctx.client().store_sweep(tenant)
    click.echo(f"swept {swept} expired item{'' if swept == 1 else 's'}")


COMMANDS = (store,)
