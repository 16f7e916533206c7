"""Does anything get dearer as history grows? Simulated daily rounds, an injected clock.

``--days`` daily rounds in one channel, one a day: each posts the day's question (selection
reads how often each question was asked), ``--users`` users answer it ``--concurrency`` at a time
(about a third wrong, so review items pile up; a right answer reads the streak), the round
closes and reveals, and then: the week, month and all-time leaderboards, ``/quiz stats`` for a
few users, and a few users' reviews (the queue, the next question, an answer to it). A warm-up
round in another workspace runs first, so the first day does not pay for cold caches.

Printed for the first and the last days: CPU and wall milliseconds per answer for the answers
alone and for the whole day's work divided by its answers (CPU of this process, driver threads
included; on PostgreSQL the server's CPU is not in it, but shows in the wall time), and for each
other operation CPU and wall milliseconds a call. The ratios compare the mean of the last five
days with the mean of the first five (and the last day with the first); the aim is on those.

    .venv/bin/python benchmarks/history_soak.py [--days D] [--users U] [--concurrency C]
                                                [--postgres [URL]]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from _common import BANK, POSTGRES, database, lap, wrong_key

from bot.engine import Period, Place, QuizEngine
from bot.engine.loader import load_bank
from bot.storage import open_store

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # a Monday
STATS_USERS = 10
REVIEW_USERS = 20
OPERATIONS = ("start round", "close + reveal", "leaderboards", "stats", "reviews")
CALLS = {"leaderboards": 3, "stats": STATS_USERS, "reviews": REVIEW_USERS}


class Clock:
    """The injected clock: the test of time is the calendar, not the wall."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


async def timed(costs: dict[str, float], name: str, work: Callable[[], Awaitable[object]]) -> None:
    done = lap()
    await work()
    took = done()
    costs[name] = costs.get(name, 0.0) + took.cpu
    costs[f"{name} wall"] = costs.get(f"{name} wall", 0.0) + took.wall


async def day(
    engine: QuizEngine, clock: Clock, place: Place, users: int, concurrency: int, n: int
) -> dict[str, float]:
    """Run one day's round and the reads around it; return CPU seconds per operation."""
    costs: dict[str, float] = {}
    workspace = place.workspace
    clock.now = START + timedelta(days=n)
    card = None

    async def start() -> None:
        nonlocal card
        card = await engine.start_round(place, scheduled=True, slot=clock.now.date().isoformat())

    await timed(costs, "start round", start)
    assert card is not None
    question, round_id = card.question, card.round_id
    clock.now += timedelta(minutes=5)
    skill = random.Random(n)
    queue = iter(range(users))

    async def worker() -> None:
        for i in queue:
            # User i is right about two times in three, a little more often the better they are.
            right = skill.random() < 0.55 + 0.2 * (i % 10) / 10
            key = question.answer if right else wrong_key(question, i + n)
            await engine.answer(place.platform, workspace, round_id, f"U{i}", key)

    done = lap()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    answering = done()
    costs["answers"], costs["answers wall"] = answering.cpu, answering.wall
    clock.now += timedelta(minutes=10)
    await timed(costs, "close + reveal", lambda: engine.close(round_id))

    async def leaderboards() -> None:
        for period in (Period.WEEK, Period.MONTH, Period.ALL):
            await engine.leaderboard(place.platform, workspace, period, "U1")

    async def stats() -> None:
        for i in range(STATS_USERS):
            await engine.stats(place, f"U{i * 97 % users}")

    async def reviews() -> None:
        for i in range(REVIEW_USERS):
            user = f"U{i * 53 % users}"
            await engine.review_queue(place.platform, workspace, user)
            due = await engine.next_review(place.platform, workspace, user)
            if due is not None:
                await engine.answer_review(place.platform, workspace, user, due.id, due.answer)

    await timed(costs, "leaderboards", leaderboards)
    await timed(costs, "stats", stats)
    await timed(costs, "reviews", reviews)
    return costs


def mean(values: list[float]) -> float:
    return statistics.mean(values) if values else 0.0


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=60, help="daily rounds (60)")
    parser.add_argument("--users", type=int, default=1000, help="users answering each (1000)")
    parser.add_argument("--concurrency", type=int, default=15, help="answers at once (15)")
    parser.add_argument(
        "--postgres",
        nargs="?",
        const=POSTGRES,
        metavar="URL",
        help="run on a new database on this PostgreSQL server instead of SQLite",
    )
    args = parser.parse_args()
    where = "PostgreSQL" if args.postgres else "SQLite"
    days: list[dict[str, float]] = []
    async with database(args.postgres, "soak") as url:
        store = await open_store(url)
        try:
            clock = Clock()
            engine = QuizEngine(store, load_bank([BANK]), clock=clock, rng=random.Random(7))
            await day(engine, clock, Place("slack", "TWARM", "CWARM"), 200, args.concurrency, 0)
            place = Place("slack", "T1", "CDAILY")
            for n in range(args.days):
                days.append(await day(engine, clock, place, args.users, args.concurrency, n))
                if (n + 1) % 10 == 0:
                    print(f"  day {n + 1}/{args.days} done", flush=True)
        finally:
            await store.close()

    per_answer: dict[str, list[float]] = defaultdict(list)
    for costs in days:
        for kind, suffix in (("CPU", ""), ("wall", " wall")):
            answers = 1000 * costs[f"answers{suffix}"] / args.users
            whole = sum(costs[f"{k}{suffix}"] for k in ("answers", *OPERATIONS))
            per_answer[f"answers, {kind} ms/answer"].append(answers)
            per_answer[f"whole day, {kind} ms/answer"].append(1000 * whole / args.users)
        for name in OPERATIONS:
            for kind, suffix in (("CPU", ""), ("wall", " wall")):
                per_call = 1000 * costs[f"{name}{suffix}"] / CALLS.get(name, 1)
                per_answer[f"{name}, {kind} ms/call"].append(per_call)
    k = min(5, max(1, args.days // 2))
    print(f"\nhistory soak on {where}: {args.days} daily rounds, {args.users} users")
    print(
        f"  {'':32} {'day 1':>9} {f'day {args.days}':>9} {'last/first':>10} "
        f"{f'first {k}':>9} {f'last {k}':>9} {'ratio':>7}"
    )
    for name, values in per_answer.items():
        first, last = mean(values[:k]), mean(values[-k:])
        print(
            f"  {name:32} {values[0]:9.3f} {values[-1]:9.3f} {values[-1] / values[0]:9.2f}x "
            f"{first:9.3f} {last:9.3f} {last / first:6.2f}x"
        )
    print()
    for kind in ("CPU", "wall"):
        whole = per_answer[f"whole day, {kind} ms/answer"]
        ratio = mean(whole[-k:]) / mean(whole[:k])
        print(
            f"aim: {kind} cost per answer of the last {k} days within 1.2x the first {k} "
            f"({ratio:.2f}x): {'met' if ratio <= 1.2 else 'NOT met'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
