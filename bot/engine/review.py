"""Spaced repetition of missed questions: pure rules over a small, stored state.

A question a user gets wrong comes back to them privately: due again after 1, 3, 7 and then
21 days while they keep missing it, and done once they answer it right twice in a row. A right
answer that is not yet the second in a row brings the question back after the same interval, so
the spacing only grows with misses. Review answers are kept apart from rounds and never count
towards scores or leaderboards.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.engine.model import Choice

INTERVAL_DAYS = (1, 3, 7, 21)
RIGHT_IN_A_ROW_TO_FINISH = 2


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One user's review state for one question in a workspace."""

    platform: str
    workspace: str
    user: str
    question_id: str
    step: int
    right_in_row: int
    due_at: datetime
    done: bool = False
    version: int = 0


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    """What to tell the user after a review answer."""

    question_id: str
    choice: Choice
    answer: Choice
    correct: bool
    short: str
    done: bool
    due_at: datetime | None
    counted: bool = True


@dataclass(frozen=True, slots=True)
class ReviewQueue:
    """How many reviews a user has waiting, and when the next one falls due."""

    due: int
    pending: int
    next_due: datetime | None


def interval(step: int) -> timedelta:
    """Return the wait after a miss at this step (the last interval repeats)."""
    return timedelta(days=INTERVAL_DAYS[min(max(step, 0), len(INTERVAL_DAYS) - 1)])


def after_round_miss(
    item: ReviewItem | None,
    *,
    platform: str,
    workspace: str,
    user: str,
    question_id: str,
    now: datetime,
) -> ReviewItem:
    """Return the state after a wrong answer in a round.

    A new (or finished) question starts over, due in a day. One already waiting keeps its step,
    loses its run of right answers and comes back no later than a day from now.
    """
    if item is None or item.done:
        return ReviewItem(
            platform=platform,
            workspace=workspace,
            user=user,
            question_id=question_id,
            step=0,
            right_in_row=0,
            due_at=now + interval(0),
            done=False,
            version=0 if item is None else item.version,
        )
    return replace(item, right_in_row=0, due_at=min(item.due_at, now + interval(0)))


def after_review(item: ReviewItem, *, correct: bool, now: datetime) -> ReviewItem:
    """Return the state after a review answer.

    A miss waits one interval longer than the last (1, 3, 7, then 21 days); a right answer waits
    the same interval again, and the second right answer in a row finishes the question.
    """
    if not correct:
        step = min(item.step + 1, len(INTERVAL_DAYS) - 1)
        return replace(item, step=step, right_in_row=0, due_at=now + interval(step))
    right = item.right_in_row + 1
    if right >= RIGHT_IN_A_ROW_TO_FINISH:
        return replace(item, right_in_row=right, done=True)
    return replace(item, right_in_row=right, due_at=now + interval(item.step))


def is_due(item: ReviewItem, now: datetime) -> bool:
    """Return whether the item should be asked now."""
    return not item.done and item.due_at <= now
