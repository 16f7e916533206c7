"""Uncertainty bands: how far the model strays from published measurements, by kind of figure.

Each band is the root-mean-square error of the held-out figures of its group in the validation
set (docs/bandwidth-validation.md, tests/bandwidth/published.py), rounded up to 5%;
tests/bandwidth/test_published.py recomputes them and fails when the model and the bands part.
"""

from __future__ import annotations

import math

BANDS = {
    "link": 0.05,  # point-to-point transfers: 9 held-out figures
    "latency": 0.15,  # collectives of at most 64 KiB: 4 held-out figures
    "mid": 0.20,  # collectives from 64 KiB to under 1 GiB: 7 held-out figures
    "large": 0.15,  # collectives of 1 GiB and more: 12 held-out figures
    "step": 0.15,  # whole training steps: 24 held-out figures
}


def group_of(op: str, nbytes: float) -> str:
    """Return the validation group a figure of ``op`` on ``nbytes`` belongs to."""
    if op == "transfer":
        return "link"
    if nbytes <= 64 * 1024:
        return "latency"
    return "large" if nbytes >= 2**30 else "mid"


def band(op: str, nbytes: float) -> float:
    """Return the relative uncertainty of an estimate of ``op`` on ``nbytes`` bytes."""
    return BANDS[group_of(op, nbytes)]


def rounded_band(rms: float) -> float:
    """Return an RMS error rounded up to the next 5% (what BANDS holds)."""
    return math.ceil(round(rms * 100, 6) / 5) * 5 / 100


def format_band(value: float) -> str:
    """Return a band as text, e.g. ``+/- 15%``."""
    return f"+/- {value * 100:.0f}%"


def sig2(value: float) -> str:
    """Return ``value`` to two significant figures, never in scientific notation."""
    if value <= 0 or not math.isfinite(value):
        return f"{value:g}"
    digits = max(0, 1 - math.floor(math.log10(value)))
    return f"{value:,.{digits}f}"
