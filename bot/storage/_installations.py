"""SQL for an app's installations and its OAuth states, in the same database as the quiz.

Slack's OAuth flow (``bot.adapters.slack._oauth``) keeps its installations and used states here;
nothing in this module knows Slack: a platform whose app is installed per workspace through
OAuth stores its installations the same way.

An installation is stored as its JSON document encrypted with ``TokenCipher`` (the bot and
refresh tokens are in it). A row written before encryption (plain JSON, which starts with ``{``)
is still read, and ``reencrypt`` rewrites it, and every row a former key wrote, under the current
key.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from bot.storage._crypt import TokenCipher
from bot.storage._retry import with_retries
from bot.storage._schema import installations, oauth_states
from bot.storage._store import SqlStore

LATEST = ""  # user_id of the row that holds a workspace's latest installation


def _key(enterprise_id: str | None, team_id: str | None, user_id: str) -> dict[str, str]:
    return {"enterprise_id": enterprise_id or "", "team_id": team_id or "", "user_id": user_id}


@with_retries
class InstallationSql:
    """Installations as JSON documents keyed by (enterprise, team, user), and one-time states."""

    def __init__(self, store: SqlStore, cipher: TokenCipher) -> None:
        self.store = store
        self.cipher = cipher

    def _open(self, stored: str) -> dict[str, Any]:
        plain = stored if stored.startswith("{") else self.cipher.decrypt(stored)
        document: dict[str, Any] = json.loads(plain)
        return document

    async def save_installation(
        self,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str,
        data: dict[str, Any],
        installed_at: datetime,
    ) -> None:
        """Store an installation as the workspace's latest and as its installer's."""
        document = self.cipher.encrypt(json.dumps(data, sort_keys=True))
        async with self.store.write() as conn:
            for who in dict.fromkeys((LATEST, user_id)):
                key = _key(enterprise_id, team_id, who)
                stmt = (
                    self.store._insert(installations)
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
        query = sa.select(installations.c.data).where(
            *(installations.c[name] == value for name, value in key.items())
        )
        async with self.store.read() as conn:
            document = (await conn.execute(query)).scalar()
        return self._open(document) if document is not None else None

    async def delete_installations(
        self, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> int:
        """Remove a workspace's installations (one installer's only, given user_id)."""
        key = _key(enterprise_id, team_id, user_id or LATEST)
        conditions = [
            installations.c.enterprise_id == key["enterprise_id"],
            installations.c.team_id == key["team_id"],
        ]
        if user_id is not None:
            conditions.append(installations.c.user_id == user_id)
        async with self.store.write() as conn:
            result = await conn.execute(installations.delete().where(*conditions))
        return int(result.rowcount)

    async def reencrypt(self) -> tuple[int, int]:
        """Encrypt plain rows and re-encrypt old keys' rows under the current key.

        Return how many rows were plain and how many had an older key. Each row is rewritten
        only if it has not changed since it was read, so a token renewed meanwhile is kept.
        """
        table = installations
        async with self.store.read() as conn:
            rows = (await conn.execute(sa.select(table))).all()
        plain = rotated = 0
        for row in rows:
            stored = str(row.data)
            if stored.startswith("{"):
                fresh = self.cipher.encrypt(stored)
            elif self.cipher.is_current(stored):
                continue
            else:
                fresh = self.cipher.encrypt(self.cipher.decrypt(stored))
            async with self.store.write() as conn:
                result = await conn.execute(
                    table.update()
                    .where(
                        table.c.enterprise_id == row.enterprise_id,
                        table.c.team_id == row.team_id,
                        table.c.user_id == row.user_id,
                        table.c.data == stored,
                    )
                    .values(data=fresh)
                )
            if result.rowcount == 1:
                if stored.startswith("{"):
                    plain += 1
                else:
                    rotated += 1
        return plain, rotated

    async def use_state(self, nonce: str, expires_at: datetime, now: datetime) -> bool:
        """Record a signed state's nonce as used: True the first time, on any replica."""
        async with self.store.write() as conn:
            # Used nonces whose states have expired can go: their signatures no longer pass.
            await conn.execute(oauth_states.delete().where(oauth_states.c.expires_at <= now))
            result = await conn.execute(
                self.store._insert(oauth_states)
                .values(state=nonce, expires_at=expires_at)
                .on_conflict_do_nothing(index_elements=["state"])
            )
        return bool(result.rowcount == 1)
