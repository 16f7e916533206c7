"""The name book: a crowd of new names costs a few writes, a failed write is tried again."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from bot.chat.names import Key, NameBook
from bot.engine.names import Known, NameKind

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class Store:
    """Names in a dict; each write waits for ``gate`` when one is set."""

    def __init__(self) -> None:
        self.saved: dict[Key, Known] = {}
        self.writes: list[int] = []
        self.reads = 0
        self.gate: asyncio.Event | None = None
        self.writing = asyncio.Event()  # set when a write begins
        self.fail = 0

    async def save_names(
        self, platform: str, workspace: str, names: dict[Key, str], at: datetime
    ) -> None:
        self.writing.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            self.fail -= 1
            raise OSError("database gone")
        self.writes.append(len(names))
        self.saved.update({k: Known(v, at) for k, v in names.items()})

    async def display_names(self, platform: str, workspace: str) -> dict[Key, Known]:
        self.reads += 1
        await asyncio.sleep(0)
        return dict(self.saved)


def person(i: int) -> Key:
    return (NameKind.USER, f"U{i:04d}")


async def test_a_crowd_of_new_people_is_stored_in_a_few_writes_and_read_once() -> None:
    store = Store()
    store.gate = asyncio.Event()
    book = NameBook(store, lambda: T0, "slack")
    for i in range(100):
        book.learn("T1", {person(i): f"person {i}"})
    await asyncio.wait_for(store.writing.wait(), 5)  # the first write waits on the gate
    store.gate.set()
    await book.settle()
    assert store.reads == 1
    assert sum(store.writes) == 100 and len(store.writes) <= 3, store.writes
    names = await book.names("T1")
    assert all(names.person(f"U{i:04d}") == f"person {i}" for i in range(100))
    book.learn("T1", {person(7): "person 7"})  # known and fresh: nothing more is written
    await book.settle()
    assert sum(store.writes) == 100


async def test_names_a_failed_write_held_are_stored_by_a_later_request() -> None:
    store = Store()
    book = NameBook(store, lambda: T0, "slack")
    store.fail = 1
    book.learn("T1", {person(1): "Ada"})
    await book.settle()
    assert store.saved == {} and (await book.names("T1")).person("U0001") == "U0001"
    book.learn("T1", {person(1): "Ada"})
    await book.settle()
    assert store.saved[person(1)].name == "Ada"
    assert (await book.names("T1")).person("U0001") == "Ada"


async def test_a_name_learnt_while_a_write_is_in_flight_goes_in_the_next() -> None:
    store = Store()
    store.gate = asyncio.Event()
    book = NameBook(store, lambda: T0, "slack")
    book.learn("T1", {person(1): "Ada"})
    await asyncio.wait_for(store.writing.wait(), 5)
    book.learn("T1", {person(2): "Grace"})
    store.gate.set()
    await book.settle()
    assert store.writes == [1, 1]
    assert {k: v.name for k, v in store.saved.items()} == {person(1): "Ada", person(2): "Grace"}
