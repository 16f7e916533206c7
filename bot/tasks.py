"""Waiting on a store call with a deadline, without cancelling the call.

``asyncio.wait_for`` cancels what it waits on when the time is up. A database call cancelled
part way (while it checks a connection out of the pool, opens one, or waits for a reply) can
leave that connection to the garbage collector instead of back in the pool: under a database
that stalls, every timed-out probe or check would cost a connection. ``finish_within`` gives
up waiting instead and lets the call run to its end in the background, where what it raises
is logged rather than lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

# The calls under way: held here, as the event loop keeps only weak references to its tasks.
_running: set[asyncio.Task[Any]] = set()


async def finish_within(call: Coroutine[Any, Any, T], seconds: float, *, what: str) -> T:
    """Return the call's result if it comes within ``seconds``; else raise TimeoutError.

    A call that is late is not cancelled: it finishes on its own, and an error it ends with is
    logged with ``what`` (a few words naming the call). Cancelling the caller does not cancel
    the call either.
    """
    task = asyncio.ensure_future(call)
    _running.add(task)
    task.add_done_callback(_running.discard)
    try:
        done, _ = await asyncio.wait((task,), timeout=seconds)
    except asyncio.CancelledError:
        task.add_done_callback(lambda t: _finished_late(t, what))
        raise
    if done:
        return task.result()
    task.add_done_callback(lambda t: _finished_late(t, what))
    raise TimeoutError(f"{what} took over {seconds:g} s")


def _finished_late(task: asyncio.Task[Any], what: str) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.warning("%s, given up on, then failed: %s", what, type(error).__name__)


def still_running() -> int:
    """Return how many calls given to ``finish_within`` are still running."""
    return len(_running)
