"""A crowd, a crash, platform faults and a long soak, through ``quizbot slack``, with every answer
accounted for.

Each scenario runs three processes: the Slack Web API stand-in (tests/reliability/standin.py,
which can answer a share of calls 429, 500 or slowly), ``quizbot slack`` in HTTP mode on a fresh
database, and a bare Bolt app that only acks a click and posts one ephemeral message (from
benchmarks/slack_clicks.py). Both apps get the same signed clicks in the same run.

- ``--users N`` (default 1000): N users answer one round, ``--in-flight`` clicks at a time.
  Reported: clicks acked per second, p50/p99/max time to ack, how long until every clicker was
  told; then the accounting: database rows == users, no duplicates, each row the choice clicked,
  the leaderboard (over HTTP) equal to the rows, every clicker told exactly once, the round
  closed and revealed once.
- ``--crash``: the same crowd, quizbot SIGKILLed after 40% of the clicks were acked and started
  again; the rest click after the restart. Every acked click and every user told must be stored
  once; unacked ones may be missing. The round (1 minute) must close on time and reveal once.
- ``--faults [SPEC]``: the same crowd while the stand-in answers a share of calls with 429 and
  Retry-After, 500, or only after 3.5 s (default 429=0.1,500=0.05,slow=0.05). Posts must land
  once, every clicker be told once (feedback or an apology), nothing lost or doubled.
- ``--soak MINUTES``: steady clicks (``--rate``/s) and commands (leaderboard, stats, /bandwidth,
  a new round each ``--cycle`` seconds) for that long. Sampled every 10 s: resident memory and
  open file descriptors (psutil) of both apps, and quizbot's asyncio tasks (the
  ``quizbot_asyncio_tasks`` gauge on its operations port's /metrics). After a warm-up (a fifth
  of the run, at least a minute), memory must stay within 10% and descriptors and tasks must
  not grow.

    .venv/bin/python benchmarks/slack_load.py [--users N] [--in-flight K] [--crash]
        [--faults [SPEC]] [--soak MINUTES [--rate R] [--cycle S]] [--postgres [URL]]

Exit status 0 when every check of every scenario run held.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
import psutil  # noqa: E402

from benchmarks.slack_clicks import SECRET, database, process, serve_bare  # noqa: E402
from bot.bank.loader import load_bank  # noqa: E402
from bot.config import BUNDLED_QUESTIONS  # noqa: E402
from bot.engine.model import Question  # noqa: E402
from tests.adapters.slack.conftest import Reply, Sender  # noqa: E402
from tests.adapters.slack.test_slack_process import LISTENING, bot_env  # noqa: E402
from tests.reliability.harness import (  # noqa: E402
    Accounting,
    BotProcess,
    ClickResult,
    Latency,
    account,
    card_ts,
    check_leaderboard,
    drive,
    open_card,
    plan_users,
    round_state,
    told,
    wait_closed,
    wait_told,
)
from tests.reliability.standin import Record, RemoteStandIn  # noqa: E402

SELF = Path(__file__).resolve()
URL = re.compile(r"(http://\S+/api/)")
TASKS = re.compile(r"^quizbot_asyncio_tasks (\d+)", re.MULTILINE)
DEFAULT_FAULTS = "429=0.1,500=0.05,slow=0.05"
TIMER_INTERVAL = 5.0  # quizbot's round timer looks this often
HEADER = f"  {'':<16} {'acked':>11} {'rate':>10} {'p50 ack':>11} {'p99 ack':>11} {'max ack':>11}"


@dataclass
class SignedSender(Sender):
    """A sender signing with the benchmark's secret (the bare app's, from slack_clicks)."""

    async def post(  # type: ignore[override]
        self, body: str, content_type: str, headers: dict | None = None, **signing: object
    ) -> Reply:
        """Send a body signed with the benchmark's secret."""
        signing.setdefault("secret", SECRET)
        return await super().post(body, content_type, headers, **signing)


@dataclass
class Run:
    """What a scenario has to work with: the three processes and an HTTP session."""

    api: RemoteStandIn
    quizbot: BotProcess
    bare_url: str
    database_url: str
    session: aiohttp.ClientSession
    bank_question: dict[str, Question] = field(default_factory=dict)

    def sender(self, url: str) -> Sender:
        """Return a signed-request sender to one app."""
        return SignedSender(standin=self.api, session=self.session, url=url)  # type: ignore[arg-type]

    async def question(self, round_id: int) -> Question:
        """Return the question a round asks."""
        rnd, _ = await round_state(self.database_url, round_id)
        if not self.bank_question:
            self.bank_question.update({q.id: q for q in load_bank([BUNDLED_QUESTIONS])})
        return self.bank_question[rnd.question_id]


@asynccontextmanager
async def running(postgres: str | None, faults: str = "", **quizbot_env: str) -> AsyncIterator[Run]:
    """Start the stand-in, quizbot on a fresh database and the bare app; stop them after."""
    python = sys.executable
    env = bot_env()
    standin = [python, "-m", "tests.reliability.standin", "--faults", faults]
    async with (
        database(postgres) as database_url,
        process(standin, URL, env) as api_url,
        process([python, str(SELF), "--serve-bare", api_url], LISTENING, env) as bare_url,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session,
    ):
        quizbot = BotProcess(
            bot_env(
                SLACK_BOT_TOKEN="xoxb-load",
                SLACK_SIGNING_SECRET=SECRET,
                SLACK_API_URL=api_url,
                QUIZBOT_DATABASE_URL=database_url,
                QUIZBOT_QUESTIONS=str(BUNDLED_QUESTIONS),
                **quizbot_env,
            )
        )
        try:
            await quizbot.start()
            run = Run(RemoteStandIn(api_url, session), quizbot, bare_url, database_url, session)
            # The first request of each app pays for auth.test and connections: not measured.
            await run.sender(quizbot.url).command("help", channel="CWARM")
            await run.sender(bare_url).command("help", channel="CWARM")
            yield run
        finally:
            await quizbot.stop()


async def crowd(
    run: Run,
    url: str,
    round_id: int,
    plan: list[tuple[str, str]],
    channel: str,
    args: argparse.Namespace,
    within: float = 180.0,
) -> tuple[list[ClickResult], Latency, float]:
    """Click once per planned user; return the results, latency and seconds until all told."""
    began = time.perf_counter()
    results, _ = await drive(
        run.sender(url), round_id, plan, in_flight=args.in_flight, channel=channel
    )
    latency = Latency.of(results, time.perf_counter() - began)
    users = {r.user for r in results if r.acked}
    await wait_told(run.api.record, channel, users, within=within)
    return results, latency, time.perf_counter() - began


def report(title: str, rows: list[tuple[str, Latency, float]], acc: Accounting | None) -> None:
    """Print a scenario's table and accounting."""
    print(f"\n{title}\n{HEADER}  {'all told':>9}")
    for name, latency, all_told in rows:
        print(f"{latency.line(name)}  {all_told:8.1f}s")
    if acc is not None:
        print(f"  accounting: {acc.line()}")


def verdict(name: str, problems: list[str]) -> bool:
    """Print whether a scenario's checks held (and the first problems if not)."""
    print(f"  {name}: {'passed' if not problems else 'FAILED'}")
    for problem in problems[:10]:
        print(f"    - {problem}")
    return not problems


# ---------------------------------------------------------------- scenarios


async def scenario_load(args: argparse.Namespace) -> bool:
    """A crowd answers one round; every answer accounted for."""
    async with running(args.postgres) as run:
        round_id = await open_card(run.sender(run.quizbot.url), run.api.record, channel="CLOAD")
        await card_ts(run.database_url, round_id)
        question = await run.question(round_id)
        plan = plan_users(args.users, "".join(question.keys))
        bare = await crowd(run, run.bare_url, round_id, plan, "CBARE", args)
        quiz = await crowd(run, run.quizbot.url, round_id, plan, "CLOAD", args)
        sender = run.sender(run.quizbot.url)
        await sender.command("close", channel="CLOAD", respond_to="close")
        await wait_closed(run.database_url, round_id, within=30)
        record = await settled_reveal(run, round_id)
        acc = await account(
            database_url=run.database_url,
            record=record,
            round_id=round_id,
            question=question,
            results=quiz[0],
            channel="CLOAD",
        )
        board = await check_leaderboard(
            sender, run.api.record, run.database_url, caller=plan[-1][0], channel="CLOAD"
        )
        bare_told = once(record, "CBARE", {u for u, _ in plan})
        title = f"load: {args.users} users, {args.in_flight} in flight, {db_name(args)}"
        report(title, [("bare Bolt app", *bare[1:]), ("quizbot slack", *quiz[1:])], acc)
        print(f"  leaderboard over HTTP equal to the rows: {not board}")
        print(f"  bare app: every clicker told exactly once: {not bare_told}")
        return verdict("load checks", acc.problems + board + bare_told + tracebacks(run))


async def scenario_crash(args: argparse.Namespace) -> bool:
    """SIGKILL part-way through a crowd's clicks; restart; account for every acked click."""
    async with running(args.postgres, QUIZBOT_ROUND_MINUTES="1") as run:
        sender = run.sender(run.quizbot.url)
        round_id = await open_card(sender, run.api.record, channel="CCRASH")
        ts = await card_ts(run.database_url, round_id)
        question = await run.question(round_id)
        plan = plan_users(args.users, "".join(question.keys))
        bare = await crowd(run, run.bare_url, round_id, plan, "CBARE", args)

        kill_after = int(args.users * 0.4)
        stop = asyncio.Event()
        acked = 0

        def count(_: ClickResult) -> None:
            nonlocal acked
            acked += 1
            if acked >= kill_after:
                stop.set()

        async def killer() -> float:
            await stop.wait()
            await run.quizbot.kill()
            return time.perf_counter()

        kill = asyncio.create_task(killer())
        began = time.perf_counter()
        first, unsent = await drive(
            sender, round_id, plan, in_flight=args.in_flight, channel="CCRASH",
            message_ts=ts, stop=stop, on_ack=count,
        )  # fmt: skip
        killed_at = await asyncio.wait_for(kill, 60)
        await run.quizbot.start()
        restarted = time.perf_counter() - killed_at
        sender.url = run.quizbot.url
        second, _ = await drive(
            sender, round_id, unsent, in_flight=args.in_flight, channel="CCRASH", message_ts=ts
        )
        latency = Latency.of(first + second, time.perf_counter() - began - restarted)
        await wait_told(run.api.record, "CCRASH", {r.user for r in second if r.acked}, 180)
        all_told = time.perf_counter() - began

        rnd, _ = await round_state(run.database_url, round_id)
        assert rnd.closes_at is not None
        wait = (rnd.closes_at - rnd.opened_at).total_seconds() + TIMER_INTERVAL + 30
        closed = await wait_closed(run.database_url, round_id, within=wait)
        record = await settled_reveal(run, round_id)
        acc = await account(
            database_url=run.database_url,
            record=record,
            round_id=round_id,
            question=question,
            results=first + second,
            channel="CCRASH",
            require_all=False,
        )
        problems = list(acc.problems)
        if closed.closed_at is None or acc.closed_late_s is None:
            problems.append("the round did not close at its time")
        elif acc.closed_late_s > TIMER_INTERVAL + 2:
            problems.append(f"the round closed {acc.closed_late_s:.1f} s late")
        lost = [r for r in first if not r.acked]
        stored = await stored_users(run, round_id)
        report(
            f"crash: {args.users} users, SIGKILL after {kill_after} acks, {db_name(args)}",
            [("bare Bolt app", *bare[1:]), ("quizbot slack", latency, all_told)],
            acc,
        )
        print(
            f"  before the kill: {len(first)} clicks sent, {len(lost)} unacknowledged (may be"
            f" missing), {sum(r.user in stored for r in lost)} of those stored"
            f" anyway; restart took {restarted:.1f} s; after it {len(second)} clicks,"
            f" {sum(r.acked for r in second)} acked"
        )
        return verdict("crash checks", problems + tracebacks(run))


async def scenario_faults(args: argparse.Namespace) -> bool:
    """A crowd while the platform answers 429, 500 and slowly; nothing lost or doubled."""
    async with running(args.postgres, faults=args.faults) as run:
        sender = run.sender(run.quizbot.url)
        round_id = await open_card(sender, run.api.record, channel="CFAULT", within=120)
        await card_ts(run.database_url, round_id)
        question = await run.question(round_id)
        plan = plan_users(args.users, "".join(question.keys))
        # The bare app does not retry: whoever its failed calls missed is never told.
        bare = await crowd(run, run.bare_url, round_id, plan, "CBARE", args, within=15)
        quiz = await crowd(run, run.quizbot.url, round_id, plan, "CFAULT", args)
        await asyncio.sleep(4)  # longer than a slow answer: a late double shows up now
        await sender.command("close", channel="CFAULT", respond_to="close")
        await wait_closed(run.database_url, round_id, within=60)
        record = await settled_reveal(run, round_id, within=60)
        acc = await account(
            database_url=run.database_url,
            record=record,
            round_id=round_id,
            question=question,
            results=quiz[0],
            channel="CFAULT",
        )
        cards = [
            p
            for p in record.of("chat.postMessage")
            if p.get("channel") == "CFAULT" and "thread_ts" not in p
        ]
        problems = list(acc.problems)
        # Refused posts freed the channel; the card that landed is the round's, once.
        if sum(f"quiz_round_{round_id}_" in str(p["blocks"]) for p in cards) != 1:
            problems.append(f"round {round_id}'s card was posted {len(cards)} times")
        faults = record.fault_counts()
        report(
            f"faults ({args.faults}): {args.users} users, {args.in_flight} in flight, "
            f"{db_name(args)}",
            [("bare Bolt app", *bare[1:]), ("quizbot slack", *quiz[1:])],
            acc,
        )
        print(f"  faults injected: {faults}; card posts tried until one landed: {len(cards)}")
        print(f"  bare app told {len(set(told(record, 'CBARE')))} of {args.users} (no retry)")
        # Each apology's error id is logged with its traceback, for whoever runs the bot, and
        # so is a card count refresh the platform refused; nothing else may be.
        logged = len(run.quizbot.tracebacks())
        others = unexplained_tracebacks(run.quizbot.lines)
        print(f"  tracebacks logged: {logged} (with an error id or a refused refresh: all but"
              f" {len(others)})")  # fmt: skip
        problems += [f"unexplained traceback after: {line}" for line in others]
        return verdict("fault checks", problems)


@dataclass
class Sample:
    """One reading of both processes."""

    at: float
    rss: int
    fds: int
    tasks: int
    bare_rss: int
    bare_fds: int


async def scenario_soak(args: argparse.Namespace) -> bool:
    """Steady clicks and commands for a long time; memory, descriptors and tasks stay flat."""
    async with running(args.postgres) as run:
        bare_proc = psutil.Process(bare_pid(run.bare_url))
        quiz_proc = psutil.Process(run.quizbot.pid)
        sender, bare_sender = run.sender(run.quizbot.url), run.sender(run.bare_url)
        samples: list[Sample] = []
        results: list[ClickResult] = []
        bare_results: list[ClickResult] = []
        rounds: list[int] = []
        commands = 0
        start = time.perf_counter()
        end = start + args.soak * 60

        async def sample() -> None:
            async with run.session.get(f"{run.quizbot.ops}/metrics") as resp:
                match = TASKS.search(await resp.text())
            samples.append(
                Sample(
                    time.perf_counter() - start,
                    quiz_proc.memory_info().rss,
                    quiz_proc.num_fds(),
                    int(match.group(1)) if match else -1,
                    bare_proc.memory_info().rss,
                    bare_proc.num_fds(),
                )
            )

        async def click(
            s: Sender, round_id: int, user: str, key: str, out: list[ClickResult], channel: str
        ) -> None:
            got, _ = await drive(s, round_id, [(user, key)], in_flight=1, channel=channel)
            out.extend(got)

        pending: set[asyncio.Task[None]] = set()
        next_sample = time.perf_counter()
        while time.perf_counter() < end:
            round_id = await open_card(sender, run.api.record, channel="CSOAK")
            rounds.append(round_id)
            keys = "".join((await run.question(round_id)).keys)
            cycle_end = min(time.perf_counter() + args.cycle, end)
            i = 0
            while (now := time.perf_counter()) < cycle_end:
                user, key = f"S{len(rounds):04d}{i:05d}", keys[i % len(keys)]
                for s, out, where in (
                    (sender, results, "CSOAK"),
                    (bare_sender, bare_results, "CSOAKBARE"),
                ):
                    task = asyncio.create_task(click(s, round_id, user, key, out, where))
                    pending.add(task)
                    task.add_done_callback(pending.discard)
                if i % int(args.rate * 10) == 0:
                    which = (i // int(args.rate * 10)) % 3
                    text, name = [
                        ("leaderboard", "/quiz"),
                        ("stats", "/quiz"),
                        ("140GB allreduce nodes=4", "/bandwidth"),
                    ][which]
                    commands += 1
                    task = asyncio.create_task(soak_command(sender, text, name, commands))
                    pending.add(task)
                    task.add_done_callback(pending.discard)
                if now >= next_sample:
                    await sample()
                    next_sample = now + 10
                i += 1
                await asyncio.sleep(1 / args.rate)
            await asyncio.gather(*pending)
            await sender.command("close", channel="CSOAK", respond_to="soak-close")
            await wait_closed(run.database_url, round_id, within=30)
        await sample()
        record = await run.api.record()
        problems, compared = soak_checks(samples, args)
        problems += await soak_accounting(run, rounds, results, record)
        print_soak(args, samples, results, bare_results, rounds, commands)
        print(compared)
        return verdict("soak checks", problems + tracebacks(run))


async def soak_command(sender: Sender, text: str, name: str, n: int) -> None:
    """Send one slash command in the soak channel."""
    await sender.command(text, name=name, channel="CSOAK", respond_to=f"soak-{n}")


def soak_checks(samples: list[Sample], args: argparse.Namespace) -> tuple[list[str], str]:
    """Compare the first and last tenth of the readings after the warm-up (a fifth of the run).

    Memory: the medians within 10%. Descriptors and tasks: no growth. Returns the problems and
    a line of the figures compared.
    """
    warm = max(60.0, args.soak * 60 / 5)
    after = [s for s in samples if s.at >= warm]
    if len(after) < 4:
        return [f"only {len(after)} samples after the warm-up; run longer"], ""
    tenth = max(1, len(after) // 10)
    base, last = after[:tenth], after[-tenth:]
    problems = []
    mb = 1024 * 1024
    rss0 = statistics.median(s.rss for s in base)
    rss1 = statistics.median(s.rss for s in last)
    change = 100 * (rss1 - rss0) / rss0
    if abs(change) > 10:
        problems.append(f"memory moved {change:+.1f}% after the warm-up")
    line = f"  after the warm-up ({warm / 60:.0f} min): quizbot RSS {rss0 / mb:.1f} -> "
    line += f"{rss1 / mb:.1f} MB ({change:+.1f}%)"
    for name in ("fds", "tasks"):
        # Requests in flight come and go; growth is the usual reading at the end rising above
        # every reading at the start.
        first = max(getattr(s, name) for s in base)
        final = statistics.median(getattr(s, name) for s in last)
        line += f", {name} at most {first} early, typically {final:g} late"
        if final > first:
            problems.append(f"{name} grew: at most {first} early on, typically {final} at the end")
    bare0 = statistics.median(s.bare_rss for s in base)
    bare1 = statistics.median(s.bare_rss for s in last)
    line += f"; bare app RSS {bare0 / mb:.1f} -> {bare1 / mb:.1f} MB"
    return problems, line


async def soak_accounting(
    run: Run, rounds: list[int], results: list[ClickResult], record: Record
) -> list[str]:
    """Every acked soak click is stored once and was told once."""
    problems = []
    stored = 0
    for round_id in rounds:
        _, rows = await round_state(run.database_url, round_id)
        stored += len(rows)
    acked = sum(r.acked for r in results)
    if stored != acked:
        problems.append(f"{stored} rows for {acked} acked clicks")
    heard = told(record, "CSOAK")
    twice = [u for u, texts in heard.items() if len(texts) != 1]
    if twice or len(heard) != acked:
        problems.append(f"{len(heard)} of {acked} told, {len(twice)} more than once")
    return problems


def print_soak(
    args: argparse.Namespace,
    samples: list[Sample],
    results: list[ClickResult],
    bare_results: list[ClickResult],
    rounds: list[int],
    commands: int,
) -> None:
    """Print the soak's readings, one line a minute, and its totals."""
    mb = 1024 * 1024
    print(f"\nsoak: {args.soak:g} min, {args.rate:g} clicks/s, a round every {args.cycle:g} s")
    print(f"  {'min':>5} {'quizbot RSS':>12} {'fds':>5} {'tasks':>6} {'bare RSS':>10} {'fds':>5}")
    shown = -60.0
    for s in samples:
        if s.at - shown >= 60 or s is samples[-1]:
            shown = s.at
            print(
                f"  {s.at / 60:5.1f} {s.rss / mb:10.1f}MB {s.fds:5} {s.tasks:6}"
                f" {s.bare_rss / mb:8.1f}MB {s.bare_fds:5}"
            )
    quiz = Latency.of(results, 1.0)
    bare = Latency.of(bare_results, 1.0)
    print(
        f"  {len(rounds)} rounds, {len(results)} clicks, {commands} commands; "
        f"p99 ack quizbot {quiz.p99 * 1000:.1f} ms, bare {bare.p99 * 1000:.1f} ms"
    )


# ---------------------------------------------------------------- helpers


async def settled_reveal(run: Run, round_id: int, within: float = 30.0) -> Record:
    """Wait for the round's thread reply, then a moment for a second one; return the record."""
    ts = (await round_state(run.database_url, round_id))[0].message_ref
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        record = await run.api.record()
        if any(p.get("thread_ts") == ts for p in record.of("chat.postMessage")):
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)
    return await run.api.record()


def once(record: Record, channel: str, users: set[str]) -> list[str]:
    """Return what is wrong with a channel's private replies: each user told exactly once."""
    heard = told(record, channel)
    twice = sorted(u for u, texts in heard.items() if len(texts) != 1)
    missing = users - set(heard)
    if twice or missing:
        return [f"{channel}: {len(missing)} never told, {len(twice)} told more than once"]
    return []


async def stored_users(run: Run, round_id: int) -> set[str]:
    """Return the users with an answer row in the round."""
    _, rows = await round_state(run.database_url, round_id)
    return {row.user for row in rows}


EXPLAINED = re.compile(
    r"ERROR bot\.adapters\.slack\.(handlers: error [0-9a-f]{8} handling"
    r"|_publisher: could not refresh the card)"
)


def unexplained_tracebacks(lines: list[str]) -> list[str]:
    """Return the log line before each traceback that no error boundary explains."""
    return [
        lines[i - 1]
        for i, line in enumerate(lines)
        if line.startswith("Traceback") and not (i and EXPLAINED.search(lines[i - 1]))
    ]


def tracebacks(run: Run) -> list[str]:
    """Return a problem when quizbot logged a traceback."""
    found = run.quizbot.tracebacks()
    return [f"quizbot logged {len(found)} tracebacks"] if found else []


def bare_pid(url: str) -> int:
    """Return the id of the process listening on the bare app's port."""
    port = int(url.split(":")[2].split("/")[0])
    for conn in psutil.net_connections("tcp"):
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN:
            assert conn.pid is not None
            return conn.pid
    raise RuntimeError(f"nothing listens on port {port}")


def db_name(args: argparse.Namespace) -> str:
    """Name the database the run used."""
    return "PostgreSQL" if args.postgres else "SQLite"


async def main_async(args: argparse.Namespace) -> int:
    """Run the scenarios asked for; return 0 when all held."""
    ok = True
    if args.users_given or not (args.crash or args.faults or args.soak):
        ok &= await scenario_load(args)
    if args.crash:
        ok &= await scenario_crash(args)
    if args.faults:
        ok &= await scenario_faults(args)
    if args.soak:
        ok &= await scenario_soak(args)
    print(f"\nall checks: {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


def main() -> int:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=None, help="users in the crowd (1000)")
    parser.add_argument("--in-flight", type=int, default=200, help="clicks outstanding (200)")
    parser.add_argument("--crash", action="store_true", help="SIGKILL and restart part-way")
    parser.add_argument(
        "--faults", nargs="?", const=DEFAULT_FAULTS, default="", metavar="SPEC",
        help=f"platform faults, like {DEFAULT_FAULTS} (the default)",
    )  # fmt: skip
    parser.add_argument("--soak", type=float, default=0, metavar="MINUTES", help="soak length")
    parser.add_argument("--rate", type=float, default=5, help="soak clicks a second (5)")
    parser.add_argument("--cycle", type=float, default=60, help="soak seconds a round (60)")
    parser.add_argument(
        "--postgres", nargs="?", const="postgresql+asyncpg://postgres@127.0.0.1:5432/test",
        metavar="URL", help="run quizbot on a new PostgreSQL database instead of SQLite",
    )  # fmt: skip
    parser.add_argument("--serve-bare", metavar="API_URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        asyncio.run(serve_bare(args.serve_bare))
        return 0
    # SIGTERM ends the run like Ctrl-C, so the processes it started are stopped too.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    args.users_given = args.users is not None
    args.users = args.users or 1000
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())
