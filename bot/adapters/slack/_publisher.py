"""Post, refresh and reveal question cards in Slack: the scheduler's Publisher port."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from typing import TypeVar

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import render
from bot.adapters.slack._charts import ChartMaker
from bot.engine import QuizEngine
from bot.engine.model import Place, QuestionCard, Reveal

log = logging.getLogger(__name__)

PLATFORM = "slack"
# A reveal is published once, right after the close is committed, and never again: a passing
# server error or lost connection must not lose it, so its calls are made again a few times.
REVEAL_TRIES = 4
REVEAL_BACKOFF = 0.5

T = TypeVar("T")


def transient(exc: Exception) -> bool:
    """Return whether a failed Web API call may succeed if made again (5xx, lost connection)."""
    if isinstance(exc, SlackApiError):
        return int(getattr(exc.response, "status_code", 0) or 0) >= 500
    return isinstance(exc, aiohttp.ClientError | TimeoutError)


async def persist(call: Callable[[], Awaitable[T]], *, tries: int = REVEAL_TRIES) -> T:
    """Make a Web API call, again after a transient failure, up to ``tries`` times in all."""
    for attempt in range(1, tries):
        try:
            return await call()
        except Exception as exc:
            if not transient(exc):
                raise
            log.warning("Slack call failed (%s); trying again", type(exc).__name__)
            await asyncio.sleep(REVEAL_BACKOFF * 2 ** (attempt - 1))
    return await call()


class SlackPublisher:
    """Send what the engine returns to Slack channels; keep each card's answer count fresh."""

    platform = PLATFORM

    def __init__(
        self,
        client: AsyncWebClient,
        engine: QuizEngine,
        *,
        charts: ChartMaker | None = None,
        refresh_every: float = 3.0,
    ) -> None:
        self.client = client
        self.engine = engine
        self.charts = charts
        self.refresh_every = refresh_every
        self._pending: dict[int, asyncio.Task[None]] = {}
        self._last_refresh: dict[int, float] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    async def post_card(self, card: QuestionCard) -> str:
        """Post the question card and return its message ``ts``."""
        message = render.question_card(card)
        response = await self.client.chat_postMessage(
            channel=card.round.place.channel, **message.as_kwargs()
        )
        return str(response["ts"])

    async def post_text(self, place: Place, text: str) -> None:
        """Post a plain message in a channel."""
        await self.client.chat_postMessage(channel=place.channel, text=text)

    async def publish_reveal(self, reveal: Reveal) -> None:
        """Edit the card into its results and reply in its thread with the full explanation."""
        rid = reveal.round.id
        channel = reveal.round.place.channel
        # The engine committed the close before this; a refresh holding the lock finishes first,
        # and any later one sees the round closed, so nothing brings the buttons back.
        async with self._lock(rid):
            self._forget(rid)
            card = render.reveal_card(reveal)
            ts = reveal.round.message_ref
            if ts is None:
                response = await persist(
                    lambda: self.client.chat_postMessage(channel=channel, **card.as_kwargs())
                )
                ts = str(response["ts"])
            else:
                edit_ts = ts
                await persist(
                    lambda: self.client.chat_update(channel=channel, ts=edit_ts, **card.as_kwargs())
                )
        self._locks.pop(rid, None)
        thread = render.reveal_thread(reveal)
        await persist(
            lambda: self.client.chat_postMessage(
                channel=channel, thread_ts=ts, **thread.as_kwargs()
            )
        )
        spec = reveal.question.chart
        if spec is not None and self.charts is not None:
            try:
                chart = await self.charts.for_question(spec)
                await self.client.files_upload_v2(
                    channel=channel,
                    thread_ts=ts,
                    content=chart.png,
                    filename=chart.filename,
                    title=chart.title,
                )
            except Exception:
                # The answer and explanation are out; a missing chart must not undo that.
                log.exception("could not attach the chart to round %s", rid)

    def note_answer(self, round_id: int) -> None:
        """Schedule a refresh of the card's answer count, at most one per ``refresh_every``."""
        if round_id in self._pending:
            return
        self._pending[round_id] = asyncio.create_task(self._refresh_later(round_id))

    async def aclose(self) -> None:
        """Cancel pending refreshes."""
        tasks = list(self._pending.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._pending.clear()

    def _lock(self, round_id: int) -> asyncio.Lock:
        return self._locks.setdefault(round_id, asyncio.Lock())

    def _forget(self, round_id: int) -> None:
        task = self._pending.pop(round_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        self._last_refresh.pop(round_id, None)

    async def _refresh_later(self, round_id: int) -> None:
        loop = asyncio.get_running_loop()
        wait = self._last_refresh.get(round_id, -math.inf) + self.refresh_every - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        try:
            async with self._lock(round_id):
                # Answers that arrive from here on schedule the next refresh.
                self._pending.pop(round_id, None)
                rnd = await self.engine.get_round(round_id)
                if rnd.is_closed or rnd.message_ref is None:
                    return
                count = await self.engine.answered_count(round_id)
                card = QuestionCard(rnd, self.engine.question_of(rnd), answered=count)
                message = render.question_card(card)
                await self.client.chat_update(
                    channel=rnd.place.channel, ts=rnd.message_ref, **message.as_kwargs()
                )
                self._last_refresh[round_id] = loop.time()
        except Exception:
            # A stale count is harmless; the next answer schedules another try.
            log.exception("could not refresh the card of round %s", round_id)
