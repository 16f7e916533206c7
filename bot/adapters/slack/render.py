"""Render the chat layer's content for Slack: mrkdwn text, and Block Kit built by slack_sdk.

slack_sdk's block classes check Slack's limits as they are serialised, so a card that breaks
one fails here, loudly, rather than in Slack.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    ImageBlock,
    InputBlock,
    MarkdownTextObject,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from bot import messages as M
from bot.chat import Explanation, Feedback, Offer, Panel, ReviewAsk, words
from bot.chat.buttons import (
    Button,
    Choice,
    Report,
    button_id,
    fits,
)
from bot.chat.forms import Form, FormField
from bot.engine.model import Choice as Choice_
from bot.engine.model import Question, QuestionCard, Reveal
from bot.text import Icon, Style, Text, When, chunks, clip, render, safe_url, say

REVIEW_BLOCK = "quiz_review_choices"
OFFER_BLOCK = "quiz_offers"
BUTTON_TEXT_MAX = 75
SECTION_TEXT_MAX = 3000
HEADER_TEXT_MAX = 150
MAX_BLOCKS = 50
BAR_WIDTH = 10
# A modal's limits (https://docs.slack.dev/reference/views): title and submit 24 characters, a
# placeholder 150, a text input 3,000, private_metadata 3,000.
VIEW_TITLE_MAX = 24
PLACEHOLDER_MAX = 150
INPUT_MAX = 3000
# Every input's element carries this action id; its block is the field's name.
FORM_ACTION = "value"

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
    """Escape the three characters Slack's mrkdwn treats as markup.

    Every string from a question file or a user reaches Slack through this function (directly,
    or as a ``Verbatim`` span of ``STYLE``): with ``<`` escaped, no text can open a mention
    (``<!channel>``, ``<@U...>``) or a link.
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(title: str, url: str) -> str:
    """Return a titled link; the URL cannot close it early (``>``) or retitle it (``|``)."""
    return f"<{escape(safe_url(url))}|{escape(title)}>"


def label(key: str, text: str) -> str:
    """Return a choice's button text, ``A · InfiniBand``, clipped to Slack's 75 characters."""
    return clip(f"{key} · {text}", BUTTON_TEXT_MAX)


def slack_date(when: datetime, how: When) -> str:
    """Return a ``<!date>`` token each reader sees in their own time zone, with a UTC fallback."""
    fallback = when.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(when.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


def code_block(text: str) -> str:
    """Return text as a preformatted block."""
    return f"```\n{escape(text.rstrip())}\n```"


STYLE = Style(
    literal=escape,
    verbatim=escape,
    code=lambda t: "`" + escape(t.replace("`", "'")) + "`",
    strong=lambda t: f"*{escape(t)}*",
    mention=lambda user: f"<@{user}>",
    moment=slack_date,
    link=link,
    label=lambda key, t, strong: f"*{escape(label(key, t))}*" if strong else escape(label(key, t)),
    pre=code_block,
    icons={
        Icon.RIGHT: ":white_check_mark:",
        Icon.WRONG: ":x:",
        Icon.STREAK: ":fire:",
        Icon.OTHER: ":white_small_square:",
        Icon.ANSWER_EMOJI: ":one: to :five: (or :a: / :b:)",
    },
)


def mrkdwn(text: Text) -> str:
    """Return neutral text as Slack mrkdwn."""
    return render(text, STYLE)


def panel(p: Panel) -> str:
    """Return a titled list as one mrkdwn message."""
    parts = [f"*{mrkdwn(p.title)}*", mrkdwn(p.body)]
    if p.note is not None:
        parts.append(mrkdwn(p.note))
    return "\n".join(parts)


def round_block_id(round_id: int, part: str) -> str:
    """Return the block id of one part of a round's card."""
    return f"quiz_round_{round_id}_{part}"


# ---------------------------------------------------------------- cards


def question_card(card: QuestionCard, *, reactions: bool = True) -> Message:
    """Render a round's card: header, question, one button per choice, the facts.

    ``reactions`` False: emoji answers cannot reach the bot in this channel, and the facts say so.
    """
    q, rid = card.question, card.round_id
    blocks: list[Block] = [HeaderBlock(text=clip(words.card_title(card).plain(), HEADER_TEXT_MAX))]
    blocks += _sections(_question_text(q), round_block_id(rid, "question"))
    if q.image and q.image.startswith("https://"):
        blocks.append(ImageBlock(image_url=q.image, alt_text=clip(q.text, 2000)))
    blocks.append(
        ActionsBlock(
            block_id=round_block_id(rid, "choices"),
            elements=_buttons(q, lambda c: Choice(rid, c.key)),
        )
    )
    facts = " · ".join(mrkdwn(f.inline) for f in words.card_facts(card))
    if not reactions:
        facts += " · " + mrkdwn(say(M.REACTIONS_CANNOT_COUNT))
    blocks.append(_context(facts, round_block_id(rid, "context")))
    return _message(mrkdwn(words.notification(q)), blocks)


def reveal_card(reveal: Reveal) -> Message:
    """Render the closed card: no buttons, the right choice marked, the results."""
    q, rid = reveal.question, reveal.round.id
    blocks: list[Block] = [HeaderBlock(text=M.CARD_TITLE_CLOSED)]
    blocks += _sections(escape(q.text), round_block_id(rid, "question"))
    rows = []
    for t in reveal.tallies:
        mark = STYLE.icons[Icon.RIGHT if t.correct else Icon.OTHER]
        name = STYLE.label(t.choice.key, t.choice.text, t.correct)
        bar = words.bar(t.fraction, BAR_WIDTH)
        rows.append(f"`{bar}` {t.fraction:4.0%} ({t.count})  {mark} {name}")
    blocks += _sections("\n".join(rows), round_block_id(rid, "results"))
    summary = [
        words.results(reveal),
        words.fastest(reveal),
        words.revealed_tags(q),
        Text((M.IN_THE_THREAD,)),
    ]
    line = " · ".join(mrkdwn(part) for part in summary if part is not None)
    blocks.append(_context(line, round_block_id(rid, "context")))
    if fits(Report(q.id)):
        report = _button(Report(q.id), M.REPORT_BUTTON)
        blocks.append(ActionsBlock(block_id=round_block_id(rid, "report"), elements=[report]))
    return _message(mrkdwn(words.closed_notification(reveal)), blocks)


def explanation(item: Explanation) -> Message:
    """Render the thread reply: full explanation, why each wrong choice is wrong, references."""
    q = item.reveal.question
    headline = mrkdwn(words.answer_is(q))
    parts = [f"*{headline}*\n{escape(q.full)}"]
    why = [
        f"• *{escape(label(c.key, c.text))}*: {escape(q.why_not[c.key])}"
        for c in q.choices
        if c.key != q.answer and c.key in q.why_not
    ]
    if why:
        parts.append(f"*{M.WHY_NOT_OTHERS}*\n" + "\n".join(why))
    if q.references:
        refs = [f"• {STYLE.link(r.title, r.url)}" for r in q.references]
        parts.append(f"*{M.REFERENCES}*\n" + "\n".join(refs))
    blocks: list[Block] = []
    for n, part in enumerate(parts):
        blocks += _sections(part, round_block_id(item.reveal.round.id, f"explain{n}"))
    return _message(headline, blocks)


def review_question(ask: ReviewAsk) -> Message:
    """Render a missed question for its private re-ask, with one button per choice."""
    q = ask.question
    blocks: list[Block] = [
        HeaderBlock(text=ask.title.plain()),
        *_sections(_question_text(q), "quiz_review_question"),
        ActionsBlock(
            block_id=REVIEW_BLOCK,
            elements=_buttons(q, lambda c: ask.button(c.key)),
        ),
        ContextBlock(elements=[MarkdownTextObject(text=mrkdwn(ask.footer))]),
    ]
    return _message(f"{mrkdwn(ask.title)}: {escape(q.text)}", blocks)


# Everyone who answers a round alike gets the same reply (``words.feedback``): rendered once.
@functools.lru_cache(maxsize=256)
def feedback(item: Feedback) -> Message:
    """Render a private reply: its text, and the buttons it offers (practice's Next, Stop; the
    confidence)."""
    text = mrkdwn(item.text)
    if not item.offers:
        return Message(text=text)
    offered = [_offered(o) for o in item.offers]
    blocks = [
        *_sections(text, "quiz_feedback"),
        ActionsBlock(block_id=OFFER_BLOCK, elements=offered),
    ]
    return _message(text, blocks)


def panel_blocks(p: Panel, block_id: str) -> list[Block]:
    """Return a panel as blocks: its title, body and note, and its buttons."""
    blocks: list[Block] = [HeaderBlock(text=clip(p.title.plain(), HEADER_TEXT_MAX))]
    blocks += _sections(mrkdwn(p.body), block_id)
    if p.note is not None:
        blocks.append(_context(mrkdwn(p.note), f"{block_id}_note"))
    buttons = [_offered(o) for o in p.offers]
    if buttons:
        blocks.append(ActionsBlock(block_id=f"{block_id}_buttons", elements=buttons))
    return blocks


def home_view(panels: tuple[Panel, ...]) -> JsonDict:
    """Return the Home tab's view of these panels, validated, as ``views.publish`` takes it."""
    blocks: list[Block] = []
    for n, p in enumerate(panels):
        if n:
            blocks.append(DividerBlock())
        blocks += panel_blocks(p, f"home_{n}")
    view = View(type="home", blocks=blocks)
    view.validate_json()
    result: JsonDict = view.to_dict()
    return result


def _button(button: Button, text: str, *, style: str | None = None) -> ButtonElement:
    return ButtonElement(text=text, action_id=button_id(button), style=style)


def _offered(offer: Offer) -> ButtonElement:
    """Return an offered button: Slack's primary style where it leads."""
    return _button(offer.button, offer.label, style="primary" if offer.primary else None)


# ---------------------------------------------------------------- helpers


def _question_text(q: Question) -> str:
    body = escape(q.text)
    if any(len(f"{c.key} · {c.text}") > BUTTON_TEXT_MAX for c in q.choices):
        # A clipped button must still be readable in full somewhere.
        body += "\n" + "\n".join(f"*{c.key}* · {escape(c.text)}" for c in q.choices)
    return body


def _buttons(q: Question, button: Callable[[Choice_], Button]) -> list[ButtonElement]:
    return [
        ButtonElement(
            text=PlainTextObject(text=label(c.key, c.text), emoji=False),
            action_id=button_id(button(c)),
            value=c.key,
        )
        for c in q.choices
    ]


def _sections(text: str, block_id: str) -> list[Block]:
    pieces = list(chunks(text, SECTION_TEXT_MAX)) or [" "]
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
    return Message(text=clip(text, SECTION_TEXT_MAX), blocks=tuple(b.to_dict() for b in blocks))


# ---------------------------------------------------------------- forms


def form_view(form: Form) -> View:
    """Render a form as a modal: an input block per field (its block id the field's name), the
    form's id as the callback id, where it was opened in the private metadata."""
    blocks: list[Block] = [_input(f, form.values.get(f.name, "")) for f in form.fields]
    view = View(
        type="modal",
        callback_id=button_id(form.button),
        title=PlainTextObject(text=clip(form.title, VIEW_TITLE_MAX)),
        submit=PlainTextObject(text=clip(form.submit, VIEW_TITLE_MAX)),
        close=PlainTextObject(text=M.FORM_CANCEL),
        private_metadata=form.place.channel,
        blocks=blocks,
    )
    view.validate_json()
    return view


def _input(f: FormField, value: str) -> InputBlock:
    element: PlainTextInputElement | StaticSelectElement
    if f.options:
        options = [Option(value=v, label=clip(label, BUTTON_TEXT_MAX)) for v, label in f.options]
        chosen = next((o for o in options if o.value == value), None)
        element = StaticSelectElement(
            action_id=FORM_ACTION,
            options=options,
            initial_option=chosen,
            placeholder=clip(f.hint or f.label, PLACEHOLDER_MAX) or None,
        )
    else:
        most = min(f.max_chars or INPUT_MAX, INPUT_MAX)
        element = PlainTextInputElement(
            action_id=FORM_ACTION,
            multiline=f.long,
            max_length=most,
            initial_value=value[:most] or None,
            placeholder=clip(f.hint, PLACEHOLDER_MAX) or None,
        )
    return InputBlock(block_id=f.name, label=f.label, element=element, optional=not f.required)


def form_values(state: JsonDict) -> dict[str, str]:
    """Return what a modal sent (``view.state.values``) as the form's values by field name."""
    values: dict[str, str] = {}
    for name, actions in (state.get("values") or {}).items():
        given = (actions or {}).get(FORM_ACTION) or {}
        chosen = given.get("selected_option") or {}
        value = chosen.get("value") if chosen else given.get("value")
        values[str(name)] = value if isinstance(value, str) else ""
    return values


def form_errors(form: Form) -> dict[str, str]:
    """Return a refused form's errors as ``response_action: errors`` names them: by block id."""
    shown = {f.name for f in form.fields}
    first = form.fields[0].name
    errors: dict[str, str] = {}
    for name, error in form.errors.items():
        at = name if name in shown else first
        errors[at] = f"{errors[at]} {error}" if at in errors else error
    return errors
