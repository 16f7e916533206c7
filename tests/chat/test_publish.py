"""The publisher on a real engine and a recording port: the refresh throttle on an injected
clock, the reveal's retries, a card that is gone, a chart that cannot be drawn."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.bank.loader import load_bank
from bot.chat import Charts, Gone, PostCard, Publisher, ReplyInThread, UpdateCard
from bot.engine import Place, QuestionCard, QuizEngine, Reveal
from bot.engine.model import ChartSpec
from bot.storage import SqlStore, open_store
from bot.text import say
from tests.conftest import FakeClock, SimpleBank, make_question

PLACE = Place("slack", "T1", "C1")
BANK = Path(__file__).resolve().parents[1] / "adapters" / "slack" / "bank"


class Transient(Exception):
    """A failure worth trying again."""


class RecordingPort:
    """A port that records what it is asked to do, and fails on request."""

    platform = "slack"
    admins = "admins"
    add_me = "add me"
    post_gap = 0.0

    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.failures: list[Exception] = []
        self.changed = asyncio.Condition()

    async def send(self, action: Any) -> str | None:
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append(action)
        async with self.changed:
            self.changed.notify_all()
        return f"ref-{len(self.sent)}" if isinstance(action, PostCard) else None

    def transient(self, error: Exception) -> bool:
        return isinstance(error, Transient)

    def of(self, kind: type) -> list[Any]:
        return [a for a in self.sent if isinstance(a, kind)]

    async def wait(self, kind: type, count: int) -> None:
        async with asyncio.timeout(10), self.changed:
            await self.changed.wait_for(lambda: len(self.of(kind)) >= count)


class Clock:
    """A monotonic clock the test moves, and a sleep that ends when the test says."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []
        self.asleep = asyncio.Event()
        self.wake = asyncio.Event()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.asleep.set()
        await self.wake.wait()


@pytest.fixture
async def store(sqlite_url: str) -> AsyncIterator[SqlStore]:
    s = await open_store(sqlite_url)
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def engine(store: SqlStore) -> QuizEngine:
    return QuizEngine(store, load_bank([BANK]), clock=FakeClock(), rng=random.Random(0))


async def posted(engine: QuizEngine, publisher: Publisher, tag: str = "storage") -> QuestionCard:
    card = await engine.start_round(PLACE, tag=tag)
    await engine.attach_message(card.round_id, await publisher.post_card(card))
    return card


async def test_answers_refresh_the_count_once_at_once_then_once_per_interval(
    engine: QuizEngine,
) -> None:
    port, clock = RecordingPort(), Clock()
    publisher = Publisher(engine, port, refresh_every=3.0, clock=clock, sleep=clock.sleep)
    card = await posted(engine, publisher)
    for n in range(5):
        await engine.answer("slack", "T1", card.round_id, f"U{n}", "A")
        publisher.note_answer(card.round_id)
    await port.wait(UpdateCard, 1)
    for n in range(5, 9):
        await engine.answer("slack", "T1", card.round_id, f"U{n}", "A")
        publisher.note_answer(card.round_id)
    # The clock has not moved: the next refresh waits out the interval, just one of them.
    await asyncio.wait_for(clock.asleep.wait(), 10)
    assert len(port.of(UpdateCard)) == 1 and clock.slept == [3.0]
    clock.now += 3.0
    clock.wake.set()
    await port.wait(UpdateCard, 2)
    last = port.of(UpdateCard)[-1]
    assert isinstance(last.card, QuestionCard) and last.card.answered == 9
    await publisher.aclose()


async def test_the_reveal_cancels_a_waiting_refresh_and_nothing_brings_the_buttons_back(
    engine: QuizEngine,
) -> None:
    port, clock = RecordingPort(), Clock()
    publisher = Publisher(engine, port, refresh_every=3.0, clock=clock, sleep=clock.sleep)
    card = await posted(engine, publisher)
    await engine.answer("slack", "T1", card.round_id, "U1", "A")
    publisher.note_answer(card.round_id)
    await port.wait(UpdateCard, 1)
    await engine.answer("slack", "T1", card.round_id, "U2", "A")
    publisher.note_answer(card.round_id)  # waits out the interval
    reveal = await engine.close(card.round_id)
    assert reveal is not None
    await publisher.publish_reveal(reveal)
    clock.wake.set()
    await publisher.aclose()
    edits = port.of(UpdateCard)
    assert isinstance(edits[-1].card, Reveal)
    assert [type(e.card) for e in edits] == [QuestionCard, Reveal]


async def test_a_reveal_outlives_transient_failures(engine: QuizEngine) -> None:
    port, clock = RecordingPort(), Clock()
    clock.wake.set()
    publisher = Publisher(engine, port, clock=clock, sleep=clock.sleep, backoff=0.5)
    card = await posted(engine, publisher)
    reveal = await engine.close(card.round_id)
    assert reveal is not None
    port.failures = [Transient(), Transient(), Transient()]
    await publisher.publish_reveal(reveal)
    assert clock.slept == [0.5, 1.0, 2.0]
    assert len(port.of(UpdateCard)) == 1 and len(port.of(ReplyInThread)) == 1


async def test_a_failure_that_is_not_transient_is_not_tried_again(engine: QuizEngine) -> None:
    port = RecordingPort()
    publisher = Publisher(engine, port)
    card = await posted(engine, publisher)
    reveal = await engine.close(card.round_id)
    assert reveal is not None
    port.failures = [PermissionError("no")]
    with pytest.raises(PermissionError):
        await publisher.publish_reveal(reveal)
    assert port.of(UpdateCard) == []


async def test_a_card_that_is_gone_gets_its_results_posted_anew(engine: QuizEngine) -> None:
    port = RecordingPort()
    publisher = Publisher(engine, port)
    card = await posted(engine, publisher)
    reveal = await engine.close(card.round_id)
    assert reveal is not None
    port.failures = [Gone("message_not_found")]
    await publisher.publish_reveal(reveal)
    (again,) = port.of(PostCard)[1:]
    assert isinstance(again.card, Reveal)
    (thread,) = port.of(ReplyInThread)
    assert thread.ref == "ref-2"  # the thread hangs on the results posted anew


async def test_a_chart_that_cannot_be_drawn_is_logged_and_left_out(
    store: SqlStore, caplog: pytest.LogCaptureFixture
) -> None:
    question = make_question("charted")
    broken = type(question)(**{**question.__dict__, "chart": ChartSpec(size="1GB", over=("x9",))})
    engine = QuizEngine(store, SimpleBank([broken]), clock=FakeClock())
    port = RecordingPort()
    publisher = Publisher(engine, port, charts=Charts.load())
    card = await posted(engine, publisher, tag=None)  # type: ignore[arg-type]
    reveal = await engine.close(card.round_id)
    assert reveal is not None
    with caplog.at_level(logging.WARNING, logger="bot.chat"):
        await publisher.publish_reveal(reveal)
    (thread,) = port.of(ReplyInThread)
    assert thread.explanation.chart is None
    assert "cannot be drawn" in caplog.text


async def test_a_close_while_the_card_is_on_its_way_edits_that_card(engine: QuizEngine) -> None:
    # A command's card is stored only once the platform answers; a close in between waits.
    port = RecordingPort()
    publisher = Publisher(engine, port)
    card = await engine.start_round(PLACE, tag="storage")
    async with publisher.posting(card.round_id):
        ref = await publisher.post_card(card)
        reveal = await engine.close(card.round_id)
        assert reveal.round.message_ref is None
        revealing = asyncio.create_task(publisher.publish_reveal(reveal))
        await engine.attach_message(card.round_id, ref)
    await asyncio.wait_for(revealing, 10)
    assert len(port.of(PostCard)) == 1
    [edit] = port.of(UpdateCard)
    [thread] = port.of(ReplyInThread)
    assert edit.ref == ref and thread.ref == ref and isinstance(edit.card, Reveal)


async def test_a_reference_stored_after_the_close_was_read_is_used(engine: QuizEngine) -> None:
    # Stored by another replica (or after the wait): the reveal reads it again.
    port = RecordingPort()
    publisher = Publisher(engine, port)
    card = await engine.start_round(PLACE, tag="storage")
    ref = await publisher.post_card(card)
    reveal = await engine.close(card.round_id)
    await engine.attach_message(card.round_id, ref)
    await publisher.publish_reveal(reveal)
    assert len(port.of(PostCard)) == 1
    assert [a.ref for a in port.of(UpdateCard)] == [ref]


class SpacedPort(RecordingPort):
    """A platform that wants a second between two of the bot's messages in a channel."""

    post_gap = 1.0


async def test_a_post_in_a_channel_waits_out_the_platforms_gap_since_the_last(
    engine: QuizEngine,
) -> None:
    port, clock = SpacedPort(), Clock()
    clock.wake.set()  # every sleep ends at once; what was asked is in clock.slept
    publisher = Publisher(engine, port, clock=clock, sleep=clock.sleep)
    card = await posted(engine, publisher)
    assert clock.slept == []  # the channel's first post goes at once
    reveal = await engine.close(card.round_id)
    assert reveal is not None
    clock.now += 0.25
    await publisher.publish_reveal(reveal)  # its thread reply is a post: 0.75 s to wait
    assert clock.slept == [0.75]
    clock.now += 0.75
    # The next card follows the reply at once: a whole gap; another channel waits for nothing.
    await posted(engine, publisher)
    await publisher.post_text(Place("slack", "T1", "C2"), say("elsewhere"))
    assert clock.slept == [0.75, 1.0]
    assert [type(a).__name__ for a in port.sent] == [
        "PostCard",
        "UpdateCard",
        "ReplyInThread",
        "PostCard",
        "PostText",
    ]
