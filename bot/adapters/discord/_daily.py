"""Daily schedules and private review on Discord: options in, service calls, text and Views out."""

from __future__ import annotations

import re
from typing import Any, Protocol, cast

import discord

from bot.adapters.discord import render
from bot.engine import QuizEngine
from bot.engine.model import Place, Question
from bot.engine.review import ReviewOutcome, ReviewQueue
from bot.errors import UserError
from bot.scheduler import ScheduleService, schedule_request

# The question id is the bank's `[a-z0-9][a-z0-9-]*`; the whole custom_id stays within 100.
REVIEW_ID_TEMPLATE = r"review:(?P<question_id>[a-z0-9][a-z0-9-]{0,88}):(?P<key>[A-E])"
REVIEW_ID_RE = re.compile(REVIEW_ID_TEMPLATE)


def review_custom_id(question_id: str, key: str) -> str:
    """Return the fixed ``custom_id`` of a review button: ``review:{question_id}:{key}``."""
    value = f"review:{question_id}:{key}"
    if len(value) > render.CUSTOM_ID_MAX or not REVIEW_ID_RE.fullmatch(value):
        raise ValueError(f"bad review custom_id {value!r}")
    return value


class ReviewHandler(Protocol):
    """The client side of a review button."""

    async def review_clicked(
        self, interaction: discord.Interaction[Any], question_id: str, key: str
    ) -> None:
        """Answer a click on a review button."""
        ...


class ReviewButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=REVIEW_ID_TEMPLATE):
    """A review choice that works from its ``custom_id`` alone, across restarts."""

    def __init__(self, question_id: str, key: str, *, label: str) -> None:
        super().__init__(
            discord.ui.Button(
                label=label,
                style=discord.ButtonStyle.secondary,
                custom_id=review_custom_id(question_id, key),
            )
        )
        self.question_id = question_id
        self.key = key

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ReviewButton:
        """Rebuild the button from a click, with nothing kept in memory."""
        label = getattr(item, "label", None) or match["key"]
        return cls(match["question_id"], match["key"], label=label)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        """Hand the click to the client."""
        handler = cast(ReviewHandler, interaction.client)
        await handler.review_clicked(interaction, self.question_id, self.key)


def review_embed(question: Question, queue: ReviewQueue) -> discord.Embed:
    """Render a missed question for its private re-ask."""
    choices = "\n".join(
        f"**{c.key}.** {discord.utils.escape_markdown(c.text)}" for c in question.choices
    )
    text = discord.utils.escape_markdown(question.text)
    description = (
        render.clip(text, render.EMBED_DESCRIPTION_MAX - len(choices) - 2) + "\n\n" + choices
    )
    embed = discord.Embed(
        title="Review: a question you missed",
        description=description,
        colour=discord.Colour.blurple(),
    )
    waiting = queue.due - 1
    more = f" · {waiting} more due after this one" if waiting > 0 else ""
    embed.set_footer(text=f"Only you see this; review answers do not change scores{more}.")
    return embed


def review_view(question: Question) -> discord.ui.View:
    """Return one button per choice, each with a fixed parseable ``custom_id``."""
    view = discord.ui.View(timeout=None)
    for choice in question.choices:
        view.add_item(ReviewButton(question.id, choice.key, label=render.choice_label(choice)))
    return view


def nothing_due_text(queue: ReviewQueue) -> str:
    """Return the reply to ``/quiz review`` when no question is due."""
    if queue.next_due is not None:
        when = render.timestamp(queue.next_due, "R")
        return f"Nothing to review right now; your next review is due {when}."
    return "No missed questions to review. The ones you get wrong come back here, spaced out."


def review_feedback(outcome: ReviewOutcome) -> str:
    """Return the private reply to a review answer."""
    mine = f"**{discord.utils.escape_markdown(render.choice_label(outcome.choice))}**"
    if outcome.correct:
        lines = [f"✅ **Right!** You chose {mine}."]
    else:
        answer = discord.utils.escape_markdown(render.choice_label(outcome.answer))
        lines = [f"❌ **Not this time.** You chose {mine}; the answer is **{answer}**."]
    lines.append(outcome.short)
    if outcome.done:
        lines.append("Right twice in a row: this question is done.")
    elif outcome.due_at is not None:
        when = render.timestamp(outcome.due_at, "R")
        lines.append(
            f"It comes back {when}."
            if outcome.counted
            else f"You have answered this one for now; it comes back {when}."
        )
    return render.clip("\n".join(lines), render.CONTENT_MAX)


async def show_review(
    engine: QuizEngine, interaction: discord.Interaction[Any], place: Place
) -> None:
    """Answer ``/quiz review``: the most overdue missed question, privately, or when one is due."""
    user = str(interaction.user.id)
    question = await engine.next_review(render.PLATFORM, place.workspace, user)
    queue = await engine.review_queue(render.PLATFORM, place.workspace, user)
    if question is None:
        await interaction.response.send_message(nothing_due_text(queue), ephemeral=True)
        return
    await interaction.response.send_message(
        embed=review_embed(question, queue), view=review_view(question), ephemeral=True
    )


async def answer_review(
    engine: QuizEngine, interaction: discord.Interaction[Any], question_id: str, key: str
) -> None:
    """Grade a review button click and tell the user, privately."""
    if interaction.guild_id is None:
        raise UserError("Use this in a server channel.")
    outcome = await engine.answer_review(
        render.PLATFORM, str(interaction.guild_id), str(interaction.user.id), question_id, key
    )
    await interaction.response.send_message(review_feedback(outcome), ephemeral=True)


async def schedule_reply(
    service: ScheduleService,
    place: Place,
    user: str,
    *,
    admin: bool,
    time: str | None,
    tz: str | None,
    days: str | None,
    tag: str | None,
    digest: str | None,
    close: str | None,
) -> str:
    """Answer ``/quiz schedule``: show it without options, else set it (admins only)."""
    if all(option is None for option in (time, tz, days, tag, digest, close)):
        return await service.show_text(place)
    if time is None:
        raise UserError("Give the time of the daily question, like `time:09:30`.")
    request = schedule_request(time, zone=tz, days=days, tag=tag, digest=digest, close=close)
    return await service.set_text(place, request, user=user, admin=admin)
