"""Learning tracks: an ordered path of units run in a channel, one unit per scheduled day.

A track is authored as a YAML file (``questions/tracks/NAME.yaml``, read by ``bot.bank.tracks``):
a title and ordered units, each a list of questions (by id, or every question of a tag) with an
optional short intro. ``/quiz track start NAME`` runs it in a channel on the channel's daily
schedule: each scheduled post opens the next unit, and the post after the last unit's day says
how the channel did.

A unit is done for a person when each of its questions' cards was last answered right at or
after the card was due (a question never answered before is due at once). The first time that is
seen, the unit is recorded as done for that person, at the time of the answer that completed it,
so a later miss (which sends the card back into review) does not undo it. docs/learning.md has
the rule and its reasons.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol, runtime_checkable

from bot import messages as M
from bot.engine.model import Place
from bot.errors import UserError
from bot.text import Code, Verbatim, echo, join, say

# The FSRS rating of a wrong answer (learning.Grade.AGAIN); a right one is rated higher.
_AGAIN = 1


@dataclass(frozen=True, slots=True)
class Unit:
    """One day of a track: its questions, in order, and what the day's post says first."""

    questions: tuple[str, ...]
    intro: str = ""
    title: str = ""
    tag: str | None = None  # the tag the questions were drawn from, if the file named one


@dataclass(frozen=True, slots=True)
class Track:
    """A named, ordered path of units; ``name`` is the file's name without ``.yaml``."""

    name: str
    title: str
    units: tuple[Unit, ...]
    summary: str = ""
    source: str = ""

    @property
    def questions(self) -> tuple[str, ...]:
        """Return every question of the track, in unit order."""
        return tuple(q for unit in self.units for q in unit.questions)


@dataclass(frozen=True, slots=True)
class TrackRun:
    """A track running in a channel: how many units its days have opened, and whether it ended."""

    place: Place
    track: str
    started_at: datetime
    started_by: str
    id: int = 0  # the store's id (0: not stored yet)
    opened: int = 0  # units opened so far (the current unit is ``opened - 1``)
    last_slot: str | None = None  # the schedule slot that opened the latest unit
    finished_at: datetime | None = None

    @property
    def finished(self) -> bool:
        """Return whether the track has posted its summary."""
        return self.finished_at is not None


@dataclass(frozen=True, slots=True)
class CardMark:
    """What a card says about a track question: whether its latest answer counts for a unit."""

    user: str
    question_id: str
    at: datetime  # the latest answer
    counts: bool  # right, and given at or after the card was due
    due_at: datetime  # when the card is due next


@dataclass(frozen=True, slots=True)
class UnitDone:
    """A unit one person completed, and when."""

    user: str
    unit: int
    at: datetime


@dataclass(frozen=True, slots=True)
class TrackProgress:
    """A channel's track as someone asks about it: the run, and who has done which unit."""

    track: Track
    run: TrackRun
    done: Mapping[int, frozenset[str]]  # unit index -> the people who completed it
    mine: frozenset[int]  # the units the asker completed
    next_question: str | None  # the asker's first question of the opened units to answer now
    waiting_until: datetime | None = None  # else, when the asker's next card falls due

    @property
    def current(self) -> int | None:
        """Return the index of the unit the channel is on, or None before the first day."""
        return self.run.opened - 1 if self.run.opened else None

    @property
    def people(self) -> int:
        """Return how many people have completed at least one unit."""
        return len(frozenset().union(*self.done.values())) if self.done else 0


@dataclass(frozen=True, slots=True)
class TrackSummary:
    """The end of a track in a channel: how many people completed how much of it."""

    track: Track
    units: int
    finishers: tuple[str, ...]  # people who completed every unit, in the order they finished
    per_unit: tuple[int, ...]  # how many people completed each unit
    people: int  # how many completed at least one unit


def counts(rating: int | None, answered: datetime | None, due_before: datetime | None) -> bool:
    """Return whether a card's latest answer completes its question for a unit.

    ``rating`` is the answer's FSRS rating, ``answered`` when it was given and ``due_before``
    when the card was due at that answer (None: the question's first answer, due at once).
    """
    if rating is None or answered is None or rating <= _AGAIN:
        return False
    return due_before is None or answered >= due_before


def completed(
    track: Track, opened: int, marks: Iterable[CardMark], known: Mapping[tuple[str, int], datetime]
) -> list[UnitDone]:
    """Return the units, among the first ``opened``, that people newly completed.

    ``known`` holds the (person, unit) pairs already recorded; each new completion is dated by
    the latest of its questions' answers.
    """
    latest: dict[tuple[str, str], CardMark] = {}
    for mark in marks:
        latest[(mark.user, mark.question_id)] = mark
    people = sorted({user for user, _ in latest})
    out = []
    for index, unit in enumerate(track.units[:opened]):
        for user in people:
            if (user, index) in known:
                continue
            got = [latest.get((user, q)) for q in unit.questions]
            if unit.questions and all(m is not None and m.counts for m in got):
                out.append(UnitDone(user, index, max(m.at for m in got if m is not None)))
    return out


def next_question(
    track: Track, opened: int, mine: Mapping[str, CardMark], done: Iterable[int], now: datetime
) -> tuple[str | None, datetime | None]:
    """Return the person's next question of the opened units not yet completed: the first
    whose card does not count yet and is due (or was never answered). When every such card is
    waiting for its due date, return None and the soonest date."""
    finished = set(done)
    soonest: datetime | None = None
    for index, unit in enumerate(track.units[:opened]):
        if index in finished:
            continue
        for q in unit.questions:
            mark = mine.get(q)
            if mark is None or (not mark.counts and mark.due_at <= now):
                return q, None
            if not mark.counts:
                soonest = mark.due_at if soonest is None else min(soonest, mark.due_at)
    return None, soonest


def summarise(track: Track, done: Sequence[UnitDone]) -> TrackSummary:
    """Return how a channel did over a whole track."""
    per_unit = [0] * len(track.units)
    by_person: dict[str, list[UnitDone]] = {}
    for d in done:
        if 0 <= d.unit < len(per_unit):
            per_unit[d.unit] += 1
            by_person.setdefault(d.user, []).append(d)
    whole = len(track.units)
    finishers = sorted(
        (u for u, ds in by_person.items() if len({d.unit for d in ds}) == whole),
        key=lambda u: (max(d.at for d in by_person[u]), u),
    )
    return TrackSummary(track, whole, tuple(finishers), tuple(per_unit), len(by_person))


@runtime_checkable
class TrackStore(Protocol):
    """Tracks running in channels and the units people completed; each method one transaction."""

    async def start_track(self, run: TrackRun) -> TrackRun | None:
        """Start a track in a channel and return it stored; None when one is already running
        there."""
        ...

    async def stop_track(self, place: Place, at: datetime) -> TrackRun | None:
        """End the channel's running track early; return it, or None when none was running."""
        ...

    async def track_run(self, place: Place) -> TrackRun | None:
        """Return the channel's latest track run (running or finished), or None."""
        ...

    async def open_unit(self, run: TrackRun, slot: str) -> bool:
        """Record that the slot ``slot`` opened the run's next unit; False if the run has moved
        on since it was read (another replica, or a retried slot)."""
        ...

    async def finish_track(self, run: TrackRun, at: datetime) -> bool:
        """Mark the channel's track finished; False if it already was (its summary is posted
        once)."""
        ...

    async def track_marks(
        self,
        place: Place,
        since: datetime,
        question_ids: Sequence[str],
        also: str | None,
        *,
        everyone: bool = True,
    ) -> list[CardMark]:
        """Return the card marks of these questions for the people who answered in the channel
        since ``since`` and for ``also`` (only for ``also`` when not ``everyone``)."""
        ...

    async def units_done(self, run_id: int) -> list[UnitDone]:
        """Return the recorded unit completions of a run."""
        ...

    async def record_units(self, run_id: int, done: Sequence[UnitDone]) -> None:
        """Record unit completions (each person and unit once, whatever repeats)."""
        ...

    async def user_tracks(self, platform: str, workspace: str, user: str) -> list[TrackRun]:
        """Return the running tracks of a workspace where the person answered a round since it
        started."""
        ...


@dataclass(frozen=True, slots=True)
class TrackDay:
    """What a scheduled post does for a channel's track: open a unit, or end the track."""

    track: Track
    run: TrackRun
    unit: int | None  # the unit opened (None: the track ended and ``summary`` is set)
    question_id: str | None = None  # the unit's question the day's round asks
    summary: TrackSummary | None = None


@dataclass(frozen=True, slots=True)
class MyTrack:
    """A person's place in a track running in a channel (their page shows it)."""

    track: Track
    run: TrackRun
    done: int  # units the person completed
    opened: int  # units opened so far in the channel


class TrackBook:
    """The learning tracks of the bank and the runs in channels, on a store that keeps them."""

    def __init__(
        self,
        tracks: Mapping[str, Track],
        store: object,
        clock: Callable[[], datetime],
    ) -> None:
        self.tracks = dict(sorted(tracks.items()))
        self._store = store if isinstance(store, TrackStore) else None
        self.clock = clock

    @property
    def store(self) -> TrackStore:
        """Return the store that keeps runs (UserError when the configured one keeps none)."""
        if self._store is None:
            raise UserError(say(M.TRACKS_NOT_KEPT))
        return self._store

    def get(self, name: str) -> Track:
        """Return the track of this name; UserError naming the nearest when there is none."""
        track = self.tracks.get(name.strip().lower())
        if track is not None:
            return track
        if not self.tracks:
            raise UserError(say(M.TRACK_NONE_SHIPPED))
        near = difflib.get_close_matches(name.lower(), list(self.tracks), n=1)
        names = join([Code(n) for n in self.tracks], ", ")
        if near:
            raise UserError(say(M.TRACK_UNKNOWN_NEAR, name=echo(name), near=Code(near[0])))
        raise UserError(say(M.TRACK_UNKNOWN, name=echo(name), names=names))

    async def start(self, place: Place, name: str, user: str) -> tuple[Track, TrackRun]:
        """Start a track in a channel (UserError if unknown, or if one is already running)."""
        track = self.get(name)
        run = TrackRun(place, track.name, self.clock(), user)
        stored = await self.store.start_track(run)
        if stored is None:
            running = await self.store.track_run(place)
            named = self.tracks.get(running.track) if running is not None else None
            # A run whose file is gone is named by its name.
            title = named.title if named is not None else running.track if running else name
            raise UserError(
                say(M.TRACK_ALREADY_RUNNING, title=Verbatim(title), stop=Code("/quiz track stop"))
            )
        return track, stored

    async def stop(self, place: Place) -> TrackRun | None:
        """End the channel's running track early; None when none was running."""
        return await self.store.stop_track(place, self.clock())

    async def progress(self, place: Place, user: str) -> TrackProgress | None:
        """Return the channel's latest track, who completed which unit, and the asker's place
        (None when no track ever ran here, or its file is gone)."""
        run = await self.store.track_run(place)
        if run is None or run.track not in self.tracks:
            return None
        track = self.tracks[run.track]
        # Everyone's completions are brought up to date at each of the track's days; here only
        # the asker's, so that the command reads one person's cards, not the whole channel's.
        done, marks = await self._refresh(track, run, also=user, everyone=False)
        per_unit: dict[int, set[str]] = {}
        for d in done:
            per_unit.setdefault(d.unit, set()).add(d.user)
        mine = frozenset(d.unit for d in done if d.user == user)
        cards = {m.question_id: m for m in marks if m.user == user}
        ask, waiting = next_question(track, run.opened, cards, mine, self.clock())
        return TrackProgress(
            track,
            run,
            {u: frozenset(people) for u, people in per_unit.items()},
            mine,
            None if run.finished else ask,
            None if run.finished else waiting,
        )

    async def mine(self, platform: str, workspace: str, user: str) -> list[MyTrack]:
        """Return the person's place in each running track they take part in."""
        if self._store is None:
            return []
        out = []
        for run in await self.store.user_tracks(platform, workspace, user):
            track = self.tracks.get(run.track)
            if track is None:
                continue
            # A person's own page reads only their own cards.
            done, _ = await self._refresh(track, run, also=user, everyone=False)
            units = {d.unit for d in done if d.user == user}
            out.append(MyTrack(track, run, len(units), run.opened))
        return out

    async def day(
        self, place: Place, slot: str, asked: Callable[[], Awaitable[Mapping[str, int]]]
    ) -> TrackDay | None:
        """Return what the scheduled post of ``slot`` does for the channel's track, and record
        it: open the next unit, or, after the last unit's day, end the track. None when no
        track runs here. A slot tried again opens the same unit again."""
        if self._store is None:
            return None
        run = await self.store.track_run(place)
        if run is None or run.finished or run.track not in self.tracks:
            return None
        track = self.tracks[run.track]
        if run.last_slot == slot and run.opened:
            index = run.opened - 1
        elif run.opened < len(track.units):
            await self._refresh(track, run, also=None)
            if not await self.store.open_unit(run, slot):
                return None  # another replica moved the run on: it posts the day
            index = run.opened
            run = replace(run, opened=run.opened + 1, last_slot=slot)
        else:
            done, _ = await self._refresh(track, run, also=None)
            if not await self.store.finish_track(run, self.clock()):
                return None
            return TrackDay(track, run, None, summary=summarise(track, done))
        unit = track.units[index]
        asked_counts = await asked()
        fewest = min(asked_counts.get(q, 0) for q in unit.questions)
        question = next(q for q in unit.questions if asked_counts.get(q, 0) == fewest)
        return TrackDay(track, run, index, question_id=question)

    async def _refresh(
        self, track: Track, run: TrackRun, *, also: str | None, everyone: bool = True
    ) -> tuple[list[UnitDone], list[CardMark]]:
        """Record the units newly completed in a run; return all completions and the marks."""
        opened_questions = [q for unit in track.units[: run.opened] for q in unit.questions]
        marks = await self.store.track_marks(
            run.place, run.started_at, opened_questions, also, everyone=everyone
        )
        known_list = await self.store.units_done(run.id)
        known = {(d.user, d.unit): d.at for d in known_list}
        new = completed(track, run.opened, marks, known)
        if new:
            await self.store.record_units(run.id, new)
        return [*known_list, *new], marks
