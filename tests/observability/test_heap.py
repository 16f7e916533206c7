"""Freezing the heap: once per thing loaded, and nothing frozen is walked by later collections."""

from __future__ import annotations

import gc

from bot.observability import heap
from bot.observability.heap import freeze_heap


def test_the_heap_is_frozen_once_for_each_thing_loaded() -> None:
    kept = [object() for _ in range(10)]  # a tracked object made before the freeze
    name = f"a test {id(kept)}"  # its own name: each name freezes once per process
    freeze_heap(name)
    frozen = gc.get_freeze_count()
    made = [[] for _ in range(100)]  # a tracked object made after the freeze
    freeze_heap(name)  # the second time does nothing
    assert gc.get_freeze_count() == frozen
    # What a collection walks: the three generations, never the frozen objects.
    walked = gc.get_objects()
    assert not any(o is kept for o in walked)
    assert any(o is made for o in walked)


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
        heap.freeze_heap(f"a later test {id(saved)}")
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*saved)
