"""Graceful shutdown: on SIGTERM, stop taking work and let the handlers in flight finish."""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from bot.observability.metrics import IN_FLIGHT

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")


class Drain:
    """Count the handlers in flight; after ``begin``, report not ready and wait for them."""

    def __init__(self) -> None:
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.draining = False

    @property
    def active(self) -> int:
        """Return how many handlers are running."""
        return self._active

    def track(self) -> _Tracked:
        """Count the block (``async with``) as a handler in flight."""
        return _Tracked(self)

    def enter(self) -> None:
        """Count one more handler in flight (``leave`` when it ends)."""
        self._active += 1
        IN_FLIGHT.inc()
        self._idle.clear()

    def leave(self) -> None:
        """Count one handler fewer in flight."""
        self._active -= 1
        IN_FLIGHT.dec()
        if self._active == 0:
            self._idle.set()

    def wrap(self, handler: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
        """Return the coroutine function, counted while it runs."""

        @functools.wraps(handler)
        async def tracked(*args: P.args, **kwargs: P.kwargs) -> T:
            async with self.track():
                return await handler(*args, **kwargs)

        return tracked

    def begin(self) -> None:
        """Start draining: readiness turns false so load balancers send no more work."""
        if not self.draining:
            log.info("draining: %d handler(s) in flight", self._active)
        self.draining = True

    async def wait(self, grace: float) -> bool:
        """Drain and wait up to ``grace`` seconds for the handlers in flight; True if all ended."""
        self.begin()
        try:
            await asyncio.wait_for(self._idle.wait(), grace)
        except TimeoutError:
            log.warning(
                "shutting down with %d handler(s) still running after %.0f s",
                self._active,
                grace,
            )
            return False
        log.info("drained: no handler in flight")
        return True


class _Tracked:
    """``Drain.track()``: a plain class, since a generator-based one costs more on every click."""

    __slots__ = ("_drain",)

    def __init__(self, drain: Drain) -> None:
        self._drain = drain

    async def __aenter__(self) -> None:
        self._drain.enter()

    async def __aexit__(self, *_: object) -> None:
        self._drain.leave()


def stop_on_signals(stop: asyncio.Event) -> None:
    """Set ``stop`` on SIGTERM (what Kubernetes, systemd and Docker send) and on SIGINT."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
