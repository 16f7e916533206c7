"""Try a store transaction again when the database connection is lost.

A replica's connection can drop at any moment (a database failover, a restarted proxy, an idle
connection cut by a firewall). Each store method is one transaction, so running it again is safe
when the failed attempt did not commit. When the connection dropped while the commit was under
way, the attempt may have committed without our hearing of it: the methods in ``RECONCILE``
below recognise their own earlier write on a retry, the upserts (settings, schedules,
installations) come to the same row when run twice, and the unique constraints make sure nothing
is ever stored twice. A slot claim needs no reconciling: the claimant's own earlier claim counts
as held, so a claim retried after a lost commit wins and its slot is posted (and a claim whose
process died before posting is taken over by the next lease holder of the schedule). An OAuth
state's use is not reconciled: a commit lost in flight reads as the state already used.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError

from bot.engine.model import AnswerRecord, AnswerStatus, Place, Round
from bot.engine.ports import RoundAlreadyOpen
from bot.observability.metrics import count_db_retry

log = logging.getLogger(__name__)

ATTEMPTS = 4
FIRST_DELAY = 0.05
MAX_DELAY = 1.0

# SQLSTATE classes a new attempt can cure: the server went away or restarts (08, 57P0x), or it
# rolled the transaction back to break a deadlock or a serialisation conflict (40001, 40P01).
TRANSIENT_SQLSTATES = frozenset(
    {"08000", "08001", "08003", "08004", "08006", "40001", "40P01", "57P01", "57P02", "57P03"}
)

T = TypeVar("T")


def _sqlstate(exc: BaseException) -> str | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = getattr(current, "sqlstate", None) or getattr(current, "pgcode", None)
        if isinstance(code, str):
            return code
        current = getattr(current, "orig", None) or current.__cause__
    return None


def is_transient(exc: BaseException) -> bool:
    """Return True for an error that a new attempt on a new connection may not meet again."""
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        return _sqlstate(exc) in TRANSIENT_SQLSTATES
    # asyncpg's connect raises OSError (refused, reset, unreachable) without SQLAlchemy's wrapper.
    return isinstance(exc, OSError)


async def run_with_retries(
    operation: str,
    attempt: Callable[[bool], Awaitable[T]],
    *,
    attempts: int = ATTEMPTS,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Await ``attempt(retrying)`` until it succeeds, retrying transient errors with backoff.

    ``retrying`` is False on the first call and True on later ones, when an earlier attempt may
    have committed before its connection was lost.
    """
    number = 0
    while True:
        try:
            return await attempt(number > 0)
        except Exception as exc:
            number += 1
            if number >= attempts or not is_transient(exc):
                raise
            delay = min(MAX_DELAY, FIRST_DELAY * 2 ** (number - 1)) * random.uniform(0.5, 1.0)
            log.warning(
                "database connection lost in %s (%s); trying again in %.2f s (%d of %d)",
                operation,
                type(exc).__name__,
                delay,
                number + 1,
                attempts,
            )
            count_db_retry(operation)
            await sleep(delay)


# After a lost connection, a state-changing method may find its own committed write and take it
# for someone else's. Each of these runs the method again and recognises that write.
Method = Callable[..., Awaitable[Any]]
Reconcile = Callable[[Any, Method, inspect.BoundArguments], Awaitable[Any]]


async def _record_answer_again(store: Any, method: Method, bound: inspect.BoundArguments) -> Any:
    answer: AnswerRecord = bound.arguments["answer"]
    status, stored = await method(*bound.args, **bound.kwargs)
    if status is AnswerStatus.ALREADY and stored is not None and _same_answer(stored, answer):
        # The first attempt stored exactly this answer: it was accepted, not a second click.
        return AnswerStatus.ACCEPTED, None
    return status, stored


def _same_answer(a: AnswerRecord, b: AnswerRecord) -> bool:
    return (a.round_id, a.user, a.choice, a.answered_at, a.elapsed_ms) == (
        b.round_id,
        b.user,
        b.choice,
        b.answered_at,
        b.elapsed_ms,
    )


async def _create_round_again(store: Any, method: Method, bound: inspect.BoundArguments) -> Any:
    try:
        return await method(*bound.args, **bound.kwargs)
    except RoundAlreadyOpen:
        place: Place = bound.arguments["place"]
        mine: Round | None = await store.open_round(place)
        if (
            mine is not None
            and mine.question_id == bound.arguments["question_id"]
            and mine.opened_at == bound.arguments["opened_at"]
        ):
            return mine
        raise


async def _close_round_again(store: Any, method: Method, bound: inspect.BoundArguments) -> Any:
    closed = await method(*bound.args, **bound.kwargs)
    if closed is not None:
        return closed
    # Closed already: by the attempt whose commit was not heard of, if at this very time.
    rnd: Round | None = await store.get_round(bound.arguments["round_id"])
    return rnd if rnd is not None and rnd.closed_at == bound.arguments["at"] else None


async def _delete_unseen_round_again(
    store: Any, method: Method, bound: inspect.BoundArguments
) -> Any:
    if await method(*bound.args, **bound.kwargs):
        return True
    # Only this path deletes rounds: a round now gone is the one our lost commit deleted.
    return await store.get_round(bound.arguments["round_id"]) is None


async def _put_card_again(store: Any, method: Method, bound: inspect.BoundArguments) -> Any:
    if await method(*bound.args, **bound.kwargs):
        return True
    card = bound.arguments["card"]
    stored = await store.card(card.key)
    return (
        stored is not None
        and replace(stored, version=card.version) == card
        and (stored.version == card.version + 1)
    )


async def _study_again(store: Any, method: Method, bound: inspect.BoundArguments) -> Any:
    study = bound.arguments["study"]
    stored = await store.card(study.key)
    if stored is not None and stored.last_review == study.review.at:
        # The lost commit was this review's: it reviewed the card.
        return stored, True
    return await method(*bound.args, **bound.kwargs)


RECONCILE: dict[str, Reconcile] = {
    "record_answer": _record_answer_again,
    "create_round": _create_round_again,
    "close_round": _close_round_again,
    "put_card": _put_card_again,
    "study": _study_again,
    "delete_unseen_round": _delete_unseen_round_again,
}

# ping reports the database as it is (readiness must not hide an outage behind retries);
# claim_link retries by itself, keeping one claimant token across its attempts.
NOT_RETRIED = frozenset({"ping", "close", "claim_link"})

S = TypeVar("S", bound=type)


def with_retries(cls: S) -> S:
    """Make every public coroutine method of a store class retry a lost connection."""
    for name, method in inspect.getmembers(cls, inspect.iscoroutinefunction):
        if name.startswith("_") or name in NOT_RETRIED:
            continue
        setattr(cls, name, _retrying_method(name, method, RECONCILE.get(name)))
    return cls


def _retrying_method(name: str, method: Method, reconcile: Reconcile | None) -> Method:
    signature = inspect.signature(method)

    @functools.wraps(method)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        async def attempt(retrying: bool) -> Any:
            if retrying and reconcile is not None:
                return await reconcile(self, method, signature.bind(self, *args, **kwargs))
            return await method(self, *args, **kwargs)

        return await run_with_retries(name, attempt)

    return wrapper
