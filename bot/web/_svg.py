"""Charts as inline SVG: no script, no external file, text escaped, readable at phone width.

Each chart scales to its container (``viewBox`` with no fixed width); colours come from the
stylesheet through class names, so the page's Content-Security-Policy needs no inline styles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

from bot.engine.activity import DayActivity

WIDTH = 640
HEIGHT = 220
PAD_LEFT = 40
PAD_BOTTOM = 28
PAD_TOP = 12


@dataclass(frozen=True, slots=True)
class Bar:
    """One labelled bar: its label, value, the text shown beside it, and a CSS class."""

    label: str
    value: float
    text: str
    css: str = "bar"


def _nice_max(value: float) -> float:
    """Return a round axis maximum at or above ``value`` (1, 2 or 5 times a power of ten)."""
    if value <= 0:
        return 1.0
    step = 1.0
    while step * 10 <= value:
        step *= 10
    for factor in (1, 2, 5, 10):
        if step * factor >= value:
            return step * factor
    return step * 10


def activity_chart(days: Sequence[DayActivity], title: str) -> Markup:
    """Return a column chart of answers per day, with active players as dots."""
    n = max(len(days), 1)
    top = _nice_max(max((d.answers for d in days), default=0))
    plot_w = WIDTH - PAD_LEFT - 8
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    col = plot_w / n
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for frac in (0.0, 0.5, 1.0):
        y = PAD_TOP + plot_h * (1 - frac)
        parts.append(
            f'<line class="grid" x1="{PAD_LEFT}" y1="{y:.1f}" x2="{WIDTH - 8}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{PAD_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{top * frac:g}</text>"
        )
    label_every = max(1, round(n / 7))
    for i, d in enumerate(days):
        x = PAD_LEFT + i * col
        h = plot_h * d.answers / top
        tip = f"{d.day.isoformat()}: {d.answers} answers by {d.players} players"
        parts.append(
            f'<rect class="bar" x="{x + col * 0.15:.1f}" y="{PAD_TOP + plot_h - h:.1f}" '
            f'width="{col * 0.7:.1f}" height="{h:.1f}"><title>{escape(tip)}</title></rect>'
        )
        if d.players:
            py = PAD_TOP + plot_h * (1 - d.players / top)
            parts.append(f'<circle class="dot" cx="{x + col / 2:.1f}" cy="{py:.1f}" r="3"/>')
        if i % label_every == 0:
            parts.append(
                f'<text class="axis" x="{x + col / 2:.1f}" y="{HEIGHT - 8}" '
                f'text-anchor="middle">{escape(d.day.strftime("%d %b"))}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def bar_list(bars: Sequence[Bar], title: str) -> Markup:
    """Return horizontal bars, one row each: label, bar, and text (a choice distribution)."""
    row = 30
    height = row * max(len(bars), 1) + 8
    label_w = 36
    text_w = 130
    plot_w = WIDTH - label_w - text_w
    top = max((b.value for b in bars), default=0.0) or 1.0
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for i, b in enumerate(bars):
        y = 4 + i * row
        w = plot_w * b.value / top
        parts.append(
            f'<text class="label" x="0" y="{y + 19}">{escape(b.label)}</text>'
            f'<rect class="{escape(b.css)}" x="{label_w}" y="{y + 4}" width="{w:.1f}" '
            f'height="{row - 10}"/>'
            f'<text class="label" x="{label_w + w + 8:.1f}" y="{y + 19}">{escape(b.text)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
