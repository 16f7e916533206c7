"""What the dashboard shows about a workspace's play: daily activity, streaks, a player's history.

Plain values the store returns and the pure helpers that shape them for a page.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta


@dataclass(frozen=True, slots=True)
class DayActivity:
    """Answers given on one UTC day, by how many players, how many right."""

    day: date
    answers: int
    players: int
    correct: int


@dataclass(frozen=True, slots=True)
class StreakRow:
    """A player's current and best streak of scheduled rounds answered right in one channel."""

    channel: str
    user: str
    current: int
    best: int


@dataclass(frozen=True, slots=True)
class PlayerStreak:
    """A player's streaks across a workspace: the longest current and best of any channel."""

    user: str
    current: int
    best: int


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One answer of a player, with the round it answered."""

    round_id: int
    channel: str
    question_id: str
    opened_at: datetime
    choice: str
    correct: bool
    points: int
    elapsed_ms: int


def daily_series(rows: Iterable[DayActivity], first: date, last: date) -> list[DayActivity]:
    """Return one entry per day from ``first`` to ``last``, days without answers as zeros."""
    by_day = {r.day: r for r in rows}
    out = []
    day = first
    while day <= last:
        out.append(by_day.get(day, DayActivity(day, 0, 0, 0)))
        day += timedelta(days=1)
    return out


def player_streaks(rows: Iterable[StreakRow]) -> dict[str, PlayerStreak]:
    """Return each player's best channel figures (streaks never add up across channels)."""
    out: dict[str, PlayerStreak] = {}
    for r in rows:
        seen = out.get(r.user)
        current = max(r.current, seen.current if seen else 0)
        best = max(r.best, seen.best if seen else 0)
        out[r.user] = PlayerStreak(r.user, current, best)
    return out


def streak_leaders(streaks: Sequence[PlayerStreak], count: int = 10) -> list[PlayerStreak]:
    """Return the players with the longest current streaks (ties: best streak, then id)."""
    live = [s for s in streaks if s.current > 0]
    live.sort(key=lambda s: (-s.current, -s.best, s.user))
    return live[:count]
