"""The SQL store: SQLAlchemy Core, async, on SQLite (aiosqlite) or PostgreSQL (asyncpg)."""

from __future__ import annotations

import collections
import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, DisconnectionError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from bot.config import SQLITE_SYNCHRONOUS
from bot.engine.learning import Study
from bot.engine.model import (
    AnswerRecord,
    AnswerStatus,
    ChannelSettings,
    DifficultyMode,
    Place,
    QuestionStats,
    ReviewScope,
    Round,
    ScoreRow,
    WorkspaceSettings,
)
from bot.engine.ports import RoundAlreadyOpen, utc_now
from bot.errors import ConfigError
from bot.storage._analytics import AnalyticsSql
from bot.storage._answers import (
    CARD_READ,
    CARD_WRITE,
    POSTGRES_ANSWER,
    Compiled,
    Outcome,
    StoredAnswer,
    answer_params,
    answer_steps,
    build_statements,
    postgres_args,
    postgres_outcome,
    postgres_stored_card,
    run_on_connection,
    sqlite_answer_upsert,
    sqlite_learn,
    sqlite_outcome,
    sqlite_settle,
)
from bot.storage._bank import BankSql
from bot.storage._cards import CardCache, CardsSql
from bot.storage._dashboard import DashboardSql
from bot.storage._hot import in_place, param, place_params
from bot.storage._metrics import with_round_metrics
from bot.storage._retry import with_retries
from bot.storage._schedules import ScheduleSql
from bot.storage._schema import (
    UTCDateTime,
    answers,
    channel_settings,
    current_version,
    latest_version,
    rounds,
    upgrade,
    workspace_settings,
)
from bot.storage._sqlite_writer import SqliteWriter, Trace
from bot.storage._tracks import TracksSql

log = logging.getLogger(__name__)


# The statements of a round's life, which every post and close runs: built once, each
# compiled once, and run past SQLAlchemy's connection and cursor layers (``SqlStore._hot_rows``).
_ROUND = rounds.select().where(rounds.c.id == param("r_id", rounds.c.id))
_OPEN_ROUND = rounds.select().where(in_place(rounds), rounds.c.closed_at.is_(None))
_CLOSE_ROUND = (
    rounds.update()
    .where(rounds.c.id == param("r_id", rounds.c.id), rounds.c.closed_at.is_(None))
    .values(
        closed_at=param("r_at", rounds.c.closed_at),
        reveal_owner=param("r_owner", rounds.c.reveal_owner),
        reveal_until=param("r_until", rounds.c.reveal_until),
    )
    .returning(*rounds.c)
)
_SET_MESSAGE_REF = (
    rounds.update()
    .where(rounds.c.id == param("r_id", rounds.c.id))
    .values(message_ref=param("r_ref", rounds.c.message_ref))
)
_HELD_REVEAL = sa.and_(
    rounds.c.id == param("r_id", rounds.c.id),
    rounds.c.revealed_at.is_(None),
    rounds.c.reveal_owner == param("r_owner", rounds.c.reveal_owner),
)
_HOLD_REVEAL = (
    rounds.update().where(_HELD_REVEAL).values(reveal_until=param("r_until", rounds.c.reveal_until))
)
_MARK_REVEALED = (
    rounds.update()
    .where(_HELD_REVEAL)
    .values(revealed_at=param("r_at", rounds.c.revealed_at), reveal_until=None)
)
_QUESTION_COUNTS = (
    sa.select(rounds.c.question_id, sa.func.count().label("asked"))
    .where(in_place(rounds))
    .group_by(rounds.c.question_id)
)
_ROUND_ANSWERS = (
    answers.select()
    .where(answers.c.round_id == param("r_id", answers.c.round_id))
    .order_by(answers.c.answered_at, answers.c.id)
)
_CHANNEL_SETTINGS = channel_settings.select().where(in_place(channel_settings))

# QUIZBOT_SQLITE_SYNCHRONOUS: FULL syncs the WAL at every commit, so an acknowledged answer
# survives power loss or an OS crash; NORMAL syncs at checkpoints only (a process crash loses
# nothing, power loss may lose the last commits); EXTRA also syncs the folder after a commit.
DEFAULT_SQLITE_SYNCHRONOUS = "FULL"


def sqlite_pragmas(synchronous: str = DEFAULT_SQLITE_SYNCHRONOUS) -> tuple[str, ...]:
    """Return the pragmas every SQLite connection runs, with this ``synchronous`` level."""
    if synchronous not in SQLITE_SYNCHRONOUS:
        raise ConfigError(
            f"QUIZBOT_SQLITE_SYNCHRONOUS must be one of {', '.join(SQLITE_SYNCHRONOUS)}"
        )
    return (
        "PRAGMA journal_mode=WAL",
        f"PRAGMA synchronous={synchronous}",
        "PRAGMA busy_timeout=30000",
        "PRAGMA foreign_keys=ON",
    )


# How long the process that closes a round (or claims its reveal) has to post the results
# before any replica may claim the reveal and post them instead.
REVEAL_LEASE = timedelta(minutes=1)

# Round ids are integer keys: the largest a signed 64-bit column (PostgreSQL, SQLite) holds.
ROUND_ID_MAX = 2**63 - 1

# A pooled PostgreSQL connection idle for longer than this is pinged before it is used again;
# one in steady use is not (a lost one fails its statement, which is retried on a new one).
IDLE_BEFORE_PING = 1.0


def _result_columns(stmt: Any, dialect: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """Return the names of the columns a statement returns and each one's result processor."""
    if not isinstance(stmt, sa.Select) and not getattr(stmt, "_returning", ()):
        return (), ()
    columns = list(stmt.exported_columns)
    names = tuple(str(c.key) for c in columns)
    results = tuple(c.type.dialect_impl(dialect).result_processor(dialect, None) for c in columns)
    return names, results


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
        revision=row.revision,
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


def make_engine(
    url: str,
    *,
    pool_size: int = 5,
    max_overflow: int = 10,
    sqlite_synchronous: str = DEFAULT_SQLITE_SYNCHRONOUS,
) -> AsyncEngine:
    """Create the SQLAlchemy engine with the settings each database needs."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        # The value is not echoed: it may hold a password.
        raise ConfigError("QUIZBOT_DATABASE_URL is not a database URL") from None
    supported = {"sqlite": "aiosqlite", "postgresql": "asyncpg"}
    if supported.get(parsed.get_backend_name()) != parsed.get_driver_name():
        raise ConfigError(
            "QUIZBOT_DATABASE_URL must be sqlite+aiosqlite:///FILE or postgresql+asyncpg://..., "
            f"not {parsed.drivername}"
        )
    if parsed.get_backend_name() == "sqlite":
        # Every transaction ends in an explicit COMMIT or ROLLBACK, so the pool's extra
        # rollback on return would only cost a round trip to the driver's thread.
        engine = create_async_engine(
            url, connect_args={"timeout": 30}, pool_reset_on_return=None, hide_parameters=True
        )
        _tune_sqlite(engine, sqlite_pragmas(sqlite_synchronous))
        return engine
    # QueuePool closes an overflow connection as soon as it is returned while the pool holds
    # ``pool_size`` idle ones; under steady load above pool_size that closed and reopened a
    # connection (and prepared its statements again) every few answers. Connections opened
    # under load are kept instead, never more than pool_size + max_overflow.
    engine = create_async_engine(
        url, pool_size=pool_size + max_overflow, max_overflow=0, hide_parameters=True
    )
    _ping_when_idle(engine)
    return engine


def _ping_when_idle(engine: AsyncEngine) -> None:
    """Ping a pooled connection before use only when it sat idle, instead of every time.

    SQLAlchemy's ``pool_pre_ping`` costs three round trips on asyncpg (BEGIN, ping, ROLLBACK)
    on every checkout, more than the statement a checkout is usually for.
    """
    pool = engine.sync_engine.pool
    dialect = engine.sync_engine.dialect

    @event.listens_for(pool, "checkin")
    def _on_checkin(_dbapi_conn: Any, record: Any) -> None:
        if record is not None:
            record.info["quizbot_idle_since"] = time.monotonic()

    @event.listens_for(pool, "checkout")
    def _on_checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("quizbot_idle_since")
        if since is None or time.monotonic() - since < IDLE_BEFORE_PING:
            return
        try:
            dialect.do_ping(dbapi_conn)
        except Exception as exc:
            # The pool drops this connection and checks out (or opens) another.
            raise DisconnectionError("a pooled connection failed its ping") from exc


def _tune_sqlite(engine: AsyncEngine, pragmas: tuple[str, ...]) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let us issue BEGIN ourselves: writers take the lock up front (IMMEDIATE), so two
        # writers never deadlock upgrading a read lock; the busy timeout then queues them.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        for pragma in pragmas:
            cur.execute(pragma)
        cur.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # Reads run as autocommit statements (WAL readers never block); writes lock up front.
        if not conn.get_execution_options().get("quizbot_autocommit", False):
            conn.exec_driver_sql("BEGIN IMMEDIATE")


@with_round_metrics
@with_retries
class SqlStore(ScheduleSql, CardsSql, AnalyticsSql, DashboardSql, TracksSql, BankSql):
    """The Store and ScheduleStore protocols on SQLAlchemy Core; each method is one transaction."""

    def __init__(
        self, engine: AsyncEngine, *, sqlite_synchronous: str = DEFAULT_SQLITE_SYNCHRONOUS
    ) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        # This store's token on the reveals it holds (rounds.reveal_owner).
        self.claimant = secrets.token_hex(8)
        self._compiled_cache: dict[int, Compiled] = {}
        self._raw_trace: Trace | None = None
        database = engine.url.database
        in_file = self.dialect == "sqlite" and database not in (None, "", ":memory:")
        self._stored_answer = StoredAnswer()
        self._card_cache = CardCache()
        self._writer = (
            SqliteWriter(
                str(database),
                sqlite_pragmas(sqlite_synchronous),
                setup=self._stored_answer.register,
            )
            if in_file
            else None
        )
        self._answer_statements = build_statements(self._insert)
        self._sqlite_answer = sqlite_answer_upsert() if in_file else None
        self._scheduled_results = self._build_scheduled_results()

    # -------------------------------------------------------------- plumbing

    @property
    def answers_at_once(self) -> int:
        """As many answers as the SQLite writer commits together, or the pool's connections."""
        if self._writer is not None:
            return self._writer.group
        size = getattr(self.engine.sync_engine.pool, "size", None)
        # SQLite in memory: one connection, shared by every checkout, so one answer at a time.
        return size() if callable(size) else 1

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """Open a write transaction (committed on exit, rolled back on error)."""
        async with self.engine.begin() as conn:
            yield conn

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """Open a connection for reads, each statement in autocommit.

        On SQLite no BEGIN is issued (WAL readers never block); on PostgreSQL autocommit saves
        the BEGIN and ROLLBACK round trips around each read.
        """
        async with self.engine.connect() as conn:
            if self.dialect == "postgresql":
                await conn.execution_options(isolation_level="AUTOCOMMIT")
            else:
                await conn.execution_options(quizbot_autocommit=True)
            yield conn

    def _insert(self, table: sa.Table) -> Any:
        if self.dialect == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    async def _execute_one(self, stmt: Any, params: dict[str, Any]) -> int:
        """Run one self-contained write statement built once with bind parameters; return rowcount.

        On a SQLite file the statement goes, compiled once, to the store's writer: one call,
        grouped with the others of the loop's turn, instead of five crossings into a driver
        thread through SQLAlchemy's pool and adapter.
        """
        if self._writer is None:
            async with self.write() as conn:
                return int((await conn.execute(stmt, params)).rowcount)
        compiled = self._compiled(stmt)
        return await self._writer.execute(compiled.sql, compiled.values(params))

    async def _execute_many(self, stmt: Any, rows: list[dict[str, Any]]) -> None:
        """Run one write statement built once over many rows, in one transaction.

        On a SQLite file it goes to the store's writer, grouped with the loop's other writes,
        instead of taking the database's write lock from them through SQLAlchemy's pool (which
        sends the writer's groups to its thread while it holds it).
        """
        if self._writer is None:
            async with self.write() as conn:
                await conn.execute(stmt, rows)
            return
        compiled = self._compiled(stmt)
        values = [compiled.values(row) for row in rows]
        await self._writer.run(lambda conn: conn.executemany(compiled.sql, values).rowcount)

    def _compiled(self, stmt: Any) -> Compiled:
        cached = self._compiled_cache.get(id(stmt))
        if cached is None:
            compiled = stmt.compile(dialect=self.engine.dialect)
            names = tuple(compiled.positiontup or ())
            processors, constants = {}, {}
            for name in names:
                bind = compiled.binds[name]
                # The dialect's own processor, as SQLAlchemy's execute uses: the generic one
                # would leave a datetime to sqlite3, which drops zero microseconds, and stored
                # timestamps would then no longer sort as text.
                dialect = self.engine.dialect
                processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
                if isinstance(bind.type, UTCDateTime) and dialect.name == "sqlite":
                    processor = UTCDateTime.sqlite_text  # the same text, in one call
                if processor is not None:
                    processors[name] = processor
                if not bind.required:
                    constants[name] = bind.effective_value
            columns, results = _result_columns(stmt, self.engine.dialect)
            cached = Compiled(
                compiled.string,
                names,
                processors,
                constants,
                columns,
                results,
                collections.namedtuple("HotRow", columns, rename=True) if columns else None,
            )
            self._compiled_cache[id(stmt)] = cached
        return cached

    def trace_raw_statements(self, callback: Trace | None) -> None:
        """Report what the store sends outside SQLAlchemy's cursors (for benchmarks and tests).

        ``callback(sql)`` for each statement and ``callback(None)`` for each round trip that
        carries them: on SQLite, a call into the writer; on PostgreSQL, an answer's one
        statement. SQLAlchemy's own events cover everything else. None stops the report.
        """
        self._raw_trace = callback
        if self._writer is not None:
            self._writer.trace(callback)

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
        revision: int | None = None,
    ) -> Round:
        """Insert an open round; raise RoundAlreadyOpen if the channel has one."""
        values = dict(
            revision=revision,
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
            revision=revision,
        )

    async def set_message_ref(self, round_id: int, ref: str) -> None:
        """Remember which platform message shows the round."""
        await self._hot_write(_SET_MESSAGE_REF, {"r_id": round_id, "r_ref": ref})

    async def get_round(self, round_id: int) -> Round | None:
        """Return the round, or None."""
        if not 0 < round_id <= ROUND_ID_MAX:
            # An id from a forged button that no integer column can hold names no round.
            return None
        rows = await self._hot_rows(_ROUND, {"r_id": round_id})
        return _round(rows[0]) if rows else None

    async def open_round(self, place: Place) -> Round | None:
        """Return the open round in this channel, if any."""
        rows = await self._hot_rows(_OPEN_ROUND, place_params(place))
        return _round(rows[0]) if rows else None

    async def due_rounds(self, platform: str, now: datetime) -> list[Round]:
        """Return the open rounds of a platform whose closing time has passed."""
        due = (rounds.c.closes_at.is_not(None), rounds.c.closes_at <= now)
        return await self._open_rounds(platform, *due, order=rounds.c.closes_at)

    async def open_rounds(self, platform: str, workspace: str) -> list[Round]:
        """Return every open round of a workspace, whatever its closing time."""
        return await self._open_rounds(platform, rounds.c.workspace == workspace, order=rounds.c.id)

    async def _open_rounds(self, platform: str, *where: Any, order: Any) -> list[Round]:
        query = (
            rounds.select()
            .where(rounds.c.platform == platform, rounds.c.closed_at.is_(None), *where)
            .order_by(order)
        )
        async with self.read() as conn:
            return [_round(r) for r in await conn.execute(query)]

    async def question_counts(self, place: Place) -> dict[str, int]:
        """Return how many rounds each question has had in this channel."""
        rows = await self._hot_rows(_QUESTION_COUNTS, place_params(place))
        return {qid: int(n) for qid, n in rows}

    async def recent_players(self, place: Place, since: datetime, limit: int) -> list[str]:
        """Return up to ``limit`` people who answered rounds in this channel since ``since``,
        the latest first."""
        latest = sa.func.max(answers.c.answered_at)
        query = (
            sa.select(answers.c.user_id)
            .where(
                _place_filter(answers, place),
                answers.c.answered_at >= sa.bindparam("since", since, type_=UTCDateTime()),
            )
            .group_by(answers.c.user_id)
            .order_by(latest.desc(), answers.c.user_id)
            .limit(limit)
        )
        async with self.read() as conn:
            return [str(user) for (user,) in await conn.execute(query)]

    async def delete_unseen_round(self, round_id: int) -> bool:
        """Delete an open round nobody answered; return whether it was deleted."""
        unanswered = ~sa.exists().where(answers.c.round_id == round_id)
        query = rounds.delete().where(
            rounds.c.id == round_id, rounds.c.closed_at.is_(None), unanswered
        )
        async with self.write() as conn:
            result = await conn.execute(query)
        return bool(result.rowcount == 1)

    async def close_round(self, round_id: int, at: datetime) -> Round | None:
        """Mark the round closed; return it, as closed, only to the one caller that closed it
        (None to every other, and for a round that does not exist).

        The closer holds the round's reveal for ``REVEAL_LEASE``: past it, unless
        ``mark_revealed`` was called, any replica's ``claim_reveals`` takes it over.
        """
        if not 0 < round_id <= ROUND_ID_MAX:
            return None
        params = {
            "r_id": round_id,
            "r_at": at,
            "r_owner": self.claimant,
            "r_until": at + REVEAL_LEASE,
        }
        # In a transaction of its own: a commit whose reply is lost is reconciled by the retry
        # layer (``_retry.RECONCILE``), which reads the round's closing time.
        async with self.write() as conn:
            row = (await conn.execute(_CLOSE_ROUND, params)).first()
        return _round(row) if row is not None else None

    async def claim_reveals(self, platform: str, now: datetime, limit: int = 20) -> list[int]:
        """Claim closed, unrevealed rounds whose reveal lease ran out; return the ids won.

        Each claim is a conditional update, so of replicas claiming together one wins a round.
        """
        unrevealed = sa.and_(
            rounds.c.closed_at.is_not(None),
            rounds.c.revealed_at.is_(None),
            sa.or_(rounds.c.reveal_until.is_(None), rounds.c.reveal_until < now),
        )
        query = (
            sa.select(rounds.c.id)
            .where(rounds.c.platform == platform, unrevealed)
            .order_by(rounds.c.reveal_until)
            .limit(limit)
        )
        async with self.read() as conn:
            ids = [row.id for row in await conn.execute(query)]
        won = []
        for round_id in ids:
            claim = (
                rounds.update()
                .where(rounds.c.id == round_id, unrevealed)
                .values(reveal_owner=self.claimant, reveal_until=now + REVEAL_LEASE)
            )
            async with self.write() as conn:
                if (await conn.execute(claim)).rowcount == 1:
                    won.append(round_id)
        return won

    async def hold_reveal(self, round_id: int, now: datetime) -> bool:
        """Extend this store's lease on a reveal it holds; False once another has taken it over
        (or it is done)."""
        params = {"r_id": round_id, "r_owner": self.claimant, "r_until": now + REVEAL_LEASE}
        return await self._hot_write(_HOLD_REVEAL, params) == 1

    async def mark_revealed(self, round_id: int, at: datetime) -> bool:
        """Record the round's reveal as posted; False if another replica has taken it over."""
        params = {"r_id": round_id, "r_owner": self.claimant, "r_at": at}
        return await self._hot_write(_MARK_REVEALED, params) == 1

    # -------------------------------------------------------------- answers

    async def record_answer(
        self,
        answer: AnswerRecord,
        *,
        allow_change: bool | None = None,
        study: Study | None = None,
    ) -> tuple[AnswerStatus, AnswerRecord | None]:
        """Store an answer at most once per (round, user), in one round trip; see the protocol.

        ``allow_change`` says whether a different second answer replaces the first (None: as
        the channel's settings say). ``study`` is the answer's review of the person's card:
        applied, in the same transaction, when the answer is inserted.
        """
        if study is not None and study.key.user != answer.user:
            raise ValueError("a card goes with its own user's answer")
        if self.dialect == "postgresql":
            outcome = await self._answer_on_postgres(answer, allow_change, study)
            if outcome is not None:
                return outcome
        elif self._writer is not None:
            # Parameters converted here, before the call: a call the writer's thread takes
            # (while the write lock is another's) then has only the statements to run.
            upsert = self._compiled(self._sqlite_answer)
            values = upsert.values(answer_params(answer) | {"a_allow": allow_change})
            learn = None
            if study is not None:
                statements = self._answer_statements
                learn = sqlite_learn(
                    study,
                    self._card_cache,
                    self._compiled(statements[CARD_READ]),
                    self._compiled(statements[CARD_WRITE]),
                )
            call = sqlite_settle(self._stored_answer, upsert.sql, values, learn)
            return sqlite_outcome(answer, await self._writer.run(call))
        # An in-memory SQLite database, or a PostgreSQL click that raced the same user's other
        # click: the same decisions, statement by statement, in one transaction.
        async with self.write() as conn:
            steps = answer_steps(
                answer, allow_change=allow_change, study=study, remember=self._card_cache.put
            )
            return await run_on_connection(conn, steps, self._answer_statements)

    async def _answer_on_postgres(
        self, answer: AnswerRecord, allow_change: bool | None, study: Study | None
    ) -> Outcome | None:
        """Run the answer's one statement on a pooled asyncpg connection, in autocommit.

        The first run expects no card (a question the person never answered); a stored card
        comes back with a ``stale`` outcome, and the second run reviews that one.
        """
        prior = None if study is None else self._card_cache.get(study.key)
        for _ in range(3):
            async with self._asyncpg(POSTGRES_ANSWER) as driver:
                # asyncpg prepares the statement once per connection and keeps it.
                args = postgres_args(answer, allow_change, study, prior)
                row = await driver.fetchrow(POSTGRES_ANSWER, *args)
            if row[0] != "stale" or study is None:
                if row[0] == "accepted" and study is not None:
                    expected = 0 if prior is None else prior.version
                    self._card_cache.put(study.apply(prior, version=expected + 1))
                return postgres_outcome(answer, row)
            prior = postgres_stored_card(study, row)
        return None

    @asynccontextmanager
    async def _asyncpg(self, sql: str) -> AsyncIterator[Any]:
        """Lend the asyncpg connection of a pooled connection for ``sql``, run in autocommit.

        SQLAlchemy's cursor layer costs more CPU than the statements of the hottest paths; they
        go to the driver itself. A failure that may leave the connection in an unknown state
        drops it from the pool, and reaches the retry layer as SQLAlchemy would raise it.
        """
        import asyncpg

        async with self.engine.connect() as conn:
            driver: Any = (await conn.get_raw_connection()).driver_connection
            if self._raw_trace is not None:
                self._raw_trace(None)
                self._raw_trace(sql)
            try:
                yield driver
            except BaseException as exc:
                lost = isinstance(exc, OSError | asyncpg.PostgresConnectionError)
                lost = lost or driver.is_closed()
                if lost or not isinstance(exc, Exception):
                    # Cancelled mid-statement, or cut off: never hand this one back.
                    await conn.invalidate()
                if not isinstance(exc, Exception) or isinstance(exc, DBAPIError):
                    raise
                raise DBAPIError(sql, None, exc, connection_invalidated=lost) from exc

    async def _fetch_hot(
        self, stmt: Any, params: dict[str, Any], *, writes: bool = False
    ) -> list[tuple[Any, ...]]:
        """Run one statement of a hot path in one round trip; return its rows as the driver
        gives them (SQLite: timestamps as text, booleans as integers).

        A statement that ``writes`` must be atomic on its own: it runs in autocommit.
        """
        compiled = self._compiled(stmt)
        values = compiled.values(params)
        if self._writer is not None:
            sql = compiled.sql
            return await self._writer.run(lambda conn: conn.execute(sql, values).fetchall())
        if self.dialect == "postgresql":
            async with self._asyncpg(compiled.sql) as driver:
                return [tuple(row) for row in await driver.fetch(compiled.sql, *values)]
        context = self.write() if writes else self.read()
        async with context as conn:
            return [tuple(row) for row in await conn.execute(stmt, params)]

    async def _hot_rows(
        self, stmt: Any, params: dict[str, Any], *, writes: bool = False
    ) -> list[Any]:
        """Run a statement built once with bind parameters, in one round trip, past
        SQLAlchemy's connection and cursor layers where a raw driver connection serves (the
        SQLite file's writer, asyncpg); return its rows typed and read by column name as
        SQLAlchemy's own would be. A statement that ``writes`` must be atomic on its own: on
        PostgreSQL it runs in autocommit.
        """
        compiled = self._compiled(stmt)
        if self._writer is None and self.dialect != "postgresql":
            context = self.write() if writes else self.read()
            async with context as conn:
                result = await conn.execute(stmt, params)
                return list(result) if result.returns_rows else []
        return compiled.rows(await self._fetch_hot(stmt, params, writes=writes))

    async def _hot_write(self, stmt: Any, params: dict[str, Any]) -> int:
        """Run one self-contained write built once with bind parameters, in one round trip
        (autocommit on PostgreSQL, the writer's call on a SQLite file); return its row count."""
        if self.dialect != "postgresql":
            return await self._execute_one(stmt, params)
        compiled = self._compiled(stmt)
        async with self._asyncpg(compiled.sql) as driver:
            status = await driver.execute(compiled.sql, *compiled.values(params))
        # asyncpg gives the command tag: "UPDATE 1", "INSERT 0 1", "DELETE 0".
        return int(status.rsplit(" ", 1)[-1])

    async def count_answers(self, round_id: int) -> int:
        """Return how many users answered the round."""
        query = (
            sa.select(sa.func.count()).select_from(answers).where(answers.c.round_id == round_id)
        )
        async with self.read() as conn:
            return int((await conn.execute(query)).scalar_one())

    async def round_answers(self, round_id: int) -> list[AnswerRecord]:
        """Return every answer of the round, earliest first."""
        return [_answer(r) for r in await self._hot_rows(_ROUND_ANSWERS, {"r_id": round_id})]

    # -------------------------------------------------------------- settings and scores

    async def channel_settings(self, place: Place) -> ChannelSettings:
        """Return the channel's settings (defaults when never set)."""
        rows = await self._hot_rows(_CHANNEL_SETTINGS, place_params(place))
        if not rows:
            return ChannelSettings()
        row = rows[0]
        return ChannelSettings(
            allow_change=bool(row.allow_change),
            round_minutes=row.round_minutes,
            difficulty=DifficultyMode(row.difficulty or DifficultyMode.MIXED),
            computed_percent=row.computed_percent or 0,
        )

    async def set_channel_settings(self, place: Place, settings: ChannelSettings) -> None:
        """Store the channel's settings."""
        values = dict(
            allow_change=settings.allow_change,
            round_minutes=settings.round_minutes,
            difficulty=settings.difficulty.value,
            computed_percent=settings.computed_percent,
        )
        await self._upsert_for_place(channel_settings, place, values)

    async def workspace_settings(self, platform: str, workspace: str) -> WorkspaceSettings:
        """Return the workspace's settings (defaults when never set)."""
        query = workspace_settings.select().where(
            workspace_settings.c.platform == platform,
            workspace_settings.c.workspace == workspace,
        )
        async with self.read() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return WorkspaceSettings()
        return WorkspaceSettings(
            retention=row.retention, review=ReviewScope(row.review or ReviewScope.OTHERS)
        )

    async def set_workspace_settings(
        self, platform: str, workspace: str, settings: WorkspaceSettings
    ) -> None:
        """Store the workspace's settings."""
        values = {"retention": settings.retention, "review": settings.review.value}
        stmt = (
            self._insert(workspace_settings)
            .values(platform=platform, workspace=workspace, **values)
            .on_conflict_do_update(index_elements=["platform", "workspace"], set_=values)
        )
        async with self.write() as conn:
            await conn.execute(stmt)

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

    async def scheduled_results(
        self, place: Place, user: str, *, newest: int | None = None
    ) -> list[tuple[bool, bool | None]]:
        """Return (closed, correct-or-None-if-unanswered) per scheduled round, oldest first.

        With ``newest``, only that many of the latest rounds (still oldest first): the index
        on the channel's rounds is read backwards and stops there, whatever the history.
        """
        params: dict[str, Any] = {
            "s_platform": place.platform,
            "s_workspace": place.workspace,
            "s_channel": place.channel,
            "s_user": user,
        }
        if newest is None:
            stmt = self._scheduled_results[0]
        else:
            stmt, params["s_limit"] = self._scheduled_results[1], newest
        # A right answer in a daily round reads this at once.
        rows = await self._fetch_hot(stmt, params)
        results = [
            (closed is not None, None if correct is None else bool(correct))
            for closed, correct in rows
        ]
        return results if newest is None else results[::-1]

    @staticmethod
    def _build_scheduled_results() -> tuple[Any, Any]:
        """Build, once, the streak queries: every scheduled round, and the newest few."""
        mine = sa.and_(
            answers.c.round_id == rounds.c.id, answers.c.user_id == sa.bindparam("s_user")
        )
        query = (
            sa.select(rounds.c.closed_at, answers.c.correct)
            .select_from(rounds.outerjoin(answers, mine))
            .where(
                rounds.c.platform == sa.bindparam("s_platform"),
                rounds.c.workspace == sa.bindparam("s_workspace"),
                rounds.c.channel == sa.bindparam("s_channel"),
                rounds.c.scheduled.is_(True),
            )
        )
        every = query.order_by(rounds.c.opened_at, rounds.c.id)
        newest = query.order_by(rounds.c.opened_at.desc(), rounds.c.id.desc()).limit(
            sa.bindparam("s_limit", type_=sa.Integer())
        )
        return every, newest

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


class DatabaseUnusable(ConfigError):
    """The database at QUIZBOT_DATABASE_URL cannot be opened: a missing folder, a server down."""

    def __init__(self, url: str, error: BaseException) -> None:
        self.where = where_is(url)
        self.reason = first_line(error)
        super().__init__(f"cannot use the database at {self.where}: {self.reason}")


def where_is(url: str) -> str:
    """Return the database URL as safe to print: the password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "QUIZBOT_DATABASE_URL"


def first_line(error: BaseException) -> str:
    """Return the first line of what the driver said (not SQLAlchemy's wrapping of it)."""
    orig = getattr(error, "orig", None)
    lines = str(orig if orig is not None else error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _require_sqlite_folder(url: str) -> None:
    """Refuse an SQLite file whose folder does not exist, before the driver tries to open it."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return
    if parsed.database == ":memory:" or parsed.database.startswith("file:"):
        return
    folder = Path(parsed.database).absolute().parent
    if not folder.is_dir():
        hint = "" if parsed.database.startswith("/") else " (three slashes make a relative path)"
        raise DatabaseUnusable(url, FileNotFoundError(f"the folder {folder} does not exist{hint}"))


async def open_store(
    url: str,
    *,
    migrate: bool = True,
    pool_size: int = 5,
    max_overflow: int = 10,
    sqlite_synchronous: str = DEFAULT_SQLITE_SYNCHRONOUS,
) -> SqlStore:
    """Connect to the database at ``url`` and, unless told not to, apply migrations.

    A database that cannot be opened raises ``DatabaseUnusable``: one line naming it and why.
    """
    engine = make_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_overflow,
        sqlite_synchronous=sqlite_synchronous,
    )
    _require_sqlite_folder(url)
    store = SqlStore(engine, sqlite_synchronous=sqlite_synchronous)
    try:
        if migrate:
            applied = await store.upgrade()
            if applied:
                log.info("database schema upgraded to version %s", applied[-1])
        else:
            await _require_schema(store)
    except (DBAPIError, OSError) as exc:
        await store.close()
        raise DatabaseUnusable(url, exc) from exc
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
