"""The terminal study session: ask, read an answer, grade, explain, repeat."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console, RenderableType

from bot import messages as M
from bot.adapters.console import render
from bot.chat import words
from bot.engine import Place, QuizEngine
from bot.engine.model import Question
from bot.engine.practice import PracticeSession
from bot.errors import UserError
from bot.text import Text, say

PLATFORM = "console"
PLACE = Place(PLATFORM, "local", "terminal")
QUIT = {"q", "quit", "exit"}
MORE = {"m", "more"}
SURE = {"s", "sure"}
GUESSED = {"g", "guessed"}

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
    topic: str | None = None,
    count: int = 5,
    out: TextIO = sys.stdout,
    chart_table: ChartTable | None = None,
    interactive: bool | None = None,
) -> PlaySummary:
    """Run a practice session of ``count`` questions, as ``/quiz practice`` runs one in chat.

    The same session and the same sentences: due cards first, then new questions at the
    person's level, a missed due card coming back until it is answered right; scores never
    change. After each answer the verdict and the short explanation come first. At a terminal
    the full explanation waits for ``m``; piped, it follows at once (nobody is there to ask).
    """
    screen = render.console(out)
    if interactive is None:
        interactive = is_interactive(screen)
    reader = _LineReader()
    where = (PLATFORM, PLACE.workspace, user)
    session: PracticeSession | None = None
    ended = False
    try:
        turn = await engine.start_practice(*where, topic=topic, tag=tag, count=count)
        session = turn.session
        while turn.item is not None:
            question = turn.item.question
            screen.print(render.practice_question(turn))
            given = await _answer(reader, screen, question)
            if given is None:
                break
            result = await engine.answer_in_practice(*where, question.id, given)
            session = result.session
            told = words.practice_feedback(result, score=False).text
            screen.print(render.practice_verdict(told))
            table = chart_table(question) if chart_table and question.chart else None
            full = render.explanation_of(question, table)
            if not interactive:
                screen.print(full)
            elif not await _more(
                reader,
                screen,
                full,
                last=session.done,
                rate=_rater(engine, user, question.id),
            ):
                break
            if session.done:
                screen.print(render.practice_end(words.practice_score(session)))
                ended = True
                break
            turn = await engine.practice_next(*where)
            session = turn.session
        else:
            screen.print(render.practice_end(words.practice_end(turn).text))
            ended = True
        await engine.stop_practice(*where)
    except UserError as exc:
        screen.print()
        screen.print(exc.plain())
        ended = True
    finally:
        if not ended:
            # Quit, end of input or Ctrl-C: the score so far, from what this session knows.
            stopped = words.practice_score(session, stopped=True) if session else None
            screen.print(render.practice_end(stopped or say(M.PRACTICE_STOPPED_NONE)))
        screen.file.flush()
    if session is None:
        return PlaySummary(0, 0, 0)
    return PlaySummary(session.answered, session.right, 0)


async def _answer(reader: _LineReader, screen: Console, question: Question) -> str | None:
    """Read a choice of ``question``, hinting at anything else; None when the player quits."""
    while True:
        given = await _read(reader, render.prompt_text(question), screen)
        if given is None or given.lower() in QUIT:
            return None
        if given.upper() in question.keys:
            return given.upper()
        screen.print(render.invalid_text(question, given))


Rate = Callable[[str], Awaitable[Text]]


def _rater(engine: QuizEngine, user: str, question_id: str) -> Rate:
    """Return what rates the answer just given with a confidence, and says what it did."""

    async def rate(confidence: str) -> Text:
        result = await engine.rate_confidence(
            PLATFORM, PLACE.workspace, user, question_id, confidence
        )
        return words.rated(result)

    return rate


async def _more(
    reader: _LineReader, screen: Console, full: RenderableType, *, last: bool, rate: Rate
) -> bool:
    """Offer the full explanation and "I was sure / I guessed"; return False on quit."""
    shown = False
    while True:
        prompt = render.next_prompt(last) if shown else render.more_prompt(last)
        given = await _read(reader, "\n" + prompt, screen)
        if given is None or given.lower() in QUIT:
            return False
        said = given.lower()
        if said in SURE or said in GUESSED:
            try:
                told = await rate("sure" if said in SURE else "guessed")
            except UserError as exc:
                told = exc.text
            screen.print(render.practice_rated(told))
            continue
        if said in MORE and not shown:
            screen.print(full)
            shown = True
            continue
        return True


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
