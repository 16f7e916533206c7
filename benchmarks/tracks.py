"""What a learning track adds to ``/quiz track`` and ``/quiz me``, on PostgreSQL by default.

A channel runs a 10-unit track of 30 questions with every unit opened; ``--players`` people
answered its rounds and hold a card for each question (a third of them last answered wrong).
Timed ``--calls`` times each, in the same run:

- ``player_summary``: what ``/quiz me`` read before tracks (the baseline);
- ``tracks.mine``: what ``/quiz me`` reads more for a person's tracks (their own cards only);
- ``tracks.progress``: ``/quiz track``, which reads every player's cards of the opened units to
  count who has done which unit (the completions already recorded are not written again).

    .venv/bin/python benchmarks/tracks.py [--players N] [--calls N] [--sqlite] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from _common import POSTGRES, Bank, database

from bot.engine import Place, QuizEngine
from bot.engine.model import AnswerRecord
from bot.engine.tracks import Track, TrackRun, Unit
from bot.storage import open_store
from bot.storage._schema import cards, track_runs

NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
PLACE = Place("slack", "T07TEAM", "C07STUDY")
UNITS, PER_UNIT = 10, 3


def percentile(samples: list[float], q: float) -> float:
    """Return the q-th percentile (0-100) of the samples, in milliseconds."""
    ordered = sorted(samples)
    return 1000 * ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def run(url: str, players: int, calls: int) -> None:
    """Fill the database, time the three reads, print the figures and the ratios."""
    seed = Bank().questions[0]
    questions = tuple(replace(seed, id=f"t{i:02d}") for i in range(UNITS * PER_UNIT))
    bank = Bank(questions)
    track = Track(
        "bench",
        "A benchmark track",
        tuple(
            Unit(tuple(q.id for q in questions[u * PER_UNIT : (u + 1) * PER_UNIT]), f"unit {u}")
            for u in range(UNITS)
        ),
    )
    store = await open_store(url)
    rng = random.Random(7)
    started = NOW - timedelta(days=UNITS)
    try:
        stored = await store.start_track(TrackRun(PLACE, "bench", started, "admin"))
        assert stored is not None
        async with store.write() as conn:
            await conn.execute(
                track_runs.update().where(track_runs.c.id == stored.id).values(opened=UNITS)
            )
        for day in range(UNITS):
            at = started + timedelta(days=day, hours=1)
            rnd = await store.create_round(
                PLACE, questions[day * PER_UNIT].id, opened_at=at, closes_at=None
            )
            for p in range(players):
                right = rng.random() < 0.67
                await store.record_answer(
                    AnswerRecord(rnd.id, f"U{p:05d}", "A" if right else "B", right, 2, at, 4000)
                )
            await store.close_round(rnd.id, at + timedelta(hours=1))
        rows = []
        for p in range(players):
            for i, q in enumerate(questions):
                last = started + timedelta(days=i // PER_UNIT, hours=2)
                right = (p + i) % 3 != 0
                rows.append(
                    {
                        "platform": "slack",
                        "workspace": "T07TEAM",
                        "user_id": f"U{p:05d}",
                        "question_id": q.id,
                        "state": 2,
                        "stability": 5.0,
                        "difficulty": 5.0,
                        "due_at": last + timedelta(days=1 if not right else 6),
                        "last_review": last,
                        "reps": 1,
                        "lapses": 0 if right else 1,
                        "version": 1,
                        "rating": 3 if right else 1,
                    }
                )
        async with store.write() as conn:
            for start in range(0, len(rows), 5000):
                await conn.execute(cards.insert(), rows[start : start + 5000])

        engine = QuizEngine(
            store, bank, clock=lambda: NOW, rng=random.Random(1), tracks={"bench": track}
        )
        await engine.tracks.progress(PLACE, "U00000")  # records the completions once
        timings: dict[str, list[float]] = {"summary": [], "mine": [], "progress": []}
        for i in range(calls):
            user = f"U{i % players:05d}"
            for name in ("summary", "mine", "progress"):
                start_at = time.perf_counter()
                if name == "summary":
                    await engine.player_summary("slack", "T07TEAM", user)
                elif name == "mine":
                    await engine.tracks.mine("slack", "T07TEAM", user)
                else:
                    await engine.tracks.progress(PLACE, user)
                timings[name].append(time.perf_counter() - start_at)
    finally:
        await store.close()

    print(f"{players} players, {UNITS} units of {PER_UNIT} questions opened, {calls} calls each")
    print(f"{'':<52}{'p50 ms':>9}{'p99 ms':>9}")
    labels = {
        "summary": "/quiz me before tracks (player_summary)",
        "mine": "/quiz me's tracks (tracks.mine)",
        "progress": "/quiz track (tracks.progress)",
    }
    for name, label in labels.items():
        times = timings[name]
        print(f"{label:<52}{percentile(times, 50):>9.2f}{percentile(times, 99):>9.2f}")
    base = percentile(timings["summary"], 50)
    for name in ("mine", "progress"):
        ratio = percentile(timings[name], 50) / base
        print(f"{labels[name]} p50 / the baseline's p50: {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=300)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--postgres", default=POSTGRES, metavar="URL")
    parser.add_argument("--sqlite", action="store_true", help="a SQLite file instead")
    args = parser.parse_args()

    async def go() -> None:
        async with database(None if args.sqlite else args.postgres, "tracks") as url:
            await run(url, args.players, args.calls)

    asyncio.run(go())


if __name__ == "__main__":
    main()
