"""A SQLite connection of its own, in a thread of its own, for writes made in one call.

SQLAlchemy's pool and its aiosqlite adapter cross into the driver's thread about five times a
statement (checkout, cursor, execute, close, rollback). On the hottest paths, recording an
answer and the review item it queues, and claiming a request, this writer runs the whole
transaction, every statement of it, in one call into its thread.

Calls that are waiting together share a transaction (group commit): while the writer commits
one, the next few queue up behind it, and it then runs each of them under a savepoint of one
``BEGIN IMMEDIATE ... COMMIT``. A call still sees only its own effect: each is atomic (a call
that raises is rolled back to its savepoint, and the others go on), and none hears of its
success before the commit that makes it durable. What the group saves is the commit's work,
paid once for all of them (the WAL frames of the pages they share), and one wake-up of the event
loop for all their results instead of one each.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Trace = Callable[[str | None], None]
Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[[sqlite3.Connection], Any]]
# What a call came to: (True, its result) or (False, what it raised).
Outcome = tuple[bool, Any]

# At most this many calls share one transaction.
GROUP = 64


class SqliteWriter:
    """Run functions of one sqlite3 connection in its own thread, each call atomic.

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
        group: int = GROUP,
    ) -> None:
        """Open nothing yet: the thread and its connection start with the first call.

        ``setup``, if given, is called with the connection once it is open (after the pragmas),
        in the writer's thread: to define functions its statements use. ``group`` is the most
        calls that share a transaction (1: each its own).
        """
        if group < 1:
            raise ValueError("a group holds at least one call")
        self.path = path
        self.pragmas = tuple(pragmas)
        self.timeout = timeout
        self.setup = setup
        self.group = group
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self._trace: Trace | None = None
        self._traced = False
        # How many transactions the writer committed, and how many calls they carried.
        self.transactions = 0
        self.calls = 0

    def trace(self, callback: Trace | None) -> None:
        """Call ``callback(sql)`` for each statement and ``callback(None)`` for each call.

        None stops it. A trace costs the writer thread the GIL once more per statement.
        """
        self._trace = callback

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` in the writer's thread, atomically; return its result.

        ``fn`` runs inside a transaction the writer opens and commits (it issues no BEGIN,
        COMMIT or ROLLBACK of its own); its result comes back once that commit is made, and
        what it raises comes back with everything it did undone.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="quizbot-sqlite", daemon=True)
            self._thread.start()
        self._jobs.put((loop, future, fn))
        return await future

    async def execute(self, sql: str, params: Sequence[Any]) -> int:
        """Run one statement; return its rowcount."""
        return await self.run(lambda conn: conn.execute(sql, params).rowcount)

    def _serve(self) -> None:
        stopping = False
        while not stopping and (job := self._jobs.get()) is not None:
            jobs = [job]
            while len(jobs) < self.group:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    stopping = True
                    break
                jobs.append(job)
            outcomes = self._run_group([fn for _, _, fn in jobs])
            _deliver(jobs, outcomes)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> sqlite3.Connection:
        conn = self._conn
        if conn is None:
            # Autocommit (isolation_level None): the writer issues BEGIN and COMMIT itself.
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            for pragma in self.pragmas:
                conn.execute(pragma)
            if self.setup is not None:
                self.setup(conn)
            self._conn = conn
        if self._trace is not None:
            conn.set_trace_callback(self._trace)
            self._traced = True
        elif self._traced:
            conn.set_trace_callback(None)
            self._traced = False
        return conn

    def _run_group(self, fns: list[Callable[[sqlite3.Connection], Any]]) -> list[Outcome]:
        """Run the calls in one transaction, each under its own savepoint; commit them."""
        try:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
        except BaseException as exc:
            return [(False, exc)] * len(fns)
        alone = len(fns) == 1
        outcomes: list[Outcome] = []
        for fn in fns:
            if self._trace is not None:
                self._trace(None)
            try:
                if not alone:
                    conn.execute("SAVEPOINT quizbot_call")
                result = fn(conn)
                if not alone:
                    conn.execute("RELEASE quizbot_call")
            except BaseException as exc:
                if not conn.in_transaction:
                    # SQLite rolled the whole transaction back (a full disk, an I/O error):
                    # the calls before this one are undone too, and the rest are not run.
                    return [(False, exc)] * len(fns)
                try:
                    if alone:
                        conn.execute("ROLLBACK")
                    else:
                        conn.execute("ROLLBACK TO quizbot_call")
                        conn.execute("RELEASE quizbot_call")
                except BaseException as undo:
                    return [(False, undo)] * len(fns)
                outcomes.append((False, exc))
                if alone:
                    return outcomes
            else:
                outcomes.append((True, result))
        try:
            conn.execute("COMMIT")
        except BaseException as exc:
            _roll_back(conn)
            return [(False, exc)] * len(fns)
        self.transactions += 1
        self.calls += len(fns)
        return outcomes

    async def close(self) -> None:
        """Finish the calls under way, close the connection and stop the thread."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._jobs.put(None)
        await asyncio.get_running_loop().run_in_executor(None, thread.join)


def _roll_back(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        # If this fails too the connection is unusable, and the next group's BEGIN says so.
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _deliver(jobs: list[Job], outcomes: list[Outcome]) -> None:
    """Hand each loop its calls' outcomes, in one wake-up per loop."""
    loops: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Outcome]]] = {}
    for (loop, future, _), outcome in zip(jobs, outcomes, strict=True):
        loops.setdefault(loop, []).append((future, outcome))
    for loop, settled in loops.items():
        loop.call_soon_threadsafe(_settle, settled)


def _settle(settled: list[tuple[asyncio.Future[Any], Outcome]]) -> None:
    for future, (ok, value) in settled:
        if future.cancelled():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
