"""Refuse a replayed Slack request, and handle a redelivered event once, across replicas.

Bolt checks the signature and that the timestamp is less than 5 minutes off, but within those 5
minutes an intercepted request signs just as well the second time: replaying ``/quiz next`` after
its round closed would open another round. The signature is an HMAC of the timestamp and the
body, so each genuine request has its own; one seen before is refused with 401, like a bad one.
``X-Slack-Retry-Num`` is not covered by the signature, so it earns no exemption: a captured
request replayed with it added is refused all the same.

Slack redelivers an event it thinks failed (signed afresh, with the same ``event_id``): one not
acknowledged within 3 s, or answered with an error. An event is acknowledged only once it is
settled (a reaction: its answer committed), so a redelivery is how an event that failed, or
whose replica died, gets handled after all. Its id is therefore claimed in two steps: first as
a short lease while it is handled (a redelivery meanwhile is told 503, come back later), then,
once settled, for the whole redelivery window (a redelivery is acknowledged and not handled
again, so a reaction is never counted twice). An event that failed gives its id back at once;
one whose replica died leaves a lease that expires, and the next redelivery is handled.

Both memories are shared through the database (``RequestClaims``), so every replica behind a
load balancer refuses what any of them has seen; a small memory in each process answers the
repeats it saw itself without asking the database.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from typing import Protocol

from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.engine import QuizEngine
from bot.engine.ports import utc_now
from bot.storage import RequestClaims, SqlStore, Won
from bot.tasks import finish_within

log = logging.getLogger(__name__)

# Bolt refuses a timestamp more than 5 minutes off, so nothing older needs remembering.
SIGNED_FOR = 5 * 60
REPLAY_WINDOW = SIGNED_FOR + 30
# Slack retries a failed event at once, after a minute and after five; remember ids well past.
REDELIVERY_WINDOW = 15 * 60
# An event being handled holds its id this long; if its replica dies, Slack's redelivery a
# minute later is handled.
EVENT_LEASE = 30.0
# Where the guard leaves, in a request's context, the call that says its event is settled.
SETTLE = "quizbot_settle_event"
# At most this many keys are kept in each process (about 20 MB); past it the oldest go first.
REMEMBERED = 200_000
# The check must leave the listener most of Slack's 3 s: past this the request is refused (503,
# which Slack shows as a failure and, for an event, retries later) rather than answered late.
CLAIM_DEADLINE = 1.0


class SharedClaims(Protocol):
    """Keys claimed once across replicas (``bot.storage.RequestClaims``)."""

    def submit(self, keys: Mapping[str, datetime], *, now: datetime) -> asyncio.Future[Won]:
        """Claim each key until its time; the future holds the keys this call won."""
        ...

    async def forget(self, keys: Won) -> None:
        """Give up keys this claim still holds (for a request refused after all)."""
        ...

    async def extend(self, key: str, until: datetime, token: str) -> None:
        """Hold a key this claim (``token``) still holds until a later time."""
        ...

    async def held_until(self, key: str) -> datetime | None:
        """Return until when a key is held, or None."""
        ...

    async def idle(self) -> None:
        """Wait for background work (the purge of expired keys) to finish."""
        ...


class ReplayGuard:
    """Remember recent request signatures and event ids; refuse or skip any that comes again."""

    def __init__(
        self,
        claims: SharedClaims | None = None,
        *,
        window: float = REPLAY_WINDOW,
        redelivery_window: float = REDELIVERY_WINDOW,
        lease: float = EVENT_LEASE,
        capacity: int = REMEMBERED,
        claim_deadline: float = CLAIM_DEADLINE,
        clock: Callable[[], float] = time.monotonic,
        utc_clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.claims = claims
        self.claim_deadline = claim_deadline
        self._late: set[asyncio.Task[None]] = set()
        self.window = window
        self.redelivery_window = redelivery_window
        self.lease = lease
        # Events this process is handling, each until its lease ends (by ``clock``).
        self._handling: dict[str, float] = {}
        self.capacity = capacity
        self.clock = clock
        self.utc_clock = utc_clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def first_time(self, key: str) -> bool:
        """Return True the first time a key is seen by this process within the window."""
        if self.seen(key):
            return False
        self.remember(key)
        return True

    def seen(self, key: str) -> bool:
        """Return whether this process saw the key within its window."""
        now = self.clock()
        seen = self._seen
        while seen:
            oldest = next(iter(seen.values()))
            if now < oldest and len(seen) < self.capacity:
                break
            seen.popitem(last=False)
        return seen.get(key, now) > now

    def remember(self, key: str, window: float | None = None) -> None:
        """Remember a key for the window (the replay window unless told otherwise)."""
        # Kept in insertion order; a key's value is when this process may forget it.
        self._seen[key] = self.clock() + (self.window if window is None else window)
        self._seen.move_to_end(key)

    async def middleware(
        self, req: AsyncBoltRequest, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        """Bolt middleware, after Bolt's own signature check.

        401 for a replayed request; for a redelivered event, 200 without handling once it is
        settled, 503 while it is still being handled.
        """
        values = req.headers.get("x-slack-signature") or []
        signature = values[0] if values else ""
        if req.mode != "http" or not signature:
            return await next()
        signed = f"signature:{signature}"
        event = _event_key(req.body)
        if self.seen(signed):
            return _replayed("this replica")
        if event is not None:
            if self.handling(event):
                return _busy(req.body)
            if self.seen(event):
                return _redelivered(req.body)
        now = self.utc_clock()
        # Bolt accepts the request until its signed timestamp is 5 minutes old on this
        # replica's clock: remember it at least that long, whatever the clocks' difference.
        window = max(self.window, _signed_at(req) + self.window - now.timestamp())
        token = ""
        if self.claims is not None:
            refused, token = await self._claim(signed, event, req.body, now, window)
            if refused is not None:
                return refused
        # Remembered only once the claim is made: a request that failed here may come again.
        self.remember(signed, window)
        if event is None:
            return await next()
        return await self._handle(event, token, req, next)

    async def _claim(
        self, signed: str, event: str | None, body: object, now: datetime, window: float
    ) -> tuple[BoltResponse | None, str]:
        """Claim the request's keys across replicas; return the refusal if they are taken.

        Also return the claim's token, which ``extend`` and ``forget`` of its event need.
        """
        claims = self.claims
        assert claims is not None
        keys = {signed: now + timedelta(seconds=window)}
        if event is not None:
            keys[event] = now + timedelta(seconds=self.lease)
        claiming = claims.submit(keys, now=now)
        if await _within(claiming, self.claim_deadline):
            won = claiming.result()
        else:
            self._forget_when_done(claiming)
            log.warning("refused a request: the replay check took over %.1f s", self.claim_deadline)
            return BoltResponse(status=503, body=""), ""
        if signed not in won:
            self.remember(signed, window)
            return _replayed("another replica"), won.token
        if event is not None and event not in won:
            self.remember(signed, window)
            # Held by another replica: settled there (held past a lease), or still being handled.
            try:
                until = await finish_within(
                    claims.held_until(event), self.claim_deadline, what="the replay check's read"
                )
            except TimeoutError:
                return _busy(body), won.token
            if until is not None and until > now + timedelta(seconds=self.lease):
                self.remember(event, self.redelivery_window)
                return _redelivered(body), won.token
            return _busy(body), won.token
        return None, won.token

    async def _handle(
        self,
        event: str,
        token: str,
        req: AsyncBoltRequest,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse:
        """Handle an event under its lease, leaving in its context the call that settles it.

        Bolt's middleware does not see the listener's answer, so the event is settled by
        ``answered`` once the request's answer is known, or by the listener's work later.
        """
        self._handling[event] = self.clock() + self.lease
        req.context[SETTLE] = _Settlement(self, event, token)
        return await next()

    def handling(self, event: str) -> bool:
        """Return whether this process is handling the event (within its lease)."""
        until = self._handling.get(event)
        if until is None:
            return False
        if until <= self.clock():
            del self._handling[event]
            return False
        return True

    def settled(self, event: str, ok: bool, token: str = "") -> None:
        """Record the outcome of an event: remember it handled, or give its id back.

        Only the claim that still holds the event (``token``) is extended or deleted: if this
        replica's lease ran out and another replica took the event, that claim is left alone.
        """
        self._handling.pop(event, None)
        if ok:
            self.remember(event, self.redelivery_window)
        if self.claims is None:
            return
        if ok:
            until = self.utc_clock() + timedelta(seconds=self.redelivery_window)
            self._in_background(self.claims.extend(event, until, token), "remember a handled event")
        else:
            self._in_background(self.claims.forget(Won({event}, token)), "give back a failed event")

    def _in_background(self, work: Awaitable[None], what: str) -> None:
        async def run() -> None:
            try:
                await work
            except Exception:
                # Lost, the lease expires on its own: a redelivery is then handled again.
                log.exception("could not %s", what)

        task = asyncio.ensure_future(run())
        self._late.add(task)
        task.add_done_callback(self._late.discard)

    async def settle(self) -> None:
        """Wait until the keys of requests refused for a late check are given back."""
        while self._late:
            await asyncio.gather(*self._late)
        if self.claims is not None:
            await self.claims.idle()

    def _forget_when_done(self, claiming: asyncio.Future[Won]) -> None:
        """Once a claim that came too late completes, give its keys back.

        The request was refused unhandled, so Slack's redelivery of an event (or the user's
        next click) must not be taken for a repeat.
        """
        claims = self.claims
        assert claims is not None

        async def forget() -> None:
            try:
                won = await claiming
                if won:
                    await claims.forget(won)
            except Exception:
                log.exception("could not give back the keys of a refused request")

        task = asyncio.ensure_future(forget())
        self._late.add(task)
        task.add_done_callback(self._late.discard)


async def _within(future: asyncio.Future[Won], seconds: float) -> bool:
    """Wait up to ``seconds`` for the future; return whether it is done (it is not cancelled).

    A timer and one callback: ``asyncio.wait`` builds sets, a waiter and a callback per
    future on every call, and this is on every request's way in.
    """
    if future.done():
        return True
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()

    def wake(_: object = None) -> None:
        if not waiter.done():
            waiter.set_result(None)

    future.add_done_callback(wake)
    timer = loop.call_later(seconds, wake)
    try:
        await waiter
    finally:
        timer.cancel()
        future.remove_done_callback(wake)
    return future.done()


def answered(req: AsyncBoltRequest, response: BoltResponse) -> None:
    """Settle the request's event if Slack is being told it succeeded (a 2xx).

    Any other answer leaves the event to its listener's work, which settles it when it ends
    (or, if the replica dies first, to its lease).
    """
    settle = req.context.get(SETTLE)
    if isinstance(settle, _Settlement) and response.status < 300:
        settle(True)


def replay_guard(engine: QuizEngine) -> ReplayGuard:
    """Return the guard for an app on this engine: shared through its database, on its clock."""
    claims = RequestClaims(engine.store) if isinstance(engine.store, SqlStore) else None
    return ReplayGuard(claims, utc_clock=engine.clock)


def _signed_at(req: AsyncBoltRequest) -> float:
    """Return the request's signed timestamp (0 when it has none that reads as a number)."""
    values = req.headers.get("x-slack-request-timestamp") or []
    text = values[0] if values else ""
    return float(text) if text.isdigit() and len(text) <= 12 else 0.0


def _event_key(body: object) -> str | None:
    if not isinstance(body, dict) or body.get("type") != "event_callback":
        return None
    event_id = body.get("event_id")
    if not isinstance(event_id, str) or not event_id:
        return None
    return f"event:{body.get('api_app_id') or ''}:{event_id}"


def _replayed(where: str) -> BoltResponse:
    log.warning("refused a replayed request (its signature was seen before, by %s)", where)
    return BoltResponse(status=401, body="")


class _Settlement:
    """Said once by whoever handles an event: True, it is settled; False, it failed."""

    def __init__(self, guard: ReplayGuard, event: str, token: str) -> None:
        self.guard: ReplayGuard | None = guard
        self.event = event
        self.token = token

    def __call__(self, ok: bool) -> None:
        guard, self.guard = self.guard, None
        if guard is not None:
            guard.settled(self.event, ok, self.token)


def _busy(body: object) -> BoltResponse:
    event_id = body.get("event_id") if isinstance(body, dict) else None
    log.info("event %s is still being handled: its redelivery is told to come back", event_id)
    return BoltResponse(status=503, body="")


def _redelivered(body: object) -> BoltResponse:
    event_id = body.get("event_id") if isinstance(body, dict) else None
    log.info("acknowledged a redelivered event %s without handling it again", event_id)
    return BoltResponse(status=200, body="")
