"""The ``quizbot`` command: one subcommand per module in this package.

Each module defines ``register(subparsers)``, which adds its parser and sets ``handler`` to a
function taking the parsed arguments and returning an exit status. Modules import their heavy
dependencies (Slack, Discord, matplotlib, the database) inside the handler, so ``quizbot --help``
stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import re
import sys
from collections.abc import Sequence

from bot import __version__
from bot.errors import ConfigError, UserError
from bot.platforms import CHATS

# Order is the order in ``quizbot --help``.
COMMAND_MODULES = (
    "play",
    "validate",
    "report",
    "importer",
    "questions",
    "db",
    "dashboard",
    "slack",
    "discord",
    "teams",
    "bandwidth",
)

# Long-running commands log at INFO by default; the others only speak when something is wrong.
SERVER_COMMANDS = frozenset(CHATS)

EXIT_USAGE = 2
NEGATIVE = re.compile(r"^-\d")


def build_parser() -> argparse.ArgumentParser:
    """Build the parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="quizbot",
        description="A quiz bot for study channels on how large-scale training clusters work.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"quizbot {__version__}")
    parser.add_argument(
        "--log-level",
        default=None,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="logging level (default: INFO for the bots, WARNING for terminal commands)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"bot.cli.{name}")
        module.register(sub)
    # A value such as -5GB is a (bad) size, not an unknown option: argparse treats only plain
    # negative numbers that way, so widen its test. No quizbot option starts with a digit.
    for each in (parser, *sub.choices.values()):
        each._negative_number_matcher = NEGATIVE
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``quizbot`` command and return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    from bot.logs import setup_logging

    quiet = args.command not in SERVER_COMMANDS
    setup_logging(args.log_level or ("WARNING" if quiet else "INFO"))
    try:
        status: int = args.handler(args)
    except ConfigError as exc:
        print(f"quizbot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except UserError as exc:
        print(f"quizbot: {exc.plain()}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        logging.getLogger("quizbot").info("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (``quizbot bandwidth ... | head``): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:
        # A service that cannot be reached (the database, Slack, Discord): one line, no traceback.
        logging.getLogger("quizbot").debug("network or file error", exc_info=True)
        print(f"quizbot: {exc}", file=sys.stderr)
        return 1
    return status
