"""What workspace banks cost a round: opening and closing rounds with and without them.

Three engines on one database, each timed over ``--rounds`` rounds (open, then close): the
baseline has no workspace banks (every workspace sees the files' bank); the second has them for
a workspace that never changed its bank (one read of its generation per round); the third for a
workspace with ``--own`` questions of its own, 10 of them edited (the generation read, then the
copy kept). Once every ``--rebuild-every`` rounds the third workspace's bank changes (a question
hidden), so the next round rebuilds it. The three run interleaved, ten rounds at a time; ratios
are against the baseline of the same run.

    .venv/bin/python benchmarks/workspace_banks.py [--rounds N] [--own N] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from _common import BANK, database

from bot.bank.loader import load_bank
from bot.bank.workspace import WorkspaceBanks, question_yaml
from bot.engine import Place, QuizEngine
from bot.storage import open_store

START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


async def rounds(engine: QuizEngine, clock: Clock, workspace: str, count: int) -> list[float]:
    """Open and close ``count`` rounds in one channel; return each pair's seconds."""
    place = Place("slack", workspace, "C1")
    times = []
    for _ in range(count):
        clock.now += timedelta(minutes=1)
        began = time.perf_counter()
        card = await engine.start_round(place)
        await engine.close(card.round_id)
        times.append(time.perf_counter() - began)
    return times


async def main(args: argparse.Namespace) -> None:
    base = load_bank([BANK])
    template = base.questions[1]
    async with database(args.postgres, "wsbanks") as url:
        store = await open_store(url)
        try:
            clock = Clock()
            own = [
                replace(template, id=f"own-{n}", text=f"{template.text} ({n})")
                for n in range(args.own)
            ]
            bodies = [(q.id, question_yaml(q)) for q in own]
            await store.save_revisions("slack", "TOWN", bodies, author="bench", at=START)
            edits = [(q.id, question_yaml(replace(q, text=q.text + " Edited."))) for q in own[:10]]
            await store.save_revisions("slack", "TOWN", edits, author="bench", at=START)
            plain = QuizEngine(store, base, clock=clock, rng=random.Random(1))
            banked = QuizEngine(
                store, base, clock=clock, rng=random.Random(1), banks=WorkspaceBanks(base, store)
            )
            # One warm round each, so that every path has its statements prepared.
            for engine, ws in ((plain, "TBASE"), (banked, "TPLAIN"), (banked, "TOWN")):
                await rounds(engine, clock, ws, 3)
            # Interleaved in batches of ten, so that a slow stretch of the machine falls on
            # all three alike.
            base_times: list[float] = []
            unchanged: list[float] = []
            owned: list[float] = []
            for batch in range(args.rounds // 10):
                base_times += await rounds(plain, clock, "TBASE", 10)
                unchanged += await rounds(banked, clock, "TPLAIN", 10)
                owned += await rounds(banked, clock, "TOWN", 10)
                if (batch + 1) * 10 % args.rebuild_every == 0:
                    await store.set_hidden(
                        "slack", "TOWN", [f"own-{batch}"], True, by="bench", at=clock()
                    )
        finally:
            await store.close()
    where = "PostgreSQL" if args.postgres else "SQLite file"
    baseline = statistics.median(base_times)
    print(f"{where}: {args.rounds} rounds opened and closed per engine, median per round")
    for name, times in (
        ("files' bank only (baseline)", base_times),
        ("workspace banks, bank unchanged", unchanged),
        (f"workspace banks, {args.own} own questions", owned),
    ):
        median = statistics.median(times)
        print(f"  {name:<42} {1000 * median:7.2f} ms  x{median / baseline:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--own", type=int, default=200)
    parser.add_argument("--rebuild-every", type=int, default=50)
    parser.add_argument(
        "--postgres", nargs="?", const="postgresql+asyncpg://postgres@127.0.0.1:5432/test"
    )
    asyncio.run(main(parser.parse_args()))
