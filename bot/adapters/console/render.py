"""Plain-text rendering of cards, outcomes and reveals, readable in 80 columns."""

from __future__ import annotations

import textwrap
from datetime import datetime, timedelta

from bot import messages as M
from bot.engine.model import AnswerOutcome, AnswerStatus, Choice, Question, QuestionCard, Reveal
from bot.engine.review import ReviewOutcome, ReviewQueue
from bot.text import Code, Text, When, say, utc_moment

WIDTH = 78


def fill(text: str, indent: str = "") -> str:
    """Wrap each paragraph of text to the terminal's width."""
    paragraphs = [p for p in text.strip().split("\n") if p.strip()]
    return "\n".join(
        textwrap.fill(p.strip(), WIDTH, initial_indent=indent, subsequent_indent=indent)
        for p in paragraphs
    )


def _choice(c: Choice) -> str:
    return f"{c.key}) {c.text}"


def _plain(text: Text, indent: str = "") -> str:
    return fill(text.plain(), indent)


def card_text(card: QuestionCard, number: int, total: int | None) -> str:
    """Render a question with its lettered choices."""
    q = card.question
    where = say(M.PLAY_QUESTION_OF if total else M.PLAY_QUESTION, number=number, total=total or 0)
    meta = " · ".join(x for x in (", ".join(q.tags), q.difficulty.value) if x)
    lines = ["", "=" * WIDTH, f"{where.plain()}  [{meta}]", "", fill(q.text), ""]
    lines += [fill(_choice(c), "  ") for c in q.choices]
    return "\n".join(lines)


def prompt_text(question: Question) -> str:
    """Return the answer prompt."""
    return "\n" + say(M.PLAY_PROMPT, first=question.keys[0], last=question.keys[-1]).plain()


def invalid_text(question: Question, given: str) -> str:
    """Return the hint shown for input that is not a choice."""
    hint = say(M.PLAY_NOT_A_CHOICE, given=Code(given), keys=", ".join(question.keys))
    return "  " + hint.plain()


def outcome_text(outcome: AnswerOutcome) -> str:
    """Render the private feedback on an answer."""
    if outcome.status is AnswerStatus.CLOSED:
        return say(M.PLAY_CLOSED).plain()
    if outcome.correct:
        head = say(M.PLAY_RIGHT, choice=_choice(outcome.choice), points=outcome.points)
    else:
        head = say(M.PLAY_WRONG, choice=_choice(outcome.choice), answer=_choice(outcome.answer))
    if outcome.streak > 1:
        head = head + "  " + say(M.PLAY_STREAK, n=outcome.streak)
    return "\n" + _plain(head) + "\n" + fill(outcome.short, "  ")


def explanation_text(question: Question) -> list[str]:
    """Render the full explanation and why each wrong choice is wrong."""
    lines = ["", M.PLAY_FULL, "-" * len(M.PLAY_FULL), fill(question.full)]
    wrong = [c for c in question.choices if c.key in question.why_not]
    if wrong:
        lines += ["", M.PLAY_WHY_NOT]
        lines += [fill(f"{_choice(c)}: {question.why_not[c.key]}", "  ") for c in wrong]
    return lines


def reveal_text(reveal: Reveal, chart_table: str | None = None) -> str:
    """Render the full explanation, why each wrong choice is wrong, and references."""
    q = reveal.question
    lines = explanation_text(q)
    if q.references:
        lines += ["", M.PLAY_REFERENCES]
        lines += [f"  - {r.title}\n    {r.url}" for r in q.references]
    if chart_table:
        lines += ["", chart_table]
    return "\n".join(lines)


def summary_text(asked: int, correct: int, points: int) -> str:
    """Render the closing score line."""
    if asked == 0:
        return "\n" + M.PLAY_NOTHING_ANSWERED
    return "\n" + say(M.PLAY_SCORE, correct=correct, asked=asked, points=points).plain()


# ---------------------------------------------------------------- review mode


def _when(at: datetime) -> str:
    return utc_moment(at, When.DATE)


def review_question_text(question: Question, number: int) -> str:
    """Render a question being reviewed, with its lettered choices."""
    head = say(M.PLAY_REVIEW_QUESTION, number=number).plain()
    lines = ["", "=" * WIDTH, head, "", fill(question.text), ""]
    lines += [fill(_choice(c), "  ") for c in question.choices]
    return "\n".join(lines)


def review_outcome_text(outcome: ReviewOutcome, question: Question, now: datetime) -> str:
    """Render the feedback on a review answer, when the question comes back, and why."""
    if outcome.correct:
        head = say(M.PLAY_REVIEW_RIGHT, choice=_choice(outcome.choice))
    else:
        head = say(M.PLAY_WRONG, choice=_choice(outcome.choice), answer=_choice(outcome.answer))
    lines = ["", _plain(head), fill(outcome.short, "  ")]
    if outcome.due_at is not None:
        days = max(1, round((outcome.due_at - now) / timedelta(days=1)))
        back = M.PLAY_REVIEW_COMES_BACK_ONE if days == 1 else M.PLAY_REVIEW_COMES_BACK_MANY
        lines.append(_plain(say(back, n=days, when=_when(outcome.due_at)), "  "))
    return "\n".join(lines + explanation_text(question))


def review_summary_text(asked: int, correct: int, queue: ReviewQueue) -> str:
    """Render the end of a review session: the score and what is waiting."""
    lines: list[Text] = []
    if asked:
        lines.append(say(M.PLAY_REVIEWED, asked=asked, correct=correct))
    if queue.due:
        lines.append(say(M.PLAY_MORE_DUE, n=queue.due, command=Code("quizbot play --review")))
    elif queue.next_due is not None:
        lines.append(say(M.PLAY_NEXT_REVIEW, when=_when(queue.next_due)))
    elif not asked:
        lines.append(say(M.PLAY_NO_REVIEWS))
    else:
        lines.append(say(M.PLAY_NOTHING_LEFT))
    return "\n" + "\n".join(_plain(line) for line in lines)
