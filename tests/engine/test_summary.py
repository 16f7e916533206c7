"""A player's summary (Slack's Home tab, Discord's /quiz me) from a real store."""

from __future__ import annotations

import random

from bot.engine import QuizEngine
from bot.storage import SqlStore
from tests.conftest import FakeClock
from tests.web.conftest import BANK, seed_history


async def test_summary_totals_streak_reviews_and_week(store: SqlStore):
    clock = FakeClock()
    engine = QuizEngine(store, BANK, clock=clock, rng=random.Random(7))
    await seed_history(store, engine, clock)
    alice = await engine.player_summary("slack", "T1", "alice")
    assert (alice.answered, alice.correct) == (2, 2)
    assert (alice.current_streak, alice.best_streak) == (2, 2)
    # Two and a half days on: the first right answer (due in 2 days) is due, the second is not.
    assert alice.reviews_due == 1 and alice.reviews_waiting == 1
    assert [e.user for e in alice.week.entries] == ["alice", "bob", "carol"]
    assert alice.week.caller is not None and alice.week.caller.rank == 1
    bob = await engine.player_summary("slack", "T1", "bob")
    assert (bob.answered, bob.correct, bob.points) == (2, 1, 1)
    assert (bob.current_streak, bob.best_streak) == (0, 1)
    assert bob.reviews_due == 2  # his right answer after 2 days, his miss after 1
    nobody = await engine.player_summary("slack", "T1", "zed")
    assert (nobody.answered, nobody.current_streak, nobody.reviews_due) == (0, 0, 0)
    assert nobody.week.caller is None
    other = await engine.player_summary("slack", "T2", "alice")
    assert other.answered == 0 and [e.user for e in other.week.entries] == ["mallory"]
