"""SQL for each person's FSRS cards, and for the answers given outside rounds.

A card is reviewed by the engine's rule (``learning.Study``) and written back in the answer's
own transaction, the write guarded by the card's version: the write names the version it
expects to overwrite (0: no card yet) and changes nothing otherwise. A round answer does this in
its own statement or writer call (``bot/storage/_answers.py``), expecting the card the store
last wrote for that person and question (``CardCache``), or none; review and practice answers
and a confidence given after an answer go through ``CardsSql`` here.

The write keeps the state the review started from in the row's ``p_`` columns, copied in SQL
from the row it replaces, so that a confidence given afterwards can re-rate the review.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.engine.learning import (
    CardKey,
    Confidence,
    Grade,
    LastAnswer,
    Memory,
    MemoryCard,
    Study,
    new_card,
)
from bot.engine.ports import PracticeMoved
from bot.engine.practice import PracticeSession
from bot.storage._practice import delete_session, read_session, write_session
from bot.storage._schema import UTCDateTime, answers, card_reviews, cards, rounds

STATE = ("state", "stability", "difficulty", "due_at", "last_review", "reps", "lapses")
_PRIOR = ("state", "stability", "difficulty", "due_at", "last_review", "lapses")
CACHED_CARDS = 50_000


class CardCache:
    """The cards this store wrote last, by key: the state a round answer expects to find.

    A guess, never trusted: the write checks the version, and a card changed elsewhere (another
    replica, a review) is read again. Bounded by starting over when full.
    """

    def __init__(self, size: int = CACHED_CARDS) -> None:
        self._cards: dict[CardKey, MemoryCard] = {}
        self._size = size

    def get(self, key: CardKey) -> MemoryCard | None:
        """Return the card last written for ``key`` here, if remembered."""
        return self._cards.get(key)

    def put(self, card: MemoryCard) -> None:
        """Remember a card as written."""
        if len(self._cards) >= self._size:
            self._cards.clear()
        self._cards[card.key] = card


def key_params(key: CardKey) -> dict[str, Any]:
    """Return the bind parameters that name a card."""
    return {
        "c_platform": key.platform,
        "c_workspace": key.workspace,
        "c_user_id": key.user,
        "c_question_id": key.question_id,
    }


def card_params(study: Study, new: MemoryCard, expected: int) -> dict[str, Any]:
    """Return the parameters that write ``new`` over the stored version ``expected``."""
    return key_params(new.key) | {
        "c_state": new.state,
        "c_stability": new.stability,
        "c_difficulty": new.difficulty,
        "c_due_at": new.due_at,
        "c_last_review": new.last_review,
        "c_reps": new.reps,
        "c_lapses": new.lapses,
        "c_version": expected + 1,
        "c_expected": expected,
        "c_rating": int(study.review.rating),
        "c_confidence": None if study.review.confidence is None else study.review.confidence.value,
    }


def card_from_row(key: CardKey, row: Any) -> MemoryCard | None:
    """Return the card of a row (state, stability, difficulty, due_at, last_review, reps,
    lapses, version, ...) as the driver gives it; None for no row."""
    if row is None or row[7] is None:
        return None
    return MemoryCard(
        key=key,
        state=int(row[0]),
        stability=None if row[1] is None else float(row[1]),
        difficulty=None if row[2] is None else float(row[2]),
        due_at=_aware(row[3]),
        last_review=None if row[4] is None else _aware(row[4]),
        reps=int(row[5]),
        lapses=int(row[6]),
        version=int(row[7]),
    )


def _aware(value: datetime | str) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _where_key() -> sa.ColumnElement[bool]:
    return sa.and_(
        cards.c.platform == sa.bindparam("c_platform"),
        cards.c.workspace == sa.bindparam("c_workspace"),
        cards.c.user_id == sa.bindparam("c_user_id"),
        cards.c.question_id == sa.bindparam("c_question_id"),
    )


def card_select(*, lock: bool) -> Any:
    """Return the SELECT of one card's state and version (locked for the transaction)."""
    stmt = sa.select(*(cards.c[c] for c in STATE), cards.c.version).where(_where_key())
    return stmt.with_for_update() if lock else stmt


def card_upsert(insert: Any) -> Any:
    """Return the write of a reviewed card: inserted, or updated over the expected version.

    rowcount 1 when written; 0 when the stored card is not the expected one.
    """
    columns = (
        "platform",
        "workspace",
        "user_id",
        "question_id",
        *STATE,
        "version",
        "rating",
        "confidence",
    )
    stmt = insert(cards).values({c: sa.bindparam(f"c_{c}", type_=cards.c[c].type) for c in columns})
    new = stmt.excluded
    return stmt.on_conflict_do_update(
        index_elements=["platform", "workspace", "user_id", "question_id"],
        set_={
            # The state the review started from, from the row it replaces.
            **{f"p_{c}": cards.c[c] for c in _PRIOR},
            **{c: new[c] for c in (*STATE, "version", "rating", "confidence")},
        },
        where=cards.c.version == sa.bindparam("c_expected", type_=sa.Integer()),
    )


def card_log() -> Any:
    """Return the INSERT of an answer given outside a round."""
    return card_reviews.insert().values(
        platform=sa.bindparam("c_platform"),
        workspace=sa.bindparam("c_workspace"),
        user_id=sa.bindparam("c_user_id"),
        question_id=sa.bindparam("c_question_id"),
        source=sa.bindparam("l_source"),
        choice=sa.bindparam("l_choice"),
        correct=sa.bindparam("l_correct", type_=sa.Boolean()),
        rating=sa.bindparam("l_rating", type_=sa.Integer()),
        elapsed_ms=sa.bindparam("l_elapsed_ms", type_=sa.BigInteger()),
        answered_at=sa.bindparam("l_answered_at", type_=UTCDateTime()),
    )


def _card(row: Any) -> MemoryCard:
    key = CardKey(row.platform, row.workspace, row.user_id, row.question_id)
    card = card_from_row(key, tuple(row._mapping[c] for c in (*STATE, "version")))
    assert card is not None
    return card


class _CardMoved(Exception):
    """The card changed between its read and its write (the transaction is rolled back)."""


class CardsSql:
    """The cards part of the Store protocol, mixed into SqlStore."""

    if TYPE_CHECKING:
        dialect: str
        _card_cache: CardCache

        def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def _insert(self, table: sa.Table) -> Any: ...

    async def card(self, key: CardKey) -> MemoryCard | None:
        """Return a person's card for a question, or None if they never answered it."""
        async with self.read() as conn:
            row = (await conn.execute(card_select(lock=False), key_params(key))).first()
        return card_from_row(key, row)

    async def cards(self, platform: str, workspace: str, user: str) -> list[MemoryCard]:
        """Return a person's cards in a workspace, soonest due first."""
        query = (
            cards.select()
            .where(
                cards.c.platform == platform,
                cards.c.workspace == workspace,
                cards.c.user_id == user,
            )
            .order_by(cards.c.due_at, cards.c.question_id)
        )
        async with self.read() as conn:
            return [_card(row) for row in await conn.execute(query)]

    async def due_cards(
        self,
        platform: str,
        workspace: str,
        user: str,
        now: datetime,
        *,
        question_ids: Collection[str] | None = None,
        limit: int = 20,
    ) -> list[MemoryCard]:
        """Return up to ``limit`` of a person's cards due at ``now``, most overdue first
        (only cards of ``question_ids`` when given)."""
        query = (
            cards.select()
            .where(
                cards.c.platform == platform,
                cards.c.workspace == workspace,
                cards.c.user_id == user,
                cards.c.last_review.is_not(None),
                cards.c.due_at <= sa.bindparam("now", now, type_=UTCDateTime()),
            )
            .order_by(cards.c.due_at, cards.c.question_id)
            .limit(limit)
        )
        if question_ids is not None:
            query = query.where(self._among(cards.c.question_id, question_ids))
        async with self.read() as conn:
            return [_card(row) for row in await conn.execute(query)]

    def _among(
        self, column: sa.ColumnElement[str], values: Collection[str]
    ) -> sa.ColumnElement[bool]:
        """Return ``column IN values``: on PostgreSQL one array parameter (``= ANY``), which
        saves compiling a parameter per value for a long list."""
        if self.dialect == "postgresql":
            array = sa.bindparam("among", list(values), type_=postgresql.ARRAY(sa.String()))
            return column == sa.any_(array)
        return column.in_(list(values))

    async def seen_questions(self, platform: str, workspace: str, user: str) -> set[str]:
        """Return the ids of the questions a person holds a card for."""
        # One row: the ids joined (they hold no comma), which spares a row object per card.
        joined = (
            sa.func.string_agg(cards.c.question_id, ",")
            if self.dialect == "postgresql"
            else sa.func.group_concat(cards.c.question_id, ",")
        )
        query = sa.select(joined).where(
            cards.c.platform == platform, cards.c.workspace == workspace, cards.c.user_id == user
        )
        async with self.read() as conn:
            ids = (await conn.execute(query)).scalar()
        return set(ids.split(",")) if ids else set()

    async def user_results(
        self, platform: str, workspace: str, user: str, limit: int
    ) -> list[tuple[str, bool]]:
        """Return a person's latest answers, rounds and practice alike: (question, right)."""
        in_rounds = (
            sa.select(
                rounds.c.question_id.label("question_id"),
                answers.c.correct.label("correct"),
                answers.c.answered_at.label("at"),
            )
            .select_from(answers.join(rounds, answers.c.round_id == rounds.c.id))
            .where(
                answers.c.platform == platform,
                answers.c.workspace == workspace,
                answers.c.user_id == user,
            )
            .order_by(answers.c.answered_at.desc())
            .limit(limit)
        )
        outside = (
            sa.select(
                card_reviews.c.question_id,
                card_reviews.c.correct,
                card_reviews.c.answered_at.label("at"),
            )
            .where(
                card_reviews.c.platform == platform,
                card_reviews.c.workspace == workspace,
                card_reviews.c.user_id == user,
            )
            .order_by(card_reviews.c.answered_at.desc())
            .limit(limit)
        )
        both = sa.union_all(in_rounds.subquery().select(), outside.subquery().select()).subquery()
        query = (
            sa.select(both.c.question_id, both.c.correct).order_by(both.c.at.desc()).limit(limit)
        )
        async with self.read() as conn:
            return [(q, bool(c)) for q, c in await conn.execute(query)]

    async def put_card(self, card: MemoryCard) -> bool:
        """Write a card's state over its stored version (0: none stored yet).

        Return False, writing nothing, when the stored version is another. For tools and
        tests that set a card's state directly; answers review cards through ``study``.
        """
        columns = dict(zip(STATE, (getattr(card, c) for c in STATE), strict=True))
        async with self.write() as conn:
            if card.version == 0:
                stmt = (
                    self._insert(cards)
                    .values(**key_columns(card.key), **columns, version=1)
                    .on_conflict_do_nothing()
                )
            else:
                stmt = (
                    cards.update()
                    .where(*key_where(card.key), cards.c.version == card.version)
                    .values(**columns, version=card.version + 1)
                )
            result = await conn.execute(stmt)
        return bool(result.rowcount == 1)

    async def study(
        self,
        study: Study,
        *,
        choice: str,
        due_only: bool = False,
        session: PracticeSession | None = None,
    ) -> tuple[MemoryCard, bool]:
        """Review a card with an answer given outside a round, in one transaction.

        Return the card as it stands afterwards, and whether this answer reviewed it: with
        ``due_only``, a card that is not due (a second click on the same review) is left alone.
        With ``session``, the practice session is written in the same transaction over the
        version it carries; PracticeMoved, and nothing written, if it has moved on.
        """
        try:
            async with self.write() as conn:
                row = await conn.execute(card_select(lock=True), key_params(study.key))
                prior = card_from_row(study.key, row.first())
                if due_only and (prior is None or prior.due_at > study.review.at):
                    return (prior or new_card(study.key, study.review.at)), False
                new = study.apply(prior)
                expected = 0 if prior is None else prior.version
                result = await conn.execute(
                    card_upsert(self._insert), card_params(study, new, expected)
                )
                if result.rowcount != 1:
                    # Another transaction wrote the card between the read and the write (only
                    # possible where the read could not lock an absent row): roll back.
                    raise _CardMoved
                review = study.review
                await conn.execute(
                    card_log(),
                    key_params(study.key)
                    | {
                        "l_source": review.source.value,
                        "l_choice": choice,
                        "l_correct": review.correct,
                        "l_rating": int(review.rating),
                        "l_elapsed_ms": review.elapsed_ms,
                        "l_answered_at": review.at,
                    },
                )
                if session is not None and not await write_session(
                    conn, self._insert, session, session.version
                ):
                    raise PracticeMoved("the practice session moved on")
        except _CardMoved:
            if session is not None:
                # The answer was not written, so neither was the session's step.
                raise PracticeMoved("the card moved on under a practice answer") from None
            return (await self.card(study.key)) or new, False
        written = replace(new, version=expected + 1)
        self._card_cache.put(written)
        return written, True

    async def mastery_sums(
        self,
        platform: str,
        workspace: str,
        topics: Mapping[str, str],
        at: datetime,
        memory: Memory,
        user: str | None = None,
    ) -> list[tuple[str, str, float, int]]:
        """Return, per person and topic, the sum of FSRS retrievability at ``at`` over the
        person's cards of the topic's questions, and how many there are, computed in SQL.

        ``topics`` maps the bank's question ids to their topics; cards of other questions are
        left out. Retrievability is FSRS's forgetting curve, (1 + factor * t / S) ** decay, with
        t the whole days since the card's last answer, as ``Memory.retrievability`` computes it.
        """
        if not topics:
            return []
        bank = (
            sa.values(
                sa.column("question_id", sa.String()),
                sa.column("topic", sa.String()),
                name="bank_topics",
            )
            .data(list(topics.items()))
            .cte("bank_topics")
        )
        at_param = sa.bindparam("at", at, type_=UTCDateTime())
        days: sa.ColumnElement[Any]
        if self.dialect == "postgresql":
            days = sa.func.floor(sa.extract("epoch", at_param - cards.c.last_review) / 86400.0)
        else:
            # julianday's floating point may land a hair under a whole day: nudge before flooring.
            since = sa.func.julianday(at_param) - sa.func.julianday(cards.c.last_review)
            days = sa.func.floor(since + 1e-9)
        elapsed = sa.case((days < 0, 0.0), else_=days)
        recall = sa.func.power(
            1.0 + memory.factor * elapsed / cards.c.stability, sa.literal(memory.decay)
        )
        query = (
            sa.select(cards.c.user_id, bank.c.topic, sa.func.sum(recall), sa.func.count())
            .select_from(cards.join(bank, bank.c.question_id == cards.c.question_id))
            .where(
                cards.c.platform == platform,
                cards.c.workspace == workspace,
                cards.c.last_review.is_not(None),
                cards.c.stability.is_not(None),
            )
            .group_by(cards.c.user_id, bank.c.topic)
        )
        if user is not None:
            query = query.where(cards.c.user_id == user)
        async with self.read() as conn:
            rows = await conn.execute(query)
            return [(u, t, float(r), int(n)) for u, t, r, n in rows]

    async def practice_session(
        self, platform: str, workspace: str, user: str
    ) -> PracticeSession | None:
        """Return a person's practice session, or None."""
        async with self.read() as conn:
            return await read_session(conn, platform, workspace, user)

    async def put_practice(self, session: PracticeSession, expected: int) -> bool:
        """Write a session over the stored version ``expected`` (0: none); False if it moved."""
        async with self.write() as conn:
            return await write_session(conn, self._insert, session, expected)

    async def drop_practice(
        self, platform: str, workspace: str, user: str
    ) -> PracticeSession | None:
        """Delete a person's practice session; return it as it was (None if there was none)."""
        async with self.write() as conn:
            return await delete_session(conn, platform, workspace, user)

    async def last_answer(self, key: CardKey) -> LastAnswer | None:
        """Return the answer a card's latest review came from: when, right or not, how long it
        took (from the round's or the review log's row), and whether a confidence re-rated it.
        None when the card has no review."""
        async with self.read() as conn:
            row = (
                await conn.execute(
                    sa.select(cards.c.last_review, cards.c.rating, cards.c.confidence).where(
                        *key_where(key)
                    )
                )
            ).first()
            if row is None or row.last_review is None or row.rating is None:
                return None
            at = _aware(row.last_review)
            logged = (
                await conn.execute(
                    sa.select(card_reviews.c.elapsed_ms)
                    .where(
                        card_reviews.c.platform == key.platform,
                        card_reviews.c.workspace == key.workspace,
                        card_reviews.c.user_id == key.user,
                        card_reviews.c.question_id == key.question_id,
                        card_reviews.c.answered_at == sa.bindparam("at", at, type_=UTCDateTime()),
                    )
                    .limit(1)
                )
            ).first()
            if logged is None:
                logged = (
                    await conn.execute(
                        sa.select(answers.c.elapsed_ms)
                        .select_from(answers.join(rounds, rounds.c.id == answers.c.round_id))
                        .where(
                            rounds.c.platform == key.platform,
                            rounds.c.workspace == key.workspace,
                            rounds.c.question_id == key.question_id,
                            answers.c.user_id == key.user,
                            answers.c.answered_at == sa.bindparam("at", at, type_=UTCDateTime()),
                        )
                        .limit(1)
                    )
                ).first()
        elapsed = None if logged is None or logged.elapsed_ms is None else int(logged.elapsed_ms)
        return LastAnswer(
            at=at,
            # Only a wrong answer is rated Again, with a confidence or without.
            correct=int(row.rating) != int(Grade.AGAIN),
            elapsed_ms=elapsed,
            rated=row.confidence is not None,
        )

    async def rate_last(
        self, key: CardKey, confidence: Confidence, memory: Memory, rating: Grade
    ) -> MemoryCard | None:
        """Re-rate the card's latest review with the confidence given after it.

        The card goes back to the state that review started from and is reviewed again, at the
        same time, with ``rating``. None when the card has no review to re-rate.
        """
        query = sa.select(
            *(cards.c[c] for c in STATE),
            cards.c.version,
            cards.c.rating,
            *(cards.c[f"p_{c}"] for c in _PRIOR),
        ).where(*key_where(key))
        async with self.write() as conn:
            row = (await conn.execute(query.with_for_update())).first()
            current = card_from_row(key, row)
            if row is None or current is None or current.last_review is None or row.rating is None:
                return None
            at = current.last_review
            if row.p_state is None:
                base = new_card(key, at)
            else:
                base = MemoryCard(
                    key=key,
                    state=int(row.p_state),
                    stability=row.p_stability,
                    difficulty=row.p_difficulty,
                    due_at=_aware(row.p_due_at),
                    last_review=None if row.p_last_review is None else _aware(row.p_last_review),
                    reps=current.reps - 1,
                    lapses=int(row.p_lapses),
                )
            new = replace(memory.review(base, rating, at), version=current.version + 1)
            await conn.execute(
                cards.update()
                .where(*key_where(key), cards.c.version == current.version)
                .values(
                    **{c: getattr(new, c) for c in STATE},
                    version=new.version,
                    rating=int(rating),
                    confidence=confidence.value,
                )
            )
        self._card_cache.put(new)
        return new


def key_columns(key: CardKey) -> dict[str, str]:
    """Return a card's key as column values."""
    return {
        "platform": key.platform,
        "workspace": key.workspace,
        "user_id": key.user,
        "question_id": key.question_id,
    }


def key_where(key: CardKey) -> tuple[sa.ColumnElement[bool], ...]:
    """Return the conditions that select one card."""
    return (
        cards.c.platform == key.platform,
        cards.c.workspace == key.workspace,
        cards.c.user_id == key.user,
        cards.c.question_id == key.question_id,
    )
