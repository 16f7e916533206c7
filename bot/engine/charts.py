"""The ``/bandwidth`` estimate a question's ``chart`` field asks for."""

from __future__ import annotations

from bot.bandwidth import (
    BandwidthRequest,
    Catalogue,
    Estimate,
    estimate,
    load_catalogue,
    parse_size,
)
from bot.engine.model import ChartSpec


def chart_request(spec: ChartSpec) -> BandwidthRequest:
    """Turn a question's chart spec into a bandwidth request (BandwidthError if it is bad)."""
    return BandwidthRequest(
        size_text=spec.size,
        bytes=parse_size(spec.size),
        op=spec.op,
        nodes=spec.nodes,
        gpus=spec.gpus,
        over=spec.over,
    )


def chart_estimate(spec: ChartSpec, catalogue: Catalogue | None = None) -> Estimate:
    """Compute the estimate behind a question's chart."""
    return estimate(chart_request(spec), catalogue or load_catalogue())
