"""Health and metrics over HTTP: /healthz (process up), /readyz (database reachable), /metrics.

``mount`` adds the three routes to an aiohttp application that already serves something (the
Slack events endpoint); ``start_health_server`` serves them alone on a port (for Discord, which
has no HTTP server of its own).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
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

    async def healthz(self, _request: web.Request) -> web.Response:
        """Answer 200 while the process serves requests."""
        return web.json_response({"ok": True})

    async def readyz(self, _request: web.Request) -> web.Response:
        """Answer 200 when the database answers and the process is not draining, else 503."""
        if self.drain is not None and self.drain.draining:
            return web.json_response({"ok": False, "reason": "draining"}, status=503)
        if self.connected is not None and not self.connected():
            return web.json_response({"ok": False, "reason": "not connected"}, status=503)
        try:
            # A ping past the timeout is left to finish, so its connection goes back to the pool.
            await finish_within(self.store.ping(), self.ping_timeout, what="the readiness ping")
        except Exception as exc:
            # The reason names the kind of failure only: a URL or credential never leaks here.
            log.warning("readiness: database unreachable (%s)", type(exc).__name__)
            return web.json_response(
                {"ok": False, "reason": f"database unreachable ({type(exc).__name__})"},
                status=503,
            )
        return web.json_response({"ok": True})

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


@dataclass
class HealthServer:
    """A running health and metrics server."""

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
    extra: Callable[[web.Application], None] | None = None,
) -> HealthServer:
    """Serve /healthz, /readyz and /metrics on their own port; port 0 picks a free one.

    ``extra`` adds more routes to the same server before it starts (the dashboard's pages).
    """
    app = web.Application()
    mount(app, store, drain=drain, connected=connected)
    if extra is not None:
        extra(app)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = port
    server = getattr(site, "_server", None)
    sockets = getattr(server, "sockets", None) or []
    if sockets:
        bound = int(sockets[0].getsockname()[1])
    log.info("health and metrics on http://%s:%d%s", host, bound, METRICS_PATH)
    return HealthServer(runner, bound)
