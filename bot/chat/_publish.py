"""Post, refresh and reveal cards through a platform's port: the scheduler's Publisher, once.

A reveal is published right after its close is committed, each send made again after a
transient failure, and recorded as done once the thread reply is sent; its lease is renewed
while it is posted, and a process that finds it lost posts no thread reply. One not recorded
within its lease (the process died, or the platform was down) is claimed again by the timers of
any replica (``QuizEngine.pending_reveals``) and published by the one that wins it. A card's
"N answered" is refreshed at most once per interval per round, and never after its reveal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

from bot.chat._charts import Charts
from bot.chat.content import (
    Explanation,
    FindCard,
    MessageUser,
    PostCard,
    PostText,
    ReplyInThread,
    UpdateCard,
)
from bot.chat.port import Gone, Port
from bot.engine import QuizEngine
from bot.engine.model import Place, QuestionCard, Reveal
from bot.text import Text

log = logging.getLogger(__name__)

FIND_MARGIN = timedelta(minutes=1)
REVEAL_TRIES = 4
REVEAL_BACKOFF = 0.5
# A reveal being posted renews its lease (a minute, ``rounds.reveal_until``) this often.
REVEAL_HOLD_EVERY = 20.0
# How long a reveal waits for the reference of a card still being posted by this process
# before it gives up and posts the results as a message of their own.
CARD_WAIT = 30.0
# Channels whose latest post time is kept (for the platform's gap) before the old are dropped.
SPACED_CHANNELS = 4096

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


class Publisher:
    """Send what the engine returns to a platform's channels; keep each card's count fresh."""

    def __init__(
        self,
        engine: QuizEngine,
        port: Port,
        *,
        charts: Charts | None = None,
        refresh_every: float = 3.0,
        tries: int = REVEAL_TRIES,
        backoff: float = REVEAL_BACKOFF,
        sleep: Sleep = asyncio.sleep,
        hold_every: float = REVEAL_HOLD_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.port = port
        self.charts = charts
        self.refresh_every = refresh_every
        self.tries = tries
        self.backoff = backoff
        self.sleep = sleep
        self.hold_every = hold_every
        self.clock = clock
        self._pending: dict[int, asyncio.Task[None]] = {}
        self._last_refresh: dict[int, float] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._editing: set[asyncio.Task[None]] = set()
        self._posting: dict[int, asyncio.Event] = {}
        # When this process last posted (or will post) in each channel, for ``port.post_gap``.
        self._posted: dict[Place, float] = {}

    @property
    def platform(self) -> str:
        """Return the platform name rounds are stored under."""
        return self.port.platform

    @contextlib.asynccontextmanager
    async def _spaced(self, place: Place) -> AsyncIterator[None]:
        """Post in a channel after the platform's gap since this process's last post there.

        Slack answers a second message in a channel within a second with a 429 and a whole
        second's ``Retry-After``; a daily post (the reveal's thread reply, then the new card)
        always met it. Waiting out the rest of the second instead spares that request. The gap
        runs from when the last post was answered, which the platform saw no later.
        """
        gap = self.port.post_gap
        if gap > 0:
            now = self.clock()
            at = max(now, self._posted.get(place, -math.inf) + gap)
            self._posted[place] = at  # taken now: a post behind this one waits its own gap
            if len(self._posted) > SPACED_CHANNELS:
                self._posted = {p: t for p, t in self._posted.items() if t > now - gap}
            if at > now:
                await self.sleep(at - now)
        try:
            yield
        finally:
            if gap > 0:
                self._posted[place] = max(self._posted.get(place, -math.inf), self.clock())

    async def post_card(self, card: QuestionCard) -> str:
        """Post a question card and return its message reference."""
        async with self._spaced(card.round.place):
            ref = await self.port.send(PostCard(card.round.place, card))
        if ref is None:
            raise RuntimeError(f"the card of round {card.round_id} was posted without a reference")
        return ref

    async def find_card(self, card: QuestionCard) -> str | None:
        """Return the reference of the round's card if an earlier try posted it, else None."""
        # The round is opened just before its card is sent; a minute covers clocks apart.
        since = card.round.opened_at - FIND_MARGIN
        return await self.port.send(FindCard(card.round.place, card.round_id, since))

    async def message_user(self, place: Place, user: str, message: Text) -> None:
        """Tell one person something privately, unprompted."""
        await self.port.send(MessageUser(place, user, message))

    async def post_text(self, place: Place, message: Text) -> None:
        """Post a message in a channel."""
        async with self._spaced(place):
            await self.port.send(PostText(place, message))

    @contextlib.asynccontextmanager
    async def posting(self, round_id: int) -> AsyncIterator[None]:
        """Mark a round's card as on its way until its reference is stored (or it failed).

        A card posted as a command's response has its reference stored only after the platform
        answers; a close in between would otherwise find no card to edit and post the results
        as a second message. A reveal of this round waits for the end of this block instead.
        """
        done = asyncio.Event()
        self._posting[round_id] = done
        try:
            yield
        finally:
            done.set()
            if self._posting.get(round_id) is done:
                del self._posting[round_id]

    async def _card_ref(self, reveal: Reveal) -> str | None:
        """Return the reference of the card to edit: once stored, or once this process posted it."""
        if reveal.round.message_ref is not None:
            return reveal.round.message_ref
        rid = reveal.round.id
        on_its_way = self._posting.get(rid)
        if on_its_way is not None:
            try:
                async with asyncio.timeout(CARD_WAIT):
                    await on_its_way.wait()
            except TimeoutError:
                log.warning("the card of round %s was still being posted at its reveal", rid)
        # Stored since the close was read (here, or by the replica that posted the card)?
        return (await self.engine.get_round(rid)).message_ref

    async def publish_reveal(self, reveal: Reveal) -> None:
        """Edit the card into its results (or post them anew) and explain in its thread.

        The reveal's lease is renewed every ``hold_every`` seconds while this runs, so a send
        waiting out a rate limit does not let another replica claim and post it as well.
        """
        holding = asyncio.create_task(
            self._hold(reveal.round.id), name=f"quiz-reveal-lease-{reveal.round.id}"
        )
        try:
            await self._publish_reveal(reveal)
        finally:
            holding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await holding

    async def _hold(self, round_id: int) -> None:
        while True:
            await asyncio.sleep(self.hold_every)
            try:
                if not await self.engine.hold_reveal(round_id):
                    return
            except Exception:
                log.exception("could not renew the lease on the reveal of round %s", round_id)

    async def _publish_reveal(self, reveal: Reveal) -> None:
        rid = reveal.round.id
        place = reveal.round.place
        # The close is committed before this; a refresh holding the lock finishes first, and any
        # later one finds the round closed, so nothing brings the buttons back.
        async with self._lock(rid):
            self._forget(rid)
            ref = await self._card_ref(reveal)
            if ref is not None:
                edit = UpdateCard(place, ref, reveal)
                try:
                    await self._persist(lambda: self.port.send(edit))
                except Gone:
                    log.warning("the card of round %s is gone; posting the results anew", rid)
                    ref = None
            if ref is None:
                async with self._spaced(place):
                    ref = await self._persist(lambda: self.port.send(PostCard(place, reveal)))
        self._locks.pop(rid, None)
        if ref is None:
            raise RuntimeError(f"the results of round {rid} were posted without a reference")
        chart = None
        if reveal.question.chart is not None and self.charts is not None:
            chart = await self.charts.for_question(reveal.question.chart)
        # The edit can be made twice harmlessly; the thread reply cannot. Still holding the
        # reveal here means no other replica has claimed it, and, renewed, none can while the
        # reply goes out.
        if not await self.engine.hold_reveal(rid):
            log.warning("the reveal of round %s was taken over by another process", rid)
            return
        thread = ReplyInThread(place, ref, Explanation(reveal, chart))
        async with self._spaced(place):
            await self._persist(lambda: self.port.send(thread))
        if not await self.engine.reveal_done(rid):
            log.warning("the reveal of round %s was posted after its lease ran out", rid)

    async def _persist(self, call: Callable[[], Awaitable[T]]) -> T:
        """Make a send, again after a transient failure, up to ``tries`` times in all."""
        for attempt in range(1, self.tries):
            try:
                return await call()
            except Exception as exc:
                if not self.port.transient(exc):
                    raise
                log.warning("a send failed (%s); trying again", type(exc).__name__)
                await self.sleep(self.backoff * 2 ** (attempt - 1))
        return await call()

    # ------------------------------------------------------------ the "N answered" count

    def note_answer(self, round_id: int) -> None:
        """Refresh the card's answer count soon, at most once per ``refresh_every`` per round."""
        if round_id in self._pending:
            return
        # The slot is taken now, not when the edit lands: an answer during this refresh's edit
        # schedules the next one an interval later, never a second edit at once.
        now = self.clock()
        due = max(now, self._last_refresh.get(round_id, -math.inf) + self.refresh_every)
        self._last_refresh[round_id] = due
        self._pending[round_id] = asyncio.create_task(
            self._refresh_later(round_id, due - now), name=f"quiz-refresh-{round_id}"
        )

    async def aclose(self) -> None:
        """Drop the refreshes still waiting their turn; let one under way finish its edit."""
        tasks = list(self._pending.values())
        self._pending.clear()
        for task in tasks:
            if task not in self._editing:
                task.cancel()
        await asyncio.gather(*tasks, *self._editing, return_exceptions=True)

    def _lock(self, round_id: int) -> asyncio.Lock:
        return self._locks.setdefault(round_id, asyncio.Lock())

    def _forget(self, round_id: int) -> None:
        task = self._pending.pop(round_id, None)
        # A refresh waiting its turn is dropped; one already reading the store finishes (it sees
        # the round closed and edits nothing): cancelled inside a query, it would leave the
        # database connection to the garbage collector.
        if task is not None and task is not asyncio.current_task() and task not in self._editing:
            task.cancel()
        self._last_refresh.pop(round_id, None)

    async def _refresh_later(self, round_id: int, wait: float) -> None:
        if wait > 0:
            await self.sleep(wait)
        task = asyncio.current_task()
        if task is not None:
            self._editing.add(task)
        try:
            async with self._lock(round_id):
                # Answers that arrive from here on schedule the next refresh.
                self._pending.pop(round_id, None)
                rnd = await self.engine.get_round(round_id)
                if rnd.is_closed or rnd.message_ref is None:
                    return
                count = await self.engine.answered_count(round_id)
                card = QuestionCard(rnd, await self.engine.question_of(rnd), answered=count)
                await self.port.send(UpdateCard(rnd.place, rnd.message_ref, card))
        except Exception:
            # A stale count is harmless; the next answer schedules another try.
            log.exception("could not refresh the card of round %s", round_id)
        finally:
            self._editing.discard(task)
