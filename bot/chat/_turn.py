"""The first response of an interaction, in time: answer within the budget, else defer.

Every platform wants an interaction's first response within a few seconds (Slack 3 s, Discord
3 s). A turn watches the clock while the work runs: if nothing has been sent when the budget
runs out, it defers (the platform's "working on it"), and the answer follows as a follow-up.
"""

from __future__ import annotations

import asyncio
import contextlib

from bot.chat.content import Content
from bot.chat.port import Exchange


class Turn:
    """One interaction's replies, the first one given in time."""

    def __init__(self, exchange: Exchange) -> None:
        self.exchange = exchange
        self._lock = asyncio.Lock()
        # The clock is a timer, not a task: nearly every answer beats the budget, and a task
        # per turn (started, cancelled, awaited) cost more than the rest of the turn's waiting.
        self._timer: asyncio.TimerHandle | None = None
        self._watch: asyncio.Task[None] | None = None
        self.deferred = False

    async def start(self, *, private: bool) -> None:
        """Begin the work: defer at once for a zero budget, else when the budget runs out."""
        budget = self.exchange.budget
        if budget <= 0:
            await self.defer(private=private)
        else:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(budget, self._due, private)

    def _due(self, private: bool) -> None:
        """The budget ran out with the work still going: defer now, in a task of its own."""
        self._timer = None
        self._watch = asyncio.get_running_loop().create_task(self.defer(private=private))

    async def defer(self, *, private: bool) -> None:
        """Give the first response now, the answer to follow (nothing if one was given)."""
        async with self._lock:
            await self.exchange.defer(private=private)
            self.deferred = True

    async def reply(self, content: Content, *, private: bool) -> str | None:
        """Answer the interaction (the first response, or a follow-up)."""
        async with self._lock:
            # The answer is here: the clock has nothing left to do.
            self._stop_clock()
            return await self.exchange.reply(content, private=private)

    async def close(self) -> None:
        """Stop watching the clock."""
        self._stop_clock()
        if self._watch is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch

    def _stop_clock(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._watch is not None and asyncio.current_task() is not self._watch:
            self._watch.cancel()
