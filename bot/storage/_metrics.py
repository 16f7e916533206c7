"""Count the rounds each process opens and closes, where the database decides it."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bot.engine.model import Place, Round
from bot.observability.metrics import count_round_closed, count_round_opened

S = TypeVar("S", bound=type)


def with_round_metrics(cls: S) -> S:
    """Count successful ``create_round`` and winning ``close_round`` calls of a store class."""
    create: Callable[..., Awaitable[Round]] = cls.create_round  # type: ignore[attr-defined]
    close: Callable[..., Awaitable[Round | None]] = cls.close_round  # type: ignore[attr-defined]

    @functools.wraps(create)
    async def create_round(self: Any, place: Place, *args: Any, **kwargs: Any) -> Round:
        rnd = await create(self, place, *args, **kwargs)
        count_round_opened(place.platform)
        return rnd

    @functools.wraps(close)
    async def close_round(self: Any, round_id: int, *args: Any, **kwargs: Any) -> Round | None:
        closed = await close(self, round_id, *args, **kwargs)
        if closed is not None:
            # Only the one process whose UPDATE closed the round gets here, so the counters
            # of all replicas add up to the number of rounds closed.
            count_round_closed(closed.place.platform)
        return closed

    cls.create_round = create_round  # type: ignore[attr-defined]
    cls.close_round = close_round  # type: ignore[attr-defined]
    return cls
