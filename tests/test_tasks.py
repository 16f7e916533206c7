"""finish_within: a deadline on a store call that gives up waiting, never cancels the call."""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from bot.tasks import finish_within, still_running


async def test_a_call_in_time_returns_its_result_and_raises_its_error():
    async def answer() -> int:
        return 42

    async def fail() -> int:
        raise ValueError("bad")

    assert await finish_within(answer(), 5, what="the answer") == 42
    with pytest.raises(ValueError, match="bad"):
        await finish_within(fail(), 5, what="the failure")
    assert still_running() == 0


async def test_a_late_call_times_out_and_still_runs_to_its_end():
    release, finished = asyncio.Event(), asyncio.Event()

    async def slow() -> str:
        await release.wait()
        finished.set()
        return "done"

    with pytest.raises(TimeoutError, match=re.escape("the slow call took over 0.01 s")):
        await finish_within(slow(), 0.01, what="the slow call")
    assert still_running() == 1  # given up on, not cancelled
    release.set()
    await asyncio.wait_for(finished.wait(), 5)
    await asyncio.sleep(0)  # its done callbacks run on the next turn of the loop
    assert still_running() == 0


async def test_a_late_call_that_fails_is_logged(caplog: pytest.LogCaptureFixture):
    release = asyncio.Event()
    failed = asyncio.Event()

    async def slow_failure() -> None:
        await release.wait()
        failed.set()
        raise ConnectionError("gone")

    with pytest.raises(TimeoutError):
        await finish_within(slow_failure(), 0.01, what="the ping")
    with caplog.at_level(logging.WARNING, logger="bot.tasks"):
        release.set()
        await asyncio.wait_for(failed.wait(), 5)
        await asyncio.sleep(0)
    assert "the ping, given up on, then failed: ConnectionError" in caplog.text
    assert still_running() == 0


async def test_cancelling_the_caller_leaves_the_call_running():
    release, started, finished = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def slow() -> None:
        started.set()
        await release.wait()
        finished.set()

    waiting = asyncio.ensure_future(finish_within(slow(), 60, what="the call"))
    await asyncio.wait_for(started.wait(), 5)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert not finished.is_set() and still_running() == 1
    release.set()
    await asyncio.wait_for(finished.wait(), 5)
    await asyncio.sleep(0)
    assert still_running() == 0
