"""Render what the engine returns as Slack messages: Block Kit built and checked by slack_sdk."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    ImageBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from bot.adapters import _words as words
from bot.engine.model import (
    AnswerOutcome,
    ChannelSettings,
    Choice,
    Leaderboard,
    Period,
    Question,
    QuestionCard,
    Reveal,
    UserStats,
)

ANSWER_ACTION_PREFIX = "quiz_answer_"
BUTTON_TEXT_MAX = 75
SECTION_TEXT_MAX = 3000
HEADER_TEXT_MAX = 150
MAX_BLOCKS = 50
BAR_WIDTH = 10

JsonDict = dict[str, Any]


@dataclass(frozen=True)
class Message:
    """A message ready to send: the notification text and the validated blocks."""

    text: str
    blocks: tuple[JsonDict, ...] = ()

    def as_kwargs(self) -> JsonDict:
        """Return the ``text``/``blocks`` arguments of ``chat.postMessage`` and friends."""
        if not self.blocks:
            return {"text": self.text}
        return {"text": self.text, "blocks": list(self.blocks)}


def escape(text: str) -> str:
    """Escape the three characters Slack's mrkdwn treats as markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def choice_label(choice: Choice) -> str:
    """Return a button's text, ``A · InfiniBand``, clipped to Slack's 75 characters."""
    return _clip(f"{choice.key} · {choice.text}", BUTTON_TEXT_MAX)


MARKUP = words.Markup(
    bold=lambda text: f"*{text}*",
    escape=escape,
    mention=lambda user: f"<@{user}>",
    right=":white_check_mark:",
    wrong=":x:",
    streak=":fire:",
)


def answer_value(round_id: int, key: str) -> str:
    """Return a button's value: the round and the choice it answers."""
    return f"{round_id}:{key}"


def round_block_id(round_id: int, part: str) -> str:
    """Return the block id of one part of a round's card."""
    return f"quiz_round_{round_id}_{part}"


def slack_date(when: datetime, pattern: str) -> str:
    """Return a ``<!date>`` token each reader sees in their own time zone, with a UTC fallback."""
    fallback = when.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(when.timestamp())}^{pattern}|{fallback}>"


# ---------------------------------------------------------------- the question card


def question_card(card: QuestionCard, *, answered: int | None = None) -> Message:
    """Render a round's card: header, question, one button per choice, context line."""
    q = card.question
    rid = card.round_id
    count = card.answered if answered is None else answered
    labels = [choice_label(c) for c in q.choices]
    body = escape(q.text)
    if any(label.endswith("…") for label in labels):
        # A clipped button must still be readable in full somewhere.
        body += "\n" + "\n".join(f"*{c.key}* · {escape(c.text)}" for c in q.choices)
    blocks: list[Block] = [HeaderBlock(text=_clip(card.note or "Quiz question", HEADER_TEXT_MAX))]
    blocks += _sections(body, round_block_id(rid, "question"))
    if q.image and q.image.startswith("https://"):
        blocks.append(ImageBlock(image_url=q.image, alt_text=_clip(q.text, 2000)))
    buttons = [
        ButtonElement(
            text=PlainTextObject(text=label, emoji=False),
            action_id=f"{ANSWER_ACTION_PREFIX}{c.key}",
            value=answer_value(rid, c.key),
        )
        for c, label in zip(q.choices, labels, strict=True)
    ]
    blocks.append(ActionsBlock(block_id=round_block_id(rid, "choices"), elements=buttons))
    context = [*_question_facts(q)]
    if card.round.closes_at is not None:
        context.append(
            "closes " + slack_date(card.round.closes_at, "{date_short_pretty} at {time}")
        )
    context.append(f"{count} answered")
    blocks.append(_context(" · ".join(context), round_block_id(rid, "context")))
    return _message(f"Quiz: {escape(q.text)}", blocks)


def _question_facts(q: Question) -> list[str]:
    facts = []
    if q.tags:
        facts.append(" ".join(f"#{t}" for t in q.tags))
    points = q.difficulty.points
    facts.append(f"{q.difficulty.value}, {points} point{'s' if points != 1 else ''}")
    return facts


# ---------------------------------------------------------------- answers


def answer_feedback(outcome: AnswerOutcome) -> str:
    """Return the private reply to someone who answered."""
    return words.answer_feedback(outcome, MARKUP, choice_label)


# ---------------------------------------------------------------- the reveal


def reveal_card(reveal: Reveal) -> Message:
    """Render the closed card: no buttons, the right choice marked, the results."""
    q = reveal.question
    rid = reveal.round.id
    blocks: list[Block] = [HeaderBlock(text="Quiz question · closed")]
    blocks += _sections(escape(q.text), round_block_id(rid, "question"))
    rows = []
    for tally in reveal.tallies:
        mark = ":white_check_mark:" if tally.correct else ":white_small_square:"
        label = escape(choice_label(tally.choice))
        label = f"*{label}*" if tally.correct else label
        rows.append(
            f"`{bar(tally.fraction)}` {tally.fraction:4.0%} ({tally.count})  {mark} {label}"
        )
    blocks += _sections("\n".join(rows), round_block_id(rid, "results"))
    blocks.append(_context(results_line(reveal), round_block_id(rid, "context")))
    right = escape(choice_label(q.answer_choice))
    return _message(f"Closed: the answer was {right}. {results_line(reveal)}", blocks)


def results_line(reveal: Reveal) -> str:
    """Return the one-line summary: how many answered, % correct, the fastest correct."""
    if reveal.answered == 0:
        return "Nobody answered this one · the explanation is in the thread"
    people = "person" if reveal.answered == 1 else "people"
    parts = [f"{reveal.answered} {people} answered", f"{reveal.percent_correct:.0f}% correct"]
    if reveal.fastest:
        fastest = ", ".join(f"<@{a.user}> ({a.seconds:.1f} s)" for a in reveal.fastest)
        parts.append(f"fastest right: {fastest}")
    parts.append("the explanation is in the thread")
    return " · ".join(parts)


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """Return a text bar of ``width`` cells filled in proportion to ``fraction``."""
    return words.bar(fraction, width)


def reveal_thread(reveal: Reveal) -> Message:
    """Render the thread reply: full explanation, why each wrong choice is wrong, references."""
    q = reveal.question
    right = escape(choice_label(q.answer_choice))
    parts = [f"*The answer is {right}.*\n{escape(q.full)}"]
    why = [
        f"• *{escape(choice_label(c))}*: {escape(q.why_not[c.key])}"
        for c in q.choices
        if c.key != q.answer and c.key in q.why_not
    ]
    if why:
        parts.append("*Why not the others*\n" + "\n".join(why))
    if q.references:
        refs = [f"• <{r.url}|{escape(r.title)}>" for r in q.references]
        parts.append("*Read more*\n" + "\n".join(refs))
    blocks: list[Block] = []
    for n, part in enumerate(parts):
        blocks += _sections(part, round_block_id(reveal.round.id, f"explain{n}"))
    return _message(f"The answer is {right}.", blocks)


# ---------------------------------------------------------------- scores and settings

PERIOD_TITLES = {Period.WEEK: "this week", Period.MONTH: "this month", Period.ALL: "all time"}


def leaderboard(board: Leaderboard) -> str:
    """Return the top of the leaderboard and the caller's own rank."""
    lines = [f"*Leaderboard, {PERIOD_TITLES[board.period]}*"]
    if not board.entries:
        lines.append("Nobody has scored in this period yet.")
    for e in board.entries:
        lines.append(f"{e.rank}. <@{e.user}>: {e.points} pts, {e.correct}/{e.answered} right")
    if board.caller is None:
        lines.append("You have not answered in this period yet.")
    elif all(e.user != board.caller.user for e in board.entries):
        c = board.caller
        lines.append(f"You: #{c.rank} with {c.points} pts, {c.correct}/{c.answered} right")
    return "\n".join(lines)


def stats(s: UserStats) -> str:
    """Return one user's totals and streaks."""
    return words.stats_text(s, MARKUP)


def channel_settings(settings: ChannelSettings) -> str:
    """Return a channel's options as a sentence."""
    changes = "allowed" if settings.allow_change else "not allowed (the first answer counts)"
    return (
        f"In this channel a question stays open {settings.round_minutes} minutes "
        f"and answer changes are {changes}."
    )


def code_block(text: str) -> str:
    """Return text as a preformatted block."""
    return f"```\n{text.rstrip()}\n```"


def apology(error_id: str) -> str:
    """Return the message for an unexpected failure, with the id to quote."""
    return (
        f"Sorry, something went wrong on our side. If it keeps happening, quote error `{error_id}`"
        " to whoever runs quizbot."
    )


# ---------------------------------------------------------------- helpers


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _chunks(text: str, limit: int) -> Iterable[str]:
    """Split text at line breaks (or hard, for a very long line) into pieces of at most limit."""
    piece = ""
    for line in text.split("\n"):
        while len(line) > limit:
            if piece:
                yield piece
                piece = ""
            yield line[:limit]
            line = line[limit:]
        candidate = f"{piece}\n{line}" if piece else line
        if len(candidate) > limit:
            yield piece
            piece = line
        else:
            piece = candidate
    if piece:
        yield piece


def _sections(text: str, block_id: str) -> list[Block]:
    pieces = list(_chunks(text, SECTION_TEXT_MAX)) or [" "]
    return [
        SectionBlock(
            block_id=block_id if n == 0 else f"{block_id}_{n}",
            text=MarkdownTextObject(text=piece),
        )
        for n, piece in enumerate(pieces)
    ]


def _context(text: str, block_id: str) -> ContextBlock:
    return ContextBlock(block_id=block_id, elements=[MarkdownTextObject(text=text)])


def _message(text: str, blocks: list[Block]) -> Message:
    if len(blocks) > MAX_BLOCKS:
        raise ValueError(f"a message has {len(blocks)} blocks; Slack allows {MAX_BLOCKS}")
    # to_dict() runs slack_sdk's validators, so a limit broken here fails loudly, not in Slack.
    return Message(text=_clip(text, SECTION_TEXT_MAX), blocks=tuple(b.to_dict() for b in blocks))
