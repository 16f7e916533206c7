"""The asyncio task gauge on /metrics, which the soak run watches for leaks."""

from __future__ import annotations

import asyncio
import re

from prometheus_client import generate_latest

from bot.observability.metrics import REGISTRY

GAUGE = re.compile(rb"^quizbot_asyncio_tasks (\d+)\.0$", re.MULTILINE)


def tasks_on_metrics() -> int | None:
    """Return the gauge's value as /metrics would show it now, or None when absent."""
    match = GAUGE.search(generate_latest(REGISTRY))
    return int(match.group(1)) if match else None


async def test_the_gauge_counts_the_loops_tasks() -> None:
    before = tasks_on_metrics()
    assert before == len(asyncio.all_tasks())
    stop = asyncio.Event()
    waiting = [asyncio.create_task(stop.wait()) for _ in range(5)]
    assert tasks_on_metrics() == before + 5
    stop.set()
    await asyncio.gather(*waiting)
    assert tasks_on_metrics() == before


def test_outside_an_event_loop_the_gauge_is_left_out() -> None:
    assert tasks_on_metrics() is None
    assert b"quizbot_answers" in generate_latest(REGISTRY)  # the rest is still there
