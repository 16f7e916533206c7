"""SQL for daily schedules, slot claims and the weekly digest's queries (the ScheduleStore)."""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.engine.model import Place, ScoreRow
from bot.scheduler.port import ClaimKind, Days, RoundResult, Schedule, ScheduleState
from bot.storage._hot import in_place, param, place_params
from bot.storage._schema import answers, rounds, schedules, slot_claims

log = logging.getLogger(__name__)

_KEY = (schedules.c.platform, schedules.c.workspace, schedules.c.channel)


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


def _first_claim(insert: Any) -> Any:
    """The claim of a slot nobody has claimed yet, in a dialect's upsert."""
    return (
        insert(slot_claims)
        .values(
            platform=sa.bindparam("p_platform"),
            workspace=sa.bindparam("p_workspace"),
            channel=sa.bindparam("p_channel"),
            kind=param("s_kind", slot_claims.c.kind),
            slot=param("s_slot", slot_claims.c.slot),
            slot_at=param("s_slot_at", slot_claims.c.slot_at),
            claimant=param("s_claimant", slot_claims.c.claimant),
            claimed_at=param("s_at", slot_claims.c.claimed_at),
        )
        .on_conflict_do_nothing(index_elements=["platform", "workspace", "channel", "kind", "slot"])
    )


# What every post runs: its claim (a slot's first), settled, its schedule given back.
_FIRST_CLAIM = {
    "postgresql": _first_claim(postgresql.insert),
    "sqlite": _first_claim(sqlite.insert),
}
_SETTLE_CLAIM = (
    slot_claims.update()
    .where(
        in_place(slot_claims),
        slot_claims.c.kind == param("s_kind", slot_claims.c.kind),
        slot_claims.c.slot == param("s_slot", slot_claims.c.slot),
    )
    .values(
        outcome=param("s_outcome", slot_claims.c.outcome),
        round_id=param("s_round", slot_claims.c.round_id),
    )
)
_RELEASE_SCHEDULE = (
    schedules.update()
    .where(
        in_place(schedules), schedules.c.lease_owner == param("s_owner", schedules.c.lease_owner)
    )
    .values(due_at=param("s_due", schedules.c.due_at), lease_owner=None, lease_until=None)
)


class ScheduleSql:
    """The ScheduleStore protocol, mixed into SqlStore (which supplies the transactions)."""

    if TYPE_CHECKING:
        dialect: str

        async def _hot_write(self, stmt: Any, params: dict[str, Any]) -> int: ...

        def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def _insert(self, table: sa.Table) -> Any: ...

        async def _upsert_for_place(
            self, table: sa.Table, place: Place, values: dict[str, Any]
        ) -> None: ...

    async def put_schedule(self, schedule: Schedule) -> None:
        """Store the channel's schedule, replacing any earlier one; it is due at once."""
        if schedule.since is None:
            raise ValueError("a stored schedule needs its start time")
        place = schedule.place
        values: dict[str, Any] = dict(
            hour=schedule.hour,
            minute=schedule.minute,
            zone=schedule.zone,
            days=schedule.days.value,
            tag=schedule.tag,
            digest_weekday=schedule.digest_weekday,
            close_minutes=schedule.close_minutes,
            since=schedule.since,
            set_by=schedule.set_by,
            # The next tick works out the new times; a replica working on the old schedule
            # loses its lease, so what it writes back cannot overwrite this.
            due_at=schedule.since,
            lease_owner=None,
            lease_until=None,
        )
        # A new channel takes the next turn in its workspace; a replaced schedule keeps its own.
        turn = (
            sa.select(sa.func.count())
            .select_from(schedules)
            .where(
                schedules.c.platform == place.platform,
                schedules.c.workspace == place.workspace,
            )
            .scalar_subquery()
        )
        stmt = (
            self._insert(schedules)
            .values(
                platform=place.platform,
                workspace=place.workspace,
                channel=place.channel,
                turn=turn,
                **values,
            )
            .on_conflict_do_update(index_elements=["platform", "workspace", "channel"], set_=values)
        )
        async with self.write() as conn:
            await conn.execute(stmt)

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

    async def claim_due(
        self,
        platform: str,
        *,
        now: datetime,
        claimant: str,
        limit: int,
        lease: timedelta,
    ) -> list[ScheduleState]:
        """Lease up to ``limit`` due schedules nobody holds, in serving order, with their claims.

        Due means ``due_at <= now``; a lease that ran out (its replica died) is free again. On
        PostgreSQL the rows are picked ``FOR UPDATE SKIP LOCKED``, so replicas claiming at once
        take different schedules without waiting on each other; SQLite has one writer at a time,
        which makes the same statement take a batch whole.
        """
        due = sa.and_(
            schedules.c.platform == platform,
            schedules.c.due_at <= now,
            sa.or_(schedules.c.lease_until.is_(None), schedules.c.lease_until <= now),
        )
        # Most ticks find nothing: one read through the index says so, with no transaction.
        async with self.read() as conn:
            if (await conn.execute(sa.select(_KEY[0]).where(due).limit(1))).first() is None:
                return []
        pick = (
            sa.select(*_KEY)
            .where(due)
            .order_by(
                schedules.c.due_at, schedules.c.turn, schedules.c.workspace, schedules.c.channel
            )
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        claim = (
            schedules.update()
            .where(sa.tuple_(*_KEY).in_(pick))
            .values(lease_owner=claimant, lease_until=now + lease)
            .returning(*schedules.c)
        )
        async with self.write() as conn:
            rows = list((await conn.execute(claim)).all())
            if not rows:
                return []
            # The latest claims of the batch's channels, each found through the claims' key.
            latest = (
                sa.select(
                    slot_claims.c.workspace,
                    slot_claims.c.channel,
                    slot_claims.c.kind,
                    sa.func.max(slot_claims.c.slot),
                )
                .where(
                    slot_claims.c.platform == platform,
                    sa.tuple_(slot_claims.c.workspace, slot_claims.c.channel).in_(
                        [(r.workspace, r.channel) for r in rows]
                    ),
                    # A claim another claimant left unsettled is not done: its lease ran out,
                    # and this claimant takes it over.
                    sa.or_(slot_claims.c.outcome.is_not(None), slot_claims.c.claimant == claimant),
                )
                .group_by(slot_claims.c.workspace, slot_claims.c.channel, slot_claims.c.kind)
            )
            last = {(w, c, k): s for w, c, k, s in await conn.execute(latest)}
        rows.sort(key=lambda r: (r.due_at, r.turn or 0, r.workspace, r.channel))
        return [
            ScheduleState(
                _schedule(r),
                last.get((r.workspace, r.channel, ClaimKind.POST.value)),
                last.get((r.workspace, r.channel, ClaimKind.DIGEST.value)),
            )
            for r in rows
        ]

    async def release_schedule(self, place: Place, *, claimant: str, due_at: datetime) -> bool:
        """Give back a leased schedule, due next at ``due_at``; False if the lease was lost."""
        params = {**place_params(place), "s_owner": claimant, "s_due": due_at}
        return bool(await self._hot_write(_RELEASE_SCHEDULE, params))

    async def renew_leases(
        self, platform: str, places: list[Place], *, claimant: str, until: datetime
    ) -> int:
        """Extend this claimant's leases on these schedules; return how many it still holds."""
        if not places:
            return 0
        stmt = (
            schedules.update()
            .where(
                schedules.c.platform == platform,
                sa.tuple_(schedules.c.workspace, schedules.c.channel).in_(
                    [(p.workspace, p.channel) for p in places]
                ),
                schedules.c.lease_owner == claimant,
            )
            .values(lease_until=until)
        )
        async with self.write() as conn:
            return int((await conn.execute(stmt)).rowcount or 0)

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
        stale_before: datetime | None = None,
    ) -> bool:
        """Claim a slot once per (channel, kind, key); True for the claimant that holds it.

        The claimant's own earlier claim counts as held, so a claim whose commit was not heard
        of (a lost connection) can be tried again safely by the same process. With
        ``stale_before``, another claimant's claim made before then and never settled (its
        process died, or gave up, before posting) is taken over, by one claimant only.
        """
        # Nearly every claim is the slot's first: one statement, in one round trip.
        first = {
            **place_params(place),
            "s_kind": kind.value,
            "s_slot": key,
            "s_slot_at": slot_at,
            "s_claimant": claimant,
            "s_at": at,
        }
        if await self._hot_write(_FIRST_CLAIM[self.dialect], first) == 1:
            return True
        where = sa.and_(
            _where_place(slot_claims, place),
            slot_claims.c.kind == kind.value,
            slot_claims.c.slot == key,
        )
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
            held = (
                await conn.execute(
                    sa.select(
                        slot_claims.c.claimant, slot_claims.c.claimed_at, slot_claims.c.outcome
                    ).where(where)
                )
            ).first()
            if held is None or held.claimant == claimant:
                return held is not None
            if stale_before is None or held.outcome is not None or held.claimed_at >= stale_before:
                return False
            # Conditional on the old claimant: of two taking over at once, one wins.
            taken = await conn.execute(
                slot_claims.update()
                .where(
                    where,
                    slot_claims.c.claimant == held.claimant,
                    slot_claims.c.outcome.is_(None),
                )
                .values(claimant=claimant, claimed_at=at)
            )
        if taken.rowcount != 1:
            return False
        log.warning(
            "took over the %s slot %s in %s/%s/%s from %s, which never settled it",
            kind.value,
            key,
            place.platform,
            place.workspace,
            place.channel,
            held.claimant,
        )
        return True

    async def settle_claim(
        self, place: Place, kind: ClaimKind, key: str, *, outcome: str, round_id: int | None
    ) -> None:
        """Record what became of a claimed slot (posted, late, skipped, failed)."""
        params = {
            **place_params(place),
            "s_kind": kind.value,
            "s_slot": key,
            "s_outcome": outcome,
            "s_round": round_id,
        }
        await self._hot_write(_SETTLE_CLAIM, params)

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
