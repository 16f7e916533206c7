"""``quizbot slack``: run the bot on Slack, in Socket Mode or HTTP mode."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``slack`` subcommand."""
    parser = subparsers.add_parser(
        "slack",
        help="run on Slack (Socket Mode with SLACK_APP_TOKEN, else HTTP mode)",
        description=(
            "Run the quiz bot on Slack. With SLACK_APP_TOKEN set it connects in Socket Mode and "
            "needs no public URL; otherwise it serves HTTP on --port at /slack/events (and "
            "GET /healthz) and needs SLACK_SIGNING_SECRET. SLACK_BOT_TOKEN is needed for one "
            "workspace; SLACK_CLIENT_ID and SLACK_CLIENT_SECRET instead install it into many "
            "(HTTP mode). SLACK_API_URL points the Web API client at a proxy or a stand-in. "
            "Setting up the app: docs/slack.md."
        ),
    )
    parser.add_argument(
        "--port", type=int, default=3000, help="HTTP mode: port to listen on (default 3000)"
    )
    parser.add_argument(
        "--host",
        default=None,
        help=(
            "HTTP mode: address to listen on (default QUIZBOT_HOST, else 127.0.0.1, or 0.0.0.0 "
            "inside a container). It serves plain HTTP: put a TLS proxy in front"
        ),
    )
    parser.set_defaults(handler=run_slack)


def run_slack(args: argparse.Namespace) -> int:
    """Check the credentials, then serve until interrupted."""
    import asyncio

    from bot.adapters.slack.app import check_credentials, serve
    from bot.config import load_settings
    from bot.observability.heap import collect_for_serving

    settings = load_settings()
    check_credentials(settings)
    host = args.host or settings.listen_host()
    collect_for_serving()
    asyncio.run(serve(settings, host=host, port=args.port, handle_signals=True))
    return 0
