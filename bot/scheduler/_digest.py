"""The weekly digest of a channel: its leaderboard and its hardest question of the week."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot import messages as M
from bot.engine.engine import rank_rows
from bot.engine.model import LeaderboardEntry, Place, Question, ScoreRow
from bot.scheduler.port import RoundResult
from bot.text import Mention, Text, Verbatim, join, say

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


def digest_text(digest: Digest) -> Text:
    """Render the digest: the week's rounds, its leaderboard, its hardest question."""
    zone = ZoneInfo(digest.zone)
    first = _day(digest.since.astimezone(zone))
    last = _day((digest.until - timedelta(seconds=1)).astimezone(zone))
    n = digest.rounds
    head = say(M.DIGEST_HEAD_ONE if n == 1 else M.DIGEST_HEAD_MANY, first=first, last=last, n=n)
    parts: list[Text] = [head, Text(("",)), say(M.DIGEST_LEADERBOARD)]
    for e in digest.leaders:
        line = M.DIGEST_LINE_ONE if e.points == 1 else M.DIGEST_LINE_MANY
        parts.append(
            say(
                line,
                rank=e.rank,
                user=Mention(e.user),
                points=e.points,
                correct=e.correct,
                answered=e.answered,
            )
        )
    if digest.hardest is not None:
        h = digest.hardest
        answer = h.question.answer_choice
        parts += [
            Text(("",)),
            say(
                M.DIGEST_HARDEST,
                percent=h.percent_correct,
                correct=h.correct,
                answered=h.answered,
                question=Verbatim(_preview(h.question.text)),
            ),
            say(M.DIGEST_ANSWER, key=answer.key, text=Verbatim(answer.text)),
        ]
    return join(parts)
