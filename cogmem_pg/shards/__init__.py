"""Tenants sharded across PostgreSQL nodes with PL/Proxy (docs/scaling.md).

Shards are ordinary, complete cogmem installs; the router is a database in front of them whose
``cogmem`` functions run where the tenant lives. One module a concern:

- ``router``: the router's functions, generated from a shard's catalog, and where each call goes;
- ``local``: the embedded layout (``init_local``), N shard clusters beside the embedded default;
- ``move``: ``move_tenant``, a tenant to another partition with its ids and its audit chain;
- ``gut``: the Gut across shards, one shard key on every node and its nights scheduled.
"""

from __future__ import annotations

from cogmem_pg.shards.gut import GUT_COLLECT, GUT_RELEASE, schedule_gut, share_gut_key
from cogmem_pg.shards.local import LocalShards, init_local
from cogmem_pg.shards.move import KEYED_IDS, RENUMBERED, MoveInterrupted, move_tenant
from cogmem_pg.shards.router import (
    EVERYWHERE,
    HINTS,
    KEYED_BY_ID,
    OWN_ROUTING,
    ROUTER_DATABASE,
    ROUTER_OWN,
    SERVER,
    SHARD_ONLY,
    STATELESS,
    STATUS_VIEWS,
    ApiFunction,
    api_functions,
    install_router,
    partitions_of,
    router_sql,
    run_on,
    status_views_sql,
)

__all__ = ["EVERYWHERE", "GUT_COLLECT", "GUT_RELEASE", "HINTS", "KEYED_BY_ID", "KEYED_IDS", "OWN_ROUTING",
           "RENUMBERED", "ROUTER_DATABASE", "ROUTER_OWN", "SERVER", "SHARD_ONLY", "STATELESS", "STATUS_VIEWS",
           "ApiFunction",
           "LocalShards", "MoveInterrupted", "api_functions", "init_local", "install_router", "move_tenant",
           "partitions_of", "router_sql", "run_on", "schedule_gut", "share_gut_key", "status_views_sql"]  # fmt: skip
