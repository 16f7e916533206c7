"""The scoring and answering rules, in one place for the engine that applies them and the store.

Pure functions of plain values: what a right answer is worth, and what a second answer to the
same round does.
"""

from __future__ import annotations

from bot.engine.model import AnswerStatus, Question


def points_for(question: Question, correct: bool) -> int:
    """Return the points an answer earns: the question's difficulty if right, else none."""
    return question.difficulty.points if correct else 0


def second_answer(first_choice: str, new_choice: str, *, allow_change: bool) -> AnswerStatus:
    """Decide what a user's second answer to a round does.

    The first answer counts (ALREADY) unless the channel allows changes and the choice is a
    different one (CHANGED).
    """
    if allow_change and new_choice != first_choice:
        return AnswerStatus.CHANGED
    return AnswerStatus.ALREADY
