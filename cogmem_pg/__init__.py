"""cogmem-pg: cognitive memory for AI agents, inside PostgreSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cogmem_pg.async_client import AsyncClient
    from cogmem_pg.client import Client
    from cogmem_pg.migrate import install
    from cogmem_pg.types import Memory, Recall, RecallItem

__all__ = ["AsyncClient", "Client", "Memory", "Recall", "RecallItem", "install"]
__version__ = "0.1.0"

# Imported on first use, not with the package: the server's PL/Python imports cogmem_pg.embed, and
# needs neither psycopg nor alembic for that.
_LAZY = {
    "AsyncClient": "async_client",
    "Client": "client",
    "Memory": "types",
    "Recall": "types",
    "RecallItem": "types",
    "install": "migrate",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'cogmem_pg' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"cogmem_pg.{_LAZY[name]}"), name)
