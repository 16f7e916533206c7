"""Button clicks per second and time to ack: ``quizbot slack`` beside a bare Bolt app.

Both run as their own processes in HTTP mode against the Slack stand-in (a third process), and
receive the same signed ``block_actions`` requests in the same run:

- closed loop: ``--clicks`` clicks with ``--in-flight`` requests outstanding at all times;
- open loop: ``--rate`` clicks a second for ``--seconds``, each sent on schedule whatever the
  server's pace, its time to ack counted from when it was due.

The bare app only acks and posts one ephemeral message; quizbot grades, commits the answer, then
tells the clicker. Each app runs twice per phase (bare, quizbot, quizbot, bare). Reported: clicks
acked per second, p50/p99 time to ack, and "all told": clicks per second from the first click
until the last clicker's private reply reached the stand-in, which is where the work after the
ack shows. Afterwards every quizbot answer must be in the database and every clicker of either
app must have been told exactly once. Closed-loop times are mostly queueing, so compare the two
apps there rather than quoting them.

    .venv/bin/python benchmarks/slack_clicks.py [--clicks N] [--in-flight K] [--rate R]
                                                [--seconds S] [--postgres [URL]]
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

SECRET = "benchmark-signing-secret"
TEAM = "T0TEAM"
SELF = Path(__file__).resolve()
LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+/slack/events)")


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


# ---------------------------------------------------------------- processes


@asynccontextmanager
async def process(
    args: list[str], ready: re.Pattern[str], env: dict[str, str]
) -> AsyncIterator[str]:
    """Start a child process, wait for ``ready`` in its output, yield the first group; stop it."""
    proc = await asyncio.create_subprocess_exec(
        *args,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
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
        "user": {"id": user, "team_id": TEAM},
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

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return Result(acks, time.perf_counter() - start, failed, started=start)


async def open_loop(click: Click, rate: float, seconds: float, first: int) -> Result:
    """Send ``rate`` clicks a second for ``seconds``; time each ack from when it was due."""
    n = int(rate * seconds)
    loop = asyncio.get_running_loop()
    start = loop.time()
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

    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return Result(acks, time.perf_counter() - began, failed, started=began)


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
        "response_url": "http://127.0.0.1:9/unused",
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


def row(name: str, r: Result) -> str:
    """Return one line of the results table."""
    p50, p99 = r.quantile(0.50) * 1000, r.quantile(0.99) * 1000
    return (
        f"  {name:<15} {r.throughput:7.0f}/s {p50:9.1f} ms {p99:9.1f} ms {r.told_rate:7.0f}/s"
        f"  ({r.failed} failed)"
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


async def run(args: argparse.Namespace) -> int:
    """Start the stand-in, quizbot and the bare app; compare them; return the exit status."""
    python = sys.executable
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "QUIZBOT_"))}
    async with database(args.postgres) as database_url:
        standin = [python, "-m", "tests.standins.slack_api", "--port", "0"]
        async with process(standin, re.compile(r"(http://\S+/api/)"), env) as api_url:
            bot_env = {
                **env,
                "SLACK_BOT_TOKEN": "xoxb-bench",
                "SLACK_SIGNING_SECRET": SECRET,
                "SLACK_API_URL": api_url,
                "QUIZBOT_DATABASE_URL": database_url,
                "QUIZBOT_ROUND_MINUTES": "120",
            }
            quizbot = [python, "-m", "bot", "slack", "--host", "127.0.0.1", "--port", "0"]
            bare = [python, str(SELF), "--serve-bare", api_url]
            async with (
                process(quizbot, LISTENING, bot_env) as quiz_url,
                process(bare, LISTENING, env) as bare_url,
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session,
            ):
                return await compare(args, session, api_url, quiz_url, bare_url, database_url)


async def compare(
    args: argparse.Namespace,
    session: aiohttp.ClientSession,
    api_url: str,
    quiz_url: str,
    bare_url: str,
    database_url: str,
) -> int:
    ok = True
    results: dict[tuple[str, str], Result] = {}
    phases = [("closed", "CCLOSED"), ("open", "COPEN")]
    n_open = int(args.rate * args.seconds)
    # Warm both up: first requests pay for auth.test, connections and imports.
    warm_round = await open_round(session, quiz_url, api_url, "CWARM")
    for url, prefix in ((quiz_url, "UWQ"), (bare_url, "UWB")):
        await closed_loop(clicker(session, url, warm_round, prefix, "CWARM"), 100, 20)
    # Each app runs twice per phase, bare-quizbot-quizbot-bare, so a drift in the machine's
    # load (other processes) weighs on both alike.
    order = [("bare Bolt app", bare_url), ("quizbot slack", quiz_url)]
    for phase, channel in phases:
        round_id = await open_round(session, quiz_url, api_url, channel)
        expected = args.clicks if phase == "closed" else n_open
        for n, (name, url) in enumerate(order + order[::-1]):
            where = f"{channel}{n}"
            click = clicker(session, url, round_id, f"U{where}", where)
            if phase == "closed":
                result = await closed_loop(click, args.clicks, args.in_flight)
            else:
                result = await open_loop(click, args.rate, args.seconds, 0)
            arrived, once = await told_once(session, api_url, where, expected)
            result.told_wall = arrived - result.started
            print(f"{phase} loop, {name}: every clicker told exactly once: {once}", flush=True)
            ok &= once and result.failed == 0
            previous = results.get((phase, name))
            results[(phase, name)] = result if previous is None else previous.add(result)
            await asyncio.sleep(1)  # let the last background replies drain before the next
        stored = await committed(database_url, round_id)
        print(f"{phase} loop, quizbot slack: answers committed {stored}/{2 * expected}")
        ok &= stored == 2 * expected

    header = f"  {'':<15} {'acked':>9} {'p50 ack':>12} {'p99 ack':>12} {'all told':>9}"
    for phase, title in (
        ("closed", f"closed loop: {args.clicks} clicks, {args.in_flight} in flight"),
        ("open", f"open loop: {args.rate:.0f} clicks/s offered for {args.seconds:.0f} s"),
    ):
        bare, quiz = results[(phase, "bare Bolt app")], results[(phase, "quizbot slack")]
        print(f"\n{title}\n{header}\n{row('bare Bolt app', bare)}\n{row('quizbot slack', quiz)}")
        print(
            f"  quizbot/bare: acked {quiz.throughput / bare.throughput:.2f}x, "
            f"all told {quiz.told_rate / bare.told_rate:.2f}x, "
            f"p50 {quiz.quantile(0.5) / bare.quantile(0.5):.2f}x, "
            f"p99 {quiz.quantile(0.99) / bare.quantile(0.99):.2f}x"
        )
    bare_c, quiz_c = results[("closed", "bare Bolt app")], results[("closed", "quizbot slack")]
    quiz_o = results[("open", "quizbot slack")]
    aims = [
        ("closed-loop throughput >= 0.8x bare", quiz_c.throughput >= 0.8 * bare_c.throughput),
        ("closed-loop p99 <= 1.25x bare", quiz_c.quantile(0.99) <= 1.25 * bare_c.quantile(0.99)),
        (f"open-loop p99 < 100 ms at {args.rate:.0f}/s", quiz_o.quantile(0.99) < 0.100),
    ]
    print()
    for aim, met in aims:
        print(f"aim: {aim}: {'met' if met else 'NOT met'}")
    print(f"checks (answers committed, clickers told once): {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


def main() -> int:
    """Run the comparison (or, with --serve-bare, be the bare app)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=2000, help="closed-loop clicks (2000)")
    parser.add_argument("--in-flight", type=int, default=200, help="closed-loop concurrency (200)")
    parser.add_argument("--rate", type=float, default=200, help="open-loop clicks a second (200)")
    parser.add_argument("--seconds", type=float, default=10, help="open-loop duration (10)")
    parser.add_argument(
        "--postgres",
        nargs="?",
        const="postgresql+asyncpg://postgres@127.0.0.1:5432/test",
        metavar="URL",
        help="run quizbot on a new database on this PostgreSQL server instead of SQLite",
    )
    parser.add_argument("--serve-bare", metavar="API_URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        asyncio.run(serve_bare(args.serve_bare))
        return 0
    return asyncio.run(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
