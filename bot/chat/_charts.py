"""``/bandwidth`` in chat: requests read by bot.bandwidth, charts drawn off the event loop."""

from __future__ import annotations

import asyncio
import logging
import re

from bot.bandwidth import (
    DEFAULT_INTRA,
    BandwidthError,
    BandwidthRequest,
    Catalogue,
    Estimate,
    Plan,
    answer,
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
from bot.engine.model import ChartSpec
from bot.observability.heap import freeze_heap

log = logging.getLogger(__name__)


class Charts:
    """Estimates on one catalogue; charts drawn in a worker thread, one at a time."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        # matplotlib must not draw from two threads at once.
        self._drawing = asyncio.Lock()

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

    async def draw(self, result: Estimate | Plan) -> Chart:
        """Draw an estimate's chart."""
        async with self._drawing:
            png = await asyncio.to_thread(render_chart, result)
            # The first chart loaded matplotlib, whose objects stay as long as the process.
            freeze_heap("charts")
        title = headline(result)
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60]
        return Chart(png=png, filename=f"bandwidth-{slug}.png", title=title)

    async def view(self, result: Estimate | Plan) -> EstimateView:
        """Return the whole answer to a request: table, summary and chart."""
        return EstimateView(render_table(result), headline(result), await self.draw(result))

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
    over = args.text("over")
    return BandwidthRequest(
        size_text=size,
        bytes=parse_size(size),
        op=args.text("op") or "transfer",
        nodes=args.number("nodes") or 2,
        gpus=args.number("gpus") or 1,
        nics=args.number("nics"),
        step=args.decimal("step"),
        over=parse_over(over) if over else (),
        intra=args.text("intra") or DEFAULT_INTRA,
        algo=args.text("algo") or "auto",
        sharp=bool(args.flag("sharp")),
    )
