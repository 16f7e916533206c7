"""A SQLite connection of its own, in a thread of its own, for writes made in one call.

SQLAlchemy's pool and its aiosqlite adapter cross into the driver's thread about five times a
statement (checkout, cursor, execute, close, rollback). On the hottest paths, recording an
answer and the review item it queues, this writer runs the whole transaction, every statement
of it, in one call into its thread.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Trace = Callable[[str | None], None]
Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[[sqlite3.Connection], Any]]


class SqliteWriter:
    """Run functions of one sqlite3 connection in its own thread, one call each.

    A queue and a future per call, as aiosqlite does; concurrent.futures' executor costs
    noticeably more on a path taken for every answer.
    """

    def __init__(
        self,
        path: str,
        pragmas: Sequence[str],
        *,
        timeout: float = 30,
        setup: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        """Open nothing yet: the thread and its connection start with the first call.

        ``setup``, if given, is called with the connection once it is open (after the pragmas),
        in the writer's thread: to define functions its statements use.
        """
        self.path = path
        self.pragmas = tuple(pragmas)
        self.timeout = timeout
        self.setup = setup
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self._trace: Trace | None = None
        self._traced = False

    def trace(self, callback: Trace | None) -> None:
        """Call ``callback(sql)`` for each statement and ``callback(None)`` for each call.

        None stops it. A trace costs the writer thread the GIL once more per statement.
        """
        self._trace = callback

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` in the writer's thread and return its result."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="quizbot-sqlite", daemon=True)
            self._thread.start()
        self._jobs.put((loop, future, fn))
        return await future

    async def execute(self, sql: str, params: Sequence[Any]) -> int:
        """Run one statement that is atomic on its own; return its rowcount."""
        return await self.run(lambda conn: conn.execute(sql, params).rowcount)

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, future, fn = job
            try:
                result = self._call(fn)
            except BaseException as exc:
                loop.call_soon_threadsafe(_fail, future, exc)
            else:
                loop.call_soon_threadsafe(_settle, future, result)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._conn
        if conn is None:
            # Autocommit (isolation_level None): the functions issue BEGIN themselves.
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            for pragma in self.pragmas:
                conn.execute(pragma)
            if self.setup is not None:
                self.setup(conn)
            self._conn = conn
        if self._trace is not None:
            self._trace(None)
            conn.set_trace_callback(self._trace)
            self._traced = True
        elif self._traced:
            conn.set_trace_callback(None)
            self._traced = False
        return fn(conn)

    async def close(self) -> None:
        """Finish the calls under way, close the connection and stop the thread."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._jobs.put(None)
        await asyncio.get_running_loop().run_in_executor(None, thread.join)


def _settle(future: asyncio.Future[Any], result: Any) -> None:
    if not future.cancelled():
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.cancelled():
        future.set_exception(exc)


def in_transaction(fn: Callable[[sqlite3.Connection], T]) -> Callable[[sqlite3.Connection], T]:
    """Wrap ``fn`` in BEGIN IMMEDIATE ... COMMIT (ROLLBACK when it raises)."""

    def run(conn: sqlite3.Connection) -> T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    return run
