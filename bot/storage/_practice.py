"""SQL for practice sessions: one row per person and workspace, each step over its version."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.engine.learning import PracticeKind
from bot.engine.practice import PracticeSession
from bot.storage._schema import practice_sessions as table


def _where(platform: str, workspace: str, user: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (
        table.c.platform == platform,
        table.c.workspace == workspace,
        table.c.user_id == user,
    )


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _columns(session: PracticeSession) -> dict[str, Any]:
    return {
        "topic": session.topic,
        "tag": session.tag,
        "target": session.target,
        "answered": session.answered,
        "right_answers": session.right,
        "asked": " ".join(session.asked),
        "owed": " ".join(session.owed),
        "current": session.current,
        "current_kind": None if session.current_kind is None else session.current_kind.value,
        "asked_at": session.asked_at,
        "started_at": session.started_at,
    }


def session_from_row(row: Any) -> PracticeSession:
    """Return the session a row holds."""
    started = _aware(row.started_at)
    assert started is not None
    return PracticeSession(
        platform=row.platform,
        workspace=row.workspace,
        user=row.user_id,
        target=int(row.target),
        started_at=started,
        topic=row.topic,
        tag=row.tag,
        answered=int(row.answered),
        right=int(row.right_answers),
        asked=tuple(row.asked.split()),
        owed=tuple(row.owed.split()),
        current=row.current,
        current_kind=None if row.current_kind is None else PracticeKind(row.current_kind),
        asked_at=_aware(row.asked_at),
        version=int(row.version),
    )


async def read_session(
    conn: AsyncConnection, platform: str, workspace: str, user: str
) -> PracticeSession | None:
    """Return a person's session, or None."""
    row = (await conn.execute(table.select().where(*_where(platform, workspace, user)))).first()
    return None if row is None else session_from_row(row)


async def write_session(
    conn: AsyncConnection, insert: Any, session: PracticeSession, expected: int
) -> bool:
    """Write a session over the stored version ``expected`` (0: none yet); False if it moved."""
    where = _where(session.platform, session.workspace, session.user)
    if expected == 0:
        stmt = (
            insert(table)
            .values(
                platform=session.platform,
                workspace=session.workspace,
                user_id=session.user,
                **_columns(session),
                version=1,
            )
            .on_conflict_do_nothing()
        )
    else:
        stmt = (
            table.update()
            .where(*where, table.c.version == expected)
            .values(**_columns(session), version=expected + 1)
        )
    return bool((await conn.execute(stmt)).rowcount == 1)


async def delete_session(
    conn: AsyncConnection, platform: str, workspace: str, user: str
) -> PracticeSession | None:
    """Delete a person's session; return it as it was."""
    found = await read_session(conn, platform, workspace, user)
    if found is not None:
        await conn.execute(
            table.delete().where(
                *_where(platform, workspace, user), table.c.version == found.version
            )
        )
    return found
