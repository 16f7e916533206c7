"""SQL for conversation references (where a platform can reach a conversation unprompted) and
for the chart images a platform serves by URL.

Microsoft Teams lets a bot post only into a conversation it has heard from, through the service
URL that conversation's activities named. Every activity the bot receives refreshes its row, so
a daily question or a timer's reveal (which no activity prompted) knows where to post.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from bot.storage._retry import with_retries
from bot.storage._schema import chart_images, conversation_references
from bot.storage._store import SqlStore


@dataclass(frozen=True, slots=True)
class Reference:
    """Where a conversation is reached: its service URL, and what the platform said of it."""

    service_url: str
    details: dict[str, Any]


@with_retries
class ConversationSql:
    """Conversation references keyed by (platform, workspace, channel)."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store

    async def remember(
        self, platform: str, workspace: str, channel: str, reference: Reference, now: datetime
    ) -> None:
        """Store (or refresh) where a conversation is reached."""
        document = json.dumps(reference.details, sort_keys=True)
        key = {"platform": platform, "workspace": workspace, "channel": channel}
        values = {"service_url": reference.service_url, "reference": document, "updated_at": now}
        stmt = (
            self.store._insert(conversation_references)
            .values(**key, **values)
            .on_conflict_do_update(index_elements=list(key), set_=values)
        )
        async with self.store.write() as conn:
            await conn.execute(stmt)

    async def find(self, platform: str, workspace: str, channel: str) -> Reference | None:
        """Return where a conversation is reached, or None if the bot never heard from it."""
        table = conversation_references
        query = sa.select(table.c.service_url, table.c.reference).where(
            table.c.platform == platform,
            table.c.workspace == workspace,
            table.c.channel == channel,
        )
        async with self.store.read() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        return Reference(row.service_url, json.loads(row.reference))

    async def channels_of_team(self, platform: str, workspace: str, team: str) -> list[str]:
        """Return the channels of a workspace whose reference names this team."""
        table = conversation_references
        query = sa.select(table.c.channel, table.c.reference).where(
            table.c.platform == platform, table.c.workspace == workspace
        )
        async with self.store.read() as conn:
            rows = (await conn.execute(query)).all()
        return [row.channel for row in rows if json.loads(row.reference).get("team") == team]

    async def forget(self, platform: str, workspace: str, channels: list[str]) -> int:
        """Remove the references of these channels; return how many there were."""
        if not channels:
            return 0
        table = conversation_references
        stmt = table.delete().where(
            table.c.platform == platform,
            table.c.workspace == workspace,
            table.c.channel.in_(channels),
        )
        async with self.store.write() as conn:
            result = await conn.execute(stmt)
        return int(result.rowcount or 0)

    async def forget_workspace(self, platform: str, workspace: str) -> int:
        """Remove every reference of a workspace; return how many there were."""
        table = conversation_references
        stmt = table.delete().where(table.c.platform == platform, table.c.workspace == workspace)
        async with self.store.write() as conn:
            result = await conn.execute(stmt)
        return int(result.rowcount or 0)


# A served chart is kept this long after it was drawn: cards older than this lose their image.
CHART_KEEP = timedelta(days=90)


@with_retries
class ChartSql:
    """Chart images by key (a hash of the image), shared by every replica."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store

    async def keep(self, key: str, png: bytes, now: datetime) -> None:
        """Store an image under its key (once), and drop those past ``CHART_KEEP``."""
        stmt = (
            self.store._insert(chart_images)
            .values(key=key, png=png, created_at=now)
            .on_conflict_do_nothing(index_elements=["key"])
        )
        async with self.store.write() as conn:
            await conn.execute(stmt)
            await conn.execute(
                chart_images.delete().where(chart_images.c.created_at < now - CHART_KEEP)
            )

    async def png(self, key: str) -> bytes | None:
        """Return a kept image, or None."""
        query = sa.select(chart_images.c.png).where(chart_images.c.key == key)
        async with self.store.read() as conn:
            found = (await conn.execute(query)).scalar()
        return bytes(found) if found is not None else None
