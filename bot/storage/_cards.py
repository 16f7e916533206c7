"""SQL for each person's FSRS cards and the answers that reviewed them.

A card is read, reviewed by the engine's rule (``learning.Study``) and written back inside one
transaction, the write guarded by the card's version. A round answer does this inside its own
statement or writer call (``bot/storage/_answers.py``); review and practice answers, and a
confidence given after an answer, through ``CardsSql`` here.
"""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.engine.learning import CardKey, Confidence, Grade, Memory, MemoryCard, Study, new_card
from bot.storage._schema import UTCDateTime, card_reviews, cards

_STATE = ("state", "stability", "difficulty", "due_at", "last_review", "reps", "lapses")


def key_params(key: CardKey) -> dict[str, Any]:
    """Return the bind parameters that name a card."""
    return {
        "c_platform": key.platform,
        "c_workspace": key.workspace,
        "c_user_id": key.user,
        "c_question_id": key.question_id,
    }


def card_params(new: MemoryCard, expected: int) -> dict[str, Any]:
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
    }


def log_params(
    study: Study, prior: MemoryCard | None, *, choice: str, round_id: int | None
) -> dict[str, Any]:
    """Return the parameters of the review's log row, with the card as it was before."""
    review = study.review
    return key_params(study.key) | {
        "l_source": review.source.value,
        "l_round_id": round_id,
        "l_choice": choice,
        "l_correct": review.correct,
        "l_rating": int(review.rating),
        "l_confidence": None if review.confidence is None else review.confidence.value,
        "l_elapsed_ms": review.elapsed_ms,
        "l_answered_at": review.at,
        "l_prior": None if prior is None else prior_json(prior),
    }


def prior_json(card: MemoryCard) -> str:
    """Return the card's state as the JSON its next review's log row keeps."""
    return json.dumps(
        {
            "state": card.state,
            "stability": card.stability,
            "difficulty": card.difficulty,
            "due_at": card.due_at.isoformat(),
            "last_review": None if card.last_review is None else card.last_review.isoformat(),
            "reps": card.reps,
            "lapses": card.lapses,
        }
    )


def card_from_json(key: CardKey, text: str, version: int) -> MemoryCard:
    """Return the card a log row's ``prior`` describes."""
    data = json.loads(text)
    return MemoryCard(
        key=key,
        state=int(data["state"]),
        stability=data["stability"],
        difficulty=data["difficulty"],
        due_at=_aware(data["due_at"]),
        last_review=None if data["last_review"] is None else _aware(data["last_review"]),
        reps=int(data["reps"]),
        lapses=int(data["lapses"]),
        version=version,
    )


def card_from_row(key: CardKey, row: tuple[Any, ...] | None) -> MemoryCard | None:
    """Return the card of a row (state, stability, difficulty, due_at, last_review, reps,
    lapses, version), as the driver gives it; None for no row."""
    if row is None or row[-1] is None:
        return None
    state, stability, difficulty, due_at, last_review, reps, lapses, version = row
    return MemoryCard(
        key=key,
        state=int(state),
        stability=None if stability is None else float(stability),
        difficulty=None if difficulty is None else float(difficulty),
        due_at=_aware(due_at),
        last_review=None if last_review is None else _aware(last_review),
        reps=int(reps),
        lapses=int(lapses),
        version=int(version),
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
    stmt = sa.select(*(cards.c[c] for c in _STATE), cards.c.version).where(_where_key())
    return stmt.with_for_update() if lock else stmt


def card_upsert(insert: Any) -> Any:
    """Return the write of a reviewed card: inserted, or updated over the expected version.

    rowcount 1 when written; 0 when another writer changed the card first.
    """
    columns = ("platform", "workspace", "user_id", "question_id", *_STATE, "version")
    stmt = insert(cards).values({c: sa.bindparam(f"c_{c}", type_=cards.c[c].type) for c in columns})
    return stmt.on_conflict_do_update(
        index_elements=["platform", "workspace", "user_id", "question_id"],
        set_={c: stmt.excluded[c] for c in (*_STATE, "version")},
        where=cards.c.version == sa.bindparam("c_expected", type_=sa.Integer()),
    )


def card_log() -> Any:
    """Return the INSERT of one review's log row."""
    return card_reviews.insert().values(
        platform=sa.bindparam("c_platform"),
        workspace=sa.bindparam("c_workspace"),
        user_id=sa.bindparam("c_user_id"),
        question_id=sa.bindparam("c_question_id"),
        source=sa.bindparam("l_source"),
        round_id=sa.bindparam("l_round_id", type_=sa.Integer()),
        choice=sa.bindparam("l_choice"),
        correct=sa.bindparam("l_correct", type_=sa.Boolean()),
        rating=sa.bindparam("l_rating", type_=sa.Integer()),
        confidence=sa.bindparam("l_confidence", type_=sa.String()),
        elapsed_ms=sa.bindparam("l_elapsed_ms", type_=sa.BigInteger()),
        answered_at=sa.bindparam("l_answered_at", type_=UTCDateTime()),
        prior=sa.bindparam("l_prior", type_=sa.Text()),
    )


def _card(row: Any) -> MemoryCard:
    key = CardKey(row.platform, row.workspace, row.user_id, row.question_id)
    card = card_from_row(key, tuple(row._mapping[c] for c in (*_STATE, "version")))
    assert card is not None
    return card


class CardsSql:
    """The cards part of the Store protocol, mixed into SqlStore."""

    if TYPE_CHECKING:
        dialect: str

        def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def read(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

        def _insert(self, table: sa.Table) -> Any: ...

    async def card(self, key: CardKey) -> MemoryCard | None:
        """Return a person's card for a question, or None if they never answered it."""
        async with self.read() as conn:
            row = (await conn.execute(card_select(lock=False), key_params(key))).first()
        return card_from_row(key, None if row is None else tuple(row))

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

    async def put_card(self, card: MemoryCard) -> bool:
        """Write a card over its stored version (0: none stored yet); False if it moved on."""
        async with self.write() as conn:
            result = await conn.execute(card_upsert(self._insert), card_params(card, card.version))
        return bool(result.rowcount == 1)

    async def study(
        self, study: Study, *, choice: str, due_only: bool = False
    ) -> tuple[MemoryCard, bool]:
        """Review a card with an answer given outside a round, in one transaction.

        Return the card as it stands afterwards, and whether this answer reviewed it: with
        ``due_only``, a card that is not due (a second click on the same review) is left alone.
        """
        async with self.write() as conn:
            row = (await conn.execute(card_select(lock=True), key_params(study.key))).first()
            prior = card_from_row(study.key, None if row is None else tuple(row))
            if due_only and (prior is None or prior.due_at > study.review.at):
                return (prior or study.apply(None)), False
            new = study.apply(prior)
            expected = 0 if prior is None else prior.version
            result = await conn.execute(card_upsert(self._insert), card_params(new, expected))
            if result.rowcount != 1:
                # Another transaction wrote the card between the read and the write (only
                # possible where the read could not lock an absent row): report its state.
                await conn.rollback()
                return (await self.card(study.key)) or new, False
            await conn.execute(card_log(), log_params(study, prior, choice=choice, round_id=None))
        return replace(new, version=expected + 1), True

    async def rate_last(
        self, key: CardKey, confidence: Confidence, memory: Memory, rating: Grade
    ) -> MemoryCard | None:
        """Re-rate the card's latest review with the confidence given after it.

        The card goes back to the state its latest review started from and is reviewed again
        with ``rating``; the log row keeps the confidence. None when there is no review to
        re-rate (or it was migrated without its prior state).
        """
        latest = (
            sa.select(card_reviews.c.id, card_reviews.c.prior, card_reviews.c.answered_at)
            .where(
                card_reviews.c.platform == key.platform,
                card_reviews.c.workspace == key.workspace,
                card_reviews.c.user_id == key.user,
                card_reviews.c.question_id == key.question_id,
            )
            .order_by(card_reviews.c.answered_at.desc(), card_reviews.c.id.desc())
            .limit(1)
        )
        async with self.write() as conn:
            row = (await conn.execute(card_select(lock=True), key_params(key))).first()
            current = card_from_row(key, None if row is None else tuple(row))
            log = (await conn.execute(latest)).first()
            if current is None or log is None:
                return None
            prior = None if log.prior is None else card_from_json(key, log.prior, current.version)
            if prior is None and current.reps > 1:
                return None
            base = prior or replace(new_card(key, log.answered_at), version=current.version)
            new = replace(memory.review(base, rating, log.answered_at), version=current.version)
            await conn.execute(card_upsert(self._insert), card_params(new, current.version))
            await conn.execute(
                card_reviews.update()
                .where(card_reviews.c.id == log.id)
                .values(confidence=confidence.value, rating=int(rating))
            )
        return replace(new, version=current.version + 1)
