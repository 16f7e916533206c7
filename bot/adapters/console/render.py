"""How the terminal shows what the chat core answers, and the explanations: rich renderables.

The chat core decides what is said, the session (``app.py``) what is typed when; this
module only decides how it looks.
Colour comes from ``rich`` and is left out when the output is not a terminal or ``NO_COLOR`` is
set; the words come from the message catalogue.
"""

from __future__ import annotations

import io
import re
from typing import TextIO, cast

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.text import Text as Rich

from bot import messages as M
from bot.chat import words
from bot.chat.content import Content, EstimateView, Feedback, Panel, ReviewAsk
from bot.engine.model import Choice, Question, QuestionCard, Reveal
from bot.platforms import TERMINAL
from bot.text import Code, Pre, Span, Text, say

PLATFORM = TERMINAL
# Lines stay readable in a narrow terminal and in 80 columns when piped.
WIDTH = 78
RIGHT = "bold green"
WRONG = "bold red"
HEAD = "bold"
QUIET = "dim"
KEY = "bold cyan"


# Spaces (and the colour codes after them) at the end of a line: rich leaves them where it wraps.
_TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)(?=\n)")


class _Trimmed(io.TextIOBase):
    """A text stream that drops the spaces rich leaves at the end of wrapped lines."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self._out = out

    def write(self, text: str) -> int:
        """Write ``text`` without trailing spaces on its lines."""
        self._out.write(_TRAILING.sub(r"\1", text))
        return len(text)

    def flush(self) -> None:
        """Flush the stream underneath."""
        self._out.flush()

    def isatty(self) -> bool:
        """Return whether the stream underneath is a terminal."""
        return self._out.isatty()

    def fileno(self) -> int:
        """Return the descriptor of the stream underneath (rich asks it for the width)."""
        return self._out.fileno()


def console(out: TextIO) -> Console:
    """Return a console on ``out``: coloured on a terminal, plain text otherwise."""
    trimmed = cast(TextIO, _Trimmed(out))
    probe = Console(file=trimmed)
    width = min(probe.width, WIDTH + 2) if probe.is_terminal else WIDTH + 2
    return Console(file=trimmed, width=width, highlight=False, markup=False, emoji=False)


def _plain(text: Text, style: str = "") -> Rich:
    return Rich(text.plain(), style=style)


def _blocks(text: Text) -> RenderableType:
    """Render a text whose preformatted blocks (a usage, a table) keep their lines: the words
    around them wrap, the blocks never do."""
    parts: list[RenderableType] = []
    words_: list[Span] = []
    for span in (*text.spans, None):
        if isinstance(span, Pre) or span is None:
            said = Text(tuple(words_)).plain().strip("\n")
            if said:
                parts.append(Rich(said))
            words_ = []
            if span is not None:
                parts.append(Rich(Text((span,)).plain(), no_wrap=True, overflow="ignore"))
        else:
            words_.append(span)
    return Group(*parts)


def _indented(renderable: RenderableType, by: int = 2) -> Padding:
    return Padding(renderable, (0, 0, 0, by), expand=False)


def _choice_line(c: Choice) -> Rich:
    line = Rich()
    line.append(f"{c.key})", style=KEY)
    line.append(f" {c.text}")
    return line


def _paragraphs(text: str) -> list[RenderableType]:
    """Return each paragraph of ``text``, a blank line between them."""
    parts: list[RenderableType] = []
    for paragraph in (p.strip() for p in text.strip().split("\n")):
        if paragraph:
            if parts:
                parts.append(Rich(""))
            parts.append(Rich(paragraph))
    return parts


def prompt_text(question: Question) -> str:
    """Return the answer prompt."""
    return "\n" + say(M.PLAY_PROMPT, first=question.keys[0], last=question.keys[-1]).plain()


def more_prompt(last: bool) -> str:
    """Return the prompt after a verdict: the next question, the full explanation, or quit."""
    return say(M.PLAY_MORE_LAST if last else M.PLAY_MORE).plain()


def next_prompt(last: bool) -> str:
    """Return the prompt after the full explanation."""
    return say(M.PLAY_NEXT_LAST if last else M.PLAY_NEXT).plain()


def invalid_text(question: Question, given: str) -> RenderableType:
    """Return the hint shown for input that is not a choice."""
    hint = say(M.PLAY_NOT_A_CHOICE, given=Code(given), keys=", ".join(question.keys))
    return _indented(_plain(hint, "yellow"))


def _section(title: str) -> list[RenderableType]:
    return [Rich(""), Rich(title, style=HEAD)]


def explanation(question: Question) -> list[RenderableType]:
    """Render the full explanation and why each wrong choice is wrong."""
    parts: list[RenderableType] = [*_section(M.PLAY_FULL), *_paragraphs(question.full)]
    wrong = [c for c in question.choices if c.key in question.why_not]
    if wrong:
        parts += _section(M.PLAY_WHY_NOT)
        for c in wrong:
            line = _choice_line(c)
            line.append(f": {question.why_not[c.key]}", style="")
            parts.append(_indented(line))
    return parts


def explanation_of(q: Question, chart_table: str | None = None) -> RenderableType:
    """Render a question's full explanation, why each wrong choice is wrong, its references
    and its chart's table."""
    parts = explanation(q)
    if q.references:
        parts += _section(M.PLAY_REFERENCES)
        for r in q.references:
            parts.append(_indented(Rich(f"- {r.title}")))
            parts.append(_indented(Rich(r.url, style="underline"), 4))
    if chart_table:
        # The table is laid out already: printed as it is, never wrapped.
        parts += [Rich(""), Rich(chart_table, no_wrap=True, overflow="ignore")]
    return Group(*parts)


# ---------------------------------------------------------------- what the core answers


def content(shown: Content) -> RenderableType:
    """Render what the chat core answered, as the terminal shows it (print it uncropped: a
    table or a usage keeps its lines whole)."""
    match shown:
        case ReviewAsk():
            return asked(shown)
        case Feedback(text=told):
            return verdict(told)
        case Panel(title=title, body=body, note=note):
            parts: list[RenderableType] = [Rich(""), _plain(title, HEAD), _plain(body)]
            if note is not None:
                parts.append(_plain(note, QUIET))
            return Group(*parts)
        case EstimateView(table=table):
            # The table's first line is its headline.
            return Group(Rich(""), Rich(table, no_wrap=True, overflow="ignore"))
        case QuestionCard(question=question):
            return Group(Rich(""), Rich(question.text), *map(_choice_line, question.choices))
        case Reveal():
            return Group(Rich(""), _plain(words.results(shown)))
        case _:
            return Group(Rich(""), _blocks(shown))


def asked(ask: ReviewAsk) -> RenderableType:
    """Render a question asked privately (practice, review): its title as chat shows it, the
    stem, the lettered choices, and its footer."""
    question = ask.question
    parts: list[RenderableType] = [
        Rich(""),
        Rule(style=QUIET),
        _plain(ask.title, HEAD),
        Rich(""),
        Rich(question.text),
        Rich(""),
        *(_indented(_choice_line(c)) for c in question.choices),
        _plain(ask.footer, QUIET),
    ]
    return Group(*parts)


def verdict(told: Text) -> RenderableType:
    """Render the feedback on an answer, as chat words it: the verdict in colour first."""
    head, *rest = told.plain().strip().split("\n")
    right = head.lstrip().startswith(M.RIGHT)
    parts: list[RenderableType] = [Rich(""), Rich(head.strip(), style=RIGHT if right else WRONG)]
    parts += [_indented(Rich(line)) for line in rest if line.strip()]
    return Group(*parts)
