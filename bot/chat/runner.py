"""One runner for every platform: timers, the daily scheduler, health, signals, drain, shutdown.

A platform supplies a transport (how requests come in: Bolt over HTTP or Socket Mode, the
Discord gateway); the runner starts it, then the round timers and the scheduler, serves the
probes, and on SIGTERM or SIGINT stops taking work, lets the handlers in flight finish, stops
the loops and closes the transport, in that order.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypedDict, TypeVar, Unpack

from bot.chat.core import Chat
from bot.config import Settings
from bot.observability.drain import stop_on_signals
from bot.observability.health import (
    HealthServer,
    Pingable,
    serve_http,
    start_health_server,
    start_pages_server,
)
from bot.observability.heap import freeze_heap
from bot.scheduler import run_scheduler, run_timers, schedule_store_of

log = logging.getLogger(__name__)

LOOP_STOP_TIMEOUT = 10.0
# Waits between failed connection attempts: doubling from the first to the most.
FIRST_RETRY = 1.0
MOST_RETRY = 60.0
# Of the shutdown timeout, what is kept for stopping the loops and closing the transport.
CLOSE_SHARE = 0.25

T = TypeVar("T")


class OneLine(logging.Filter):
    """Turn a record's traceback into one line: the error's type and message after the text.

    Platform libraries log a full traceback on every failed reconnect; with the network down
    that is forty lines every few seconds. Added to their loggers, this keeps one line a try.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Fold the exception into the message and drop the traceback."""
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(error).__name__}: {error})"
            record.args = None
        record.exc_info = None
        record.exc_text = None
        return True


def one_line_logs(*names: str) -> None:
    """Log every retry of these loggers on one line (no traceback)."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, OneLine) for f in logger.filters):
            logger.addFilter(OneLine())


async def keep_trying(
    attempt: Callable[[], Awaitable[T]],
    what: str,
    *,
    retry_on: tuple[type[BaseException], ...],
    first: float = FIRST_RETRY,
    most: float = MOST_RETRY,
) -> T:
    """Await ``attempt`` until it succeeds, one warning line a failure, waiting longer each time.

    Errors outside ``retry_on`` (a refused token) end it at once. Cancelling it (a signal during
    start-up) stops the waiting at once.
    """
    delay = first
    tries = 0
    while True:
        tries += 1
        try:
            return await attempt()
        except retry_on as exc:
            log.warning(
                "cannot reach %s (try %d: %s); trying again in %.0f s",
                what,
                tries,
                str(exc) or type(exc).__name__,
                delay,
            )
        await asyncio.sleep(delay)
        delay = min(delay * 2, most)


async def _within(step: Coroutine[Any, Any, object], deadline: float, what: str) -> None:
    """Await ``step`` until the loop's clock reaches ``deadline``; then give up on it."""
    left = max(deadline - asyncio.get_running_loop().time(), 0.05)
    try:
        await asyncio.wait_for(step, left)
    except TimeoutError:
        log.warning("shutdown: gave up waiting for %s", what)


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


class Endpoint(Closing, abc.ABC):
    """A platform's HTTP endpoint as the runner's transport: listening once open, closed first.

    A platform says what it serves (``app``, an aiohttp application), at which path, under
    which name in the log, and what its requests still finish once the port is closed
    (``settle``).
    """

    name = "quizbot"
    path = ""

    def __init__(self, host: str, port: int, on_ready: Callable[[str], None] | None) -> None:
        super().__init__()
        self.host, self.port, self.on_ready = host, port, on_ready
        self._server: HealthServer | None = None

    @abc.abstractmethod
    def app(self) -> Any:
        """Return the aiohttp application to serve (each platform's own)."""

    async def settle(self) -> None:
        """Wait for what served requests left to finish (nothing, unless a platform says)."""

    async def open(self) -> None:
        """Freeze what startup loaded (see ``freeze_heap``), then listen on the port."""
        freeze_heap("startup")
        self._server = await serve_http(self.app(), self.host, self.port)
        where = f"http://{self.host}:{self._server.port}{self.path}"
        # Platforms post only to https:// URLs: a TLS proxy in front forwards to this.
        log.info("%s: listening on %s (plain HTTP, for a TLS proxy)", self.name, where)
        if self.on_ready is not None:
            self.on_ready(where)

    async def stop_taking_work(self) -> None:
        """Close the port (the probes have said "not ready" since the drain began)."""
        if self._server is not None:
            await self._server.close()
            self._server = None
        await self.settle()
        await self.close()


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
                run_timers(
                    engine,
                    publisher,
                    interval=self.timer_interval,
                    stop=self._stop,
                    also=(self.chat.tell_proposals,),
                ),
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


class Serving(TypedDict, total=False):
    """How an adapter's ``serve`` runs, the same for every platform: what stops it (``stop``,
    and SIGINT and SIGTERM with ``handle_signals``, by default), and how often the round timers
    (5 s) and the daily scheduler (20 s) look for work. Tests stop it and go faster."""

    stop: asyncio.Event | None
    handle_signals: bool
    timer_interval: float
    scheduler_interval: float


async def serve_chat(
    chat: Chat,
    transport: Transport,
    settings: Settings,
    *,
    store: Pingable,
    pages_host: str,
    extra_routes: Callable[[Any], None] | None = None,
    connected: Callable[[], bool] | None = None,
    **serving: Unpack[Serving],
) -> None:
    """Run a platform's chat with this process's loops and the settings' ports: where every
    adapter's ``serve`` ends."""
    loops = Loops(
        chat,
        timer_interval=serving.get("timer_interval", 5.0),
        scheduler_interval=serving.get("scheduler_interval", 20.0),
    )
    await run(
        chat,
        transport,
        loops,
        store=store,
        shutdown_timeout=settings.shutdown_timeout,
        health_port=settings.health_port,
        health_host=settings.ops_host,
        connected=connected,
        stop=serving.get("stop"),
        handle_signals=serving.get("handle_signals", True),
        extra_routes=extra_routes,
        pages_host=pages_host,
        pages_port=settings.dashboard_port,
    )


async def run(
    chat: Chat,
    transport: Transport,
    loops: Loops,
    *,
    store: Pingable,
    shutdown_timeout: float,
    health_port: int | None = None,
    health_host: str = "127.0.0.1",
    connected: Callable[[], bool] | None = None,
    stop: asyncio.Event | None = None,
    handle_signals: bool = False,
    extra_routes: Callable[[Any], None] | None = None,
    pages_host: str = "127.0.0.1",
    pages_port: int | None = None,
) -> None:
    """Serve until ``stop`` is set (or a signal comes, or the transport ends), then shut down.

    The operations port (``health_port``) serves the probes and metrics only; ``extra_routes``
    (the dashboard's pages) get a port of their own, ``pages_port``.
    """
    stop = stop or asyncio.Event()
    if handle_signals:
        stop_on_signals(stop)
    servers = []
    if health_port is not None:
        servers.append(
            await start_health_server(
                store, host=health_host, port=health_port, drain=chat.drain, connected=connected
            )
        )
    if extra_routes is not None:
        if pages_port is None:
            log.warning(
                "the dashboard is configured but not served: set QUIZBOT_DASHBOARD_PORT "
                "(Socket Mode and Discord serve its pages on a port of their own)"
            )
        else:
            servers.append(await start_pages_server(extra_routes, host=pages_host, port=pages_port))
    stopping = asyncio.create_task(stop.wait())
    try:
        # A signal while connecting (the platform unreachable, retrying) stops the connecting.
        opening = asyncio.create_task(transport.open(), name="transport-open")
        await asyncio.wait({opening, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not opening.done():
            opening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await opening
            log.info("stopped before the connection was made")
            return
        opening.result()  # a transport that could not open says why
        loops.start()
        ended = asyncio.create_task(transport.wait_closed())
        await asyncio.wait({ended, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if ended.done():
            ended.result()  # a transport that failed says why
        else:
            ended.cancel()
    finally:
        stopping.cancel()
        stop.set()
        # Everything below ends within the shutdown timeout, whatever hangs.
        clock = asyncio.get_running_loop()
        deadline = clock.time() + shutdown_timeout
        # /readyz turns 503 first, so a load balancer stops sending before intake closes.
        chat.drain.begin()
        await _within(transport.stop_taking_work(), deadline, "intake to close")
        # Requests already taken were answered in time; what their handlers still do after the
        # first response (feedback, card edits) finishes now.
        grace = max(deadline - clock.time() - shutdown_timeout * CLOSE_SHARE, 0.0)
        await chat.drain.wait(grace)
        await _within(loops.stop(), deadline, "the timers and the scheduler")
        await _within(transport.close(), deadline, "the connection to close")
        for server in servers:
            await _within(server.close(), deadline, "the health and pages servers")
