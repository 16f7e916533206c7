"""A per-client request limit for pages anyone can reach (a token bucket per client)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimit:
    """Allow each client ``burst`` requests at once and ``per_minute`` a minute after that.

    Clients are remembered in a bounded, least-recently-used table, so a flood of new client
    addresses costs memory up to ``max_clients`` and no more (the oldest are forgotten first).
    """

    def __init__(
        self,
        per_minute: float,
        burst: int,
        *,
        max_clients: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = burst
        self.max_clients = max_clients
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def check(self, client: str) -> float:
        """Take one request from the client's allowance; return 0, or seconds until allowed."""
        now = self.clock()
        bucket = self._buckets.pop(client, None)
        if bucket is None:
            bucket = _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        self._buckets[client] = bucket
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate
