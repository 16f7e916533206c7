"""``quizbot dashboard revoke``: end every dashboard session of a workspace at once."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from bot.platforms import CHATS


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``dashboard`` subcommand and its ``revoke`` action."""
    parser = subparsers.add_parser(
        "dashboard",
        help="the web dashboard: end a workspace's sessions (revoke)",
        description="Manage the web dashboard's sessions (see docs/dashboard.md).",
    )
    actions = parser.add_subparsers(dest="dashboard_action", metavar="ACTION", required=True)
    revoke = actions.add_parser(
        "revoke",
        help="end every session and unused link of one workspace (or Discord server) now",
        description=(
            "End every dashboard session and every unused link of one workspace now, on every "
            "replica: each of its people must ask the bot for a new link. Use it when an admin "
            "loses the role, or a link or cookie may have leaked. To end every workspace's "
            "sessions, replace QUIZBOT_DASHBOARD_SECRET instead."
        ),
    )
    revoke.add_argument("platform", choices=CHATS, help="the platform")
    revoke.add_argument(
        "workspace", help="the Slack team id (T...), the Discord server id or the Teams tenant id"
    )
    revoke.set_defaults(handler=run_revoke)


def run_revoke(args: argparse.Namespace) -> int:
    """Revoke a workspace's dashboard sessions; print what was done."""

    from bot.config import load_settings
    from bot.errors import ConfigError

    settings = load_settings()

    async def action(store: Any, where: str) -> int:
        from bot.engine.ports import utc_now
        from bot.storage import latest_version

        if await store.schema_version() < latest_version():
            if not settings.auto_migrate:
                raise ConfigError(
                    f"{where}: the schema is behind this quizbot; run `quizbot db upgrade` first"
                )
            await store.upgrade()
        at = utc_now()
        await store.revoke_dashboard_sessions(args.platform, args.workspace, at)
        print(
            f"{where}: every dashboard session of {args.platform} {args.workspace} issued before "
            f"{at:%Y-%m-%d %H:%M:%S} UTC is ended"
        )
        return 0

    from bot.cli.db import _with_store

    return asyncio.run(_with_store(action))
