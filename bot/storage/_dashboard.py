"""SQL behind the dashboard: daily activity, streaks, a player's history, one-use link claims.

Streaks are computed in the database with the gaps-and-islands method: number each channel's
scheduled rounds in order, keep the ones a player answered right, and runs of consecutive numbers
are streaks. It gives the same answer as ``bot.engine.streaks`` (a test holds them equal) without
sending a year of rounds to Python.
"""

from __future__ import annotations

import uuid
from contextlib import AbstractAsyncContextManager
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.engine.activity import DayActivity, HistoryRow, StreakRow
from bot.engine.names import Known, NameKind
from bot.storage._retry import run_with_retries
from bot.storage._schema import (
    answers,
    channel_settings,
    dashboard_links,
    dashboard_revocations,
    display_names,
    rounds,
    schedules,
)

_right = sa.case((answers.c.correct, 1), else_=0)


def _save_names(insert: Any) -> Any:
    """The upsert of names, in a dialect's insert."""
    stmt = insert(display_names)
    return stmt.on_conflict_do_update(
        index_elements=["platform", "workspace", "kind", "id"],
        set_={"name": stmt.excluded.name, "fetched_at": stmt.excluded.fetched_at},
    )


# Built once per dialect, as the store's other statements that run often.
_SAVE_NAMES = {"postgresql": _save_names(postgresql.insert), "sqlite": _save_names(sqlite.insert)}


class DashboardSql:
    """The dashboard's reads (and its link claims), mixed into SqlStore."""

    if TYPE_CHECKING:
        dialect: str

        def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def _insert(self, table: sa.Table) -> Any: ...

        async def _execute_many(self, stmt: Any, rows: list[dict[str, Any]]) -> None: ...

    def _day(self, column: Any) -> Any:
        """Return the UTC calendar day of a timestamp column as YYYY-MM-DD text."""
        if self.dialect == "postgresql":
            return sa.func.to_char(sa.func.timezone("UTC", column), "YYYY-MM-DD")
        return sa.func.strftime("%Y-%m-%d", column)

    async def daily_activity(
        self, platform: str, workspace: str, since: datetime
    ) -> list[DayActivity]:
        """Return answers, distinct players and right answers per UTC day since a time."""
        day = self._day(answers.c.answered_at).label("day")
        query = (
            sa.select(
                day,
                sa.func.count(),
                sa.func.count(sa.distinct(answers.c.user_id)),
                sa.func.sum(_right),
            )
            .where(
                answers.c.platform == platform,
                answers.c.workspace == workspace,
                answers.c.answered_at >= since,
            )
            .group_by(day)
            .order_by(day)
        )
        async with self.read() as conn:
            return [
                DayActivity(date.fromisoformat(d), int(n), int(p), int(c or 0))
                for d, n, p, c in await conn.execute(query)
            ]

    async def streak_rows(
        self, platform: str, workspace: str, user: str | None = None
    ) -> list[StreakRow]:
        """Return every player's current and best streak per channel of a workspace."""
        where = [
            rounds.c.platform == platform,
            rounds.c.workspace == workspace,
            rounds.c.scheduled.is_(True),
        ]
        numbered = (
            sa.select(
                rounds.c.id,
                rounds.c.channel,
                rounds.c.closed_at,
                sa.func.row_number()
                .over(partition_by=rounds.c.channel, order_by=(rounds.c.opened_at, rounds.c.id))
                .label("idx"),
            )
            .where(*where)
            .cte("numbered")
        )
        answered = (
            sa.select(
                answers.c.user_id.label("u"),
                numbered.c.channel.label("c"),
                numbered.c.idx,
                answers.c.correct,
                numbered.c.closed_at,
            )
            .select_from(answers.join(numbered, answers.c.round_id == numbered.c.id))
            .where(answers.c.platform == platform, answers.c.workspace == workspace)
        )
        if user is not None:
            answered = answered.where(answers.c.user_id == user)
        answered_cte = answered.cte("answered")
        right = (
            sa.select(
                answered_cte.c.u,
                answered_cte.c.c,
                answered_cte.c.idx,
                (
                    answered_cte.c.idx
                    - sa.func.row_number().over(
                        partition_by=(answered_cte.c.c, answered_cte.c.u),
                        order_by=answered_cte.c.idx,
                    )
                ).label("grp"),
            )
            .where(answered_cte.c.correct.is_(True))
            .cte("right_answers")
        )
        islands = (
            sa.select(
                right.c.u,
                right.c.c,
                sa.func.count().label("n"),
                sa.func.max(right.c.idx).label("last"),
            )
            .group_by(right.c.u, right.c.c, right.c.grp)
            .cte("islands")
        )
        # The round a current streak must reach: the open round when the player answered it
        # right, else the newest closed one. A wrong answer to the open round ends the streak.
        newest_closed = (
            sa.select(numbered.c.channel.label("c"), sa.func.max(numbered.c.idx).label("idx"))
            .where(numbered.c.closed_at.is_not(None))
            .group_by(numbered.c.channel)
            .cte("newest_closed")
        )
        open_answers = (
            sa.select(
                answered_cte.c.u, answered_cte.c.c, answered_cte.c.idx, answered_cte.c.correct
            )
            .where(answered_cte.c.closed_at.is_(None))
            .cte("open_answers")
        )
        reaches = sa.or_(
            islands.c.last == newest_closed.c.idx,
            sa.and_(open_answers.c.correct.is_(True), islands.c.last == open_answers.c.idx),
        )
        not_broken = sa.or_(open_answers.c.correct.is_(None), open_answers.c.correct.is_(True))
        current = sa.case((sa.and_(reaches, not_broken), islands.c.n), else_=0)
        query = (
            sa.select(
                islands.c.c,
                islands.c.u,
                sa.func.max(current),
                sa.func.max(islands.c.n),
            )
            .select_from(
                islands.outerjoin(newest_closed, newest_closed.c.c == islands.c.c).outerjoin(
                    open_answers,
                    sa.and_(open_answers.c.c == islands.c.c, open_answers.c.u == islands.c.u),
                )
            )
            .group_by(islands.c.c, islands.c.u)
            .order_by(islands.c.c, islands.c.u)
        )
        async with self.read() as conn:
            return [
                StreakRow(channel=c, user=u, current=int(cur or 0), best=int(best or 0))
                for c, u, cur, best in await conn.execute(query)
            ]

    async def user_history(
        self, platform: str, workspace: str, user: str, limit: int = 50
    ) -> list[HistoryRow]:
        """Return a player's latest answers in a workspace, newest first."""
        query = (
            sa.select(
                rounds.c.id,
                rounds.c.channel,
                rounds.c.question_id,
                rounds.c.opened_at,
                answers.c.choice,
                answers.c.correct,
                answers.c.points,
                answers.c.elapsed_ms,
            )
            .select_from(answers.join(rounds, answers.c.round_id == rounds.c.id))
            .where(
                answers.c.platform == platform,
                answers.c.workspace == workspace,
                answers.c.user_id == user,
            )
            .order_by(answers.c.answered_at.desc(), answers.c.id.desc())
            .limit(limit)
        )
        async with self.read() as conn:
            return [
                HistoryRow(
                    round_id=r.id,
                    channel=r.channel,
                    question_id=r.question_id,
                    opened_at=r.opened_at,
                    choice=r.choice,
                    correct=bool(r.correct),
                    points=int(r.points),
                    elapsed_ms=int(r.elapsed_ms),
                )
                for r in await conn.execute(query)
            ]

    async def workspace_channels(self, platform: str, workspace: str) -> list[str]:
        """Return every channel of a workspace that has had a round, a setting or a schedule."""
        parts = [
            sa.select(t.c.channel).where(t.c.platform == platform, t.c.workspace == workspace)
            for t in (rounds, channel_settings, schedules)
        ]
        query = sa.union(*parts)
        async with self.read() as conn:
            return sorted({c for (c,) in await conn.execute(query)})

    async def claim_link(self, nonce: str, expires_at: datetime, now: datetime) -> bool:
        """Record a link as used; False when it was used before (on any replica).

        Retried by itself on a lost connection: an attempt whose commit went through before
        the reply was lost finds its own row (by its claimant token) and still wins, rather
        than telling the person their own first open was "already used".
        """
        token = uuid.uuid4().hex

        async def attempt(retrying: bool) -> bool:
            async with self.write() as conn:
                await conn.execute(
                    dashboard_links.delete().where(dashboard_links.c.expires_at < now)
                )
                result = await conn.execute(
                    self._insert(dashboard_links)
                    .values(nonce=nonce, expires_at=expires_at, claimant=token)
                    .on_conflict_do_nothing(index_elements=["nonce"])
                )
                if result.rowcount == 1:
                    return True
                if not retrying:
                    return False
                held = await conn.execute(
                    sa.select(dashboard_links.c.claimant).where(dashboard_links.c.nonce == nonce)
                )
                return bool(held.scalar_one_or_none() == token)

        return await run_with_retries("claim_link", attempt)

    async def revoke_dashboard_sessions(self, platform: str, workspace: str, at: datetime) -> None:
        """End every dashboard session of a workspace issued before ``at``."""
        async with self.write() as conn:
            await conn.execute(
                self._insert(dashboard_revocations)
                .values(platform=platform, workspace=workspace, revoked_at=at)
                .on_conflict_do_update(
                    index_elements=["platform", "workspace"], set_={"revoked_at": at}
                )
            )

    async def dashboard_revoked_at(self, platform: str, workspace: str) -> datetime | None:
        """Return when a workspace's dashboard sessions were last revoked, if ever."""
        query = sa.select(dashboard_revocations.c.revoked_at).where(
            dashboard_revocations.c.platform == platform,
            dashboard_revocations.c.workspace == workspace,
        )
        async with self.read() as conn:
            value = (await conn.execute(query)).scalar_one_or_none()
        return value if isinstance(value, datetime) else None

    async def save_names(
        self, platform: str, workspace: str, names: dict[tuple[NameKind, str], str], at: datetime
    ) -> None:
        """Store what these people, channels or the workspace are called, learnt ``at``."""
        if not names:
            return
        rows = [
            {
                "platform": platform,
                "workspace": workspace,
                "kind": kind.value,
                "id": ident[:64],
                "name": name[:200],
                "fetched_at": at,
            }
            for (kind, ident), name in sorted(names.items())
        ]
        await self._execute_many(_SAVE_NAMES[self.dialect], rows)

    async def display_names(
        self, platform: str, workspace: str
    ) -> dict[tuple[NameKind, str], Known]:
        """Return every stored name of a workspace, with when each was learnt."""
        t = display_names
        query = sa.select(t.c.kind, t.c.id, t.c.name, t.c.fetched_at).where(
            t.c.platform == platform, t.c.workspace == workspace
        )
        async with self.read() as conn:
            rows = (await conn.execute(query)).all()
        return {(NameKind(r.kind), r.id): Known(r.name, r.fetched_at) for r in rows}
