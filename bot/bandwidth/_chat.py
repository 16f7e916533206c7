"""The chat form of /bandwidth: one call turns the command's text into a reply to render."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.bandwidth._catalogue import Catalogue, load_catalogue
from bot.bandwidth._errors import BandwidthError
from bot.bandwidth._estimate import Estimate, estimate
from bot.bandwidth._format import WIDTH
from bot.bandwidth._plan import Plan, plan
from bot.bandwidth._plan_request import PLAN_USAGE, parse_plan
from bot.bandwidth._render import headline, render_table
from bot.bandwidth._request import USAGE, parse_request


@dataclass(frozen=True, slots=True)
class Reply:
    """What /bandwidth answers: the table, a title and a file name for its chart.

    ``result`` is the Estimate or Plan behind it; draw its chart with
    ``render_chart(reply.result, quiz=True)`` (PNG bytes, slow: run it off the event loop).
    """

    kind: str  # "estimate" or "plan"
    result: Estimate | Plan
    title: str
    table: str
    filename: str


def is_plan(text: str) -> bool:
    """Return whether ``text`` asks the planner (``plan MODEL ...``) rather than for a size."""
    words = text.split()
    if words and words[0].lower() in ("/bandwidth", "bandwidth"):
        words = words[1:]
    return bool(words) and words[0].lower() == "plan"


def answer(text: str, catalogue: Catalogue | None = None, *, width: int = WIDTH) -> Reply:
    """Answer the text of ``/bandwidth ...``: an estimate for a size, a plan for ``plan ...``.

    Raises BandwidthError, whose ``usage`` is the matching usage text, on anything that does
    not parse or cannot be priced.
    """
    links = catalogue if catalogue is not None else load_catalogue()
    if is_plan(text):
        try:
            request = parse_plan(text)
            if request.search:
                from bot.bandwidth._search import render_search, search

                found = search(request, links)
                best = found.best
                title = "Layout search: " + headline(best)
                table = render_search(found, width)
                return Reply("plan", best, title, table, chart_filename(title))
            result: Estimate | Plan = plan(request, links)
        except BandwidthError as exc:
            raise exc.with_usage(exc.usage or PLAN_USAGE) from None
        kind = "plan"
    else:
        try:
            result = estimate(parse_request(text), links)
        except BandwidthError as exc:
            raise exc.with_usage(exc.usage or USAGE) from None
        kind = "estimate"
    title = headline(result)
    # Chat is where the quiz is played: an estimate marks the interconnect question's choices.
    table = render_table(result, width, quiz=True)
    return Reply(kind, result, title, table, chart_filename(title))


def chart_filename(title: str) -> str:
    """Return a safe PNG file name made from a chart's title."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60].strip("-")
    return f"bandwidth-{slug or 'chart'}.png"
