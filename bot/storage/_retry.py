"""Try a store transaction again when the database connection is lost.

A replica's connection can drop at any moment (a database failover, a restarted proxy, an idle
connection cut by a firewall). Each store method is one transaction, so running it again is safe
when the failed attempt did not commit. When the connection dropped while the commit was under
way, the attempt may have committed without our hearing of it: the methods that change state
check for their own earlier write on a retry (see ``SqlStore``), and the unique constraints
make sure nothing is ever stored twice.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from sqlalchemy.exc import DBAPIError

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

P = ParamSpec("P")
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


def retried(method: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Retry a store method whose transaction can simply run again (reads, idempotent writes)."""

    @functools.wraps(method)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        return await run_with_retries(method.__name__, lambda _retrying: method(*args, **kwargs))

    return wrapper
