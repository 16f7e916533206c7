"""SQL for Slack installations and OAuth states, in the same database as the quiz."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from bot.storage._retry import with_retries
from bot.storage._schema import slack_installations, slack_oauth_states
from bot.storage._store import SqlStore

LATEST = ""  # user_id of the row that holds a workspace's latest installation


def _key(enterprise_id: str | None, team_id: str | None, user_id: str) -> dict[str, str]:
    return {"enterprise_id": enterprise_id or "", "team_id": team_id or "", "user_id": user_id}


@with_retries
class InstallationSql:
    """Installations as JSON documents keyed by (enterprise, team, user), and one-time states."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store

    async def save_installation(
        self,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str,
        data: dict[str, Any],
        installed_at: datetime,
    ) -> None:
        """Store an installation as the workspace's latest and as its installer's."""
        document = json.dumps(data, sort_keys=True)
        async with self.store.write() as conn:
            for who in dict.fromkeys((LATEST, user_id)):
                key = _key(enterprise_id, team_id, who)
                stmt = (
                    self.store._insert(slack_installations)
                    .values(**key, data=document, installed_at=installed_at)
                    .on_conflict_do_update(
                        index_elements=list(key),
                        set_={"data": document, "installed_at": installed_at},
                    )
                )
                await conn.execute(stmt)

    async def find_installation(
        self, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> dict[str, Any] | None:
        """Return an installer's installation, or the workspace's latest (user_id None)."""
        key = _key(enterprise_id, team_id, user_id or LATEST)
        query = sa.select(slack_installations.c.data).where(
            *(slack_installations.c[name] == value for name, value in key.items())
        )
        async with self.store.read() as conn:
            document = (await conn.execute(query)).scalar()
        return json.loads(document) if document is not None else None

    async def delete_installations(
        self, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> int:
        """Remove a workspace's installations (one installer's only, given user_id)."""
        key = _key(enterprise_id, team_id, user_id or LATEST)
        conditions = [
            slack_installations.c.enterprise_id == key["enterprise_id"],
            slack_installations.c.team_id == key["team_id"],
        ]
        if user_id is not None:
            conditions.append(slack_installations.c.user_id == user_id)
        async with self.store.write() as conn:
            result = await conn.execute(slack_installations.delete().where(*conditions))
        return int(result.rowcount)

    async def use_state(self, nonce: str, expires_at: datetime, now: datetime) -> bool:
        """Record a signed state's nonce as used: True the first time, on any replica."""
        async with self.store.write() as conn:
            # Used nonces whose states have expired can go: their signatures no longer pass.
            await conn.execute(
                slack_oauth_states.delete().where(slack_oauth_states.c.expires_at <= now)
            )
            result = await conn.execute(
                self.store._insert(slack_oauth_states)
                .values(state=nonce, expires_at=expires_at)
                .on_conflict_do_nothing(index_elements=["state"])
            )
        return bool(result.rowcount == 1)
