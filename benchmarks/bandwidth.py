"""How fast /bandwidth answers: tables, plans, charts, and ``quizbot bandwidth`` as a process.

Each figure beside what it aims for, and as a ratio to a baseline timed in the same run:

- compute the full table (parse, estimate every compared interconnect, render the text):
  the default comparison and every catalogue entry, aim < 1 ms;
- plan a training step (parse, resolve the layout, price every parallel dimension on each of
  the 10 interconnects of the default comparison, render the text), aim < 5 ms, and as a
  multiple of the 10-row estimate table above;
- search layouts (every layout priced on the 10 interconnects, the best rendered), as time
  per 20 layouts, aim < 2 s, and as a multiple of one plan;
- render the chart once matplotlib is loaded (warm), aim < 500 ms, the plan's chart too;
- ``quizbot bandwidth 140GB`` as a whole process beside ``python -c pass`` started the same way
  in the same run, interleaved, as medians and their ratio (start-up cost, not estimator cost).

    .venv/bin/python benchmarks/bandwidth.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.bandwidth import (  # noqa: E402
    ENV_VAR,
    estimate,
    load_catalogue,
    parse_plan,
    parse_request,
    plan,
    render_chart,
    render_table,
)

TABLE_AIM_S = 1e-3
PLAN_AIM_S = 5e-3
PLAN_TEXT = "plan llama3-70b gpus=128 tp=8 pp=2"
CHART_AIM_S = 0.5
SEARCH_AIM_S = 2.0
SEARCH_TEXT = "plan llama3-8b gpus=64 tp=1 pp=1 zero=1 search"  # cp, interleave, micro vary


def per_call(fn: Callable[[], object], *, min_time: float = 0.5) -> tuple[float, float]:
    """Return median (wall, CPU) seconds per call of ``fn``, over batches of about 50 ms."""
    fn()
    batch = 1
    while True:
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        if time.perf_counter() - start >= 0.05:
            break
        batch *= 2
    walls: list[float] = []
    cpus: list[float] = []
    deadline = time.perf_counter() + min_time
    while time.perf_counter() < deadline or len(walls) < 5:
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(batch):
            fn()
        walls.append((time.perf_counter() - start) / batch)
        cpus.append((time.process_time() - cpu) / batch)
    return statistics.median(walls), statistics.median(cpus)


def calibration() -> float:
    """Return the CPU seconds 10^7 integer additions take: a yardstick for this machine."""
    start = time.process_time()
    total = 0
    for i in range(10**7):
        total += i
    return time.process_time() - start


def wall(command: list[str]) -> float:
    """Return the seconds one run of ``command`` takes, from spawn to exit."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def verdict(value: float, aim: float) -> str:
    return "within aim" if value < aim else "OVER AIM"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="process runs of each command")
    args = parser.parse_args()
    os.environ.pop(ENV_VAR, None)
    catalogue = load_catalogue()

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load:.2f}; 10^7 integer additions take"
        f" {calibration():.2f} s of CPU (an unloaded 2020s laptop: about 0.4 s)"
    )
    print("compute the full table (parse + estimate + render text)")
    baseline = 0.0
    for label, text in (
        ("default comparison", "70B params bf16 allreduce nodes=4 gpus=8 step=2"),
        ("every interconnect", "70B params bf16 allreduce nodes=4 gpus=8 step=2 over=all"),
    ):
        count = len(estimate(parse_request(text), catalogue).results)
        wall_s, cpu_s = per_call(
            lambda text=text: render_table(estimate(parse_request(text), catalogue))
        )
        print(
            f"  {label:20s} {count:2d} rows  {wall_s * 1e6:8.1f} µs wall, {cpu_s * 1e6:8.1f} µs CPU"
            f"   (aim < {TABLE_AIM_S * 1e3:g} ms: {verdict(wall_s, TABLE_AIM_S)})"
        )
        baseline = baseline or wall_s

    print(f"plan a training step ({PLAN_TEXT}; parse + plan + render text)")
    count = len(plan(parse_plan(PLAN_TEXT), catalogue).results)
    plan_wall, plan_cpu = per_call(lambda: render_table(plan(parse_plan(PLAN_TEXT), catalogue)))
    print(
        f"  {count} interconnects  {plan_wall * 1e3:8.3f} ms wall, {plan_cpu * 1e3:8.3f} ms CPU"
        f" = {plan_wall / baseline:.1f}x the 10-row estimate table"
        f"   (aim < {PLAN_AIM_S * 1e3:g} ms: {verdict(plan_wall, PLAN_AIM_S)})"
    )

    from bot.bandwidth import load_hardware
    from bot.bandwidth._search import layouts, render_search, search

    request = parse_plan(SEARCH_TEXT)
    tried = len(layouts(request, load_hardware()))
    big = parse_plan("plan llama3-70b gpus=256 search")
    big_tried = len(layouts(big, load_hardware()))
    print("search layouts (every layout priced on the 10 interconnects, the best rendered)")
    for label, req, n in (("small", request, tried), ("llama3-70b on 256", big, big_tried)):
        walls_s = []
        for _ in range(3):
            start = time.perf_counter()
            render_search(search(req, catalogue))
            walls_s.append(time.perf_counter() - start)
        took = statistics.median(walls_s)
        per20 = took / n * 20
        print(
            f"  {label:18s} {n:4d} layouts  {took * 1e3:8.1f} ms wall = {per20 * 1e3:6.1f} ms"
            f" per 20 layouts = {took / plan_wall:.0f}x one plan"
            f"   (aim < {SEARCH_AIM_S:g} s for 20: {verdict(per20, SEARCH_AIM_S)})"
        )

    print("render the chart, warm (matplotlib already imported)")
    result = estimate(parse_request("140GB allreduce gpus=8 step=0.5"), catalogue)
    start = time.perf_counter()
    render_chart(result)
    cold = time.perf_counter() - start
    walls, cpus = [], []
    for _ in range(7):
        start, cpu = time.perf_counter(), time.process_time()
        png = render_chart(result)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    warm, warm_cpu = statistics.median(walls), statistics.median(cpus)
    print(f"  first chart in this process (imports matplotlib): {cold * 1e3:8.1f} ms wall")
    print(
        f"  warm chart, median of 7:  {warm * 1e3:8.1f} ms wall, {warm_cpu * 1e3:8.1f} ms CPU"
        f"   ({len(png) / 1024:.0f} KiB PNG; aim < {CHART_AIM_S * 1e3:g} ms:"
        f" {verdict(warm, CHART_AIM_S)})"
    )
    step = plan(parse_plan(PLAN_TEXT), catalogue)
    plan_walls = []
    for _ in range(7):
        start = time.perf_counter()
        render_chart(step)
        plan_walls.append(time.perf_counter() - start)
    plan_chart = statistics.median(plan_walls)
    print(
        f"  warm plan chart, median of 7: {plan_chart * 1e3:8.1f} ms wall"
        f" = {plan_chart / warm:.2f}x the estimate chart"
        f"   (aim < {CHART_AIM_S * 1e3:g} ms: {verdict(plan_chart, CHART_AIM_S)})"
    )

    script = shutil.which("quizbot", path=str(Path(sys.executable).parent))
    quizbot = [script] if script else [sys.executable, "-m", "bot"]
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "quizbot bandwidth 140GB": [*quizbot, "bandwidth", "140GB"],
        "quizbot bandwidth plan": [*quizbot, "bandwidth", *PLAN_TEXT.split()],
    }
    runs: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():
        wall(command)  # warm the file cache before timing
    for _ in range(args.runs):
        for name, command in commands.items():
            runs[name].append(wall(command))
    base = statistics.median(runs["python -c pass"])
    print(f"whole process, median of {args.runs} interleaved runs")
    for name, samples in runs.items():
        median = statistics.median(samples)
        print(f"  {name:24s} {median * 1e3:8.1f} ms   {median / base:5.1f}x python -c pass")


if __name__ == "__main__":
    main()
