"""``/bandwidth`` in chat: requests read by bot.bandwidth, charts drawn off the event loop."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from bot import messages as M
from bot.bandwidth import (
    ESTIMATE,
    BandwidthError,
    BandwidthRequest,
    Catalogue,
    Estimate,
    Plan,
    answer,
    chart_filename,
    estimate,
    headline,
    load_catalogue,
    parse_over,
    parse_request,
    parse_size,
    render_chart,
    render_table,
)
from bot.chat.content import Chart, EstimateView
from bot.chat.grammar import Args
from bot.engine.charts import chart_estimate
from bot.engine.model import ChartSpec, Place
from bot.observability.heap import freeze_heap
from bot.ratelimit import RateLimit
from bot.text import Text, say

log = logging.getLogger(__name__)

# Charts asked for with /bandwidth that may wait to be drawn (the one drawing included); past
# that a request is refused as busy. A reveal's chart is never refused.
MAX_WAITING = 8
# Each person may ask for PER_USER_BURST charts at once, then one every
# 60 / PER_USER_PER_MINUTE seconds; a workspace (or server) as a whole likewise.
PER_USER_BURST, PER_USER_PER_MINUTE = 3, 6
PER_WORKSPACE_BURST, PER_WORKSPACE_PER_MINUTE = 10, 30


class ChartsBusy(Exception):
    """More charts are waiting to be drawn than the queue holds."""

    def __init__(self, waiting: int) -> None:
        super().__init__(f"{waiting} charts waiting")
        self.waiting = waiting


class ChartAllowance:
    """How often people and workspaces may ask for a chart (a token bucket each)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.users = RateLimit(PER_USER_PER_MINUTE, PER_USER_BURST, clock=clock)
        self.workspaces = RateLimit(PER_WORKSPACE_PER_MINUTE, PER_WORKSPACE_BURST, clock=clock)

    def check(self, place: Place, user: str) -> Text | None:
        """Take one chart from the person's and the workspace's allowance; None, or why not."""
        where = f"{place.platform}:{place.workspace}"
        wait = self.users.check(f"{where}:{user}")
        if wait > 0:
            return say(
                M.BANDWIDTH_TOO_OFTEN,
                seconds=math.ceil(wait),
                burst=PER_USER_BURST,
                every=60 // PER_USER_PER_MINUTE,
            )
        wait = self.workspaces.check(where)
        if wait > 0:
            return say(M.BANDWIDTH_WORKSPACE_TOO_OFTEN, seconds=math.ceil(wait))
        return None


class Charts:
    """Estimates on one catalogue; charts drawn in a worker thread, one at a time."""

    def __init__(self, catalogue: Catalogue, *, max_waiting: int = MAX_WAITING) -> None:
        self.catalogue = catalogue
        # matplotlib must not draw from two threads at once.
        self._drawing = asyncio.Lock()
        self.max_waiting = max_waiting
        self.waiting = 0

    @classmethod
    def load(cls) -> Charts:
        """Return charts on the bundled catalogue (plus the user's file, if configured)."""
        return cls(load_catalogue())

    def estimate(self, request: BandwidthRequest) -> Estimate:
        """Estimate a request (BandwidthError for keys the catalogue lacks)."""
        return estimate(request, self.catalogue)

    def plan(self, text: str) -> Plan:
        """Price ``plan MODEL ...`` text; BandwidthError (with the planner's usage) if it is bad."""
        result = answer(text, self.catalogue).result
        assert isinstance(result, Plan)
        return result

    def busy(self) -> bool:
        """Return True when a chart asked for now would find the queue full."""
        return self.waiting >= self.max_waiting

    async def draw(
        self, result: Estimate | Plan, *, bounded: bool = False, quiz: bool = False
    ) -> Chart:
        """Draw an estimate's chart; ``bounded``: ChartsBusy instead of joining a full queue.

        ``quiz`` outlines the interconnect quiz question's choices (an estimate asked for with
        /bandwidth); a question's own chart compares its own choices and is left plain.
        """
        if bounded and self.busy():
            raise ChartsBusy(self.waiting)
        self.waiting += 1
        try:
            async with self._drawing:
                png = await asyncio.to_thread(render_chart, result, quiz=quiz)
                # The first chart loaded matplotlib, whose objects stay as long as the process.
                freeze_heap("charts")
        finally:
            self.waiting -= 1
        title = headline(result)
        return Chart(png=png, filename=chart_filename(title), title=title)

    async def view(self, result: Estimate | Plan) -> EstimateView:
        """Return the whole answer to a request: table, summary and chart."""
        chart = await self.draw(result, bounded=True, quiz=True)
        return EstimateView(render_table(result, quiz=True), headline(result), chart)

    async def for_question(self, spec: ChartSpec) -> Chart | None:
        """Draw the chart a question's reveal carries; None, logged, if its spec is unusable."""
        try:
            result = chart_estimate(spec, self.catalogue)
        except BandwidthError as exc:
            log.warning("the chart of a question cannot be drawn: %s", exc.message)
            return None
        return await self.draw(result)


def request_of(args: Args) -> BandwidthRequest:
    """Return the request a /bandwidth call asks: its text, or its separate options."""
    line = args.text("request")
    if line is not None:
        return parse_request(line)
    size = args.text("size") or ""
    # The options given, as the table names them; what is left out keeps the request's default.
    given: dict[str, Any] = {opt.name: args[opt.name] for opt in ESTIMATE if opt.name in args}
    if "over" in given:
        given["over"] = parse_over(str(given["over"])) if given["over"] else ()
    return BandwidthRequest(size_text=size, bytes=parse_size(size), **given)
