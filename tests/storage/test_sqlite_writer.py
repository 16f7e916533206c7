"""The SQLite writer: calls waiting together share one transaction, and each stays atomic.

Each rule holds on the event loop's thread (where the writer runs its groups) and in the
writer's own thread (where a group goes while another connection holds the write lock).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.storage._sqlite_writer import SqliteWriter

PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON")
Call = Callable[[sqlite3.Connection], Any]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    db = tmp_path / "writer.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        conn.execute("INSERT INTO parent VALUES (1)")
        # Checked at COMMIT, so a violation fails the commit, not the statement.
        conn.execute(
            "CREATE TABLE row (name TEXT PRIMARY KEY, parent INTEGER NOT NULL"
            " REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
        )
    return db


@pytest.fixture(params=["on the loop", "in its thread"])
async def writer(request: pytest.FixtureRequest, path: Path) -> AsyncIterator[SqliteWriter]:
    w = SqliteWriter(str(path), PRAGMAS, inline=request.param == "on the loop")
    try:
        yield w
    finally:
        await w.close()


def stored(path: Path) -> set[str]:
    """Return the rows a separate connection sees: what is committed."""
    with sqlite3.connect(path) as conn:
        return {name for (name,) in conn.execute("SELECT name FROM row")}


def insert(name: str, parent: int = 1) -> Call:
    def call(conn: sqlite3.Connection) -> str:
        conn.execute("INSERT INTO row VALUES (?, ?)", (name, parent))
        return name

    return call


def insert_then_fail(name: str) -> Call:
    def call(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO row VALUES (?, 1)", (name,))
        raise LookupError(f"{name} failed after its insert")

    return call


async def grouped(writer: SqliteWriter, calls: list[Call]) -> list[Any]:
    """Make ``calls`` together, so that they share a transaction.

    On the loop, calls made in one turn of it are; in the thread, those that queue while it is
    held on another call. Return each call's result, or what it raised.
    """
    begun: list[str] = []
    if writer.inline:
        writer.trace(lambda sql: sql is not None and sql.startswith("BEGIN") and begun.append(sql))
        results = await asyncio.gather(
            *(writer.run(call) for call in calls), return_exceptions=True
        )
        writer.trace(None)
        assert begun == ["BEGIN IMMEDIATE"], "the calls shared one transaction"
        return results
    started, gate = threading.Event(), threading.Event()

    def hold(conn: sqlite3.Connection) -> str:
        started.set()
        gate.wait(10)
        return "held"

    holding = asyncio.ensure_future(writer.run(hold))
    assert await asyncio.to_thread(started.wait, 10)
    # From here on, every transaction the writer opens is the queued calls'.
    writer.trace(lambda sql: sql is not None and sql.startswith("BEGIN") and begun.append(sql))
    queued = [asyncio.ensure_future(writer.run(call)) for call in calls]
    await asyncio.sleep(0)  # one turn of the loop: each task puts its call on the queue
    gate.set()
    assert await holding == "held"
    results = await asyncio.gather(*queued, return_exceptions=True)
    writer.trace(None)
    assert begun == ["BEGIN IMMEDIATE"], "the queued calls shared one transaction"
    return results


async def test_calls_waiting_together_are_committed_in_one_transaction(
    writer: SqliteWriter, path: Path
):
    results = await grouped(writer, [insert(f"r{i}") for i in range(10)])
    assert results == [f"r{i}" for i in range(10)]
    assert stored(path) == {f"r{i}" for i in range(10)}
    assert writer.calls == (10 if writer.inline else 11)


async def test_a_call_that_fails_in_a_group_is_undone_alone(writer: SqliteWriter, path: Path):
    results = await grouped(writer, [insert("a"), insert_then_fail("b"), insert("c")])
    assert results[0] == "a" and results[2] == "c"
    assert isinstance(results[1], LookupError)
    assert stored(path) == {"a", "c"}


async def test_a_statement_error_fails_only_its_call(writer: SqliteWriter, path: Path):
    await writer.run(insert("dup"))
    results = await grouped(writer, [insert("x"), insert("dup"), insert("y")])
    assert isinstance(results[1], sqlite3.IntegrityError)
    assert stored(path) == {"dup", "x", "y"}


async def test_each_result_comes_once_its_commit_is_made(writer: SqliteWriter, path: Path):
    seen: list[bool] = []

    async def one(name: str) -> None:
        await writer.run(insert(name))
        seen.append(name in stored(path))

    await asyncio.gather(*(one(f"n{i}") for i in range(20)))
    assert seen == [True] * 20


async def test_a_failed_commit_fails_every_call_of_its_group(writer: SqliteWriter, path: Path):
    # The orphan's parent does not exist: the deferred check fails the group's COMMIT.
    results = await grouped(writer, [insert("p"), insert("orphan", parent=99), insert("q")])
    assert all(isinstance(r, sqlite3.IntegrityError) for r in results), results
    assert stored(path) == set()
    # The connection is usable again.
    assert await writer.run(insert("after")) == "after"
    assert stored(path) == {"after"}


async def test_a_transaction_rolled_back_under_the_group_fails_all_of_it(
    writer: SqliteWriter, path: Path
):
    def lose_everything(conn: sqlite3.Connection) -> None:
        # What SQLite does itself on a full disk or an I/O error: the whole transaction goes.
        conn.execute("ROLLBACK")
        raise sqlite3.OperationalError("database or disk is full")

    results = await grouped(writer, [insert("e"), lose_everything, insert("f")])
    assert all(isinstance(r, sqlite3.OperationalError) for r in results), results
    assert stored(path) == set()
    assert await writer.run(insert("g")) == "g"


async def test_alone_a_failing_call_is_rolled_back(writer: SqliteWriter, path: Path):
    with pytest.raises(LookupError):
        await writer.run(insert_then_fail("solo"))
    assert stored(path) == set()
    assert await writer.run(insert("next")) == "next"
    assert stored(path) == {"next"}


async def test_a_group_of_one_commits_each_call_alone(path: Path):
    writer = SqliteWriter(str(path), PRAGMAS, group=1)
    try:
        await asyncio.gather(*(writer.run(insert(f"s{i}")) for i in range(5)))
        assert writer.transactions == writer.calls == 5
    finally:
        await writer.close()
    with pytest.raises(ValueError, match="at least one"):
        SqliteWriter(str(path), PRAGMAS, group=0)


async def test_the_group_size_bounds_a_transaction(path: Path):
    writer = SqliteWriter(str(path), PRAGMAS, group=4, inline=False)
    try:
        started, gate = threading.Event(), threading.Event()

        def hold(conn: sqlite3.Connection) -> None:
            started.set()
            gate.wait(10)

        holding = asyncio.ensure_future(writer.run(hold))
        assert await asyncio.to_thread(started.wait, 10)
        queued = [asyncio.ensure_future(writer.run(insert(f"g{i}"))) for i in range(10)]
        await asyncio.sleep(0)
        gate.set()
        await holding
        await asyncio.gather(*queued)
        # The held call, then 10 calls in groups of at most 4: 4, 4, 2.
        assert (writer.transactions, writer.calls) == (4, 11)
    finally:
        await writer.close()
    assert len(stored(path)) == 10


async def test_on_the_loop_the_group_size_bounds_a_transaction_too(path: Path):
    writer = SqliteWriter(str(path), PRAGMAS, group=4)
    try:
        await asyncio.gather(*(writer.run(insert(f"g{i}")) for i in range(10)))
        assert (writer.transactions, writer.calls) == (3, 10)
    finally:
        await writer.close()
    assert len(stored(path)) == 10


# ---------------------------------------------------------------- on the loop's thread


def where(conn: sqlite3.Connection) -> str:
    return threading.current_thread().name


async def test_groups_run_on_the_loops_thread_and_start_no_thread(path: Path):
    writer = SqliteWriter(str(path), PRAGMAS)
    try:
        assert await writer.run(where) == threading.current_thread().name
        assert writer._thread is None and writer.handed_over == 0
    finally:
        await writer.close()


@pytest.fixture
def write_lock(path: Path) -> Iterator[sqlite3.Connection]:
    """Another connection, for tests that take the database's write lock with it."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


async def test_a_write_lock_held_elsewhere_sends_the_group_to_the_thread(
    path: Path, write_lock: sqlite3.Connection
):
    writer = SqliteWriter(str(path), PRAGMAS, timeout=10)
    try:
        write_lock.execute("BEGIN IMMEDIATE")
        first = asyncio.ensure_future(writer.run(insert("first")))
        # One turn for the call to be made, one for its group to meet the lock.
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert writer.handed_over == 1 and not first.done()
        # While the thread has that call, later calls follow it there, in order.
        second = asyncio.ensure_future(writer.run(lambda conn: (where(conn), stored_in(conn))))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert writer.handed_over == 1 and not second.done()
        # The loop was never blocked: this test runs while the lock is held.
        write_lock.execute("COMMIT")
        assert await first == "first"
        assert await second == ("quizbot-sqlite", {"first"})
        # The thread is done: the next group runs on the loop again.
        assert await writer.run(where) == threading.current_thread().name
    finally:
        await writer.close()
    assert stored(path) == {"first"}


def stored_in(conn: sqlite3.Connection) -> set[str]:
    return {name for (name,) in conn.execute("SELECT name FROM row")}


async def test_the_loops_connection_never_waits_and_leaves_checkpoints_to_the_thread(path: Path):
    writer = SqliteWriter(str(path), (*PRAGMAS, "PRAGMA busy_timeout=30000"), checkpoint_every=3)
    try:

        def settings(conn: sqlite3.Connection) -> tuple[int, int]:
            busy = conn.execute("PRAGMA busy_timeout").fetchone()[0]
            return busy, conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]

        # Whatever the pragmas say: no wait for the write lock, no checkpoint at a commit.
        assert await writer.run(settings) == (0, 0)
        # That was commit 1; commit 3 asks the thread for a checkpoint; commit 4 counts anew.
        for i in range(3):
            await writer.run(insert(f"c{i}"))
    finally:
        await writer.close()  # the thread finishes what it was asked first
    assert (writer.checkpoints, writer.handed_over, writer.transactions) == (1, 0, 4)
    assert len(stored(path)) == 3


async def test_another_loops_calls_go_to_the_thread(path: Path):
    writer = SqliteWriter(str(path), PRAGMAS)
    try:
        assert await writer.run(where) == threading.current_thread().name
        elsewhere = await asyncio.to_thread(asyncio.run, writer.run(where))
        assert elsewhere == "quizbot-sqlite"
    finally:
        await writer.close()


def test_a_writer_whose_loop_closed_serves_the_next_loop(path: Path):
    writer = SqliteWriter(str(path), PRAGMAS)

    async def once(name: str) -> str:
        assert await writer.run(insert(name)) == name
        return await writer.run(where)

    assert asyncio.run(once("first")) == threading.current_thread().name
    assert asyncio.run(once("second")) == threading.current_thread().name
    assert writer.handed_over == 0 and writer._thread is None
    asyncio.run(writer.close())
    assert stored(path) == {"first", "second"}
