"""Shared pieces of the storage benchmarks: a fresh database, a one-question bank, counters.

Not a benchmark itself; ``engine_answers.py`` and ``history_soak.py`` import it.
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.bank.loader import load_bank  # noqa: E402
from bot.engine.model import Question  # noqa: E402

BANK = ROOT / "questions"
POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep this process's garbage collector out of a timed stretch (collect first).

    The process that plays the platform and sends the load holds every request and response
    it has seen; a full collection of its heap (15-34 ms measured in the Discord runs) stalls every
    click in flight, and lands on whichever bot is being timed.
    """
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@asynccontextmanager
async def database(postgres: str | None, label: str = "bench") -> AsyncIterator[str]:
    """Yield the URL of an empty database: a temporary SQLite file, or a new PostgreSQL one."""
    if postgres is None:
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite+aiosqlite:///{Path(tmp) / f'{label}.db'}"
        return
    import asyncpg

    name = f"quizbot_{label}_{os.getpid()}_{time.monotonic_ns() % 10**9}"
    conn = await asyncpg.connect(postgres.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"{postgres.rpartition('/')[0]}/{name}"
        finally:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


class Bank:
    """A bank of the given questions only (by default the bundled bank's first question)."""

    def __init__(self, questions: tuple[Question, ...] | None = None) -> None:
        full = load_bank([BANK])
        self.questions = questions if questions is not None else full.filter(None)[:1]
        self._by_id = {q.id: q for q in self.questions}

    def filter(self, tag: str | None) -> tuple[Question, ...]:
        """Return the questions with this tag (all with None, the same tuple each time, as the
        real bank gives)."""
        if tag is None:
            return self.questions
        return tuple(q for q in self.questions if tag in q.tags)

    def by_id(self, question_id: str) -> Question:
        """Return the question with this id (KeyError if unknown)."""
        return self._by_id[question_id]

    @property
    def templates(self) -> tuple[str, ...]:
        """Return no template: this bank asks no computed question."""
        return ()

    def instance(self, template_id: str, seed: int) -> Question:
        """Raise KeyError: there are no templates."""
        raise KeyError(f"{template_id}#{seed}")


def wrong_key(question: Question, i: int) -> str:
    """Return one of the question's wrong choices, spread by ``i``."""
    wrong = [k for k in question.keys if k != question.answer]
    return wrong[i % len(wrong)]


@dataclass
class Counts:
    """Statements the database executed and round trips waited for, since a mark."""

    statements: int = 0
    round_trips: int = 0


# Transaction control, not counted as statements.
CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")


class StatementCounter:
    """Count what a store sends to its database, on every path it has.

    Statements are SQL statements other than transaction control (BEGIN, COMMIT, ROLLBACK, and
    the SAVEPOINT and RELEASE that the SQLite writer puts around each call it groups). Round
    trips are the waits on the database: on PostgreSQL each statement, BEGIN, COMMIT, ROLLBACK
    and connection ping is one network exchange; on SQLite each is a call into the driver's
    thread, except on the store's own writer, which runs a whole answer in one call.
    """

    def __init__(self, store: Any) -> None:
        self.counts = Counts()
        self.store = store
        self.postgres = store.dialect == "postgresql"
        dialect = store.engine.dialect
        ping = dialect.do_ping
        self.attached = self._patched = False

        def counted_ping(dbapi_connection: Any) -> Any:
            if self.attached:
                # asyncpg's ping outside autocommit is BEGIN, an empty statement, ROLLBACK.
                self.counts.round_trips += 3 if self.postgres else 1
            return ping(dbapi_connection)

        dialect.do_ping = counted_ping
        self.attach()

    def attach(self) -> None:
        """Start counting (counting costs time: time work with the counter detached)."""
        from sqlalchemy import event

        sync = self.store.engine.sync_engine
        event.listen(sync, "before_cursor_execute", self._statement)
        for name in ("begin", "commit", "rollback"):
            if self.postgres or name != "begin":  # SQLite's BEGIN is a statement, seen above
                event.listen(sync, name, self._control)
        tracer = getattr(self.store, "trace_raw_statements", None)
        if tracer is not None:
            tracer(self._raw)
        elif not self._patched:
            self._patch_aiosqlite()
            self._patched = True
        self.attached = True

    def detach(self) -> None:
        """Stop counting."""
        from sqlalchemy import event

        sync = self.store.engine.sync_engine
        event.remove(sync, "before_cursor_execute", self._statement)
        for name in ("begin", "commit", "rollback"):
            if self.postgres or name != "begin":
                event.remove(sync, name, self._control)
        tracer = getattr(self.store, "trace_raw_statements", None)
        if tracer is not None:
            tracer(None)
        self.attached = False

    def _statement(self, _conn: Any, _cur: Any, sql: str, *_: Any) -> None:
        self._saw(sql)

    def _saw(self, sql: str) -> None:
        head = sql.lstrip()[:9].upper()
        if not head.startswith(CONTROL):
            self.counts.statements += 1
        self.counts.round_trips += 1

    def _control(self, conn: Any, *_: Any) -> None:
        # In autocommit (the store's reads on PostgreSQL) no BEGIN, COMMIT or ROLLBACK is sent.
        if conn.get_execution_options().get("isolation_level") != "AUTOCOMMIT":
            self.counts.round_trips += 1

    def _raw(self, sql: str | None) -> None:
        """Count a statement on a raw path (None marks one round trip carrying them)."""
        if sql is None:
            self.counts.round_trips += 1
        elif not sql.lstrip()[:9].upper().startswith(CONTROL):
            self.counts.statements += 1

    def _patch_aiosqlite(self) -> None:
        # A store without a raw-path tracer sends its single-statement writes through
        # aiosqlite.Connection.execute, which SQLAlchemy itself never calls.
        import aiosqlite

        original = aiosqlite.Connection.execute
        counter = self

        async def execute(self: Any, sql: str, parameters: Any = None) -> Any:
            if counter.attached:
                counter._saw(sql)
            return await original(self, sql, parameters)

        aiosqlite.Connection.execute = execute  # type: ignore[method-assign]

    def mark(self) -> Counts:
        """Return a copy of the counts so far."""
        return Counts(self.counts.statements, self.counts.round_trips)

    def since(self, mark: Counts, n: int) -> tuple[float, float]:
        """Return (statements, round trips) per item over ``n`` items since ``mark``."""
        return (
            (self.counts.statements - mark.statements) / n,
            (self.counts.round_trips - mark.round_trips) / n,
        )


@dataclass
class Lap:
    """Wall and CPU seconds over a stretch of work."""

    wall: float
    cpu: float


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system, every thread) a process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def lap() -> Callable[[], Lap]:
    """Start a lap; the returned function ends it."""
    wall0, cpu0 = time.perf_counter(), time.process_time()

    def end() -> Lap:
        return Lap(time.perf_counter() - wall0, time.process_time() - cpu0)

    return end
