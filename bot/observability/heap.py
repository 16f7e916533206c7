"""The garbage collector of a long-running bot: what it loads for good is frozen out of its way.

A full collection walks every object the cyclic collector tracks. In a bot that is mostly
what it loaded to stay (modules, the question bank, the bandwidth catalogue, the platform
client, and matplotlib once the first chart is drawn): a hundred thousand objects and more,
walked again every thousand clicks or so, in a pause of tens of milliseconds that lands on
whichever clicks are in flight. Frozen (``gc.freeze``), they are left out of every later
collection; refcounting still frees whatever of them is let go.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)

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
