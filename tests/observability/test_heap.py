"""Freezing the heap: once per thing loaded, and nothing frozen is walked by later collections."""

from __future__ import annotations

import gc

from bot.observability.heap import freeze_heap


def test_the_heap_is_frozen_once_for_each_thing_loaded() -> None:
    kept = [object() for _ in range(10)]
    before = gc.get_freeze_count()
    freeze_heap("a test")
    frozen = gc.get_freeze_count()
    assert frozen >= before + 1
    made = [[] for _ in range(100)]  # tracked objects made after the freeze
    freeze_heap("a test")  # the second time does nothing
    assert gc.get_freeze_count() == frozen
    assert kept and made
