"""What a person's review shows: the outcome of one review answer, and their queue.

Which question is due when is the person's FSRS card's business (``bot.engine.learning``);
review answers never count towards scores or leaderboards.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.engine.model import Choice


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    """What to tell the user after a review answer."""

    question_id: str
    choice: Choice
    answer: Choice
    correct: bool
    short: str
    due_at: datetime | None
    counted: bool = True
    why_not: str | None = None  # why the chosen (wrong) choice is wrong, from the question


@dataclass(frozen=True, slots=True)
class ReviewQueue:
    """How many reviews a user has waiting, and when the next one falls due."""

    due: int
    pending: int
    next_due: datetime | None
