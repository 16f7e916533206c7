"""The next practice question for a person who holds 5,000 cards, on PostgreSQL by default.

A bank of ``--questions`` questions (the bundled bank's first question, copied under new ids,
spread over 15 topics) and one person holding ``--cards`` cards of them, a tenth of them due;
the workspace has ``--answers`` round answers spread over the bank (for the questions' measured
difficulty). ``QuizEngine.next_practice`` is timed ``--calls`` times: half with no topic (a due
card comes back), half in a topic with nothing due (a new question near the person's level,
which reads their level and the workspace's rates). Beside it, in the same run, the bare
asyncpg read of the person's due cards that the engine's first query makes.

    .venv/bin/python benchmarks/practice.py [--cards N] [--calls N] [--sqlite] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from _common import POSTGRES, Bank, database

from bot.engine import Place, QuizEngine
from bot.engine.model import AnswerRecord
from bot.storage import open_store
from bot.storage._schema import cards

NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
TOPICS = 15


def percentile(samples: list[float], q: float) -> float:
    """Return the q-th percentile (0-100) of the samples, in milliseconds."""
    ordered = sorted(samples)
    return 1000 * ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def run(url: str, n_cards: int, n_questions: int, n_answers: int, calls: int) -> None:
    """Fill the database, time next_practice and the bare read, print the figures."""
    seed = Bank().questions[0]
    questions = tuple(
        replace(seed, id=f"q{i:05d}", source=f"questions/{i % TOPICS:02d}-topic/q{i}.yaml")
        for i in range(n_questions)
    )
    bank = Bank(questions)
    store = await open_store(url)
    rng = random.Random(7)
    try:
        rows = []
        for i in range(n_cards):
            due = NOW - timedelta(hours=1 + i) if i % 10 == 0 else NOW + timedelta(days=1 + i % 50)
            rows.append(
                {
                    "platform": "slack",
                    "workspace": "T07TEAM",
                    "user_id": "U07ABC123",
                    "question_id": f"q{i:05d}",
                    "state": 2,
                    "stability": 5.0 + i % 30,
                    "difficulty": 5.0,
                    "due_at": due,
                    "last_review": due - timedelta(days=5),
                    "reps": 3,
                    "lapses": 0,
                    "version": 1,
                }
            )
        async with store.write() as conn:
            await conn.execute(cards.insert(), rows)
        place = Place("slack", "T07TEAM", "C07STUDY")
        per_round = 50
        for _ in range(n_answers // per_round):
            rnd = await store.create_round(
                place, f"q{rng.randrange(n_questions):05d}", opened_at=NOW, closes_at=None
            )
            for u in range(per_round):
                right = rng.random() < 0.6
                await store.record_answer(
                    AnswerRecord(rnd.id, f"U{u}", "A" if right else "B", right, 2, NOW, 4000)
                )
            await store.close_round(rnd.id, NOW)

        engine = QuizEngine(store, bank, clock=lambda: NOW, rng=random.Random(1))
        # A topic in which nothing is due: cards of the topic's questions are due later or never.
        quiet = next(
            f"{t:02d}-topic"
            for t in range(TOPICS)
            if all(i % 10 != 0 for i in range(t, n_cards, TOPICS))
        )
        await engine.next_practice("slack", "T07TEAM", "U07ABC123")  # warm up caches
        due_times, new_times = [], []
        if os.environ.get("PRACTICE_PROFILE"):
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.enable()
            for _ in range(20):
                await engine.next_practice("slack", "T07TEAM", "U07ABC123", topic=quiet)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumtime").print_stats(25)
        for i in range(calls):
            topic = quiet if i % 2 else None
            start = time.perf_counter()
            item = await engine.next_practice("slack", "T07TEAM", "U07ABC123", topic=topic)
            (new_times if topic else due_times).append(time.perf_counter() - start)
            assert item is not None and (item.kind.value == ("new" if topic else "due")), item

        bare = []
        import asyncpg

        if url.startswith("postgresql"):
            dsn = url.replace("postgresql+asyncpg://", "postgresql://")
            conn = await asyncpg.connect(dsn)
            try:
                sql = (
                    "SELECT * FROM cards WHERE platform = $1 AND workspace = $2 AND user_id = $3"
                    " AND last_review IS NOT NULL AND due_at <= $4 ORDER BY due_at, question_id"
                    " LIMIT 20"
                )
                for _ in range(calls):
                    start = time.perf_counter()
                    await conn.fetch(sql, "slack", "T07TEAM", "U07ABC123", NOW)
                    bare.append(time.perf_counter() - start)
            finally:
                await conn.close()
    finally:
        await store.close()

    print(f"{n_cards} cards, {n_questions} questions, {n_answers} answers in the workspace")
    print(f"{'':<44}{'p50 ms':>9}{'p99 ms':>9}")
    if bare:
        print(
            f"{'bare asyncpg read of the due cards':<44}{percentile(bare, 50):>9.2f}"
            f"{percentile(bare, 99):>9.2f}"
        )
    for label, times in (
        ("next practice: a due card", due_times),
        ("next practice: a new question at the level", new_times),
    ):
        print(f"{label:<44}{percentile(times, 50):>9.2f}{percentile(times, 99):>9.2f}")
    worst = max(percentile(due_times, 99), percentile(new_times, 99))
    if bare:
        print(f"p99 against the bare read's p50: {worst / percentile(bare, 50):.1f}x")
    print(f"aim: p99 < 20 ms: {'met' if worst < 20 else 'NOT met'} ({worst:.2f} ms)")
    print(f"mean of every call: {1000 * statistics.mean(due_times + new_times):.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=5000)
    parser.add_argument("--questions", type=int, default=6000)
    parser.add_argument("--answers", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--postgres", default=POSTGRES, metavar="URL")
    parser.add_argument("--sqlite", action="store_true", help="a SQLite file instead")
    args = parser.parse_args()

    async def go() -> None:
        async with database(None if args.sqlite else args.postgres, "practice") as url:
            await run(url, args.cards, args.questions, args.answers, args.calls)

    asyncio.run(go())


if __name__ == "__main__":
    main()
