"""SQL for daily schedules, slot claims and the weekly digest's queries (the ScheduleStore)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.engine.model import Place, ScoreRow
from bot.engine.ports import ClaimKind, Days, RoundResult, Schedule, ScheduleState
from bot.storage._schema import answers, rounds, schedules, slot_claims


def _where_place(table: sa.Table, place: Place) -> sa.ColumnElement[bool]:
    return sa.and_(
        table.c.platform == place.platform,
        table.c.workspace == place.workspace,
        table.c.channel == place.channel,
    )


def _schedule(row: Any) -> Schedule:
    return Schedule(
        place=Place(row.platform, row.workspace, row.channel),
        hour=row.hour,
        minute=row.minute,
        zone=row.zone,
        days=Days(row.days),
        tag=row.tag,
        digest_weekday=row.digest_weekday,
        close_minutes=row.close_minutes,
        since=row.since,
        set_by=row.set_by,
    )


class ScheduleSql:
    """The ScheduleStore protocol, mixed into SqlStore (which supplies the transactions)."""

    if TYPE_CHECKING:

        def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def _insert(self, table: sa.Table) -> Any: ...

        async def _upsert_for_place(
            self, table: sa.Table, place: Place, values: dict[str, Any]
        ) -> None: ...

    async def put_schedule(self, schedule: Schedule) -> None:
        """Store the channel's schedule, replacing any earlier one."""
        if schedule.since is None:
            raise ValueError("a stored schedule needs its start time")
        place = schedule.place
        values = dict(
            hour=schedule.hour,
            minute=schedule.minute,
            zone=schedule.zone,
            days=schedule.days.value,
            tag=schedule.tag,
            digest_weekday=schedule.digest_weekday,
            close_minutes=schedule.close_minutes,
            since=schedule.since,
            set_by=schedule.set_by,
        )
        await self._upsert_for_place(schedules, place, values)

    async def get_schedule(self, place: Place) -> Schedule | None:
        """Return the channel's schedule, or None."""
        query = schedules.select().where(_where_place(schedules, place))
        async with self.read() as conn:
            row = (await conn.execute(query)).first()
        return _schedule(row) if row is not None else None

    async def delete_schedule(self, place: Place) -> bool:
        """Remove the channel's schedule; return whether there was one."""
        async with self.write() as conn:
            result = await conn.execute(schedules.delete().where(_where_place(schedules, place)))
        return bool(result.rowcount)

    async def delete_schedules(self, platform: str, workspace: str) -> int:
        """Remove every schedule of a workspace (the bot left it); return how many there were."""
        where = sa.and_(schedules.c.platform == platform, schedules.c.workspace == workspace)
        async with self.write() as conn:
            result = await conn.execute(schedules.delete().where(where))
        return int(result.rowcount or 0)

    async def schedule_states(self, platform: str) -> list[ScheduleState]:
        """Return every schedule of a platform with its latest claimed slots."""

        def latest(kind: ClaimKind) -> Any:
            return sa.func.max(sa.case((slot_claims.c.kind == kind.value, slot_claims.c.slot)))

        # One pass over the claims, grouped per schedule, found through the claims' primary key.
        query = (
            sa.select(
                *schedules.c,
                latest(ClaimKind.POST).label("last_post"),
                latest(ClaimKind.DIGEST).label("last_digest"),
            )
            .select_from(
                schedules.outerjoin(
                    slot_claims,
                    sa.and_(
                        slot_claims.c.platform == schedules.c.platform,
                        slot_claims.c.workspace == schedules.c.workspace,
                        slot_claims.c.channel == schedules.c.channel,
                    ),
                )
            )
            .where(schedules.c.platform == platform)
            .group_by(*schedules.c)
            .order_by(schedules.c.workspace, schedules.c.channel)
        )
        async with self.read() as conn:
            return [
                ScheduleState(_schedule(row), row.last_post, row.last_digest)
                for row in await conn.execute(query)
            ]

    async def last_claim(self, place: Place, kind: ClaimKind) -> str | None:
        """Return the latest slot key claimed in a channel for this kind, or None."""
        query = sa.select(sa.func.max(slot_claims.c.slot)).where(
            _where_place(slot_claims, place), slot_claims.c.kind == kind.value
        )
        async with self.read() as conn:
            value = (await conn.execute(query)).scalar()
        return str(value) if value is not None else None

    async def claim_slot(
        self,
        place: Place,
        kind: ClaimKind,
        key: str,
        *,
        slot_at: datetime,
        claimant: str,
        at: datetime,
    ) -> bool:
        """Claim a slot once per (channel, kind, key); True for the claimant that holds it.

        The claimant's own earlier claim counts as held, so a claim whose commit was not heard
        of (a lost connection) can be tried again safely by the same process.
        """
        stmt = (
            self._insert(slot_claims)
            .values(
                platform=place.platform,
                workspace=place.workspace,
                channel=place.channel,
                kind=kind.value,
                slot=key,
                slot_at=slot_at,
                claimant=claimant,
                claimed_at=at,
            )
            .on_conflict_do_nothing(
                index_elements=["platform", "workspace", "channel", "kind", "slot"]
            )
        )
        async with self.write() as conn:
            if (await conn.execute(stmt)).rowcount == 1:
                return True
            holder = (
                await conn.execute(
                    sa.select(slot_claims.c.claimant).where(
                        _where_place(slot_claims, place),
                        slot_claims.c.kind == kind.value,
                        slot_claims.c.slot == key,
                    )
                )
            ).scalar()
        return holder == claimant

    async def settle_claim(
        self, place: Place, kind: ClaimKind, key: str, *, outcome: str, round_id: int | None
    ) -> None:
        """Record what became of a claimed slot (posted, late, skipped, failed)."""
        stmt = (
            slot_claims.update()
            .where(
                _where_place(slot_claims, place),
                slot_claims.c.kind == kind.value,
                slot_claims.c.slot == key,
            )
            .values(outcome=outcome, round_id=round_id)
        )
        async with self.write() as conn:
            await conn.execute(stmt)

    async def channel_scores(
        self, place: Place, since: datetime, until: datetime
    ) -> list[ScoreRow]:
        """Return per-user totals of the answers given in a channel between two times."""
        query = (
            sa.select(
                answers.c.user_id,
                sa.func.sum(answers.c.points),
                sa.func.count(),
                sa.func.sum(sa.case((answers.c.correct, 1), else_=0)),
                sa.func.sum(answers.c.elapsed_ms),
            )
            .where(
                _where_place(answers, place),
                answers.c.answered_at >= since,
                answers.c.answered_at < until,
            )
            .group_by(answers.c.user_id)
        )
        async with self.read() as conn:
            return [
                ScoreRow(u, int(p or 0), int(n), int(c or 0), int(ms or 0))
                for u, p, n, c, ms in await conn.execute(query)
            ]

    async def channel_rounds(
        self, place: Place, since: datetime, until: datetime
    ) -> list[RoundResult]:
        """Return the rounds opened in a channel between two times, with their answer counts."""
        query = (
            sa.select(
                rounds.c.id,
                rounds.c.question_id,
                rounds.c.opened_at,
                sa.func.count(answers.c.id),
                sa.func.sum(sa.case((answers.c.correct, 1), else_=0)),
            )
            .select_from(rounds.outerjoin(answers, answers.c.round_id == rounds.c.id))
            .where(
                _where_place(rounds, place),
                rounds.c.opened_at >= since,
                rounds.c.opened_at < until,
            )
            .group_by(rounds.c.id, rounds.c.question_id, rounds.c.opened_at)
            .order_by(rounds.c.opened_at, rounds.c.id)
        )
        async with self.read() as conn:
            return [
                RoundResult(int(rid), qid, opened, int(n or 0), int(c or 0))
                for rid, qid, opened, n, c in await conn.execute(query)
            ]
