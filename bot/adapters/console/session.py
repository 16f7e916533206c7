"""The terminal study session: ask, read an answer, grade, explain, repeat."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TextIO

from rich.console import Console, RenderableType

from bot.adapters.console import render
from bot.engine import Place, QuizEngine
from bot.engine.model import Question
from bot.errors import UserError

PLATFORM = "console"
PLACE = Place(PLATFORM, "local", "terminal")
QUIT = {"q", "quit", "exit"}
MORE = {"m", "more"}

NO_TIMER = timedelta(0)

ChartTable = Callable[[Question], str | None]


@dataclass(frozen=True)
class PlaySummary:
    """How a session went."""

    asked: int
    correct: int
    points: int


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


async def _read(reader: _LineReader, prompt: str, screen: Console) -> str | None:
    """Read one line after ``prompt``; None at end of input."""
    screen.print(prompt, end="")
    screen.file.flush()
    line = await reader.readline()
    if line == "":
        screen.print()
        return None
    return line.strip()


def is_interactive(screen: Console) -> bool:
    """Return whether a person types at a terminal (then the full explanation waits for them)."""
    return sys.stdin.isatty() and screen.is_terminal


async def play_session(
    engine: QuizEngine,
    *,
    user: str,
    tag: str | None = None,
    count: int = 5,
    out: TextIO = sys.stdout,
    chart_table: ChartTable | None = None,
    interactive: bool | None = None,
) -> PlaySummary:
    """Run a study session of ``count`` questions and return the score.

    After each answer the verdict and the short explanation come first. At a terminal the full
    explanation waits for ``m``; piped, it follows at once (nobody is there to ask for it).
    """
    screen = render.console(out)
    if interactive is None:
        interactive = is_interactive(screen)
    tally = render.Tally()
    reader = _LineReader()
    # A session killed mid-question leaves its round open: the terminal has one player, so close it.
    stale = await engine.open_round(PLACE)
    if stale is not None:
        await engine.close(stale.id)
    try:
        for number in range(1, count + 1):
            card = await engine.start_round(PLACE, tag=tag, duration=NO_TIMER)
            question = card.question
            screen.print(render.card(card, number, count, tally))
            while True:
                given = await _read(reader, render.prompt_text(question), screen)
                if given is None or given.lower() in QUIT:
                    await engine.close(card.round_id)
                    return _summary(tally)
                if given.upper() in question.keys:
                    break
                screen.print(render.invalid_text(question, given))
            outcome = await engine.answer(PLATFORM, PLACE.workspace, card.round_id, user, given)
            tally = tally.add(outcome)
            screen.print(render.verdict(outcome, tally, question))
            reveal = await engine.close(card.round_id)
            if reveal is None:
                continue
            table = chart_table(question) if chart_table and question.chart else None
            full = render.reveal(reveal, table)
            if not interactive:
                screen.print(full)
            elif not await _more(reader, screen, full, last=number == count):
                return _summary(tally)
    except UserError as exc:
        screen.print()
        screen.print(exc.plain())
    finally:
        screen.print(render.summary(tally))
        screen.file.flush()
    return _summary(tally)


async def _more(reader: _LineReader, screen: Console, full: RenderableType, *, last: bool) -> bool:
    """Offer the full explanation; return False when the player quits."""
    given = await _read(reader, "\n" + render.more_prompt(last), screen)
    if given is None or given.lower() in QUIT:
        return False
    if given.lower() not in MORE:
        return True
    screen.print(full)
    given = await _read(reader, "\n" + render.next_prompt(last), screen)
    return given is not None and given.lower() not in QUIT


def _summary(tally: render.Tally) -> PlaySummary:
    return PlaySummary(tally.asked, tally.correct, tally.points)


# ---------------------------------------------------------------- review mode


async def review_session(
    engine: QuizEngine, *, user: str, count: int = 5, out: TextIO = sys.stdout
) -> PlaySummary:
    """Re-ask up to ``count`` due questions the user missed; scores never change."""
    asked = correct = 0
    screen = render.console(out)
    reader = _LineReader()
    try:
        for number in range(1, count + 1):
            question = await engine.next_review(PLATFORM, PLACE.workspace, user)
            if question is None:
                break
            screen.print(render.review_question(question, number))
            while True:
                given = await _read(reader, render.prompt_text(question), screen)
                if given is None or given.lower() in QUIT:
                    return PlaySummary(asked, correct, 0)
                if given.upper() in question.keys:
                    break
                screen.print(render.invalid_text(question, given))
            outcome = await engine.answer_review(
                PLATFORM, PLACE.workspace, user, question.id, given
            )
            asked += 1
            correct += outcome.correct
            screen.print(render.review_outcome(outcome, question, engine.clock()))
    finally:
        queue = await engine.review_queue(PLATFORM, PLACE.workspace, user)
        screen.print(render.review_summary(asked, correct, queue))
        screen.file.flush()
    return PlaySummary(asked, correct, 0)
