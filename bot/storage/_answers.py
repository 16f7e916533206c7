"""Record an answer, and queue or advance the review item of a miss, in one round trip.

Every outcome (accepted, changed, already, closed) is settled by one call to the database:

- PostgreSQL: one statement (``POSTGRES_ANSWER``): data-modifying CTEs insert the answer, or
  change it where allowed, and upsert the review item, while ``FOR SHARE`` on the round holds off
  a concurrent close until the statement's own commit (it runs in autocommit).
- SQLite: one call into the store's writer thread (``SqliteWriter``). A right answer is one
  statement committed on its own; a miss is the insert and the review upsert in one
  transaction; when the insert found the round closed or the user already answered, one more
  statement reads why (a change of answer is then made in a transaction, still in that call).

The decisions are written once, in ``answer_steps``, a generator that yields the statements it
needs and receives their results; the SQLite writer and a SQLAlchemy transaction both drive it.
PostgreSQL falls back to the transaction only when a click races the same user's other click.

The review rule stays the engine's: it passes the state a first miss gets
(``review.after_round_miss(None, ...)``), and the upsert merges it into a stored item exactly as
``review.after_round_miss`` does (an unfinished item keeps its step, loses its run of right
answers and comes back no later than the new due time; a finished one starts over).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from bot.engine.model import AnswerRecord, AnswerStatus
from bot.engine.review import ReviewItem
from bot.engine.rules import second_answer
from bot.storage._schema import UTCDateTime, answers, channel_settings, review_items, rounds

Outcome = tuple[AnswerStatus, AnswerRecord | None]

INSERT, REVIEW, STATE, CHANGE = "insert", "review", "state", "change"

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
_REVIEW_COLUMNS = (
    "platform",
    "workspace",
    "user_id",
    "question_id",
    "step",
    "right_in_row",
    "due_at",
    "done",
    "version",
)


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


def review_params(item: ReviewItem) -> dict[str, Any]:
    """Return the bind parameters that write a review item (its version raised by one)."""
    return {
        "r_platform": item.platform,
        "r_workspace": item.workspace,
        "r_user_id": item.user,
        "r_question_id": item.question_id,
        "r_step": item.step,
        "r_right_in_row": item.right_in_row,
        "r_due_at": item.due_at,
        "r_done": item.done,
        "r_version": item.version + 1,
    }


def answer_steps(
    answer: AnswerRecord, *, allow_change: bool | None, miss: ReviewItem | None
) -> Steps:
    """Settle an answer statement by statement; see ``SqlStore.record_answer``."""
    params = answer_params(answer)
    for _ in range(3):
        if (yield INSERT, params).rowcount == 1:
            if miss is not None:
                yield REVIEW, review_params(miss)
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
    if miss is not None:
        yield REVIEW, review_params(miss)
    return AnswerStatus.CHANGED, existing


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


def build_statements(insert: Callable[[sa.Table], Any]) -> dict[str, Any]:
    """Build, once per store, the statements ``answer_steps`` names, for the store's dialect."""
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
    insert_answer = (
        insert(answers)
        .from_select(_ANSWER_COLUMNS, source)
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
    return {INSERT: insert_answer, REVIEW: miss_upsert(insert), STATE: state, CHANGE: change}


def miss_upsert(insert: Callable[[sa.Table], Any]) -> Any:
    """Return the statement that queues a missed question or advances its stored item."""
    item = review_items.c
    stmt = insert(review_items).values(
        {c: sa.bindparam(f"r_{c}", type_=review_items.c[c].type) for c in _REVIEW_COLUMNS}
    )
    new = stmt.excluded
    # review.after_round_miss, for a stored item: a finished one starts over as the new state;
    # an unfinished one keeps its step, loses its run and is due no later than the new state.
    # Nothing is written (the version stays) when that changes nothing.
    starts_over = item.done
    sooner = new.due_at < item.due_at
    return stmt.on_conflict_do_update(
        index_elements=["platform", "workspace", "user_id", "question_id"],
        set_={
            "step": sa.case((starts_over, new.step), else_=item.step),
            "right_in_row": new.right_in_row,
            "due_at": sa.case((sa.or_(starts_over, sooner), new.due_at), else_=item.due_at),
            "done": new.done,
            "version": item.version + sa.literal_column("1"),
        },
        where=sa.or_(starts_over, item.right_in_row != new.right_in_row, sooner),
    )


# ---------------------------------------------------------------- drivers


@dataclass(frozen=True, slots=True)
class Compiled:
    """A statement compiled once for a raw driver: its SQL and how to order its parameters."""

    sql: str
    names: tuple[str, ...]
    processors: dict[str, Any]
    constants: dict[str, Any]

    def values(self, params: dict[str, Any]) -> list[Any]:
        """Return the driver's positional parameters, converted as SQLAlchemy would."""
        values = []
        for name in self.names:
            value = params[name] if name in params else self.constants[name]
            processor = self.processors.get(name)
            values.append(value if processor is None else processor(value))
        return values


def first_step(steps: Steps, compiled: dict[str, Compiled]) -> tuple[str, list[Any]]:
    """Start the steps: return their first statement and its driver parameters.

    Called before the call into the writer thread, so that the thread, which must take the
    GIL back for every bit of Python it runs, has only the statement to run.
    """
    key, params = next(steps)
    return key, compiled[key].values(params)


def run_on_sqlite(
    conn: sqlite3.Connection,
    steps: Steps,
    compiled: dict[str, Compiled],
    first: tuple[str, list[Any]],
    *,
    stop_before: str | None = None,
) -> Outcome | None:
    """Drive started steps on a raw sqlite3 connection; None if they reach ``stop_before``."""
    key, values = first
    try:
        while True:
            if key == stop_before:
                return None
            cursor = conn.execute(compiled[key].sql, values)
            row = cursor.fetchone() if cursor.description else None
            key, params = steps.send(Done(cursor.rowcount, row))
            values = compiled[key].values(params)
    except StopIteration as stop:
        result: Outcome = stop.value
        return result


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
), ins AS (
    INSERT INTO answers (round_id, platform, workspace, channel, user_id, choice, correct,
                         points, answered_at, elapsed_ms)
    SELECT $1::integer, r.platform, r.workspace, r.channel, $2::varchar, $3::varchar,
           $4::boolean, $5::integer, $6::timestamptz, $7::bigint
    FROM r WHERE r.closed_at IS NULL AND NOT EXISTS (SELECT FROM prev)
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
), rev AS (
    INSERT INTO review_items AS t (platform, workspace, user_id, question_id, step,
                                   right_in_row, due_at, done, version)
    SELECT $10::varchar, $11::varchar, $2::varchar, $12::varchar, $13::integer, $14::integer,
           $15::timestamptz, $16::boolean, $17::integer
    WHERE $9::boolean AND (EXISTS (SELECT FROM ins) OR EXISTS (SELECT FROM upd))
    ON CONFLICT (platform, workspace, user_id, question_id) DO UPDATE SET
        step = CASE WHEN t.done THEN excluded.step ELSE t.step END,
        right_in_row = excluded.right_in_row,
        due_at = CASE WHEN t.done OR excluded.due_at < t.due_at
                      THEN excluded.due_at ELSE t.due_at END,
        done = excluded.done,
        version = t.version + 1
    WHERE t.done OR t.right_in_row <> excluded.right_in_row OR excluded.due_at < t.due_at
    RETURNING 1
)
SELECT CASE WHEN EXISTS (SELECT FROM ins) THEN 'accepted'
            WHEN EXISTS (SELECT FROM upd) THEN 'changed'
            WHEN NOT EXISTS (SELECT FROM r WHERE r.closed_at IS NULL) THEN 'closed'
            WHEN EXISTS (SELECT FROM prev) THEN 'already'
            ELSE 'race' END,
       prev.choice, prev.correct, prev.points, prev.answered_at, prev.elapsed_ms
FROM (SELECT) AS one LEFT JOIN prev ON true
"""


def postgres_args(
    answer: AnswerRecord, allow_change: bool | None, miss: ReviewItem | None
) -> tuple[Any, ...]:
    """Return the positional arguments of ``POSTGRES_ANSWER``."""
    item = miss or ReviewItem("", "", answer.user, "", 0, 0, answer.answered_at)
    return (
        answer.round_id,
        answer.user,
        answer.choice,
        answer.correct,
        answer.points,
        answer.answered_at,
        answer.elapsed_ms,
        allow_change,
        miss is not None,
        item.platform,
        item.workspace,
        item.question_id,
        item.step,
        item.right_in_row,
        item.due_at,
        item.done,
        item.version + 1,
    )


def postgres_outcome(answer: AnswerRecord, row: Any) -> Outcome | None:
    """Return the outcome the statement reported, or None when a racing click needs a retry."""
    status = row[0]
    if status == "race":
        return None
    if status in ("accepted", "closed"):
        return AnswerStatus(status), None
    return AnswerStatus(status), stored_answer(answer, tuple(row[1:6]))
