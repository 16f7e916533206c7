"""One workspace's commands never read or change another's rounds, scores or schedules.

Two Slack workspaces (and a Discord server) reuse the same channel and user ids on purpose:
every lookup must be keyed by platform and workspace, not by the ids a platform hands out.
"""

from __future__ import annotations

import random

import pytest

from bot.engine import AnswerStatus, Period, Place, QuizEngine
from bot.errors import NotFound, UserError
from bot.scheduler import ScheduleService, schedule_request
from bot.storage import SqlStore
from tests.conftest import FakeClock, SimpleBank, make_question

HOME = Place("slack", "T-HOME", "C1")
AWAY = Place("slack", "T-AWAY", "C1")  # same channel id, another workspace
DISCORD = Place("discord", "T-HOME", "C1")  # same ids again, another platform
OTHERS = [AWAY, DISCORD]


@pytest.fixture
def engine(store: SqlStore, clock: FakeClock) -> QuizEngine:
    bank = SimpleBank([make_question(f"q{n}") for n in range(5)])
    return QuizEngine(store, bank, clock=clock, rng=random.Random(7))


async def test_rounds_are_invisible_and_untouchable_across_workspaces(engine: QuizEngine):
    card = await engine.start_round(HOME)
    rid = card.round.id
    for other in OTHERS:
        # Reading: no open round there, so nothing to close.
        assert await engine.open_round(other) is None
        with pytest.raises(UserError, match="no open question"):
            await engine.close_in_channel(other)
        # Changing: an answer naming HOME's round from elsewhere is refused and not stored.
        with pytest.raises(NotFound):
            await engine.answer(other.platform, other.workspace, rid, "U1", "A")
    assert await engine.answered_count(rid) == 0
    assert (await engine.get_round(rid)).closed_at is None
    # Each place can run its own round at the same time.
    for other in OTHERS:
        assert (await engine.start_round(other)).round.id != rid


async def test_scores_and_stats_count_only_their_own_workspace(engine: QuizEngine):
    card = await engine.start_round(HOME)
    outcome = await engine.answer("slack", "T-HOME", card.round.id, "U1", card.question.answer)
    assert outcome.status is AnswerStatus.ACCEPTED and outcome.points > 0
    await engine.close(card.round.id)
    home = await engine.leaderboard("slack", "T-HOME", Period.ALL, "U1")
    assert [e.user for e in home.entries] == ["U1"]
    for other in OTHERS:
        board = await engine.leaderboard(other.platform, other.workspace, Period.ALL, "U1")
        assert board.entries == () and board.caller is None
        stats = await engine.stats(other, "U1")
        assert (stats.answered, stats.correct, stats.points) == (0, 0, 0)
    assert (await engine.stats(HOME, "U1")).answered == 1


@pytest.mark.parametrize("other", OTHERS, ids=lambda p: f"{p.platform}-{p.workspace}")
async def test_schedules_are_kept_per_workspace(engine: QuizEngine, store: SqlStore, other: Place):
    service = ScheduleService(engine, store)
    await service.set(HOME, schedule_request("09:30", zone="Europe/Berlin"), user="UA", admin=True)
    assert await service.show(other) is None
    # An admin elsewhere removing "their" schedule does not touch HOME's.
    assert await service.remove(other, admin=True) is False
    kept = await service.show(HOME)
    assert kept is not None and (kept.schedule.hour, kept.schedule.minute) == (9, 30)
    # Setting one elsewhere leaves HOME's as it was.
    await service.set(other, schedule_request("18:00", zone="UTC"), user="UB", admin=True)
    kept = await service.show(HOME)
    assert kept is not None and (kept.schedule.hour, kept.schedule.zone) == (9, "Europe/Berlin")
    states = {s.schedule.place for s in await store.schedule_states(other.platform)}
    assert other in states
