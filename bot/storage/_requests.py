"""Request keys shared by every replica: the first to claim a key holds it until it expires.

The Slack adapter claims each signed request's signature (a replayed request is refused by
whichever replica it reaches) and each event's id (a redelivered event is handled once).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from bot.storage._retry import run_with_retries
from bot.storage._schema import UTCDateTime, request_claims
from bot.storage._store import SqlStore

# Expired claims are deleted at most this often (by the injected clock), by whoever claims.
PURGE_EVERY = timedelta(minutes=1)


class RequestClaims:
    """Claim request keys once across replicas, each for its own time."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self._statements: dict[int, Any] = {}
        self._next_purge: datetime | None = None

    async def claim(self, keys: Mapping[str, datetime], *, now: datetime) -> set[str]:
        """Claim each key until its time, unless another claim holds it past ``now``.

        Return the keys this call won. A claim whose reply was lost with the connection, and
        that is therefore made again, still wins the keys its first attempt took.
        """
        if not keys:
            return set()
        token = uuid.uuid4().hex
        names = list(keys)

        async def attempt(retrying: bool) -> set[str]:
            won = await self._claim(names, keys, now, token)
            if retrying and len(won) < len(names):
                won |= await self._held_by(names, token)
            return won

        won = await run_with_retries("claim_requests", attempt)
        if self._next_purge is None or now >= self._next_purge:
            self._next_purge = now + PURGE_EVERY
            await self._purge(now)
        return won

    async def _claim(
        self, names: list[str], keys: Mapping[str, datetime], now: datetime, token: str
    ) -> set[str]:
        params: dict[str, Any] = {"now": now, "token": token}
        for i, name in enumerate(names):
            params[f"k{i}"], params[f"u{i}"] = name, keys[name]
        rows = await self.store._fetch_hot(self._statement(len(names)), params, writes=True)
        return {row[0] for row in rows}

    def _statement(self, n: int) -> Any:
        """Return, built once per key count, the insert that takes free or expired keys."""
        stmt = self._statements.get(n)
        if stmt is None:
            rows = [
                {
                    "request_key": sa.bindparam(f"k{i}", type_=sa.String()),
                    "expires_at": sa.bindparam(f"u{i}", type_=UTCDateTime()),
                    "claimant": sa.bindparam("token", type_=sa.String()),
                }
                for i in range(n)
            ]
            insert = self.store._insert(request_claims).values(rows)
            stmt = insert.on_conflict_do_update(
                index_elements=["request_key"],
                set_={
                    "expires_at": insert.excluded.expires_at,
                    "claimant": insert.excluded.claimant,
                },
                where=request_claims.c.expires_at <= sa.bindparam("now", type_=UTCDateTime()),
            ).returning(request_claims.c.request_key)
            self._statements[n] = stmt
        return stmt

    async def forget(self, keys: set[str]) -> None:
        """Delete keys (those of a request refused after all), so they can be claimed again."""
        if not keys:
            return

        async def attempt(_retrying: bool) -> None:
            async with self.store.write() as conn:
                await conn.execute(
                    request_claims.delete().where(request_claims.c.request_key.in_(sorted(keys)))
                )

        await run_with_retries("forget_requests", attempt)

    async def _held_by(self, names: list[str], token: str) -> set[str]:
        query = sa.select(request_claims.c.request_key).where(
            request_claims.c.request_key.in_(names), request_claims.c.claimant == token
        )
        async with self.store.read() as conn:
            return set((await conn.execute(query)).scalars())

    async def _purge(self, now: datetime) -> None:
        async with self.store.write() as conn:
            await conn.execute(request_claims.delete().where(request_claims.c.expires_at <= now))
