"""Freezing the heap: once per thing loaded, and nothing frozen is walked by later collections."""

from __future__ import annotations

import gc

from bot.observability import heap
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


def test_a_serving_process_collects_the_youngest_generation_less_often() -> None:
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        heap.collect_for_serving()
        assert gc.get_threshold() == (heap.YOUNG_THRESHOLD, 10, 10)
        gc.set_threshold(heap.YOUNG_THRESHOLD * 2, 5, 5)  # a higher one already set stays
        heap.collect_for_serving()
        assert gc.get_threshold() == (heap.YOUNG_THRESHOLD * 2, 5, 5)
    finally:
        gc.set_threshold(*saved)


def test_freezing_leaves_the_thresholds_alone() -> None:
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        heap._done.discard("a later test")
        heap.freeze_heap("a later test")
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*saved)
