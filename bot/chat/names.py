"""The name book: names learnt from requests and platform APIs, stored at most once a week each.

An adapter hands it the names a request carries (``learn``) and, for the ids it saw without a
name, a way to ask the platform (``Lookup``). Every call costs a dictionary lookup; the store is
written only for a new name, a rename, or one stored longer ago than ``REFRESH_AFTER``, and the
platform is asked at most once an id a process. Both happen in the background, off the answer's
path; a failure is logged and the id keeps being shown until a later try succeeds.

The names learnt while a workspace's write is in flight wait for it and go together in the
next: a crowd of new people (a round's first clicks) costs a few writes, not one each.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from datetime import datetime
from typing import Protocol

from bot.engine.names import REFRESH_AFTER, Known, NameKind, Names, fresh
from bot.engine.shared import Shared
from bot.observability.drain import Drain

log = logging.getLogger(__name__)

Key = tuple[NameKind, str]
# Ask the platform what (kind, id) of a workspace is called; None when it cannot say.
Lookup = Callable[[str, NameKind, str], Awaitable[str | None]]


class NameStore(Protocol):
    """The part of the store the name book uses."""

    async def save_names(
        self, platform: str, workspace: str, names: dict[Key, str], at: datetime
    ) -> None: ...

    async def display_names(self, platform: str, workspace: str) -> dict[Key, Known]: ...


class NameBook:
    """The names of every workspace a process serves, cached, learnt and stored."""

    def __init__(
        self,
        store: NameStore,
        clock: Callable[[], datetime],
        platform: str,
        lookup: Lookup | None = None,
        drain: Drain | None = None,
    ) -> None:
        self.store, self.clock, self.platform, self.lookup = store, clock, platform, lookup
        # Counted as work in flight, so a shutdown (and a test's end) waits for the writes.
        self.drain = drain
        self._known: dict[str, dict[Key, Known]] = {}
        self._asked: set[tuple[str, Key]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        # Names waiting for their workspace's next write, and the task writing them.
        self._pending: dict[str, dict[Key, str]] = {}
        self._writing: dict[str, asyncio.Task[None]] = {}
        self._loading: Shared[str, dict[Key, Known]] = Shared()

    def learn(self, workspace: str, names: Mapping[Key, str], seen: Iterable[Key] = ()) -> None:
        """Take a request's names, and the ids it carried without one, in the background."""
        if not workspace:
            return
        known = self._known.get(workspace)
        now = self.clock()
        if known is not None:
            worth = fresh(known, names, now)
            unnamed = [k for k in seen if k not in names and self._wanted(workspace, known, k, now)]
            if not worth and not unnamed:
                return
        self._spawn(self._learn(workspace, dict(names), list(seen)))

    def _spawn(self, work: Coroutine[None, None, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if self.drain is not None:
            self.drain.enter()
            task.add_done_callback(lambda _: self._left())
        return task

    def _left(self) -> None:
        assert self.drain is not None
        self.drain.leave()

    def _wanted(self, workspace: str, known: dict[Key, Known], key: Key, now: datetime) -> bool:
        found = known.get(key)
        return (found is None or found.stale(now, REFRESH_AFTER)) and (
            self.lookup is not None and (workspace, key) not in self._asked
        )

    async def _learn(self, workspace: str, names: dict[Key, str], seen: list[Key]) -> None:
        try:
            known = await self._load(workspace)
            now = self.clock()
            for key in seen:
                if key in names or not self._wanted(workspace, known, key, now):
                    continue
                self._asked.add((workspace, key))
                assert self.lookup is not None
                name = await self.lookup(workspace, *key)
                if name:
                    names[key] = name
            worth = fresh(known, names, now)
            if worth:
                self._pending.setdefault(workspace, {}).update(worth)
                writing = self._writing.get(workspace)
                # A task whose loop has ended is done at once: its callback may not have run.
                if writing is None or writing.done():
                    writing = self._spawn(self._write(workspace, known))
                    self._writing[workspace] = writing
                    writing.add_done_callback(lambda done: self._written(workspace, done))
        except Exception:
            log.warning("could not learn names in %s", workspace, exc_info=True)

    async def _write(self, workspace: str, known: dict[Key, Known]) -> None:
        """Store the workspace's waiting names, in one write for all that came meanwhile."""
        while batch := self._pending.pop(workspace, None):
            now = self.clock()
            try:
                await self.store.save_names(self.platform, workspace, batch, now)
            except Exception:
                # Not marked known: the next request that carries them tries again.
                log.warning("could not store %d names in %s", len(batch), workspace, exc_info=True)
                continue
            known.update({k: Known(v.strip(), now) for k, v in batch.items()})

    def _written(self, workspace: str, task: asyncio.Task[None]) -> None:
        if self._writing.get(workspace) is task:
            del self._writing[workspace]

    async def _load(self, workspace: str) -> dict[Key, Known]:
        known = self._known.get(workspace)
        if known is not None:
            return known
        # A crowd's first requests come all at once: one read serves every one of them.
        stored = await self._loading.get(
            workspace, lambda: self.store.display_names(self.platform, workspace)
        )
        return self._known.setdefault(workspace, stored)

    async def names(self, workspace: str) -> Names:
        """Return the workspace's names for display."""
        return Names(workspace, dict(await self._load(workspace)))

    async def settle(self) -> None:
        """Wait for the names being learnt (tests, and a shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
