"""``quizbot teams``: run the bot on Microsoft Teams (the messaging endpoint of a bot)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``teams`` subcommand."""
    parser = subparsers.add_parser(
        "teams",
        help="run on Microsoft Teams (serves /api/messages)",
        description=(
            "Run the quiz bot on Microsoft Teams with the Microsoft 365 Agents SDK. It serves "
            "POST /api/messages on TEAMS_PORT (default 3978) for the Azure Bot's messaging "
            "endpoint, behind a TLS proxy. TEAMS_APP_ID and TEAMS_APP_PASSWORD are the Entra ID "
            "app registration's id and client secret (TEAMS_TENANT_ID for a single-tenant app). "
            "QUIZBOT_PUBLIC_URL lets Teams fetch charts too large to inline. Setting up the "
            "app: docs/teams.md."
        ),
    )
    parser.set_defaults(handler=run_teams)


def run_teams(args: argparse.Namespace) -> int:
    """Check the credentials, then serve until interrupted."""
    import asyncio

    from bot.adapters.teams.app import auth_configuration, serve
    from bot.config import load_settings
    from bot.observability.heap import collect_for_serving

    settings = load_settings()
    auth_configuration(settings)  # a missing credential is one line and exit 2, before anything
    collect_for_serving()
    asyncio.run(serve(settings))
    return 0
