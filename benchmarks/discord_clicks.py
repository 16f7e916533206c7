"""Button clicks on Discord: quizbot's choice buttons beside a bare discord.py View, same run.

The Discord stand-in runs here; each bot runs as its own process with the real discord.py client,
connected to the stand-in's gateway. Clicks arrive as INTERACTION_CREATE dispatches; a click's
time is from the moment the stand-in sends its dispatch to the moment the interaction's callback
(the ephemeral reply) reaches the stand-in.

The bare bot registers a persistent View whose one button only answers "ok". quizbot parses the
button's custom_id, grades the click, commits the answer (SQLite by default), then answers with
the feedback. Each bot runs ``--runs`` times, alternating (bare, quizbot, quizbot, bare, ...);
each run sends a warm-up, then ``--clicks`` clicks from distinct users in waves of
``--concurrency`` at once, spread over every choice (``--right-only``: all on the right one).
Afterwards every quizbot answer must be in the database. A last row times ``engine.answer``
alone, in this process, in the same waves: the share of quizbot's time that is grading and the
database commit rather than Discord handling.

    .venv/bin/python benchmarks/discord_clicks.py [--clicks N] [--concurrency K] [--runs R]
                                                  [--database URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.standins.discord_api import EPHEMERAL, DiscordStandIn  # noqa: E402

SELF = Path(__file__).resolve()
BARE_ID = "bare:ok"
WARM_UP = 20


# ---------------------------------------------------------------- the two bots (child processes)


async def serve_bare(api_url: str, gateway_url: str, token: str) -> None:
    """Run a client whose persistent View only answers each click with an ephemeral "ok"."""
    import discord

    from bot.adapters.discord.app import configure_endpoints, intents

    class OnlyResponds(discord.ui.View):
        def __init__(self) -> None:
            super().__init__(timeout=None)

        @discord.ui.button(label="OK", custom_id=BARE_ID)
        async def ok(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
            await interaction.response.send_message("ok", ephemeral=True)

    class Bare(discord.Client):
        async def setup_hook(self) -> None:
            self.add_view(OnlyResponds())

    configure_endpoints(api_url, gateway_url)
    client = Bare(intents=intents(), guild_ready_timeout=0.05)
    await run_until_signalled(client, token)


async def serve_quiz(api_url: str, gateway_url: str, token: str, database: str) -> None:
    """Run quizbot's Discord client on a fresh database and the bundled questions."""
    from bot.adapters.discord.app import QuizClient, configure_endpoints
    from bot.config import Settings
    from bot.runtime import open_runtime

    configure_endpoints(api_url, gateway_url)
    settings = Settings(QUIZBOT_DATABASE_URL=database)
    async with open_runtime(settings) as rt:
        client = QuizClient(rt.engine, guild_ready_timeout=0.05)
        await run_until_signalled(client, token)


async def run_until_signalled(client: Any, token: str) -> None:
    """Run a discord.py client until SIGTERM."""
    loop = asyncio.get_running_loop()
    closing: list[asyncio.Task[None]] = []
    loop.add_signal_handler(
        signal.SIGTERM, lambda: closing.append(loop.create_task(client.close()))
    )
    async with client:
        await client.start(token)
    await asyncio.gather(*closing)


# ---------------------------------------------------------------- the load


@dataclass
class Run:
    """Click times (seconds) of one bot in one run."""

    bot: str
    times: list[float] = field(default_factory=list)
    wall: float = 0.0
    failed: int = 0


def quantile(values: list[float], q: float) -> float:
    """Return a quantile (0..1) of the values."""
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 1000) - 1]


async def one_run(
    bot: str, clicks: int, concurrency: int, database: str | None, *, right_only: bool = False
) -> Run:
    """Start the stand-in and one bot; send the clicks; return their times."""
    async with DiscordStandIn() as api:
        args = [sys.executable, str(SELF), "--serve", bot]
        args += ["--api", api.api_url, "--gateway", api.gateway_url, "--token", api.token]
        if database:
            args += ["--database", database]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "QUIZBOT_"))}
        proc = await asyncio.create_subprocess_exec(*args, cwd=ROOT, env=env)
        try:
            await api.wait_connected(within=120)
            message, ids = await card(api, bot)
            if right_only and bot == "quizbot":
                ids = [await right_answer(database or "", ids)]
            user = iter(range(10_000, 10_000 + WARM_UP + clicks))
            for i in range(WARM_UP):
                await api.interact(api.click(message, ids[i % len(ids)], user=next(user)))
            run = Run(bot)
            start = time.perf_counter()
            sent = 0
            while sent < clicks:
                wave = [
                    api.click(message, ids[(sent + i) % len(ids)], user=next(user))
                    for i in range(min(concurrency, clicks - sent))
                ]
                calls = await asyncio.gather(*(api.interact(p, within=60) for p in wave))
                for payload, call in zip(wave, calls, strict=True):
                    flags = int((call.body.get("data") or {}).get("flags") or 0)
                    if call.status != 200 or not flags & EPHEMERAL:
                        run.failed += 1
                    run.times.append(call.at - api.dispatched_at[int(payload["id"])])
                sent += len(wave)
            run.wall = time.perf_counter() - start
            return run
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(proc.wait(), 30)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


async def card(api: DiscordStandIn, bot: str) -> tuple[int, list[str]]:
    """Get a message with the bot's buttons into a channel; return it and their custom_ids."""
    if bot == "bare":
        button = {"type": 2, "style": 1, "label": "OK", "custom_id": BARE_ID}
        row = {"type": 1, "components": [button]}
        message = api.add_message(api.channel_ids()[0], {"components": [row]})
    else:
        payload = api.command("quiz", "next")
        await api.interact(payload, within=60)
        message = api.response_message(payload)
    ids = [b["custom_id"] for row in message["components"] for b in row["components"]]
    return int(message["id"]), ids


async def right_answer(database: str, ids: list[str]) -> str:
    """Return the custom_id of the right choice of the open round (read from the bank)."""
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    from bot.config import Settings
    from bot.engine.loader import load_bank

    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            query = sa.text("SELECT question_id FROM rounds ORDER BY id DESC LIMIT 1")
            question_id = (await conn.execute(query)).scalar_one()
    finally:
        await engine.dispose()
    answer = load_bank(Settings().question_paths()).by_id(question_id).answer
    return next(i for i in ids if i.endswith(":" + answer))


async def answers_stored(database: str) -> int:
    """Return how many answers the quizbot runs left in the database."""
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            return int((await conn.execute(sa.text("SELECT count(*) FROM answers"))).scalar_one())
    finally:
        await engine.dispose()


async def engine_only(database: str, clicks: int, concurrency: int, *, right_only: bool) -> Run:
    """Time engine.answer alone, in this process, with the same waves: the database's share."""
    from bot.config import Settings
    from bot.engine.model import Place
    from bot.runtime import open_runtime

    async with open_runtime(Settings(QUIZBOT_DATABASE_URL=database)) as rt:
        place = Place("discord", "bench", str(time.time_ns()))
        card = await rt.engine.start_round(place)
        q = card.question
        keys = [q.answer] if right_only else list(q.keys)
        run = Run("engine")

        async def one(i: int) -> None:
            start = time.perf_counter()
            await rt.engine.answer("discord", "bench", card.round_id, f"u{i}", keys[i % len(keys)])
            run.times.append(time.perf_counter() - start)

        for i in range(WARM_UP):
            await one(-1 - i)
        start = time.perf_counter()
        for first in range(0, clicks, concurrency):
            await asyncio.gather(*(one(i) for i in range(first, min(first + concurrency, clicks))))
        run.wall = time.perf_counter() - start
        return run


def report(runs: list[Run], clicks: int, concurrency: int) -> None:
    """Print p50/p99 per bot and quizbot's ratio to the bare View."""
    print(f"\n{clicks} clicks per run in waves of {concurrency}; times in milliseconds")
    print(f"{'bot':8} {'runs':>4} {'clicks':>6} {'p50':>8} {'p99':>8} {'mean':>8} {'clicks/s':>9}")
    summary: dict[str, tuple[float, float, float]] = {}
    for bot in ("bare", "quizbot", "engine"):
        mine = [r for r in runs if r.bot == bot]
        times = [t for r in mine for t in r.times]
        p50, p99 = quantile(times, 0.5) * 1000, quantile(times, 0.99) * 1000
        rate = sum(len(r.times) for r in mine) / sum(r.wall for r in mine)
        summary[bot] = (p50, p99, rate)
        failed = sum(r.failed for r in mine)
        print(
            f"{bot:8} {len(mine):>4} {len(times):>6} {p50:>8.2f} {p99:>8.2f} "
            f"{statistics.fmean(times) * 1000:>8.2f} {rate:>9.0f}"
            + (f"  FAILED {failed}" if failed else "")
        )
    bare, quiz = summary["bare"], summary["quizbot"]
    print(
        f"ratio bare/quizbot: p50 {bare[0] / quiz[0]:.2f}, p99 {bare[1] / quiz[1]:.2f}; "
        f"throughput quizbot/bare {quiz[2] / bare[2]:.2f}"
    )


async def main(args: argparse.Namespace) -> int:
    """Alternate the two bots, then report."""
    with tempfile.TemporaryDirectory() as tmp:
        databases = []
        runs = []
        order = ["bare", "quizbot", "quizbot", "bare"] * ((args.runs + 1) // 2)
        for i, bot in enumerate(order[: 2 * args.runs]):
            database = None
            if bot == "quizbot":
                database = args.database or f"sqlite+aiosqlite:///{Path(tmp) / f'bench{i}.db'}"
                databases.append(database)
            run = await one_run(
                bot, args.clicks, args.concurrency, database, right_only=args.right_only
            )
            runs.append(run)
            print(f"run {i + 1}: {bot:8} p50 {quantile(run.times, 0.5) * 1000:.2f} ms", flush=True)
        engine_db = f"sqlite+aiosqlite:///{Path(tmp) / 'engine.db'}"
        runs.append(
            await engine_only(
                args.database or engine_db,
                args.clicks * args.runs,
                args.concurrency,
                right_only=args.right_only,
            )
        )
        report(runs, args.clicks, args.concurrency)
        if not args.database:
            stored = [await answers_stored(db) for db in databases]
            expected = args.clicks + WARM_UP
            assert all(n == expected for n in stored), f"answers stored {stored}, not {expected}"
            print(f"every quizbot answer is in its database ({stored})")
        failed = sum(r.failed for r in runs)
        return 1 if failed else 0


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clicks", type=int, default=300, help="clicks per run (300)")
    parser.add_argument("--concurrency", type=int, default=25, help="clicks sent at once (25)")
    parser.add_argument("--runs", type=int, default=2, help="runs per bot (2)")
    parser.add_argument("--database", help="quizbot's database URL (default: a fresh SQLite file)")
    parser.add_argument(
        "--right-only",
        action="store_true",
        help="every click picks the right choice (default: clicks spread over every choice)",
    )
    parser.add_argument("--serve", choices=["bare", "quizbot"], help=argparse.SUPPRESS)
    parser.add_argument("--api", help=argparse.SUPPRESS)
    parser.add_argument("--gateway", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    options = parse()
    if options.serve == "bare":
        asyncio.run(serve_bare(options.api, options.gateway, options.token))
    elif options.serve == "quizbot":
        asyncio.run(serve_quiz(options.api, options.gateway, options.token, options.database))
    else:
        raise SystemExit(asyncio.run(main(options)))
