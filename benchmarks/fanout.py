"""Daily posts at fleet scale: thousands of channels due in the same minute, one or two replicas.

Run: ``.venv/bin/python benchmarks/fanout.py`` (PostgreSQL at 127.0.0.1:5432 as in the tests).

It stores ``--schedules`` daily schedules at 09:00 UTC, ``--per-workspace`` channels a
workspace, each with yesterday's question still open (so a post is the reveal's edit, its
thread reply and the new card; ``--discord-first-day`` leaves Discord's channels without one,
a post being its card alone), starts the platform's
stand-in in this process with the platform's limits enforced and ``--latency`` on every request,
and starts the replicas as processes of their own (``quizbot``'s scheduler on the real slack_sdk
or discord.py client and a PostgreSQL store each), whose clocks read 09:00:00 at the start.
Scenarios:

- Slack, one replica; Slack, two replicas (the speed-up is the ratio of the two times);
- Slack, two replicas, one killed (SIGKILL) once half the cards are out;
- Discord, one replica, against the global limit (50 requests a second) and per-route buckets;
- an idle tick with every schedule posted, against the read the tick made before (every
  schedule with its claims), in the same process.

Each prints the time from 09:00 to the last card, cards a second, requests per card, 429s
received, the platform's floor (the least time its limits allow for this work), doubles
(channels with more than one card), misses (channels without one), and how many cards a replica
taking over looked for on the platform (a card its dead predecessor may have posted unheard).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import signal
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from _common import POSTGRES, ROOT, database

sys.path.insert(0, str(ROOT))

import sqlalchemy as sa
import yaml

from bot.bank.loader import load_bank
from bot.engine import QuizEngine
from bot.scheduler.daily import FanOut, post_due, run_scheduler
from bot.storage import open_store
from bot.storage._schema import rounds, schedules, slot_claims
from tests.standins.discord_api import DiscordLimits, DiscordStandIn
from tests.standins.slack_api import SlackApiStandIn, SlackLimits

NINE = datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
YESTERDAY = NINE - timedelta(days=1)
BANK = ROOT / "questions"
SLACK_PER_WORKSPACE_PER_MINUTE = 300


# ---------------------------------------------------------------- the replica process


def replica_main(args: argparse.Namespace) -> None:
    """Run one replica's scheduler until killed or told to stop (stdin closed).

    With ``FANOUT_PROFILE`` set to a folder, the replica's run is profiled (cProfile, CPU time)
    into ``replica-N.prof`` there.
    """
    folder = os.environ.get("FANOUT_PROFILE")
    if not folder:
        asyncio.run(_replica(args))
        return
    import cProfile

    # CPU time, not wall time: on a busy machine a process waits for a core inside any call.
    with cProfile.Profile(time.process_time) as profile:
        asyncio.run(_replica(args))
    profile.dump_stats(os.path.join(folder, f"replica-{args.index}.prof"))


async def _replica(args: argparse.Namespace) -> None:
    logging.basicConfig(
        level=os.environ.get("FANOUT_LOG", "WARNING"),
        format=f"%(relativeCreated)8.0f replica {args.index} %(levelname)s %(name)s: %(message)s",
    )
    store = await open_store(args.db, migrate=False, pool_size=args.pool, max_overflow=0)
    start = time.monotonic()

    def clock() -> datetime:
        return NINE + timedelta(seconds=time.monotonic() - start)

    engine = QuizEngine(store, load_bank([BANK]), clock=clock, rng=random.Random(args.index))
    closing: list[Callable[[], Any]] = []
    if args.platform == "slack":
        import aiohttp

        from bot.adapters.slack.app import web_client
        from bot.adapters.slack.handlers import SlackPort
        from bot.chat import Publisher
        from bot.config import Settings

        settings = Settings(
            SLACK_BOT_TOKEN="xoxb-bench",
            SLACK_SIGNING_SECRET="bench",
            SLACK_API_URL=args.url,
            QUIZBOT_DATABASE_URL=args.db,
        )
        http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        closing.append(http.close)
        publisher = Publisher(engine, SlackPort(web_client(settings, http)))
    else:
        import discord

        from bot.adapters.discord.app import configure_endpoints
        from bot.adapters.discord.handlers import DiscordPort
        from bot.chat import Publisher

        configure_endpoints(args.url, args.url.replace("http", "ws") + "/gateway")
        client = discord.Client(intents=discord.Intents.none())
        await client.login(args.token)
        closing.append(client.close)
        publisher = Publisher(engine, DiscordPort(client))
    concurrency = args.concurrency or FanOut.for_platform(args.platform).concurrency
    fan_out = FanOut(concurrency=concurrency, lease=timedelta(seconds=args.lease))
    statements = _count_statements(store)
    print("ready", flush=True)
    # The start: stdin says go; from here the clock reads 09:00.
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    start = time.monotonic()
    cpu_at_go, statements_at_go = time.process_time(), statements[0]
    stop = asyncio.Event()
    task = asyncio.create_task(
        run_scheduler(
            engine,
            publisher,
            store,
            clock=clock,
            interval=args.interval,
            stop=stop,
            claimant=f"replica-{args.index}-{os.getpid()}",
            fan_out=fan_out,
        )
    )
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    stop.set()
    await task
    # From "go" to "stop": the fan-out's own work, without start-up (imports, the bank).
    print(
        f"replica {args.index}: fan-out {time.process_time() - cpu_at_go:.2f} s of CPU, "
        f"{statements[0] - statements_at_go} statements",
        file=sys.stderr,
        flush=True,
    )
    for close in closing:
        await close()
    await store.close()
    print(f"replica {args.index}: {time.process_time():.1f} s of CPU", file=sys.stderr, flush=True)


def _count_statements(store: Any) -> list[int]:
    """Count the statements the replica's store sends to the database (a one-item list)."""
    count = [0]

    kinds: Counter[str] = Counter()

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        count[0] += 1
        if os.environ.get("FANOUT_STATEMENTS"):
            kinds[" ".join(statement.split())[:110]] += 1

    if os.environ.get("FANOUT_STATEMENTS"):
        import atexit

        atexit.register(
            lambda: print(
                *(f"{n:6d} {k}" for k, n in kinds.most_common()), sep="\n", file=sys.stderr
            )
        )

    def raw(sql: str | None) -> None:
        if sql is not None:  # None marks a round trip; each statement is counted once
            seen(None, None, sql)

    sa.event.listen(store.engine.sync_engine, "before_cursor_execute", seen)
    # The statements of the hot paths go to the driver itself, past SQLAlchemy's events.
    store.trace_raw_statements(raw)
    return count


# ---------------------------------------------------------------- the driver


@dataclass
class Result:
    """What one scenario measured."""

    name: str
    seconds: float
    cards: int
    requests: int
    limited: int
    floor: float
    doubles: int
    misses: int
    late_notes: int

    looked: int = 0

    def line(self) -> str:
        rate = self.cards / self.seconds if self.seconds else 0.0
        per = self.requests / self.cards if self.cards else 0.0
        return (
            f"{self.name:<34} last card {self.seconds:7.1f} s  {rate:6.1f} cards/s  "
            f"{per:4.2f} requests/card  429s {self.limited:6d}  floor {self.floor:6.1f} s  "
            f"doubles {self.doubles}  misses {self.misses}  late notes {self.late_notes}  "
            f"cards looked for {self.looked}"
        )


async def seed(
    db: str, places: list[tuple[str, str]], refs: list[str] | None, platform: str
) -> None:
    """Store the schedules at 09:00 UTC and, with ``refs``, each channel's open question from
    yesterday (its card's message) and its claim."""
    store = await open_store(db)
    bank = load_bank([BANK]).filter(None)
    since = YESTERDAY - timedelta(hours=1)
    turns: Counter[str] = Counter()
    sched, opened, claims = [], [], []
    for i, (workspace, channel) in enumerate(places):
        key = dict(platform=platform, workspace=workspace, channel=channel)
        sched.append(
            key
            | dict(
                hour=9,
                minute=0,
                zone="UTC",
                days="daily",
                tag=None,
                digest_weekday=None,
                close_minutes=None,
                since=since,
                set_by="U0ADMIN",
                due_at=NINE,
                turn=turns[workspace],
            )
        )
        turns[workspace] += 1
        if refs is None:
            continue
        ref = refs[i]
        opened.append(
            key
            | dict(
                question_id=bank[i % len(bank)].id,
                opened_at=YESTERDAY,
                message_ref=ref,
                scheduled=True,
                slot=YESTERDAY.date().isoformat(),
            )
        )
        claims.append(
            key
            | dict(
                kind="post",
                slot=YESTERDAY.date().isoformat(),
                slot_at=YESTERDAY,
                claimant="yesterday",
                claimed_at=YESTERDAY,
                outcome="posted",
            )
        )
    async with store.write() as conn:
        for table, rows in ((schedules, sched), (rounds, opened), (slot_claims, claims)):
            for n in range(0, len(rows), 2000):  # an empty list inserts nothing
                await conn.execute(table.insert(), rows[n : n + 2000])
    await store.close()


async def start_replica(args: argparse.Namespace, db: str, url: str, index: int, token: str) -> Any:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--replica",
        "--platform",
        args.platform_now,
        "--db",
        db,
        "--url",
        url,
        "--token",
        token,
        "--index",
        str(index),
        "--lease",
        str(args.lease),
        "--interval",
        str(args.interval),
        "--pool",
        str(args.pool),
        "--concurrency",
        str(args.concurrency),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=str(ROOT),
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 120)
    if line.strip() != b"ready":
        raise RuntimeError(f"replica {index} did not start: {line!r}")
    return proc


async def run_slack(args: argparse.Namespace, replicas: int, kill: bool, name: str) -> Result:
    n, per = args.schedules, args.per_workspace
    places = [(f"T{w:04d}", f"C{w:04d}x{c:02d}") for w in range(n // per) for c in range(per)]
    limits = SlackLimits(
        per_workspace_per_minute=SLACK_PER_WORKSPACE_PER_MINUTE,
        latency=args.latency,
        workspace_of=lambda channel: channel.split("x")[0],
    )
    # The shipped manifest's scopes, as an install has them (no chat:write.public).
    manifest = yaml.safe_load((ROOT / "deploy" / "slack-manifest.yaml").read_text())
    standin = SlackApiStandIn(limits=limits, granted=manifest["oauth_config"]["scopes"]["bot"])
    await standin.start()
    refs = [f"1699999999.{i:06d}" for i in range(len(places))]

    def cards() -> list[str]:
        return [
            str(c.params["channel"])
            for c in standin.calls
            if c.method == "chat.postMessage" and c.ok and not c.params.get("thread_ts")
        ]

    def late(channel_cards: list[Any]) -> int:
        return sum("posted late" in str(c.params.get("blocks", "")).lower() for c in channel_cards)

    args.platform_now = "slack"

    def requests() -> int:
        return sum(v for m, v in standin.counts.items() if "." in m) + standin.counts.get("429", 0)

    try:
        return await drive(
            args,
            name,
            places,
            refs,
            "slack",
            standin.url,
            "xoxb-bench",
            replicas,
            kill,
            cards,
            lambda: (
                sum(standin.counts.get(m, 0) for m in standin.counts if "." in m)
                + standin.counts.get("429", 0)
            ),
            lambda: standin.counts.get("429", 0),
            floor=slack_floor(args, len(places)),
            late=lambda: late(
                [c for c in standin.calls if c.method == "chat.postMessage" and c.ok]
            ),
            looked=lambda: standin.counts.get("conversations.history", 0),
        )
    finally:
        if os.environ.get("FANOUT_LOG"):
            print(standin.counts, flush=True)
        await standin.stop()


def slack_floor(args: argparse.Namespace, n: int) -> float:
    """Return the least time Slack's limits allow: two posts a channel a second apart, and the
    workspace's share of its per-minute limit."""
    per_channel = 1.0 + 3 * args.latency  # the reply, a second's wait, the card; three calls
    workspace_posts = 2 * args.per_workspace
    per_workspace = max(0.0, (workspace_posts - SLACK_PER_WORKSPACE_PER_MINUTE) / 5.0)
    return max(per_channel, per_workspace)


async def run_discord(args: argparse.Namespace, name: str) -> Result:
    n, per = args.discord_schedules, args.per_workspace
    guilds = tuple(930_000_000_000_000_000 + g for g in range(n // per))
    limits = DiscordLimits(latency=args.latency)
    async with DiscordStandIn(guild_ids=guilds, channels_per_guild=per, limits=limits) as api:
        places = [(str(g), str(c)) for g in guilds for c in api.channel_ids(g)]
        channel_ids = {c for _, c in places}
        # Each channel's card from yesterday, still open: today's post reveals it first.
        refs = (
            None
            if args.discord_first_day
            else [api.add_message(int(c), {"content": "yesterday"})["id"] for _, c in places]
        )

        def cards() -> list[str]:
            return [
                c.path.split("/")[2]
                for c in api.calls
                if c.method == "POST"
                and c.status < 300
                and c.path.endswith("/messages")
                and c.path.split("/")[2] in channel_ids
                and (c.body or {}).get("components")
            ]

        def requests() -> int:
            return sum(1 for c in api.calls if c.path.startswith("/channels") or c.status == 429)

        def late() -> int:
            return sum(
                "posted late" in str((c.body or {}).get("embeds", "")).lower()
                for c in api.calls
                if c.method == "POST" and c.path.endswith("/messages") and c.status < 300
            )

        args.platform_now = "discord"
        # A first day's card is one request; a later day's post is four: the reveal's edit of
        # yesterday's card, its thread, the explanation in it, and the new card. All count
        # against the global limit, which sets the floor.
        per_post = 1 if refs is None else 4
        floor = per_post * len(places) / limits.global_per_second
        return await drive(
            args,
            name,
            places,
            refs,
            "discord",
            api.api_url,
            api.token,
            1,
            False,
            cards,
            requests,
            lambda: api.rate_limited,
            floor=floor,
            late=late,
            looked=lambda: len(api.find("GET", r"^/channels/\d+/messages$")),
        )


async def drive(
    args: argparse.Namespace,
    name: str,
    places: list[tuple[str, str]],
    refs: list[str] | None,
    platform: str,
    url: str,
    token: str,
    replicas: int,
    kill: bool,
    cards: Callable[[], list[str]],
    requests: Callable[[], int],
    limited: Callable[[], int],
    *,
    floor: float,
    late: Callable[[], int],
    looked: Callable[[], int] = lambda: 0,
) -> Result:
    async with database(args.postgres, "fanout") as db:
        await seed(db, places, refs, platform)
        procs = [await start_replica(args, db, url, i, token) for i in range(replicas)]
        base_requests, base_limited = requests(), limited()
        start = time.monotonic()
        for proc in procs:
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()
        want = len(places)
        killed = False
        deadline = start + args.timeout
        last = 0
        finished_at = start
        while time.monotonic() < deadline:
            posted = cards()
            if len(posted) != last:
                last = len(posted)
                finished_at = time.monotonic()
            if kill and not killed and len(set(posted)) >= want // 2:
                procs[0].send_signal(signal.SIGKILL)
                killed = True
            if len(set(posted)) >= want:
                break
            await asyncio.sleep(0.1)  # the driver polls what reached the stand-in
        seconds = finished_at - start
        # Anything more (a double after the last first card) gets a moment to arrive.
        await asyncio.sleep(2 * args.interval)
        posted = cards()
        for proc in procs:
            if proc.returncode is None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    proc.stdin.write(b"stop\n")
                    await proc.stdin.drain()
        for proc in procs:
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        counts = Counter(posted)
        return Result(
            name=name,
            seconds=seconds,
            cards=len(posted),
            requests=requests() - base_requests,
            limited=limited() - base_limited,
            floor=floor,
            doubles=sum(v - 1 for v in counts.values() if v > 1),
            misses=sum(1 for _, c in places if counts[c] == 0),
            late_notes=late(),
            looked=looked(),
        )


async def idle_tick(args: argparse.Namespace) -> None:
    """Time a tick with every schedule stored and none due, against the former full read."""
    n, per = args.schedules, args.per_workspace
    places = [(f"T{w:04d}", f"C{w:04d}x{c:02d}") for w in range(n // per) for c in range(per)]
    async with database(args.postgres, "idle") as db:
        await seed(db, places, [f"1699999999.{i:06d}" for i in range(n)], "slack")
        store = await open_store(db)
        try:
            # Posted today: every schedule is next due tomorrow.
            async with store.write() as conn:
                await conn.execute(schedules.update().values(due_at=NINE + timedelta(days=1)))
                await conn.execute(sa.text("ANALYZE"))
            engine = QuizEngine(store, load_bank([BANK]), clock=lambda: NINE)

            class Quiet:
                platform = "slack"

            async def tick() -> None:
                await post_due(
                    engine, Quiet(), store, now=NINE + timedelta(minutes=5), claimant="i"
                )  # type: ignore[arg-type]

            async def full_read() -> None:
                await store.schedule_states("slack")

            for label, call in (
                ("idle tick (due schedules only)", tick),
                ("former read (all)", full_read),
            ):
                await call()
                times = []
                for _ in range(args.idle_runs):
                    t0 = time.perf_counter()
                    await call()
                    times.append(time.perf_counter() - t0)
                median = statistics.median(times) * 1000
                print(f"{label:<34} median {median:8.2f} ms over {args.idle_runs} runs", flush=True)
                if label.startswith("idle"):
                    idle = median
                else:
                    print(f"{'idle tick / former read':<34} {idle / median:8.4f}", flush=True)
        finally:
            await store.close()


async def main(args: argparse.Namespace) -> None:
    print(
        f"{args.schedules} Slack schedules, {args.discord_schedules} Discord schedules, "
        f"{args.per_workspace} channels a workspace, latency {args.latency * 1000:.0f} ms, "
        f"lease {args.lease:.0f} s, tick every {args.interval:.1f} s, "
        f"pool {args.pool} connections and "
        f"{args.concurrency or 'the platform default'} posts at once a replica, "
        "PostgreSQL",
        flush=True,
    )
    wanted = set(args.only.split(",")) if args.only else None
    results: dict[str, Result] = {}
    scenarios: list[tuple[str, Callable[[], Any]]] = [
        ("slack-1", lambda: run_slack(args, 1, False, "Slack, 1 replica")),
        ("slack-2", lambda: run_slack(args, 2, False, "Slack, 2 replicas")),
        ("slack-kill", lambda: run_slack(args, 2, True, "Slack, 2 replicas, one killed")),
        ("discord-1", lambda: run_discord(args, "Discord, 1 replica")),
    ]
    for key, scenario in scenarios:
        if wanted is not None and key not in wanted:
            continue
        results[key] = await scenario()
        print(results[key].line(), flush=True)
    if "slack-1" in results and "slack-2" in results:
        speedup = results["slack-1"].seconds / results["slack-2"].seconds
        print(f"{'two replicas against one':<34} {speedup:.2f}x faster", flush=True)
    if "discord-1" in results:
        d = results["discord-1"]
        print(f"{'Discord against its floor':<34} {d.seconds / d.floor:.2f}x", flush=True)
    if wanted is None or "idle" in wanted:
        await idle_tick(args)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", type=int, default=10_000)
    parser.add_argument("--discord-schedules", type=int, default=2_000)
    parser.add_argument("--per-workspace", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds a request")
    parser.add_argument("--lease", type=float, default=20.0, help="seconds")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between ticks")
    parser.add_argument("--pool", type=int, default=15, help="database connections a replica")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=0,
        help="posts at once a replica (default: the platform's, FanOut.for_platform)",
    )
    parser.add_argument(
        "--discord-first-day",
        action="store_true",
        help="Discord channels with no open question (one request a post)",
    )
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--idle-runs", type=int, default=50)
    parser.add_argument("--postgres", default=POSTGRES)
    parser.add_argument(
        "--only", default="", help="comma-separated: slack-1,slack-2,slack-kill,discord-1,idle"
    )
    # A replica's own arguments (the driver starts it).
    parser.add_argument("--replica", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--platform", default="slack", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    if arguments.replica:
        replica_main(arguments)
    else:
        asyncio.run(main(arguments))
