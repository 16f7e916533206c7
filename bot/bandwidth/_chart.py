"""Estimates and plans as PNG charts: bars on a log time axis, or a plan's step in parts."""

from __future__ import annotations

import io
import math
import textwrap
import zlib
from typing import Any

from bot.bandwidth._estimate import Estimate
from bot.bandwidth._format import format_seconds, format_slowdown, sig3
from bot.bandwidth._plan import Plan, PlanResult
from bot.bandwidth._plan_render import plan_headline
from bot.bandwidth._render import headline

# Okabe-Ito colours (readable with the common colour-vision deficiencies), one per family.
FAMILY_COLOURS = {
    "infiniband": "#0072B2",
    "roce": "#56B4E9",
    "ethernet": "#999999",
    "nvlink": "#009E73",
    "pcie": "#CC79A7",
    "wifi": "#E69F00",
    "fibre-channel": "#D55E00",
    "efa": "#F0E442",
    "slingshot": "#8C564B",
    "omnipath": "#17BECF",
}
# Round human durations for the time axis: powers of ten up to 10 s, then minutes and hours.
_TICKS: tuple[tuple[float, str], ...] = (
    *((10.0**e, f"{10 ** (e + 9):g} ns") for e in range(-9, -6)),
    *((10.0**e, f"{10 ** (e + 6):g} µs") for e in range(-6, -3)),
    *((10.0**e, f"{10 ** (e + 3):g} ms") for e in range(-3, 0)),
    (1.0, "1 s"),
    (10.0, "10 s"),
    (60.0, "1 min"),
    (600.0, "10 min"),
    *((3600.0 * 10**e, f"{10**e:,} h") for e in range(0, 9)),
)
_SPARE_COLOURS = ("#1B9E77", "#7570B3", "#E7298A", "#66A61E", "#A6761D", "#666666")


def family_colour(family: str) -> str:
    """Return the chart colour of ``family``; unknown families get a stable spare colour."""
    known = FAMILY_COLOURS.get(family)
    if known is not None:
        return known
    return _SPARE_COLOURS[zlib.crc32(family.encode()) % len(_SPARE_COLOURS)]


def render_chart(estimate: Estimate | Plan) -> bytes:
    """Return a PNG of the estimate (one bar per interconnect) or of a plan (stacked bars)."""
    if not isinstance(estimate, Estimate):
        return render_plan_chart(estimate)
    # matplotlib is heavy; only callers that draw pay for importing it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    results = estimate.results
    step = estimate.request.step
    count = len(results)
    fig = Figure(figsize=(10, 1.9 + 0.42 * count), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()

    times = [r.seconds for r in results]
    ys = list(range(count))
    bars = ax.barh(
        ys,
        times,
        height=0.68,
        color=[family_colour(r.family) for r in results],
        edgecolor=["black" if r.quiz_choice else "none" for r in results],
        linewidth=[2.2 if r.quiz_choice else 0 for r in results],
    )
    ax.set_xscale("log")
    ax.set_yticks(ys, [f"{r.name}  [{r.key}]" for r in results], fontsize=9)
    for label, r in zip(ax.get_yticklabels(), results, strict=True):
        if r.quiz_choice:
            label.set_fontweight("bold")
    ax.invert_yaxis()

    low, high = min(times), max(times)
    if step is not None:
        low, high = min(low, step), max(high, step)
    left = math.log10(low / 3)
    data = math.log10(high) - left
    # Keep about a third of the width free on the right for the labels after each bar.
    right = math.log10(high) + max(1.0, data * 0.55)
    ax.set_xlim(10**left, 10**right)
    ax.set_ylim(count - 0.5, -1.4 if step is not None else -0.6)
    for bar, r in zip(bars, results, strict=True):
        note = f"{format_seconds(r.seconds)}   {format_slowdown(r.slowdown)}"
        if r.efficiency is not None:
            note += f"   scaling {sig3(r.efficiency * 100)}%"
        ax.text(
            r.seconds * 1.15,
            bar.get_y() + bar.get_height() / 2,
            note,
            va="center",
            fontsize=8.5,
            fontweight="bold" if r.quiz_choice else "normal",
        )
    if step is not None:
        ax.axvline(step, color="black", linestyle="--", linewidth=1.2)
        ax.text(
            step,
            -0.95,
            f" compute step {format_seconds(step)}: past this line the GPUs sit idle",
            fontsize=8.5,
            va="center",
        )

    ticks = [t for t in _TICKS if 10**left <= t[0] <= 10**right]
    while len(ticks) > 9:
        ticks = ticks[::2]
    ax.xaxis.set_major_locator(FixedLocator([t[0] for t in ticks]))
    ax.xaxis.set_major_formatter(FixedFormatter([t[1] for t in ticks]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.tick_params(axis="x", labelsize=8.5)
    ax.set_xlabel("time (log scale); bar labels: time and how many times slower than the fastest")
    ax.grid(axis="x", which="major", color="#dddddd", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)

    families = list(dict.fromkeys(r.family for r in results))
    handles = [Patch(facecolor=family_colour(f), label=f) for f in families]
    if any(r.quiz_choice for r in results):
        handles.append(
            Patch(facecolor="white", edgecolor="black", linewidth=2.2, label="quiz answer choice")
        )
    ax.legend(handles=handles, loc="upper right", fontsize=8, frameon=True, framealpha=0.9)
    return finish(fig, ax, headline(estimate), bottom=0.65)


def finish(fig: Any, ax: Any, title_text: str, *, bottom: float) -> bytes:
    """Title the figure, set its margins from the text sizes and return it as PNG bytes.

    tight_layout would measure every label and cost a third of the drawing time; ``bottom`` is
    the room below the axes, in inches.
    """
    # "$" would start matplotlib's mathtext: a title holds what a user typed (a model name).
    title = textwrap.wrap(title_text.replace("$", r"\$"), 105)
    fig.suptitle("\n".join(title), x=0.012, y=0.995, ha="left", va="top", fontsize=11)
    longest = max(len(label.get_text()) for label in ax.get_yticklabels())
    width, height = fig.get_size_inches()
    fig.subplots_adjust(
        left=min(0.45, (0.25 + 0.075 * longest) / width),
        right=0.98,
        top=1 - (0.15 + 0.22 * len(title)) / height,
        bottom=bottom / height,
    )
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


# Okabe-Ito colours: compute in green, each kind of waiting in its own colour.
SEGMENTS: tuple[tuple[str, str], ...] = (
    ("compute", "#009E73"),
    ("TP all-reduces", "#56B4E9"),
    ("CP exchanges", "#CC79A7"),
    ("PP sends", "#F0E442"),
    ("PP bubble", "#E69F00"),
    ("DP gradients", "#D55E00"),
)


def segments(result: PlanResult) -> tuple[float, ...]:
    """Return the step's parts in seconds, in the order of SEGMENTS; they add up to the step."""
    return (
        result.compute_seconds,
        result.tp_exposed_seconds,
        result.cp_exposed_seconds,
        result.pp_exposed_seconds,
        result.bubble_seconds,
        result.dp_exposed_seconds,
    )


def render_plan_chart(plan: Plan) -> bytes:
    """Return a PNG: each interconnect's step as 100% stacked bars, labelled with its time."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    results = plan.results
    count = len(results)
    fig = Figure(figsize=(10, 2.2 + 0.42 * count), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ys = list(range(count))
    left = [0.0] * count
    for index, (label, colour) in enumerate(SEGMENTS):
        widths = [100 * segments(r)[index] / r.step_seconds for r in results]
        ax.barh(ys, widths, left=left, height=0.68, color=colour, label=label, linewidth=0)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    # The quiz's four choices get a black outline around the whole bar.
    for y, r in zip(ys, results, strict=True):
        if r.quiz_choice:
            ax.barh([y], [100], height=0.68, fill=False, edgecolor="black", linewidth=2.2)
    ax.set_yticks(ys, [f"{r.name}  [{r.key}]" for r in results], fontsize=9)
    for tick, r in zip(ax.get_yticklabels(), results, strict=True):
        if r.quiz_choice:
            tick.set_fontweight("bold")
    ax.invert_yaxis()
    ax.set_xlim(0, 150)
    ax.set_ylim(count - 0.5, -0.6)
    for y, r in zip(ys, results, strict=True):
        note = (
            f"{format_seconds(r.step_seconds)}   {format_slowdown(r.slowdown)}"
            f"   idle {sig3(r.idle_share * 100)}%"
        )
        ax.text(
            102,
            y,
            note,
            va="center",
            fontsize=8.5,
            fontweight="bold" if r.quiz_choice else "normal",
        )
    ax.set_xticks([0, 25, 50, 75, 100], ["0", "25%", "50%", "75%", "100%"])
    ax.tick_params(axis="x", labelsize=8.5)
    ax.set_xlabel("share of one training step; labels: step time, times slower, GPUs idle")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=colour, label=label) for label, colour in SEGMENTS]
    if any(r.quiz_choice for r in results):
        handles.append(
            Patch(facecolor="white", edgecolor="black", linewidth=2.2, label="quiz answer choice")
        )
    fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.01),
        ncol=len(handles),
        fontsize=8,
        frameon=False,
        handlelength=1.2,
        columnspacing=1.0,
    )
    return finish(fig, ax, plan_headline(plan), bottom=1.15)
