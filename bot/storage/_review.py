"""SQL for spaced review: each user's missed questions, and the review answers they give."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.engine.review import ReviewItem
from bot.storage._schema import review_answers, review_items


def _item(row: Any) -> ReviewItem:
    return ReviewItem(
        platform=row.platform,
        workspace=row.workspace,
        user=row.user_id,
        question_id=row.question_id,
        step=row.step,
        right_in_row=row.right_in_row,
        due_at=row.due_at,
        done=bool(row.done),
        version=row.version,
    )


def _key(platform: str, workspace: str, user: str) -> sa.ColumnElement[bool]:
    return sa.and_(
        review_items.c.platform == platform,
        review_items.c.workspace == workspace,
        review_items.c.user_id == user,
    )


class ReviewSql:
    """The review part of the Store protocol, mixed into SqlStore."""

    if TYPE_CHECKING:

        def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        async def _execute_one(self, stmt: Any, params: dict[str, Any]) -> int: ...

        def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def _insert(self, table: sa.Table) -> Any: ...

    async def review_item(
        self, platform: str, workspace: str, user: str, question_id: str
    ) -> ReviewItem | None:
        """Return a user's review state for a question, or None."""
        query = review_items.select().where(
            _key(platform, workspace, user), review_items.c.question_id == question_id
        )
        async with self.read() as conn:
            row = (await conn.execute(query)).first()
        return _item(row) if row is not None else None

    async def save_review_item(self, item: ReviewItem) -> bool:
        """Write the item if its version is still the stored one (0: none stored yet)."""
        state = dict(
            step=item.step,
            right_in_row=item.right_in_row,
            due_at=item.due_at,
            done=item.done,
            version=item.version + 1,
        )
        if item.version == 0:
            # The usual case on the answer path (a first miss): one prebuilt statement.
            params = {
                "r_platform": item.platform,
                "r_workspace": item.workspace,
                "r_user_id": item.user,
                "r_question_id": item.question_id,
                **{f"r_{k}": v for k, v in state.items()},
            }
            return await self._execute_one(self._insert_review_item(), params) == 1
        stmt = (
            review_items.update()
            .where(
                _key(item.platform, item.workspace, item.user),
                review_items.c.question_id == item.question_id,
                review_items.c.version == item.version,
            )
            .values(**state)
        )
        async with self.write() as conn:
            result = await conn.execute(stmt)
        return bool(result.rowcount == 1)

    def _insert_review_item(self) -> Any:
        """Return the insert-if-absent statement for a new review item, built once."""
        stmt = getattr(self, "_insert_review_stmt", None)
        if stmt is None:
            columns = (
                "platform",
                "workspace",
                "user_id",
                "question_id",
                "step",
                "right_in_row",
                "due_at",
                "done",
                "version",
            )
            stmt = (
                self._insert(review_items)
                .values({c: sa.bindparam(f"r_{c}", type_=review_items.c[c].type) for c in columns})
                .on_conflict_do_nothing(
                    index_elements=["platform", "workspace", "user_id", "question_id"]
                )
            )
            self._insert_review_stmt = stmt
        return stmt

    async def review_items(
        self, platform: str, workspace: str, user: str, *, include_done: bool = False
    ) -> list[ReviewItem]:
        """Return a user's review states, soonest due first."""
        query = review_items.select().where(_key(platform, workspace, user))
        if not include_done:
            query = query.where(review_items.c.done.is_(False))
        query = query.order_by(review_items.c.due_at, review_items.c.question_id)
        async with self.read() as conn:
            return [_item(row) for row in await conn.execute(query)]

    async def record_review_answer(
        self, item: ReviewItem, choice: str, correct: bool, at: datetime
    ) -> None:
        """Log one review answer (kept apart from round answers and scores)."""
        async with self.write() as conn:
            await conn.execute(
                review_answers.insert().values(
                    platform=item.platform,
                    workspace=item.workspace,
                    user_id=item.user,
                    question_id=item.question_id,
                    choice=choice,
                    correct=correct,
                    answered_at=at,
                )
            )
