"""How long moving data takes over each interconnect: sizes, cost models, table, JSON, chart.

A pure package: it reads its data file and, for charts only, imports matplotlib inside
``render_chart``. The chat adapters and ``quizbot bandwidth`` both call::

    request = parse_request("70B params bf16 allreduce nodes=4 gpus=8")
    result = estimate(request, load_catalogue())
    text = render_table(result)        # or to_json(result), render_chart(result)
"""

from __future__ import annotations

from bot.bandwidth._catalogue import (
    ENV_VAR,
    QUIZ_CHOICES,
    Catalogue,
    Interconnect,
    load_catalogue,
    merge_user_file,
    parse_catalogue_text,
)
from bot.bandwidth._chart import render_chart
from bot.bandwidth._errors import BandwidthError
from bot.bandwidth._estimate import Estimate, Result, estimate
from bot.bandwidth._render import format_seconds, headline, render_table, to_json
from bot.bandwidth._request import (
    OPS,
    USAGE,
    BandwidthRequest,
    normalize_op,
    parse_count,
    parse_over,
    parse_request,
    parse_step,
)
from bot.bandwidth._sizes import describe_bytes, parse_size

__all__ = [
    "ENV_VAR",
    "OPS",
    "QUIZ_CHOICES",
    "USAGE",
    "BandwidthError",
    "BandwidthRequest",
    "Catalogue",
    "Estimate",
    "Interconnect",
    "Result",
    "describe_bytes",
    "estimate",
    "format_seconds",
    "headline",
    "load_catalogue",
    "merge_user_file",
    "normalize_op",
    "parse_catalogue_text",
    "parse_count",
    "parse_over",
    "parse_request",
    "parse_size",
    "parse_step",
    "render_chart",
    "render_table",
    "to_json",
]
