"""One way to drive every face: a driver per platform, over its real library and its stand-in.

A scenario speaks to a ``Driver``: run a command (with the same verb and options everywhere),
post a card, click, react, restart, hold the database. Each driver does it the way its
platform's users do (Slack: signed HTTP requests to the real Bolt app; Discord: gateway
dispatches to the real discord.py client; the terminal: typed lines into ``quizbot play``),
and reports what reached the wire as ``Seen`` text. A third platform is an adapter, a stand-in,
and one more driver here.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import inspect
import io
import itertools
import json
import random
import sqlite3
import sys
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import aiohttp

from bot import messages as M
from bot.adapters.console.app import Terminal, play_session
from bot.adapters.discord.app import Gateway, QuizClient, configure_endpoints
from bot.adapters.discord.render import LETTER_EMOJI
from bot.adapters.slack.app import HttpMode, assemble, web_client
from bot.adapters.teams.app import MESSAGES_PATH, TeamsBot, TeamsHttp, client_factory
from bot.adapters.teams.render import CARD_TYPE
from bot.bank.loader import load_bank
from bot.bank.templates import load_templates
from bot.bank.tracks import load_tracks
from bot.bank.workspace import WorkspaceBanks
from bot.chat import Charts
from bot.chat.forms import LABELS
from bot.chat.grammar import GRAMMARS, Kind, Marked
from bot.chat.runner import Loops, run
from bot.engine import QuizEngine
from bot.engine.model import Place
from bot.engine.tracks import Track
from bot.storage import SqlStore, open_store
from tests.adapters.slack.conftest import Sender, block_actions, make_settings, reaction
from tests.chat.observe import Handled
from tests.conftest import FakeClock
from tests.standins.discord_api import EPHEMERAL, Call, DiscordStandIn, UserRef
from tests.standins.slack_api import SlackApiStandIn
from tests.standins.teams_connector import CHANNEL as TEAMS_CHANNEL
from tests.standins.teams_connector import TENANT, StandInTokens, TeamsStandIn

BANK = Path(__file__).resolve().parents[1] / "adapters" / "slack" / "bank"
# The bundled computed-question templates, as the bot runs with them.
TEMPLATES = load_templates()


def errors_of(told: str) -> dict[str, str]:
    """Return the errors a refused form's private reply lists, by field name (from its label)."""
    names = {label: name for name, label in LABELS.items()}
    errors: dict[str, str] = {}
    for line in told.splitlines():
        label, _, error = line.partition(": ")
        name = names.get(label.strip("*• "))
        if name is not None and error:
            errors[name] = error
    return errors


def tracks_of(folder: Path) -> dict[str, Track]:
    """Return the learning tracks of a test bank (its tracks/ folder)."""
    return load_tracks([folder], load_bank([folder]))


USERS = ("ada", "bob", "cy", "dee", "eve", "fay", "admin")
GRAMMAR = {g.name: g for g in GRAMMARS}
CHARTS = Charts.load()
WITHIN = 20.0
TEXT_KEYS = ("text", "title", "description", "name", "value", "content", "label")


@dataclass
class Seen:
    """What one action made the platform show: the text of it all, and whether only to one."""

    text: str
    private: bool

    def __contains__(self, part: str) -> bool:
        return part in self.text


@dataclass
class Sent:
    """A form sent back: the refusal beside each field (by field name) as the wire carried it,
    or what the person was told once it was taken."""

    errors: dict[str, str]
    seen: Seen | None = None


@dataclass(frozen=True)
class Card:
    """A posted question: its round, and the platform's reference to its message."""

    round_id: int
    ref: str
    shown: str = field(default="", compare=False)  # the card's text as posted


@dataclass
class ReviewSeen:
    """A private review question as shown, with what its buttons answer."""

    seen: Seen
    values: list[str]
    ref: str = ""


class Driver(Protocol):
    """What every face offers a scenario."""

    platform: str
    engine: QuizEngine
    clock: FakeClock
    place: Place

    async def command(self, name: str, verb: str, options: dict[str, Any], *, user: str) -> Seen:
        """Run a command as a user would; return what they (or the channel) saw."""
        ...


# ---------------------------------------------------------------- shared pieces


def make_engine(store: Any, clock: FakeClock) -> QuizEngine:
    """Return the engine every driver runs: the test bank, its tracks, workspace banks."""
    bank = load_bank([BANK], TEMPLATES)
    return QuizEngine(
        store,
        bank,
        clock=clock,
        rng=random.Random(0),
        tracks=tracks_of(BANK),
        banks=WorkspaceBanks(bank, store),
    )


class GatedStore:
    """The real store, whose every call waits while the gate is shut: a database held elsewhere."""

    def __init__(self, store: SqlStore) -> None:
        self._store = store
        self.gate = asyncio.Event()
        self.gate.set()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if name == "close" or not inspect.iscoroutinefunction(value):
            return value

        async def gated(*args: Any, **kwargs: Any) -> Any:
            await self.gate.wait()
            return await value(*args, **kwargs)

        return gated


def spell(name: str, verb: str, options: dict[str, Any]) -> str:
    """Write a command's options as the text form types them (the grammar says how)."""
    grammar = GRAMMAR[name]
    spec = grammar.verb(verb)
    if spec.raw is not None and spec.raw.name in options:
        return str(options[spec.raw.name])
    words = [spec.spelled or spec.name] if spec.name else []
    for option in spec.options:
        if option.name not in options:
            continue
        value = options[option.name]
        text = ("on" if value else "off") if isinstance(value, bool) else str(value)
        if option.marked is Marked.PAIR:
            words += [option.name, text]
        elif option.marked is Marked.KEY:
            words.append(f"{option.name}={text}")
        else:
            words.append(text)
    return " ".join(words)


def user_options(name: str, verb: str) -> set[str]:
    """Return the options of a verb that name a user."""
    return {o.name for o in GRAMMAR[name].verb(verb).options if o.kind is Kind.USER}


def texts(value: Any) -> list[str]:
    """Return every text a Block Kit or embed structure holds, in order."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in TEXT_KEYS and isinstance(item, str):
                found.append(item)
                continue
            found += texts(item)
    elif isinstance(value, list):
        for item in value:
            found += texts(item)
    return found


async def eventually(check: Callable[[], Awaitable[bool]], within: float = WITHIN) -> None:
    """Wait until a check of the database holds (it has no change notification to wait on)."""
    async with asyncio.timeout(within):
        while not await check():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


# ---------------------------------------------------------------- Slack


TEAM, OTHER_TEAM, CHANNEL = "T0TEAM", "T0OTHER", "C0QUIZ"
SLACK_EMOJI = {"A": "one", "B": "two", "C": "three", "D": "four", "E": "five"}


@dataclass
class SlackDriver:
    """The real Bolt app over HTTP, on the chat runner, against the Slack Web API stand-in."""

    tmp_path: Path
    clock: FakeClock
    platform: str = "slack"
    place: Place = field(default_factory=lambda: Place("slack", TEAM, CHANNEL))
    engine: QuizEngine = field(init=False)
    standin: SlackApiStandIn = field(init=False)
    _keys: Any = field(default_factory=itertools.count)

    def uid(self, user: str) -> str:
        """Return a person's Slack user id."""
        return "U" + user.upper()

    def mention(self, user: str) -> str:
        """Return how the platform writes a mention of the person."""
        return f"<@{self.uid(user)}>"

    async def start(self) -> None:
        """Start the stand-in and the bot."""
        self.standin = SlackApiStandIn(team_id=TEAM, admins=[self.uid("admin")])
        await self.standin.start()
        self.session = aiohttp.ClientSession()
        await self._open()

    async def _open(self) -> None:
        store = await open_store(f"sqlite+aiosqlite:///{self.tmp_path / 'quiz.db'}")
        self.store = GatedStore(store)
        self.engine = make_engine(self.store, self.clock)
        settings = make_settings(self.tmp_path, self.standin)
        client = web_client(settings, self.session)
        self.bot = assemble(settings, self.engine, client, charts=CHARTS, refresh_every=30.0)
        self.handled = Handled(self.bot.chat)
        self.core = self.bot.chat
        listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        transport = HttpMode(self.bot, "127.0.0.1", 0, listening.set_result)
        loops = Loops(self.bot.chat, timer_interval=0.05, scheduler_interval=0.05)
        self._stop = asyncio.Event()
        self._runner = asyncio.create_task(
            run(self.bot.chat, transport, loops, store=store, shutdown_timeout=5, stop=self._stop)
        )
        url = await asyncio.wait_for(listening, WITHIN)
        self.sender = Sender(standin=self.standin, session=self.session, url=url)
        self._sql = store

    async def _close(self) -> None:
        self.store.gate.set()
        self._stop.set()
        await asyncio.wait_for(self._runner, WITHIN)
        await self._sql.close()

    async def stop(self) -> None:
        """Stop the bot and the stand-in."""
        await self._close()
        await self.session.close()
        await self.standin.stop()

    async def restart(self) -> None:
        """Stop the bot and start a new one on the same database, as after a crash or deploy."""
        await self._close()
        await self._open()

    # ------------------------------------------------------------ what was said

    def _marks(self) -> tuple[int, int, int]:
        s = self.standin
        return len(s.responses), len(s.of("chat.postEphemeral")), len(s.of("chat.postMessage"))

    def _said(self, marks: tuple[int, int, int], key: str, user: str) -> Seen | None:
        s = self.standin
        responses, ephemerals, posts = marks
        private = [r.body.get("text", "") for r in s.responses[responses:] if r.name == key]
        private += [
            " ".join([c.params.get("text", ""), *texts(c.params.get("blocks"))])
            for c in s.of("chat.postEphemeral")[ephemerals:]
            if c.params.get("user") == self.uid(user) and c.ok
        ]
        public = [
            " ".join([c.params.get("text", ""), *texts(c.params.get("blocks"))])
            for c in s.of("chat.postMessage")[posts:]
            if "thread_ts" not in c.params and c.ok
        ]
        if not private and not public:
            return None
        return Seen("\n".join(private + public), private=not public)

    async def _handled_after(self, send: Callable[[], Awaitable[Any]]) -> Any:
        done = self.handled.count
        result = await send()
        await self.handled.wait(done + 1)
        return result

    # ------------------------------------------------------------ commands

    async def command(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> Seen:
        """Type the command as Slack text; return the ack's text or what followed it."""
        given = {
            k: f"<@{self.uid(v)}|{v}>" if k in user_options(name, verb) else v
            for k, v in options.items()
        }
        return await self.text(name, spell(name, verb, given), user=user)

    async def text(self, name: str, line: str, *, user: str = "ada") -> Seen:
        """Type a line after a slash command."""
        key, marks = f"r{next(self._keys)}", self._marks()
        reply = await self._handled_after(
            lambda: self.sender.command(line, user=self.uid(user), name=f"/{name}", respond_to=key)
        )
        assert reply.status == 200, reply
        if reply.text:
            return Seen(reply.text, private=True)
        seen = self._said(marks, key, user)
        assert seen is not None, f"/{name} {line} said nothing"
        return seen

    async def first_response_while_held(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> tuple[str, Seen]:
        """Send a command while the database is held; return its first response, then the rest."""
        key, marks, done = f"r{next(self._keys)}", self._marks(), self.handled.count
        self.store.gate.clear()
        try:
            reply = await self.sender.command(
                spell(name, verb, options), user=self.uid(user), name=f"/{name}", respond_to=key
            )
        finally:
            self.store.gate.set()
        await self.handled.wait(done + 1)
        seen = self._said(marks, key, user)
        assert seen is not None
        return ("ack" if reply.status == 200 and not reply.text else f"status {reply.status}"), seen

    async def card(self, tag: str = "storage", *, user: str = "ada") -> Card:
        """Post a question with /quiz next and return its card."""
        seen = await self.command("quiz", "next", {"tag": tag}, user=user)
        assert not seen.private, seen.text
        post = next(
            c for c in reversed(self.standin.of("chat.postMessage")) if "blocks" in c.params
        )
        actions = next(b for b in post.params["blocks"] if b["type"] == "actions")
        round_id = int(actions["block_id"].split("_")[2])
        ref = (await self.engine.get_round(round_id)).message_ref
        assert ref is not None
        return Card(round_id, ref, "\n".join(texts(post.params["blocks"])))

    def fail_next_card_post(self) -> None:
        """Make the next card post fail the way Slack refuses a channel the bot is not in."""
        self.standin.fail("chat.postMessage", "not_in_channel")

    def charts(self) -> list[bytes]:
        """Return the charts uploaded so far."""
        return list(self.standin.uploads.values())

    async def scheduled_card(self) -> Card:
        """Wait for a card nobody asked for (the daily question) and return it."""
        before = len(self.standin.of("chat.postMessage"))

        def cards() -> list[Any]:
            return [
                c
                for c in self.standin.of("chat.postMessage")[before:]
                if any(b["type"] == "actions" for b in c.params.get("blocks", []))
            ]

        # A learning track's day posts its unit first: the card is the first post with buttons.
        await self.standin.wait_for(lambda: bool(cards()), WITHIN)
        post = cards()[0]
        actions = next(b for b in post.params["blocks"] if b["type"] == "actions")
        round_id = int(actions["block_id"].split("_")[2])

        async def attached() -> bool:
            return (await self.engine.get_round(round_id)).message_ref is not None

        await eventually(attached)
        ref = (await self.engine.get_round(round_id)).message_ref
        assert ref is not None
        return Card(round_id, ref, "\n".join(texts(post.params["blocks"])))

    async def play(self, tag: str, typed: str) -> Seen:
        """Post a question of a tag and answer it with a click."""
        return await self.click(await self.card(tag), typed)

    async def ask_for(self, tag: str) -> Seen:
        """Ask for a question of a tag."""
        return await self.command("quiz", "next", {"tag": tag})

    # ------------------------------------------------------------ answers

    async def click(
        self, card: Card, key: str, *, user: str = "ada", elsewhere: bool = False
    ) -> Seen:
        """Click a choice of a card; return the private reply."""
        k, marks, ts = f"c{next(self._keys)}", self._marks(), card.ref
        team = OTHER_TEAM if elsewhere else TEAM
        reply = await self._handled_after(
            lambda: self.sender.click(
                card.round_id, key, user=self.uid(user), team=team, message_ts=ts, respond_to=k
            )
        )
        assert reply.status == 200, reply
        seen = self._said(marks, k, user)
        assert seen is not None, "the click was not answered"
        return seen

    async def react(self, card: Card, key: str, *, user: str = "ada") -> Seen | None:
        """React to a card with the emoji for a choice; return what the reactor was told."""
        marks, ts = self._marks(), card.ref
        event = reaction(self.uid(user), SLACK_EMOJI[key], ts)
        reply = await self._handled_after(
            lambda: self.sender.event(event, event_id=f"Ev{next(self._keys)}")
        )
        assert reply.status == 200
        return self._said(marks, "", user)

    async def revealed(self, card: Card) -> Seen:
        """Wait for the card's results and its explanation; return both."""
        ts = card.ref

        def found() -> bool:
            edited = any(
                c.params.get("ts") == ts
                and not [
                    e
                    for b in c.params["blocks"]
                    if b["type"] == "actions"
                    for e in b["elements"]
                    if e["action_id"].startswith("quiz:")
                ]
                for c in self.standin.of("chat.update")
            )
            return edited and any(
                c.params.get("thread_ts") == ts for c in self.standin.of("chat.postMessage")
            )

        await self.standin.wait_for(found, WITHIN)
        edits = [c for c in self.standin.of("chat.update") if c.params.get("ts") == ts]
        thread = [c for c in self.standin.of("chat.postMessage") if c.params.get("thread_ts") == ts]
        parts = texts(edits[-1].params["blocks"]) + texts(thread[-1].params["blocks"])
        return Seen("\n".join(parts), private=False)

    async def review(self, *, user: str = "ada") -> ReviewSeen:
        """Ask for a review; return what was shown and its buttons' values."""
        seen = await self.command("quiz", "review", {}, user=user)
        asked = [
            c
            for c in self.standin.of("chat.postEphemeral")
            if c.params.get("user") == self.uid(user) and "blocks" in c.params
        ]
        values: list[str] = []
        if asked and "Review" in seen.text:
            actions = next(b for b in asked[-1].params["blocks"] if b["type"] == "actions")
            values = [e["action_id"] for e in actions["elements"]]
        return ReviewSeen(seen, values)

    async def review_click(self, review: ReviewSeen, index: int, *, user: str = "ada") -> Seen:
        """Click one button of a private review question."""
        value = review.values[index]
        k, marks = f"v{next(self._keys)}", self._marks()
        payload = block_actions(
            0, "A", user=self.uid(user), response_url=self.standin.response_url(k)
        )
        payload["actions"][0].update(
            action_id=value, block_id="quiz_review_choices", value=value[-1]
        )
        payload["container"]["is_ephemeral"] = True
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        reply = await self._handled_after(
            lambda: self.sender.post(body, "application/x-www-form-urlencoded")
        )
        assert reply.status == 200
        seen = self._said(marks, k, user)
        assert seen is not None
        return seen

    def posted(self) -> list[str]:
        """Return what was posted in the channel outside threads, oldest first."""
        return [
            " ".join([c.params.get("text", ""), *texts(c.params.get("blocks"))])
            for c in self.standin.of("chat.postMessage")
            if "thread_ts" not in c.params and c.ok
        ]

    async def track(self, *, user: str = "ada") -> ReviewSeen:
        """Run /quiz track; return what was shown and the buttons of the question it asked."""
        before = len(self.standin.of("chat.postEphemeral"))
        seen = await self.command("quiz", "track", {}, user=user)
        values: list[str] = []
        for c in self.standin.of("chat.postEphemeral")[before:]:
            if c.params.get("user") == self.uid(user) and "blocks" in c.params:
                for block in c.params["blocks"]:
                    if block["type"] == "actions":
                        values = [e["action_id"] for e in block["elements"]]
        return ReviewSeen(seen, values)

    # ------------------------------------------------------------ practice

    def _buttons_since(self, marks: tuple[int, int, int], key: str, user: str) -> list[str]:
        s = self.standin
        responses, ephemerals, _ = marks
        shown = [r.body.get("blocks") for r in s.responses[responses:] if r.name == key]
        shown += [
            c.params.get("blocks")
            for c in s.of("chat.postEphemeral")[ephemerals:]
            if c.params.get("user") == self.uid(user) and c.ok
        ]
        found: list[str] = []
        for blocks in shown:
            for block in blocks or []:
                if block.get("type") == "actions":
                    found += [e["action_id"] for e in block["elements"]]
        return found

    def public_posts(self) -> int:
        """Return how many messages the bot has posted for the whole channel."""
        return len(self.standin.of("chat.postMessage"))

    async def practice(self, options: dict[str, Any], *, user: str = "ada") -> ReviewSeen:
        """Start a practice session; return what was shown and its buttons' ids."""
        key, marks = f"p{next(self._keys)}", self._marks()
        seen = await self.text("quiz", spell("quiz", "practice", options), user=user)
        return ReviewSeen(seen, self._buttons_since(marks, key, user))

    def _offer_click(self, value: str, key: str, user: str) -> str:
        """Return the form body of a click on a button under a private (ephemeral) message."""
        payload = block_actions(
            0, "A", user=self.uid(user), response_url=self.standin.response_url(key)
        )
        payload["actions"][0].update(action_id=value, block_id="quiz_offers", value="")
        payload["container"]["is_ephemeral"] = True
        return urllib.parse.urlencode({"payload": json.dumps(payload)})

    async def press(self, shown: ReviewSeen, value: str, *, user: str = "ada") -> ReviewSeen:
        """Press one of the bot's buttons on a private message; return the reply and its buttons."""
        assert value in shown.values, (value, shown.values)
        k, marks = f"b{next(self._keys)}", self._marks()
        body = self._offer_click(value, k, user)
        reply = await self._handled_after(
            lambda: self.sender.post(body, "application/x-www-form-urlencoded")
        )
        assert reply.status == 200
        seen = self._said(marks, k, user)
        assert seen is not None, f"pressing {value} said nothing"
        if not seen.text.strip():
            texts_ = [
                " ".join(texts(r.body.get("blocks")))
                for r in self.standin.responses[marks[0] :]
                if r.name == k
            ]
            seen = Seen("\n".join(texts_), seen.private)
        return ReviewSeen(seen, self._buttons_since(marks, k, user))

    async def practise_once(self, topic: str, key: str, *, user: str = "ada") -> Seen:
        """Practise one question of a topic, answering ``key``; return all that was shown."""
        asked = await self.practice({"topic": topic, "count": 1}, user=user)
        value = next(v for v in asked.values if v.endswith(f":{key}"))
        told = await self.press(asked, value, user=user)
        return Seen(
            asked.seen.text + "\n" + told.seen.text, asked.seen.private and told.seen.private
        )

    async def round_offers(self, *, user: str = "ada") -> ReviewSeen:
        """Return the buttons under the latest private reply to one of the person's clicks."""
        for call in reversed(self.standin.of("chat.postEphemeral")):
            if call.params.get("user") == self.uid(user) and call.params.get("blocks"):
                found = [
                    e["action_id"]
                    for b in call.params["blocks"]
                    if b.get("type") == "actions"
                    for e in b["elements"]
                ]
                return ReviewSeen(Seen(call.params.get("text", ""), True), found)
        return ReviewSeen(Seen("", True), [])

    async def me_page(self, *, user: str = "ada") -> ReviewSeen:
        """Run /quiz me; return the page and its buttons' ids."""
        key, marks = f"m{next(self._keys)}", self._marks()
        reply = await self._handled_after(
            lambda: self.sender.command("me", user=self.uid(user), name="/quiz", respond_to=key)
        )
        assert reply.status == 200, reply
        # In the ack, or (when the page took longer than the ack's budget) by response_url.
        answered = [r.body for r in self.standin.responses[marks[0] :] if r.name == key]
        body = json.loads(reply.text) if reply.text else answered[-1]
        found = [
            e["action_id"]
            for b in body.get("blocks", [])
            if b.get("type") == "actions"
            for e in b["elements"]
        ]
        shown = " ".join([body.get("text", ""), *texts(body.get("blocks"))])
        return ReviewSeen(Seen(shown, private=True), found)

    async def practise_sure(self, topic: str, key: str, *, user: str = "ada") -> Seen:
        """Practise one question of a topic, answer ``key``, then press "I was sure"."""
        asked = await self.practice({"topic": topic, "count": 1}, user=user)
        value = next(v for v in asked.values if v.endswith(f":{key}"))
        told = await self.press(asked, value, user=user)
        sure = next(v for v in told.values if v.endswith(":sure"))
        rated = await self.press(told, sure, user=user)
        return Seen("\n".join([asked.seen.text, told.seen.text, rated.seen.text]), True)

    # ------------------------------------------------------------ forms

    async def _opened_view(self, send: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
        opened = len(self.standin.of("views.open"))
        reply = await self._handled_after(send)
        assert reply.status == 200, reply
        calls = self.standin.of("views.open")[opened:]
        assert calls and calls[-1].ok, "no modal was opened"
        view = calls[-1].params["view"]
        return json.loads(view) if isinstance(view, str) else view

    async def _send_view(self, view: dict[str, Any], values: dict[str, str], user: str) -> Sent:
        marks = self._marks()
        reply = await self._handled_after(
            lambda: self.sender.view_submission(view, values, user=self.uid(user))
        )
        assert reply.status == 200, reply
        if reply.text:
            answer = json.loads(reply.text)
            assert answer["response_action"] == "errors", answer
            return Sent(dict(answer["errors"]))
        return Sent({}, self._said(marks, "", user))

    async def form_fields(self, *, user: str = "ada") -> list[str]:
        """Run /quiz add; return the names of the fields the form opened with."""
        view = await self._opened_view(
            lambda: self.sender.command("add", user=self.uid(user), name="/quiz")
        )
        return [b["block_id"] for b in view["blocks"] if b["type"] == "input"]

    async def add(self, values: dict[str, str], *, user: str = "ada") -> Sent:
        """Run /quiz add, fill in the form with ``values`` (by field name) and send it."""
        view = await self._opened_view(
            lambda: self.sender.command("add", user=self.uid(user), name="/quiz")
        )
        return await self._send_view(view, values, user)

    async def press_form(
        self, shown: ReviewSeen, value: str, changes: dict[str, str], *, user: str = "ada"
    ) -> tuple[dict[str, str], Sent]:
        """Press a button that opens a form (a proposal's Edit or Reject); send the form with
        what it held, ``changes`` made. Return what it held, and what came of it."""
        assert value in shown.values, (value, shown.values)
        k = f"e{next(self._keys)}"
        body = self._offer_click(value, k, user)
        view = await self._opened_view(
            lambda: self.sender.post(body, "application/x-www-form-urlencoded")
        )
        held: dict[str, str] = {}
        for block in view["blocks"]:
            if block["type"] != "input":
                continue
            element = block["element"]
            if element["type"] == "static_select":
                held[block["block_id"]] = (element.get("initial_option") or {}).get("value", "")
            else:
                held[block["block_id"]] = element.get("initial_value") or ""
        return held, await self._send_view(view, held | changes, user)

    async def shown(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> ReviewSeen:
        """Run a command; return what the person saw and the buttons under it."""
        key, marks = f"r{next(self._keys)}", self._marks()
        line = spell(name, verb, options)
        reply = await self._handled_after(
            lambda: self.sender.command(line, user=self.uid(user), name=f"/{name}", respond_to=key)
        )
        assert reply.status == 200, reply
        seen = Seen(reply.text, private=True) if reply.text else self._said(marks, key, user)
        assert seen is not None, f"/{name} {line} said nothing"
        return ReviewSeen(seen, self._buttons_since(marks, key, user))

    def notices(self, user: str) -> list[ReviewSeen]:
        """Return what the bot told the person privately, unprompted, with its buttons."""
        return [
            ReviewSeen(
                Seen(" ".join([c.params.get("text", ""), *texts(c.params.get("blocks"))]), True),
                [
                    e["action_id"]
                    for b in c.params.get("blocks") or []
                    if b.get("type") == "actions"
                    for e in b["elements"]
                ],
            )
            for c in self.standin.of("chat.postEphemeral")
            if c.params.get("user") == self.uid(user) and c.ok
        ]

    async def report(self, card: Card, values: dict[str, str], *, user: str = "ada") -> Sent:
        """Press "Report a problem" on a revealed card, fill in its form and send it."""
        edits = [c for c in self.standin.of("chat.update") if c.params.get("ts") == card.ref]
        button = next(
            e["action_id"]
            for b in edits[-1].params["blocks"]
            if b["type"] == "actions"
            for e in b["elements"]
            if e["action_id"].startswith("report:")
        )
        payload = block_actions(0, "A", user=self.uid(user), message_ts=card.ref)
        payload["actions"][0].update(action_id=button, block_id="report", value="")
        payload["trigger_id"] = f"trigger-report-{next(self._keys)}"
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        view = await self._opened_view(
            lambda: self.sender.post(body, "application/x-www-form-urlencoded")
        )
        return await self._send_view(view, values, user)


# ---------------------------------------------------------------- Discord

GUILD, OTHER_GUILD = 910_000_000_000_000_001, 920_000_000_000_000_001
MANAGE_GUILD = 1 << 5


@dataclass
class DiscordDriver:
    """The real discord.py client on the chat runner, against the Discord stand-in."""

    tmp_path: Path
    clock: FakeClock
    platform: str = "discord"
    engine: QuizEngine = field(init=False)
    api: DiscordStandIn = field(init=False)

    def uid(self, user: str) -> int:
        """Return a person's Discord user id."""
        return 1001 + USERS.index(user)

    def mention(self, user: str) -> str:
        """Return how the platform writes a mention of the person."""
        return f"<@{self.uid(user)}>"

    async def start(self) -> None:
        """Start the stand-in and the bot."""
        self.api = DiscordStandIn(guild_ids=(GUILD, OTHER_GUILD))
        await self.api.start()
        configure_endpoints(self.api.api_url, self.api.gateway_url)
        self.place = Place("discord", str(GUILD), str(self.api.channel_ids()[0]))
        await self._open()

    async def _open(self) -> None:
        store = await open_store(f"sqlite+aiosqlite:///{self.tmp_path / 'quiz.db'}")
        self.store = GatedStore(store)
        self.engine = make_engine(self.store, self.clock)
        self.client = QuizClient(
            self.engine,
            charts=CHARTS,
            refresh_every=30.0,
            answer_deadline=0.3,
            guild_ready_timeout=0.01,
        )
        self.handled = Handled(self.client.chat)
        self.core = self.client.chat
        loops = Loops(self.client.chat, timer_interval=0.05, scheduler_interval=0.05)
        self._stop = asyncio.Event()
        self._runner = asyncio.create_task(
            run(
                self.client.chat,
                Gateway(self.client, self.api.token),
                loops,
                store=store,
                shutdown_timeout=5,
                stop=self._stop,
            )
        )

        async def logged_in_and_ready() -> bool:
            # wait_until_ready refuses a client not logged in yet, and logging in now waits
            # for Discord to answer first (the runner's transport opens in its own task).
            return self.client.is_ready()

        ready = asyncio.create_task(eventually(logged_in_and_ready))
        done, _ = await asyncio.wait(
            {self._runner, ready}, timeout=WITHIN, return_when="FIRST_COMPLETED"
        )
        if self._runner in done:
            self._runner.result()
        assert ready in done, "the client did not become ready"
        self._sql = store

    async def _close(self) -> None:
        self.store.gate.set()
        self._stop.set()
        await asyncio.wait_for(self._runner, WITHIN)
        await self._sql.close()

    async def stop(self) -> None:
        """Stop the bot and the stand-in."""
        await self._close()
        await self.api.stop()

    async def restart(self) -> None:
        """Stop the bot and start a new one on the same database, as after a crash or deploy."""
        await self._close()
        await self._open()

    # ------------------------------------------------------------ what was said

    def _said(self, payload: dict[str, Any], start: int) -> Seen | None:
        token = payload["token"]
        calls = [c for c in self.api.calls[start:] if c.status < 300]
        first = next((c for c in calls if c.path.endswith(f"/{token}/callback")), None)
        parts: list[str] = []
        private = False
        if first is not None:
            data = first.body.get("data") or {}
            private = bool(int(data.get("flags") or 0) & EPHEMERAL)
            parts += texts(data)
        for call in calls:
            if call.method == "POST" and call.path.endswith(
                f"/webhooks/{self.api.application_id}/{token}"
            ):
                parts += texts(call.body)
                private = private or bool(int(call.body.get("flags") or 0) & EPHEMERAL)
        if not parts:
            return None
        return Seen("\n".join(parts), private=private)

    def _dms(self, start: int, user: str) -> list[Call]:
        dm_channels = {
            int(c["id"])
            for c in self.api.channels.values()
            if c["type"] == 1 and c["recipients"][0]["id"] == str(self.uid(user))
        }
        return [
            c
            for c in self.api.calls[start:]
            if c.method == "POST"
            and c.path.startswith("/channels/")
            and int(c.path.split("/")[2]) in dm_channels
        ]

    async def _interact(self, payload: dict[str, Any]) -> Seen | None:
        start, done = len(self.api.calls), self.handled.count
        await self.api.send_interaction(payload)
        await self.handled.wait(done + 1)
        return self._said(payload, start)

    def _payload(self, name: str, verb: str, options: dict[str, Any], user: str) -> dict[str, Any]:
        given = {
            k: UserRef(self.uid(v)) if k in user_options(name, verb) else v
            for k, v in options.items()
        }
        permissions = MANAGE_GUILD if user == "admin" else 0
        return self.api.command(
            name, verb or None, given, user=self.uid(user), permissions=permissions
        )

    # ------------------------------------------------------------ commands

    async def command(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> Seen:
        """Run the application command with its options; return its response and follow-ups."""
        seen = await self._interact(self._payload(name, verb, options, user))
        assert seen is not None, f"/{name} {verb} said nothing"
        return seen

    async def first_response_while_held(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> tuple[str, Seen]:
        """Send a command while the database is held; return its first response, then the rest."""
        payload = self._payload(name, verb, options, user)
        start, done = len(self.api.calls), self.handled.count
        self.store.gate.clear()
        try:
            first = await self.api.interact(payload, within=WITHIN)
        finally:
            self.store.gate.set()
        await self.handled.wait(done + 1)
        seen = self._said(payload, start)
        assert seen is not None
        kinds = {4: "message", 5: "deferred"}
        return kinds.get(first.body.get("type"), str(first.body.get("type"))), seen

    async def card(self, tag: str = "storage", *, user: str = "ada") -> Card:
        """Post a question with /quiz next and return its card."""
        payload = self._payload("quiz", "next", {"tag": tag}, user)
        seen = await self._interact(payload)
        assert seen is not None and not seen.private, seen
        message = self.api.response_message(payload)
        custom_id = message["components"][0]["components"][0]["custom_id"]
        card = Card(int(custom_id.split(":")[1]), message["id"], "\n".join(texts(message)))

        async def attached() -> bool:
            return (await self.engine.get_round(card.round_id)).message_ref == card.ref

        await eventually(attached)
        return card

    def fail_next_card_post(self) -> None:
        """Make the next interaction response fail the way Discord refuses a missing permission."""
        self.api.refuse("POST", r"^/interactions/\d+/[^/]+/callback$")

    def charts(self) -> list[bytes]:
        """Return the charts attached so far."""
        return [f.data for c in self.api.calls for f in c.files if f.filename.endswith(".png")]

    async def scheduled_card(self) -> Card:
        """Wait for a card nobody asked for (the daily question) and return it."""
        channel = self.place.channel

        def card(c: Call) -> bool:
            return (
                c.method == "POST"
                and c.path == f"/channels/{channel}/messages"
                and bool(c.body and c.body.get("components"))
            )

        await self.api.wait_for(card, within=WITHIN)
        message = next(m for m in self.api.messages_in(int(channel)) if m["components"])
        round_id = int(message["components"][0]["components"][0]["custom_id"].split(":")[1])

        async def attached() -> bool:
            return (await self.engine.get_round(round_id)).message_ref == message["id"]

        await eventually(attached)
        return Card(round_id, message["id"], "\n".join(texts(message)))

    async def play(self, tag: str, typed: str) -> Seen:
        """Post a question of a tag and answer it with a click."""
        return await self.click(await self.card(tag), typed)

    async def ask_for(self, tag: str) -> Seen:
        """Ask for a question of a tag."""
        return await self.command("quiz", "next", {"tag": tag})

    # ------------------------------------------------------------ answers

    async def click(
        self, card: Card, key: str, *, user: str = "ada", elsewhere: bool = False
    ) -> Seen:
        """Click a choice of a card; return the private reply."""
        payload = self.api.click(
            int(card.ref),
            f"quiz:{card.round_id}:{key}",
            user=self.uid(user),
            guild=OTHER_GUILD if elsewhere else None,
        )
        seen = await self._interact(payload)
        assert seen is not None, "the click was not answered"
        return seen

    async def react(self, card: Card, key: str, *, user: str = "ada") -> Seen | None:
        """React to a card with the letter for a choice; return the direct message, if any."""
        start, done = len(self.api.calls), self.handled.count
        await self.api.react(int(card.ref), LETTER_EMOJI[key], user=self.uid(user))
        await self.handled.wait(done + 1)
        told = self._dms(start, user)
        if not told:
            return None
        return Seen("\n".join(str(c.body.get("content", "")) for c in told), private=True)

    async def revealed(self, card: Card) -> Seen:
        """Wait for the card's results and its explanation; return both."""

        def closed(c: Call) -> bool:
            return (
                c.method == "PATCH"
                and c.path.endswith(f"/messages/{card.ref}")
                and c.body["embeds"][0]["title"].endswith("closed")
            )

        edit = await self.api.wait_for(closed, within=WITHIN)
        post = await self.api.wait_for(
            lambda c: (
                c.method == "POST"
                and (
                    c.path == f"/channels/{card.ref}/messages"
                    or bool(c.body and c.body.get("message_reference"))
                )
            ),
            within=WITHIN,
        )
        return Seen("\n".join(texts(edit.body) + texts(post.body)), private=False)

    async def review(self, *, user: str = "ada") -> ReviewSeen:
        """Ask for a review; return what was shown and its buttons' ids."""
        payload = self._payload("quiz", "review", {}, user)
        seen = await self._interact(payload)
        assert seen is not None
        message = self.api.response_message(payload)
        values = [
            b["custom_id"] for row in message.get("components", []) for b in row["components"]
        ]
        return ReviewSeen(seen, values, message["id"])

    async def review_click(self, review: ReviewSeen, index: int, *, user: str = "ada") -> Seen:
        """Click one button of a private review question."""
        payload = self.api.click(int(review.ref), review.values[index], user=self.uid(user))
        seen = await self._interact(payload)
        assert seen is not None
        return seen

    def posted(self) -> list[str]:
        """Return what was posted in the channel, oldest first."""
        path = f"/channels/{self.place.channel}/messages"
        return [
            " ".join(texts(c.body))
            for c in self.api.calls
            if c.method == "POST" and c.path == path and c.status < 300 and c.body
        ]

    async def track(self, *, user: str = "ada") -> ReviewSeen:
        """Run /quiz track; return what was shown and the buttons of the question it asked."""
        payload = self._payload("quiz", "track", {}, user)
        start = len(self.api.messages)
        seen = await self._interact(payload)
        assert seen is not None
        for message in list(self.api.messages.values())[start:]:
            values = [
                b["custom_id"]
                for row in message.get("components", [])
                for b in row["components"]
                if b.get("custom_id", "").startswith("track:")
            ]
            if values:
                return ReviewSeen(seen, values, message["id"])
        return ReviewSeen(seen, [])

    # ------------------------------------------------------------ practice

    def _shown(self, payload: dict[str, Any], seen: Seen) -> ReviewSeen:
        made = [
            m
            for m in self.api.messages.values()
            if (m.get("interaction_metadata") or {}).get("id") == payload["id"]
        ]
        if not made:
            return ReviewSeen(seen, [])
        message = made[-1]
        values = [
            b["custom_id"] for row in message.get("components", []) for b in row["components"]
        ]
        return ReviewSeen(seen, values, message["id"])

    def public_posts(self) -> int:
        """Return how many messages the bot has posted for the whole channel."""
        return sum(1 for m in self.api.messages.values() if not int(m["flags"]) & EPHEMERAL)

    async def practice(self, options: dict[str, Any], *, user: str = "ada") -> ReviewSeen:
        """Start a practice session; return what was shown and its buttons' ids."""
        payload = self._payload("quiz", "practice", options, user)
        seen = await self._interact(payload)
        assert seen is not None
        return self._shown(payload, seen)

    async def press(self, shown: ReviewSeen, value: str, *, user: str = "ada") -> ReviewSeen:
        """Press one of the bot's buttons on a private message; return the reply and its buttons."""
        assert value in shown.values, (value, shown.values)
        permissions = MANAGE_GUILD if user == "admin" else 0
        payload = self.api.click(
            int(shown.ref), value, user=self.uid(user), permissions=permissions
        )
        seen = await self._interact(payload)
        assert seen is not None
        return self._shown(payload, seen)

    async def practise_once(self, topic: str, key: str, *, user: str = "ada") -> Seen:
        """Practise one question of a topic, answering ``key``; return all that was shown."""
        asked = await self.practice({"topic": topic, "count": 1}, user=user)
        value = next(v for v in asked.values if v.endswith(f":{key}"))
        told = await self.press(asked, value, user=user)
        return Seen(
            asked.seen.text + "\n" + told.seen.text, asked.seen.private and told.seen.private
        )

    async def round_offers(self, *, user: str = "ada") -> ReviewSeen:
        """Return the buttons under the latest private reply to one of the person's clicks."""
        for message in reversed(list(self.api.messages.values())):
            meta = message.get("interaction_metadata") or {}
            if str((meta.get("user") or {}).get("id")) == str(self.uid(user)):
                values = [
                    b["custom_id"]
                    for row in message.get("components", [])
                    for b in row["components"]
                ]
                return ReviewSeen(Seen(message.get("content", ""), True), values, message["id"])
        return ReviewSeen(Seen("", True), [])

    async def me_page(self, *, user: str = "ada") -> ReviewSeen:
        """Run /quiz me; return the page and its buttons' ids."""
        payload = self._payload("quiz", "me", {}, user)
        seen = await self._interact(payload)
        assert seen is not None
        return self._shown(payload, seen)

    async def practise_sure(self, topic: str, key: str, *, user: str = "ada") -> Seen:
        """Practise one question of a topic, answer ``key``, then press "I was sure"."""
        asked = await self.practice({"topic": topic, "count": 1}, user=user)
        value = next(v for v in asked.values if v.endswith(f":{key}"))
        told = await self.press(asked, value, user=user)
        sure = next(v for v in told.values if v.endswith(":sure"))
        rated = await self.press(told, sure, user=user)
        return Seen("\n".join([asked.seen.text, told.seen.text, rated.seen.text]), True)

    # ------------------------------------------------------------ forms

    def _modal_fields(self, modal: dict[str, Any]) -> list[str]:
        return [
            (row["component"] if row["type"] == 18 else row["components"][0])["custom_id"]
            for row in modal["components"]
        ]

    async def _pages(self, values: dict[str, str], user: str) -> tuple[list[str], Seen | None]:
        """Open /quiz add and send each page of it with ``values``, pressing Continue between
        pages; return the fields seen and the last answer."""
        payload = self._payload("quiz", "add", {}, user)
        await self._interact(payload)
        fields: list[str] = []
        permissions = MANAGE_GUILD if user == "admin" else 0
        while True:
            modal = self.api.modal_of(payload)
            assert modal is not None, "no modal was opened"
            fields += self._modal_fields(modal)
            sent = self.api.modal_submit(
                payload, modal, values, user=self.uid(user), permissions=permissions
            )
            seen = await self._interact(sent)
            if seen is None or M.ADD_CONTINUE not in seen.text:
                return fields, seen
            shown = self._shown(sent, seen)
            following = [v for v in shown.values if v.startswith("add:")]
            assert following, seen
            payload = self.api.click(int(shown.ref), following[0], user=self.uid(user))
            await self._interact(payload)

    async def form_fields(self, *, user: str = "ada") -> list[str]:
        """Run /quiz add; return the names of the form's fields, every page of it."""
        fields, _ = await self._pages({}, user)
        return fields

    async def add(self, values: dict[str, str], *, user: str = "ada") -> Sent:
        """Run /quiz add and send each page of the form filled in with ``values``."""
        _, seen = await self._pages(values, user)
        assert seen is not None and seen.private, seen
        errors = errors_of(seen.text)
        return Sent(errors) if errors else Sent({}, seen)

    async def press_form(
        self, shown: ReviewSeen, value: str, changes: dict[str, str], *, user: str = "ada"
    ) -> tuple[dict[str, str], Sent]:
        """Press a button that opens a form (a proposal's Edit or Reject); send each page with
        what it held, ``changes`` made. Return what it held, and what came of it."""
        assert value in shown.values, (value, shown.values)
        payload = self.api.click(int(shown.ref), value, user=self.uid(user))
        await self._interact(payload)
        held: dict[str, str] = {}
        while True:
            modal = self.api.modal_of(payload)
            assert modal is not None, "no modal was opened"
            page: dict[str, str] = {}
            for row in modal["components"]:
                inner = row["component"] if row["type"] == 18 else row["components"][0]
                if inner["type"] == 3:
                    picked = [o["value"] for o in inner.get("options", []) if o.get("default")]
                    page[inner["custom_id"]] = picked[0] if picked else ""
                else:
                    page[inner["custom_id"]] = inner.get("value") or ""
            held |= page
            sent = self.api.modal_submit(payload, modal, page | changes, user=self.uid(user))
            seen = await self._interact(sent)
            if seen is None or M.ADD_CONTINUE not in seen.text:
                break
            following = [v for v in self._shown(sent, seen).values if v.startswith("add:")]
            assert following, seen
            payload = self.api.click(
                int(self._shown(sent, seen).ref), following[0], user=self.uid(user)
            )
            await self._interact(payload)
        assert seen is not None and seen.private, seen
        errors = errors_of(seen.text)
        return held, Sent(errors) if errors else Sent({}, seen)

    async def shown(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> ReviewSeen:
        """Run a command; return what the person saw and the buttons under it."""
        payload = self._payload(name, verb, options, user)
        seen = await self._interact(payload)
        assert seen is not None, f"/{name} {verb} said nothing"
        return self._shown(payload, seen)

    def notices(self, user: str) -> list[ReviewSeen]:
        """Return the direct messages the bot sent the person, with their buttons."""
        return [
            ReviewSeen(
                Seen("\n".join(texts(c.body)), True),
                [
                    b["custom_id"]
                    for row in c.body.get("components") or []
                    for b in row["components"]
                ],
            )
            for c in self._dms(0, user)
        ]

    async def report(self, card: Card, values: dict[str, str], *, user: str = "ada") -> Sent:
        """Press "Report a problem" on a revealed card, fill in its modal and send it."""
        message = self.api.messages[int(card.ref)]
        button = next(
            b["custom_id"]
            for row in message["components"]
            for b in row["components"]
            if b["custom_id"].startswith("report:")
        )
        payload = self.api.click(int(card.ref), button, user=self.uid(user))
        await self._interact(payload)
        modal = self.api.modal_of(payload)
        assert modal is not None, "no modal was opened"
        permissions = MANAGE_GUILD if user == "admin" else 0
        sent = self.api.modal_submit(
            payload, modal, values, user=self.uid(user), permissions=permissions
        )
        seen = await self._interact(sent)
        assert seen is not None and seen.private, seen
        errors = errors_of(seen.text)
        return Sent(errors) if errors else Sent({}, seen)


# ---------------------------------------------------------------- Microsoft Teams


@dataclass
class TeamsDriver:
    """The real Agents SDK pipeline on the chat runner, against the connector stand-in.

    Activities are signed with the stand-in's key and checked by the SDK's token validator;
    the bot's replies go out through the SDK's connector client.
    """

    tmp_path: Path
    clock: FakeClock
    platform: str = "teams"
    place: Place = field(default_factory=lambda: Place("teams", TENANT, TEAMS_CHANNEL))
    engine: QuizEngine = field(init=False)
    standin: TeamsStandIn = field(init=False)

    def uid(self, user: str) -> str:
        """Return a person's Teams user id."""
        return f"29:{user}"

    def mention(self, user: str) -> str:
        """Return how the bot writes a person in a card (their id, in bold)."""
        return f"**{self.uid(user)}**"

    async def start(self) -> None:
        """Start the stand-in and the bot."""
        self.standin = TeamsStandIn(owners=[self.uid("admin")])
        await self.standin.start()
        await self._open()

    async def _open(self) -> None:
        from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration

        store = await open_store(f"sqlite+aiosqlite:///{self.tmp_path / 'quiz.db'}")
        self.store = GatedStore(store)
        self.engine = make_engine(self.store, self.clock)
        configuration = AgentAuthConfiguration(client_id=self.standin.app_id)
        self.bot = TeamsBot(
            self.engine,
            store,
            app_id=self.standin.app_id,
            configuration=configuration,
            factory=client_factory(configuration, StandInTokens(self.standin)),
            keys_url=self.standin.keys_url,
            charts=CHARTS,
            refresh_every=30.0,
            answer_deadline=0.3,
        )
        self.handled = Handled(self.bot.chat)
        self.core = self.bot.chat
        listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        transport = TeamsHttp(self.bot, "127.0.0.1", 0, listening.set_result)
        loops = Loops(self.bot.chat, timer_interval=0.05, scheduler_interval=0.05)
        self._stop = asyncio.Event()
        self._runner = asyncio.create_task(
            run(self.bot.chat, transport, loops, store=store, shutdown_timeout=5, stop=self._stop)
        )
        self.url = await asyncio.wait_for(listening, WITHIN)
        assert self.url.endswith(MESSAGES_PATH)
        # Large charts are served by the bot itself, at its (here local) public address.
        self.bot.images.base = self.url.removesuffix(MESSAGES_PATH)
        self._sql = store
        # Teams has spoken to the bot from the channel before anything is posted there.
        await self.text("quiz", "help")

    async def _close(self) -> None:
        self.store.gate.set()
        self._stop.set()
        await asyncio.wait_for(self._runner, WITHIN)
        await self._sql.close()

    async def stop(self) -> None:
        """Stop the bot and the stand-in."""
        await self._close()
        await self.standin.stop()

    async def restart(self) -> None:
        """Stop the bot and start a new one on the same database, as after a crash or deploy."""
        await self._close()
        await self._open()

    # ------------------------------------------------------------ what was said

    def _said(self, start: int, user: str, about: str | None, answer: Any = None) -> Seen | None:
        chat = self.standin.chat_id(self.uid(user))
        private: list[str] = []
        public: list[str] = []
        if answer is not None and isinstance(answer.body, dict):
            value = answer.body.get("value")
            if isinstance(value, str) and value:
                private.append(value)
        for call in self.standin.calls[start:]:
            if call.method != "POST" or call.status >= 300 or call.body.get("type") != "message":
                continue
            path = urllib.parse.unquote(call.path)
            if path == f"/v3/conversations/{chat}/activities":
                private += texts(call.body)
            elif path == f"/v3/conversations/{TEAMS_CHANNEL}/activities" or (
                about is not None
                and path == f"/v3/conversations/{TEAMS_CHANNEL}/activities/{about}"
            ):
                public += texts(call.body)
        if not private and not public:
            return None
        return Seen("\n".join(private + public), private=not public)

    async def _deliver(self, activity: dict[str, Any]) -> Any:
        done = self.handled.count
        answer = await self.standin.deliver(self.url, activity)
        assert answer.status < 300, answer
        await self.handled.wait(done + 1)
        return answer

    # ------------------------------------------------------------ commands

    async def command(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> Seen:
        """Mention the bot with the command typed after it, a person named as Teams writes a
        mention (``<at>ada</at>``, the id in the entities); return what followed."""
        named = user_options(name, verb)
        people = {str(v): self.uid(str(v)) for k, v in options.items() if k in named}
        given = {k: f"<at>{v}</at>" if k in named else v for k, v in options.items()}
        return await self.text(name, spell(name, verb, given), user=user, people=people)

    async def text(
        self, name: str, line: str, *, user: str = "ada", people: dict[str, str] | None = None
    ) -> Seen:
        """Mention the bot in the channel with a command's text."""
        activity = self.standin.mention(
            f"{name} {line}".strip(), user=self.uid(user), name=user, people=people
        )
        start = len(self.standin.calls)
        await self._deliver(activity)
        seen = self._said(start, user, activity["id"])
        assert seen is not None, f"@quizbot {name} {line} said nothing"
        return seen

    async def first_response_while_held(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> tuple[str, Seen]:
        """Send a command while the database is held; return its first response, then the rest."""
        line = f"{name} {spell(name, verb, options)}".strip()
        activity = self.standin.mention(line, user=self.uid(user), name=user)
        start, done = len(self.standin.calls), self.handled.count
        self.store.gate.clear()
        try:
            sending = asyncio.create_task(self.standin.deliver(self.url, activity))
            first = await self.standin.wait_for(
                lambda: next(
                    (c.body["type"] for c in self.standin.calls[start:] if c.body.get("type")),
                    None,
                ),
                WITHIN,
            )
        finally:
            self.store.gate.set()
        answer = await sending
        assert answer.status < 300
        await self.handled.wait(done + 1)
        seen = self._said(start, user, activity["id"])
        assert seen is not None
        return first, seen

    def _cards_in_channel(self) -> list[Any]:
        return [
            p
            for p in self.standin.in_conversation(TEAMS_CHANNEL)
            if any(
                a.get("data", {}).get("button", "").startswith("quiz:")
                for a in _card(p.activity).get("actions", [])
            )
        ]

    async def card(self, tag: str = "storage", *, user: str = "ada") -> Card:
        """Post a question with ``@quizbot next`` and return its card."""
        before = len(self._cards_in_channel())
        seen = await self.command("quiz", "next", {"tag": tag}, user=user)
        assert not seen.private, seen.text
        posted = self._cards_in_channel()[before]
        button = _card(posted.activity)["actions"][0]["data"]["button"]
        card = Card(int(button.split(":")[1]), posted.id, "\n".join(texts(posted.activity)))

        async def attached() -> bool:
            return (await self.engine.get_round(card.round_id)).message_ref == card.ref

        await eventually(attached)
        return card

    def fail_next_card_post(self) -> None:
        """Make the next post in the channel fail the way the connector refuses a removed bot."""
        self.standin.refuse("POST", r"^/v3/conversations/19:quiz@thread\.tacv2/activities$")

    def charts(self) -> list[bytes]:
        """Return the chart images the bot's cards carried (inline, or served by the bot)."""
        found = []
        for posted in self.standin.posted.values():
            for element in _card(posted.activity).get("body", []):
                url = element.get("url", "")
                if element.get("type") != "Image":
                    continue
                if url.startswith("data:image/png;base64,"):
                    found.append(base64.b64decode(url.split(",", 1)[1]))
                elif "/teams/charts/" in url:
                    # Served by the bot from the database; read there (this method is not async).
                    key = url.rsplit("/", 1)[1].removesuffix(".png")
                    with contextlib.closing(sqlite3.connect(self.tmp_path / "quiz.db")) as db:
                        row = db.execute("SELECT png FROM chart_images WHERE key = ?", (key,))
                        (png,) = row.fetchone()
                    found.append(bytes(png))
        return found

    async def scheduled_card(self) -> Card:
        """Wait for a card nobody asked for (the daily question) and return it."""
        before = len(self._cards_in_channel())
        await self.standin.wait_for(lambda: len(self._cards_in_channel()) > before, WITHIN)
        posted = self._cards_in_channel()[before]
        round_id = int(_card(posted.activity)["actions"][0]["data"]["button"].split(":")[1])

        async def attached() -> bool:
            return (await self.engine.get_round(round_id)).message_ref == posted.id

        await eventually(attached)
        return Card(round_id, posted.id, "\n".join(texts(posted.activity)))

    async def play(self, tag: str, typed: str) -> Seen:
        """Post a question of a tag and answer it with a click."""
        return await self.click(await self.card(tag), typed)

    async def ask_for(self, tag: str) -> Seen:
        """Ask for a question of a tag."""
        return await self.command("quiz", "next", {"tag": tag})

    # ------------------------------------------------------------ answers

    async def click(
        self, card: Card, key: str, *, user: str = "ada", elsewhere: bool = False
    ) -> Seen:
        """Press a choice of a card; return the private reply (the invoke's response)."""
        tenant = "22222222-2222-4222-8222-222222222222" if elsewhere else TENANT
        activity = self.standin.press(
            card.ref, {"button": f"quiz:{card.round_id}:{key}"}, user=self.uid(user), tenant=tenant
        )
        start = len(self.standin.calls)
        answer = await self._deliver(activity)
        seen = self._said(start, user, None, answer)
        assert seen is not None, "the click was not answered"
        return seen

    async def react(self, card: Card, key: str, *, user: str = "ada") -> Seen | None:
        """Teams has no letter reactions (see the scenarios' skips)."""
        raise NotImplementedError("Teams reactions are a fixed set with no letters")

    async def revealed(self, card: Card) -> Seen:
        """Wait for the card's results and its explanation in its thread; return both."""

        def found() -> Any:
            posted = self.standin.posted.get(card.ref)
            closed = (
                posted is not None
                and posted.updates
                and not [
                    a
                    for a in _card(posted.activity).get("actions", [])
                    if a["data"]["button"].startswith("quiz:")
                ]
            )
            replies = self.standin.replies_to(card.ref)
            return (posted, replies) if closed and replies else None

        posted, replies = await self.standin.wait_for(found, WITHIN)
        parts = texts(posted.activity) + texts(replies[-1].activity)
        return Seen("\n".join(parts), private=False)

    async def review(self, *, user: str = "ada") -> ReviewSeen:
        """Ask for a review; return what was shown and its buttons' ids."""
        seen = await self.command("quiz", "review", {}, user=user)
        chat = self.standin.chat_id(self.uid(user))
        asked = [p for p in self.standin.in_conversation(chat) if _card(p.activity).get("actions")]
        values: list[str] = []
        ref = ""
        if asked and "Review" in seen.text:
            values = [a["data"]["button"] for a in _card(asked[-1].activity)["actions"]]
            ref = asked[-1].id
        return ReviewSeen(seen, values, ref)

    async def review_click(self, review: ReviewSeen, index: int, *, user: str = "ada") -> Seen:
        """Press one button of a review card in the person's chat with the bot."""
        activity = self.standin.press(
            review.ref, {"button": review.values[index]}, user=self.uid(user), personal=True
        )
        start = len(self.standin.calls)
        answer = await self._deliver(activity)
        seen = self._said(start, user, None, answer)
        assert seen is not None
        return seen

    def posted(self) -> list[str]:
        """Return what was posted in the channel, oldest first."""
        return [" ".join(texts(p.activity)) for p in self.standin.in_conversation(TEAMS_CHANNEL)]

    async def track(self, *, user: str = "ada") -> ReviewSeen:
        """Run /quiz track; return what was shown and the buttons of the question it asked."""
        chat = self.standin.chat_id(self.uid(user))
        before = len(self.standin.in_conversation(chat))
        seen = await self.command("quiz", "track", {}, user=user)
        for p in self.standin.in_conversation(chat)[before:]:
            values = [
                a["data"]["button"]
                for a in _card(p.activity).get("actions", [])
                if a.get("data", {}).get("button", "").startswith("track:")
            ]
            if values:
                return ReviewSeen(seen, values, p.id)
        return ReviewSeen(seen, [])

    # ------------------------------------------------------------ practice

    def _chat_cards(self, user: str) -> list[Any]:
        chat = self.standin.chat_id(self.uid(user))
        return [p for p in self.standin.posted.values() if p.conversation == chat]

    def _shown(self, seen: Seen, before: int, user: str) -> ReviewSeen:
        made = [p for p in self._chat_cards(user)[before:] if _card(p.activity).get("actions")]
        if not made:
            return ReviewSeen(seen, [])
        actions = _card(made[-1].activity)["actions"]
        return ReviewSeen(seen, [a["data"]["button"] for a in actions], made[-1].id)

    def public_posts(self) -> int:
        """Return how many messages the bot has posted for the whole channel."""
        return sum(1 for p in self.standin.posted.values() if p.conversation == TEAMS_CHANNEL)

    async def practice(self, options: dict[str, Any], *, user: str = "ada") -> ReviewSeen:
        """Start a practice session; return what was shown and its buttons' ids."""
        before = len(self._chat_cards(user))
        seen = await self.command("quiz", "practice", options, user=user)
        return self._shown(seen, before, user)

    async def press(self, shown: ReviewSeen, value: str, *, user: str = "ada") -> ReviewSeen:
        """Press one of the bot's buttons on a card in the person's chat with the bot, sending
        the data the button carries."""
        assert value in shown.values, (value, shown.values)
        posted = self.standin.posted.get(shown.ref)
        actions = _card(posted.activity).get("actions", []) if posted is not None else []
        data = next(
            (a["data"] for a in actions if (a.get("data") or {}).get("button") == value),
            {"button": value},
        )
        activity = self.standin.press(shown.ref, data, user=self.uid(user), personal=True)
        start, before = len(self.standin.calls), len(self._chat_cards(user))
        answer = await self._deliver(activity)
        seen = self._said(start, user, None, answer)
        assert seen is not None, f"pressing {value} said nothing"
        return self._shown(seen, before, user)

    async def practise_once(self, topic: str, key: str, *, user: str = "ada") -> Seen:
        """Practise one question of a topic, answering ``key``; return all that was shown."""
        asked = await self.practice({"topic": topic, "count": 1}, user=user)
        value = next(v for v in asked.values if v.endswith(f":{key}"))
        told = await self.press(asked, value, user=user)
        return Seen(
            asked.seen.text + "\n" + told.seen.text, asked.seen.private and told.seen.private
        )

    async def round_offers(self, *, user: str = "ada") -> ReviewSeen:
        """Teams answers a click with the invoke's text, which carries no buttons."""
        return ReviewSeen(Seen("", True), [])

    async def me_page(self, *, user: str = "ada") -> ReviewSeen:
        """Run /quiz me in the channel; return the page (in the person's chat) and its buttons."""
        before = len(self._chat_cards(user))
        seen = await self.command("quiz", "me", {}, user=user)
        return self._shown(seen, before, user)

    async def practise_sure(self, topic: str, key: str, *, user: str = "ada") -> Seen:
        """Practise one question of a topic, answer ``key``, then press "I was sure"."""
        asked = await self.practice({"topic": topic, "count": 1}, user=user)
        value = next(v for v in asked.values if v.endswith(f":{key}"))
        told = await self.press(asked, value, user=user)
        sure = next(v for v in told.values if v.endswith(":sure"))
        rated = await self.press(told, sure, user=user)
        return Seen("\n".join([asked.seen.text, told.seen.text, rated.seen.text]), True)

    # ------------------------------------------------------------ forms

    async def _open_form(self, user: str) -> tuple[dict[str, Any], str]:
        before = len(self._chat_cards(user))
        await self.text("quiz", "add", user=user)
        made = [
            p
            for p in self._chat_cards(user)[before:]
            if any(b["type"].startswith("Input.") for b in _card(p.activity).get("body", []))
        ]
        assert made, "no form was sent"
        return _card(made[-1].activity), made[-1].id

    async def form_fields(self, *, user: str = "ada") -> list[str]:
        """Run /quiz add; return the names of the fields of the form card it sent."""
        card, _ = await self._open_form(user)
        return [b["id"] for b in card["body"] if b["type"].startswith("Input.")]

    async def press_form(
        self, shown: ReviewSeen, value: str, changes: dict[str, str], *, user: str = "ada"
    ) -> tuple[dict[str, str], Sent]:
        """Press a button that opens a form (a proposal's Edit or Reject); send the form card
        with what it held, ``changes`` made. Return what it held, and what came of it."""
        assert value in shown.values, (value, shown.values)
        before = len(self._chat_cards(user))
        activity = self.standin.press(
            shown.ref, {"button": value}, user=self.uid(user), personal=True
        )
        await self._deliver(activity)
        made = [
            p
            for p in self._chat_cards(user)[before:]
            if any(b["type"].startswith("Input.") for b in _card(p.activity).get("body", []))
        ]
        assert made, "no form was sent"
        card = _card(made[-1].activity)
        held = {
            b["id"]: str(b.get("value") or "")
            for b in card["body"]
            if b["type"].startswith("Input.")
        }
        return held, await self._send_form(card, made[-1].id, held | changes, user)

    async def add(self, values: dict[str, str], *, user: str = "ada") -> Sent:
        """Run /quiz add, fill in the card's inputs with ``values`` and press its submit."""
        card, ref = await self._open_form(user)
        return await self._send_form(card, ref, values, user)

    async def _send_form(
        self, card: dict[str, Any], ref: str, values: dict[str, str], user: str
    ) -> Sent:
        inputs = [b["id"] for b in card["body"] if b["type"].startswith("Input.")]
        data = dict(card["actions"][0]["data"]) | {k: values.get(k, "") for k in inputs}
        activity = self.standin.press(ref, data, user=self.uid(user), personal=True)
        answer = await self._deliver(activity)
        body = answer.body if isinstance(answer.body, dict) else {}
        assert body.get("type") == CARD_TYPE, body
        shown = body["value"]["body"]
        errors = {
            b["id"].removesuffix("-error"): b["text"]
            for b in shown
            if b.get("id", "").endswith("-error")
        }
        if errors:
            assert any(b["type"].startswith("Input.") for b in shown), "the form is not shown"
            return Sent(errors)
        return Sent({}, Seen("\n".join(texts(shown)), private=True))

    async def shown(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> ReviewSeen:
        """Run a command; return what the person saw and the buttons of the card in their
        chat with the bot."""
        before = len(self._chat_cards(user))
        seen = await self.command(name, verb, options, user=user)
        return self._shown(seen, before, user)

    def notices(self, user: str) -> list[ReviewSeen]:
        """Return what the bot sent to the person's chat with it, with the buttons."""
        return [
            ReviewSeen(
                Seen("\n".join(texts(p.activity)), True),
                [a["data"]["button"] for a in _card(p.activity).get("actions", [])],
                p.id,
            )
            for p in self._chat_cards(user)
        ]

    async def report(self, card: Card, values: dict[str, str], *, user: str = "ada") -> Sent:
        """Press "Report a problem" on a revealed card, fill in the form it sends to the
        person's chat and send it."""
        posted = self.standin.posted[card.ref]
        button = next(
            a["data"]["button"]
            for a in _card(posted.activity).get("actions", [])
            if a["data"]["button"].startswith("report:")
        )
        before = len(self._chat_cards(user))
        pressed = self.standin.press(card.ref, {"button": button}, user=self.uid(user))
        await self._deliver(pressed)
        made = [
            p
            for p in self._chat_cards(user)[before:]
            if any(b["type"].startswith("Input.") for b in _card(p.activity).get("body", []))
        ]
        assert made, "no form was sent"
        return await self._send_form(_card(made[-1].activity), made[-1].id, values, user)


def _card(activity: dict[str, Any]) -> dict[str, Any]:
    """Return the Adaptive Card a message activity carries (empty if none)."""
    for attachment in activity.get("attachments") or []:
        if attachment.get("contentType") == "application/vnd.microsoft.card.adaptive":
            content: dict[str, Any] = attachment["content"]
            return content
    return {}


# ---------------------------------------------------------------- the terminal


@dataclass
class TerminalDriver:
    """``quizbot play``'s session on the same engine, fed typed lines."""

    tmp_path: Path
    clock: FakeClock
    platform: str = "terminal"
    place: Place = field(default_factory=lambda: Place("console", "local", "terminal"))
    engine: QuizEngine = field(init=False)

    async def start(self) -> None:
        """Open the store and the engine."""
        self._sql = await open_store(f"sqlite+aiosqlite:///{self.tmp_path / 'quiz.db'}")
        self.engine = make_engine(self._sql, self.clock)

    async def stop(self) -> None:
        """Close the store."""
        await self._sql.close()

    async def play(self, tag: str, typed: str) -> Seen:
        """Play one question of a tag, typing a line; return what the terminal printed."""
        out = io.StringIO()
        stdin, sys.stdin = sys.stdin, io.StringIO(typed + "\n")
        try:
            await play_session(self.engine, user="ada", tag=tag, count=1, out=out)
        finally:
            sys.stdin = stdin
        return Seen(out.getvalue(), private=True)

    async def ask_for(self, tag: str) -> Seen:
        """Start a session on a tag and quit at the first question."""
        return await self.play(tag, "q")

    async def command(
        self, name: str, verb: str, options: dict[str, Any], *, user: str = "ada"
    ) -> Seen:
        """Type the command at ``quizbot play``'s prompt as chat text; return what it printed."""
        return await self.text(name, spell(name, verb, options), user=user)

    async def text(self, name: str, line: str, *, user: str = "ada") -> Seen:
        """Type ``/NAME LINE`` at the session's prompt; return what the terminal printed, with
        the lines it wrapped joined again (everything the terminal shows is private)."""
        out = io.StringIO()
        assert await Terminal(self.engine, user, out).typed(f"/{name} {line}".strip())
        return Seen(" ".join(out.getvalue().split()), private=True)

    async def practise_once(self, topic: str, key: str, *, user: str = "ada") -> Seen:
        """Practise one question of a topic in ``quizbot play``, typing ``key``."""
        out = io.StringIO()
        stdin, sys.stdin = sys.stdin, io.StringIO(key + "\n")
        try:
            await play_session(self.engine, user=user, topic=topic, count=1, out=out)
        finally:
            sys.stdin = stdin
        return Seen(out.getvalue(), private=True)

    async def practise_sure(self, topic: str, key: str, *, user: str = "ada") -> Seen:
        """Practise one question of a topic in ``quizbot play`` at a terminal: type ``key``,
        then ``s`` (I was sure), then Enter."""
        out = io.StringIO()
        stdin, sys.stdin = sys.stdin, io.StringIO(f"{key}\ns\n\n")
        try:
            await play_session(
                self.engine, user=user, topic=topic, count=1, out=out, interactive=True
            )
        finally:
            sys.stdin = stdin
        return Seen(out.getvalue(), private=True)


# Every chat platform's driver: a platform added here runs every scenario written for ``chat``
# (docs/platforms.md). The terminal runs those written for ``face``.
CHAT_DRIVERS: dict[str, Callable[[Path, FakeClock], Any]] = {
    "slack": SlackDriver,
    "discord": DiscordDriver,
    "teams": TeamsDriver,
}
DRIVERS = {**CHAT_DRIVERS, "terminal": TerminalDriver}


@contextlib.asynccontextmanager
async def driving(kind: str, tmp_path: Path, clock: FakeClock) -> AsyncIterator[Any]:
    """Start a driver of one kind, and stop it (bounded) on the way out."""
    driver = DRIVERS[kind](tmp_path, clock)
    await driver.start()
    try:
        yield driver
    finally:
        await driver.stop()
