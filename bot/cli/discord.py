"""``quizbot discord``: run the bot on Discord, or print the link that adds it to a server."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``discord`` subcommand."""
    parser = subparsers.add_parser(
        "discord",
        help="run the bot on Discord (gateway)",
        description=(
            "Run the quiz on Discord with DISCORD_TOKEN. DISCORD_GUILD_ID syncs the commands to "
            "one server at once; DISCORD_API_URL and DISCORD_GATEWAY_URL redirect REST and the "
            "gateway (a proxy, or a local stand-in)."
        ),
    )
    parser.add_argument(
        "--invite-url",
        action="store_true",
        help=(
            "print the link that adds the bot with exactly the permissions it needs "
            "(application id from DISCORD_APPLICATION_ID, else looked up with DISCORD_TOKEN)"
        ),
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the bot until interrupted, or print the invite link; return the exit status."""
    from bot.adapters.discord.app import application_id, invite_url, serve
    from bot.config import load_settings
    from bot.observability.heap import collect_for_serving

    settings = load_settings()
    if args.invite_url:
        print(invite_url(asyncio.run(application_id(settings))))
        return 0
    collect_for_serving()
    asyncio.run(serve(settings))
    return 0
