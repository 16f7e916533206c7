"""One runner for every platform: timers, the daily scheduler, health, signals, drain, shutdown.

A platform supplies a transport (how requests come in: Bolt over HTTP or Socket Mode, the
Discord gateway); the runner starts it, then the round timers and the scheduler, serves the
probes, and on SIGTERM or SIGINT stops taking work, lets the handlers in flight finish, stops
the loops and closes the transport, in that order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

from bot.chat.core import Chat
from bot.observability.drain import stop_on_signals
from bot.observability.health import Pingable, start_health_server
from bot.scheduler import run_scheduler, run_timers, schedule_store_of

log = logging.getLogger(__name__)

LOOP_STOP_TIMEOUT = 10.0


class Transport(Protocol):
    """How one platform's requests reach the chat core."""

    async def open(self) -> None:
        """Connect or listen; return once requests are being taken (and sends work)."""
        ...

    async def stop_taking_work(self) -> None:
        """Stop accepting new requests; those already taken carry on."""
        ...

    async def close(self) -> None:
        """Disconnect."""
        ...

    async def wait_closed(self) -> None:
        """Return when the transport has ended on its own (a lost gateway, a refused login)."""
        ...


class Closing:
    """The bookkeeping most transports share: closed once, and waited on until then."""

    def __init__(self) -> None:
        self._closed = asyncio.Event()

    async def stop_taking_work(self) -> None:
        """Keep the connection: the requests in flight still answer through it."""

    async def close(self) -> None:
        """Mark the transport closed."""
        self._closed.set()

    async def wait_closed(self) -> None:
        """Return once the transport is closed."""
        await self._closed.wait()


class Loops:
    """The round timers and the daily scheduler of one process."""

    def __init__(
        self, chat: Chat, *, timer_interval: float = 5.0, scheduler_interval: float = 20.0
    ) -> None:
        self.chat = chat
        self.timer_interval = timer_interval
        self.scheduler_interval = scheduler_interval
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Start both loops; rounds that fell due while the bot was down close on the first pass."""
        if self._tasks:
            return
        self._stop.clear()
        engine, publisher = self.chat.engine, self.chat.publisher
        self._tasks = [
            asyncio.create_task(
                run_timers(engine, publisher, interval=self.timer_interval, stop=self._stop),
                name="quiz-timers",
            ),
            # Every process runs the scheduler; slot claims keep each post single.
            asyncio.create_task(
                run_scheduler(
                    engine,
                    publisher,
                    schedule_store_of(engine),
                    clock=engine.clock,
                    interval=self.scheduler_interval,
                    stop=self._stop,
                ),
                name="quiz-scheduler",
            ),
        ]

    async def stop(self) -> None:
        """Stop both loops (a pass under way finishes first) and the pending card refreshes."""
        self._stop.set()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(task, timeout=LOOP_STOP_TIMEOUT)
        self._tasks = []
        await self.chat.publisher.aclose()


async def run(
    chat: Chat,
    transport: Transport,
    loops: Loops,
    *,
    store: Pingable,
    shutdown_timeout: float,
    health_port: int | None = None,
    health_host: str = "0.0.0.0",
    connected: Callable[[], bool] | None = None,
    stop: asyncio.Event | None = None,
    handle_signals: bool = False,
    extra_routes: Callable[[Any], None] | None = None,
) -> None:
    """Serve until ``stop`` is set (or a signal comes, or the transport ends), then shut down."""
    stop = stop or asyncio.Event()
    if handle_signals:
        stop_on_signals(stop)
    health = None
    if health_port is not None:
        health = await start_health_server(
            store,
            host=health_host,
            port=health_port,
            drain=chat.drain,
            connected=connected,
            extra=extra_routes,
        )
    try:
        await transport.open()
        loops.start()
        ended = asyncio.create_task(transport.wait_closed())
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({ended, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if ended.done():
            ended.result()  # a transport that failed says why
        else:
            ended.cancel()
    finally:
        stop.set()
        # /readyz turns 503 first, so a load balancer stops sending before intake closes.
        chat.drain.begin()
        await transport.stop_taking_work()
        # Requests already taken were answered in time; what their handlers still do after the
        # first response (feedback, card edits) finishes now.
        await chat.drain.wait(shutdown_timeout)
        await loops.stop()
        await transport.close()
        if health is not None:
            await health.close()
