"""A turn's first response: the answer within the budget, else a deferral and a follow-up."""

from __future__ import annotations

import asyncio

from bot.chat._turn import Turn
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


async def test_an_answer_within_the_budget_is_the_first_response() -> None:
    exchange = Exchange(budget=0.05)
    turn = Turn(exchange)
    await turn.start(private=True)
    await turn.reply(Text(("ok",)), private=True)
    await turn.close()
    await asyncio.sleep(0.1)  # the budget has run out since: nothing more is sent
    assert exchange.sent == ["reply"] and not turn.deferred


async def test_a_late_answer_follows_a_deferral() -> None:
    exchange = Exchange(budget=0.01)
    turn = Turn(exchange)
    await turn.start(private=True)
    await asyncio.sleep(0.05)
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
    await asyncio.sleep(0.05)
    assert exchange.sent == []
