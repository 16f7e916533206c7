"""Draining: readiness off at once, handlers in flight allowed to finish, a bounded wait."""

from __future__ import annotations

import asyncio
import os
import signal

from bot.observability.drain import Drain, stop_on_signals
from bot.observability.metrics import IN_FLIGHT


async def turns(count: int) -> None:
    """Let every ready task take ``count`` turns of the event loop."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_wait_returns_when_the_last_handler_ends():
    drain = Drain()
    release = [asyncio.Event() for _ in range(3)]
    finished: list[int] = []

    @drain.wrap
    async def handler(n: int) -> int:
        await release[n].wait()
        finished.append(n)
        return n * 2

    tasks = [asyncio.create_task(handler(n)) for n in range(3)]
    await asyncio.sleep(0)
    assert drain.active == 3 and IN_FLIGHT._value.get() >= 3
    waiter = asyncio.create_task(drain.wait(5))
    # The handlers end one by one; between them the waiter gets turns enough to return, were it
    # not waiting for the last one (it waits on nothing else: no time passes in between).
    for n in range(2):
        await turns(10)
        assert drain.draining and not waiter.done(), f"returned with {3 - n} handlers running"
        release[n].set()
        await tasks[n]
    await turns(10)
    assert not waiter.done(), "returned with a handler running"
    release[2].set()
    assert await asyncio.wait_for(waiter, 5) is True
    assert sorted(finished) == [0, 1, 2]
    assert [t.result() for t in tasks] == [0, 2, 4]
    assert drain.active == 0


async def test_wait_gives_up_after_the_grace_period():
    drain = Drain()
    never = asyncio.Event()

    async def stuck() -> None:
        async with drain.track():
            await never.wait()

    task = asyncio.create_task(stuck())
    await asyncio.sleep(0)
    assert await drain.wait(0.1) is False
    assert drain.active == 1
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert drain.active == 0


async def test_an_idle_process_drains_at_once():
    drain = Drain()
    assert await asyncio.wait_for(drain.wait(5), 1) is True


async def test_a_handler_that_fails_still_leaves_the_count():
    drain = Drain()

    @drain.wrap
    async def broken() -> None:
        raise RuntimeError("boom")

    results = await asyncio.gather(broken(), return_exceptions=True)
    assert isinstance(results[0], RuntimeError)
    assert drain.active == 0


async def test_sigterm_sets_the_stop_event():
    stop = asyncio.Event()
    stop_on_signals(stop)
    loop = asyncio.get_running_loop()
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(stop.wait(), 5)
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        loop.remove_signal_handler(signal.SIGINT)
