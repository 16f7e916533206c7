"""Request keys shared by every replica: the first to claim a key holds it until it expires.

This is request deduplication for any webhook: a platform that signs its requests or redelivers
its events claims each signature (a replayed request is refused by whichever replica it
reaches) and each event's id (a redelivered event is handled once). Slack's adapter does both
(``bot.adapters.slack._replay``).

Claims made at the same moment share a statement: while one claim's insert is in flight, the
claims arriving behind it wait and then go together in the next (one round trip, one commit,
however many requests are waiting). A quiet replica therefore claims each request on its own at
once, and a busy one pays one write for a whole wave of requests instead of one each.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from bot.storage._retry import run_with_retries
from bot.storage._schema import UTCDateTime, request_claims
from bot.storage._store import SqlStore

log = logging.getLogger(__name__)

# Expired claims are deleted at most this often (by the injected clock), by whoever claims.
PURGE_EVERY = timedelta(minutes=1)
# At most this many keys go in one statement (each statement size is prepared once).
BATCH_KEYS = 64


class Won(set[str]):
    """The keys a claim won, with the claimant token its rows carry.

    ``forget`` and ``extend`` act on a key only while that token still holds it: a replica
    whose lease expired cannot delete or prolong the claim another replica has made since.
    """

    def __init__(self, keys: set[str] | frozenset[str] = frozenset(), token: str = "") -> None:
        super().__init__(keys)
        self.token = token


@dataclass
class _Ask:
    """One caller's keys, waiting for the statement that will claim them."""

    keys: Mapping[str, datetime]
    now: datetime
    done: asyncio.Future[Won] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class RequestClaims:
    """Claim request keys once across replicas, each for its own time."""

    def __init__(self, store: SqlStore, *, batch_keys: int = BATCH_KEYS) -> None:
        self.store = store
        self.batch_keys = batch_keys
        self._statements: dict[int, Any] = {}
        self._next_purge: datetime | None = None
        self._waiting: list[_Ask] = []
        self._flusher: asyncio.Task[None] | None = None
        self._purging: asyncio.Task[None] | None = None
        # How many statements the claims took, and how many claims they carried.
        self.statements = 0
        self.claims = 0

    async def claim(self, keys: Mapping[str, datetime], *, now: datetime) -> Won:
        """Claim each key until its time, unless another claim holds it past ``now``.

        Return the keys this call won. A claim whose reply was lost with the connection, and
        that is therefore made again, still wins the keys its first attempt took. Of two calls
        waiting together for the same key, the first wins it.
        """
        return await asyncio.shield(self.submit(keys, now=now))

    def submit(self, keys: Mapping[str, datetime], *, now: datetime) -> asyncio.Future[Won]:
        """Queue a claim; return the future of the keys it wins (``claim``, without a task)."""
        ask = _Ask(keys, now)
        if not keys:
            ask.done.set_result(Won())
            return ask.done
        self._waiting.append(ask)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return ask.done

    async def _flush(self) -> None:
        """Claim what is waiting, a statement at a time, until nothing is."""
        while self._waiting:
            batch: list[_Ask] = []
            size = 0
            while self._waiting and (
                not batch or size + len(self._waiting[0].keys) <= self.batch_keys
            ):
                ask = self._waiting.pop(0)
                batch.append(ask)
                size += len(ask.keys)
            try:
                won, token = await self._claim_together(batch)
            except Exception as exc:
                for ask in batch:
                    if not ask.done.done():
                        ask.done.set_exception(exc)
                continue
            for ask in batch:
                mine = Won({key for key in ask.keys if won.pop(key, None) is ask}, token)
                if not ask.done.done():
                    ask.done.set_result(mine)

    async def _claim_together(self, batch: list[_Ask]) -> tuple[dict[str, _Ask], str]:
        """Claim the keys of every ask in one statement; return each key won, by its ask."""
        owner: dict[str, _Ask] = {}
        keys: dict[str, datetime] = {}
        for ask in batch:
            for key, until in ask.keys.items():
                if key not in owner:  # the same key twice in a batch: the first asker's
                    owner[key], keys[key] = ask, until
        now = min(ask.now for ask in batch)
        token = uuid.uuid4().hex
        names = list(keys)

        async def attempt(retrying: bool) -> set[str]:
            won = await self._claim(names, keys, now, token)
            if retrying and len(won) < len(names):
                won |= await self._held_by(names, token)
            return won

        won = await run_with_retries("claim_requests", attempt)
        self.statements += 1
        self.claims += len(batch)
        if self._next_purge is None:
            self._next_purge = now + PURGE_EVERY  # a process's first purge comes a minute in
        elif now >= self._next_purge:
            self._next_purge = now + PURGE_EVERY
            if self._purging is None or self._purging.done():
                # Off the requests' path: the claims are answered without waiting for it.
                self._purging = asyncio.create_task(self._purge_logged(now))
        return {key: owner[key] for key in won}, token

    async def _purge_logged(self, now: datetime) -> None:
        try:
            await self._purge(now)
        except Exception:
            # The claims are made; old rows go at the next purge.
            log.exception("could not delete expired request claims")

    async def idle(self) -> None:
        """Wait for a purge under way to finish (tests, and closing)."""
        if self._purging is not None:
            await asyncio.shield(self._purging)

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

    async def forget(self, keys: Won) -> None:
        """Delete keys this claim still holds (a request refused after all), to be claimed again."""
        if not keys:
            return

        async def attempt(_retrying: bool) -> None:
            async with self.store.write() as conn:
                await conn.execute(
                    request_claims.delete().where(
                        request_claims.c.request_key.in_(sorted(keys)),
                        request_claims.c.claimant == keys.token,
                    )
                )

        await run_with_retries("forget_requests", attempt)

    async def extend(self, key: str, until: datetime, token: str) -> None:
        """Hold a key this claim (``token``) still holds until a later time (an event handled)."""

        async def attempt(_retrying: bool) -> None:
            async with self.store.write() as conn:
                await conn.execute(
                    request_claims.update()
                    .where(request_claims.c.request_key == key, request_claims.c.claimant == token)
                    .values(expires_at=until)
                )

        await run_with_retries("extend_request", attempt)

    async def held_until(self, key: str) -> datetime | None:
        """Return until when a key is held (None: it is not)."""
        query = sa.select(request_claims.c.expires_at).where(request_claims.c.request_key == key)
        async with self.store.read() as conn:
            value = (await conn.execute(query)).scalar_one_or_none()
        return value if isinstance(value, datetime) else None

    async def _held_by(self, names: list[str], token: str) -> set[str]:
        query = sa.select(request_claims.c.request_key).where(
            request_claims.c.request_key.in_(names), request_claims.c.claimant == token
        )
        async with self.store.read() as conn:
            return set((await conn.execute(query)).scalars())

    async def _purge(self, now: datetime) -> None:
        async with self.store.write() as conn:
            await conn.execute(request_claims.delete().where(request_claims.c.expires_at <= now))
