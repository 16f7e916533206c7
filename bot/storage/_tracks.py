"""The learning tracks part of the store: runs in channels and the units people completed."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from bot.engine.model import Place
from bot.engine.tracks import CardMark, TrackRun, UnitDone, counts
from bot.storage._hot import in_place, place_params
from bot.storage._schema import UTCDateTime, answers, cards, track_runs, track_units

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection


def _run(row: Any) -> TrackRun:
    return TrackRun(
        place=Place(row.platform, row.workspace, row.channel),
        track=row.track,
        started_at=row.started_at,
        started_by=row.started_by,
        id=int(row.id),
        opened=int(row.opened),
        last_slot=row.last_slot,
        finished_at=row.finished_at,
    )


def _where_place(place: Place) -> tuple[sa.ColumnElement[bool], ...]:
    return (
        track_runs.c.platform == place.platform,
        track_runs.c.workspace == place.workspace,
        track_runs.c.channel == place.channel,
    )


# Every daily post asks whether its channel runs a track.
_LATEST_RUN = (
    track_runs.select().where(in_place(track_runs)).order_by(track_runs.c.id.desc()).limit(1)
)


class TracksSql:
    """The TrackStore protocol (bot.engine.tracks), mixed into SqlStore."""

    if TYPE_CHECKING:
        dialect: str

        async def _hot_rows(
            self, stmt: Any, params: dict[str, Any], *, writes: bool = False
        ) -> list[Any]: ...

        def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def _insert(self, table: sa.Table) -> Any: ...

        def _among(
            self, column: sa.ColumnElement[str], values: Sequence[str]
        ) -> sa.ColumnElement[bool]: ...

    async def start_track(self, run: TrackRun) -> TrackRun | None:
        """Start a track in a channel and return it stored; None when one is running there."""
        values = dict(
            platform=run.place.platform,
            workspace=run.place.workspace,
            channel=run.place.channel,
            track=run.track,
            started_at=run.started_at,
            started_by=run.started_by,
            opened=0,
        )
        try:
            async with self.write() as conn:
                result = await conn.execute(track_runs.insert().values(**values))
                key = result.inserted_primary_key
                assert key is not None
        except IntegrityError:
            return None
        return TrackRun(run.place, run.track, run.started_at, run.started_by, id=int(key[0]))

    async def stop_track(self, place: Place, at: datetime) -> TrackRun | None:
        """End the channel's running track early; return it, or None when none was running."""
        async with self.write() as conn:
            row = (
                await conn.execute(
                    track_runs.select().where(
                        *_where_place(place), track_runs.c.finished_at.is_(None)
                    )
                )
            ).first()
            if row is None:
                return None
            done = await conn.execute(
                track_runs.update()
                .where(track_runs.c.id == row.id, track_runs.c.finished_at.is_(None))
                .values(finished_at=at)
            )
            if done.rowcount != 1:
                return None
        stopped = _run(row)
        return TrackRun(
            stopped.place,
            stopped.track,
            stopped.started_at,
            stopped.started_by,
            id=stopped.id,
            opened=stopped.opened,
            last_slot=stopped.last_slot,
            finished_at=at,
        )

    async def track_run(self, place: Place) -> TrackRun | None:
        """Return the channel's latest track run (running or finished), or None."""
        rows = await self._hot_rows(_LATEST_RUN, place_params(place))
        return _run(rows[0]) if rows else None

    async def open_unit(self, run: TrackRun, slot: str) -> bool:
        """Record that ``slot`` opened the run's next unit; False if the run moved on since."""
        async with self.write() as conn:
            result = await conn.execute(
                track_runs.update()
                .where(
                    track_runs.c.id == run.id,
                    track_runs.c.opened == run.opened,
                    track_runs.c.finished_at.is_(None),
                )
                .values(opened=run.opened + 1, last_slot=slot)
            )
        return bool(result.rowcount == 1)

    async def finish_track(self, run: TrackRun, at: datetime) -> bool:
        """Mark the run finished; False if it already was (its summary is posted once)."""
        async with self.write() as conn:
            result = await conn.execute(
                track_runs.update()
                .where(track_runs.c.id == run.id, track_runs.c.finished_at.is_(None))
                .values(finished_at=at)
            )
        return bool(result.rowcount == 1)

    async def track_marks(
        self,
        place: Place,
        since: datetime,
        question_ids: Sequence[str],
        also: str | None,
        *,
        everyone: bool = True,
    ) -> list[CardMark]:
        """Return the card marks of these questions for the people who answered a round in the
        channel since ``since``, and for ``also`` (only ``also``'s when not ``everyone``)."""
        if not question_ids or (also is None and not everyone):
            return []
        players = sa.select(answers.c.user_id).where(
            answers.c.platform == place.platform,
            answers.c.workspace == place.workspace,
            answers.c.channel == place.channel,
            answers.c.answered_at >= sa.bindparam("since", since, type_=UTCDateTime()),
        )
        who: sa.ColumnElement[bool] = cards.c.user_id.in_(players)
        if also is not None:
            who = sa.or_(who, cards.c.user_id == also) if everyone else cards.c.user_id == also
        query = sa.select(
            cards.c.user_id,
            cards.c.question_id,
            cards.c.rating,
            cards.c.last_review,
            cards.c.p_due_at,
            cards.c.due_at,
        ).where(
            cards.c.platform == place.platform,
            cards.c.workspace == place.workspace,
            self._among(cards.c.question_id, list(question_ids)),
            who,
        )
        async with self.read() as conn:
            rows = (await conn.execute(query)).all()
        return [
            CardMark(
                r.user_id,
                r.question_id,
                r.last_review,
                counts(r.rating, r.last_review, r.p_due_at),
                r.due_at,
            )
            for r in rows
            if r.last_review is not None
        ]

    async def units_done(self, run_id: int) -> list[UnitDone]:
        """Return the recorded unit completions of a run, oldest first."""
        query = (
            sa.select(track_units.c.user_id, track_units.c.unit, track_units.c.done_at)
            .where(track_units.c.run_id == run_id)
            .order_by(track_units.c.done_at, track_units.c.user_id, track_units.c.unit)
        )
        async with self.read() as conn:
            rows = (await conn.execute(query)).all()
        return [UnitDone(r.user_id, int(r.unit), r.done_at) for r in rows]

    async def record_units(self, run_id: int, done: Sequence[UnitDone]) -> None:
        """Record unit completions (each person and unit once, whatever repeats)."""
        if not done:
            return
        stmt = (
            self._insert(track_units)
            .values(
                [
                    {"run_id": run_id, "user_id": d.user, "unit": d.unit, "done_at": d.at}
                    for d in done
                ]
            )
            .on_conflict_do_nothing(index_elements=["run_id", "user_id", "unit"])
        )
        async with self.write() as conn:
            await conn.execute(stmt)

    async def user_tracks(self, platform: str, workspace: str, user: str) -> list[TrackRun]:
        """Return the running tracks of a workspace where the person answered a round since it
        started, or completed a unit."""
        answered = sa.exists().where(
            answers.c.platform == track_runs.c.platform,
            answers.c.workspace == track_runs.c.workspace,
            answers.c.channel == track_runs.c.channel,
            answers.c.user_id == user,
            answers.c.answered_at >= track_runs.c.started_at,
        )
        completed = sa.exists().where(
            track_units.c.run_id == track_runs.c.id, track_units.c.user_id == user
        )
        query = (
            track_runs.select()
            .where(
                track_runs.c.platform == platform,
                track_runs.c.workspace == workspace,
                track_runs.c.finished_at.is_(None),
                sa.or_(answered, completed),
            )
            .order_by(track_runs.c.id)
        )
        async with self.read() as conn:
            return [_run(row) for row in await conn.execute(query)]
