"""The estimate as a PNG chart: horizontal bars on a log time axis, coloured by family."""

from __future__ import annotations

import io
import textwrap
import zlib

from bot.bandwidth._estimate import Estimate
from bot.bandwidth._render import format_seconds, format_slowdown, headline, sig3

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
_SPARE_COLOURS = ("#1B9E77", "#7570B3", "#E7298A", "#66A61E", "#A6761D", "#666666")


def family_colour(family: str) -> str:
    """Return the chart colour of ``family``; unknown families get a stable spare colour."""
    known = FAMILY_COLOURS.get(family)
    if known is not None:
        return known
    return _SPARE_COLOURS[zlib.crc32(family.encode()) % len(_SPARE_COLOURS)]


def render_chart(estimate: Estimate) -> bytes:
    """Return a PNG of the estimate: one bar per interconnect, fastest at the top."""
    # matplotlib is heavy; only callers that draw pay for importing it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator

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
    ax.set_xlim(low / 3, high * 40)
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
            -0.75,
            f" compute step {format_seconds(step)}: bars past it leave GPUs idle",
            fontsize=8.5,
            va="bottom",
        )

    ax.xaxis.set_major_locator(LogLocator(base=10))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _pos: format_seconds(value)))
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
    ax.legend(handles=handles, loc="lower right", fontsize=8, frameon=True, framealpha=0.9)
    ax.set_title("\n".join(textwrap.wrap(headline(estimate), 95)), fontsize=11, loc="left")
    fig.tight_layout()

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
