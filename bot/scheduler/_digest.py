"""The weekly digest of a channel: its leaderboard and its hardest question of the week."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot.engine.engine import rank_rows
from bot.engine.model import LeaderboardEntry, Place, Question, ScoreRow
from bot.engine.ports import RoundResult

DIGEST_LEADERS = 5
QUESTION_PREVIEW = 160
WEEK = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class HardestQuestion:
    """The question of the week the fewest got right."""

    question: Question
    answered: int
    correct: int

    @property
    def percent_correct(self) -> float:
        """Return the share of right answers, 0 to 100."""
        return 100.0 * self.correct / self.answered if self.answered else 0.0


@dataclass(frozen=True, slots=True)
class Digest:
    """A week of one channel: rounds asked, the top scorers, the hardest question."""

    place: Place
    since: datetime
    until: datetime
    zone: str
    rounds: int
    leaders: tuple[LeaderboardEntry, ...]
    hardest: HardestQuestion | None


def hardest_round(results: Sequence[RoundResult]) -> RoundResult | None:
    """Return the answered round with the lowest share right (more answers, then earlier, first)."""
    answered = [r for r in results if r.answered]
    if not answered:
        return None
    return min(
        answered, key=lambda r: (r.correct / r.answered, -r.answered, r.opened_at, r.round_id)
    )


def build_digest(
    place: Place,
    until: datetime,
    zone: str,
    scores: Sequence[ScoreRow],
    results: Sequence[RoundResult],
    question: Callable[[str], Question | None],
) -> Digest | None:
    """Assemble the digest of the week before ``until``; None when nobody answered."""
    if not scores:
        return None
    hard = hardest_round(results)
    found = question(hard.question_id) if hard is not None else None
    return Digest(
        place=place,
        since=until - WEEK,
        until=until,
        zone=zone,
        rounds=len(results),
        leaders=tuple(rank_rows(scores)[:DIGEST_LEADERS]),
        hardest=(
            HardestQuestion(found, hard.answered, hard.correct)
            if hard is not None and found is not None
            else None
        ),
    )


def _day(moment: datetime) -> str:
    return f"{moment:%a} {moment.day} {moment:%b}"


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= QUESTION_PREVIEW else flat[: QUESTION_PREVIEW - 1].rstrip() + "…"


def digest_text(digest: Digest) -> str:
    """Render the digest as plain text; ``<@id>`` mentions read the same on Slack and Discord."""
    zone = ZoneInfo(digest.zone)
    first = _day(digest.since.astimezone(zone))
    last = _day((digest.until - timedelta(seconds=1)).astimezone(zone))
    asked = f"{digest.rounds} question{'s' if digest.rounds != 1 else ''}"
    lines = [f"Weekly digest, {first} to {last}: {asked} in this channel.", "", "Leaderboard"]
    for e in digest.leaders:
        lines.append(
            f"{e.rank}. <@{e.user}>: {e.points} point{'s' if e.points != 1 else ''} "
            f"({e.correct} of {e.answered} right)"
        )
    if digest.hardest is not None:
        h = digest.hardest
        answer = h.question.answer_choice
        lines += [
            "",
            f"Hardest question of the week ({h.percent_correct:.0f}% right, "
            f"{h.correct} of {h.answered}): {_preview(h.question.text)}",
            f"Answer: {answer.key}) {answer.text}",
        ]
    return "\n".join(lines)
