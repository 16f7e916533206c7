"""One read in flight per key, shared by the callers that arrive while it runs."""

from __future__ import annotations

import asyncio

import pytest

from bot.engine.shared import Shared


async def test_callers_arriving_together_share_one_read_and_a_later_one_reads_again() -> None:
    shared: Shared[str, int] = Shared()
    started, gate = asyncio.Event(), asyncio.Event()
    calls = 0

    async def read() -> int:
        nonlocal calls
        calls += 1
        started.set()
        await gate.wait()
        return calls

    waiting = [asyncio.ensure_future(shared.get("k", read)) for _ in range(5)]
    await asyncio.wait_for(started.wait(), 5)
    late = asyncio.ensure_future(shared.get("k", read))  # arrives while the read runs
    gate.set()
    assert await asyncio.gather(*waiting, late) == [1] * 6
    assert await shared.get("k", read) == 2  # done: the next caller reads afresh


async def test_a_caller_given_up_on_does_not_cancel_the_read_the_others_wait_for() -> None:
    shared: Shared[str, str] = Shared()
    started, gate = asyncio.Event(), asyncio.Event()

    async def read() -> str:
        started.set()
        await gate.wait()
        return "value"

    first = asyncio.ensure_future(shared.get("k", read))
    second = asyncio.ensure_future(shared.get("k", read))
    await asyncio.wait_for(started.wait(), 5)
    first.cancel()
    gate.set()
    assert await second == "value"
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_a_failed_read_reaches_every_caller_and_the_next_one_tries_again() -> None:
    shared: Shared[str, str] = Shared()
    fail = [True]

    async def read() -> str:
        await asyncio.sleep(0)
        if fail[0]:
            raise OSError("database gone")
        return "value"

    together = await asyncio.gather(
        shared.get("k", read), shared.get("k", read), return_exceptions=True
    )
    assert [type(e) for e in together] == [OSError, OSError]
    fail[0] = False
    assert await shared.get("k", read) == "value"
