"""``/bandwidth`` for Slack: estimates from bot.bandwidth, the chart drawn off the event loop."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from bot.bandwidth import (
    USAGE,
    BandwidthError,
    Catalogue,
    Estimate,
    estimate,
    headline,
    load_catalogue,
    parse_request,
    render_chart,
    render_table,
)
from bot.engine.model import ChartSpec


@dataclass(frozen=True)
class Chart:
    """A rendered chart, ready to upload."""

    png: bytes
    filename: str
    title: str


class ChartMaker:
    """Answer /bandwidth requests and draw the charts questions ask for, one drawing at a time."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        # matplotlib is not safe to drive from two threads at once.
        self._drawing = asyncio.Lock()

    @classmethod
    def load(cls) -> ChartMaker:
        """Return a maker on the bundled catalogue (plus the user's file, if configured)."""
        return cls(load_catalogue())

    def estimate(self, text: str) -> Estimate:
        """Parse a /bandwidth request and estimate it; BandwidthError (with usage) if it's bad."""
        try:
            return estimate(parse_request(text), self.catalogue)
        except BandwidthError as exc:
            if exc.usage is None:
                raise BandwidthError(exc.message, usage=USAGE) from None
            raise

    def table(self, result: Estimate) -> str:
        """Return the estimate as an aligned text table."""
        return render_table(result)

    async def chart(self, result: Estimate) -> Chart:
        """Draw the estimate's chart in a worker thread."""
        async with self._drawing:
            png = await asyncio.to_thread(render_chart, result)
        title = headline(result)
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60]
        return Chart(png=png, filename=f"bandwidth-{slug}.png", title=title)

    async def for_question(self, spec: ChartSpec) -> Chart:
        """Draw the chart a question's reveal carries."""
        words = [spec.size, spec.op, f"nodes={spec.nodes}", f"gpus={spec.gpus}"]
        if spec.over:
            words.append("over=" + ",".join(spec.over))
        return await self.chart(self.estimate(" ".join(words)))
