"""How long moving data takes over each interconnect, and how long a training step takes.

A pure package: it reads its data files and, for charts only, imports matplotlib inside
``render_chart``. The chat layer (``bot.chat._charts``) estimates a request built from the
command's typed options, and prices a plan from its text::

    result = estimate(request, catalogue)     # a BandwidthRequest from the options table's fields
    result = answer("plan llama3-70b gpus=128", catalogue).result   # a Plan
    png = render_chart(result, quiz=True)     # slow: run it in a worker thread

``answer`` reads either form of ``/bandwidth`` text and also returns its table, title and chart
file name (``chart_filename``), for a caller that wants the whole reply in one call. ``quizbot
bandwidth`` calls the parts::

    result = estimate(parse_request("70B params bf16 allreduce nodes=4 gpus=8"), load_catalogue())
    text = render_table(result)        # or to_json(result), render_chart(result)
    step = plan(parse_plan("llama3-70b gpus=128 tp=8 pp=2"), load_catalogue())
    text = render_table(step)          # or plan_to_json(step), render_chart(step)
    curve = sweep(parse_request("16GiB allreduce nodes=2 gpus=8"), load_catalogue())
    best = search(parse_plan("llama3-70b gpus=256 search"), load_catalogue())
    band("allreduce", 2**30)           # the relative uncertainty of such a figure (0.15)
"""

from __future__ import annotations

from bot.bandwidth._bands import BANDS, band
from bot.bandwidth._catalogue import (
    ENV_VAR,
    QUIZ_CHOICES,
    TRANSPORTS,
    Catalogue,
    Interconnect,
    load_catalogue,
    merge_user_file,
    parse_catalogue_text,
)
from bot.bandwidth._chart import render_chart, render_sweep_chart
from bot.bandwidth._chat import Reply, answer, chart_filename, is_plan
from bot.bandwidth._errors import BandwidthError
from bot.bandwidth._estimate import Estimate, Result, estimate
from bot.bandwidth._format import format_seconds
from bot.bandwidth._hardware import Gpu, Hardware, Model, load_hardware
from bot.bandwidth._models import ALGORITHMS, PROTOCOL_CHOICES, collective, collective_formula
from bot.bandwidth._options import (
    ESTIMATE,
    OPS,
    PLAN,
    Kind,
    Opt,
    Options,
    parse_count,
    parse_over,
    parse_step,
    parse_switch,
)
from bot.bandwidth._plan import Layout, Memory, Plan, PlanResult, Volumes, plan
from bot.bandwidth._plan_render import plan_to_json
from bot.bandwidth._plan_request import PLAN_USAGE, PlanRequest, parse_plan
from bot.bandwidth._render import headline, render_table, to_json
from bot.bandwidth._request import (
    DEFAULT_INTRA,
    USAGE,
    BandwidthRequest,
    normalize_op,
    parse_request,
)
from bot.bandwidth._search import Search, render_search, search, search_to_json
from bot.bandwidth._sizes import describe_bytes, parse_size
from bot.bandwidth._sweep import Sweep, render_sweep, sweep, sweep_to_json

__all__ = [
    "ALGORITHMS",
    "BANDS",
    "DEFAULT_INTRA",
    "ENV_VAR",
    "ESTIMATE",
    "OPS",
    "PLAN",
    "PLAN_USAGE",
    "PROTOCOL_CHOICES",
    "QUIZ_CHOICES",
    "TRANSPORTS",
    "USAGE",
    "BandwidthError",
    "BandwidthRequest",
    "Catalogue",
    "Estimate",
    "Gpu",
    "Hardware",
    "Interconnect",
    "Kind",
    "Layout",
    "Memory",
    "Model",
    "Opt",
    "Options",
    "Plan",
    "PlanRequest",
    "PlanResult",
    "Reply",
    "Result",
    "Search",
    "Sweep",
    "Volumes",
    "answer",
    "band",
    "chart_filename",
    "collective",
    "collective_formula",
    "describe_bytes",
    "estimate",
    "format_seconds",
    "headline",
    "is_plan",
    "load_catalogue",
    "load_hardware",
    "merge_user_file",
    "normalize_op",
    "parse_catalogue_text",
    "parse_count",
    "parse_over",
    "parse_plan",
    "parse_request",
    "parse_size",
    "parse_step",
    "parse_switch",
    "plan",
    "plan_to_json",
    "render_chart",
    "render_search",
    "render_sweep",
    "render_sweep_chart",
    "render_table",
    "search",
    "search_to_json",
    "sweep",
    "sweep_to_json",
    "to_json",
]
