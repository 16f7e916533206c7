"""The scheduler's ports: the Publisher adapters offer, and the schedules that storage keeps."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol, runtime_checkable

from bot.engine.model import Place, QuestionCard, Reveal, ScoreRow
from bot.text import Text


class Publisher(Protocol):
    """What a chat adapter offers to post without a user's command."""

    @property
    def platform(self) -> str:
        """Return the platform name rounds are stored under (``slack``, ``discord``)."""
        ...

    async def post_card(self, card: QuestionCard) -> str:
        """Post the question card and return the message reference to store."""
        ...

    async def find_card(self, card: QuestionCard) -> str | None:
        """Return the reference of the round's card if an earlier try already posted it.

        None when it is not in the channel or the platform cannot be asked; ``post_card`` of
        the same round is then made (on a platform that deduplicates, it returns the card an
        earlier try made).
        """
        ...

    async def publish_reveal(self, reveal: Reveal) -> None:
        """Show the answer on the card and the full explanation in its thread."""
        ...

    async def message_user(self, place: Place, user: str, text: Text) -> None:
        """Tell one person something privately, in or about ``place``."""
        ...

    async def post_text(self, place: Place, text: Text) -> None:
        """Post a message in a channel (the platform renders its spans)."""
        ...


# ------------------------------------------------------------------ daily schedules
# The values sit in this module, below the storage layer that keeps them; the rest of
# bot.scheduler interprets them.


class Days(StrEnum):
    """Which days a schedule posts on, in its own time zone."""

    DAILY = "daily"
    WEEKDAYS = "weekdays"


class ClaimKind(StrEnum):
    """What a claimed slot is for."""

    POST = "post"
    DIGEST = "digest"


@dataclass(frozen=True, slots=True)
class Schedule:
    """A channel's daily question: a local time in an IANA zone, and options."""

    place: Place
    hour: int
    minute: int
    zone: str
    days: Days = Days.DAILY
    tag: str | None = None
    digest_weekday: int | None = None  # 0 is Monday, as in datetime.weekday()
    close_minutes: int | None = None
    since: datetime | None = None  # slots before this never post (set when stored)
    set_by: str = ""


@dataclass(frozen=True, slots=True)
class ScheduleState:
    """A schedule with the latest slots claimed for it (keys are local dates, YYYY-MM-DD)."""

    schedule: Schedule
    last_post: str | None
    last_digest: str | None


@dataclass(frozen=True, slots=True)
class RoundResult:
    """How many answered one round, and how many of them right."""

    round_id: int
    question_id: str
    opened_at: datetime
    answered: int
    correct: int


@runtime_checkable
class ScheduleStore(Protocol):
    """Durable schedules and slot claims; every method is one transaction."""

    async def put_schedule(self, schedule: Schedule) -> None:
        """Store the channel's schedule, replacing any earlier one."""
        ...

    async def get_schedule(self, place: Place) -> Schedule | None:
        """Return the channel's schedule, or None."""
        ...

    async def delete_schedule(self, place: Place) -> bool:
        """Remove the channel's schedule; return whether there was one."""
        ...

    async def delete_schedules(self, platform: str, workspace: str) -> int:
        """Remove every schedule of a workspace (the bot left it); return how many there were."""
        ...

    async def schedule_states(self, platform: str) -> list[ScheduleState]:
        """Return every schedule of a platform with its latest claimed slots."""
        ...

    async def last_claim(self, place: Place, kind: ClaimKind) -> str | None:
        """Return the latest slot key claimed in a channel for this kind, or None."""
        ...

    async def claim_slot(
        self,
        place: Place,
        kind: ClaimKind,
        key: str,
        *,
        slot_at: datetime,
        claimant: str,
        at: datetime,
        stale_before: datetime | None = None,
    ) -> bool:
        """Claim a slot once per (channel, kind, key); True for the claimant that holds it.

        With ``stale_before``, an unsettled claim another claimant made before then is taken over.
        """
        ...

    async def claim_due(
        self,
        platform: str,
        *,
        now: datetime,
        claimant: str,
        limit: int,
        lease: timedelta,
    ) -> list[ScheduleState]:
        """Lease up to ``limit`` due schedules nobody holds, in serving order, with their claims."""
        ...

    async def release_schedule(self, place: Place, *, claimant: str, due_at: datetime) -> bool:
        """Give back a leased schedule, due next at ``due_at``; False if the lease was lost."""
        ...

    async def renew_leases(
        self, platform: str, places: list[Place], *, claimant: str, until: datetime
    ) -> int:
        """Extend this claimant's leases on these schedules; return how many it still holds."""
        ...

    async def settle_claim(
        self, place: Place, kind: ClaimKind, key: str, *, outcome: str, round_id: int | None
    ) -> None:
        """Record what became of a claimed slot (posted, late, skipped, failed)."""
        ...

    async def channel_scores(
        self, place: Place, since: datetime, until: datetime
    ) -> list[ScoreRow]:
        """Return per-user totals of the answers given in a channel between two times."""
        ...

    async def channel_rounds(
        self, place: Place, since: datetime, until: datetime
    ) -> list[RoundResult]:
        """Return the rounds opened in a channel between two times, with their answer counts."""
        ...
