"""Close rounds when their time is up, in every process, exactly once between them."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bot.engine import QuizEngine
from bot.observability.metrics import count_loop_pass
from bot.scheduler.port import Publisher

log = logging.getLogger(__name__)


async def close_due_rounds(engine: QuizEngine, publisher: Publisher) -> int:
    """Close the due rounds of the platform; publish each reveal this process won, and each
    reveal another process (or an earlier try) left unposted past its lease."""
    reveals = await engine.close_due(publisher.platform)
    reveals += await engine.pending_reveals(publisher.platform)
    for reveal in reveals:
        try:
            await publisher.publish_reveal(reveal)
        except Exception:
            # The round is closed in the database either way; one bad channel must not stop others.
            log.exception("could not publish the reveal of round %s", reveal.round.id)
    return len(reveals)


async def run_timers(
    engine: QuizEngine,
    publisher: Publisher,
    *,
    interval: float = 5.0,
    stop: asyncio.Event | None = None,
) -> None:
    """Close due rounds every ``interval`` seconds until ``stop`` is set or the task ends."""
    stop = stop or asyncio.Event()
    while not stop.is_set():
        try:
            await close_due_rounds(engine, publisher)
        except Exception:
            log.exception("closing due rounds failed; will try again")
        count_loop_pass("timers")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)
