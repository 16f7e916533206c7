"""A plan as a PNG: one bar per interconnect, the step split into compute and waiting."""

from __future__ import annotations

from bot.bandwidth._chart import finish
from bot.bandwidth._plan import Plan, PlanResult
from bot.bandwidth._plan_render import plan_headline
from bot.bandwidth._render import format_seconds, format_slowdown, sig3

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
