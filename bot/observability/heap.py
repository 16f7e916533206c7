"""The garbage collector of a long-running bot: what it loads for good is frozen out of its way.

A full collection walks every object the cyclic collector tracks. In a bot that is mostly
what it loaded to stay (modules, the question bank, the bandwidth catalogue, the platform
client, and matplotlib once the first chart is drawn): a hundred thousand objects and more,
walked again every thousand clicks or so, in a pause of tens of milliseconds that lands on
whichever clicks are in flight. Frozen (``gc.freeze``), they are left out of every later
collection; refcounting still frees whatever of them is let go.

The youngest generation is the other cost. Python collects it after every 700 allocations
(net of frees); with a couple of hundred clicks in flight, each collection walks the young
objects of every click still under way and moves them up a generation, so the next collection
of that generation has them to walk again. Measured in ``benchmarks/slack_clicks.py`` (one run,
about 5,600 clicks through ``quizbot slack``): 892 young collections at 0.45 ms each and 80 of
the middle generation at 4.4 ms, 0.75 s in all; with the threshold at ``YOUNG_THRESHOLD``, 19
and 1, 0.25 s. Garbage in reference cycles waits a little longer to be freed; everything else
is still freed by refcounting at once.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)

# Allocations (net of frees) between two collections of the youngest generation, once serving.
YOUNG_THRESHOLD = 20_000

_done: set[str] = set()


def freeze_heap(after: str) -> None:
    """Collect once, then freeze every object left, so no later collection walks it again.

    Once per process for each ``after`` (what has just been loaded: "startup", "charts").
    Best called where little is in flight: an object frozen while in use that later becomes
    garbage in a reference cycle is never collected.
    """
    if after in _done:
        return
    _done.add(after)
    gc.collect()
    gc.freeze()
    log.debug("after %s, %d objects frozen", after, gc.get_freeze_count())


def collect_for_serving() -> None:
    """Collect the youngest generation every ``YOUNG_THRESHOLD`` allocations, not Python's 700.

    For the process of a long-running bot (``quizbot slack``, ``quizbot discord``), called
    before it serves; a higher threshold already set is kept.
    """
    young, middle, old = gc.get_threshold()
    if young < YOUNG_THRESHOLD:
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)
