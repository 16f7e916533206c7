"""Button clicks on Discord: quizbot's choice buttons beside a bare and a durable discord.py View.

The Discord stand-in runs here; each bot runs as its own process with the real discord.py client,
connected to the stand-in's gateway. Clicks arrive as INTERACTION_CREATE dispatches; a click's
time is from the moment the stand-in sends its dispatch to the moment the interaction's callback
(the ephemeral reply) reaches the stand-in.

- bare: a persistent View whose buttons only answer "ok";
- durable: the same View, but a button first commits one row (aiosqlite on a SQLite file;
  asyncpg, autocommit, with ``--postgres``), the least a bot that keeps answers must do;
- quizbot, on a one-question bank (the seed question): it parses the button's custom_id,
  grades the click, commits the answer (and the user's reviewed card), then answers with feedback.

Discord sends the whole message with every click, and discord.py parses it before any handler
runs, so the baselines' buttons are on the same message as quizbot's: its card for the seed
question, as quizbot renders it (question, choices, facts, four buttons), posted in answer to
a command as ``/quiz next`` posts it. ``--small-message`` puts them on a message with one
button and nothing else instead (about a quarter of the card's size), as runs before did.

Each bot runs ``--runs`` times, alternating (bare, durable, quizbot, quizbot, durable, bare,
...). This process, which plays Discord, pauses its own garbage collector while it times a
burst (``collector_paused``): a full collection of its heap stalled whichever bot was timed.
Each run sends a warm-up, then two bursts by the same ``--clicks`` users, in waves of
``--concurrency`` at once, spread over every choice (``--right-only``: all on the right one).
Between the bursts quizbot's round is closed and the question asked again, so in the second
burst each user who missed already holds a card for it (the repeat-miss case). Reported
per burst: p50/p99, clicks a second, CPU milliseconds per click of the bot's process, and the
callbacks later than Discord's 3 s deadline (their users would see "This interaction failed").
Afterwards every quizbot answer must be in its database. A last row times ``engine.answer``
alone, in this process, in the same waves: the share of quizbot's time that is grading and the
database commit rather than Discord handling.

    .venv/bin/python benchmarks/discord_clicks.py [--clicks N] [--concurrency K] [--runs R]
                                                  [--right-only] [--small-message]
                                                  [--postgres [URL]]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._common import POSTGRES, collector_paused, cpu_seconds, database  # noqa: E402
from tests.standins.discord_api import EPHEMERAL, DiscordStandIn  # noqa: E402

if TYPE_CHECKING:
    from bot.engine.model import Question

SELF = Path(__file__).resolve()
ONE_QUESTION = ROOT / "questions" / "01-interconnects" / "01-multinode-interconnect.yaml"
WARM_UP = 20
DEADLINE = 3.0  # Discord's: no first response by then, and the interaction has failed
BOTS = ("bare", "durable", "quizbot")


# ---------------------------------------------------------------- the bots (child processes)


async def serve_view(api_url: str, gateway_url: str, token: str, database_url: str | None) -> None:
    """Run a client whose persistent View answers each click with an ephemeral "ok".

    With a database, the View is the durable one: it commits a row before it answers.
    """
    import discord

    from bot.adapters.discord.app import configure_endpoints, intents

    save = None if database_url is None else await durable_writer(database_url)
    prefix = "bare" if save is None else "durable"

    class Answers(discord.ui.View):
        """One button per choice of the seed question (and "ok", for ``--small-message``)."""

        def __init__(self) -> None:
            super().__init__(timeout=None)
            for key in ("ok", *seed_question().keys):
                button: discord.ui.Button[Answers] = discord.ui.Button(
                    label=key, custom_id=f"{prefix}:{key}"
                )
                button.callback = self.ok  # type: ignore[method-assign]
                self.add_item(button)

        async def ok(self, interaction: discord.Interaction) -> None:
            if save is not None:
                message = interaction.message.id if interaction.message else 0
                await save(str(interaction.user.id), str(message))
            await interaction.response.send_message("ok", ephemeral=True)

    class Client(discord.Client):
        async def setup_hook(self) -> None:
            self.add_view(Answers())

    configure_endpoints(api_url, gateway_url)
    client = Client(intents=intents(), guild_ready_timeout=0.05)
    await run_until_signalled(client, token)


async def durable_writer(database_url: str) -> Any:
    """Return a function that commits one row per click: aiosqlite, or asyncpg in autocommit."""
    ddl = (
        "CREATE TABLE IF NOT EXISTS durable_clicks (user_id TEXT NOT NULL, "
        "message_id TEXT NOT NULL, clicked_at {} NOT NULL, UNIQUE (user_id, message_id))"
    )
    if database_url.startswith("sqlite"):
        import aiosqlite

        db = await aiosqlite.connect(database_url.split("///", 1)[1])
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute(ddl.format("TEXT"))
        await db.commit()

        async def save_sqlite(user: str, message: str) -> None:
            await db.execute(
                "INSERT INTO durable_clicks VALUES (?, ?, datetime('now')) ON CONFLICT DO NOTHING",
                (user, message),
            )
            await db.commit()

        return save_sqlite
    import asyncpg

    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    pool = await asyncpg.create_pool(dsn, min_size=15, max_size=15)  # quizbot's 5 + 10
    await pool.execute(ddl.format("TIMESTAMPTZ"))

    async def save_postgres(user: str, message: str) -> None:
        await pool.execute(
            "INSERT INTO durable_clicks VALUES ($1, $2, now()) ON CONFLICT DO NOTHING",
            user,
            message,
        )

    return save_postgres


async def serve_quiz(api_url: str, gateway_url: str, token: str, database_url: str) -> None:
    """Run quizbot's Discord client on a fresh database and the one-question bank."""
    from bot.adapters.discord.app import QuizClient, configure_endpoints
    from bot.config import Settings
    from bot.observability.heap import collect_for_serving
    from bot.runtime import open_runtime

    configure_endpoints(api_url, gateway_url)
    collect_for_serving()  # as `quizbot discord` does
    settings = Settings(QUIZBOT_DATABASE_URL=database_url, QUIZBOT_QUESTIONS=str(ONE_QUESTION))
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
    """Click times (seconds) of one bot in one burst of one run."""

    bot: str
    times: list[float] = field(default_factory=list)
    wall: float = 0.0
    failed: int = 0
    cpu: float = 0.0

    @property
    def late(self) -> int:
        """Return how many callbacks came after Discord's deadline."""
        return sum(t > DEADLINE for t in self.times)


def quantile(values: list[float], q: float) -> float:
    """Return a quantile (0..1) of the values."""
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 1000) - 1]


async def waves(
    api: DiscordStandIn, bot: str, message: int, ids: list[str], users: range, concurrency: int
) -> Run:
    """Click the message's buttons, one click per user, ``concurrency`` at once."""
    run = Run(bot)
    with collector_paused():
        start = time.perf_counter()
        await waves_of(api, run, message, ids, users, concurrency)
        run.wall = time.perf_counter() - start
    return run


async def waves_of(
    api: DiscordStandIn, run: Run, message: int, ids: list[str], users: range, concurrency: int
) -> None:
    """Send the waves; record each click's time in ``run``."""
    for first in range(0, len(users), concurrency):
        wave = [
            api.click(message, ids[(first + i) % len(ids)], user=users[first + i])
            for i in range(min(concurrency, len(users) - first))
        ]
        calls = await asyncio.gather(*(api.interact(p, within=60) for p in wave))
        for payload, call in zip(wave, calls, strict=True):
            flags = int((call.body.get("data") or {}).get("flags") or 0)
            if call.status != 200 or not flags & EPHEMERAL:
                run.failed += 1
            run.times.append(call.at - api.dispatched_at[int(payload["id"])])


async def one_run(
    bot: str,
    users: range,
    concurrency: int,
    database_url: str | None,
    *,
    right_only: bool,
    small_message: bool = False,
) -> tuple[Run, Run]:
    """Start the stand-in and one bot; send two bursts by the same users; return them."""
    async with DiscordStandIn() as api:
        args = [sys.executable, str(SELF), "--serve", bot]
        args += ["--api", api.api_url, "--gateway", api.gateway_url, "--token", api.token]
        if database_url:
            args += ["--database", database_url]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "QUIZBOT_"))}
        proc = await asyncio.create_subprocess_exec(*args, cwd=ROOT, env=env)
        try:
            await api.wait_connected(within=120)
            message, ids = await card(api, bot, small=small_message)
            if right_only and bot == "quizbot":
                ids = [right_answer(ids)]
            for i in range(WARM_UP):
                await api.interact(api.click(message, ids[i % len(ids)], user=users[0] - 1 - i))
            bursts = []
            for burst in (1, 2):
                if burst == 2:
                    if bot == "quizbot":
                        await close_round(api)
                    message, ids = await card(api, bot, small=small_message)
                    if right_only and bot == "quizbot":
                        ids = [right_answer(ids)]
                cpu = cpu_seconds(proc.pid)
                run = await waves(api, bot, message, ids, users, concurrency)
                run.cpu = cpu_seconds(proc.pid) - cpu
                bursts.append(run)
            return bursts[0], bursts[1]
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(proc.wait(), 30)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


async def close_round(api: DiscordStandIn) -> None:
    """Close quizbot's round with /quiz close; return once the whole reveal has been posted.

    The reveal's last message carries the question's chart, whose drawing would otherwise
    land in the next burst's CPU time.
    """
    start = len(api.calls)
    await api.interact(api.command("quiz", "close"), within=60)
    await api.wait_for(
        lambda c: c.method == "POST" and c.path.endswith("/messages") and bool(c.files),
        within=60,
        after=start,
    )


async def card(api: DiscordStandIn, bot: str, *, small: bool) -> tuple[int, list[str]]:
    """Get a message with the bot's buttons into a channel; return it and their custom_ids."""
    if bot == "quizbot":
        payload = api.command("quiz", "next")
        await api.interact(payload, within=60)
        message = api.response_message(payload)
    elif small:
        button = {"type": 2, "style": 1, "label": "OK", "custom_id": f"{bot}:ok"}
        row = {"type": 1, "components": [button]}
        message = api.add_message(api.channel_ids()[0], {"components": [row]})
    else:
        message = baseline_card(api, bot)
    ids = [b["custom_id"] for row in message["components"] for b in row["components"]]
    return int(message["id"]), ids


def baseline_card(api: DiscordStandIn, bot: str) -> dict[str, Any]:
    """Post quizbot's card of the seed question with the baseline's own custom_ids.

    It is rendered by quizbot's Discord renderer and shaped as the stand-in shapes a message
    sent in answer to a command, as ``/quiz next``'s card is: each click then carries the
    same message to the baseline as to quizbot.
    """
    from bot.adapters.discord import render
    from bot.engine.model import Place, QuestionCard, Round

    channel = api.channel_ids()[0]
    now = datetime.now(UTC)
    question = seed_question()
    place = Place("discord", str(api.guild_id), str(channel))
    rnd = Round(1, place, question.id, now, now + timedelta(minutes=10))
    shown = QuestionCard(rnd, question)
    components = render.card_view(shown).to_components()
    for row in components:
        for button in row["components"]:
            button["custom_id"] = f"{bot}:{button['custom_id'].rsplit(':', 1)[1]}"
    body = {"embeds": [render.card_embed(shown).to_dict()], "components": components}
    message = api.add_message(channel, body)
    message.update(
        type=20,
        application_id=str(api.application_id),
        interaction_metadata={
            "id": str(api.snowflake()),
            "type": 2,
            "user": api.user(1001),
            "authorizing_integration_owners": {},
        },
    )
    return message


@functools.cache
def seed_question() -> Question:
    """Return the one question of the benchmark's bank (read once)."""
    from bot.bank.loader import load_bank

    return load_bank([ONE_QUESTION]).filter(None)[0]


def right_answer(ids: list[str]) -> str:
    """Return the custom_id of the right choice of the one question."""
    answer = seed_question().answer
    return next(i for i in ids if i.endswith(":" + answer))


async def answers_stored(database_url: str) -> int:
    """Return how many answers a quizbot run left in its database."""
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as conn:
            return int((await conn.execute(sa.text("SELECT count(*) FROM answers"))).scalar_one())
    finally:
        await engine.dispose()


async def engine_only(database_url: str, clicks: int, concurrency: int, *, right_only: bool) -> Run:
    """Time engine.answer alone, in this process, with the same waves: the database's share."""
    from bot.config import Settings
    from bot.engine.model import Place
    from bot.runtime import open_runtime

    settings = Settings(QUIZBOT_DATABASE_URL=database_url, QUIZBOT_QUESTIONS=str(ONE_QUESTION))
    async with open_runtime(settings) as rt:
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
        cpu, start = time.process_time(), time.perf_counter()
        for first in range(0, clicks, concurrency):
            await asyncio.gather(*(one(i) for i in range(first, min(first + concurrency, clicks))))
        run.wall, run.cpu = time.perf_counter() - start, time.process_time() - cpu
        return run


def report(runs: dict[int, list[Run]], engine: Run, clicks: int, concurrency: int) -> list[str]:
    """Print each burst's figures per bot and quizbot's ratios; return the aims not met."""
    missed = []
    for burst, mine in runs.items():
        what = "first answers" if burst == 1 else "the same users again (repeat misses)"
        print(f"\nburst {burst}: {clicks} clicks per run in waves of {concurrency}, {what}")
        print(
            f"  {'bot':8} {'runs':>4} {'clicks':>6} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} "
            f"{'clicks/s':>9} {'CPU/click':>10} {'past 3 s':>8}"
        )
        summary: dict[str, tuple[float, float, float]] = {}
        rows = [(bot, [r for r in mine if r.bot == bot]) for bot in BOTS]
        if burst == 1:
            rows.append(("engine", [engine]))
        for bot, of_bot in rows:
            times = [t for r in of_bot for t in r.times]
            p50, p99 = quantile(times, 0.5) * 1000, quantile(times, 0.99) * 1000
            rate = sum(len(r.times) for r in of_bot) / sum(r.wall for r in of_bot)
            cpu_ms = 1000 * sum(r.cpu for r in of_bot) / len(times)
            summary[bot] = (p50, p99, rate)
            failed = sum(r.failed for r in of_bot)
            late = sum(r.late for r in of_bot)
            print(
                f"  {bot:8} {len(of_bot):>4} {len(times):>6} {p50:>8.2f} {p99:>8.2f} "
                f"{statistics.fmean(times) * 1000:>8.2f} {rate:>9.0f} {cpu_ms:>7.2f} ms {late:>8}"
                + (f"  FAILED {failed}" if failed else "")
            )
        quiz = summary["quizbot"]
        for base in ("bare", "durable"):
            p50, p99, rate = summary[base]
            print(
                f"  quizbot/{base}: throughput {quiz[2] / rate:.2f}x, "
                f"p50 {quiz[0] / p50:.2f}x, p99 {quiz[1] / p99:.2f}x"
            )
        if quiz[2] < 0.8 * summary["durable"][2]:
            missed.append(f"burst {burst} >= 0.8x the durable View")
        if any(r.late for r in mine if r.bot == "quizbot"):
            missed.append(f"burst {burst}: no callback past 3 s")
    return missed


async def main(args: argparse.Namespace) -> int:
    """Alternate the three bots, then report."""
    async with (
        database(args.postgres, "discord") as quiz_url,
        database(args.postgres, "durable") as durable_url,
        database(args.postgres, "engine") as engine_url,
    ):
        runs: dict[int, list[Run]] = {1: [], 2: []}
        order = list(BOTS) + list(BOTS[::-1])
        stored = []
        for i, bot in enumerate((order * args.runs)[: 3 * args.runs]):
            target = {"bare": None, "durable": durable_url, "quizbot": quiz_url}[bot]
            # New users each run: a run's first burst is everyone's first answer.
            first, second = await one_run(
                bot,
                range(10_000 + 100_000 * i, 10_000 + 100_000 * i + args.clicks),
                args.concurrency,
                target,
                right_only=args.right_only,
                small_message=args.small_message,
            )
            runs[1].append(first)
            runs[2].append(second)
            if bot == "quizbot":
                stored.append(await answers_stored(quiz_url))
            print(
                f"run {i + 1}: {bot:8} p50 {quantile(first.times, 0.5) * 1000:.2f} / "
                f"{quantile(second.times, 0.5) * 1000:.2f} ms",
                flush=True,
            )
        engine = await engine_only(
            engine_url, args.clicks * args.runs, args.concurrency, right_only=args.right_only
        )
    where = "PostgreSQL" if args.postgres else "SQLite"
    shown = "a one-button message" if args.small_message else "quizbot's card"
    print(f"\nquizbot discord on {where}; the baselines' buttons on {shown}")
    missed = report(runs, engine, args.clicks, args.concurrency)
    # The quizbot runs share one database: it holds every run's answers so far.
    per_run = WARM_UP + 2 * args.clicks
    ok = stored == [per_run * (n + 1) for n in range(len(stored))]
    print(f"\nevery quizbot answer is in its database ({stored}): {'yes' if ok else 'NO'}")
    for aim in ("burst 1 >= 0.8x the durable View", "burst 2 >= 0.8x the durable View"):
        print(f"aim: {aim}: {'NOT met' if aim in missed else 'met'}")
    late = [m for m in missed if "past 3 s" in m]
    print(f"aim: no callback past 3 s: {'NOT met' if late else 'met'}")
    failed = sum(r.failed for rs in runs.values() for r in rs)
    return 0 if ok and not failed else 1


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clicks", type=int, default=300, help="clicks per burst (300)")
    parser.add_argument("--concurrency", type=int, default=25, help="clicks sent at once (25)")
    parser.add_argument("--runs", type=int, default=2, help="runs per bot (2)")
    parser.add_argument(
        "--right-only",
        action="store_true",
        help="every click picks the right choice (default: clicks spread over every choice)",
    )
    parser.add_argument(
        "--small-message",
        action="store_true",
        help="put the baselines' buttons on a one-button message, not on quizbot's card",
    )
    parser.add_argument(
        "--postgres",
        nargs="?",
        const=POSTGRES,
        metavar="URL",
        help="run quizbot and the durable View on new databases on this PostgreSQL server",
    )
    parser.add_argument("--serve", choices=BOTS, help=argparse.SUPPRESS)
    parser.add_argument("--api", help=argparse.SUPPRESS)
    parser.add_argument("--gateway", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    options = parse()
    if options.serve == "bare":
        asyncio.run(serve_view(options.api, options.gateway, options.token, None))
    elif options.serve == "durable":
        asyncio.run(serve_view(options.api, options.gateway, options.token, options.database))
    elif options.serve == "quizbot":
        asyncio.run(serve_quiz(options.api, options.gateway, options.token, options.database))
    else:
        raise SystemExit(asyncio.run(main(options)))
