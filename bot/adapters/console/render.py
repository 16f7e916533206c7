"""Plain-text rendering of cards, outcomes and reveals, readable in 80 columns."""

from __future__ import annotations

import textwrap

from bot.engine.model import AnswerOutcome, AnswerStatus, Question, QuestionCard, Reveal

WIDTH = 78


def _wrap(text: str, indent: str = "") -> str:
    paragraphs = [p for p in text.strip().split("\n") if p.strip()]
    return "\n".join(
        textwrap.fill(p.strip(), WIDTH, initial_indent=indent, subsequent_indent=indent)
        for p in paragraphs
    )


def card_text(card: QuestionCard, number: int, total: int | None) -> str:
    """Render a question with its lettered choices."""
    q = card.question
    where = f"Question {number}" + (f" of {total}" if total else "")
    meta = " · ".join(x for x in (", ".join(q.tags), q.difficulty.value) if x)
    lines = ["", "=" * WIDTH, f"{where}  [{meta}]", "", _wrap(q.text), ""]
    lines += [_wrap(f"{c.key}) {c.text}", "  ") for c in q.choices]
    return "\n".join(lines)


def prompt_text(question: Question) -> str:
    """Return the answer prompt."""
    return f"\nYour answer ({question.keys[0]}-{question.keys[-1]}, q to quit): "


def invalid_text(question: Question, given: str) -> str:
    """Return the hint shown for input that is not a choice."""
    return f"  '{given}' is not a choice: type one of {', '.join(question.keys)}, or q to quit."


def outcome_text(outcome: AnswerOutcome) -> str:
    """Render the private feedback on an answer."""
    if outcome.status is AnswerStatus.CLOSED:
        return "This question is closed."
    if outcome.correct:
        head = f"Right! {outcome.choice.key}) {outcome.choice.text}  (+{outcome.points})"
    else:
        head = (
            f"Not quite: you chose {outcome.choice.key}) {outcome.choice.text}; "
            f"the answer is {outcome.answer.key}) {outcome.answer.text}."
        )
    if outcome.streak > 1:
        head += f"  {outcome.streak} in a row!"
    return "\n" + _wrap(head) + "\n" + _wrap(outcome.short, "  ")


def reveal_text(reveal: Reveal, chart_table: str | None = None) -> str:
    """Render the full explanation, why each wrong choice is wrong, and references."""
    q = reveal.question
    lines = ["", "Full explanation", "-" * 16, _wrap(q.full)]
    if q.why_not:
        lines += ["", "Why not the others"]
        for c in q.choices:
            if c.key in q.why_not:
                lines.append(_wrap(f"{c.key}) {c.text}: {q.why_not[c.key]}", "  "))
    if q.references:
        lines += ["", "References"]
        lines += [f"  - {r.title}\n    {r.url}" for r in q.references]
    if chart_table:
        lines += ["", chart_table]
    return "\n".join(lines)


def summary_text(asked: int, correct: int, points: int) -> str:
    """Render the closing score line."""
    if asked == 0:
        return "\nNo questions answered. See you next time."
    return f"\nScore: {correct}/{asked} correct, {points} points."
