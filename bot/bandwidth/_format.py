"""The number and table formatting every bandwidth rendering shares."""

from __future__ import annotations

import math

WIDTH = 100
QUIZ_MARK = "*"
QUIZ_NOTE = f"{QUIZ_MARK} answer choices of the interconnect quiz question"


def format_seconds(seconds: float) -> str:
    """Return a duration with a sensible unit, from microseconds to hours (``1.23 ms``)."""
    if seconds < 1e-3:
        return f"{sig3(seconds * 1e6)} µs"
    if seconds < 1:
        return f"{sig3(seconds * 1e3)} ms"
    if seconds < 60:
        return f"{sig3(seconds)} s"
    if seconds < 3600:
        return f"{sig3(seconds / 60)} min"
    return f"{sig3(seconds / 3600)} h"


def format_slowdown(ratio: float) -> str:
    """Return how many times slower than the fastest, e.g. ``1.0x`` or ``1,234x``."""
    return f"{ratio:.1f}x" if ratio < 9.95 else f"{ratio:,.0f}x"


def sig3(value: float) -> str:
    """Return ``value`` with about three significant digits and thousands separators."""
    if value >= 99.95:
        return f"{value:,.0f}" if value != math.inf else "inf"
    if value >= 9.995:
        return f"{value:.1f}"
    if value >= 0.9995:
        return f"{value:.2f}"
    if not value > 0:
        return f"{value:g}"
    # Never scientific notation: tiny rates keep their leading zeros.
    return f"{value:.{min(2 - math.floor(math.log10(value)), 15)}f}"


def table_lines(
    header: list[str], rows: list[list[str]], right: list[bool], width: int, *, name: int = 2
) -> list[str]:
    """Return the header and the rows aligned; column ``name`` gets the room that is left."""
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    others = sum(w for i, w in enumerate(widths) if i != name) + 2 * (len(widths) - 1)
    widths[name] = max(len(header[name]), min(widths[name], width - others))
    return [_line(header, widths, right), *(_line(row, widths, right) for row in rows)]


def wrap(text: str, width: int) -> list[str]:
    """Return ``text`` broken at spaces into lines of at most ``width`` characters."""
    # textwrap does far more than this needs and costs more than the whole estimate.
    lines: list[str] = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current = f"{current} {word}"
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return [line[:width] for line in lines]


def _line(cells: list[str], widths: list[int], right: list[bool]) -> str:
    out = []
    for cell, width, is_right in zip(cells, widths, right, strict=True):
        text = cell if len(cell) <= width else cell[: max(width - 1, 0)] + "…"
        out.append(text.rjust(width) if is_right else text.ljust(width))
    return "  ".join(out).rstrip()
