"""Post to Discord without a user's interaction: cards, reveals, notes, and the answer counter."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import discord

from bot.adapters.discord import render
from bot.engine import QuizEngine
from bot.engine.model import ChartSpec, Place, QuestionCard, Reveal

log = logging.getLogger(__name__)

ChartMaker = Callable[[ChartSpec], Awaitable[discord.File | None]]


class DiscordPublisher:
    """The scheduler's Publisher on Discord: every send goes through the client's REST session."""

    platform = render.PLATFORM

    def __init__(
        self,
        client: discord.Client,
        engine: QuizEngine,
        *,
        chart: ChartMaker | None = None,
        refresh_interval: float = 5.0,
    ) -> None:
        self.client = client
        self.engine = engine
        self.chart = chart
        self.refresh_interval = refresh_interval
        self._refreshing: dict[int, asyncio.Task[None]] = {}

    def channel(self, place: Place) -> discord.PartialMessageable:
        """Return a sendable handle on the place's channel, without any cache lookup."""
        return self.client.get_partial_messageable(
            int(place.channel), guild_id=int(place.workspace), type=discord.ChannelType.text
        )

    async def post_card(self, card: QuestionCard) -> str:
        """Post the question card with its buttons and return the message id."""
        message = await self.channel(card.round.place).send(
            embed=render.card_embed(card), view=render.card_view(card)
        )
        return str(message.id)

    async def post_text(self, place: Place, text: str) -> None:
        """Post a plain message in a channel, pinging nobody."""
        await self.channel(place).send(
            render.clip(text, render.CONTENT_MAX), allowed_mentions=discord.AllowedMentions.none()
        )

    async def publish_reveal(self, reveal: Reveal) -> None:
        """Edit the card to show the results, then explain in a thread on it (or in a reply)."""
        await self.cancel_refresh(reveal.round.id)
        channel = self.channel(reveal.round.place)
        card: discord.PartialMessage | discord.Message | None = None
        if reveal.round.message_ref is not None:
            card = channel.get_partial_message(int(reveal.round.message_ref))
            try:
                await card.edit(embed=render.reveal_embed(reveal), view=render.reveal_view(reveal))
            except discord.NotFound:
                log.warning(
                    "the card of round %s is gone; posting the results anew", reveal.round.id
                )
                card = None
        if card is None:
            card = await channel.send(
                embed=render.reveal_embed(reveal), view=render.reveal_view(reveal)
            )
        files = []
        if reveal.question.chart is not None and self.chart is not None:
            chart = await self.chart(reveal.question.chart)
            if chart is not None:
                files.append(chart)
        explanation = render.explanation_embed(reveal)
        try:
            thread = await card.create_thread(
                name=render.thread_name(reveal), auto_archive_duration=1440
            )
        except discord.HTTPException as exc:
            # No thread permission, or the card is itself in a thread: answer the card instead.
            log.info("no thread on round %s (%s); replying instead", reveal.round.id, exc.status)
            await channel.send(
                embed=explanation,
                files=files,
                reference=card.to_reference(fail_if_not_exists=False),
                allowed_mentions=discord.AllowedMentions.none(),
            )
        else:
            await thread.send(embed=explanation, files=files)

    # ------------------------------------------------------------ the "N answered" counter

    def touch(self, round_id: int) -> None:
        """Refresh the card's answer count soon, at most once per interval per round."""
        if round_id in self._refreshing:
            return
        self._refreshing[round_id] = asyncio.create_task(
            self._refresh_later(round_id), name=f"quiz-refresh-{round_id}"
        )

    async def cancel_refresh(self, round_id: int) -> None:
        """Drop a pending count refresh and wait until it is gone (the round is closing)."""
        task = self._refreshing.pop(round_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            # An edit already on its way must land before the reveal's, not after it.
            await asyncio.gather(task, return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel every pending refresh."""
        tasks = list(self._refreshing.values())
        self._refreshing.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _refresh_later(self, round_id: int) -> None:
        try:
            await asyncio.sleep(self.refresh_interval)
            await self.refresh_count(round_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("could not refresh the answer count of round %s", round_id)
        finally:
            if self._refreshing.get(round_id) is asyncio.current_task():
                del self._refreshing[round_id]

    async def refresh_count(self, round_id: int) -> None:
        """Edit the open card so its "N answered" is current."""
        rnd = await self.engine.get_round(round_id)
        if rnd.is_closed or rnd.message_ref is None:
            return
        count = await self.engine.answered_count(round_id)
        card = QuestionCard(round=rnd, question=self.engine.question_of(rnd), answered=count)
        message = self.channel(rnd.place).get_partial_message(int(rnd.message_ref))
        await message.edit(embed=render.card_embed(card))
