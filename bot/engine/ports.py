"""What the engine needs from the outside world: a store and a clock.

The protocol lives here, beside its only caller, so that the engine depends on nothing below it;
``bot.storage`` implements it with SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Protocol

from bot.engine.activity import StreakRow
from bot.engine.analytics import QuestionAggregate
from bot.engine.learning import (
    CardKey,
    Confidence,
    Grade,
    LastAnswer,
    Memory,
    MemoryCard,
    Study,
)
from bot.engine.model import (
    AnswerRecord,
    AnswerStatus,
    ChannelSettings,
    Place,
    QuestionStats,
    Round,
    ScoreRow,
    WorkspaceSettings,
)
from bot.engine.names import Known, NameKind
from bot.engine.practice import PracticeSession
from bot.errors import QuizbotError

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Return the current time, timezone-aware UTC."""
    return datetime.now(UTC)


class RoundAlreadyOpen(QuizbotError):
    """A channel already has an open round (the database refused a second one)."""


class PracticeMoved(QuizbotError):
    """A practice session changed between its read and its write (nothing was written)."""


class Store(Protocol):
    """Durable state of rounds and answers; every method is one transaction."""

    @property
    def answers_at_once(self) -> int:
        """How many ``record_answer`` calls are worth having under way at once.

        More would only wait inside the store (for a pooled connection, where a long burst
        meets the pool's timeout); fewer would leave it idle, or commit fewer answers together.
        """
        ...

    async def save_names(
        self, platform: str, workspace: str, names: dict[tuple[NameKind, str], str], at: datetime
    ) -> None:
        """Store what these people, channels or the workspace are called, learnt ``at``."""
        ...

    async def display_names(
        self, platform: str, workspace: str
    ) -> dict[tuple[NameKind, str], Known]:
        """Return every stored name of a workspace, with when each was learnt."""
        ...

    async def create_round(
        self,
        place: Place,
        question_id: str,
        *,
        opened_at: datetime,
        closes_at: datetime | None,
        scheduled: bool = False,
        slot: str | None = None,
        revision: int | None = None,
    ) -> Round:
        """Insert an open round; raise RoundAlreadyOpen if the channel has one."""
        ...

    async def keep_instance(
        self, platform: str, workspace: str, question_id: str, body: str, *, at: datetime
    ) -> str:
        """Store a computed question's text once per workspace; return the text stored first."""
        ...

    async def computed_instances(
        self, platform: str, workspace: str, question_ids: Sequence[str]
    ) -> dict[str, str]:
        """Return the stored text of these computed questions of a workspace, by id."""
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

    async def open_rounds(self, platform: str, workspace: str) -> list[Round]:
        """Return every open round of a workspace, whatever its closing time."""
        ...

    async def question_counts(self, place: Place) -> dict[str, int]:
        """Return how many rounds each question has had in this channel."""
        ...

    async def recent_players(self, place: Place, since: datetime, limit: int) -> list[str]:
        """Return up to ``limit`` people who answered rounds in this channel since ``since``,
        the latest first."""
        ...

    async def record_answer(
        self,
        answer: AnswerRecord,
        *,
        allow_change: bool | None = None,
        study: Study | None = None,
    ) -> tuple[AnswerStatus, AnswerRecord | None]:
        """Store an answer at most once per (round, user), in one transaction.

        Return ACCEPTED with None; CHANGED with the previous answer when changes are allowed
        (``allow_change``; None: as the channel's settings say); ALREADY with the stored answer;
        or CLOSED with None when the round is closed. ``study`` reviews the person's card in the
        same transaction when the answer is inserted (``study.apply`` on the stored card).
        """
        ...

    async def count_answers(self, round_id: int) -> int:
        """Return how many users answered the round."""
        ...

    async def delete_unseen_round(self, round_id: int) -> bool:
        """Delete an open round nobody answered; return whether it was deleted."""
        ...

    async def close_round(self, round_id: int, at: datetime) -> Round | None:
        """Close the round and hold its reveal; return it, closed, only to the one caller that
        closed it (None to the others, and for an unknown round)."""
        ...

    async def claim_reveals(self, platform: str, now: datetime, limit: int = 20) -> list[int]:
        """Claim closed rounds whose reveal was not posted within its lease; return those won."""
        ...

    async def hold_reveal(self, round_id: int, now: datetime) -> bool:
        """Renew the lease on a reveal this process holds; False if another took it over."""
        ...

    async def mark_revealed(self, round_id: int, at: datetime) -> bool:
        """Record a round's reveal as posted; False if another process has taken it over."""
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

    async def scheduled_results(
        self, place: Place, user: str, *, newest: int | None = None
    ) -> list[tuple[bool, bool | None]]:
        """Return (closed, correct-or-None-if-unanswered) per scheduled round, oldest first.

        With ``newest``, only that many of the latest rounds (still oldest first).
        """
        ...

    async def question_stats(
        self, platform: str, workspace: str, question_id: str
    ) -> QuestionStats:
        """Return how a question fared in a workspace."""
        ...

    async def question_aggregates(
        self, platform: str | None = None, workspace: str | None = None
    ) -> list[QuestionAggregate]:
        """Return every asked question's answer aggregates in a scope (None: all of them)."""
        ...

    async def answer_rates(self, platform: str, workspace: str) -> dict[str, tuple[int, int]]:
        """Return (answers, right) per question asked in a workspace."""
        ...

    async def streak_rows(
        self, platform: str, workspace: str, user: str | None = None
    ) -> list[StreakRow]:
        """Return each player's current and best streak per channel of a workspace."""
        ...

    async def workspace_settings(self, platform: str, workspace: str) -> WorkspaceSettings:
        """Return the workspace's settings (defaults when never set)."""
        ...

    async def set_workspace_settings(
        self, platform: str, workspace: str, settings: WorkspaceSettings
    ) -> None:
        """Store the workspace's settings."""
        ...

    async def card(self, key: CardKey) -> MemoryCard | None:
        """Return a person's card for a question, or None if they never answered it."""
        ...

    async def cards(self, platform: str, workspace: str, user: str) -> list[MemoryCard]:
        """Return a person's cards in a workspace, soonest due first."""
        ...

    async def due_cards(
        self,
        platform: str,
        workspace: str,
        user: str,
        now: datetime,
        *,
        question_ids: Collection[str] | None = None,
        limit: int = 20,
    ) -> list[MemoryCard]:
        """Return up to ``limit`` of a person's cards due at ``now``, most overdue first."""
        ...

    async def seen_questions(self, platform: str, workspace: str, user: str) -> set[str]:
        """Return the ids of the questions a person holds a card for."""
        ...

    async def user_results(
        self, platform: str, workspace: str, user: str, limit: int
    ) -> list[tuple[str, bool]]:
        """Return a person's latest answers, rounds and practice alike: (question, right)."""
        ...

    async def put_card(self, card: MemoryCard) -> bool:
        """Write a card over its stored version (0: none stored yet); False if it moved on."""
        ...

    async def study(
        self,
        study: Study,
        *,
        choice: str,
        due_only: bool = False,
        session: PracticeSession | None = None,
    ) -> tuple[MemoryCard, bool]:
        """Review a card with an answer given outside a round, in one transaction.

        Return the card afterwards and whether this answer reviewed it (with ``due_only``, a
        card that is not due is left alone). With ``session``, the practice session is written
        in the same transaction over the version it carries; PracticeMoved (nothing written)
        if the stored one has moved on.
        """
        ...

    async def practice_session(
        self, platform: str, workspace: str, user: str
    ) -> PracticeSession | None:
        """Return a person's practice session, or None."""
        ...

    async def put_practice(self, session: PracticeSession, expected: int) -> bool:
        """Write a session over the stored version ``expected`` (0: none); False if it moved."""
        ...

    async def drop_practice(
        self, platform: str, workspace: str, user: str
    ) -> PracticeSession | None:
        """Delete a person's practice session; return it as it was (None if there was none)."""
        ...

    async def mastery_sums(
        self,
        platform: str,
        workspace: str,
        topics: Mapping[str, str],
        at: datetime,
        memory: Memory,
        user: str | None = None,
    ) -> list[tuple[str, str, float, int]]:
        """Return (user, topic, summed retrievability, cards) per person and topic, in SQL."""
        ...

    async def last_answer(self, key: CardKey) -> LastAnswer | None:
        """Return the answer the card's latest review came from (None: no review)."""
        ...

    async def rate_last(
        self, key: CardKey, confidence: Confidence, memory: Memory, rating: Grade
    ) -> MemoryCard | None:
        """Re-rate the card's latest review with a confidence given after it; None if none."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
