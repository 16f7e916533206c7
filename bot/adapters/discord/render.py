"""Render the chat layer's content for Discord: markdown text, embeds and persistent buttons."""

from __future__ import annotations

import functools
import io
from datetime import datetime
from typing import Any

import discord

from bot import messages as M
from bot.chat import (
    Chart,
    Content,
    EstimateView,
    Explanation,
    Feedback,
    Offer,
    Panel,
    ReviewAsk,
    buttons,
    words,
)
from bot.chat.forms import Form
from bot.engine.model import Difficulty, Question, QuestionCard, Reveal
from bot.text import Icon, Text, When, choice_label, clip, markdown_style, render, say

PLATFORM = "discord"

# Discord's limits (discord.py checks few of them; a longer value is refused by the API).
LABEL_MAX = 80
CONTENT_MAX = 2000
EMBED_TITLE_MAX = 256
EMBED_DESCRIPTION_MAX = 4096
EMBED_FIELD_MAX = 1024
EMBED_TOTAL_MAX = 6000
THREAD_NAME_MAX = 100
# A modal (https://discord.com/developers/docs/components/reference): five components, a title
# of 45 characters, a label 45, a placeholder or description 100, a text input 4,000.
MODAL_FIELDS = 5
MODAL_TITLE_MAX = 45
MODAL_LABEL_MAX = 45
PLACEHOLDER_MAX = 100
TEXT_INPUT_MAX = 4000

# The regional-indicator letters people react with to answer.
LETTER_EMOJI = {"A": "🇦", "B": "🇧", "C": "🇨", "D": "🇩", "E": "🇪"}
EMOJI_LETTER = {emoji: key for key, emoji in LETTER_EMOJI.items()}

BAR_WIDTH = 12
SECONDARY = discord.ButtonStyle.secondary
COLOURS = {
    Difficulty.EASY: discord.Colour.green(),
    Difficulty.MEDIUM: discord.Colour.blurple(),
    Difficulty.HARD: discord.Colour.red(),
}


def label(key: str, text: str) -> str:
    """Return a button's label, ``A. InfiniBand``, clipped to Discord's 80 characters."""
    return choice_label(key, text, LABEL_MAX)


def timestamp(when: datetime, how: When) -> str:
    """Return Discord timestamp tokens that each reader sees in their own time zone."""
    if how is When.SOON:
        return f"{discord.utils.format_dt(when, 'R')} ({discord.utils.format_dt(when, 't')})"
    return discord.utils.format_dt(when, "R" if how is When.RELATIVE else "f")


def _escape(text: str) -> str:
    """Return text shown as written: no markdown, no mention, no masked link.

    Every string from a question file or a user reaches Discord through this function (or
    ``STYLE``, which uses it). The client also sends ``AllowedMentions.none()``, so even a
    mention that got through would not ping anyone.
    """
    return discord.utils.escape_mentions(discord.utils.escape_markdown(text))


def _pre(text: str) -> str:
    # A fence inside the block would close it: break every run of three backticks.
    body = clip(text.rstrip().replace("```", "`\u200b`\u200b`"), CONTENT_MAX - 8)
    return "```\n" + body + "\n```"


STYLE = markdown_style(
    _escape,
    label_max=LABEL_MAX,
    mention=lambda user: f"<@{user}>",
    moment=timestamp,
    previews=False,  # a link would bring its page's preview into the message
    pre=_pre,
    answer_emoji=" ".join(LETTER_EMOJI.values()),
)


def markdown(text: Text, limit: int = CONTENT_MAX) -> str:
    """Return neutral text as Discord markdown, within a message's length."""
    return clip(render(text, STYLE), limit)


# The feedback to answers repeats (one text per choice and outcome): each is rendered once.
_feedback_markdown = functools.lru_cache(maxsize=256)(markdown)


# ---------------------------------------------------------------- buttons


class AnswerButton(discord.ui.Button[Any]):
    """One of the bot's buttons, its ``custom_id`` the button's id (``bot.chat.buttons``).

    The client reads each click from its ``custom_id`` alone, so a button works across
    restarts, and discord.py keeps nothing in memory for it.
    """

    def __init__(
        self,
        button: buttons.Button,
        *,
        label: str,
        style: discord.ButtonStyle = discord.ButtonStyle.primary,
        disabled: bool = False,
        row: int | None = None,
    ) -> None:
        super().__init__(
            label=label,
            style=style,
            disabled=disabled,
            custom_id=buttons.button_id(button),
            row=row,
        )


class Buttons(discord.ui.View):
    """A message's buttons as sent, which discord.py never dispatches nor keeps.

    discord.py keeps every unfinished view it sends, and for a click on a dynamic item it
    rebuilds the whole view from the message: more work per click than the answer itself.
    This view counts as finished from the start, so the view store stays empty and every
    click reaches ``QuizClient.on_interaction``.
    """

    def __init__(self) -> None:
        super().__init__(timeout=None)

    def is_finished(self) -> bool:
        """Say finished: nothing is ever dispatched to this view."""
        return True


def panel_view(panel: Panel) -> discord.ui.View | None:
    """Return a panel's buttons (Practice, "Start a review", the dashboard link), or None."""
    view = Buttons()
    for offer in panel.offers:
        view.add_item(offer_button(offer))
    return view if view.children else None


def card_view(card: QuestionCard) -> discord.ui.View:
    """Return the card's buttons: one per choice, each with a fixed parseable ``custom_id``."""
    view = Buttons()
    for c in card.question.choices:
        view.add_item(
            AnswerButton(buttons.Choice(card.round_id, c.key), label=label(c.key, c.text))
        )
    return view


def reveal_view(reveal: Reveal) -> discord.ui.View:
    """Return the closed card's buttons: all disabled, the right one green and ticked."""
    view = Buttons()
    for t in reveal.tallies:
        name = label(t.choice.key, t.choice.text)
        view.add_item(
            AnswerButton(
                buttons.Choice(reveal.round.id, t.choice.key),
                label=clip("✓ " + name, LABEL_MAX) if t.correct else name,
                style=discord.ButtonStyle.success if t.correct else discord.ButtonStyle.secondary,
                disabled=True,
            )
        )
    report = buttons.Report(reveal.question.id)
    if buttons.fits(report):
        view.add_item(AnswerButton(report, label=M.REPORT_BUTTON, style=SECONDARY, row=1))
    return view


def review_view(ask: ReviewAsk) -> discord.ui.View:
    """Return one button per choice of a question asked privately."""
    view = Buttons()
    for c in ask.question.choices:
        view.add_item(AnswerButton(ask.button(c.key), label=label(c.key, c.text)))
    return view


def offers_view(item: Feedback) -> discord.ui.View:
    """Return the buttons a private reply offers (practice's Next, Stop; the confidence)."""
    view = Buttons()
    for offer in item.offers:
        view.add_item(offer_button(offer))
    return view


def offer_button(offer: Offer) -> AnswerButton:
    """Return an offered button: green where it leads, grey otherwise."""
    style = discord.ButtonStyle.success if offer.primary else discord.ButtonStyle.secondary
    return AnswerButton(offer.button, label=offer.label, style=style)


# ---------------------------------------------------------------- embeds


def _with_choices(question: Question, rows: str | None = None) -> str:
    listed = rows or "\n".join(f"**{c.key}.** {_escape(c.text)}" for c in question.choices)
    text = _escape(question.text)
    return clip(text, EMBED_DESCRIPTION_MAX - len(listed) - 2) + "\n\n" + listed


def card_embed(card: QuestionCard) -> discord.Embed:
    """Render a round's card: question, lettered choices, its facts, how to answer."""
    q = card.question
    embed = discord.Embed(
        title=clip(markdown(words.card_title(card)), EMBED_TITLE_MAX),
        description=_with_choices(q),
        colour=COLOURS[q.difficulty],
    )
    for fact in words.card_facts(card):
        embed.add_field(name=fact.name, value=markdown(fact.value, EMBED_FIELD_MAX))
    if q.image and q.image.startswith("https://"):
        embed.set_image(url=q.image)
    embed.set_footer(text=clip(words.how_to_answer().plain(), 2048))
    return embed


def reveal_embed(reveal: Reveal) -> discord.Embed:
    """Render the closed card: the right choice marked, the distribution and the results."""
    rows = "\n".join(
        f"{STYLE.icons[Icon.RIGHT if t.correct else Icon.OTHER]} **{t.choice.key}.** "
        f"{_escape(t.choice.text)}\n`{words.bar(t.fraction, BAR_WIDTH)}` "
        + markdown(words.tally(t.count, t.fraction))
        for t in reveal.tallies
    )
    embed = discord.Embed(
        title=M.CARD_TITLE_CLOSED,
        description=_with_choices(reveal.question, rows),
        colour=discord.Colour.green(),
    )
    answer = reveal.question.answer_choice
    embed.add_field(
        name=M.ANSWER_FIELD,
        value=clip(f"**{answer.key}.** {_escape(answer.text)}", EMBED_FIELD_MAX),
    )
    embed.add_field(name=M.RESULTS_FIELD, value=markdown(words.results(reveal), EMBED_FIELD_MAX))
    if reveal.fastest:
        embed.add_field(
            name=M.FASTEST_FIELD,
            value=markdown(words.fastest_names(reveal), EMBED_FIELD_MAX),
            inline=False,
        )
    tags = words.tag_list(reveal.question)
    if tags is not None:
        embed.add_field(name=M.FACT_TAGS, value=markdown(tags, EMBED_FIELD_MAX), inline=False)
    embed.set_footer(text=M.IN_THE_THREAD)
    return embed


def thread_name(reveal: Reveal) -> str:
    """Return the name of the thread opened on the card at reveal."""
    return clip(words.thread_name(reveal).plain(), THREAD_NAME_MAX)


def explanation_embed(item: Explanation) -> discord.Embed:
    """Render the thread post: full explanation, why each wrong choice is wrong, references."""
    q = item.reveal.question
    fields: list[tuple[str, str]] = []
    for c in q.choices:
        why = q.why_not.get(c.key)
        if c.key != q.answer and why:
            fields.append(
                (
                    clip(markdown(words.why_not(c)), EMBED_TITLE_MAX),
                    clip(_escape(why), EMBED_FIELD_MAX),
                )
            )
    if q.references:
        refs = "\n".join(STYLE.link(r.title, r.url) for r in q.references)
        fields.append((M.REFERENCES, clip(refs, EMBED_FIELD_MAX)))
    title = clip(markdown(words.answer_is(q)), EMBED_TITLE_MAX)
    used = len(title) + sum(len(n) + len(v) for n, v in fields)
    room = max(200, min(EMBED_DESCRIPTION_MAX, EMBED_TOTAL_MAX - used))
    embed = discord.Embed(
        title=title, description=clip(_escape(q.full), room), colour=discord.Colour.green()
    )
    for name, value in fields:
        embed.add_field(name=name, value=value, inline=False)
    return embed


def panel_embed(panel: Panel) -> discord.Embed:
    """Render a titled list (a leaderboard) as an embed."""
    embed = discord.Embed(
        title=clip(markdown(panel.title), EMBED_TITLE_MAX),
        description=markdown(panel.body, EMBED_DESCRIPTION_MAX),
        colour=discord.Colour.gold(),
    )
    if panel.note is not None:
        embed.set_footer(text=clip(panel.note.plain(), 2048))
    return embed


def review_embed(ask: ReviewAsk) -> discord.Embed:
    """Render a question due for review, for its private re-ask."""
    embed = discord.Embed(
        title=markdown(ask.title, EMBED_TITLE_MAX),
        description=_with_choices(ask.question),
        colour=discord.Colour.blurple(),
    )
    embed.set_footer(text=clip(ask.footer.plain(), 2048))
    return embed


def chart_file(chart: Chart) -> discord.File:
    """Return a chart as an attachment."""
    return discord.File(io.BytesIO(chart.png), filename=chart.filename, description=chart.title)


def message(content: Content) -> dict[str, Any]:
    """Return the arguments that send a piece of content as a message."""
    match content:
        case Text():
            return {"content": markdown(content)}
        case Feedback(text=text, offers=()):
            return {"content": _feedback_markdown(text)}
        case Feedback(text=text):
            return {"content": _feedback_markdown(text), "view": offers_view(content)}
        case Panel(start_review=True) | Panel(dashboard=True) | Panel(practice=True):
            return {"embed": panel_embed(content), "view": panel_view(content)}
        case Panel():
            return {"embed": panel_embed(content)}
        case QuestionCard():
            return {"embed": card_embed(content), "view": card_view(content)}
        case Reveal():
            return {"embed": reveal_embed(content), "view": reveal_view(content)}
        case ReviewAsk():
            return {"embed": review_embed(content), "view": review_view(content)}
        case EstimateView():
            return _estimate(content)
    raise TypeError(f"cannot render {type(content).__name__}")


def _estimate(view: EstimateView) -> dict[str, Any]:
    files = [chart_file(view.chart)]
    if len(view.table) + 8 <= CONTENT_MAX:
        text = _pre(view.table)
    else:
        # A long comparison (over:all) does not fit one message: attach the table too.
        text = markdown(say(M.ESTIMATE_TABLE_ATTACHED, headline=clip(view.headline, 1900)))
        files.append(discord.File(io.BytesIO(view.table.encode()), filename="bandwidth.txt"))
    return {"content": text, "files": files}


# ---------------------------------------------------------------- forms


class FormModal(discord.ui.Modal):
    """A form as a modal, its ``custom_id`` the form's id (``bot.chat.buttons``).

    Like ``Buttons``, it counts as finished from the start: discord.py keeps nothing for it,
    and what is sent back reaches ``QuizClient.on_interaction``, read from its ``custom_id``.
    """

    def is_finished(self) -> bool:
        """Return True: nothing is dispatched to the modal itself."""
        return True


def form_modal(form: Form) -> discord.ui.Modal:
    """Render a form (a page of one) as a modal: a text input per field, or a pick list in a
    label for a field with options; each component's ``custom_id`` the field's name."""
    if len(form.fields) > MODAL_FIELDS:
        raise ValueError(f"a modal holds {MODAL_FIELDS} fields, not {len(form.fields)}")
    modal = FormModal(
        title=clip(form.title, MODAL_TITLE_MAX),
        custom_id=buttons.button_id(form.button),
        timeout=None,
    )
    for f in form.fields:
        value = form.values.get(f.name, "")
        if f.options and f.required:
            options = [
                discord.SelectOption(label=clip(label, LABEL_MAX), value=v, default=v == value)
                for v, label in f.options
            ]
            pick = discord.ui.Select[Any](custom_id=f.name, options=options, required=True)
            modal.add_item(discord.ui.Label(text=clip(f.label, MODAL_LABEL_MAX), component=pick))
            continue
        most = min(f.max_chars or TEXT_INPUT_MAX, TEXT_INPUT_MAX)
        modal.add_item(
            discord.ui.TextInput[Any](
                label=clip(f.label, MODAL_LABEL_MAX),
                custom_id=f.name,
                style=discord.TextStyle.paragraph if f.long else discord.TextStyle.short,
                required=f.required,
                max_length=most,
                default=value[:most] or None,
                placeholder=clip(f.hint, PLACEHOLDER_MAX) or None,
            )
        )
    return modal


def form_values(components: list[Any]) -> dict[str, str]:
    """Return what a modal sent back (its ``data.components``) as values by field name."""
    values: dict[str, str] = {}
    for item in components:
        inner = item.get("components") or ([item["component"]] if "component" in item else [])
        for c in inner:
            name = c.get("custom_id")
            if not isinstance(name, str):
                continue
            picked = c.get("values")
            value = picked[0] if isinstance(picked, list) and picked else c.get("value")
            values[name] = value if isinstance(value, str) else ""
    return values
