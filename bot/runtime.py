"""Wire the pieces a running bot needs: settings, the question bank, the store and the engine."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.engine import QuizEngine
from bot.engine.ports import Clock, utc_now

if TYPE_CHECKING:
    from bot.bank import QuestionBank
    from bot.storage import SqlStore


@dataclass(frozen=True)
class Runtime:
    """The long-lived objects of a running bot."""

    settings: Settings
    bank: QuestionBank
    store: SqlStore
    engine: QuizEngine


@asynccontextmanager
async def open_runtime(
    settings: Settings, *, clock: Clock = utc_now, rng: random.Random | None = None
) -> AsyncIterator[Runtime]:
    """Load the bank, open (and migrate) the store, build the engine; close the store on exit."""
    from bot.bank.loader import load_bank
    from bot.bank.templates import load_templates
    from bot.bank.tracks import load_tracks
    from bot.bank.workspace import WorkspaceBanks
    from bot.storage import open_store

    bank = load_bank(settings.question_paths(), load_templates())
    tracks = load_tracks(settings.question_paths(), bank)
    store = await open_store(
        settings.database_url,
        migrate=settings.auto_migrate,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        sqlite_synchronous=settings.sqlite_synchronous,
    )
    try:
        engine = QuizEngine(
            store,
            bank,
            clock=clock,
            rng=rng,
            default_minutes=settings.round_minutes,
            tracks=tracks,
            banks=WorkspaceBanks(bank, store, pause_at=settings.flag_pause),
        )
        yield Runtime(settings=settings, bank=bank, store=store, engine=engine)
    finally:
        await store.close()
