"""Record an answer, and review the person's FSRS card with it, in one round trip.

Every outcome (accepted, changed, already, closed) is settled by one call to the database:

- PostgreSQL: one statement (``POSTGRES_ANSWER``): data-modifying CTEs insert the answer, or
  change it where allowed, and write the reviewed card and its log row, while ``FOR SHARE`` on
  the round holds off a concurrent close until the statement's own commit (it runs in
  autocommit). The card is reviewed before the statement, from the card it expects to find (the
  one this store wrote last, ``CardCache``, or none); the statement writes nothing unless the
  stored card is that one, and otherwise returns the stored card, so that a second run with the
  card reviewed from there settles it (``stale``).
- SQLite: one call into the store's writer (``SqliteWriter``). The answer is one upsert
  (``sqlite_answer_upsert``): it inserts into an open round, and on a second answer its
  ``DO UPDATE ... WHERE`` asks ``quizbot_second_answer`` (``StoredAnswer``, a function of the
  writer's connection) whether the engine's rule lets the answer change. That function is shown
  the stored row as it was before the statement, which RETURNING cannot report (it gives the
  values after an update), and keeps it: the statement's rowcount and that row tell all four
  outcomes apart. An inserted answer then writes its reviewed card in the same call (the writer
  makes the call one transaction): one statement, expecting the card this store wrote last.

Statement by statement, the decisions are ``answer_steps``, a generator that yields the
statements it needs and receives their results, driven by a SQLAlchemy transaction (an in-memory
SQLite database, or a PostgreSQL click racing the same user's other click). It and the SQLite
upsert leave the change to the engine's rule, ``rules.second_answer``; PostgreSQL's statement
says the same in SQL, and the storage suite runs every path against the same cases.

The card's review is the engine's (``learning.Study``). A round reviews a card once: with the
answer that is inserted; an answer changed later in the same round leaves the card alone.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite

from bot.engine.learning import MemoryCard, Study
from bot.engine.model import AnswerRecord, AnswerStatus
from bot.engine.rules import second_answer
from bot.storage._cards import (
    CardCache,
    card_from_row,
    card_params,
    card_select,
    card_upsert,
    key_params,
)
from bot.storage._schema import UTCDateTime, answers, channel_settings, rounds

Outcome = tuple[AnswerStatus, AnswerRecord | None]

INSERT, STATE, CHANGE = "insert", "state", "change"
CARD_READ, CARD_WRITE = "card_read", "card_write"

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


@dataclass(frozen=True, slots=True)
class Done:
    """What one statement did: its rowcount and first row (None when it returned none)."""

    rowcount: int
    row: tuple[Any, ...] | None


Steps = Generator[tuple[str, dict[str, Any]], Done, Outcome]


def answer_params(answer: AnswerRecord) -> dict[str, Any]:
    """Return the bind parameters of an answer's statements."""
    return {
        "a_round": answer.round_id,
        "a_user": answer.user,
        "a_choice": answer.choice,
        "a_correct": answer.correct,
        "a_points": answer.points,
        "a_at": answer.answered_at,
        "a_ms": answer.elapsed_ms,
    }


def answer_steps(
    answer: AnswerRecord,
    *,
    allow_change: bool | None,
    study: Study | None,
    remember: Callable[[MemoryCard], None] = lambda _: None,
) -> Steps:
    """Settle an answer statement by statement; see ``SqlStore.record_answer``."""
    params = answer_params(answer)
    for _ in range(3):
        if (yield INSERT, params).rowcount == 1:
            if study is not None:
                yield from card_steps(study, answer, remember)
            return AnswerStatus.ACCEPTED, None
        state = (yield STATE, params).row
        if state is None or state[0] is not None:
            return AnswerStatus.CLOSED, None
        if state[1] is not None:
            break
        # The round is open and holds no answer of this user: the insert met another click's
        # that was rolled back after all (PostgreSQL). Insert again.
    else:
        raise RuntimeError(f"answer of {answer.user} to round {answer.round_id} kept racing")
    existing = stored_answer(answer, state[1:6])
    allowed = bool(state[6]) if allow_change is None else allow_change
    # The engine's rule decides; PostgreSQL's one-statement path (POSTGRES_ANSWER) says the same
    # in SQL, and the storage suite runs both against the same cases.
    if second_answer(existing.choice, answer.choice, allow_change=allowed) is AnswerStatus.ALREADY:
        return AnswerStatus.ALREADY, existing
    yield CHANGE, params
    return AnswerStatus.CHANGED, existing


def card_steps(
    study: Study, answer: AnswerRecord, remember: Callable[[MemoryCard], None]
) -> Generator[tuple[str, dict[str, Any]], Done, None]:
    """Read the card (locked), review it and write it."""
    prior = card_from_row(study.key, (yield CARD_READ, key_params(study.key)).row)
    expected = 0 if prior is None else prior.version
    new = study.apply(prior, version=expected + 1)
    if (yield CARD_WRITE, card_params(study, new, expected)).rowcount != 1:
        raise RuntimeError(f"card of {answer.user} changed while locked")
    remember(new)


def stored_answer(answer: AnswerRecord, row: tuple[Any, ...]) -> AnswerRecord:
    """Return the stored answer from (choice, correct, points, answered_at, elapsed_ms)."""
    choice, correct, points, answered_at, elapsed_ms = row
    return AnswerRecord(
        round_id=answer.round_id,
        user=answer.user,
        choice=choice,
        correct=bool(correct),
        points=int(points),
        answered_at=_aware(answered_at),
        elapsed_ms=int(elapsed_ms),
    )


def _aware(value: datetime | str) -> datetime:
    # The SQLite writer reads timestamps as SQLAlchemy stored them: naive UTC text.
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _answer_source() -> Any:
    """Return the SELECT that gives the answer's row when its round exists and is open."""
    return (
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


def build_statements(insert: Callable[[sa.Table], Any]) -> dict[str, Any]:
    """Build, once per store, the statements ``answer_steps`` names, for the store's dialect."""
    insert_answer = (
        insert(answers)
        .from_select(_ANSWER_COLUMNS, _answer_source())
        .on_conflict_do_nothing(index_elements=["round_id", "user_id"])
    )
    mine = sa.and_(answers.c.round_id == rounds.c.id, answers.c.user_id == sa.bindparam("a_user"))
    settings = sa.and_(
        channel_settings.c.platform == rounds.c.platform,
        channel_settings.c.workspace == rounds.c.workspace,
        channel_settings.c.channel == rounds.c.channel,
    )
    state = (
        sa.select(
            rounds.c.closed_at,
            answers.c.choice,
            answers.c.correct,
            answers.c.points,
            answers.c.answered_at,
            answers.c.elapsed_ms,
            channel_settings.c.allow_change,
        )
        .select_from(rounds.outerjoin(answers, mine).outerjoin(channel_settings, settings))
        .where(rounds.c.id == sa.bindparam("a_round"))
        .with_for_update(read=True, of=rounds)
    )
    change = (
        answers.update()
        .where(
            answers.c.round_id == sa.bindparam("a_round"),
            answers.c.user_id == sa.bindparam("a_user"),
        )
        .values(
            choice=sa.bindparam("a_choice"),
            correct=sa.bindparam("a_correct"),
            points=sa.bindparam("a_points"),
            answered_at=sa.bindparam("a_at", type_=UTCDateTime()),
            elapsed_ms=sa.bindparam("a_ms"),
        )
    )
    return {
        INSERT: insert_answer,
        STATE: state,
        CHANGE: change,
        CARD_READ: card_select(lock=True),
        CARD_WRITE: card_upsert(insert),
    }


# ---------------------------------------------------------------- drivers


@dataclass(frozen=True, slots=True)
class Compiled:
    """A statement compiled once for a raw driver: its SQL and how to order its parameters."""

    sql: str
    names: tuple[str, ...]
    processors: dict[str, Any]
    constants: dict[str, Any]
    # The columns it returns, and how SQLAlchemy would turn each driver value into Python's.
    columns: tuple[str, ...] = ()
    results: tuple[Any, ...] = ()
    row_type: Any = None

    def values(self, params: dict[str, Any]) -> list[Any]:
        """Return the driver's positional parameters, converted as SQLAlchemy would."""
        values = []
        for name in self.names:
            value = params[name] if name in params else self.constants[name]
            processor = self.processors.get(name)
            values.append(value if processor is None else processor(value))
        return values

    def rows(self, raw: Iterable[Sequence[Any]]) -> list[Any]:
        """Return the driver's rows as SQLAlchemy would: typed values, read by column name."""
        results, make = self.results, self.row_type
        return [
            make(*(v if f is None else f(v) for f, v in zip(results, row, strict=True)))
            for row in raw
        ]


# ---------------------------------------------------------------- SQLite, one upsert

SECOND_ANSWER = "quizbot_second_answer"


class StoredAnswer:
    """``quizbot_second_answer(choice, correct, points, answered_at, elapsed_ms, new, allowed)``.

    Registered on the writer's connection, where the answer upsert calls it from its
    ``DO UPDATE ... WHERE`` once for the stored answer it conflicts with, its columns as they
    were before the statement. It returns whether ``rules.second_answer`` lets the new choice
    replace the stored one, and keeps the stored row for the outcome: per thread, as a
    connection runs one call at a time, and the writer's two connections (on the loop's thread
    and in its own) each in their thread.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    @property
    def row(self) -> tuple[Any, ...] | None:
        """Return the stored row the current call met in this thread (None: none yet)."""
        return getattr(self._local, "row", None)

    @row.setter
    def row(self, value: tuple[Any, ...] | None) -> None:
        self._local.row = value

    def register(self, conn: sqlite3.Connection) -> None:
        """Define the function on a new connection."""
        conn.create_function(SECOND_ANSWER, 7, self._decide)

    def _decide(
        self,
        choice: str,
        correct: int,
        points: int,
        answered_at: str,
        elapsed_ms: int,
        new_choice: str,
        allowed: int | None,
    ) -> bool:
        self.row = (choice, correct, points, answered_at, elapsed_ms)
        status = second_answer(choice, new_choice, allow_change=bool(allowed))
        return status is AnswerStatus.CHANGED


def sqlite_answer_upsert() -> Any:
    """Return SQLite's one statement for an answer: insert it, or change it where allowed.

    Inserted or changed, rowcount 1; refused (closed, or a second answer that does not change),
    rowcount 0. ``StoredAnswer`` saw a stored answer exactly when there was one in an open round.
    """
    stmt = sqlite.insert(answers).from_select(_ANSWER_COLUMNS, _answer_source())
    new, stored = stmt.excluded, answers.c
    # The channel's setting, read only when a second answer meets a first; None is no setting.
    setting = (
        sa.select(channel_settings.c.allow_change)
        .select_from(rounds)
        .join(
            channel_settings,
            sa.and_(
                channel_settings.c.platform == rounds.c.platform,
                channel_settings.c.workspace == rounds.c.workspace,
                channel_settings.c.channel == rounds.c.channel,
            ),
        )
        .where(rounds.c.id == sa.bindparam("a_round"))
        .scalar_subquery()
    )
    allowed = sa.func.coalesce(sa.bindparam("a_allow", type_=sa.Boolean()), setting)
    changes = getattr(sa.func, SECOND_ANSWER)(
        stored.choice,
        stored.correct,
        stored.points,
        stored.answered_at,
        stored.elapsed_ms,
        new.choice,
        allowed,
        type_=sa.Boolean(),
    )
    return stmt.on_conflict_do_update(
        index_elements=["round_id", "user_id"],
        set_={c: new[c] for c in ("choice", "correct", "points", "answered_at", "elapsed_ms")},
        where=changes,
    )


Settled = tuple[int, tuple[Any, ...] | None]


def sqlite_settle(
    stored: StoredAnswer,
    upsert: str,
    values: list[Any],
    learn: Callable[[sqlite3.Connection], None] | None,
) -> Callable[[sqlite3.Connection], Settled]:
    """Return the writer's call for an answer: the upsert's rowcount and the stored row it met.

    An inserted answer (not a changed one) then reviews its card with ``learn``, in the same
    call, which the writer makes atomic.
    """

    def answer(conn: sqlite3.Connection) -> Settled:
        stored.row = None
        counted = conn.execute(upsert, values).rowcount
        if counted == 1 and stored.row is None and learn is not None:
            learn(conn)
        return counted, stored.row

    return answer


def sqlite_learn(
    study: Study, cache: CardCache, read: Compiled, write: Compiled
) -> Callable[[sqlite3.Connection], None]:
    """Return the part of the writer's call that reviews and writes the card.

    The review starts from the card this store wrote last (or none), and the write expects it:
    one statement. Only when another process changed the card is it read, reviewed and written
    again.
    """

    def learn(conn: sqlite3.Connection) -> None:
        prior = cache.get(study.key)
        for _ in range(2):
            expected = 0 if prior is None else prior.version
            new = study.apply(prior, version=expected + 1)
            if conn.execute(write.sql, write.values(card_params(study, new, expected))).rowcount:
                cache.put(new)
                return
            key = read.values(key_params(study.key))
            prior = card_from_row(study.key, conn.execute(read.sql, key).fetchone())
        # The writer is the only one writing here: the card it just read is the one it replaces.
        raise RuntimeError(f"card of {study.key.user} changed inside the writer's call")

    return learn


def sqlite_outcome(answer: AnswerRecord, settled: Settled) -> Outcome:
    """Return the outcome of what ``sqlite_settle``'s call reported."""
    counted, row = settled
    if row is None:
        # No stored answer met: inserted, or the round is closed (or does not exist).
        return (AnswerStatus.ACCEPTED if counted == 1 else AnswerStatus.CLOSED), None
    status = AnswerStatus.CHANGED if counted == 1 else AnswerStatus.ALREADY
    return status, stored_answer(answer, row)


# ---------------------------------------------------------------- SQLAlchemy, step by step


async def run_on_connection(conn: Any, steps: Steps, statements: dict[str, Any]) -> Outcome:
    """Drive the steps on a SQLAlchemy AsyncConnection (inside its transaction)."""
    try:
        key, params = next(steps)
        while True:
            result = await conn.execute(statements[key], params)
            row = result.first() if result.returns_rows else None
            key, params = steps.send(Done(result.rowcount, None if row is None else tuple(row)))
    except StopIteration as stop:
        outcome: Outcome = stop.value
        return outcome


# ---------------------------------------------------------------- PostgreSQL, one statement

POSTGRES_ANSWER = """
WITH r AS (
    SELECT platform, workspace, channel, closed_at FROM rounds
    WHERE id = $1::integer FOR SHARE
), prev AS (
    SELECT choice, correct, points, answered_at, elapsed_ms FROM answers
    WHERE round_id = $1::integer AND user_id = $2::varchar
), c0 AS (
    SELECT state, stability, difficulty, due_at, last_review, reps, lapses, version FROM cards
    WHERE $9::boolean AND platform = $10::varchar AND workspace = $11::varchar
      AND user_id = $2::varchar AND question_id = $12::varchar
    FOR UPDATE
), ok AS (
    SELECT NOT $9::boolean OR COALESCE((SELECT version FROM c0), 0) = $21::integer AS ok
), ins AS (
    INSERT INTO answers (round_id, platform, workspace, channel, user_id, choice, correct,
                         points, answered_at, elapsed_ms)
    SELECT $1::integer, r.platform, r.workspace, r.channel, $2::varchar, $3::varchar,
           $4::boolean, $5::integer, $6::timestamptz, $7::bigint
    FROM r WHERE r.closed_at IS NULL AND NOT EXISTS (SELECT FROM prev)
      AND (SELECT ok FROM ok)
    ON CONFLICT (round_id, user_id) DO NOTHING
    RETURNING 1
), upd AS (
    UPDATE answers SET choice = $3::varchar, correct = $4::boolean, points = $5::integer,
                       answered_at = $6::timestamptz, elapsed_ms = $7::bigint
    FROM r
    WHERE answers.round_id = $1::integer AND answers.user_id = $2::varchar
      AND answers.choice <> $3::varchar AND r.closed_at IS NULL
      AND COALESCE($8::boolean, (SELECT s.allow_change FROM channel_settings s
                                 WHERE s.platform = r.platform AND s.workspace = r.workspace
                                   AND s.channel = r.channel), false)
    RETURNING 1
), card AS (
    INSERT INTO cards AS t (platform, workspace, user_id, question_id, state, stability,
                            difficulty, due_at, last_review, reps, lapses, version, rating,
                            confidence)
    SELECT $10::varchar, $11::varchar, $2::varchar, $12::varchar, $13::integer,
           $14::float8, $15::float8, $16::timestamptz, $17::timestamptz, $18::integer,
           $19::integer, $20::integer, $22::integer, NULL
    WHERE $9::boolean AND EXISTS (SELECT FROM ins)
    ON CONFLICT (platform, workspace, user_id, question_id) DO UPDATE SET
        p_state = t.state, p_stability = t.stability, p_difficulty = t.difficulty,
        p_due_at = t.due_at, p_last_review = t.last_review, p_lapses = t.lapses,
        state = excluded.state, stability = excluded.stability,
        difficulty = excluded.difficulty, due_at = excluded.due_at,
        last_review = excluded.last_review, reps = excluded.reps, lapses = excluded.lapses,
        version = excluded.version, rating = excluded.rating, confidence = NULL
    WHERE t.version = $21::integer
    RETURNING 1
)
SELECT CASE WHEN EXISTS (SELECT FROM ins) THEN 'accepted'
            WHEN EXISTS (SELECT FROM upd) THEN 'changed'
            WHEN NOT EXISTS (SELECT FROM r WHERE r.closed_at IS NULL) THEN 'closed'
            WHEN EXISTS (SELECT FROM prev) THEN 'already'
            WHEN NOT (SELECT ok FROM ok) THEN 'stale'
            ELSE 'race' END,
       prev.choice, prev.correct, prev.points, prev.answered_at, prev.elapsed_ms,
       c0.state, c0.stability, c0.difficulty, c0.due_at, c0.last_review, c0.reps, c0.lapses,
       c0.version
FROM (SELECT) AS one LEFT JOIN prev ON true LEFT JOIN c0 ON true
"""


def postgres_args(
    answer: AnswerRecord,
    allow_change: bool | None,
    study: Study | None,
    prior: MemoryCard | None = None,
) -> tuple[Any, ...]:
    """Return the positional arguments of ``POSTGRES_ANSWER``, expecting the card ``prior``."""
    common = (
        answer.round_id,
        answer.user,
        answer.choice,
        answer.correct,
        answer.points,
        answer.answered_at,
        answer.elapsed_ms,
        allow_change,
    )
    if study is None:
        at = answer.answered_at
        return (*common, False, "", "", "", 0, None, None, at, None, 0, 0, 1, 0, 0)
    new = study.apply(prior)
    expected = 0 if prior is None else prior.version
    return (
        *common,
        True,
        study.key.platform,
        study.key.workspace,
        study.key.question_id,
        new.state,
        new.stability,
        new.difficulty,
        new.due_at,
        new.last_review,
        new.reps,
        new.lapses,
        expected + 1,
        expected,
        int(study.review.rating),
    )


def postgres_outcome(answer: AnswerRecord, row: Any) -> Outcome | None:
    """Return the outcome the statement reported, or None when a racing click needs a retry."""
    status = row[0]
    if status in ("race", "stale"):
        return None
    if status in ("accepted", "closed"):
        return AnswerStatus(status), None
    return AnswerStatus(status), stored_answer(answer, tuple(row[1:6]))


def postgres_stored_card(study: Study, row: Any) -> MemoryCard | None:
    """Return the card a ``stale`` outcome found stored."""
    return card_from_row(study.key, tuple(row[6:14]))
