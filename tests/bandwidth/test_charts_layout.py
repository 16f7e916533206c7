"""What the plan table and the charts show: rows that tie, layouts that do not fit, legends,
axes and titles that match what is drawn, and labels the compute-step line does not cross."""

from __future__ import annotations

import pytest
from matplotlib.lines import Line2D

from bot.bandwidth import (
    ENV_VAR,
    PlanRequest,
    estimate,
    load_catalogue,
    parse_request,
    plan,
    render_table,
)
from bot.bandwidth._chart import (
    CUT_RATIO,
    SEGMENTS,
    STEP_LINE_Z,
    TITLE_CHARS,
    estimate_figure,
    plan_figure,
    title_lines,
)
from bot.bandwidth._plan_render import plan_headline

CATALOGUE = load_catalogue(extra=None)


@pytest.fixture(autouse=True)
def _bundled_catalogue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def _plan(**fields: object) -> object:
    defaults: dict[str, object] = {"model": "llama3-70b", "gpus": 128, "tp": 8}
    defaults.update(fields)
    return plan(PlanRequest(**defaults), CATALOGUE)  # type: ignore[arg-type]


def _table_rows(table: str) -> list[str]:
    lines = table.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("key "))
    rows = []
    for line in lines[header + 2 :]:
        if not line or line.startswith(("idle =", "TFLOP/s and MFU", "Memory per GPU")):
            break
        rows.append(line)
    return rows


# ----- the plan table -----


def test_one_node_shows_one_row_not_ten_that_tie() -> None:
    p = _plan(model="llama3-8b", gpus=8, tp=1)
    assert p.layout.nodes == 1 and len(p.results) > 1
    rows = _table_rows(render_table(p))
    assert len(rows) == 1
    assert rows[0].startswith("-    no network (1 node, nvlink4)")
    assert any("every interconnect gives this same step (shown once)" in w for w in p.warnings)
    assert not any("every row ties" in w for w in p.warnings)


def test_ties_list_the_faster_link_first() -> None:
    # Inside one node every link gives the same step: the order is by link speed, then key.
    p = _plan(model="llama3-8b", gpus=8, tp=1, over=("1gbe", "ib-ndr", "10gbe", "100gbe"))
    assert [r.key for r in p.results] == ["ib-ndr", "100gbe", "10gbe", "1gbe"]


def test_a_layout_that_does_not_fit_shows_no_mfu() -> None:
    p = _plan(model="llama3-70b", gpus=16, tp=8)
    assert not p.memory.fits
    table = render_table(p)
    for row in _table_rows(table):
        cells = row.split()
        # TFLOP/s and MFU are the 4th- and 3rd-last cells: "-" for a layout that cannot run.
        assert cells[-4:-2] == ["-", "-"], row
        assert "%" not in cells[-3]
    assert "TFLOP/s and MFU left out: the layout does not fit in memory" in table
    fits = render_table(_plan(model="llama3-70b", gpus=128, tp=8, pp=2))
    assert "left out" not in fits
    assert all(row.split()[-3].endswith("%") for row in _table_rows(fits))


def test_plans_never_mark_the_quiz_choices() -> None:
    table = render_table(_plan(over=("ib-hdr", "1gbe", "fc32", "wifi6")))
    assert "quiz" not in table
    assert not any(line.startswith("*") for line in table.splitlines())


# ----- the plan chart -----


def _legend_labels(fig: object) -> list[str]:
    (legend,) = fig.legends  # type: ignore[attr-defined]
    return [text.get_text() for text in legend.get_texts()]


def test_the_plan_legend_lists_only_the_parts_drawn() -> None:
    # tp 8, pp 1, cp 1: no CP exchanges, no PP sends, no bubble.
    p = _plan(over=("ib-ndr", "100gbe", "1gbe"))
    assert p.layout.pp == 1 and p.layout.cp == 1
    labels = _legend_labels(plan_figure(p))
    assert labels == ["compute", "TP all-reduces", "DP gradients"]
    assert set(labels) < {label for label, _ in SEGMENTS}


def test_plan_bars_are_drawn_to_one_time_scale() -> None:
    p = _plan(over=("ib-ndr", "1gbe"))
    fig = plan_figure(p)
    ax = fig.axes[0]
    ends: dict[float, float] = {}
    for bar in ax.patches:
        y = round(bar.get_y() + bar.get_height() / 2, 6)
        ends[y] = max(ends.get(y, 0.0), bar.get_x() + bar.get_width())
    fast, slow = (ends[y] for y in sorted(ends))
    ratio = p.results[1].step_seconds / p.results[0].step_seconds
    assert ratio > 3
    assert slow / fast == pytest.approx(ratio, rel=1e-6)
    # The axis line ends at the longest bar, not at 150% of anything.
    assert ax.spines["bottom"].get_bounds() == pytest.approx((0, slow))
    assert max(ax.get_xticks()) <= slow * 1.0001
    assert "per training step" in ax.get_xlabel() and "share" not in ax.get_xlabel()


def test_a_bar_far_past_the_others_is_cut_short_and_says_so() -> None:
    p = _plan(over=("ib-ndr", "wifi6"))
    fig = plan_figure(p)
    ax = fig.axes[0]
    ends: dict[float, float] = {}
    for bar in ax.patches:
        y = round(bar.get_y() + bar.get_height() / 2, 6)
        ends[y] = max(ends.get(y, 0.0), bar.get_x() + bar.get_width())
    fast, slow = (ends[y] for y in sorted(ends))
    assert slow / fast == pytest.approx(CUT_RATIO, rel=1e-6)
    assert "cut short" in ax.get_xlabel()
    assert any(t.get_text() == "//" for t in ax.texts)


def test_one_node_draws_one_bar() -> None:
    fig = plan_figure(_plan(model="llama3-8b", gpus=8, tp=1))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["no network (1 node, nvlink4)"]


def test_the_plan_chart_has_no_quiz_outline() -> None:
    fig = plan_figure(_plan(over=("ib-hdr", "1gbe", "fc32", "wifi6")))
    assert "quiz answer choice" not in _legend_labels(fig)
    assert all(bar.get_linewidth() == 0 for bar in fig.axes[0].patches)


def test_titles_break_between_clauses_not_inside_one() -> None:
    p = _plan(gpus=128, tp=8)
    title = plan_headline(p)
    lines = title_lines(title)
    assert len(lines) > 1 and all(len(line) <= TITLE_CHARS for line in lines)
    assert " ".join(lines) == title
    for line in lines[:-1]:
        assert line.endswith((";", ",", ":")), lines
    assert any("seq 8,192" in line for line in lines)
    fig = plan_figure(p)
    assert fig._suptitle.get_text() == "\n".join(lines)


def test_a_clause_longer_than_a_line_is_broken_at_spaces() -> None:
    lines = title_lines("word " * 40, width=30)
    assert all(len(line) <= 30 for line in lines)
    assert " ".join(lines).split() == ["word"] * 40


# ----- the estimate chart -----


def test_the_compute_step_line_does_not_cross_the_bar_labels() -> None:
    result = estimate(parse_request("70B params bf16 allreduce nodes=16 gpus=8 step=2"), CATALOGUE)
    fig = estimate_figure(result)
    fig.canvas.draw()
    ax = fig.axes[0]
    (line,) = [a for a in ax.lines if isinstance(a, Line2D) and a.get_linestyle() == "--"]
    assert line.get_zorder() == STEP_LINE_Z
    x = ax.transData.transform((result.request.step, 0))[0]
    renderer = fig.canvas.get_renderer()
    crossed = 0
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        if not box.x0 <= x <= box.x1 or text.get_text().startswith(" compute step"):
            continue
        crossed += 1
        # The label sits on an opaque white box drawn above the line, which hides the line there.
        patch = text.get_bbox_patch()
        assert patch is not None, text.get_text()
        assert patch.get_facecolor()[:4] == (1.0, 1.0, 1.0, 1.0)
        assert text.get_zorder() > line.get_zorder()
    assert crossed >= 2  # "729 ms" and "1.45 s" start left of the 2 s line and run past it


def test_the_estimate_chart_outlines_the_quiz_choices_only_when_asked() -> None:
    result = estimate(parse_request("140GB allreduce gpus=8"), CATALOGUE)
    plain = estimate_figure(result)
    assert "quiz answer choice" not in [t.get_text() for t in plain.axes[0].get_legend().texts]
    asked = estimate_figure(result, quiz=True)
    assert "quiz answer choice" in [t.get_text() for t in asked.axes[0].get_legend().texts]
