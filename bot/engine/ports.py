"""What the engine needs from the outside world: a store and a clock.

The protocol lives here, beside its only caller, so that the engine depends on nothing below it;
``bot.storage`` implements it with SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from bot.engine.model import (
    AnswerRecord,
    AnswerStatus,
    ChannelSettings,
    Place,
    QuestionStats,
    Round,
    ScoreRow,
)
from bot.errors import QuizbotError

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Return the current time, timezone-aware UTC."""
    return datetime.now(UTC)


class RoundAlreadyOpen(QuizbotError):
    """A channel already has an open round (the database refused a second one)."""


class Store(Protocol):
    """Durable state of rounds and answers; every method is one transaction."""

    async def create_round(
        self,
        place: Place,
        question_id: str,
        *,
        opened_at: datetime,
        closes_at: datetime | None,
        scheduled: bool = False,
        slot: str | None = None,
    ) -> Round:
        """Insert an open round; raise RoundAlreadyOpen if the channel has one."""
        ...

    async def set_message_ref(self, round_id: int, ref: str) -> None:
        """Remember which platform message shows the round."""
        ...

    async def get_round(self, round_id: int) -> Round | None:
        """Return the round, or None."""
        ...

    async def open_round(self, place: Place) -> Round | None:
        """Return the open round in this channel, if any."""
        ...

    async def due_rounds(self, platform: str, now: datetime) -> list[Round]:
        """Return the open rounds of a platform whose closing time has passed."""
        ...

    async def question_counts(self, place: Place) -> dict[str, int]:
        """Return how many rounds each question has had in this channel."""
        ...

    async def record_answer(
        self, answer: AnswerRecord, *, allow_change: bool
    ) -> tuple[AnswerStatus, AnswerRecord | None]:
        """Store an answer at most once per (round, user).

        Return ACCEPTED with None, CHANGED with the previous answer, ALREADY with the stored
        answer, or CLOSED with None when the round is closed.
        """
        ...

    async def count_answers(self, round_id: int) -> int:
        """Return how many users answered the round."""
        ...

    async def close_round(self, round_id: int, at: datetime) -> bool:
        """Mark the round closed; return True only for the one caller that closed it."""
        ...

    async def round_answers(self, round_id: int) -> list[AnswerRecord]:
        """Return every answer of the round, earliest first."""
        ...

    async def channel_settings(self, place: Place) -> ChannelSettings:
        """Return the channel's settings (defaults when never set)."""
        ...

    async def set_channel_settings(self, place: Place, settings: ChannelSettings) -> None:
        """Store the channel's settings."""
        ...

    async def score_rows(
        self, platform: str, workspace: str, since: datetime | None, user: str | None = None
    ) -> list[ScoreRow]:
        """Return per-user totals of answers since a time (all time with None)."""
        ...

    async def scheduled_results(self, place: Place, user: str) -> list[tuple[bool, bool | None]]:
        """Return (closed, correct-or-None-if-unanswered) per scheduled round, oldest first."""
        ...

    async def question_stats(
        self, platform: str, workspace: str, question_id: str
    ) -> QuestionStats:
        """Return how a question fared in a workspace."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
