"""Every published figure of the validation set beside what /bandwidth predicts, by group.

Prints one row a figure (group, calibration or held out, measured, predicted, error) and a
summary a group: how many, how many within 20%, the mean and the largest |error|, for the
held-out figures and for all. The figures and their sources are in
``tests/bandwidth/published.py``.

    .venv/bin/python benchmarks/bandwidth_validation.py [--group GROUP] [--markdown]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.bandwidth import ENV_VAR, BandwidthError  # noqa: E402
from tests.bandwidth.published import FIGURES, GROUPS, Figure  # noqa: E402

WITHIN = 0.20


def _error(figure: Figure) -> tuple[float | None, float | None, str]:
    try:
        predicted, _ = figure.predict()
    except BandwidthError as exc:
        return None, None, str(exc)
    return predicted, predicted / figure.measured - 1, ""


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:,.1f}"
    return f"{value:,.2f}"


def main(argv: list[str] | None = None) -> int:
    """Print the table and the summaries."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", choices=GROUPS, help="only this group")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = parser.parse_args(argv)
    os.environ.pop(ENV_VAR, None)
    rows: list[tuple[str, str, str, str, str, str, str]] = []
    summary: dict[str, list[tuple[bool, float | None]]] = {g: [] for g in GROUPS}
    for name, figure in FIGURES.items():
        group = figure.group()
        if args.group and group != args.group:
            continue
        predicted, err, problem = _error(figure)
        summary[group].append((figure.calibrates, err))
        rows.append(
            (
                group,
                name,
                "calibration" if figure.calibrates else "held out",
                f"{_number(figure.measured)} {figure.unit}",
                "-" if predicted is None else _number(predicted),
                problem[:60] if err is None else f"{err:+.1%}",
                "yes" if err is not None and abs(err) <= WITHIN else "no",
            )
        )
    header = ("group", "figure", "role", "measured", "predicted", "error", "within 20%")
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    print()
    if args.markdown:
        print("```text")
    print("group    role      figures  within 20%  mean |error|  largest |error|")
    for group in GROUPS:
        for role, keep in (("held out", False), ("all", None)):
            errs = [e for calibrates, e in summary[group] if keep is None or calibrates == keep]
            if not errs:
                continue
            known = [abs(e) for e in errs if e is not None]
            within = sum(1 for e in known if e <= WITHIN)
            mean = sum(known) / len(known) if known else float("nan")
            worst = max(known) if known else float("nan")
            print(
                f"{group:<8} {role:<9} {len(errs):>7}  {within:>4} of {len(errs):<3}"
                f"  {mean:>11.1%}  {worst:>15.1%}"
            )
    total = sum(len(v) for v in summary.values())
    print(f"\n{total} figures, {sum(1 for f in FIGURES.values() if f.calibrates)} calibration.")
    if args.markdown:
        print("```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
