"""Health and metrics over HTTP: /healthz (process up), /readyz (database reachable), /metrics.

``start_health_server`` serves the three on the operations port (``QUIZBOT_OPS_PORT``, on
localhost unless ``QUIZBOT_OPS_HOST`` says otherwise), never on a public port: /readyz costs a
database round trip and /metrics tells how the bot is used. A public port may answer /healthz
alone (``mount_liveness``), which costs nothing. ``start_pages_server`` serves other routes (the
dashboard's pages) on a port of their own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.observability.drain import Drain
from bot.observability.metrics import REGISTRY
from bot.tasks import finish_within

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"
PING_TIMEOUT = 2.0
# A successful ping is reused this long, so a flood of /readyz is not a flood of database pings.
READY_CACHE_S = 1.0


class Pingable(Protocol):
    """A store whose ``ping`` raises when the database cannot be reached."""

    async def ping(self) -> None:
        """Run a trivial query."""
        ...


@dataclass
class Probes:
    """What the probes look at: the store, and the drain that turns readiness off."""

    store: Pingable
    drain: Drain | None = None
    ping_timeout: float = PING_TIMEOUT
    # Anything else that must hold before traffic is welcome (Discord: the gateway is up).
    connected: Callable[[], bool] | None = None
    ready_cache_s: float = READY_CACHE_S
    _ok_at: float | None = field(default=None, repr=False)
    _pinging: asyncio.Future[str | None] | None = field(default=None, repr=False)

    async def healthz(self, _request: web.Request) -> web.Response:
        """Answer 200 while the process serves requests."""
        return web.json_response({"ok": True})

    async def readyz(self, _request: web.Request) -> web.Response:
        """Answer 200 when the database answers and the process is not draining, else 503."""
        if self.drain is not None and self.drain.draining:
            return web.json_response({"ok": False, "reason": "draining"}, status=503)
        if self.connected is not None and not self.connected():
            return web.json_response({"ok": False, "reason": "not connected"}, status=503)
        failure = await self._ping()
        if failure is not None:
            return web.json_response(
                {"ok": False, "reason": f"database unreachable ({failure})"}, status=503
            )
        return web.json_response({"ok": True})

    async def _ping(self) -> str | None:
        """Ping the database once for every request meanwhile; return the failure's kind.

        A success is reused for ``ready_cache_s``; requests that come while a ping is out wait
        for that ping. A failure is not reused: the next request pings again.
        """
        if self._ok_at is not None and time.monotonic() - self._ok_at < self.ready_cache_s:
            return None
        if self._pinging is None or self._pinging.done():
            self._pinging = asyncio.ensure_future(self._ping_once())
        return await asyncio.shield(self._pinging)

    async def _ping_once(self) -> str | None:
        try:
            # A ping past the timeout is left to finish, so its connection goes back to the pool.
            await finish_within(self.store.ping(), self.ping_timeout, what="the readiness ping")
        except Exception as exc:
            # The reason names the kind of failure only: a URL or credential never leaks here.
            log.warning("readiness: database unreachable (%s)", type(exc).__name__)
            return type(exc).__name__
        self._ok_at = time.monotonic()
        return None

    async def metrics(self, _request: web.Request) -> web.Response:
        """Return every metric in the Prometheus text format."""
        response = web.Response(body=generate_latest(REGISTRY))
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response


def mount(
    app: web.Application,
    store: Pingable,
    *,
    drain: Drain | None = None,
    connected: Callable[[], bool] | None = None,
) -> Probes:
    """Add GET /healthz, /readyz and /metrics to an aiohttp application."""
    probes = Probes(store, drain, connected=connected)
    app.router.add_get(HEALTH_PATH, probes.healthz)
    app.router.add_get(READY_PATH, probes.readyz)
    app.router.add_get(METRICS_PATH, probes.metrics)
    return probes


async def _liveness(_request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


def mount_liveness(app: web.Application) -> None:
    """Add GET /healthz alone (no database, no metrics): what a public port may answer."""
    app.router.add_get(HEALTH_PATH, _liveness)


@dataclass
class HealthServer:
    """A running HTTP server: the probes and metrics, the pages, or a platform's endpoint."""

    runner: web.AppRunner
    port: int

    async def close(self) -> None:
        """Stop serving."""
        await self.runner.cleanup()


async def start_health_server(
    store: Pingable,
    *,
    host: str = "0.0.0.0",
    port: int = 8080,
    drain: Drain | None = None,
    connected: Callable[[], bool] | None = None,
) -> HealthServer:
    """Serve /healthz, /readyz and /metrics on the operations port; port 0 picks a free one."""
    app = web.Application()
    mount(app, store, drain=drain, connected=connected)
    server = await serve_http(app, host, port)
    log.info("health and metrics on http://%s:%d%s", host, server.port, METRICS_PATH)
    return server


async def start_pages_server(
    routes: Callable[[web.Application], None], *, host: str, port: int
) -> HealthServer:
    """Serve the routes ``routes`` adds (the dashboard's pages) and /healthz on their own port."""
    app = web.Application()
    mount_liveness(app)
    routes(app)
    server = await serve_http(app, host, port)
    log.info("dashboard pages on http://%s:%d", host, server.port)
    return server


async def serve_http(app: web.Application, host: str, port: int) -> HealthServer:
    """Serve an aiohttp app on host:port (0: any free port); the server knows the port bound."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = port
    server = getattr(site, "_server", None)
    sockets = getattr(server, "sockets", None) or []
    if sockets:
        bound = int(sockets[0].getsockname()[1])
    return HealthServer(runner, bound)
