"""What the bot says, in every chat: the wording shared by the Slack and Discord renderers.

Each platform passes its own ``Markup`` (how to bold, escape and mention, which emoji), so the
sentences live in one place and only the markup differs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.engine.model import AnswerOutcome, AnswerStatus, Choice, UserStats


@dataclass(frozen=True)
class Markup:
    """How one platform marks text up."""

    bold: Callable[[str], str]
    escape: Callable[[str], str]
    mention: Callable[[str], str]
    right: str
    wrong: str
    streak: str


def bar(fraction: float, width: int) -> str:
    """Return a text bar of ``width`` cells filled in proportion to ``fraction``."""
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "█" * filled + "░" * (width - filled)


def plural(count: int, one: str, many: str | None = None) -> str:
    """Return ``1 point`` or ``3 points``."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def answer_feedback(outcome: AnswerOutcome, m: Markup, label: Callable[[Choice], str]) -> str:
    """Return the private reply to someone who answered."""
    mine = m.bold(m.escape(label(outcome.choice)))
    if outcome.status is AnswerStatus.CLOSED:
        return "This question is closed; the answer and the results are in its thread."
    if outcome.status is AnswerStatus.ALREADY:
        return f"You already answered {mine}; your first answer is the one that counts."
    lines = []
    if outcome.status is AnswerStatus.CHANGED and outcome.previous is not None:
        lines.append(
            f"You changed your answer from {m.bold(outcome.previous.key)} "
            f"to {m.bold(outcome.choice.key)}."
        )
    if outcome.correct:
        points = f" (+{plural(outcome.points, 'point')})"
        lines.append(f"{m.right} {m.bold('Right!')} You chose {mine}{points}.")
    else:
        lines.append(f"{m.wrong} {m.bold('Not this time.')} You chose {mine}.")
    lines.append(m.escape(outcome.short))
    if outcome.streak > 1:
        lines.append(f"{m.streak} {outcome.streak} daily questions right in a row.")
    return "\n".join(lines)


def stats_text(stats: UserStats, m: Markup) -> str:
    """Return one user's totals and streaks."""
    return (
        f"{m.mention(stats.user)}: {stats.answered} answered, {stats.correct} right "
        f"({stats.accuracy:.0f}%), {stats.points} points; daily streak {stats.current_streak} "
        f"(best {stats.best_streak})."
    )
