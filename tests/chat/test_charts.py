"""/bandwidth charts: a bounded queue of drawings, and an allowance per person and workspace."""

from __future__ import annotations

import asyncio

import pytest

from bot.bandwidth import BandwidthRequest, parse_size
from bot.chat import Charts
from bot.chat._charts import ChartAllowance, ChartsBusy
from bot.engine.model import Place

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def charts() -> Charts:
    return Charts.load()


def request() -> BandwidthRequest:
    return BandwidthRequest(size_text="1GB", bytes=parse_size("1GB"))


async def test_a_full_queue_refuses_a_requested_chart_but_never_a_reveal(charts: Charts):
    bounded = Charts(charts.catalogue, max_waiting=2)
    result = bounded.estimate(request())
    seen: list[int] = []
    original = bounded._drawing.acquire

    async def acquire() -> bool:
        seen.append(bounded.waiting)  # how many were counted as waiting, this one included
        return await original()

    bounded._drawing.acquire = acquire  # type: ignore[method-assign]
    drawn = await asyncio.gather(*(bounded.draw(result, bounded=True) for _ in range(2)))
    assert all(chart.png.startswith(PNG) for chart in drawn)
    assert max(seen) == 2 and bounded.waiting == 0 and not bounded.busy()
    bounded.waiting = 2  # two charts waiting: the queue is full
    assert bounded.busy()
    with pytest.raises(ChartsBusy) as caught:
        await bounded.draw(result, bounded=True)
    assert caught.value.waiting == 2
    reveal = await bounded.draw(result)  # a reveal's chart still queues
    assert reveal.png.startswith(PNG) and bounded.waiting == 2


def test_the_allowance_is_per_person_then_per_workspace():
    now = [0.0]
    allowance = ChartAllowance(clock=lambda: now[0])
    here = Place("slack", "T1", "C1")
    assert [allowance.check(here, "U1") for _ in range(3)] == [None, None, None]
    refused = allowance.check(here, "U1")
    assert refused is not None and "try again in 10 seconds" in refused.plain()
    now[0] += 10.0  # one more every ten seconds
    assert allowance.check(here, "U1") is None
    # The workspace as a whole: ten at once across people, then one every two seconds.
    for user in ("U2", "U3", "U4", "U5"):
        for _ in range(3):
            allowance.check(here, user)
    refused = allowance.check(here, "U6")
    assert refused is not None and "This workspace has asked" in refused.plain()
    # Another workspace is not held back by this one.
    assert allowance.check(Place("slack", "T2", "C1"), "U6") is None
