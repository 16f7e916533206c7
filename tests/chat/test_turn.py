"""A turn's first response: the answer within the budget, else a deferral and a follow-up."""

from __future__ import annotations

import asyncio
import gc
import weakref

from bot.chat._turn import _BUDGETS, Turn, budgets
from bot.chat.content import Content
from bot.text import Text


class Exchange:
    """An interaction that records what it was sent."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.sent: list[str] = []

    async def defer(self, *, private: bool) -> None:
        self.sent.append("defer")

    async def reply(self, content: Content, *, private: bool) -> str | None:
        self.sent.append("reply")
        return None

    async def is_admin(self) -> bool:
        return False


async def budget_passed(budget: float) -> None:
    """Return once a turn started now with ``budget`` has deferred.

    The turns of a loop share one timer that takes their entries in order of time: once this
    later one has deferred, every earlier turn that was going to defer has done so too.
    """
    marker = Waiting(budget)
    turn = Turn(marker)
    await turn.start(private=True)
    await asyncio.wait_for(marker.deferred.wait(), 5)
    await turn.close()


async def test_an_answer_within_the_budget_is_the_first_response() -> None:
    exchange = Exchange(budget=0.05)
    turn = Turn(exchange)
    await turn.start(private=True)
    await turn.reply(Text(("ok",)), private=True)
    await turn.close()
    await budget_passed(0.06)  # the budget has run out since: nothing more was sent
    assert exchange.sent == ["reply"] and not turn.deferred


async def test_a_late_answer_follows_a_deferral() -> None:
    exchange = Waiting(budget=0.01)
    turn = Turn(exchange)
    await turn.start(private=True)
    await asyncio.wait_for(exchange.deferred.wait(), 5)
    assert exchange.sent == ["defer"] and turn.deferred
    await turn.reply(Text(("ok",)), private=True)
    await turn.close()
    assert exchange.sent == ["defer", "reply"]


async def test_a_zero_budget_defers_at_once() -> None:
    exchange = Exchange(budget=0)
    turn = Turn(exchange)
    await turn.start(private=True)
    assert exchange.sent == ["defer"]
    await turn.close()


async def test_closing_without_an_answer_stops_the_clock() -> None:
    exchange = Exchange(budget=0.02)
    turn = Turn(exchange)
    await turn.start(private=True)
    await turn.close()
    await budget_passed(0.03)
    assert exchange.sent == []


class Waiting(Exchange):
    """An exchange whose deferral can be waited for."""

    def __init__(self, budget: float) -> None:
        super().__init__(budget)
        self.deferred = asyncio.Event()

    async def defer(self, *, private: bool) -> None:
        await super().defer(private=private)
        self.deferred.set()


async def test_a_shorter_budget_started_later_defers_first() -> None:
    slow, fast = Waiting(budget=30), Waiting(budget=0.01)
    slow_turn, fast_turn = Turn(slow), Turn(fast)
    await slow_turn.start(private=True)
    await fast_turn.start(private=True)  # earlier than the one timer was set for
    await asyncio.wait_for(fast.deferred.wait(), 5)
    assert fast.sent == ["defer"] and slow.sent == []
    await slow_turn.reply(Text(("ok",)), private=True)
    for turn in (slow_turn, fast_turn):
        await turn.close()
    assert slow.sent == ["reply"]


async def test_turns_answered_in_time_share_one_timer_and_hold_nothing() -> None:
    loop = asyncio.get_running_loop()
    exchanges = [Exchange(budget=60) for _ in range(50)]
    turns = [Turn(e) for e in exchanges]
    for turn in turns:
        await turn.start(private=True)
    for turn in turns:
        await turn.reply(Text(("ok",)), private=True)
        await turn.close()
    watched = budgets(loop)
    assert len(watched) >= 50  # the entries wait for their time, cleared
    assert all(entry.turn is None for _, _, entry in watched._heap)
    ours = [h for h in loop._scheduled if not h.cancelled() and h._callback == watched._fire]  # type: ignore[attr-defined]
    assert len(ours) == 1
    assert [e.sent for e in exchanges] == [["reply"]] * 50


def test_a_closed_loop_leaves_no_budgets_behind() -> None:
    loop = asyncio.new_event_loop()

    async def answered() -> None:
        turn = Turn(Exchange(budget=60))
        await turn.start(private=True)
        await turn.reply(Text(("ok",)), private=True)
        await turn.close()

    loop.run_until_complete(answered())
    assert loop in _BUDGETS  # its timer still set for the cleared entry
    loop.close()
    gone = weakref.ref(loop)
    del loop
    gc.collect()
    assert gone() is None
