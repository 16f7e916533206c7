"""Estimates and plans as PNG charts: bars on a log time axis, or a plan's step in parts."""

from __future__ import annotations

import io
import math
import re
import zlib
from collections.abc import Sequence
from typing import Any

from bot.bandwidth._estimate import Estimate
from bot.bandwidth._format import format_seconds, format_slowdown, sig3
from bot.bandwidth._plan import Plan, PlanResult
from bot.bandwidth._plan_render import plan_headline, shown_rows
from bot.bandwidth._render import headline
from bot.bandwidth._sweep import Sweep

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


def render_chart(estimate: Estimate | Plan, *, quiz: bool = False) -> bytes:
    """Return a PNG of the estimate (one bar per interconnect) or of a plan (stacked bars).

    ``quiz`` outlines the answer choices of the interconnect quiz question on an estimate (chat's
    /bandwidth, where the quiz is played); a plan never marks them.
    """
    if not isinstance(estimate, Estimate):
        return png_of(plan_figure(estimate))
    return png_of(estimate_figure(estimate, quiz=quiz))


def estimate_figure(estimate: Estimate, *, quiz: bool = False) -> Any:
    """Return the matplotlib Figure of an estimate's chart, laid out and titled."""
    # matplotlib is heavy; only callers that draw pay for importing it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    results = estimate.results
    marked = [quiz and r.quiz_choice for r in results]
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
        edgecolor=["black" if m else "none" for m in marked],
        linewidth=[2.2 if m else 0 for m in marked],
    )
    ax.set_xscale("log")
    ax.set_yticks(ys, [f"{r.name}  [{r.key}]" for r in results], fontsize=9)
    for label, m in zip(ax.get_yticklabels(), marked, strict=True):
        if m:
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
    for bar, r, m in zip(bars, results, marked, strict=True):
        note = f"{format_seconds(r.seconds)}   {format_slowdown(r.slowdown)}"
        if r.efficiency is not None:
            note += f"   scaling {sig3(r.efficiency * 100)}%"
        ax.text(
            r.seconds * 1.15,
            bar.get_y() + bar.get_height() / 2,
            note,
            va="center",
            fontsize=8.5,
            fontweight="bold" if m else "normal",
            # An opaque box above the compute-step line: the line stops at a label it would cross.
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5},
            zorder=STEP_LINE_Z + 1,
        )
    if step is not None:
        ax.axvline(step, color="black", linestyle="--", linewidth=1.2, zorder=STEP_LINE_Z)
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
    if any(marked):
        handles.append(
            Patch(facecolor="white", edgecolor="black", linewidth=2.2, label="quiz answer choice")
        )
    ax.legend(handles=handles, loc="upper right", fontsize=8, frameon=True, framealpha=0.9)
    lay_out(fig, ax, headline(estimate), bottom=0.65)
    return fig


# The compute-step line is drawn over the bars; the labels after the bars are drawn over it.
STEP_LINE_Z = 3
TITLE_CHARS = 105


def title_lines(text: str, width: int = TITLE_CHARS) -> list[str]:
    """Break a chart title into lines at its clauses (after ``;``, ``,`` or ``:``), not inside one.

    "seq 8,192" or "16 nodes x 8" split over two lines reads as two numbers; a clause longer than
    a line is broken at spaces as a last resort.
    """
    clauses = re.findall(r".+?(?:[;,:] |$)", text)
    lines: list[str] = []
    current = ""
    for clause in clauses:
        if len(current) + len(clause.rstrip()) <= width:
            current += clause
            continue
        if current:
            lines.append(current.rstrip())
        current = ""
        while len(clause.rstrip()) > width:
            cut = clause.rfind(" ", 0, width + 1)
            cut = cut if cut > 0 else width
            lines.append(clause[:cut].rstrip())
            clause = clause[cut:].lstrip()
        current = clause
    if current.strip():
        lines.append(current.rstrip())
    return lines


def lay_out(fig: Any, ax: Any, title_text: str, *, bottom: float) -> None:
    """Title the figure and set its margins from the text sizes.

    tight_layout would measure every label and cost a third of the drawing time; ``bottom`` is
    the room below the axes, in inches.
    """
    # "$" would start matplotlib's mathtext: a title holds what a user typed (a model name).
    title = title_lines(title_text.replace("$", r"\$"))
    fig.suptitle("\n".join(title), x=0.012, y=0.995, ha="left", va="top", fontsize=11)
    longest = max(len(label.get_text()) for label in ax.get_yticklabels())
    width, height = fig.get_size_inches()
    fig.subplots_adjust(
        left=min(0.45, (0.25 + 0.075 * longest) / width),
        right=0.98,
        top=1 - (0.15 + 0.22 * len(title)) / height,
        bottom=bottom / height,
    )


def png_of(fig: Any) -> bytes:
    """Return the figure as PNG bytes."""
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


# A part of the step narrower than this share of the axis cannot be seen: it is left out of the
# legend, which lists only the parts drawn.
VISIBLE_SHARE = 0.003
# The axis runs to the longest step, or to this many times the fastest if that is shorter: a bar
# past it (Wi-Fi at a thousand times slower) is cut short and says so, instead of shrinking the
# others to slivers.
CUT_RATIO = 12.0
# Time units for the plan chart's axis: the largest whose value the axis reaches twice.
_UNITS = ((3600.0, "hours"), (60.0, "minutes"), (1.0, "seconds"))


def axis_unit(longest: float) -> tuple[float, str]:
    """Return (seconds per unit, unit name) for a time axis running to ``longest`` seconds."""
    for scale, name in _UNITS:
        if longest >= 2 * scale:
            return scale, name
    return 1.0, "seconds"


def drawn_parts(results: Sequence[PlanResult], end: float) -> list[list[float]]:
    """Return each result's parts in seconds (SEGMENTS order), cut off where the axis ends."""
    out = []
    for r in results:
        start, row = 0.0, []
        for part in segments(r):
            width = max(0.0, min(part, end - start))
            row.append(width)
            start += width
        out.append(row)
    return out


def plan_figure(plan: Plan) -> Any:
    """Return the plan chart's Figure: each interconnect's step as stacked bars, in time.

    Every bar is drawn to one time scale, so a slower step is a longer bar; its parts are
    compute and each kind of waiting. Inside one node no network is used and one bar stands
    for every interconnect.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    rows = shown_rows(plan)
    results = [r for _, _, r in rows]
    count = len(rows)
    fig = Figure(figsize=(10, 2.0 + 0.42 * count), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ys = list(range(count))
    steps = [r.step_seconds for r in results]
    end_s = min(max(steps), CUT_RATIO * min(steps))
    scale, unit = axis_unit(end_s)
    end = end_s / scale
    parts = drawn_parts(results, end_s)
    left = [0.0] * count
    drawn = []
    for index, (label, colour) in enumerate(SEGMENTS):
        widths = [row[index] / scale for row in parts]
        ax.barh(ys, widths, left=left, height=0.68, color=colour, label=label, linewidth=0)
        left = [a + b for a, b in zip(left, widths, strict=True)]
        if max(widths) >= VISIBLE_SHARE * end:
            drawn.append((label, colour))
    ax.set_yticks(ys, [f"{name}  [{key}]" if key != "-" else name for key, name, _ in rows])
    ax.tick_params(axis="y", labelsize=9)
    ax.invert_yaxis()
    # The room right of the longest bar holds its label; the axis line stops at the data.
    ax.set_xlim(0, end * 1.5)
    ax.set_ylim(count - 0.5, -0.6)
    cut = False
    for y, r, length in zip(ys, results, left, strict=True):
        note = (
            f"{format_seconds(r.step_seconds)}   {format_slowdown(r.slowdown)}"
            f"   idle {sig3(r.idle_share * 100)}%"
        )
        if r.step_seconds > end_s * 1.0001:
            cut = True
            ax.text(
                length,
                y,
                "//",
                color="white",
                fontsize=13,
                fontweight="bold",
                ha="right",
                va="center",
            )
        ax.text(length + end * 0.015, y, note, va="center", fontsize=8.5)
    locator = MaxNLocator(nbins=7, steps=[1, 2, 2.5, 5, 10])
    ticks = [t for t in locator.tick_values(0, end) if 0 <= t <= end * 1.0001]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.spines["bottom"].set_bounds(0, end)
    ax.tick_params(axis="x", labelsize=8.5)
    ax.set_xlabel(
        f"{unit} per training step"
        + (f" (bars past {CUT_RATIO:g}x the fastest cut short)" if cut else "")
        + "; labels: step time, times slower, GPUs idle"
    )
    ax.grid(axis="x", which="major", color="#dddddd", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=colour, label=label) for label, colour in drawn]
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
    lay_out(fig, ax, plan_headline(plan), bottom=1.0)
    return fig


def render_sweep_chart(result: Sweep) -> bytes:
    """Return a PNG: busbw against size (log-log), one line per interconnect."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    sizes = [row.bytes for row in result.rows]
    for i, key in enumerate(result.keys):
        busbw = [row.results[i].busbw_gbps for row in result.rows]
        colour = family_colour(result.families[i])
        ax.plot(sizes, busbw, marker="o", markersize=3, label=key, color=colour)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(f"{result.request.op}: busbw by size", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()
