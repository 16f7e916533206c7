"""Button clicks per second and time to ack: ``quizbot slack`` beside two baseline Bolt apps.

All run as their own processes in HTTP mode against the Slack stand-in (a fourth process), and
receive the same signed ``block_actions`` requests in the same run:

- bare: a Bolt app that only acks and posts one ephemeral message;
- durable: the least a bot that keeps answers must do: it commits one row (aiosqlite on a SQLite
  file; asyncpg, autocommit, with ``--postgres``) before its ack, then posts one ephemeral;
- quizbot, on a one-question bank (the seed question), grading, committing the answer (and, for
  a miss, the review item) before its ack, then telling the clicker.

Phases, each app in turn (bare, durable, quizbot, quizbot, durable, bare):

- closed loop: ``--clicks`` clicks with ``--in-flight`` requests outstanding at all times;
- open loop: ``--rate`` clicks a second for ``--seconds``, each sent on schedule whatever the
  server's pace, its time to ack counted from when it was due;
- two bursts by the same users (``--burst`` clicks each, ``--in-flight`` outstanding): the
  round is closed and the question asked again between them, so in the second burst every user
  who missed already has a review item for it (the repeat-miss case).

Reported: clicks acked per second, p50/p99 time to ack, "all told" (clicks per second from the
first click until the last clicker's private reply reached the stand-in, where the work after
the ack shows) and CPU milliseconds per click of the app's process. Afterwards every quizbot
answer must be in the database and every clicker of every app must have been told exactly once.
Closed-loop times are mostly queueing, so compare the apps there rather than quoting them.
This process, which sends the clicks, pauses its own garbage collector while it times a phase
(``collector_paused``), so that a collection of its heap does not stall the app being timed.

    .venv/bin/python benchmarks/slack_clicks.py [--clicks N] [--in-flight K] [--rate R]
                                                [--seconds S] [--burst B] [--postgres [URL]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
from slack_sdk.signature import SignatureVerifier  # noqa: E402

from benchmarks._common import collector_paused, cpu_seconds  # noqa: E402

SECRET = "benchmark-signing-secret"
TEAM = "T0TEAM"
SELF = Path(__file__).resolve()
LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+/slack/events)")
# A one-question bank: every round asks the seed question again.
ONE_QUESTION = ROOT / "questions" / "01-interconnects" / "01-multinode-interconnect.yaml"
BARE, DURABLE, QUIZBOT = "bare Bolt app", "durable Bolt app", "quizbot slack"


# ---------------------------------------------------------------- the bare app


async def serve_bare(api_url: str) -> None:
    """Serve a Bolt app that acks a click and posts one ephemeral message; print its URL."""
    from slack_bolt.async_app import AsyncAck, AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.adapters.slack.app import start_http, web_client
    from bot.config import Settings

    settings = Settings(
        SLACK_BOT_TOKEN="xoxb-bare", SLACK_SIGNING_SECRET=SECRET, SLACK_API_URL=api_url
    )
    async with aiohttp.ClientSession() as session:
        app = AsyncApp(name="bare", client=web_client(settings, session), signing_secret=SECRET)

        @app.action(re.compile("quiz_answer_[A-E]"))
        async def click(ack: AsyncAck, body: dict, client: AsyncWebClient) -> None:
            await ack()
            user, channel = body["user"]["id"], body["channel"]["id"]
            await client.chat_postEphemeral(channel=channel, user=user, text="Noted.")

        runner, port = await start_http(app, "127.0.0.1", 0)
        print(f"listening on http://127.0.0.1:{port}/slack/events", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()


# ---------------------------------------------------------------- the durable app


async def durable_writer(database_url: str) -> Callable[[str, str], Awaitable[None]]:
    """Return a function that commits one row per click: aiosqlite, or asyncpg in autocommit."""
    ddl = (
        "CREATE TABLE IF NOT EXISTS durable_clicks (user_id TEXT NOT NULL, "
        "value TEXT NOT NULL, clicked_at {} NOT NULL, UNIQUE (user_id, value))"
    )
    if database_url.startswith("sqlite"):
        import aiosqlite

        db = await aiosqlite.connect(database_url.split("///", 1)[1])
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute(ddl.format("TEXT"))
        await db.commit()

        async def save_sqlite(user: str, value: str) -> None:
            await db.execute(
                "INSERT INTO durable_clicks VALUES (?, ?, datetime('now')) ON CONFLICT DO NOTHING",
                (user, value),
            )
            await db.commit()

        return save_sqlite
    import asyncpg

    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    # As many connections as quizbot's pool holds by default (5 + 10 overflow).
    pool = await asyncpg.create_pool(dsn, min_size=15, max_size=15)
    await pool.execute(ddl.format("TIMESTAMPTZ"))

    async def save_postgres(user: str, value: str) -> None:
        await pool.execute(
            "INSERT INTO durable_clicks VALUES ($1, $2, now()) ON CONFLICT DO NOTHING", user, value
        )

    return save_postgres


async def serve_durable(api_url: str, database_url: str) -> None:
    """Serve a Bolt app that commits one row per click before its ack, then posts an ephemeral."""
    from slack_bolt.async_app import AsyncAck, AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.adapters.slack.app import start_http, web_client
    from bot.config import Settings

    settings = Settings(
        SLACK_BOT_TOKEN="xoxb-durable", SLACK_SIGNING_SECRET=SECRET, SLACK_API_URL=api_url
    )
    save = await durable_writer(database_url)
    async with aiohttp.ClientSession() as session:
        app = AsyncApp(name="durable", client=web_client(settings, session), signing_secret=SECRET)

        @app.action(re.compile("quiz_answer_[A-E]"))
        async def click(ack: AsyncAck, body: dict, client: AsyncWebClient) -> None:
            user, channel = body["user"]["id"], body["channel"]["id"]
            await save(user, body["actions"][0]["value"])
            await ack()
            await client.chat_postEphemeral(channel=channel, user=user, text="Noted.")

        runner, port = await start_http(app, "127.0.0.1", 0)
        print(f"listening on http://127.0.0.1:{port}/slack/events", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()


# ---------------------------------------------------------------- processes


@asynccontextmanager
async def process(
    args: list[str], ready: re.Pattern[str], env: dict[str, str], pids: list[int] | None = None
) -> AsyncIterator[str]:
    """Start a child process, wait for ``ready`` in its output, yield the first group; stop it.

    The child's pid is appended to ``pids`` when given.
    """
    proc = await asyncio.create_subprocess_exec(
        *args,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    if pids is not None:
        pids.append(proc.pid)
    found: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    tail: list[str] = []

    async def drain() -> None:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip()
            tail[:] = [*tail[-30:], line]
            match = ready.search(line)
            if match and not found.done():
                found.set_result(match.group(1))
        if not found.done():
            found.set_exception(RuntimeError(f"{args[2:]} exited:\n" + "\n".join(tail)))

    reader = asyncio.create_task(drain())
    try:
        yield await asyncio.wait_for(found, 60)
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await asyncio.wait_for(reader, 10)


# ---------------------------------------------------------------- load


def signed(body: str) -> dict[str, str]:
    """Return the headers of a request body signed like Slack signs it."""
    ts = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)
    return {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature,
    }


def click_body(round_id: int, key: str, user: str, channel: str) -> str:
    """Return the form body of a click on a card's button."""
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "bench"},
        # As Slack sends it: the clicker's id and name (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload).
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
        "api_app_id": "A0APP",
        "container": {"type": "message", "message_ts": "1700000000.000001", "channel_id": channel},
        "channel": {"id": channel, "name": "bench"},
        "message": {"type": "message", "ts": "1700000000.000001"},
        "response_url": "http://127.0.0.1:9/unused",
        "trigger_id": "t",
        "actions": [
            {
                "type": "button",
                "action_id": f"quiz_answer_{key}",
                "block_id": f"quiz_round_{round_id}_choices",
                "value": f"{round_id}:{key}",
                "action_ts": "1700000002.000000",
            }
        ],
    }
    return urllib.parse.urlencode({"payload": json.dumps(payload)})


@dataclass
class Result:
    """Times to ack (seconds) of one app in one phase, and how long until all were told."""

    acks: list[float]
    wall: float
    failed: int
    started: float = 0.0
    told_wall: float = 0.0
    cpu: float = 0.0

    @property
    def cpu_ms(self) -> float:
        """Return the app's CPU milliseconds per click."""
        return 1000 * self.cpu / len(self.acks)

    @property
    def throughput(self) -> float:
        """Return clicks acked per second."""
        return len(self.acks) / self.wall

    @property
    def told_rate(self) -> float:
        """Return clicks per second from the first click until the last clicker was told."""
        return len(self.acks) / self.told_wall

    def quantile(self, q: float) -> float:
        """Return a quantile of the times to ack."""
        return statistics.quantiles(self.acks, n=1000, method="inclusive")[int(q * 1000) - 1]

    def add(self, other: Result) -> Result:
        """Return this pass and another together."""
        return Result(
            self.acks + other.acks,
            self.wall + other.wall,
            self.failed + other.failed,
            self.started,
            self.told_wall + other.told_wall,
            self.cpu + other.cpu,
        )


Click = Callable[[int], Awaitable[tuple[float, bool]]]


def clicker(
    session: aiohttp.ClientSession, url: str, round_id: int, prefix: str, channel: str
) -> Click:
    """Return a function that sends click number i, by user ``{prefix}{i}``, and times it."""
    keys = "ABCD"

    async def click(i: int) -> tuple[float, bool]:
        body = click_body(round_id, keys[i % len(keys)], f"{prefix}{i:06d}", channel)
        start = time.perf_counter()
        async with session.post(url, data=body.encode(), headers=signed(body)) as resp:
            await resp.read()
            return time.perf_counter() - start, resp.status == 200

    return click


async def closed_loop(click: Click, n: int, in_flight: int) -> Result:
    """Send n clicks, keeping ``in_flight`` outstanding; return the times to ack."""
    numbers = iter(range(n))
    acks: list[float] = []
    failed = 0

    async def worker() -> None:
        nonlocal failed
        for i in numbers:
            took, ok = await click(i)
            acks.append(took)
            failed += not ok

    with collector_paused():
        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        wall = time.perf_counter() - start
    return Result(acks, wall, failed, started=start)


async def open_loop(click: Click, rate: float, seconds: float, first: int) -> Result:
    """Send ``rate`` clicks a second for ``seconds``; time each ack from when it was due."""
    n = int(rate * seconds)
    loop = asyncio.get_running_loop()
    acks: list[float] = []
    failed = 0

    async def one(i: int) -> None:
        nonlocal failed
        due = start + i / rate
        await asyncio.sleep(max(0.0, due - loop.time()))
        lag = loop.time() - due
        took, ok = await click(first + i)
        acks.append(took + lag)
        failed += not ok

    with collector_paused():
        start = loop.time()
        began = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - began
    return Result(acks, wall, failed, started=began)


# ---------------------------------------------------------------- checks


async def recorded(session: aiohttp.ClientSession, api_url: str, method: str) -> list[dict]:
    """Return the parameters of every call of ``method`` the stand-in recorded."""
    base = api_url.removesuffix("api/")
    async with session.get(f"{base}_standin/calls", params={"method": method}) as resp:
        calls: list[dict] = (await resp.json())["calls"]
        return calls


async def told_once(
    session: aiohttp.ClientSession, api_url: str, channel: str, expected: int
) -> tuple[float, bool]:
    """Wait (up to 60 s) for ``expected`` ephemeral messages in a channel.

    Return when the last one arrived (``time.perf_counter``) and whether every user was told
    exactly once.
    """
    deadline = time.monotonic() + 60
    while True:
        calls = await recorded(session, api_url, "chat.postEphemeral")
        users = Counter(c["user"] for c in calls if c["channel"] == channel)
        if sum(users.values()) >= expected or time.monotonic() > deadline:
            arrived = time.perf_counter()
            await asyncio.sleep(0.5)  # anything told twice would show up now
            calls = await recorded(session, api_url, "chat.postEphemeral")
            users = Counter(c["user"] for c in calls if c["channel"] == channel)
            return arrived, len(users) == expected and set(users.values()) == {1}
        await asyncio.sleep(0.05)


async def committed(database_url: str, round_id: int) -> int:
    """Return how many answers the round has in quizbot's database."""
    from bot.storage import open_store

    store = await open_store(database_url, migrate=False)
    try:
        return await store.count_answers(round_id)
    finally:
        await store.close()


async def open_round(
    session: aiohttp.ClientSession, bot_url: str, api_url: str, channel: str
) -> int:
    """Post a question with /quiz in a channel and return its round id, read off the card."""
    before = len(await recorded(session, api_url, "chat.postMessage"))
    form = {
        "team_id": TEAM,
        "channel_id": channel,
        "user_id": "UBENCH",
        "command": "/quiz",
        "text": "next",
        "response_url": api_url.removesuffix("api/") + "respond/bench",
        "trigger_id": "t",
    }
    body = urllib.parse.urlencode(form)
    async with session.post(bot_url, data=body.encode(), headers=signed(body)) as resp:
        assert resp.status == 200, await resp.text()
    for _ in range(200):
        posts = await recorded(session, api_url, "chat.postMessage")
        if len(posts) > before:
            (actions,) = [b for b in posts[before]["blocks"] if b["type"] == "actions"]
            return int(actions["block_id"].split("_")[2])
        await asyncio.sleep(0.05)
    raise RuntimeError("the question card never arrived")


# ---------------------------------------------------------------- the run


async def close_round(
    session: aiohttp.ClientSession, bot_url: str, api_url: str, channel: str
) -> None:
    """Close the open round in a channel with /quiz close; return once its reveal is posted.

    The reveal ends with the question's chart, whose drawing would otherwise land in the next
    burst's CPU time.
    """

    async def replies() -> int:
        return len(await recorded(session, api_url, "files.completeUploadExternal"))

    before = await replies()
    form = {
        "team_id": TEAM,
        "channel_id": channel,
        "user_id": "UBENCH",
        "command": "/quiz",
        "text": "close",
        # The confirmation comes through it before the reveal is posted.
        "response_url": api_url.removesuffix("api/") + "respond/bench",
        "trigger_id": "t",
    }
    body = urllib.parse.urlencode(form)
    async with session.post(bot_url, data=body.encode(), headers=signed(body)) as resp:
        assert resp.status == 200, await resp.text()
    for _ in range(400):
        if await replies() > before:
            return
        await asyncio.sleep(0.05)
    raise RuntimeError("the reveal never arrived")


def row(name: str, r: Result) -> str:
    """Return one line of the results table."""
    p50, p99 = r.quantile(0.50) * 1000, r.quantile(0.99) * 1000
    return (
        f"  {name:<17} {r.throughput:7.0f}/s {p50:9.1f} ms {p99:9.1f} ms {r.told_rate:7.0f}/s"
        f" {r.cpu_ms:7.2f} ms  ({r.failed} failed)"
    )


def ratios(quiz: Result, base: Result, name: str) -> str:
    """Return quizbot's figures as ratios to a baseline's."""
    return (
        f"  quizbot/{name}: acked {quiz.throughput / base.throughput:.2f}x, "
        f"all told {quiz.told_rate / base.told_rate:.2f}x, "
        f"p50 {quiz.quantile(0.5) / base.quantile(0.5):.2f}x, "
        f"p99 {quiz.quantile(0.99) / base.quantile(0.99):.2f}x, "
        f"CPU {quiz.cpu_ms / base.cpu_ms:.2f}x"
    )


@asynccontextmanager
async def database(postgres: str | None) -> AsyncIterator[str]:
    """Yield the URL of an empty database: a temporary SQLite file, or a new PostgreSQL one."""
    if postgres is None:
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        return
    import asyncpg

    name = f"quizbot_bench_{os.getpid()}"
    admin = postgres.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(admin)
    await conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{postgres.rpartition('/')[0]}/{name}"
    finally:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.close()


@dataclass
class Apps:
    """The three apps under test: name -> (URL, pid)."""

    urls: dict[str, str]
    pids: dict[str, int]


async def run(args: argparse.Namespace) -> int:
    """Start the stand-in, quizbot and the two baselines; compare them; return the status."""
    python = sys.executable
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "QUIZBOT_"))}
    async with database(args.postgres) as database_url:
        # The durable baseline keeps its row in a file of its own, or a table of quizbot's
        # PostgreSQL database.
        durable_url = database_url.replace("bench.db", "durable.db")
        standin = [python, "-m", "tests.standins.slack_api", "--port", "0"]
        async with process(standin, re.compile(r"(http://\S+/api/)"), env) as api_url:
            bot_env = {
                **env,
                "SLACK_BOT_TOKEN": "xoxb-bench",
                "SLACK_SIGNING_SECRET": SECRET,
                "SLACK_API_URL": api_url,
                "QUIZBOT_DATABASE_URL": database_url,
                "QUIZBOT_ROUND_MINUTES": "120",
                "QUIZBOT_QUESTIONS": str(ONE_QUESTION),
            }
            quizbot = [python, "-m", "bot", "slack", "--host", "127.0.0.1", "--port", "0"]
            bare = [python, str(SELF), "--serve-bare", api_url]
            durable = [python, str(SELF), "--serve-durable", api_url, "--database", durable_url]
            pids: list[int] = []
            async with (
                process(bare, LISTENING, env, pids) as bare_url,
                process(durable, LISTENING, env, pids) as durable_url_served,
                process(quizbot, LISTENING, bot_env, pids) as quiz_url,
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session,
            ):
                apps = Apps(
                    {BARE: bare_url, DURABLE: durable_url_served, QUIZBOT: quiz_url},
                    dict(zip((BARE, DURABLE, QUIZBOT), pids, strict=True)),
                )
                return await compare(args, session, api_url, apps, database_url)


async def compare(
    args: argparse.Namespace,
    session: aiohttp.ClientSession,
    api_url: str,
    apps: Apps,
    database_url: str,
) -> int:
    ok = True
    results: dict[tuple[str, str], Result] = {}
    n_open = int(args.rate * args.seconds)
    quiz_url = apps.urls[QUIZBOT]
    # Warm every app up: first requests pay for auth.test, connections and imports.
    warm_round = await open_round(session, quiz_url, api_url, "CWARM")
    for name, url in apps.urls.items():
        await closed_loop(clicker(session, url, warm_round, f"UW{name[:3]}", "CWARM"), 100, 20)
    # Each app runs twice per phase, in mirrored order, so a drift in the machine's load
    # (other processes) weighs on all alike.
    order = [BARE, DURABLE, QUIZBOT]
    order = order + order[::-1]

    async def measured(
        phase: str, name: str, round_id: int, users: str, where: str, expected: int
    ) -> Result:
        url, pid = apps.urls[name], apps.pids[name]
        cpu = cpu_seconds(pid)
        click = clicker(session, url, round_id, users, where)
        if phase == "open":
            result = await open_loop(click, args.rate, args.seconds, 0)
        else:
            n = args.clicks if phase == "closed" else args.burst
            result = await closed_loop(click, n, args.in_flight)
        arrived, once = await told_once(session, api_url, where, expected)
        result.told_wall = arrived - result.started
        result.cpu = cpu_seconds(pid) - cpu
        print(f"{phase}, {name}: every clicker told exactly once: {once}", flush=True)
        nonlocal ok
        ok &= once and result.failed == 0
        return result

    def keep(key: tuple[str, str], result: Result) -> None:
        previous = results.get(key)
        results[key] = result if previous is None else previous.add(result)

    for phase, channel in (("closed", "CCLOSED"), ("open", "COPEN")):
        round_id = await open_round(session, quiz_url, api_url, channel)
        expected = args.clicks if phase == "closed" else n_open
        for n, name in enumerate(order):
            where = f"{channel}{n}"
            keep((phase, name), await measured(phase, name, round_id, f"U{where}", where, expected))
            await asyncio.sleep(1)  # let the last background replies drain before the next
        stored = await committed(database_url, round_id)
        print(f"{phase} loop, quizbot slack: answers committed {stored}/{2 * expected}")
        ok &= stored == 2 * expected

    # Two bursts by the same users; quizbot asks its one question again in between.
    for n, name in enumerate(order):
        channel, users = f"CBURST{n}", f"UB{n}-"
        rounds = []
        for burst in (1, 2):
            round_id = 1000 * burst + n
            if name == QUIZBOT:
                if burst == 2:
                    await close_round(session, quiz_url, api_url, channel)
                round_id = await open_round(session, quiz_url, api_url, channel)
                rounds.append(round_id)
            result = await measured(
                f"burst {burst}", name, round_id, users, f"{channel}-{burst}", args.burst
            )
            keep((f"burst {burst}", name), result)
            await asyncio.sleep(1)
        for round_id in rounds:
            stored = await committed(database_url, round_id)
            print(f"burst, quizbot slack: answers committed {stored}/{args.burst}")
            ok &= stored == args.burst

    header = (
        f"  {'':<17} {'acked':>9} {'p50 ack':>12} {'p99 ack':>12} {'all told':>9} {'CPU/click':>10}"
    )
    titles = {
        "closed": f"closed loop: {args.clicks} clicks, {args.in_flight} in flight",
        "open": f"open loop: {args.rate:.0f} clicks/s offered for {args.seconds:.0f} s",
        "burst 1": f"burst 1: {args.burst} users, {args.in_flight} in flight (first answers)",
        "burst 2": "burst 2: the same users again on the same question (repeat misses)",
    }
    where = "PostgreSQL" if args.postgres else "SQLite"
    print(f"\nquizbot slack on {where}; each figure from two passes per app")
    for phase, title in titles.items():
        print(f"\n{title}\n{header}")
        for name in (BARE, DURABLE, QUIZBOT):
            print(row(name, results[(phase, name)]))
        quiz = results[(phase, QUIZBOT)]
        print(ratios(quiz, results[(phase, BARE)], "bare"))
        print(ratios(quiz, results[(phase, DURABLE)], "durable"))
    q1, q2 = results[("burst 1", QUIZBOT)], results[("burst 2", QUIZBOT)]
    print(
        f"\nquizbot, burst 2 vs burst 1: acked {q2.throughput / q1.throughput:.2f}x, "
        f"CPU per click {q2.cpu_ms / q1.cpu_ms:.2f}x"
    )
    quiz_o = results[("open", QUIZBOT)]
    floor = 0.6 if args.postgres else 0.8
    aims = [
        (
            f"open-loop p99 < 100 ms at {args.rate:.0f}/s, every click acked",
            quiz_o.quantile(0.99) < 0.100 and quiz_o.failed == 0,
        )
    ]
    for burst in ("burst 1", "burst 2"):
        quiz, durable = results[(burst, QUIZBOT)], results[(burst, DURABLE)]
        aims.append(
            (
                f"{burst} >= {floor}x the durable app",
                quiz.throughput >= floor * durable.throughput,
            )
        )
        if not args.postgres:
            aims.append(
                (
                    f"{burst} p99 <= 1.25x the durable app's",
                    quiz.quantile(0.99) <= 1.25 * durable.quantile(0.99),
                )
            )
    print()
    for aim, met in aims:
        print(f"aim: {aim}: {'met' if met else 'NOT met'}")
    print(f"checks (answers committed, clickers told once): {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


def main() -> int:
    """Run the comparison (or, with --serve-bare / --serve-durable, be that app)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=2000, help="closed-loop clicks (2000)")
    parser.add_argument("--in-flight", type=int, default=200, help="closed-loop concurrency (200)")
    parser.add_argument("--rate", type=float, default=200, help="open-loop clicks a second (200)")
    parser.add_argument("--seconds", type=float, default=10, help="open-loop duration (10)")
    parser.add_argument("--burst", type=int, default=1000, help="clicks in each burst (1000)")
    parser.add_argument(
        "--postgres",
        nargs="?",
        const="postgresql+asyncpg://postgres@127.0.0.1:5432/test",
        metavar="URL",
        help="run quizbot (and the durable app) on a new database on this PostgreSQL server",
    )
    parser.add_argument("--serve-bare", metavar="API_URL", help=argparse.SUPPRESS)
    parser.add_argument("--serve-durable", metavar="API_URL", help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        asyncio.run(serve_bare(args.serve_bare))
        return 0
    if args.serve_durable:
        asyncio.run(serve_durable(args.serve_durable, args.database))
        return 0
    return asyncio.run(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
