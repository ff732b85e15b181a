"""AsyncClient: the Client's methods for asyncio applications (issue 51).

    async with AsyncClient(dsn) as client:
        await client.remember("acme", "Never restart the servers at night", "dos_and_donts")
        context = (await client.recall("acme", "Can we restart tonight?")).as_prompt()

Each call runs the Client's method in a worker thread, over the same connection pool: the client embeds
texts itself (a model's forward pass is CPU work that must not hold the event loop), and one
implementation keeps both clients' behaviour identical. Errors are the same typed errors
(cogmem_pg.errors).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any

from cogmem_pg.client import Client


class AsyncClient:
    """``AsyncClient(dsn, **Client options)``; ``async with`` it, or ``await client.aclose()``. Every public
    method of :class:`Client` is here as a coroutine of the same name and arguments."""

    def __init__(self, dsn: str, **options: Any) -> None:
        self.sync = Client(dsn, **options)

    def __getattr__(self, name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
        method = getattr(self.sync, name)
        if name.startswith("_") or not callable(method):
            raise AttributeError(f"AsyncClient has no coroutine {name!r}")

        @functools.wraps(method)
        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(method, *args, **kwargs)

        return call

    async def aclose(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
