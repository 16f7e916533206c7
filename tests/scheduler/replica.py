"""One scheduler replica as a process of its own, for the tests that kill one mid-post.

``python -m tests.scheduler.replica --platform slack|discord --url URL --db URL --now ISO
--token TOKEN`` runs one pass of the daily scheduler at ``--now`` on the real slack_sdk or
discord.py client, pointed at a stand-in, and prints ``done`` when it returns (a test kills it
before that).
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from bot.bank.loader import load_bank
from bot.chat import Publisher
from bot.engine import QuizEngine
from bot.scheduler.daily import post_due
from bot.storage import open_store
from tests.adapters.slack.conftest import BANK


async def run(args: argparse.Namespace) -> None:
    now = datetime.fromisoformat(args.now)
    store = await open_store(args.db, migrate=False)
    engine = QuizEngine(store, load_bank([BANK]), clock=lambda: now, rng=random.Random(1))
    closing: list[Callable[[], Awaitable[Any]]] = [store.close]
    if args.platform == "slack":
        import aiohttp

        from bot.adapters.slack.app import web_client
        from bot.adapters.slack.handlers import SlackPort
        from bot.config import Settings

        settings = Settings(
            SLACK_BOT_TOKEN=args.token,
            SLACK_SIGNING_SECRET="replica",
            SLACK_API_URL=args.url,
            QUIZBOT_DATABASE_URL=args.db,
        )
        http = aiohttp.ClientSession()
        closing.append(http.close)
        publisher = Publisher(engine, SlackPort(web_client(settings, http)))
    else:
        import discord

        from bot.adapters.discord.app import configure_endpoints
        from bot.adapters.discord.handlers import DiscordPort

        configure_endpoints(args.url, None)
        client = discord.Client(intents=discord.Intents.none())
        await client.login(args.token)
        closing.append(client.close)
        publisher = Publisher(engine, DiscordPort(client))
    print("started", flush=True)
    try:
        await post_due(engine, publisher, store, now=now, claimant=args.claimant)
    finally:
        for close in reversed(closing):
            await close()
    print("done", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", choices=("slack", "discord"), required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--now", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--claimant", default="doomed")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
