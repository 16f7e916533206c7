"""``quizbot db``: the database schema by hand, and the key that encrypts stored tokens."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from bot.errors import ConfigError

EXIT_BEHIND = 1
EXIT_UNREACHABLE = 1


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``db`` subcommand and its ``upgrade`` and ``status`` actions."""
    parser = subparsers.add_parser(
        "db",
        help=(
            "database schema: apply migrations (upgrade) or show the version (status); the "
            "token key (new-token-key, reencrypt)"
        ),
        description=(
            "Manage the schema of the database at QUIZBOT_DATABASE_URL. The bots apply pending "
            "migrations when they start unless QUIZBOT_AUTO_MIGRATE=false; with several "
            "replicas, run `quizbot db upgrade` once before starting them (a Kubernetes Job "
            "or init container does this in deploy/k8s/)."
        ),
    )
    actions = parser.add_subparsers(dest="db_action", metavar="ACTION", required=True)
    upgrade = actions.add_parser(
        "upgrade",
        help="apply every pending migration and print the version before and after",
        description="Apply every pending migration, in order, each in one transaction.",
    )
    upgrade.set_defaults(handler=run_upgrade)
    status = actions.add_parser(
        "status",
        help="print the applied and the expected schema version (exit 1 if behind)",
        description=(
            "Print the schema version of the database and the version this quizbot expects. "
            "Exit status 0 when they match, 1 when migrations are pending or the database "
            "cannot be reached."
        ),
    )
    status.set_defaults(handler=run_status)
    new_key = actions.add_parser(
        "new-token-key",
        help="print a fresh key for QUIZBOT_TOKEN_KEY",
        description=(
            "Print a fresh random key for QUIZBOT_TOKEN_KEY, which encrypts the Slack "
            "installations (their tokens) stored in the database. To rotate, put the new key "
            "first and keep the old one after a comma until `quizbot db reencrypt` has run."
        ),
    )
    new_key.set_defaults(handler=run_new_key)
    reencrypt = actions.add_parser(
        "reencrypt",
        help="encrypt every stored installation under the first key of QUIZBOT_TOKEN_KEY",
        description=(
            "Rewrite every stored Slack installation under the first key of QUIZBOT_TOKEN_KEY: "
            "plain rows from before encryption and rows an older key wrote. Every key listed "
            "decrypts. The Slack bot does the same when it starts in OAuth mode."
        ),
    )
    reencrypt.set_defaults(handler=run_reencrypt)


def run_upgrade(args: argparse.Namespace) -> int:
    """Apply pending migrations; print ``from -> to``."""
    return asyncio.run(_with_store(_upgrade))


def run_status(args: argparse.Namespace) -> int:
    """Print the applied and the expected version."""
    return asyncio.run(_with_store(_status))


def run_new_key(args: argparse.Namespace) -> int:
    """Print a fresh token key."""
    from bot.storage import TokenCipher

    print(TokenCipher.new_key())
    return 0


def run_reencrypt(args: argparse.Namespace) -> int:
    """Re-encrypt the stored installations under the current token key."""
    from bot.config import load_settings
    from bot.storage import TokenCipher

    settings = load_settings()
    if not settings.token_key:
        raise ConfigError(
            "QUIZBOT_TOKEN_KEY is not set; make a key with `quizbot db new-token-key`"
        )
    cipher = TokenCipher.from_setting(settings.token_key)

    async def action(store: Any, where: str) -> int:
        from bot.storage import InstallationSql

        plain, rotated = await InstallationSql(store, cipher).reencrypt()
        print(
            f"{where}: {plain} plain and {rotated} older-key installation(s) encrypted "
            "under the current key"
        )
        return 0

    return asyncio.run(_with_store(action))


async def _upgrade(store: Any, where: str) -> int:
    before = await store.schema_version()
    applied = await store.upgrade()
    after = await store.schema_version()
    if applied:
        steps = ", ".join(str(v) for v in applied)
        print(f"{where}: schema version {before} -> {after} (applied {steps})")
    else:
        print(f"{where}: schema version {after}, already up to date")
    return 0


async def _status(store: Any, where: str) -> int:
    from bot.storage import latest_version

    current, expected = await store.schema_version(), latest_version()
    if current == expected:
        print(f"{where}: schema version {current}, up to date")
        return 0
    if current < expected:
        print(
            f"{where}: schema version {current}, this quizbot needs {expected}: "
            "run `quizbot db upgrade`"
        )
    else:
        print(
            f"{where}: schema version {current} is newer than this quizbot's {expected}: "
            "upgrade quizbot"
        )
    return EXIT_BEHIND


async def _with_store(action: Any) -> int:
    from sqlalchemy.exc import DBAPIError

    from bot.config import load_settings
    from bot.storage import DatabaseUnusable, SqlStore, make_engine, where_is

    settings = load_settings()
    # No pool beyond one connection: this command runs one transaction at a time.
    synchronous = settings.sqlite_synchronous
    store = SqlStore(
        make_engine(
            settings.database_url, pool_size=1, max_overflow=0, sqlite_synchronous=synchronous
        ),
        sqlite_synchronous=synchronous,
    )
    # The password never reaches the terminal or a log collector.
    where = where_is(settings.database_url)
    try:
        status: int = await action(store, where)
        return status
    except (OSError, DBAPIError) as exc:
        # The same line every command prints; ``db`` keeps its documented exit status 1.
        print(f"quizbot db: {DatabaseUnusable(settings.database_url, exc)}", file=sys.stderr)
        return EXIT_UNREACHABLE
    finally:
        await store.close()
