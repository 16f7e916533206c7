"""Fixtures shared by the whole suite: clocks, a small bank, databases (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.engine.model import Choice, Difficulty, Question
from bot.observability.metrics import LOOP_PASS_LISTENERS
from bot.storage import SqlStore, open_store

PG_URL = os.environ.get("QUIZBOT_TEST_DATABASE_URL")


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> datetime:
        self.now += timedelta(**kwargs)
        return self.now


class ClockReads:
    """A clock that counts its reads, so that a test waits for a loop's next passes, not a time.

    The scheduler reads its clock at the start of every pass and at most ``READS_A_PASS`` times
    in one: ``passes(n)`` waits for enough reads that ``n`` whole passes ran since it was called.
    """

    READS_A_PASS = 3  # the most reads one pass of the daily scheduler makes

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.reads = 0
        self._waiting: list[tuple[int, asyncio.Event]] = []

    def __call__(self) -> datetime:
        self.reads += 1
        for target, event in self._waiting:
            if self.reads >= target:
                event.set()
        return self.clock()

    async def passes(self, count: int, *, within: float = 10.0) -> None:
        """Return once at least ``count`` whole passes have run since the call."""
        event = asyncio.Event()
        entry = (self.reads + (count + 1) * self.READS_A_PASS, event)
        self._waiting.append(entry)
        try:
            await asyncio.wait_for(event.wait(), within)
        finally:
            self._waiting.remove(entry)


async def loop_passes(loop: str, count: int, *, within: float = 10.0) -> None:
    """Return once ``count`` whole passes of a loop of this process ran since the call.

    For a check that "nothing more happens": each pass was a chance for it to happen. A pass
    already under way at the call may have begun before what the test just did, so it counts
    for nothing: ``count + 1`` passes must end. The count is the process's, so the test must
    run that loop once only (another one's passes would end the wait early).
    """
    ended = 0
    done = asyncio.Event()

    def heard(name: str) -> None:
        nonlocal ended
        if name == loop:
            ended += 1
            if ended > count:
                done.set()

    LOOP_PASS_LISTENERS.append(heard)
    try:
        await asyncio.wait_for(done.wait(), within)
    finally:
        LOOP_PASS_LISTENERS.remove(heard)


def make_question(
    qid: str,
    *,
    answer: str = "A",
    keys: str = "ABCD",
    difficulty: Difficulty = Difficulty.MEDIUM,
    tags: tuple[str, ...] = (),
) -> Question:
    """Build a small valid question."""
    return Question(
        id=qid,
        text=f"Question {qid}?",
        choices=tuple(Choice(k, f"choice {k} of {qid}") for k in keys),
        answer=answer,
        short=f"Short why for {qid}.",
        full=f"Full explanation for {qid}.",
        why_not={k: f"{k} is wrong" for k in keys if k != answer},
        tags=tags,
        difficulty=difficulty,
    )


class SimpleBank:
    """A bank over a fixed list of questions, for engine tests."""

    def __init__(self, questions: list[Question]) -> None:
        self.questions = tuple(questions)

    def filter(self, tag: str | None) -> tuple[Question, ...]:
        return tuple(q for q in self.questions if tag is None or tag in q.tags)

    def by_id(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(question_id)

    # No computed-question templates.
    templates: tuple[str, ...] = ()

    def instance(self, template_id: str, seed: int) -> Question:
        raise KeyError(f"{template_id}#{seed}")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


async def _create_pg_database(base_url: str) -> tuple[str, str]:
    import asyncpg

    name = f"quizbot_t_{uuid.uuid4().hex[:12]}"
    plain = base_url.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(plain)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    head, _, _ = base_url.rpartition("/")
    return name, f"{head}/{name}"


async def _drop_pg_database(base_url: str, name: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(base_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@pytest.fixture(params=["sqlite", "postgresql"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A fresh, empty database: a SQLite file, and a new PostgreSQL database when configured."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'quizbot.db'}"
        return
    if not PG_URL:
        pytest.skip("QUIZBOT_TEST_DATABASE_URL is not set (no PostgreSQL to test against)")
    name, url = await _create_pg_database(PG_URL)
    try:
        yield url
    finally:
        await _drop_pg_database(PG_URL, name)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite file database URL for tests that need only one backend."""
    return f"sqlite+aiosqlite:///{tmp_path / 'quizbot.db'}"


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[SqlStore]:
    s = await open_store(database_url)
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent
