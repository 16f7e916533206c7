"""How the terminal shows cards, verdicts, explanations and scores: rich renderables, no flow.

The session (``session.py``) decides what comes when; this module only decides how it looks.
Colour comes from ``rich`` and is left out when the output is not a terminal or ``NO_COLOR`` is
set; the words come from the message catalogue.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TextIO, cast

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.text import Text as Rich

from bot import messages as M
from bot.chat import words
from bot.engine.model import AnswerOutcome, AnswerStatus, Choice, Question, QuestionCard, Reveal
from bot.engine.review import ReviewOutcome, ReviewQueue
from bot.text import Code, Text, When, plural, say, utc_moment

# Lines stay readable in a narrow terminal and in 80 columns when piped.
WIDTH = 78
RIGHT = "bold green"
WRONG = "bold red"
HEAD = "bold"
QUIET = "dim"
KEY = "bold cyan"


@dataclass(frozen=True)
class Tally:
    """The score of a session so far."""

    asked: int = 0
    correct: int = 0
    points: int = 0

    def add(self, outcome: AnswerOutcome) -> Tally:
        """Return the tally with one more answer counted."""
        return Tally(self.asked + 1, self.correct + outcome.correct, self.points + outcome.points)


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


def points_text(points: int) -> Text:
    """Return "1 point" or "N points"."""
    return plural(points, M.PLAY_POINTS_ONE, M.PLAY_POINTS_MANY)


def score_text(tally: Tally) -> Rich:
    """Return the running score: right answers out of asked, and points."""
    told = say(
        M.PLAY_SCORE, correct=tally.correct, asked=tally.asked, points=points_text(tally.points)
    )
    return _plain(told, QUIET)


def card(card: QuestionCard, number: int, total: int | None, tally: Tally) -> RenderableType:
    """Render a question: progress, score so far, the stem and its lettered choices."""
    q = card.question
    where = say(M.PLAY_QUESTION_OF if total else M.PLAY_QUESTION, number=number, total=total or 0)
    # The tags wait for the verdict: one can name the answer.
    head = Rich(where.plain(), style=HEAD)
    head.append(f"  [{q.difficulty.value}]", style=QUIET)
    parts: list[RenderableType] = [Rich(""), Rule(style=QUIET), head]
    if tally.asked:
        parts.append(score_text(tally))
    parts += [Rich(""), Rich(q.text), Rich("")]
    parts += [_indented(_choice_line(c)) for c in q.choices]
    return Group(*parts)


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


def verdict(outcome: AnswerOutcome, tally: Tally, question: Question) -> RenderableType:
    """Render the verdict first, then the short explanation, the tags and the score so far."""
    if outcome.status is AnswerStatus.CLOSED:
        return _plain(say(M.PLAY_CLOSED))
    if outcome.correct:
        head = say(M.PLAY_RIGHT, choice=_choice(outcome.choice), points=points_text(outcome.points))
        line = _plain(head, RIGHT)
    else:
        head = say(M.PLAY_WRONG, choice=_choice(outcome.choice), answer=_choice(outcome.answer))
        line = _plain(head, WRONG)
    if outcome.streak > 1:
        line.append("  " + say(M.PLAY_STREAK, n=outcome.streak).plain(), style="bold yellow")
    return Group(
        Rich(""),
        line,
        *_why_not(outcome.choice, outcome.why_not),
        _indented(Rich(outcome.short)),
        *_tags(question),
        score_text(tally),
    )


def _tags(question: Question) -> list[RenderableType]:
    """Render the question's tags, shown once the answer is known."""
    tags = words.revealed_tags(question)
    return [] if tags is None else [_indented(_plain(tags, QUIET))]


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


def reveal(reveal: Reveal, chart_table: str | None = None) -> RenderableType:
    """Render the full explanation, why each wrong choice is wrong, references and the chart."""
    q = reveal.question
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


def summary(tally: Tally) -> RenderableType:
    """Render the closing score line."""
    if tally.asked == 0:
        return Group(Rich(""), Rich(M.PLAY_NOTHING_ANSWERED))
    told = say(
        M.PLAY_SCORE, correct=tally.correct, asked=tally.asked, points=points_text(tally.points)
    )
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
