"""One read in flight per key: the callers that arrive while it runs wait for the same one.

A round's first clicks come all at once, each wanting what none has cached yet (the round, the
workspace's retention, its names); one read serves every one of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Shared(Generic[K, V]):
    """The reads in flight, by key."""

    def __init__(self) -> None:
        self._running: dict[K, asyncio.Future[V]] = {}

    async def get(self, key: K, read: Callable[[], Awaitable[V]]) -> V:
        """Return ``read()``'s result, joining the read of ``key`` already in flight, if any.

        Shielded: a caller given up on (cancelled) does not cancel the read the others wait for.
        """
        running = self._running.get(key)
        if running is None:
            running = asyncio.ensure_future(read())
            self._running[key] = running
            running.add_done_callback(lambda _: self._running.pop(key, None))
        return await asyncio.shield(running)
