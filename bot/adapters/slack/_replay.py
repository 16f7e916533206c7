"""Refuse a replayed Slack request: the same signed request a second time.

Bolt checks the signature and that the timestamp is less than 5 minutes off, but within those 5
minutes an intercepted request signs just as well the second time: replaying ``/quiz next`` after
its round closed would open another round. The signature is an HMAC of the timestamp and the
body, so each genuine request has its own; one seen before is refused with 401, like a bad one.
Slack redelivers an event it thinks failed, marked with ``X-Slack-Retry-Num``; such a redelivery
of an event is let through whatever its signature, because events are deduplicated where they
are handled (a reaction counts once), while commands and clicks, which Slack never redelivers,
get no such pass.

The memory is per process: replicas behind a load balancer each refuse what they have seen.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

log = logging.getLogger(__name__)

# Bolt refuses a timestamp more than 5 minutes off, so nothing older needs remembering.
REPLAY_WINDOW = 5 * 60 + 30
# At most this many signatures are kept (about 20 MB); past it the oldest are forgotten first.
REMEMBERED = 200_000


class ReplayGuard:
    """Remember recent request signatures; refuse any that comes again."""

    def __init__(
        self,
        *,
        window: float = REPLAY_WINDOW,
        capacity: int = REMEMBERED,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window = window
        self.capacity = capacity
        self.clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def first_time(self, signature: str) -> bool:
        """Return True the first time a signature is seen within the window, then False."""
        now = self.clock()
        seen = self._seen
        while seen:
            oldest = next(iter(seen.values()))
            if now - oldest <= self.window and len(seen) < self.capacity:
                break
            seen.popitem(last=False)
        if signature in seen:
            return False
        seen[signature] = now
        return True

    async def middleware(
        self, req: AsyncBoltRequest, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        """Bolt middleware, after Bolt's own signature check: 401 for a replayed request."""
        values = req.headers.get("x-slack-signature") or []
        signature = values[0] if values else ""
        redelivery = bool(req.headers.get("x-slack-retry-num")) and (
            isinstance(req.body, dict) and req.body.get("type") == "event_callback"
        )
        if req.mode == "http" and signature and not redelivery and not self.first_time(signature):
            log.warning("refused a replayed request (its signature was seen before)")
            return BoltResponse(status=401, body="")
        return await next()
