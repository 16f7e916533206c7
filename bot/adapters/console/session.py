"""The terminal study session: ask, read an answer, grade, explain, repeat."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TextIO

from bot.adapters.console import render
from bot.engine import Place, QuizEngine
from bot.engine.model import Question
from bot.errors import UserError

PLATFORM = "console"
PLACE = Place(PLATFORM, "local", "terminal")
QUIT = {"q", "quit", "exit"}

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


async def _read(reader: _LineReader, prompt: str, out: TextIO) -> str | None:
    """Read one answer; None at end of input."""
    out.write(prompt)
    out.flush()
    line = await reader.readline()
    if line == "":
        out.write("\n")
        return None
    return line.strip()


async def play_session(
    engine: QuizEngine,
    *,
    user: str,
    tag: str | None = None,
    count: int = 5,
    out: TextIO = sys.stdout,
    chart_table: ChartTable | None = None,
) -> PlaySummary:
    """Run a study session of ``count`` questions and return the score."""
    asked = correct = points = 0
    reader = _LineReader()
    # A session killed mid-question leaves its round open: the terminal has one player, so close it.
    stale = await engine.open_round(PLACE)
    if stale is not None:
        await engine.close(stale.id)
    try:
        for number in range(1, count + 1):
            card = await engine.start_round(PLACE, tag=tag, duration=NO_TIMER)
            question = card.question
            out.write(render.card_text(card, number, count) + "\n")
            while True:
                given = await _read(reader, render.prompt_text(question), out)
                if given is None or given.lower() in QUIT:
                    await engine.close(card.round_id)
                    return PlaySummary(asked, correct, points)
                if given.upper() in question.keys:
                    break
                out.write(render.invalid_text(question, given) + "\n")
            outcome = await engine.answer(PLATFORM, PLACE.workspace, card.round_id, user, given)
            asked += 1
            correct += outcome.correct
            points += outcome.points
            out.write(render.outcome_text(outcome) + "\n")
            reveal = await engine.close(card.round_id)
            if reveal is not None:
                table = chart_table(question) if chart_table and question.chart else None
                out.write(render.reveal_text(reveal, table) + "\n")
    except UserError as exc:
        out.write(f"\n{exc.plain()}\n")
    finally:
        out.write(render.summary_text(asked, correct, points) + "\n")
        out.flush()
    return PlaySummary(asked, correct, points)


# ---------------------------------------------------------------- review mode


async def review_session(
    engine: QuizEngine, *, user: str, count: int = 5, out: TextIO = sys.stdout
) -> PlaySummary:
    """Re-ask up to ``count`` due questions the user missed; scores never change."""
    asked = correct = 0
    reader = _LineReader()
    try:
        for number in range(1, count + 1):
            question = await engine.next_review(PLATFORM, PLACE.workspace, user)
            if question is None:
                break
            out.write(render.review_question_text(question, number) + "\n")
            while True:
                given = await _read(reader, render.prompt_text(question), out)
                if given is None or given.lower() in QUIT:
                    return PlaySummary(asked, correct, 0)
                if given.upper() in question.keys:
                    break
                out.write(render.invalid_text(question, given) + "\n")
            outcome = await engine.answer_review(
                PLATFORM, PLACE.workspace, user, question.id, given
            )
            asked += 1
            correct += outcome.correct
            out.write(render.review_outcome_text(outcome, question, engine.clock()) + "\n")
    finally:
        queue = await engine.review_queue(PLATFORM, PLACE.workspace, user)
        out.write(render.review_summary_text(asked, correct, queue) + "\n")
        out.flush()
    return PlaySummary(asked, correct, 0)
