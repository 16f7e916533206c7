"""Computed questions at scale: 1,000 instances of each template, linted and measured.

For each template it prints how many of the instances pass the lint with no warning, the
narrowest ratio between two neighbouring choices (the rule: 1.5 or more), the share of draws
redrawn because their choices crowded, where the key falls among the sorted choices, and the
time to draw one instance beside one estimator call (the baseline, measured in the same run).

    .venv/bin/python benchmarks/templates.py [--instances N]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.bandwidth import load_catalogue  # noqa: E402
from bot.bank import lint as L  # noqa: E402
from bot.bank import templates as T  # noqa: E402


def main() -> int:
    """Draw, lint and measure the instances of every shipped template."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=1000)
    args = parser.parse_args()
    catalogue = load_catalogue()
    templates = T.load_templates()
    start = time.perf_counter()
    calls = 200
    for _ in range(calls):
        T.seconds("1GB allreduce nodes=4 gpus=8", "ib-ndr", catalogue)
    per_call = (time.perf_counter() - start) / calls
    print(f"{len(templates)} templates, {args.instances} instances each")
    print(f"{'template':28} {'lint-clean':>10} {'min ratio':>9} {'keys A/B/C/D':>14} {'draw':>10}")
    all_clean = True
    for t in templates:
        clean = 0
        narrowest = float("inf")
        keys: Counter[str] = Counter()
        start = time.perf_counter()
        for seed in range(args.instances):
            q = T.draw(t, seed, catalogue).question
            report = L.lint([q])
            clean += not report.findings and report.ok
            values = sorted(T.shown_value(v) for v in _seconds(q))
            narrowest = min(narrowest, *(b / a for a, b in itertools.pairwise(values)))
            keys[q.answer] += 1
        elapsed = (time.perf_counter() - start) / args.instances
        all_clean &= clean == args.instances and narrowest >= T.SPREAD
        shares = "/".join(f"{keys[k]}" for k in "ABCD")
        print(
            f"{t.id:28} {clean:>5}/{args.instances:<4} {narrowest:>9.2f} {shares:>14} "
            f"{elapsed / per_call:>8.1f}x"
        )
    print(f"draw+lint per instance, against one estimator call ({per_call * 1e3:.2f} ms): above")
    return 0 if all_clean else 1


def _seconds(q: object) -> list[float]:
    out = []
    for c in q.choices:  # type: ignore[attr-defined]
        found = L.quantity(c.text)
        assert found is not None
        out.append(found.value)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
