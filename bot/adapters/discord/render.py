"""Render what the engine returns as Discord embeds, persistent buttons and plain text."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol, cast

import discord

from bot.adapters import _words as words
from bot.engine.model import (
    AnswerOutcome,
    ChannelSettings,
    Choice,
    Difficulty,
    Leaderboard,
    Question,
    QuestionCard,
    Reveal,
    UserStats,
)

PLATFORM = "discord"

# Discord's limits (discord.py checks few of them; a longer value is refused by the API).
CUSTOM_ID_MAX = 100
LABEL_MAX = 80
CONTENT_MAX = 2000
EMBED_DESCRIPTION_MAX = 4096
EMBED_FIELD_MAX = 1024
EMBED_TOTAL_MAX = 6000
THREAD_NAME_MAX = 100

CUSTOM_ID_TEMPLATE = r"quiz:(?P<round_id>[0-9]{1,20}):(?P<key>[A-E])"
CUSTOM_ID_RE = re.compile(CUSTOM_ID_TEMPLATE)

# The regional-indicator letters people react with to answer.
LETTER_EMOJI = {"A": "🇦", "B": "🇧", "C": "🇨", "D": "🇩", "E": "🇪"}
EMOJI_LETTER = {emoji: key for key, emoji in LETTER_EMOJI.items()}

BAR_WIDTH = 12
COLOURS = {
    Difficulty.EASY: discord.Colour.green(),
    Difficulty.MEDIUM: discord.Colour.blurple(),
    Difficulty.HARD: discord.Colour.red(),
}


def custom_id(round_id: int, key: str) -> str:
    """Return the fixed ``custom_id`` of a choice button: ``quiz:{round_id}:{key}``."""
    value = f"quiz:{round_id}:{key}"
    if len(value) > CUSTOM_ID_MAX or not CUSTOM_ID_RE.fullmatch(value):
        raise ValueError(f"bad custom_id {value!r}")
    return value


def parse_custom_id(value: str) -> tuple[int, str] | None:
    """Return (round id, choice key) from a choice button's ``custom_id``, or None."""
    match = CUSTOM_ID_RE.fullmatch(value)
    if match is None:
        return None
    return int(match["round_id"]), match["key"]


def choice_label(choice: Choice) -> str:
    """Return a button's label, ``A. InfiniBand``, clipped to Discord's 80 characters."""
    return clip(f"{choice.key}. {choice.text}", LABEL_MAX)


def clip(text: str, limit: int) -> str:
    """Return text cut to at most ``limit`` characters, marking a cut with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def timestamp(when: datetime, style: str = "f") -> str:
    """Return a Discord timestamp token that each reader sees in their own time zone."""
    return discord.utils.format_dt(when, cast(Any, style))


def mention(user: str) -> str:
    """Return a user mention (embeds show it without pinging)."""
    return f"<@{user}>"


MARKUP = words.Markup(
    bold=lambda text: f"**{text}**",
    escape=discord.utils.escape_markdown,
    mention=mention,
    right="✅",
    wrong="❌",
    streak="🔥",
)


# ---------------------------------------------------------------- buttons


class ChoiceHandler(Protocol):
    """The client side of a choice button: what a click is handed to."""

    async def choice_clicked(
        self, interaction: discord.Interaction[Any], round_id: int, key: str
    ) -> None:
        """Answer a click on a choice button."""
        ...


class ChoiceButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=CUSTOM_ID_TEMPLATE):
    """A choice button that works from its ``custom_id`` alone, across restarts."""

    def __init__(
        self,
        round_id: int,
        key: str,
        *,
        label: str,
        style: discord.ButtonStyle = discord.ButtonStyle.primary,
        disabled: bool = False,
    ) -> None:
        super().__init__(
            discord.ui.Button(
                label=label, style=style, disabled=disabled, custom_id=custom_id(round_id, key)
            )
        )
        self.round_id = round_id
        self.key = key

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ChoiceButton:
        """Rebuild the button from a click, with nothing kept in memory."""
        label = getattr(item, "label", None) or match["key"]
        return cls(int(match["round_id"]), match["key"], label=label)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        """Hand the click to the client."""
        handler = cast(ChoiceHandler, interaction.client)
        await handler.choice_clicked(interaction, self.round_id, self.key)


def card_view(card: QuestionCard) -> discord.ui.View:
    """Return the card's buttons: one per choice, each with a fixed parseable ``custom_id``."""
    view = discord.ui.View(timeout=None)
    for choice in card.question.choices:
        view.add_item(ChoiceButton(card.round_id, choice.key, label=choice_label(choice)))
    return view


def reveal_view(reveal: Reveal) -> discord.ui.View:
    """Return the closed card's buttons: all disabled, the right one green and ticked."""
    view = discord.ui.View(timeout=None)
    for tally in reveal.tallies:
        label = choice_label(tally.choice)
        view.add_item(
            ChoiceButton(
                reveal.round.id,
                tally.choice.key,
                label=clip("✓ " + label, LABEL_MAX) if tally.correct else label,
                style=discord.ButtonStyle.success
                if tally.correct
                else discord.ButtonStyle.secondary,
                disabled=True,
            )
        )
    return view


# ---------------------------------------------------------------- the card


def _choices_text(question: Question) -> str:
    return "\n".join(
        f"**{c.key}.** {discord.utils.escape_markdown(c.text)}" for c in question.choices
    )


def _facts(question: Question, embed: discord.Embed) -> None:
    if question.tags:
        embed.add_field(name="Tags", value=", ".join(f"`{t}`" for t in question.tags))
    embed.add_field(name="Difficulty", value=question.difficulty.value)


def card_embed(card: QuestionCard, *, answered: int | None = None) -> discord.Embed:
    """Render a round's card: question, lettered choices, tags, difficulty, closing time, count."""
    q = card.question
    count = card.answered if answered is None else answered
    text = discord.utils.escape_markdown(q.text)
    choices = _choices_text(q)
    description = clip(text, EMBED_DESCRIPTION_MAX - len(choices) - 2) + "\n\n" + choices
    embed = discord.Embed(
        title="Quiz question", description=description, colour=COLOURS[q.difficulty]
    )
    _facts(q, embed)
    closes_at = card.round.closes_at
    if closes_at is not None:
        embed.add_field(
            name="Closes", value=f"{timestamp(closes_at, 'R')} ({timestamp(closes_at, 't')})"
        )
    embed.add_field(name="Answered", value=answered_text(count))
    if q.image and q.image.startswith("https://"):
        embed.set_image(url=q.image)
    footer = "Click a button, or react with 🇦 🇧 🇨 … (answers by reaction are confirmed by DM)."
    if card.note:
        footer = f"{card.note} · {footer}"
    embed.set_footer(text=clip(footer, 2048))
    return embed


def answered_text(count: int) -> str:
    """Return ``N answered``."""
    return f"{count} answered"


# ---------------------------------------------------------------- answers


def answer_feedback(outcome: AnswerOutcome) -> str:
    """Return the private reply to someone who answered."""
    return clip(words.answer_feedback(outcome, MARKUP, choice_label), CONTENT_MAX)


# ---------------------------------------------------------------- the reveal


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """Return a text bar of ``width`` cells filled in proportion to ``fraction``."""
    return words.bar(fraction, width)


def results_line(reveal: Reveal) -> str:
    """Return the summary: how many answered, % correct."""
    if not reveal.answered:
        return "Nobody answered this one."
    people = "person" if reveal.answered == 1 else "people"
    return (
        f"{reveal.answered} {people} answered; {reveal.correct} right "
        f"({reveal.percent_correct:.0f}%)."
    )


def reveal_embed(reveal: Reveal) -> discord.Embed:
    """Render the closed card: the right choice marked, the distribution and the results."""
    q = reveal.question
    rows = []
    for t in reveal.tallies:
        mark = "✅" if t.correct else "▫️"
        rows.append(
            f"{mark} **{t.choice.key}.** {discord.utils.escape_markdown(t.choice.text)}\n"
            f"`{bar(t.fraction)}` {t.count} ({t.fraction * 100:.0f}%)"
        )
    distribution = "\n".join(rows)
    text = discord.utils.escape_markdown(q.text)
    description = clip(text, EMBED_DESCRIPTION_MAX - len(distribution) - 2) + "\n\n" + distribution
    embed = discord.Embed(
        title="Quiz question · closed", description=description, colour=discord.Colour.green()
    )
    answer = q.answer_choice
    embed.add_field(name="Answer", value=clip(f"**{answer.key}.** {answer.text}", EMBED_FIELD_MAX))
    embed.add_field(name="Results", value=results_line(reveal))
    if reveal.fastest:
        fastest = ", ".join(f"{mention(a.user)} ({a.seconds:.1f} s)" for a in reveal.fastest)
        embed.add_field(name="Fastest correct", value=clip(fastest, EMBED_FIELD_MAX), inline=False)
    embed.set_footer(text="The full explanation is in the thread.")
    return embed


def thread_name(reveal: Reveal) -> str:
    """Return the name of the thread opened on the card at reveal."""
    return clip(f"Answer: {reveal.question.text}", THREAD_NAME_MAX)


def explanation_embed(reveal: Reveal) -> discord.Embed:
    """Render the thread post: full explanation, why each wrong choice is wrong, references."""
    q = reveal.question
    answer = q.answer_choice
    fields: list[tuple[str, str]] = []
    for choice in q.choices:
        why = q.why_not.get(choice.key)
        if choice.key != q.answer and why:
            fields.append(
                (clip(f"Why not {choice.key}. {choice.text}", 256), clip(why, EMBED_FIELD_MAX))
            )
    if q.references:
        refs = "\n".join(f"[{r.title}]({r.url})" for r in q.references)
        fields.append(("References", clip(refs, EMBED_FIELD_MAX)))
    title = clip(f"The answer is {answer.key}. {answer.text}", 256)
    used = len(title) + sum(len(n) + len(v) for n, v in fields)
    room = max(200, min(EMBED_DESCRIPTION_MAX, EMBED_TOTAL_MAX - used))
    embed = discord.Embed(
        title=title, description=clip(q.full, room), colour=discord.Colour.green()
    )
    for name, value in fields:
        embed.add_field(name=name, value=value, inline=False)
    return embed


# ---------------------------------------------------------------- scores and settings


def leaderboard_embed(board: Leaderboard) -> discord.Embed:
    """Render the top of the leaderboard and the caller's own rank."""
    titles = {"week": "this week", "month": "this month", "all": "all time"}
    lines = [
        f"**{e.rank}.** {mention(e.user)} · {e.points} pts · {e.correct}/{e.answered} right"
        for e in board.entries
    ]
    embed = discord.Embed(
        title=f"Leaderboard · {titles[board.period.value]}",
        description="\n".join(lines) if lines else "No answers yet in this period.",
        colour=discord.Colour.gold(),
    )
    if board.caller is None:
        embed.add_field(name="You", value="You have not answered in this period yet.")
    elif board.caller.rank > len(board.entries):
        c = board.caller
        embed.add_field(
            name="You", value=f"**{c.rank}.** {c.points} pts · {c.correct}/{c.answered} right"
        )
    return embed


def stats_text(stats: UserStats) -> str:
    """Return one user's totals and streaks."""
    return words.stats_text(stats, MARKUP)


def settings_text(settings: ChannelSettings) -> str:
    """Return a channel's options as a sentence."""
    changes = "may change their answer" if settings.allow_change else "cannot change their answer"
    return (
        f"In this channel rounds last {settings.round_minutes} minutes and people {changes} "
        "until the round closes."
    )


HELP = """\
**/quiz next** `[tag]`: post the next question in this channel
**/quiz close**: close the open question here now and show the answer
**/quiz leaderboard** `[period]`: top 10 of this server (week, month or all) and your rank
**/quiz stats** `[user]`: answered, right, points and streaks
**/quiz settings** `[changes] [minutes]`: answer changes and round length here (Manage Server)
**/quiz schedule**, **/quiz unschedule**: daily posts in this channel (Manage Server)
**/quiz review**: re-ask a question you missed
**/bandwidth** `size [op] [nodes] [gpus] [nics] [step] [over]`: transfer-time estimates
Answer with the buttons, or react with 🇦 🇧 🇨 🇩 🇪 on the question (confirmed by DM)."""


BANDWIDTH_USAGE = """\
Usage: /bandwidth size:140GB [op:allreduce] [nodes:4] [gpus:8] [nics:8] [step:0.5] [over:ib-hdr]
  size   bytes (140GB, 1.5TiB, 800MB), bits (400Gb) or parameters (70B params bf16, 13B adam)
  op     transfer (default), allreduce, allgather, reducescatter, broadcast, alltoall
  nodes  nodes (2); gpus: GPUs per node (1); nics: network cards per node (one per GPU)
  step   compute seconds per training step (adds scaling efficiency)
  over   interconnect keys to compare, comma-separated, or all"""


def fits_code_block(text: str, limit: int = CONTENT_MAX) -> bool:
    """Return whether text fits a code block of at most ``limit`` characters."""
    return len(text) + 8 <= limit


def code_block(text: str, limit: int = CONTENT_MAX) -> str:
    """Return text as a code block of at most ``limit`` characters (clipped if need be)."""
    return "```\n" + clip(text, limit - 8) + "\n```"


def apology(error_id: str) -> str:
    """Return the message for an unexpected failure, with the id to quote."""
    return (
        "Sorry, something went wrong on our side. "
        f"If it keeps happening, tell an admin the error id `{error_id}`."
    )


def lines(items: Iterable[str]) -> str:
    """Join non-empty items with line breaks."""
    return "\n".join(i for i in items if i)
