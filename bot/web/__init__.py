"""The team dashboard: HTML pages over the bot's own HTTP server, read-only but for questions."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from aiohttp import web

from bot.web._app import COOKIE, OPEN_PATH, PREFIX, Dashboard

if TYPE_CHECKING:
    from bot.runtime import Runtime

log = logging.getLogger(__name__)


def dashboard_for(rt: Runtime) -> Dashboard | None:
    """Return the dashboard over a running bot, or None while QUIZBOT_DASHBOARD_SECRET is unset."""
    secret = rt.settings.dashboard_secret
    if not secret:
        return None
    public = rt.settings.public_url or ""
    if not public.startswith("https://"):
        # Links carry tokens and the cookie a session: without TLS both travel in clear.
        log.warning(
            "the dashboard is on but QUIZBOT_PUBLIC_URL is not an https:// URL: its session "
            "cookie is not marked Secure; serve it behind TLS and set the https URL"
        )
    return Dashboard(
        engine=rt.engine,
        store=rt.store,
        secret=secret,
        public_url=rt.settings.public_url,
        clock=rt.engine.clock,
    )


def dashboard_pages(rt: Runtime) -> Callable[[web.Application], None] | None:
    """Return what adds the dashboard's pages to an app, or None while the dashboard is off."""
    dashboard = dashboard_for(rt)
    return dashboard.mount if dashboard is not None else None


__all__ = ["COOKIE", "OPEN_PATH", "PREFIX", "Dashboard", "dashboard_for", "dashboard_pages"]
