"""Does anything get dearer as history grows? Simulated daily rounds, an injected clock.

``--days`` daily rounds in one channel, one a day: each posts the day's question (selection
reads how often each question was asked), ``--users`` users answer it ``--concurrency`` at a time
(about a third wrong; every answer reviews a card, so cards pile up; a right answer reads the
streak), the round closes and reveals, and then: the week, month and all-time leaderboards,
``/quiz stats`` for a few users, and a few users' reviews (the queue, the next question, an
answer to it). A warm-up round in another workspace runs first, so the first day does not pay
for cold caches.

Each day the same work runs a second time in a new workspace with no history at all: the
baseline measured beside it. The two workspaces' answers are interleaved, a wave of
``--concurrency`` answers in one and then in the other (which goes first alternates), so a
change in the machine's load during the day weighs on both alike.

Printed for the first and the last days: CPU and wall milliseconds per answer for the answers
alone and for the whole day's work divided by its answers (CPU of this process, driver threads
included; on PostgreSQL the server's CPU is not in it, but shows in the wall time), the whole
day's cost as a multiple of the same day's without history, and for each other operation CPU
and wall milliseconds a call. The ratios compare the mean of the last ten days with the mean of
days 2 to 11, the first with a history (reviews fall due from the second day), and the last day
with the first. The aim is on the answers' multiples of the no-history baseline; the whole
day's multiple also grows with the reviews that fall due, work a workspace without history has
none of.

    .venv/bin/python benchmarks/history_soak.py [--days D] [--users U] [--concurrency C]
                                                [--postgres [URL]] [--series]
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

from bot.bank.loader import load_bank
from bot.engine import Period, Place, QuizEngine
from bot.engine.model import QuestionCard
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
    engine: QuizEngine,
    clock: Clock,
    places: list[Place],
    users: int,
    concurrency: int,
    n: int,
) -> list[dict[str, float]]:
    """Run one day's round in each place side by side; return CPU seconds per operation, each.

    The answers of the places are interleaved wave by wave (``concurrency`` answers at once,
    the places taking turns to go first), so that a change in the machine's load during the
    day weighs on each place alike. The other operations run place after place.
    """
    every = [{} for _ in places]
    clock.now = START + timedelta(days=n)
    cards = []
    for place, costs in zip(places, every, strict=True):

        async def start(place: Place = place) -> None:
            slot = clock.now.date().isoformat()
            cards.append(await engine.start_round(place, scheduled=True, slot=slot))

        await timed(costs, "start round", start)
    clock.now += timedelta(minutes=5)
    # The same users in every place: user i is right about two times in three, a little more
    # often the better they are.
    skill = random.Random(n)
    rights = [skill.random() < 0.55 + 0.2 * (i % 10) / 10 for i in range(users)]

    async def answer(place: Place, card: QuestionCard, i: int) -> None:
        question = card.question
        key = question.answer if rights[i] else wrong_key(question, i + n)
        await engine.answer(place.platform, place.workspace, card.round_id, f"U{i}", key)

    for costs in every:
        costs["answers"] = costs["answers wall"] = 0.0
    for wave, first in enumerate(range(0, users, concurrency)):
        users_now = range(first, min(first + concurrency, users))
        turns = list(zip(places, cards, every, strict=True))
        for place, card, costs in turns if wave % 2 else turns[::-1]:
            done = lap()
            await asyncio.gather(*(answer(place, card, i) for i in users_now))
            took = done()
            costs["answers"] += took.cpu
            costs["answers wall"] += took.wall
    clock.now += timedelta(minutes=10)
    for place, card, costs in zip(places, cards, every, strict=True):
        round_id = card.round_id
        await timed(costs, "close + reveal", lambda round_id=round_id: engine.close(round_id))
        await reads(engine, place, users, costs)
    return every


async def reads(engine: QuizEngine, place: Place, users: int, costs: dict[str, float]) -> None:
    """After the close: the leaderboards, a few users' stats and a few users' reviews."""
    platform, workspace = place.platform, place.workspace

    async def leaderboards() -> None:
        for period in (Period.WEEK, Period.MONTH, Period.ALL):
            await engine.leaderboard(platform, workspace, period, "U1")

    async def stats() -> None:
        for i in range(STATS_USERS):
            await engine.stats(place, f"U{i * 97 % users}")

    async def reviews() -> None:
        for i in range(REVIEW_USERS):
            user = f"U{i * 53 % users}"
            await engine.review_queue(platform, workspace, user)
            due = await engine.next_review(platform, workspace, user)
            if due is not None:
                await engine.answer_review(platform, workspace, user, due.id, due.answer)

    await timed(costs, "leaderboards", leaderboards)
    await timed(costs, "stats", stats)
    await timed(costs, "reviews", reviews)


def mean(values: list[float]) -> float:
    return statistics.mean(values) if values else 0.0


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=60, help="daily rounds (60)")
    parser.add_argument("--users", type=int, default=1000, help="users answering each (1000)")
    parser.add_argument("--concurrency", type=int, default=15, help="answers at once (15)")
    parser.add_argument("--series", action="store_true", help="print every day's multiples")
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
    fresh: list[dict[str, float]] = []
    async with database(args.postgres, "soak") as url:
        store = await open_store(url)
        try:
            clock = Clock()
            engine = QuizEngine(store, load_bank([BANK]), clock=clock, rng=random.Random(7))
            await day(engine, clock, [Place("slack", "TWARM", "CWARM")], 200, args.concurrency, 0)
            place = Place("slack", "T1", "CDAILY")
            for n in range(args.days):
                # The same day's work in a workspace of its own, without history: the baseline
                # measured beside it, wave by wave, so the machine's load weighs on both.
                new = Place("slack", f"TFRESH{n}", "CFRESH")
                spots = [place, new] if n % 2 else [new, place]
                by_place = dict(
                    zip(
                        spots,
                        await day(engine, clock, spots, args.users, args.concurrency, n),
                        strict=True,
                    )
                )
                days.append(by_place[place])
                fresh.append(by_place[new])
                if (n + 1) % 10 == 0:
                    print(f"  day {n + 1}/{args.days} done", flush=True)
        finally:
            await store.close()

    per_answer: dict[str, list[float]] = defaultdict(list)
    for costs, baseline in zip(days, fresh, strict=True):
        for kind, suffix in (("CPU", ""), ("wall", " wall")):
            answers = 1000 * costs[f"answers{suffix}"] / args.users
            whole = sum(costs[f"{k}{suffix}"] for k in ("answers", *OPERATIONS))
            without = sum(baseline[f"{k}{suffix}"] for k in ("answers", *OPERATIONS))
            per_answer[f"answers, {kind} ms/answer"].append(answers)
            per_answer[f"answers, {kind}, x no history"].append(
                costs[f"answers{suffix}"] / baseline[f"answers{suffix}"]
            )
            per_answer[f"whole day, {kind} ms/answer"].append(1000 * whole / args.users)
            per_answer[f"whole day, {kind}, x no history"].append(whole / without)
        for name in OPERATIONS:
            for kind, suffix in (("CPU", ""), ("wall", " wall")):
                per_call = 1000 * costs[f"{name}{suffix}"] / CALLS.get(name, 1)
                per_answer[f"{name}, {kind} ms/call"].append(per_call)
    # The first day has no review due yet anywhere; the history starts on the second. Means
    # over ten days, since one day's figure moves by a tenth or more on a shared machine.
    k = min(10, max(1, (args.days - 1) // 2))
    print(f"\nhistory soak on {where}: {args.days} daily rounds, {args.users} users")
    print(
        f"  {'':32} {'day 1':>9} {f'day {args.days}':>9} {'last/first':>10} "
        f"{f'days 2-{k + 1}':>9} {f'last {k}':>9} {'ratio':>7}"
    )
    for name, values in per_answer.items():
        first, last = mean(values[1 : k + 1]), mean(values[-k:])
        print(
            f"  {name:32} {values[0]:9.3f} {values[-1]:9.3f} {values[-1] / values[0]:9.2f}x "
            f"{first:9.3f} {last:9.3f} {last / first:6.2f}x"
        )
    if args.series:
        for name in ("answers", "whole day"):
            values = per_answer[f"{name}, CPU, x no history"]
            print(f"  {name}, CPU x no history, by day: " + " ".join(f"{v:.2f}" for v in values))
    print()
    for kind in ("CPU", "wall"):
        against = per_answer[f"answers, {kind}, x no history"]
        ratio = mean(against[-k:]) / mean(against[1 : k + 1])
        print(
            f"aim: {kind} cost per answer of the last {k} days within 1.2x days 2-{k + 1}, "
            f"each against the same day's answers without history ({ratio:.2f}x): "
            f"{'met' if ratio <= 1.2 else 'NOT met'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
