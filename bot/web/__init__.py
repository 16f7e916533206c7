"""The team dashboard: read-only HTML pages over the bot's own HTTP server."""

from bot.web._app import COOKIE, OPEN_PATH, PREFIX, Dashboard

__all__ = ["COOKIE", "OPEN_PATH", "PREFIX", "Dashboard"]
