"""Drive ``quizbot slack`` as a process with many signed clicks, and account for every one.

Shared by the reliability tests (a few hundred users) and ``benchmarks/slack_load.py`` (a
thousand and more): start and SIGKILL the process, send one click per user while timing each
ack, then compare what the database holds, what the Slack stand-in was asked to post, and what
each user was told.
"""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import sqlalchemy as sa

from bot.engine.engine import rank_rows
from bot.engine.model import Question, Round
from bot.storage import SqlStore, open_store
from bot.storage._schema import metadata
from tests.adapters.slack.conftest import CHANNEL, SECRET, TEAM, Sender, round_of
from tests.adapters.slack.test_slack_process import LISTENING, bot_env
from tests.reliability.standin import Record

ROOT = Path(__file__).resolve().parents[2]
BOARD_LINE = re.compile(r"^(\d+)\. <@([A-Z0-9]+)>: (\d+) pts, (\d+)/(\d+) right$")
FEEDBACK = re.compile(r"\*(?:Right!|Not this time\.)\* You chose \*([A-E]) ·")
REVEAL_COUNT = re.compile(r"(\d+) (?:people|person) answered")
APOLOGY = "Sorry, something went wrong on our side"


def quizbot_env(api_url: str, database_url: str, questions: Path, **extra: str) -> dict[str, str]:
    """Return the environment of a ``quizbot slack`` on the stand-in, signed with SECRET."""
    return bot_env(
        SLACK_BOT_TOKEN="xoxb-reliability",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=api_url,
        QUIZBOT_DATABASE_URL=database_url,
        QUIZBOT_QUESTIONS=str(questions),
        **extra,
    )


class BotProcess:
    """``python -m bot slack`` in HTTP mode on a free port, which can be stopped or killed."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.lines: list[str] = []
        self.url = ""
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        """Return the process id."""
        assert self.proc is not None
        return self.proc.pid

    @property
    def base(self) -> str:
        """Return the public server's root URL (for /healthz)."""
        return self.url.removesuffix("/slack/events")

    @property
    def ops(self) -> str:
        """Return the operations port's root URL (for /metrics and /readyz)."""
        return f"http://127.0.0.1:{self.env['QUIZBOT_OPS_PORT']}"

    async def start(self, within: float = 60.0) -> str:
        """Start the process and return its /slack/events URL once it listens."""
        if "QUIZBOT_OPS_PORT" not in self.env:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.env = {**self.env, "QUIZBOT_OPS_PORT": str(s.getsockname()[1])}
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "slack",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            cwd=ROOT,
            env=self.env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        found: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        proc = self.proc

        async def drain() -> None:
            # Keep reading, so the child never blocks on a full pipe.
            assert proc.stderr is not None
            async for raw in proc.stderr:
                line = raw.decode(errors="replace").rstrip()
                self.lines.append(line)
                match = LISTENING.search(line)
                if match and not found.done():
                    found.set_result(match.group(1))
            if not found.done():
                found.set_exception(RuntimeError("quizbot slack exited:\n" + self.log_tail()))

        self._reader = asyncio.create_task(drain())
        try:
            self.url = await asyncio.wait_for(found, within)
        except BaseException:
            await self.kill()
            raise
        return self.url

    def log_tail(self, n: int = 40) -> str:
        """Return the last lines the process logged."""
        return "\n".join(self.lines[-n:])

    async def kill(self) -> None:
        """SIGKILL the process: no handler, no drain, no clean-up runs."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
        await self._reap()

    async def stop(self, within: float = 30.0) -> int:
        """SIGTERM the process and return its exit status (SIGKILL after ``within`` seconds)."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), within)
            except TimeoutError:
                self.proc.send_signal(signal.SIGKILL)
        await self._reap()
        assert self.proc is not None
        return self.proc.returncode if self.proc.returncode is not None else -1

    async def _reap(self) -> None:
        if self.proc is not None:
            await asyncio.wait_for(self.proc.wait(), 30)
        if self._reader is not None:
            await asyncio.wait_for(self._reader, 10)
            self._reader = None

    def tracebacks(self) -> list[str]:
        """Return the log lines that start a traceback."""
        return [line for line in self.lines if line.startswith("Traceback")]


# ---------------------------------------------------------------- load


@dataclass
class ClickResult:
    """One user's click: HTTP status (None when the request failed) and time to ack."""

    user: str
    key: str
    status: int | None = None
    took: float | None = None
    error: str | None = None
    ack_text: str = ""

    @property
    def acked(self) -> bool:
        """Return whether the bot answered 200, that is acknowledged the click."""
        return self.status == 200


def plan_users(n: int, keys: str, *, prefix: str = "U") -> list[tuple[str, str]]:
    """Return n (user id, choice key) pairs, the keys cycling over the question's choices."""
    return [(f"{prefix}{i:06d}", keys[i % len(keys)]) for i in range(n)]


async def drive(
    sender: Sender,
    round_id: int,
    plan: Sequence[tuple[str, str]],
    *,
    in_flight: int,
    channel: str = CHANNEL,
    message_ts: str = "1700000000.000001",
    stop: asyncio.Event | None = None,
    on_ack: Callable[[ClickResult], None] | None = None,
) -> tuple[list[ClickResult], list[tuple[str, str]]]:
    """Click once per planned user, ``in_flight`` clicks outstanding at a time.

    Stops taking new users once ``stop`` is set; returns the results and the users not sent.
    """
    queue = list(reversed(plan))
    results: list[ClickResult] = []

    async def one(user: str, key: str) -> None:
        result = ClickResult(user, key)
        begin = time.perf_counter()
        try:
            reply = await sender.click(
                round_id, key, user=user, channel=channel, message_ts=message_ts
            )
            result.status, result.ack_text = reply.status, reply.text
        except (aiohttp.ClientError, TimeoutError) as exc:
            result.error = type(exc).__name__
        result.took = time.perf_counter() - begin
        results.append(result)
        if result.acked and on_ack is not None:
            on_ack(result)

    async def worker() -> None:
        while queue and not (stop is not None and stop.is_set()):
            await one(*queue.pop())

    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return results, list(reversed(queue))


@dataclass(frozen=True)
class Latency:
    """Throughput and times to ack of one batch of clicks."""

    sent: int
    acked: int
    wall: float
    p50: float
    p99: float
    max: float

    @classmethod
    def of(cls, results: Sequence[ClickResult], wall: float) -> Latency:
        """Summarise the acked clicks of a batch."""
        times = sorted(r.took for r in results if r.acked and r.took is not None)
        if not times:
            return cls(len(results), 0, wall, 0.0, 0.0, 0.0)
        cuts = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else times
        p50 = statistics.median(times)
        return cls(len(results), len(times), wall, p50, cuts[-1], times[-1])

    @property
    def throughput(self) -> float:
        """Return clicks acknowledged per second."""
        return self.acked / self.wall if self.wall > 0 else 0.0

    def line(self, name: str) -> str:
        """Return one row of a results table."""
        return (
            f"  {name:<16} {self.acked:>5}/{self.sent:<5} {self.throughput:8.0f}/s "
            f"{self.p50 * 1000:8.1f} ms {self.p99 * 1000:8.1f} ms {self.max * 1000:8.1f} ms"
        )


# ---------------------------------------------------------------- reading back


async def open_card(
    sender: Sender,
    read: Callable[[], Any],
    *,
    channel: str = CHANNEL,
    tag: str | None = None,
    within: float = 30.0,
) -> int:
    """Post a question with ``/quiz next`` and return its round id, read off the card posted.

    ``read`` returns (or awaits to) the stand-in's Record. When the platform refuses the post
    (a fault), the bot frees the channel; the command is sent again, as a person would.
    """
    deadline = time.monotonic() + within
    text = f"next {tag}" if tag else "next"
    while time.monotonic() < deadline:
        seen = await _read(read)
        before = len(seen.of("chat.postMessage"))
        said = len(seen.responses_to(f"open-{channel}"))
        reply = await sender.command(text, channel=channel, respond_to=f"open-{channel}")
        if reply.status != 200:
            raise AssertionError(f"/quiz next was answered {reply.status}: {reply.text}")
        for _ in range(int(8 / 0.05)):
            record = await _read(read)
            cards = [
                p
                for p in record.of("chat.postMessage")[before:]
                if p.get("channel") == channel and "thread_ts" not in p
            ]
            if cards:
                return round_of(cards[0]["blocks"])
            if _refused(record.responses_to(f"open-{channel}")[said:]):
                break  # the bot said the post failed; ask again
            await asyncio.sleep(0.05)
    raise AssertionError(f"no question card reached {channel} within {within} s")


def _refused(answers: list[dict[str, Any]]) -> bool:
    return any(APOLOGY in str(a.get("text", "")) for a in answers)


async def _read(read: Callable[[], Any]) -> Record:
    value = read()
    if asyncio.iscoroutine(value):
        value = await value
    assert isinstance(value, Record)
    return value


# What the platform calls people, channels and workspaces, learnt from any request that names
# them (a refused one too) and written in the background: a cache of the platform's own data,
# not something a request changes.
CACHES = frozenset({"display_names"})


async def table_rows(store: SqlStore) -> dict[str, list[str]]:
    """Return every row of every table, to compare before and after something."""
    tables: dict[str, list[str]] = {}
    async with store.read() as conn:
        for table in metadata.sorted_tables:
            if table.name in CACHES:
                continue
            rows = (await conn.execute(sa.select(table))).all()
            tables[table.name] = sorted(map(repr, rows))
    return tables


async def round_state(database_url: str, round_id: int) -> tuple[Round, list[Any]]:
    """Return the round and its answer rows, read from the database."""
    store = await open_store(database_url, migrate=False)
    try:
        rnd = await store.get_round(round_id)
        assert rnd is not None, f"round {round_id} is not in the database"
        return rnd, await store.round_answers(round_id)
    finally:
        await store.close()


async def card_ts(database_url: str, round_id: int, within: float = 10.0) -> str:
    """Return the message ts of a round's card, once the bot has stored it."""
    deadline = time.monotonic() + within
    while True:
        rnd, _ = await round_state(database_url, round_id)
        if rnd.message_ref is not None:
            return rnd.message_ref
        if time.monotonic() > deadline:
            raise AssertionError(f"round {round_id} never got its message ts")
        await asyncio.sleep(0.05)


async def wait_closed(database_url: str, round_id: int, within: float) -> Round:
    """Wait until the round is closed in the database and return it."""
    deadline = time.monotonic() + within
    while True:
        rnd, _ = await round_state(database_url, round_id)
        if rnd.closed_at is not None or time.monotonic() > deadline:
            return rnd
        await asyncio.sleep(0.2)


def told(record: Record, channel: str) -> dict[str, list[str]]:
    """Return what each user was told privately in a channel: ephemeral texts and replies."""
    out: dict[str, list[str]] = {}
    for params in record.of("chat.postEphemeral"):
        if params.get("channel") == channel:
            out.setdefault(str(params["user"]), []).append(str(params.get("text", "")))
    for name, body in record.responses:
        if name.startswith("click-"):
            out.setdefault(name.removeprefix("click-"), []).append(str(body.get("text", "")))
    return out


async def wait_told(
    read: Callable[[], Any], channel: str, users: set[str], within: float
) -> Record:
    """Wait until every one of ``users`` was told something and return the record.

    A double may still be on its way: a check for doubles waits for ``quiet`` first.
    """
    deadline = time.monotonic() + within
    while True:
        record = await _read(read)
        if users <= set(told(record, channel)) or time.monotonic() > deadline:
            return record
        await asyncio.sleep(0.1)


async def quiet(
    session: aiohttp.ClientSession, bot: BotProcess, standin: Any, within: float = 60.0
) -> None:
    """Wait until nothing more can arrive: no handler in flight in the bot, no call at the API.

    A double (a second reply, a second reveal) could only come from work still under way; once
    the bot's handlers are done and the stand-in answers nothing, the record is final.
    """
    async with asyncio.timeout(within):
        while True:
            if await handlers_in_flight(session, bot) == 0 and standin.in_flight == 0:
                return
            await asyncio.sleep(0.05)


async def handlers_in_flight(session: aiohttp.ClientSession, bot: BotProcess) -> float:
    """Return how many handlers the bot is running now (its in-flight gauge)."""
    async with session.get(f"{bot.ops}/metrics") as resp:
        metrics = await resp.text()
    return next(
        (
            float(line.split()[-1])
            for line in metrics.splitlines()
            if line.startswith("quizbot_handlers_in_flight ")
        ),
        0.0,
    )


async def passes_done(session: aiohttp.ClientSession, bot: BotProcess, loop: str) -> float:
    """Return how many passes the bot's ``timers`` or ``scheduler`` loop has finished."""
    async with session.get(f"{bot.ops}/metrics") as resp:
        metrics = await resp.text()
    prefix = f'quizbot_loop_passes_total{{loop="{loop}"}} '
    return next(
        (float(line.split()[-1]) for line in metrics.splitlines() if line.startswith(prefix)),
        0.0,
    )


async def loop_passes(
    session: aiohttp.ClientSession, bot: BotProcess, loop: str, count: int, within: float = 90.0
) -> None:
    """Wait until the bot's ``timers`` or ``scheduler`` loop finished ``count`` passes more.

    Each pass was a chance for a double (a second reveal, a second daily post) to go out; a pass
    under way when this is called counts for nothing, so ``count + 1`` must end.
    """
    target = await passes_done(session, bot, loop) + count + 1
    async with asyncio.timeout(within):
        while True:
            if await passes_done(session, bot, loop) >= target:
                return
            await asyncio.sleep(0.05)


# ---------------------------------------------------------------- accounting


@dataclass
class Accounting:
    """What happened to every click of one round, and what is wrong (empty when all holds)."""

    users: int = 0
    acked: int = 0
    stored: int = 0
    duplicates: int = 0
    told_feedback: int = 0
    told_apology: int = 0
    told_twice: int = 0
    acked_not_stored: int = 0
    reveal_edits: int = 0
    thread_replies: int = 0
    closed_late_s: float | None = None
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        """Return the figures as one line."""
        late = (
            "" if self.closed_late_s is None else f", closed {self.closed_late_s:.1f} s after due"
        )
        return (
            f"users {self.users}, acked {self.acked}, rows {self.stored}, duplicates "
            f"{self.duplicates}, told once {self.told_feedback} (+{self.told_apology} apologies),"
            f" told twice {self.told_twice}, acked but not stored {self.acked_not_stored}, reveal"
            f" edits {self.reveal_edits}, thread replies {self.thread_replies}{late}"
        )


async def account(
    *,
    database_url: str,
    record: Record,
    round_id: int,
    question: Question,
    results: Sequence[ClickResult],
    channel: str = CHANNEL,
    require_all: bool = True,
    expect_closed: bool = True,
) -> Accounting:
    """Check one round against the clicks sent to it.

    Always: no duplicate rows, each row is the choice its user clicked, graded right, from a user
    who clicked; each user who was told feedback has its row and was told exactly once, the
    choice they clicked; an acknowledged click is stored. With ``require_all``, every user was
    acked and told. With ``expect_closed``, the card was edited into its reveal once and the
    full explanation went into its thread once.
    """
    rnd, rows = await round_state(database_url, round_id)
    acc = Accounting(users=len({r.user for r in results}))
    clicked = {r.user: r.key for r in results}
    acked = {r.user for r in results if r.acked}
    acc.acked = len(acked)
    acc.stored = len(rows)
    per_user = Counter(row.user for row in rows)
    acc.duplicates = sum(n - 1 for n in per_user.values())
    problems = acc.problems
    if acc.duplicates:
        problems.append(f"{acc.duplicates} duplicate answer rows")
    points = sum(row.points for row in rows)
    if points != sum_points(question, results, set(per_user)):
        problems.append(f"rows carry {points} points, the clicks earn a different total")
    for row in rows:
        if row.user not in clicked:
            problems.append(f"row for {row.user}, who never clicked")
        elif row.choice != clicked[row.user]:
            problems.append(f"{row.user} clicked {clicked[row.user]}, stored {row.choice}")
        if row.correct != (row.choice == question.answer):
            problems.append(f"{row.user}'s answer is graded wrongly")
    stored = set(per_user)
    missing_acked = acked - stored
    acc.acked_not_stored = len(missing_acked)
    if missing_acked:
        problems.append(
            f"{len(missing_acked)} acknowledged clicks not stored, e.g. {sorted(missing_acked)[:3]}"
        )
    heard = told(record, channel)
    for user, texts in heard.items():
        feedback = [t for t in texts if FEEDBACK.search(t)]
        apologies = [t for t in texts if APOLOGY in t]
        if len(texts) > 1:
            acc.told_twice += 1
            problems.append(f"{user} was told {len(texts)} times: {texts}")
        if feedback:
            acc.told_feedback += 1
            match = FEEDBACK.search(feedback[0])
            assert match is not None
            if user not in stored:
                problems.append(f"{user} was told feedback but has no stored answer")
            elif match.group(1) != clicked.get(user):
                problems.append(f"{user} was told choice {match.group(1)}, clicked {clicked[user]}")
        elif apologies:
            acc.told_apology += 1
        else:
            problems.append(f"{user} was told something unexpected: {texts}")
    if require_all:
        if acc.acked != acc.users:
            problems.append(f"only {acc.acked} of {acc.users} clicks acknowledged")
        if acc.stored != acc.users:
            problems.append(f"{acc.stored} answer rows for {acc.users} users")
        if acc.told_feedback + acc.told_apology != acc.users:
            problems.append(
                f"{acc.users - acc.told_feedback - acc.told_apology} of {acc.users} never told"
            )
    if expect_closed:
        ts = rnd.message_ref
        if rnd.closed_at is None:
            problems.append("the round is still open")
        elif rnd.closes_at is not None and rnd.closed_at >= rnd.closes_at:
            acc.closed_late_s = (rnd.closed_at - rnd.closes_at).total_seconds()
        reveals = [
            p
            for p in record.of("chat.update")
            if p.get("ts") == ts
            and not any(
                str(e.get("action_id", "")).startswith("quiz:")
                for b in p["blocks"]
                if b.get("type") == "actions"
                for e in b.get("elements", [])
            )
        ]
        threads = [p for p in record.of("chat.postMessage") if p.get("thread_ts") == ts]
        acc.reveal_edits, acc.thread_replies = len(reveals), len(threads)
        if len(reveals) != 1 or len(threads) != 1:
            problems.append(f"reveal edits {len(reveals)}, thread replies {len(threads)} (want 1)")
        for reveal in reveals:
            count = REVEAL_COUNT.search(str(reveal["blocks"]))
            if count is None or int(count.group(1)) != len(rows):
                problems.append(f"the reveal counts {count and count.group(1)}, rows {len(rows)}")
    return acc


async def check_leaderboard(
    sender: Sender,
    read: Callable[[], Any],
    database_url: str,
    *,
    caller: str,
    channel: str = CHANNEL,
) -> list[str]:
    """Ask ``/quiz leaderboard all`` over HTTP; compare its lines with the answer rows stored.

    Returns the problems found (none when the board shows the top ten of the scores the rows
    add up to, in rank order, and the caller's own line).
    """
    name = f"board-{caller}"
    reply = await sender.command("leaderboard all", user=caller, channel=channel, respond_to=name)
    if reply.status != 200:
        return [f"/quiz leaderboard answered {reply.status}"]
    deadline = time.monotonic() + 20
    while not (await _read(read)).responses_to(name):
        if time.monotonic() > deadline:
            return ["/quiz leaderboard all never answered"]
        await asyncio.sleep(0.1)
    text = str((await _read(read)).responses_to(name)[0]["text"])
    store = await open_store(database_url, migrate=False)
    try:
        scores = await store.score_rows("slack", TEAM, None)
    finally:
        await store.close()
    expected = rank_rows(scores)
    shown = [m.groups() for m in map(BOARD_LINE.match, text.splitlines()) if m]
    problems = []
    want = [
        (str(e.rank), e.user, str(e.points), str(e.correct), str(e.answered)) for e in expected[:10]
    ]
    if shown != want:
        problems.append(f"leaderboard shows {shown}, the rows give {want}")
    mine = next((e for e in expected if e.user == caller), None)
    if mine is not None and mine.rank > 10 and f"You: #{mine.rank} " not in text:
        problems.append(f"the caller's line is missing: {text!r}")
    return problems


def sum_points(question: Question, results: Sequence[ClickResult], stored: set[str]) -> int:
    """Return the points the stored clicks should have earned."""
    return sum(
        question.difficulty.points for r in results if r.user in stored and r.key == question.answer
    )
