"""Durable state: the engine's Store protocol on SQLAlchemy Core (SQLite or PostgreSQL)."""

from bot.engine.ports import Store
from bot.storage._conversations import ChartSql, ConversationSql, Reference
from bot.storage._crypt import TokenCipher
from bot.storage._installations import InstallationSql
from bot.storage._requests import RequestClaims, Won
from bot.storage._schema import latest_version
from bot.storage._store import DatabaseUnusable, SqlStore, make_engine, open_store, where_is

__all__ = [
    "ChartSql",
    "ConversationSql",
    "DatabaseUnusable",
    "InstallationSql",
    "Reference",
    "RequestClaims",
    "SqlStore",
    "Store",
    "TokenCipher",
    "Won",
    "latest_version",
    "make_engine",
    "open_store",
    "where_is",
]
