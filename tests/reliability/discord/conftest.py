"""The Discord adapter's fixtures (stand-in, client, engine, clock), for the tests here."""

from tests.adapters.discord.conftest import api, bot, clock, db_url, engine

__all__ = ["api", "bot", "clock", "db_url", "engine"]
