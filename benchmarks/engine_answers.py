"""Answers per second recorded through the engine into SQLite, each committed before it returns.

Beside it, in the same run, a bare aiosqlite loop that inserts one row and commits per answer:
the ratio says what the engine's grading, checks and transactions cost over the floor.

    .venv/bin/python benchmarks/engine_answers.py [--answers N] [--concurrency C]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

import aiosqlite

from bot.engine import Place, QuizEngine
from bot.engine.loader import load_bank
from bot.storage import open_store

BANK = Path(__file__).resolve().parent.parent / "questions"


async def bare(path: Path, n: int) -> float:
    """Insert and commit n rows one at a time with aiosqlite; return rows per second."""
    async with aiosqlite.connect(path) as db:
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute(
            "CREATE TABLE answers (round_id INTEGER, user_id TEXT, choice TEXT, "
            "answered_at TEXT, UNIQUE(round_id, user_id))"
        )
        await db.commit()
        start = time.perf_counter()
        for i in range(n):
            await db.execute(
                "INSERT INTO answers VALUES (?, ?, ?, datetime('now'))", (1, f"U{i}", "A")
            )
            await db.commit()
        return n / (time.perf_counter() - start)


async def through_engine(path: Path, n: int, concurrency: int, *, mixed: bool) -> float:
    """Record n answers by n users through the engine; return answers per second.

    With ``mixed`` the users spread over every choice, so most answers are wrong and each miss
    is also queued for the user's review; otherwise every answer is right.
    """
    store = await open_store(f"sqlite+aiosqlite:///{path}")
    try:
        engine = QuizEngine(store, load_bank([BANK]), rng=random.Random(1))
        place = Place("slack", "T1", "C1")
        card = await engine.start_round(place)
        keys = card.question.keys if mixed else (card.question.answer,)
        queue = iter(range(n))

        async def worker() -> None:
            for i in queue:
                await engine.answer("slack", "T1", card.round_id, f"U{i}", keys[i % len(keys)])

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
        assert await engine.answered_count(card.round_id) == n, "an answer went missing"
        return n / elapsed
    finally:
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--answers", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        floor = await bare(Path(tmp) / "bare.db", args.answers)
        tmp_path = Path(tmp)
        runs = [
            ("engine, right answers", args.concurrency, False),
            ("engine, mixed answers", args.concurrency, True),
            ("engine, mixed, 50 users at once", 50, True),
        ]
        figures = [
            (label, await through_engine(tmp_path / f"e{i}.db", args.answers, c, mixed=m))
            for i, (label, c, m) in enumerate(runs)
        ]
    print(f"{'bare aiosqlite insert+commit':32}: {floor:8.0f} rows/s")
    for label, rate in figures:
        print(f"{label:32}: {rate:8.0f} answers/s  ({rate / floor:.2f}x bare)")
    best = figures[0][1]
    print(f"aim: >= 2000 answers/s on one core -> {'met' if best >= 2000 else 'NOT met'}")


if __name__ == "__main__":
    asyncio.run(main())
