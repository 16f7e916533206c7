"""Answers a second recorded through the engine, each committed before it returns, beside a bare
driver loop in the same run; SQLite by default, PostgreSQL with ``--postgres``.

- Right and mixed answers: ``--answers`` users answer one round (mixed: spread over every choice,
  so most are wrong); every answer also reviews the user's FSRS card for the question.
- Repeat misses: ``--users`` users answer a one-question bank wrongly, ``--concurrency`` at a
  time, for ``--rounds`` rounds. Round 1 is everyone's first miss; in every later round each
  user already holds a card for the question, which the miss must review (on PostgreSQL the
  answer's statement then runs twice: once to find the card, once to write it).
- Statements and round trips per answer for each outcome (right, first miss, repeat miss,
  changed, already, closed, a right answer in a daily round, which also reads the streak, and a
  right answer on another replica to a computed round, whose question that replica reads once).

Statements and round trips are counted on 20 more answers after each timed stretch, apart
from it, since counting costs time.

Every figure is printed with CPU milliseconds per answer (this process, driver threads
included; on PostgreSQL the server's own CPU is not in it) and as a ratio to the bare loop, which
runs first and last (the ratio is to both runs together, so a change in the machine's load
during the run weighs on both sides):
SQLite, aiosqlite inserting and committing one row at a time; PostgreSQL, asyncpg inserting one
row per statement (autocommit) on a pool of 15 connections (the store's default pool and
overflow) with the same concurrency.

On SQLite the store and the bare loop run with ``--synchronous`` (FULL, the store's default;
NORMAL or EXTRA). ``--compare-synchronous`` instead times right answers through the engine with
NORMAL and FULL alternately, twice each, and prints FULL's rate as a ratio of NORMAL's.

    .venv/bin/python benchmarks/engine_answers.py [--answers N] [--users U] [--rounds R]
                                                  [--concurrency C] [--postgres [URL]]
                                                  [--synchronous LEVEL] [--compare-synchronous]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from _common import (
    BANK,
    POSTGRES,
    Bank,
    Lap,
    StatementCounter,
    database,
    lap,
    wrong_key,
)

from bot.bank import load_bank
from bot.bank.templates import load_templates
from bot.engine import ChannelSettings, Place, QuizEngine
from bot.engine.model import AnswerStatus
from bot.storage import open_store


@dataclass
class Figure:
    """One measured stretch: answers, time, and what reached the database."""

    label: str
    answers: int
    lap: Lap
    statements: float = 0.0
    round_trips: float = 0.0

    @property
    def rate(self) -> float:
        return self.answers / self.lap.wall

    @property
    def cpu_ms(self) -> float:
        return 1000 * self.lap.cpu / self.answers


SYNCHRONOUS = "FULL"


async def bare_sqlite(path: Path, n: int) -> Figure:
    """Insert and commit n rows one at a time with aiosqlite."""
    import aiosqlite

    async with aiosqlite.connect(path) as db:
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
        await db.execute(
            "CREATE TABLE answers (round_id INTEGER, user_id TEXT, choice TEXT, "
            "answered_at TEXT, UNIQUE(round_id, user_id))"
        )
        await db.commit()
        done = lap()
        for i in range(n):
            await db.execute(
                "INSERT INTO answers VALUES (?, ?, ?, datetime('now'))", (1, f"U{i}", "A")
            )
            await db.commit()
        return Figure("bare aiosqlite insert+commit", n, done(), 1, 1)


async def bare_postgres(url: str, n: int, concurrency: int) -> Figure:
    """Insert n rows, one autocommitted statement each, on an asyncpg pool of 15."""
    import asyncpg

    dsn = url.replace("postgresql+asyncpg://", "postgresql://")
    pool = await asyncpg.create_pool(dsn, min_size=15, max_size=15)
    try:
        await pool.execute(
            "CREATE TABLE bare_answers (round_id INTEGER, user_id TEXT, choice TEXT, "
            "answered_at TIMESTAMPTZ, UNIQUE(round_id, user_id))"
        )
        queue = iter(range(n))

        async def worker() -> None:
            for i in queue:
                await pool.execute(
                    "INSERT INTO bare_answers VALUES ($1, $2, $3, now())", 1, f"U{i}", "A"
                )

        done = lap()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return Figure("bare asyncpg insert (autocommit)", n, done(), 1, 1)
    finally:
        await pool.close()


# Answers counted statement by statement after each timed stretch, apart from it: counting
# costs the writer thread the GIL once more per statement, which would show in the times.
COUNTED = 20


async def crowd(
    n: int, concurrency: int, answer: Callable[[int], Awaitable[object]], count: StatementCounter
) -> tuple[Lap, float, float]:
    """Time answer(0..n-1), ``concurrency`` at a time, uncounted; then count answer(n..n+19).

    Return the lap, and statements and round trips per counted answer.
    """
    queue = iter(range(n))

    async def worker() -> None:
        for i in queue:
            await answer(i)

    count.detach()
    done = lap()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    timed = done()
    count.attach()
    mark = count.mark()
    for i in range(n, n + COUNTED):
        await answer(i)
    statements, trips = count.since(mark, COUNTED)
    return timed, statements, trips


async def warm_up(engine: QuizEngine) -> None:
    """Answer a round elsewhere first: statements compiled, connections and threads started."""
    card = await engine.start_round(Place("slack", "TWARM", "CWARM"))
    for i in range(30):
        key = card.question.answer if i % 2 else wrong_key(card.question, i)
        await engine.answer("slack", "TWARM", card.round_id, f"W{i}", key)
    await engine.close(card.round_id)


async def answers_run(url: str, n: int, concurrency: int, *, mixed: bool) -> Figure:
    """n users answer one round of the bundled bank; all right, or spread over every choice."""
    store = await open_store(url, sqlite_synchronous=SYNCHRONOUS)
    try:
        engine = QuizEngine(store, Bank(), rng=random.Random(1))
        await warm_up(engine)
        count = StatementCounter(store)
        place = Place("slack", "T1", "C1")
        card = await engine.start_round(place)
        q = card.question
        keys = q.keys if mixed else (q.answer,)

        async def one(i: int) -> None:
            await engine.answer("slack", "T1", card.round_id, f"U{i}", keys[i % len(keys)])

        timed, statements, trips = await crowd(n, concurrency, one, count)
        answered = await engine.answered_count(card.round_id)
        assert answered == n + COUNTED, "an answer went missing"
        label = f"engine, {'mixed' if mixed else 'right'} answers"
        return Figure(label, n, timed, statements, trips)
    finally:
        await store.close()


async def repeat_misses(url: str, users: int, rounds: int, concurrency: int) -> list[Figure]:
    """Every user misses the one question of the bank, round after round."""
    store = await open_store(url, sqlite_synchronous=SYNCHRONOUS)
    try:
        engine = QuizEngine(store, Bank(), rng=random.Random(1))
        await warm_up(engine)
        count = StatementCounter(store)
        place = Place("slack", "T1", "CREPEAT")
        figures = []
        for r in range(1, rounds + 1):
            card = await engine.start_round(place)
            q = card.question

            async def one(i: int, round_id: int = card.round_id, q: object = q) -> None:
                outcome = await engine.answer("slack", "T1", round_id, f"U{i}", wrong_key(q, i))
                assert outcome.status is AnswerStatus.ACCEPTED, outcome.status

            timed, statements, trips = await crowd(users, concurrency, one, count)
            assert await engine.answered_count(card.round_id) == users + COUNTED
            await engine.close(card.round_id)
            label = "first miss" if r == 1 else "repeat miss"
            figures.append(Figure(f"round {r}: {label}", users, timed, statements, trips))
        cards = await store.cards("slack", "T1", "U0")
        assert len(cards) == 1 and cards[0].reps == rounds, cards
        return figures
    finally:
        await store.close()


async def outcomes(url: str, n: int = 200) -> list[Figure]:
    """Statements and round trips per answer for each outcome the store can report."""
    store = await open_store(url, sqlite_synchronous=SYNCHRONOUS)
    try:
        engine = QuizEngine(store, Bank(), rng=random.Random(1))
        await warm_up(engine)
        other = QuizEngine(store, Bank(), rng=random.Random(2))  # a second replica
        count = StatementCounter(store)
        q = Bank().questions[0]
        right, figures = q.answer, []

        async def measure(label: str, round_id: int, key: Callable[[int], str], want: str) -> None:
            async def one(i: int) -> None:
                outcome = await engine.answer("slack", "T1", round_id, f"U{i}", key(i))
                assert outcome.status.value == want, (label, outcome.status)

            timed, statements, trips = await crowd(n, 1, one, count)
            figures.append(Figure(label, n, timed, statements, trips))

        plain = Place("slack", "T1", "COUT")
        r1 = (await engine.start_round(plain)).round_id
        await measure("right", r1, lambda i: right, "accepted")
        await measure("already (changes off)", r1, lambda i: wrong_key(q, i), "already")
        await engine.close(r1)
        r2 = (await engine.start_round(plain)).round_id
        await measure("first miss", r2, lambda i: wrong_key(q, i), "accepted")
        await engine.close(r2)
        r3 = (await engine.start_round(plain)).round_id
        await measure("repeat miss", r3, lambda i: wrong_key(q, i), "accepted")
        await other.close(r3)  # closed elsewhere: this engine's cached round is stale
        await measure("closed (by another replica)", r3, lambda i: right, "closed")

        changing = Place("slack", "T1", "CCHANGE")
        await engine.set_channel_settings(changing, ChannelSettings(allow_change=True))
        r4 = (await engine.start_round(changing)).round_id
        for i in range(n + COUNTED):
            await engine.answer("slack", "T1", r4, f"U{i}", right)
        await measure("changed (to a miss)", r4, lambda i: wrong_key(q, i), "changed")

        daily = Place("slack", "T1", "CDAILY")
        for day in range(3):
            rnd = (await engine.start_round(daily, scheduled=True, slot=f"d{day}")).round_id
            if day < 2:
                for i in range(n + COUNTED):
                    await engine.answer("slack", "T1", rnd, f"U{i}", right)
                await engine.close(rnd)
        await measure("right, daily round (streak)", rnd, lambda i: right, "accepted")

        # A computed question asked by one replica and answered on another, which reads the
        # stored instance once (its first answer, in the timed stretch) and keeps it.
        templated = load_bank([BANK], load_templates())
        poster = QuizEngine(store, templated, rng=random.Random(3))
        engine = QuizEngine(store, templated, rng=random.Random(4))
        card = await poster.start_round(Place("slack", "T1", "CCOMPUTED"), computed=True)
        answer = card.question.answer
        label = "right, computed round (replica)"
        await measure(label, card.round_id, lambda i: answer, "accepted")
        return figures
    finally:
        await store.close()


async def compare_synchronous(n: int, concurrency: int) -> int:
    """Right answers through the engine on SQLite, NORMAL and FULL alternately, twice each."""
    global SYNCHRONOUS
    laps: dict[str, list[Figure]] = {"NORMAL": [], "FULL": []}
    for level in ("NORMAL", "FULL", "NORMAL", "FULL"):
        SYNCHRONOUS = level
        async with database(None, f"sync-{level.lower()}") as url:
            laps[level].append(await answers_run(url, n, concurrency, mixed=False))
    print(f"\nright answers through the engine on SQLite, {n} a run, {concurrency} at a time")
    rates = {}
    for level, figures in laps.items():
        answers = sum(f.answers for f in figures)
        wall = sum(f.lap.wall for f in figures)
        cpu = sum(f.lap.cpu for f in figures)
        rates[level] = answers / wall
        runs = ", ".join(f"{f.rate:.0f}/s" for f in figures)
        print(
            f"  synchronous={level:6} {rates[level]:7.0f}/s {1000 * cpu / answers:7.3f} ms CPU"
            f"   (runs {runs})"
        )
    print(f"FULL / NORMAL: {rates['FULL'] / rates['NORMAL']:.2f}x the rate")
    return 0


def show(figure: Figure, floor: Figure) -> None:
    print(
        f"  {figure.label:34} {figure.rate:7.0f}/s {figure.rate / floor.rate:6.2f}x "
        f"{figure.cpu_ms:7.3f} ms {figure.statements:6.2f} {figure.round_trips:7.2f}"
    )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=2000, help="answers per round (2000)")
    parser.add_argument("--users", type=int, default=1000, help="repeat-miss users (1000)")
    parser.add_argument("--rounds", type=int, default=4, help="repeat-miss rounds (4)")
    parser.add_argument("--concurrency", type=int, default=15, help="answers at once (15)")
    parser.add_argument(
        "--postgres",
        nargs="?",
        const=POSTGRES,
        metavar="URL",
        help="run on a new database on this PostgreSQL server instead of SQLite",
    )
    parser.add_argument(
        "--synchronous",
        choices=("FULL", "NORMAL", "EXTRA"),
        default="FULL",
        help="SQLite's synchronous level for the store and the bare loop (FULL)",
    )
    parser.add_argument(
        "--compare-synchronous",
        action="store_true",
        help="time right answers with NORMAL and FULL alternately and print the ratio",
    )
    args = parser.parse_args()
    where = "PostgreSQL" if args.postgres else "SQLite"
    global SYNCHRONOUS
    SYNCHRONOUS = args.synchronous
    if args.compare_synchronous:
        return await compare_synchronous(args.answers, args.concurrency)

    async def bare() -> Figure:
        async with database(args.postgres, "bare") as bare_url:
            if args.postgres:
                return await bare_postgres(bare_url, args.answers, args.concurrency)
            return await bare_sqlite(Path(bare_url.split("///", 1)[1]), args.answers)

    before = await bare()
    runs: list[tuple[str, list[Figure]]] = []
    async with database(args.postgres, "right") as url:
        right = await answers_run(url, args.answers, args.concurrency, mixed=False)
    async with database(args.postgres, "mixed") as url:
        mixed = await answers_run(url, args.answers, args.concurrency, mixed=True)
    runs.append((f"{args.answers} users, one round, {args.concurrency} at a time", [right, mixed]))
    async with database(args.postgres, "repeat") as url:
        rounds = await repeat_misses(url, args.users, args.rounds, args.concurrency)
    title = f"{args.users} users missing a one-question bank, {args.concurrency} at a time"
    runs.append((title, rounds))
    async with database(args.postgres, "outcomes") as url:
        runs.append(("each outcome, one answer at a time", await outcomes(url)))
    # The baseline runs first and last; ratios are to both together, so a change in the
    # machine's load during the run weighs on both sides.
    after = await bare()
    floor = Figure(
        before.label,
        before.answers + after.answers,
        Lap(before.lap.wall + after.lap.wall, before.lap.cpu + after.lap.cpu),
        1,
        1,
    )

    print(f"\nengine answers on {where}")
    print(f"  {'':34} {'answers':>9} {'ratio':>7} {'CPU/answer':>10} {'stmts':>6} {'trips':>7}")
    print(
        f"  {floor.label:34} {floor.rate:7.0f}/s  1.00x {floor.cpu_ms:7.3f} ms"
        f"   (first {before.rate:.0f}/s, last {after.rate:.0f}/s)"
    )
    for title, figures in runs:
        print(f" {title}")
        for figure in figures:
            show(figure, floor)
    first = rounds[0]
    later = statistics.mean(f.rate for f in rounds[1:]) if len(rounds) > 1 else first.rate
    later_cpu = statistics.mean(f.cpu_ms for f in rounds[1:]) if len(rounds) > 1 else first.cpu_ms
    over = [f.label for _t, figures in runs for f in figures if f.statements > 2.05]
    trips_ok = all(
        f.round_trips <= 1.05 for f in runs[-1][1] if not f.label.startswith("right, daily")
    )
    print(
        f"\nrepeat miss vs first miss: {later / first.rate:.2f}x the rate, "
        f"{later_cpu / first.cpu_ms:.2f}x the CPU per answer"
    )
    aims = [
        ("repeat miss >= 0.7x a first miss", later >= 0.7 * first.rate),
        ("statements per answer <= 2 for every outcome", not over),
        ("one round trip per answer for every outcome but the daily streak", trips_ok),
    ]
    for aim, met in aims:
        print(f"aim: {aim}: {'met' if met else 'NOT met'}")
    if over:
        print(f"  over 2 statements: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
