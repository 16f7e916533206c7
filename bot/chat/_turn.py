"""The first response of an interaction, in time: answer within the budget, else defer.

Every platform wants an interaction's first response within a few seconds (Slack 3 s, Discord
3 s). A turn watches the clock while the work runs: if nothing has been sent when the budget
runs out, it defers (the platform's "working on it"), and the answer follows as a follow-up.

Nearly every answer beats its budget, so watching costs as little as it can: the turns of one
event loop share a single timer (``Budgets``), set for the earliest budget still running. A
turn's start adds an entry to a heap and its answer clears the entry; no timer is made,
cancelled or sorted per turn, and no lock is made unless a deferral is under way.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import weakref

from bot.chat.content import Content
from bot.chat.port import Exchange


class _Watch:
    """One turn's entry in the heap; cleared once the turn needs no deferral."""

    __slots__ = ("private", "turn")

    def __init__(self, turn: Turn, private: bool) -> None:
        self.turn: Turn | None = turn
        self.private = private


class Budgets:
    """The budgets of the turns on one event loop, watched by one timer.

    Entries whose turn answered in time stay in the heap, cleared, until their time comes;
    they hold no reference to the turn. Nothing here holds the loop: the timer is held weakly
    (the loop holds it while it is scheduled), so a loop that is closed and dropped goes, and
    its budgets with it.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Watch]] = []
        self._order = itertools.count()
        self._timer: weakref.ref[asyncio.TimerHandle] | None = None
        self._armed_for = math.inf

    def __len__(self) -> int:
        """Return how many entries wait for their time (cleared ones included)."""
        return len(self._heap)

    def watch(
        self, loop: asyncio.AbstractEventLoop, turn: Turn, budget: float, *, private: bool
    ) -> _Watch:
        """Call ``turn._due(private)`` in ``budget`` seconds unless the entry is cleared first."""
        entry = _Watch(turn, private)
        when = loop.time() + budget
        heapq.heappush(self._heap, (when, next(self._order), entry))
        if when < self._armed_for:
            self._arm(loop, when)
        return entry

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        timer = self._timer() if self._timer is not None else None
        if timer is not None:
            timer.cancel()
        self._timer = weakref.ref(loop.call_at(when, self._fire))
        self._armed_for = when

    def _fire(self) -> None:
        self._timer, self._armed_for = None, math.inf
        loop = asyncio.get_running_loop()
        # The loop runs a timer up to one clock resolution early.
        now = loop.time() + loop._clock_resolution  # type: ignore[attr-defined]
        heap = self._heap
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)[2]
            turn, entry.turn = entry.turn, None
            if turn is not None:
                turn._due(entry.private)
        if heap:
            self._arm(loop, heap[0][0])


_BUDGETS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Budgets] = (
    weakref.WeakKeyDictionary()
)


def budgets(loop: asyncio.AbstractEventLoop) -> Budgets:
    """Return the loop's budgets (made on first use)."""
    watched = _BUDGETS.get(loop)
    if watched is None:
        watched = _BUDGETS[loop] = Budgets()
    return watched


class Turn:
    """One interaction's replies, the first one given in time."""

    __slots__ = ("_deferral", "_lock", "_watch", "deferred", "exchange")

    def __init__(self, exchange: Exchange) -> None:
        self.exchange = exchange
        self._watch: _Watch | None = None
        # Made only once a deferral is under way: it then orders the deferral and the answer.
        self._lock: asyncio.Lock | None = None
        self._deferral: asyncio.Task[None] | None = None
        self.deferred = False

    async def start(self, *, private: bool) -> None:
        """Begin the work: defer at once for a zero budget, else when the budget runs out."""
        budget = self.exchange.budget
        if budget <= 0:
            await self.defer(private=private)
        else:
            loop = asyncio.get_running_loop()
            self._watch = budgets(loop).watch(loop, self, budget, private=private)

    def _due(self, private: bool) -> None:
        """The budget ran out with the work still going: defer now, in a task of its own."""
        self._watch = None
        self._deferral = asyncio.get_running_loop().create_task(self.defer(private=private))

    async def defer(self, *, private: bool) -> None:
        """Give the first response now, the answer to follow (nothing if one was given)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self.exchange.defer(private=private)
            self.deferred = True

    async def reply(self, content: Content, *, private: bool) -> str | None:
        """Answer the interaction (the first response, or a follow-up)."""
        # The answer is here: the clock has nothing left to do.
        self._stop_clock()
        if self._lock is None:
            return await self.exchange.reply(content, private=private)
        async with self._lock:
            # Any deferral has given its response: this one follows it.
            return await self.exchange.reply(content, private=private)

    async def close(self) -> None:
        """Stop watching the clock; let a deferral under way finish."""
        self._stop_clock()
        if self._deferral is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._deferral

    def _stop_clock(self) -> None:
        """Clear the turn's entry; drop a deferral that has not started (it takes the lock)."""
        if self._watch is not None:
            self._watch.turn = None
            self._watch = None
        if self._lock is None and self._deferral is not None:
            self._deferral.cancel()
