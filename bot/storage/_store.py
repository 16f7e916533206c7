"""The SQL store: SQLAlchemy Core, async, on SQLite (aiosqlite) or PostgreSQL (asyncpg)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import aiosqlite
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from bot.engine.model import (
    AnswerRecord,
    AnswerStatus,
    ChannelSettings,
    DifficultyMode,
    Place,
    QuestionStats,
    Round,
    ScoreRow,
)
from bot.engine.ports import RoundAlreadyOpen, utc_now
from bot.engine.rules import second_answer
from bot.errors import ConfigError
from bot.storage._analytics import AnalyticsSql
from bot.storage._dashboard import DashboardSql
from bot.storage._metrics import with_round_metrics
from bot.storage._retry import with_retries
from bot.storage._review import ReviewSql
from bot.storage._schedules import ScheduleSql
from bot.storage._schema import (
    UTCDateTime,
    answers,
    channel_settings,
    current_version,
    latest_version,
    rounds,
    upgrade,
)

log = logging.getLogger(__name__)

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA busy_timeout=30000",
    "PRAGMA foreign_keys=ON",
)

# Round ids are integer keys: the largest a signed 64-bit column (PostgreSQL, SQLite) holds.
ROUND_ID_MAX = 2**63 - 1

_ANSWER_COLUMNS = [
    "round_id",
    "platform",
    "workspace",
    "channel",
    "user_id",
    "choice",
    "correct",
    "points",
    "answered_at",
    "elapsed_ms",
]


def _round(row: Any) -> Round:
    return Round(
        id=row.id,
        place=Place(row.platform, row.workspace, row.channel),
        question_id=row.question_id,
        opened_at=row.opened_at,
        closes_at=row.closes_at,
        closed_at=row.closed_at,
        message_ref=row.message_ref,
        scheduled=bool(row.scheduled),
        slot=row.slot,
    )


def _answer(row: Any) -> AnswerRecord:
    return AnswerRecord(
        round_id=row.round_id,
        user=row.user_id,
        choice=row.choice,
        correct=bool(row.correct),
        points=row.points,
        answered_at=row.answered_at,
        elapsed_ms=row.elapsed_ms,
    )


def _place_filter(table: sa.Table, place: Place) -> sa.ColumnElement[bool]:
    return sa.and_(
        table.c.platform == place.platform,
        table.c.workspace == place.workspace,
        table.c.channel == place.channel,
    )


def make_engine(url: str, *, pool_size: int = 5, max_overflow: int = 10) -> AsyncEngine:
    """Create the SQLAlchemy engine with the settings each database needs."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(f"QUIZBOT_DATABASE_URL is not a database URL: {url!r}") from None
    supported = {"sqlite": "aiosqlite", "postgresql": "asyncpg"}
    if supported.get(parsed.get_backend_name()) != parsed.get_driver_name():
        raise ConfigError(
            "QUIZBOT_DATABASE_URL must be sqlite+aiosqlite:///FILE or postgresql+asyncpg://..., "
            f"not {parsed.drivername}"
        )
    if parsed.get_backend_name() == "sqlite":
        # Every transaction ends in an explicit COMMIT or ROLLBACK, so the pool's extra
        # rollback on return would only cost a round trip to the driver's thread.
        engine = create_async_engine(url, connect_args={"timeout": 30}, pool_reset_on_return=None)
        _tune_sqlite(engine)
        return engine
    return create_async_engine(
        url, pool_size=pool_size, max_overflow=max_overflow, pool_pre_ping=True
    )


def _tune_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let us issue BEGIN ourselves: writers take the lock up front (IMMEDIATE), so two
        # writers never deadlock upgrading a read lock; the busy timeout then queues them.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        for pragma in SQLITE_PRAGMAS:
            cur.execute(pragma)
        cur.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # Reads run as autocommit statements (WAL readers never block); writes lock up front.
        if not conn.get_execution_options().get("quizbot_autocommit", False):
            conn.exec_driver_sql("BEGIN IMMEDIATE")


@with_round_metrics
@with_retries
class SqlStore(ScheduleSql, ReviewSql, AnalyticsSql, DashboardSql):
    """The Store and ScheduleStore protocols on SQLAlchemy Core; each method is one transaction."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._compiled_cache: dict[int, tuple[str, list[str], dict[str, Any]]] = {}
        database = engine.url.database
        in_file = self.dialect == "sqlite" and database not in (None, "", ":memory:")
        self._writer_path = database if in_file else None
        self._writer: aiosqlite.Connection | None = None
        self._writer_lock = asyncio.Lock()
        self._insert_answer = self._build_insert_answer()

    # -------------------------------------------------------------- plumbing

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """Open a write transaction (committed on exit, rolled back on error)."""
        async with self.engine.begin() as conn:
            yield conn

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """Open a connection for reads (on SQLite, autocommit statements)."""
        async with self.engine.connect() as conn:
            await conn.execution_options(quizbot_autocommit=True)
            yield conn

    @asynccontextmanager
    async def single(self) -> AsyncIterator[AsyncConnection]:
        """Open a connection for one statement that is atomic on its own.

        On SQLite it runs without BEGIN/COMMIT, which saves two round trips to the driver's
        thread on the hottest path; elsewhere it is an ordinary transaction.
        """
        if self.dialect == "sqlite":
            async with self.read() as conn:
                yield conn
        else:
            async with self.write() as conn:
                yield conn

    def _insert(self, table: sa.Table) -> Any:
        if self.dialect == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    async def _execute_one(self, stmt: Any, params: dict[str, Any]) -> int:
        """Run one self-contained write statement built once with bind parameters; return rowcount.

        On a SQLite file the statement goes, compiled once, to a connection of its own that
        stays open: SQLAlchemy's pool and adapter spend five round trips to the driver's thread
        on a statement (checkout, cursor, execute, close, rollback) and this takes one, which
        is most of the cost of recording an answer.
        """
        writer = await self._sqlite_writer()
        if writer is None:
            async with self.write() as conn:
                return int((await conn.execute(stmt, params)).rowcount)
        sql, names, processors = self._compiled(stmt)
        values = [
            processors[name](params[name]) if name in processors else params[name] for name in names
        ]
        # The sqlite3 cursor is released when garbage collected; closing it would cost another
        # round trip.
        cursor = await writer.execute(sql, values)
        return int(cursor.rowcount)

    async def _sqlite_writer(self) -> aiosqlite.Connection | None:
        """Return the SQLite file's single-statement writer (None on other databases)."""
        if self._writer is not None or self._writer_path is None:
            return self._writer
        async with self._writer_lock:
            if self._writer is None:
                conn = await aiosqlite.connect(self._writer_path, timeout=30, isolation_level=None)
                for pragma in SQLITE_PRAGMAS:
                    await conn.execute(pragma)
                self._writer = conn
        return self._writer

    def _compiled(self, stmt: Any) -> tuple[str, list[str], dict[str, Any]]:
        cached = self._compiled_cache.get(id(stmt))
        if cached is None:
            compiled = stmt.compile(dialect=self.engine.dialect)
            names = list(compiled.positiontup or [])
            processors = {}
            for name in names:
                processor = compiled.binds[name].type.bind_processor(self.engine.dialect)
                if processor is not None:
                    processors[name] = processor
            cached = (compiled.string, names, processors)
            self._compiled_cache[id(stmt)] = cached
        return cached

    def _build_insert_answer(self) -> Any:
        """Build, once, the statement that records an answer if the round is still open."""
        source = (
            sa.select(
                sa.bindparam("a_round", type_=sa.Integer()),
                rounds.c.platform,
                rounds.c.workspace,
                rounds.c.channel,
                sa.bindparam("a_user", type_=sa.String()),
                sa.bindparam("a_choice", type_=sa.String()),
                sa.bindparam("a_correct", type_=sa.Boolean()),
                sa.bindparam("a_points", type_=sa.Integer()),
                sa.bindparam("a_at", type_=UTCDateTime()),
                sa.bindparam("a_ms", type_=sa.BigInteger()),
            )
            .where(rounds.c.id == sa.bindparam("a_round"), rounds.c.closed_at.is_(None))
            .with_for_update(read=True)
        )
        return (
            self._insert(answers)
            .from_select(_ANSWER_COLUMNS, source)
            .on_conflict_do_nothing(index_elements=["round_id", "user_id"])
        )

    async def upgrade(self) -> list[int]:
        """Apply pending schema migrations; return the versions applied."""
        async with self.write() as conn:
            return await conn.run_sync(upgrade, utc_now())

    async def schema_version(self) -> int:
        """Return the applied schema version."""
        async with self.read() as conn:
            return await conn.run_sync(current_version)

    async def ping(self) -> None:
        """Run a trivial query (raises if the database cannot be reached)."""
        async with self.read() as conn:
            await conn.execute(sa.text("SELECT 1"))

    async def close(self) -> None:
        """Release connections."""
        if self._writer is not None:
            await self._writer.close()
            self._writer = None
        await self.engine.dispose()

    # -------------------------------------------------------------- rounds

    async def create_round(
        self,
        place: Place,
        question_id: str,
        *,
        opened_at: datetime,
        closes_at: datetime | None,
        scheduled: bool = False,
        slot: str | None = None,
    ) -> Round:
        """Insert an open round; raise RoundAlreadyOpen if the channel has one."""
        values = dict(
            platform=place.platform,
            workspace=place.workspace,
            channel=place.channel,
            question_id=question_id,
            opened_at=opened_at,
            closes_at=closes_at,
            scheduled=scheduled,
            slot=slot,
        )
        try:
            async with self.write() as conn:
                result = await conn.execute(rounds.insert().values(**values))
                key = result.inserted_primary_key
                assert key is not None
                round_id = key[0]
        except IntegrityError:
            raise RoundAlreadyOpen(f"{place} already has an open round") from None
        return Round(
            id=int(round_id),
            place=place,
            question_id=question_id,
            opened_at=opened_at,
            closes_at=closes_at,
            scheduled=scheduled,
            slot=slot,
        )

    async def set_message_ref(self, round_id: int, ref: str) -> None:
        """Remember which platform message shows the round."""
        async with self.write() as conn:
            await conn.execute(
                rounds.update().where(rounds.c.id == round_id).values(message_ref=ref)
            )

    async def get_round(self, round_id: int) -> Round | None:
        """Return the round, or None."""
        if not 0 < round_id <= ROUND_ID_MAX:
            # An id from a forged button that no integer column can hold names no round.
            return None
        async with self.read() as conn:
            row = (await conn.execute(rounds.select().where(rounds.c.id == round_id))).first()
        return _round(row) if row is not None else None

    async def open_round(self, place: Place) -> Round | None:
        """Return the open round in this channel, if any."""
        query = rounds.select().where(_place_filter(rounds, place), rounds.c.closed_at.is_(None))
        async with self.read() as conn:
            row = (await conn.execute(query)).first()
        return _round(row) if row is not None else None

    async def due_rounds(self, platform: str, now: datetime) -> list[Round]:
        """Return the open rounds of a platform whose closing time has passed."""
        query = (
            rounds.select()
            .where(
                rounds.c.platform == platform,
                rounds.c.closed_at.is_(None),
                rounds.c.closes_at.is_not(None),
                rounds.c.closes_at <= now,
            )
            .order_by(rounds.c.closes_at)
        )
        async with self.read() as conn:
            return [_round(r) for r in await conn.execute(query)]

    async def question_counts(self, place: Place) -> dict[str, int]:
        """Return how many rounds each question has had in this channel."""
        query = (
            sa.select(rounds.c.question_id, sa.func.count())
            .where(_place_filter(rounds, place))
            .group_by(rounds.c.question_id)
        )
        async with self.read() as conn:
            return {qid: int(n) for qid, n in await conn.execute(query)}

    async def delete_unseen_round(self, round_id: int) -> bool:
        """Delete an open round nobody answered; return whether it was deleted."""
        unanswered = ~sa.exists().where(answers.c.round_id == round_id)
        query = rounds.delete().where(
            rounds.c.id == round_id, rounds.c.closed_at.is_(None), unanswered
        )
        async with self.write() as conn:
            result = await conn.execute(query)
        return bool(result.rowcount == 1)

    async def close_round(self, round_id: int, at: datetime) -> bool:
        """Mark the round closed; return True only for the one caller that closed it."""
        query = (
            rounds.update()
            .where(rounds.c.id == round_id, rounds.c.closed_at.is_(None))
            .values(closed_at=at)
        )
        async with self.write() as conn:
            result = await conn.execute(query)
        return bool(result.rowcount == 1)

    # -------------------------------------------------------------- answers

    async def record_answer(self, answer: AnswerRecord) -> tuple[AnswerStatus, AnswerRecord | None]:
        """Store an answer at most once per (round, user); see the Store protocol."""
        # Fast path, one statement: insert only if the round is open and the user has no answer
        # yet. FOR SHARE (PostgreSQL) holds off a concurrent close, an UPDATE of the round,
        # until we commit, so no answer lands after its reveal was computed; on SQLite one
        # statement is atomic and writers are serialised by the database lock.
        params = {
            "a_round": answer.round_id,
            "a_user": answer.user,
            "a_choice": answer.choice,
            "a_correct": answer.correct,
            "a_points": answer.points,
            "a_at": answer.answered_at,
            "a_ms": answer.elapsed_ms,
        }
        if await self._execute_one(self._insert_answer, params) == 1:
            return AnswerStatus.ACCEPTED, None
        async with self.write() as conn:
            return await self._answer_conflict(conn, answer, params)

    async def _answer_conflict(
        self, conn: AsyncConnection, answer: AnswerRecord, params: dict[str, Any]
    ) -> tuple[AnswerStatus, AnswerRecord | None]:
        """Settle an answer that was not inserted: the round is closed, or the user answered."""
        rnd = (
            await conn.execute(
                rounds.select().where(rounds.c.id == answer.round_id).with_for_update(read=True)
            )
        ).first()
        if rnd is None or rnd.closed_at is not None:
            return AnswerStatus.CLOSED, None
        row = (
            await conn.execute(
                answers.select().where(
                    answers.c.round_id == answer.round_id, answers.c.user_id == answer.user
                )
            )
        ).first()
        if row is None:
            # Nothing stored and the round is open again from our point of view: insert now.
            await conn.execute(self._insert_answer, params)
            return AnswerStatus.ACCEPTED, None
        existing = _answer(row)
        allow_change = (
            await conn.execute(
                sa.select(channel_settings.c.allow_change).where(
                    channel_settings.c.platform == rnd.platform,
                    channel_settings.c.workspace == rnd.workspace,
                    channel_settings.c.channel == rnd.channel,
                )
            )
        ).scalar()
        status = second_answer(existing.choice, answer.choice, allow_change=bool(allow_change))
        if status is AnswerStatus.ALREADY:
            return AnswerStatus.ALREADY, existing
        await conn.execute(
            answers.update()
            .where(answers.c.round_id == answer.round_id, answers.c.user_id == answer.user)
            .values(
                choice=answer.choice,
                correct=answer.correct,
                points=answer.points,
                answered_at=answer.answered_at,
                elapsed_ms=answer.elapsed_ms,
            )
        )
        return AnswerStatus.CHANGED, existing

    async def count_answers(self, round_id: int) -> int:
        """Return how many users answered the round."""
        query = (
            sa.select(sa.func.count()).select_from(answers).where(answers.c.round_id == round_id)
        )
        async with self.read() as conn:
            return int((await conn.execute(query)).scalar_one())

    async def round_answers(self, round_id: int) -> list[AnswerRecord]:
        """Return every answer of the round, earliest first."""
        query = (
            answers.select()
            .where(answers.c.round_id == round_id)
            .order_by(answers.c.answered_at, answers.c.id)
        )
        async with self.read() as conn:
            return [_answer(r) for r in await conn.execute(query)]

    # -------------------------------------------------------------- settings and scores

    async def channel_settings(self, place: Place) -> ChannelSettings:
        """Return the channel's settings (defaults when never set)."""
        query = channel_settings.select().where(_place_filter(channel_settings, place))
        async with self.read() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return ChannelSettings()
        return ChannelSettings(
            allow_change=bool(row.allow_change),
            round_minutes=row.round_minutes,
            difficulty=DifficultyMode(row.difficulty or DifficultyMode.MIXED),
        )

    async def set_channel_settings(self, place: Place, settings: ChannelSettings) -> None:
        """Store the channel's settings."""
        values = dict(
            allow_change=settings.allow_change,
            round_minutes=settings.round_minutes,
            difficulty=settings.difficulty.value,
        )
        await self._upsert_for_place(channel_settings, place, values)

    async def _upsert_for_place(
        self, table: sa.Table, place: Place, values: dict[str, Any]
    ) -> None:
        """Insert or replace the row a table keeps per channel."""
        stmt = (
            self._insert(table)
            .values(
                platform=place.platform, workspace=place.workspace, channel=place.channel, **values
            )
            .on_conflict_do_update(index_elements=["platform", "workspace", "channel"], set_=values)
        )
        async with self.write() as conn:
            await conn.execute(stmt)

    async def score_rows(
        self, platform: str, workspace: str, since: datetime | None, user: str | None = None
    ) -> list[ScoreRow]:
        """Return per-user totals of answers since a time (all time with None)."""
        conditions = [answers.c.platform == platform, answers.c.workspace == workspace]
        if since is not None:
            conditions.append(answers.c.answered_at >= since)
        if user is not None:
            conditions.append(answers.c.user_id == user)
        query = (
            sa.select(
                answers.c.user_id,
                sa.func.sum(answers.c.points),
                sa.func.count(),
                sa.func.sum(sa.case((answers.c.correct, 1), else_=0)),
                sa.func.sum(answers.c.elapsed_ms),
            )
            .where(*conditions)
            .group_by(answers.c.user_id)
        )
        async with self.read() as conn:
            return [
                ScoreRow(u, int(p or 0), int(n), int(c or 0), int(ms or 0))
                for u, p, n, c, ms in await conn.execute(query)
            ]

    async def scheduled_results(self, place: Place, user: str) -> list[tuple[bool, bool | None]]:
        """Return (closed, correct-or-None-if-unanswered) per scheduled round, oldest first."""
        joined = rounds.outerjoin(
            answers, sa.and_(answers.c.round_id == rounds.c.id, answers.c.user_id == user)
        )
        query = (
            sa.select(rounds.c.closed_at, answers.c.correct)
            .select_from(joined)
            .where(_place_filter(rounds, place), rounds.c.scheduled.is_(True))
            .order_by(rounds.c.opened_at, rounds.c.id)
        )
        async with self.read() as conn:
            return [
                (closed is not None, None if correct is None else bool(correct))
                for closed, correct in await conn.execute(query)
            ]

    async def question_stats(
        self, platform: str, workspace: str, question_id: str
    ) -> QuestionStats:
        """Return how a question fared in a workspace."""
        where = sa.and_(
            rounds.c.platform == platform,
            rounds.c.workspace == workspace,
            rounds.c.question_id == question_id,
        )
        count_rounds = sa.select(sa.func.count()).select_from(rounds).where(where)
        count_answers = (
            sa.select(sa.func.count(), sa.func.sum(sa.case((answers.c.correct, 1), else_=0)))
            .select_from(answers.join(rounds, answers.c.round_id == rounds.c.id))
            .where(where)
        )
        async with self.read() as conn:
            n_rounds = int((await conn.execute(count_rounds)).scalar_one())
            n_answers, n_correct = (await conn.execute(count_answers)).one()
        return QuestionStats(question_id, n_rounds, int(n_answers or 0), int(n_correct or 0))


async def open_store(
    url: str, *, migrate: bool = True, pool_size: int = 5, max_overflow: int = 10
) -> SqlStore:
    """Connect to the database at ``url`` and, unless told not to, apply migrations."""
    store = SqlStore(make_engine(url, pool_size=pool_size, max_overflow=max_overflow))
    try:
        if migrate:
            applied = await store.upgrade()
            if applied:
                log.info("database schema upgraded to version %s", applied[-1])
        else:
            await _require_schema(store)
    except BaseException:
        await store.close()
        raise
    return store


async def _require_schema(store: SqlStore) -> None:
    """Refuse to run on a schema older than the code (migrations left to ``quizbot db``)."""
    current, expected = await store.schema_version(), latest_version()
    if current < expected:
        raise ConfigError(
            f"the database schema is at version {current} and this quizbot needs {expected}; "
            "run `quizbot db upgrade` (QUIZBOT_AUTO_MIGRATE is false)"
        )
    if current > expected:
        # A rolling upgrade: the new release migrated first; migrations only add, so go on.
        log.warning("database schema version %s is newer than this quizbot's %s", current, expected)
