"""Render the chat layer's content for Microsoft Teams: Adaptive Cards with one button per choice.

Everything the bot posts is an Adaptive Card (schema 1.5): its TextBlocks read the small
markdown subset Teams supports, and every string from a question file or a person is escaped
before it reaches one. Each button is an ``Action.Execute`` whose data carries the core's button
id (``bot.chat.buttons``); Teams sends a press back as an ``adaptiveCard/action`` invoke.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from bot import messages as M
from bot.chat import (
    Chart,
    Content,
    EstimateView,
    Explanation,
    Feedback,
    Panel,
    ReviewAsk,
    buttons,
    words,
)
from bot.chat.forms import Form
from bot.engine.model import Difficulty, Question, QuestionCard, Reveal
from bot.text import Icon, Text, When, choice_label, clip, markdown_link, markdown_style, render

PLATFORM = "teams"

CARD_TYPE = "application/vnd.microsoft.card.adaptive"
SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
VERSION = "1.5"
# The verb of every button the bot draws; the button's id travels in its data.
VERB = "quizbot"
DATA_KEY = "button"
# Teams refuses a bot's message over about 28 KB (Microsoft Teams developer documentation,
# "Format your bot messages"); a chart is inlined as a data URI only up to this size, leaving
# the rest of the message to the card around it.
INLINE_MAX = 20_000
TEXT_MAX = 4000
LABEL_MAX = 80
BAR_WIDTH = 12
COLOURS = {Difficulty.EASY: "good", Difficulty.MEDIUM: "accent", Difficulty.HARD: "attention"}

# Characters Teams' card markdown reads as markup, escaped with a backslash.
_MARKUP = re.compile(r"([\\`*_~\[\]()<>#|])")
# A line starting with a digit and a dot, or a dash, would become a list.
_LIST_START = re.compile(r"^(\s*)(\d+)\.(\s)|^(\s*)([-+])(\s)", re.MULTILINE)


def _escape(text: str) -> str:
    """Return text shown as written in a TextBlock: no markdown, no HTML, no list."""
    escaped = _MARKUP.sub(r"\\\1", text)
    return _LIST_START.sub(
        lambda m: f"{m[1]}{m[2]}\\.{m[3]}" if m[2] else f"{m[4]}\\{m[5]}{m[6]}", escaped
    )


def label(key: str, text: str) -> str:
    """Return a button's title, ``A. InfiniBand``, clipped to what a button shows."""
    return choice_label(key, text, LABEL_MAX)


def _moment(when: datetime, _how: When) -> str:
    # Teams card text has no timestamp token each reader sees in their zone: written in UTC.
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _link(title: str, url: str) -> str:
    return markdown_link(_escape, title, url, preview=True)


STYLE = markdown_style(
    _escape, label_max=LABEL_MAX, mention=lambda user: f"**{_escape(user)}**", moment=_moment
)


def markdown(text: Text, limit: int = TEXT_MAX) -> str:
    """Return neutral text as Teams card markdown, within a TextBlock's length."""
    return clip(render(text, STYLE), limit)


_feedback_markdown = functools.lru_cache(maxsize=256)(markdown)


# ---------------------------------------------------------------- card pieces


def block(text: str, **style: Any) -> dict[str, Any]:
    """Return a TextBlock that wraps."""
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def _title(text: str) -> dict[str, Any]:
    return block(text, weight="Bolder", size="Medium")


def _button(button: buttons.Button, title: str, *, positive: bool = False) -> dict[str, Any]:
    action: dict[str, Any] = {
        "type": "Action.Execute",
        "title": title,
        "verb": VERB,
        "data": {DATA_KEY: buttons.button_id(button)},
    }
    if positive:
        action["style"] = "positive"
    return action


def card(body: list[dict[str, Any]], actions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Return an Adaptive Card with a body and, if any, its buttons."""
    made: dict[str, Any] = {"type": "AdaptiveCard", "$schema": SCHEMA, "version": VERSION}
    made["body"] = body
    if actions:
        made["actions"] = actions
    return made


def inline_url(chart: Chart) -> str:
    """Return a chart as a data URI (Teams shows it inline)."""
    return "data:image/png;base64," + base64.b64encode(chart.png).decode("ascii")


# Where a chart's image is: a URL, or None when it cannot be shown (too large to inline and
# no public address to serve it from).
ImageUrl = Callable[[Chart], str | None]


def small_inline(chart: Chart) -> str | None:
    """Return a chart as a data URI if it leaves the message under Teams' size limit."""
    url = inline_url(chart)
    return url if len(url) <= INLINE_MAX else None


def _with_chart(
    body: list[dict[str, Any]], chart: Chart | None, image_url: ImageUrl
) -> list[dict[str, Any]]:
    """Add the chart as an Image element, or a line saying it was left out."""
    if chart is None:
        return body
    url = image_url(chart)
    if url is None:
        return [*body, block(_escape(M.CHART_TOO_LARGE), isSubtle=True)]
    return [*body, {"type": "Image", "url": url, "altText": chart.title, "size": "Stretch"}]


def _choices(question: Question) -> dict[str, Any]:
    return block("\n\n".join(f"**{c.key}.** {_escape(c.text)}" for c in question.choices))


# ---------------------------------------------------------------- cards


def question_card(c: QuestionCard) -> dict[str, Any]:
    """Render a round's card: question, lettered choices, its facts, a button per choice."""
    q = c.question
    body = [
        _title(markdown(words.card_title(c))),
        block(_escape(q.text), color=COLOURS[q.difficulty]),
        _choices(q),
        {
            "type": "FactSet",
            "facts": [
                {"title": fact.name, "value": markdown(fact.value)} for fact in words.card_facts(c)
            ],
        },
    ]
    if q.image and q.image.startswith("https://"):
        body.append({"type": "Image", "url": q.image, "altText": M.CARD_IMAGE_ALT})
    # Teams' reactions are a fixed set with no letters: the buttons are the one way to answer.
    body.append(block(_escape(M.CARD_HOW_TO_ANSWER_BUTTONS), isSubtle=True, size="Small"))
    actions = [
        _button(buttons.Choice(c.round_id, ch.key), label(ch.key, ch.text)) for ch in q.choices
    ]
    return card(body, actions)


def reveal_card(reveal: Reveal) -> dict[str, Any]:
    """Render the closed card: the right choice marked, the distribution, the results."""
    rows = [
        block(
            f"{STYLE.icons[Icon.RIGHT if t.correct else Icon.OTHER]} **{t.choice.key}.** "
            f"{_escape(t.choice.text)}  \n`{words.bar(t.fraction, BAR_WIDTH)}` "
            + markdown(words.tally(t.count, t.fraction))
        )
        for t in reveal.tallies
    ]
    answer = reveal.question.answer_choice
    facts = [
        {"title": M.ANSWER_FIELD, "value": f"**{answer.key}.** {_escape(answer.text)}"},
        {"title": M.RESULTS_FIELD, "value": markdown(words.results(reveal))},
    ]
    if reveal.fastest:
        facts.append({"title": M.FASTEST_FIELD, "value": markdown(words.fastest_names(reveal))})
    tags = words.tag_list(reveal.question)
    if tags is not None:
        # Shown only now: a tag can name the answer (``words.card_facts``).
        facts.append({"title": M.FACT_TAGS, "value": markdown(tags)})
    body = [
        _title(_escape(M.CARD_TITLE_CLOSED)),
        block(_escape(reveal.question.text)),
        *rows,
        {"type": "FactSet", "facts": facts},
        block(_escape(M.IN_THE_THREAD), isSubtle=True, size="Small"),
    ]
    # Teams cannot grey a button out: the closed card has no choices, only the report.
    report = buttons.Report(reveal.question.id)
    return card(body, [_button(report, M.REPORT_BUTTON)] if buttons.fits(report) else None)


def explanation_card(item: Explanation, image_url: ImageUrl = small_inline) -> dict[str, Any]:
    """Render the thread reply: the explanation, why each wrong choice is wrong, references."""
    q = item.reveal.question
    body = [_title(markdown(words.answer_is(q))), block(_escape(q.full))]
    for c in q.choices:
        why = q.why_not.get(c.key)
        if c.key != q.answer and why:
            body.append(block(markdown(words.why_not(c)), weight="Bolder"))
            body.append(block(_escape(why)))
    if q.references:
        body.append(block(M.REFERENCES, weight="Bolder"))
        body.append(block("\n\n".join(_link(r.title, r.url) for r in q.references)))
    return card(_with_chart(body, item.chart, image_url))


def panel_card(panel: Panel) -> dict[str, Any]:
    """Render a titled list (a leaderboard, someone's page) with its buttons."""
    body = [_title(markdown(panel.title)), block(markdown(panel.body))]
    if panel.note is not None:
        body.append(block(markdown(panel.note), isSubtle=True, size="Small"))
    return card(body, [_button(o.button, o.label, positive=o.primary) for o in panel.offers])


def review_card(ask: ReviewAsk) -> dict[str, Any]:
    """Render a question due for review, with one button per choice."""
    q = ask.question
    body = [
        _title(markdown(ask.title)),
        block(_escape(q.text)),
        _choices(q),
        block(markdown(ask.footer), isSubtle=True, size="Small"),
    ]
    actions = [_button(ask.button(c.key), label(c.key, c.text)) for c in q.choices]
    return card(body, actions)


def estimate_card(view: EstimateView, image_url: ImageUrl = small_inline) -> dict[str, Any]:
    """Render a /bandwidth answer: the table in a monospace block, and the chart."""
    table = clip(view.table, TEXT_MAX)
    body = [
        block(_escape(view.headline), weight="Bolder"),
        block(_escape(table), fontType="Monospace"),
    ]
    return card(_with_chart(body, view.chart, image_url))


def text_card(text: Text) -> dict[str, Any]:
    """Render a sentence (or a few lines) as a card."""
    return card([block(markdown(text))])


def content_card(content: Content, image_url: ImageUrl = small_inline) -> dict[str, Any]:
    """Return the Adaptive Card that shows a piece of content."""
    match content:
        case Text():
            return text_card(content)
        case Feedback(text=text, offers=()):
            return card([block(_feedback_markdown(text))])
        case Feedback(text=text, offers=offers):
            actions = [_button(o.button, o.label, positive=o.primary) for o in offers]
            return card([block(_feedback_markdown(text))], actions)
        case Panel():
            return panel_card(content)
        case QuestionCard():
            return question_card(content)
        case Reveal():
            return reveal_card(content)
        case ReviewAsk():
            return review_card(content)
        case EstimateView():
            return estimate_card(content, image_url)
    raise TypeError(f"cannot render {type(content).__name__}")


def attachment(made: dict[str, Any]) -> dict[str, Any]:
    """Return a card as a message attachment."""
    return {"contentType": CARD_TYPE, "content": made}


def message(content: Content | Explanation, image_url: ImageUrl = small_inline) -> dict[str, Any]:
    """Return the fields of a message activity that shows a piece of content."""
    if isinstance(content, Explanation):
        made = explanation_card(content, image_url)
    else:
        made = content_card(content, image_url)
    return {"type": "message", "attachments": [attachment(made)]}


def plain(content: Content) -> str | None:
    """Return a short answer as plain text (an invoke's private reply), or None if it is more."""
    match content:
        case Text():
            return clip(content.plain(), TEXT_MAX)
        case Feedback(text=text, offers=offers) if all(
            isinstance(o.button, buttons.ConfidenceChoice | buttons.Report) for o in offers
        ):
            # An invoke's answer is text alone: the confidence buttons and the report, optional
            # (the report is on the results card too), are left out.
            return clip(text.plain(), TEXT_MAX)
    return None


# ---------------------------------------------------------------- forms

# The key a form's submit action carries beside the form's id, and where it came from.
FORM_KEY = "form"
TEAM_KEY = "team"
SENT_KEYS = (DATA_KEY, FORM_KEY, TEAM_KEY)


def with_team(message: dict[str, Any], team: str) -> dict[str, Any]:
    """Return a message whose card's buttons also carry the team it was asked from: sent to the
    one-to-one chat, where there is no team, a press still names whose owners are its admins."""

    def stamp(node: Any) -> Any:
        if isinstance(node, dict):
            done = {k: stamp(v) for k, v in node.items()}
            data = done.get("data")
            if done.get("type") == "Action.Execute" and isinstance(data, dict) and DATA_KEY in data:
                done["data"] = {**data, TEAM_KEY: team}
            return done
        if isinstance(node, list):
            return [stamp(item) for item in node]
        return node

    stamped: dict[str, Any] = stamp(message)
    return stamped


def form_card(form: Form, team: str | None = None) -> dict[str, Any]:
    """Render a form as a card of inputs (each input's id the field's name), each refused field
    followed by its error, and a submit action carrying the form's id (and the team it was
    opened from, whose owners are its admins)."""
    body: list[dict[str, Any]] = [_title(_escape(form.title))]
    for f in form.fields:
        value = form.values.get(f.name, "")
        field: dict[str, Any] = {"id": f.name, "label": f.label, "isRequired": f.required}
        if f.options:
            field |= {
                "type": "Input.ChoiceSet",
                "style": "compact",
                "choices": [{"title": label, "value": v} for v, label in f.options],
            }
        else:
            field |= {"type": "Input.Text", "isMultiline": f.long}
            if f.max_chars:
                field["maxLength"] = f.max_chars
            if f.hint:
                field["placeholder"] = f.hint
        if value:
            field["value"] = value
        body.append(field)
        error = form.errors.get(f.name)
        if error:
            body.append(block(_escape(error), id=f"{f.name}-error", color="Attention"))
    data: dict[str, Any] = {DATA_KEY: buttons.button_id(form.button), FORM_KEY: True}
    if team:
        data[TEAM_KEY] = team
    submit = {"type": "Action.Execute", "title": form.submit, "verb": VERB, "data": data}
    return card(body, [submit])
