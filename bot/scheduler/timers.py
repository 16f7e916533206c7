"""Close rounds when their time is up, in every process, exactly once between them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from bot import messages as M
from bot.engine import QuizEngine
from bot.observability.metrics import count_loop_pass
from bot.scheduler.port import Publisher
from bot.text import Code, say

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


async def tell_reporters(engine: QuizEngine, publisher: Publisher) -> int:
    """Tell each player whose report a new revision resolved, privately, once across replicas."""
    told = 0
    for report in await engine.resolved_reports(publisher.platform):
        text = say(M.FLAG_RESOLVED, question=Code(report.question_id), revision=report.revision)
        try:
            await publisher.message_user(report.place, report.user, text)
            told += 1
        except Exception:
            # Claimed already: a reporter the platform cannot reach is not asked again.
            log.exception("could not tell %s of the fix to %s", report.user, report.question_id)
    return told


async def run_timers(
    engine: QuizEngine,
    publisher: Publisher,
    *,
    interval: float = 5.0,
    stop: asyncio.Event | None = None,
    also: Sequence[Callable[[], Awaitable[object]]] = (),
) -> None:
    """Close due rounds every ``interval`` seconds until ``stop`` is set or the task ends;
    each pass also runs the ``also`` tasks (the chat's telling of proposals)."""
    stop = stop or asyncio.Event()
    while not stop.is_set():
        try:
            await close_due_rounds(engine, publisher)
        except Exception:
            log.exception("closing due rounds failed; will try again")
        try:
            await tell_reporters(engine, publisher)
        except Exception:
            log.exception("telling reporters of fixes failed; will try again")
        for task in also:
            try:
                await task()
            except Exception:
                log.exception("a timer task failed; will try again")
        count_loop_pass("timers")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)
