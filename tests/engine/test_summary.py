"""A player's summary (Slack's Home tab, Discord's /quiz me) from a real store."""

from __future__ import annotations

import random

from bot.engine import QuizEngine
from bot.storage import SqlStore
from tests.conftest import FakeClock
from tests.web.conftest import ALICE, BANK, BOB, CAROL, MALLORY, T1, T2, seed_history

W1 = (T1.platform, T1.workspace)


async def test_summary_totals_streak_reviews_and_week(store: SqlStore):
    clock = FakeClock()
    engine = QuizEngine(store, BANK, clock=clock, rng=random.Random(7))
    await seed_history(store, engine, clock)
    alice = await engine.player_summary(*W1, ALICE)
    assert (alice.answered, alice.correct) == (2, 2)
    assert (alice.current_streak, alice.best_streak) == (2, 2)
    # Two and a half days on: the first right answer (due in 2 days) is due, the second is not.
    assert alice.reviews_due == 1 and alice.reviews_waiting == 1
    assert [e.user for e in alice.week.entries] == [ALICE, BOB, CAROL]
    assert alice.week.caller is not None and alice.week.caller.rank == 1
    bob = await engine.player_summary(*W1, BOB)
    assert (bob.answered, bob.correct, bob.points) == (2, 1, 1)
    assert (bob.current_streak, bob.best_streak) == (0, 1)
    assert bob.reviews_due == 2  # his right answer after 2 days, his miss after 1
    nobody = await engine.player_summary(*W1, "U07ZED00000")
    assert (nobody.answered, nobody.current_streak, nobody.reviews_due) == (0, 0, 0)
    assert nobody.week.caller is None
    other = await engine.player_summary(T2.platform, T2.workspace, ALICE)
    assert other.answered == 0 and [e.user for e in other.week.entries] == [MALLORY]
