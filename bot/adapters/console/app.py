"""The terminal's app: typed lines turned into the events every platform hands the chat core,
and the session that runs them (the terminal has no transport: it runs in the foreground).

A letter is a press of the choice's button, ``s`` and ``g`` the "I was sure" and "I guessed"
buttons, Enter the practice session's Next, ``q`` (or the end of input, or Ctrl-C) its Stop:
the ids of ``bot.chat.buttons``, read and answered by ``Chat`` with the flows and sentences of
Slack, Discord and Teams. A review is ``/quiz review``, as typed in chat, and a line typed as a
command (``/quiz me``) is one. What is the terminal's own is how it reads: the prompt, the hint
for a line that is no choice, and the full explanation, which waits for ``m`` at a terminal and
follows at once when input is piped.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TextIO

from rich.console import Console, RenderableType

from bot.adapters.console import render
from bot.adapters.console.handlers import ConsoleExchange, ConsolePort
from bot.chat import Chat, words
from bot.chat.buttons import (
    PRACTICE_NEXT,
    PRACTICE_STOP,
    Button,
    ConfidenceChoice,
    button_id,
)
from bot.chat.content import Content, Feedback, ReviewAsk
from bot.chat.events import Command, Press
from bot.engine import Place, QuizEngine
from bot.engine.model import Question
from bot.errors import UserError

PLACE = Place(render.PLATFORM, "local", "terminal")
QUIT = {"q", "quit", "exit"}
MORE = {"m", "more"}
# What a typed word presses, after an answer.
RATE = {"s": "sure", "sure": "sure", "g": "guessed", "guessed": "guessed"}

ChartTable = Callable[[Question], str | None]


class _LineReader:
    """Read stdin lines on a daemon thread, so Ctrl-C never waits for a pending read."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._started = False

    def _pump(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            line = sys.stdin.readline()
            loop.call_soon_threadsafe(self._queue.put_nowait, line)
            if line == "":
                return

    async def readline(self) -> str:
        if not self._started:
            self._started = True
            loop = asyncio.get_running_loop()
            threading.Thread(target=self._pump, args=(loop,), daemon=True).start()
        return await self._queue.get()


def is_interactive(screen: Console) -> bool:
    """Return whether a person types at a terminal (then the full explanation waits for them)."""
    return sys.stdin.isatty() and screen.is_terminal


class Terminal:
    """One person at the terminal, talking to the chat core as a platform's user does."""

    def __init__(self, engine: QuizEngine, user: str, out: TextIO) -> None:
        self.screen = render.console(out)
        self.chat = Chat(engine, ConsolePort(self.screen))
        self.engine = engine
        self.user = user
        self._reader = _LineReader()

    async def read(self, prompt: str) -> str | None:
        """Read one line after ``prompt``; None at end of input.

        A line that is a command (``/quiz me``, ``/bandwidth 1GB allreduce 8``) is answered as
        chat answers it, and the prompt comes again.
        """
        while True:
            self.screen.print(prompt, end="")
            self.screen.file.flush()
            line = await self._reader.readline()
            if line == "":
                self.screen.print()
                return None
            if not await self.typed(line.strip()):
                return line.strip()

    async def typed(self, line: str) -> bool:
        """Run a typed command (its first word names one: ``/quiz``, ``/bandwidth``); return
        whether the line was one."""
        name, _, rest = line.removeprefix("/").partition(" ")
        if not line.startswith("/") or name.lower() not in self.chat.grammars:
            return False
        event = Command(PLACE, self.user, name.lower(), text=rest.strip())
        await self.chat.command(event, ConsoleExchange(self.screen))
        return True

    def show(self, shown: RenderableType) -> None:
        """Print something of the terminal's own."""
        self.screen.print(shown)
        self.screen.file.flush()

    async def command(self, verb: str, options: Mapping[str, object]) -> Content | None:
        """Run ``/quiz VERB`` with its options; return what the core answered."""
        exchange = ConsoleExchange(self.screen)
        event = Command(PLACE, self.user, "quiz", verb=verb, options=options)
        await self.chat.command(event, exchange)
        return exchange.last

    async def press(self, button: Button) -> Content | None:
        """Press one of the bot's buttons; return what the core answered."""
        exchange = ConsoleExchange(self.screen)
        await self.chat.press(Press(PLACE, self.user, button_id(button)), exchange)
        return exchange.last

    async def choose(self, question: Question) -> str | None:
        """Read a choice of ``question``, hinting at anything else; None when the player quits."""
        while True:
            given = await self.read(render.prompt_text(question))
            if given is None or given.lower() in QUIT:
                return None
            if given.upper() in question.keys:
                return given.upper()
            self.show(render.invalid_text(question, given))

    async def answer(self, ask: ReviewAsk) -> Feedback | None:
        """Read a choice of the question asked and press its button; return the verdict, or
        None when the player quits (or the core refused the answer, and has said why)."""
        key = await self.choose(ask.question)
        if key is None:
            return None
        told = await self.press(ask.button(key))
        return told if isinstance(told, Feedback) else None

    async def after(self, question: Question, full: RenderableType, *, last: bool) -> bool:
        """Offer the full explanation and "I was sure / I guessed"; return False on quit."""
        shown = False
        while True:
            prompt = render.next_prompt(last) if shown else render.more_prompt(last)
            given = await self.read("\n" + prompt)
            if given is None or given.lower() in QUIT:
                return False
            said = given.lower()
            if said in RATE:
                await self.press(ConfidenceChoice(question.id, RATE[said]))
            elif said in MORE and not shown:
                self.show(full)
                shown = True
            else:
                return True


async def play_session(
    engine: QuizEngine,
    *,
    user: str,
    tag: str | None = None,
    topic: str | None = None,
    count: int = 5,
    out: TextIO = sys.stdout,
    chart_table: ChartTable | None = None,
    interactive: bool | None = None,
) -> None:
    """Run a practice session of ``count`` questions: ``/quiz practice``, typed at a terminal.

    The same flow and the same sentences as in chat: due cards first, then new questions at
    the person's level, a missed due card coming back until it is answered right; scores never
    change. After each answer the verdict and the short explanation come first. At a terminal
    the full explanation waits for ``m``; piped, it follows at once (nobody is there to ask).
    Quitting, the end of input and Ctrl-C press Stop, which says the score so far.
    """
    term = Terminal(engine, user, out)
    if interactive is None:
        interactive = is_interactive(term.screen)
    ended = False
    try:
        shown = await _start(term, tag=tag, topic=topic, count=count)
        while isinstance(shown, ReviewAsk):
            question = shown.question
            told = await term.answer(shown)
            if told is None:
                break
            last = not any(offer.button == PRACTICE_NEXT for offer in told.offers)
            table = chart_table(question) if chart_table and question.chart else None
            full = render.explanation_of(question, table)
            if not interactive:
                term.show(full)
            elif not await term.after(question, full, last=last):
                ended = last  # the score is said already
                break
            if last:
                ended = True
                break
            shown = await term.press(PRACTICE_NEXT)
        else:
            ended = True  # the session's end (or why it could not start) is said
    finally:
        if not ended:
            # Quit, end of input or Ctrl-C: Stop, which says the score so far.
            await term.press(PRACTICE_STOP)
        term.screen.file.flush()


async def _start(
    term: Terminal, *, tag: str | None, topic: str | None, count: int
) -> Content | None:
    """Start the session as ``/quiz practice`` does; a tag (which chat has no option for)
    starts it on the engine, asked with the flow's own words."""
    if tag is None:
        return await term.command("practice", {"topic": topic, "count": count})
    exchange = ConsoleExchange(term.screen)
    try:
        turn = await term.engine.start_practice(
            PLACE.platform, PLACE.workspace, term.user, topic=topic, tag=tag, count=count
        )
    except UserError as exc:
        await exchange.reply(exc.text, private=True)
        return exchange.last
    shown = words.practice_end(turn) if turn.item is None else words.practice_ask(turn)
    await exchange.reply(shown, private=True)
    return shown


# ---------------------------------------------------------------- review mode


async def review_session(
    engine: QuizEngine, *, user: str, count: int = 5, out: TextIO = sys.stdout
) -> None:
    """Re-ask up to ``count`` due questions the user missed: ``/quiz review``, once a question,
    with the full explanation after each answer; scores never change."""
    term = Terminal(engine, user, out)
    try:
        for _ in range(count):
            shown = await term.command("review", {})
            if not isinstance(shown, ReviewAsk):
                break
            if await term.answer(shown) is None:
                break
            term.show(render.explanation_of(shown.question))
    finally:
        term.screen.file.flush()
