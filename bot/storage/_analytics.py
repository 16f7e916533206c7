"""SQL for answer analytics: per-question aggregates, summed by the database.

Every figure is a GROUP BY over the answers joined to their rounds; the point-biserial sums come
from two nested aggregates (per answerer and question, then per answerer), so the cost is a few
scans whatever the history, and no row reaches Python.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.engine.analytics import MIN_USER_ANSWERS, BiserialSums, QuestionAggregate
from bot.storage._schema import answers, rounds


def _scope(platform: str | None, workspace: str | None) -> list[sa.ColumnElement[bool]]:
    where: list[sa.ColumnElement[bool]] = []
    if platform is not None:
        where.append(rounds.c.platform == platform)
    if workspace is not None:
        where.append(rounds.c.workspace == workspace)
    return where


_right = sa.case((answers.c.correct, 1), else_=0)
# What answers are counted under: the question's id, and "@N" for revision N of a workspace's
# own question (Question.asked_as), so an edited question's analytics start afresh.
_asked = sa.case(
    (rounds.c.revision.is_(None), rounds.c.question_id),
    else_=rounds.c.question_id + sa.literal_column("'@'") + sa.cast(rounds.c.revision, sa.String),
)


class AnalyticsSql:
    """The analytics part of the Store protocol, mixed into SqlStore."""

    if TYPE_CHECKING:

        def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

    async def question_aggregates(
        self, platform: str | None = None, workspace: str | None = None
    ) -> list[QuestionAggregate]:
        """Return every asked question's aggregates in a scope (None: every platform/workspace)."""
        where = _scope(platform, workspace)
        joined = answers.join(rounds, answers.c.round_id == rounds.c.id)

        asked = sa.select(_asked, sa.func.count().label("n")).where(*where).group_by(_asked)
        picks = (
            sa.select(_asked, answers.c.choice, sa.func.count().label("n"))
            .select_from(joined)
            .where(*where)
            .group_by(_asked, answers.c.choice)
        )

        # Median answer time: the middle one or two of each question's ordered times.
        ranked = (
            sa.select(
                _asked.label("q"),
                answers.c.elapsed_ms.label("ms"),
                sa.func.row_number()
                .over(partition_by=_asked, order_by=answers.c.elapsed_ms)
                .label("rn"),
                sa.func.count().over(partition_by=_asked).label("cnt"),
            )
            .select_from(joined)
            .where(*where)
            .cte("ranked")
        )
        medians = (
            sa.select(ranked.c.q, sa.func.avg(ranked.c.ms * 1.0))
            .where(
                sa.or_(
                    ranked.c.rn == (ranked.c.cnt + 1) // 2, ranked.c.rn == (ranked.c.cnt + 2) // 2
                )
            )
            .group_by(ranked.c.q)
        )

        # Point-biserial sums: x = right on this question, y = the answerer's share right on the
        # other questions, one pair per answer, answerers with MIN_USER_ANSWERS or more only.
        per_qu = (
            sa.select(
                _asked.label("q"),
                answers.c.platform.label("p"),
                answers.c.workspace.label("w"),
                answers.c.user_id.label("u"),
                sa.func.count().label("a"),
                sa.func.sum(_right).label("c"),
            )
            .select_from(joined)
            .where(*where)
            .group_by(_asked, answers.c.platform, answers.c.workspace, answers.c.user_id)
            .cte("per_qu")
        )
        per_u = (
            sa.select(
                per_qu.c.p,
                per_qu.c.w,
                per_qu.c.u,
                sa.func.sum(per_qu.c.a).label("t"),
                sa.func.sum(per_qu.c.c).label("tc"),
            )
            .group_by(per_qu.c.p, per_qu.c.w, per_qu.c.u)
            .having(sa.func.sum(per_qu.c.a) >= MIN_USER_ANSWERS)
            .cte("per_u")
        )
        y = (per_u.c.tc - per_qu.c.c) * 1.0 / (per_u.c.t - per_qu.c.a)
        pairs = (
            sa.select(per_qu.c.q, per_qu.c.a, per_qu.c.c, y.label("y"))
            .select_from(
                per_qu.join(
                    per_u,
                    sa.and_(
                        per_qu.c.p == per_u.c.p,
                        per_qu.c.w == per_u.c.w,
                        per_qu.c.u == per_u.c.u,
                    ),
                )
            )
            .where(per_u.c.t > per_qu.c.a)
            .cte("pairs")
        )
        sums = sa.select(
            pairs.c.q,
            sa.func.sum(pairs.c.a),
            sa.func.sum(pairs.c.c),
            sa.func.sum(pairs.c.a * pairs.c.y),
            sa.func.sum(pairs.c.c * pairs.c.y),
            sa.func.sum(pairs.c.a * pairs.c.y * pairs.c.y),
        ).group_by(pairs.c.q)

        async with self.read() as conn:
            n_rounds = {q: int(n) for q, n in await conn.execute(asked)}
            choice_counts: dict[str, dict[str, int]] = {}
            for q, choice, n in await conn.execute(picks):
                choice_counts.setdefault(q, {})[choice] = int(n)
            median = {q: float(m) for q, m in await conn.execute(medians)}
            biserial = {
                q: BiserialSums(int(n), float(sx), float(sy), float(sxy), float(syy))
                for q, n, sx, sy, sxy, syy in await conn.execute(sums)
            }
            correct = {
                q: int(c or 0)
                for q, c in await conn.execute(
                    sa.select(_asked, sa.func.sum(_right))
                    .select_from(joined)
                    .where(*where)
                    .group_by(_asked)
                )
            }
        return [
            QuestionAggregate(
                question_id=q,
                rounds=n,
                answers=sum(choice_counts.get(q, {}).values()),
                correct=correct.get(q, 0),
                picks=tuple(sorted(choice_counts.get(q, {}).items())),
                median_ms=median.get(q),
                biserial=biserial.get(q, BiserialSums()),
            )
            for q, n in sorted(n_rounds.items())
        ]

    async def answer_rates(self, platform: str, workspace: str) -> dict[str, tuple[int, int]]:
        """Return (answers, right) per question asked in a workspace."""
        query = (
            sa.select(rounds.c.question_id, sa.func.count(), sa.func.sum(_right))
            .select_from(answers.join(rounds, answers.c.round_id == rounds.c.id))
            .where(*_scope(platform, workspace))
            .group_by(rounds.c.question_id)
        )
        async with self.read() as conn:
            return {q: (int(n), int(c or 0)) for q, n, c in await conn.execute(query)}
