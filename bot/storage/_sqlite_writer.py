"""A SQLite connection of its own for writes made in one call, run on the event loop's thread.

SQLAlchemy's pool and its aiosqlite adapter cross into the driver's thread about five times a
statement (checkout, cursor, execute, close, rollback). On the hottest paths, recording an
answer and the review item it queues, and claiming a request, this writer runs the whole
transaction, every statement of it, in one call.

Calls that are waiting together share a transaction (group commit): the calls made during one
turn of the event loop run, each under a savepoint, in one ``BEGIN IMMEDIATE ... COMMIT`` at the
end of that turn. A call still sees only its own effect: each is atomic (a call that raises is
rolled back to its savepoint, and the others go on), and none hears of its success before the
commit that makes it durable. What the group saves is the commit's work, paid once for all of
them (the WAL frames of the pages they share).

The group runs on the event loop's own thread. A thread of its own would have to take the GIL
back after every statement (sqlite3 lets it go around each step) while the loop's thread keeps
it busy parsing and sending, and under load it waited for it most of the time it had work: a
group of a few statements took milliseconds. On the loop's thread a group is the little CPU time
its statements cost, and it never waits on a lock there:

- its connection does not wait for the database's write lock (``busy_timeout`` 0). When
  another connection holds it (SQLAlchemy's pool, writing a round), the group goes to the
  writer's thread, which waits for the lock as long as ``timeout`` allows; so do the calls
  after it until the thread has finished, which keeps them in order;
- it never checkpoints the WAL at a commit (``wal_autocheckpoint`` 0): every
  ``CHECKPOINT_EVERY`` commits the writer's thread makes a passive checkpoint instead.

``inline=False`` sends every group to the thread (and was how every write ran before).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

log = logging.getLogger(__name__)

T = TypeVar("T")
Trace = Callable[[str | None], None]
Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[[sqlite3.Connection], Any]]
Work = Job | object | None
# What a call came to: (True, its result) or (False, what it raised).
Outcome = tuple[bool, Any]

# At most this many calls share one transaction.
GROUP = 64
# The loop's connection leaves the WAL to grow; the thread checkpoints it after this many of
# its commits (a group of answers writes a few pages; SQLite's own default is 1,000 pages).
CHECKPOINT_EVERY = 200
# What the thread is asked to do besides calls: checkpoint the WAL.
_CHECKPOINT = object()


class SqliteWriter:
    """Run functions of a sqlite3 connection, each call atomic, calls made together grouped.

    On the event loop's thread (see the module's docstring), or in a thread of its own: a
    queue and a future per call there, as aiosqlite does; concurrent.futures' executor costs
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
        inline: bool = True,
        checkpoint_every: int = CHECKPOINT_EVERY,
    ) -> None:
        """Open nothing yet: the connections (and the thread) start with the first call.

        ``setup``, if given, is called with each connection once it is open (after the
        pragmas): to define functions its statements use. ``group`` is the most calls that
        share a transaction (1: each its own). ``inline`` runs groups on the event loop's
        thread while nothing holds the write lock; ``checkpoint_every`` is how many of its
        commits the WAL is left to grow for.
        """
        if group < 1:
            raise ValueError("a group holds at least one call")
        self.path = path
        self.pragmas = tuple(pragmas)
        self.timeout = timeout
        self.setup = setup
        self.group = group
        self.inline = inline
        self.checkpoint_every = checkpoint_every
        self._jobs: queue.SimpleQueue[Work] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self._trace: Trace | None = None
        self._traced: set[int] = set()
        # On the loop's thread: the loop served there, its connection, the calls of this turn,
        # how many calls the thread still has of that loop's, and commits since a checkpoint.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_conn: sqlite3.Connection | None = None
        self._pending: list[Job] = []
        self._handed = 0
        self._commits = 0
        self._checkpoint_asked = False
        # How many transactions the writer committed, and how many calls they carried; how
        # many groups went to the thread because the write lock was taken, and checkpoints.
        self.transactions = 0
        self.calls = 0
        self.handed_over = 0
        self.checkpoints = 0

    def trace(self, callback: Trace | None) -> None:
        """Call ``callback(sql)`` for each statement and ``callback(None)`` for each call.

        None stops it. A trace costs a Python call per statement.
        """
        self._trace = callback

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` atomically; return its result.

        ``fn`` runs inside a transaction the writer opens and commits (it issues no BEGIN,
        COMMIT or ROLLBACK of its own); its result comes back once that commit is made, and
        what it raises comes back with everything it did undone.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if self.inline and (self._loop is loop or self._serves(loop)):
            self._pending.append((loop, future, fn))
            if len(self._pending) == 1:
                loop.call_soon(self._flush)
        else:
            # Another loop's call (a second loop in the process) always goes to the thread.
            self._hand_over((loop, future, fn), counted=False)
        return await future

    async def execute(self, sql: str, params: Sequence[Any]) -> int:
        """Run one statement; return its rowcount."""
        return await self.run(lambda conn: conn.execute(sql, params).rowcount)

    # ---------------------------------------------------------------- on the loop's thread

    def _serves(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Take on ``loop`` if the writer serves none yet, or only one that is closed."""
        if self._loop is not None and not self._loop.is_closed():
            return False
        # A closed loop's calls never ran and nobody waits for them any more.
        self._loop, self._pending, self._handed = loop, [], 0
        return True

    def _flush(self) -> None:
        """Run this turn's calls, a group at a time, unless they must follow calls to the thread."""
        jobs, self._pending = self._pending, []
        for first in range(0, len(jobs), self.group):
            chunk = jobs[first : first + self.group]
            outcomes = None if self._handed else self._run_on_loop([fn for _, _, fn in chunk])
            if outcomes is None:
                for job in chunk:
                    self._hand_over(job, counted=True)
            else:
                _settle(list(zip((future for _, future, _ in chunk), outcomes, strict=True)))

    def _run_on_loop(self, fns: list[Callable[[sqlite3.Connection], Any]]) -> list[Outcome] | None:
        """Run a group on the loop's connection; None if the write lock is another's."""
        try:
            conn = self._loop_conn
            if conn is None:
                conn = self._loop_conn = self._open(timeout=0.0, inline=True)
            self._follow_trace(conn)
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            # The primary code, under extended ones such as SQLITE_BUSY_RECOVERY.
            if exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                self.handed_over += 1
                return None
            return [(False, exc)] * len(fns)
        except BaseException as exc:
            return [(False, exc)] * len(fns)
        committed, outcomes = self._in_transaction(conn, fns)
        if committed:
            self._commits += 1
            if self._commits >= self.checkpoint_every and not self._checkpoint_asked:
                self._commits = 0
                self._checkpoint_asked = True
                self._start_thread()
                self._jobs.put(_CHECKPOINT)
        return outcomes

    # ---------------------------------------------------------------- in the writer's thread

    def _hand_over(self, job: Job, *, counted: bool) -> None:
        if counted:
            self._handed += 1
        self._start_thread()
        self._jobs.put(job)

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="quizbot-sqlite", daemon=True)
            self._thread.start()

    def _serve(self) -> None:
        stopping = False
        while not stopping and (work := self._jobs.get()) is not None:
            if work is _CHECKPOINT:
                self._checkpoint()
                continue
            jobs = [cast(Job, work)]
            while len(jobs) < self.group:
                try:
                    work = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if work is None:
                    stopping = True
                    break
                if work is _CHECKPOINT:
                    self._checkpoint()
                    continue
                jobs.append(cast(Job, work))
            outcomes = self._run_in_thread([fn for _, _, fn in jobs])
            self._deliver(jobs, outcomes)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _run_in_thread(self, fns: list[Callable[[sqlite3.Connection], Any]]) -> list[Outcome]:
        try:
            conn = self._thread_connection()
            self._follow_trace(conn)
            conn.execute("BEGIN IMMEDIATE")
        except BaseException as exc:
            return [(False, exc)] * len(fns)
        return self._in_transaction(conn, fns)[1]

    def _thread_connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open(timeout=self.timeout, inline=False)
        return self._conn

    def _checkpoint(self) -> None:
        """Copy the WAL's committed pages into the database, without waiting for anyone."""
        self._checkpoint_asked = False
        try:
            self._thread_connection().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            self.checkpoints += 1
        except sqlite3.Error:
            log.warning("could not checkpoint the WAL of %s", self.path, exc_info=True)

    def _deliver(self, jobs: list[Job], outcomes: list[Outcome]) -> None:
        """Hand each loop its calls' outcomes, in one wake-up per loop."""
        loops: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Outcome]]] = {}
        for (loop, future, _), outcome in zip(jobs, outcomes, strict=True):
            loops.setdefault(loop, []).append((future, outcome))
        for loop, settled in loops.items():
            counted = len(settled) if loop is self._loop else 0
            # A loop closed meanwhile has nobody left waiting for these.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._settle_handed, settled, counted)

    def _settle_handed(self, settled: list[tuple[asyncio.Future[Any], Outcome]], n: int) -> None:
        self._handed -= n
        _settle(settled)

    # ---------------------------------------------------------------- either

    def _open(self, *, timeout: float, inline: bool) -> sqlite3.Connection:
        # Autocommit (isolation_level None): the writer issues BEGIN and COMMIT itself.
        conn = sqlite3.connect(
            self.path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        for pragma in self.pragmas:
            conn.execute(pragma)
        if inline:
            # After the pragmas, which may set a busy timeout of their own.
            conn.execute("PRAGMA busy_timeout=0")
            conn.execute("PRAGMA wal_autocheckpoint=0")
        if self.setup is not None:
            self.setup(conn)
        return conn

    def _follow_trace(self, conn: sqlite3.Connection) -> None:
        if self._trace is not None:
            conn.set_trace_callback(self._trace)
            self._traced.add(id(conn))
        elif id(conn) in self._traced:
            conn.set_trace_callback(None)
            self._traced.discard(id(conn))

    def _in_transaction(
        self, conn: sqlite3.Connection, fns: list[Callable[[sqlite3.Connection], Any]]
    ) -> tuple[bool, list[Outcome]]:
        """Run the calls in the open transaction, each under its own savepoint; commit them.

        Return whether the transaction was committed, and each call's outcome.
        """
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
                    return False, [(False, exc)] * len(fns)
                try:
                    if alone:
                        conn.execute("ROLLBACK")
                    else:
                        conn.execute("ROLLBACK TO quizbot_call")
                        conn.execute("RELEASE quizbot_call")
                except BaseException as undo:
                    return False, [(False, undo)] * len(fns)
                outcomes.append((False, exc))
                if alone:
                    return False, outcomes
            else:
                outcomes.append((True, result))
        try:
            conn.execute("COMMIT")
        except BaseException as exc:
            _roll_back(conn)
            return False, [(False, exc)] * len(fns)
        self.transactions += 1
        self.calls += len(fns)
        return True, outcomes

    async def close(self) -> None:
        """Finish the calls under way, close the connections and stop the thread."""
        if self._pending:
            self._flush()
        if self._loop_conn is not None:
            self._loop_conn.close()
            self._loop_conn = None
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


def _settle(settled: list[tuple[asyncio.Future[Any], Outcome]]) -> None:
    for future, (ok, value) in settled:
        if future.cancelled():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
