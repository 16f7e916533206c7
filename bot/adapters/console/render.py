"""How the terminal shows cards, verdicts, explanations and scores: rich renderables, no flow.

The session (``session.py``) decides what comes when; this module only decides how it looks.
Colour comes from ``rich`` and is left out when the output is not a terminal or ``NO_COLOR`` is
set; the words come from the message catalogue.
"""

from __future__ import annotations

import io
import re
from datetime import datetime, timedelta
from typing import TextIO, cast

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.text import Text as Rich

from bot import messages as M
from bot.chat import words
from bot.engine.model import Choice, Question
from bot.engine.practice import PracticeTurn
from bot.engine.review import ReviewOutcome, ReviewQueue
from bot.text import Code, Text, When, say, utc_moment

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


def _indented(renderable: RenderableType, by: int = 2) -> Padding:
    return Padding(renderable, (0, 0, 0, by), expand=False)


def _choice(c: Choice) -> str:
    return f"{c.key}) {c.text}"


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


def _why_not(choice: Choice, why_not: str | None) -> list[RenderableType]:
    """Render why the chosen wrong choice is wrong, when the question says."""
    if not why_not:
        return []
    return [_indented(_plain(say(M.WHY_NOT_CHOSEN, key=choice.key, reason=why_not)))]


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


# ---------------------------------------------------------------- practice


def practice_question(turn: PracticeTurn) -> RenderableType:
    """Render a practice question: its title as chat shows it, the stem, the lettered choices,
    and how many are left."""
    assert turn.item is not None
    question = turn.item.question
    parts: list[RenderableType] = [
        Rich(""),
        Rule(style=QUIET),
        _plain(words.practice_title(turn), HEAD),
        Rich(""),
        Rich(question.text),
        Rich(""),
        *(_indented(_choice_line(c)) for c in question.choices),
        _plain(words.practice_left(turn.session), QUIET),
    ]
    return Group(*parts)


def practice_verdict(told: Text) -> RenderableType:
    """Render the feedback on a practice answer, as chat words it: the verdict in colour first."""
    head, *rest = told.plain().strip().split("\n")
    right = head.lstrip().startswith(M.RIGHT)
    parts: list[RenderableType] = [Rich(""), Rich(head.strip(), style=RIGHT if right else WRONG)]
    parts += [_indented(Rich(line)) for line in rest if line.strip()]
    return Group(*parts)


def practice_rated(told: Text) -> RenderableType:
    """Render the answer to "I was sure" or "I guessed"."""
    return _indented(_plain(told, QUIET))


def practice_end(told: Text) -> RenderableType:
    """Render the end of a session (done, stopped, nothing to practise)."""
    return Group(Rich(""), _plain(told, HEAD))


# ---------------------------------------------------------------- review mode


def _when(at: datetime) -> str:
    return utc_moment(at, When.DATE)


def review_question(question: Question, number: int) -> RenderableType:
    """Render a question being reviewed, with its lettered choices."""
    head = _plain(say(M.PLAY_REVIEW_QUESTION, number=number), HEAD)
    parts: list[RenderableType] = [Rich(""), Rule(style=QUIET), head, Rich(""), Rich(question.text)]
    parts += [Rich("")] + [_indented(_choice_line(c)) for c in question.choices]
    return Group(*parts)


def review_outcome(outcome: ReviewOutcome, question: Question, now: datetime) -> RenderableType:
    """Render the feedback on a review answer, when the question comes back, and why."""
    if outcome.correct:
        line = _plain(say(M.PLAY_REVIEW_RIGHT, choice=_choice(outcome.choice)), RIGHT)
    else:
        head = say(M.PLAY_WRONG, choice=_choice(outcome.choice), answer=_choice(outcome.answer))
        line = _plain(head, WRONG)
    parts: list[RenderableType] = [
        Rich(""),
        line,
        *_why_not(outcome.choice, outcome.why_not),
        _indented(Rich(outcome.short)),
    ]
    if outcome.due_at is not None:
        days = max(1, round((outcome.due_at - now) / timedelta(days=1)))
        back = M.PLAY_REVIEW_COMES_BACK_ONE if days == 1 else M.PLAY_REVIEW_COMES_BACK_MANY
        parts.append(_indented(_plain(say(back, n=days, when=_when(outcome.due_at)), QUIET)))
    return Group(*parts, *explanation(question))


def review_summary(asked: int, correct: int, queue: ReviewQueue) -> RenderableType:
    """Render the end of a review session: the score and what is waiting."""
    lines: list[Text] = []
    if asked:
        lines.append(say(M.PLAY_REVIEWED, asked=asked, correct=correct))
    if queue.due:
        lines.append(say(M.PLAY_MORE_DUE, n=queue.due, command=Code("quizbot play --review")))
    elif queue.next_due is not None:
        then = M.PLAY_NEXT_REVIEW if asked else M.PLAY_NOTHING_DUE_NEXT
        lines.append(say(then, when=_when(queue.next_due)))
    elif not asked:
        lines.append(say(M.PLAY_NO_REVIEWS))
    else:
        lines.append(say(M.PLAY_NOTHING_LEFT))
    return Group(Rich(""), *(_plain(line) for line in lines))
