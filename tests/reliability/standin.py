"""The Slack Web API stand-in with platform faults: 429s, 500s and slow answers, by share.

``FaultyStandIn`` answers a seeded random share of the calls to the methods the bot uses after an
ack (posting, editing, ephemeral replies, user look-ups, uploads) with HTTP 429 and
``Retry-After``, with HTTP 500 and a non-JSON body (as a load balancer in front of Slack sends it),
or only after a delay longer than Slack's 3 s deadline. A refused call is not carried out, as on
Slack; a slow one is. Everything it saw, carried out or refused, can be read back in one piece
(``record()``, or ``GET /_standin/calls?all=1`` from another process).

Run it alone with ``python -m tests.reliability.standin --faults 429=0.1,500=0.05,slow=0.05``
(it prints its base URL).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from tests.standins.slack_api import SlackApiStandIn

JsonDict = dict[str, Any]

# auth.test is left alone: Bolt calls it once before the first ack, and the runs warm it up.
FAULTY_METHODS = frozenset(
    {
        "chat.postMessage",
        "chat.postEphemeral",
        "chat.update",
        "users.info",
        "files.getUploadURLExternal",
        "files.completeUploadExternal",
    }
)
# Slack's deadline for an ack is 3 s; a slow answer here takes longer than that.
SLOW_SECONDS = 3.5


@dataclass(frozen=True)
class Faults:
    """Shares of calls answered 429, 500 or slowly (the rest are answered normally)."""

    rate_limited: float = 0.0
    server_error: float = 0.0
    slow: float = 0.0
    retry_after: int = 1
    slow_seconds: float = SLOW_SECONDS
    seed: int = 0

    @classmethod
    def parse(cls, spec: str, *, seed: int = 0) -> Faults:
        """Read ``429=0.1,500=0.05,slow=0.05`` (any subset, shares between 0 and 1)."""
        names = {"429": "rate_limited", "500": "server_error", "slow": "slow"}
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            key, _, share = part.partition("=")
            if key not in names:
                raise ValueError(f"unknown fault {key!r}; use 429, 500 or slow")
            values[names[key]] = float(share)
        faults = cls(seed=seed, **values)
        if not 0 <= faults.rate_limited + faults.server_error + faults.slow <= 1:
            raise ValueError("the shares of faults add up to more than 1")
        return faults

    @property
    def any(self) -> bool:
        """Return whether any call may be faulted."""
        return self.rate_limited + self.server_error + self.slow > 0


@dataclass(frozen=True)
class Record:
    """Everything the stand-in saw: calls carried out, response_url posts, faults injected."""

    calls: list[tuple[str, JsonDict]] = field(default_factory=list)
    responses: list[tuple[str, JsonDict]] = field(default_factory=list)
    faults: list[tuple[str, str]] = field(default_factory=list)

    def of(self, method: str) -> list[JsonDict]:
        """Return the parameters of every carried-out call of one method, oldest first."""
        return [params for name, params in self.calls if name == method]

    def responses_to(self, name: str) -> list[JsonDict]:
        """Return the bodies posted to one ``response_url``."""
        return [body for who, body in self.responses if who == name]

    def fault_counts(self) -> dict[str, int]:
        """Return how many faults of each kind were injected."""
        counts: dict[str, int] = {}
        for _method, kind in self.faults:
            counts[kind] = counts.get(kind, 0) + 1
        return counts

    def to_json(self) -> JsonDict:
        """Return the record as plain JSON values."""
        return {
            "calls": [[m, p] for m, p in self.calls],
            "responses": [[n, b] for n, b in self.responses],
            "faults": [[m, k] for m, k in self.faults],
        }

    @classmethod
    def from_json(cls, data: JsonDict) -> Record:
        """Read a record written by ``to_json``."""
        return cls(
            calls=[(m, p) for m, p in data["calls"]],
            responses=[(n, b) for n, b in data["responses"]],
            faults=[(m, k) for m, k in data["faults"]],
        )


class FaultyStandIn(SlackApiStandIn):
    """The Slack stand-in, answering a share of calls with a fault."""

    def __init__(self, faults: Faults | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.faults = faults or Faults()
        self.injected: list[tuple[str, str]] = []
        self._rng = random.Random(self.faults.seed)
        self._next: dict[str, list[str]] = {}
        self.in_flight = 0  # requests being answered now (a slow one counts until it is)

    def set_faults(self, faults: Faults) -> None:
        """Change the shares from now on."""
        self.faults = faults
        self._rng = random.Random(faults.seed)

    def fault_next(self, method: str, kind: str, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with one kind of fault, shares aside.

        ``kind`` is ``rate_limited``, ``server_error`` or ``slow``.
        """
        assert kind in ("rate_limited", "server_error", "slow"), kind
        self._next.setdefault(method, []).extend([kind] * times)

    def _draw(self, method: str) -> str | None:
        scripted = self._next.get(method)
        if scripted:
            return scripted.pop(0)
        if method not in FAULTY_METHODS or not self.faults.any:
            return None
        roll = self._rng.random()
        for kind, share in (
            ("rate_limited", self.faults.rate_limited),
            ("server_error", self.faults.server_error),
            ("slow", self.faults.slow),
        ):
            if roll < share:
                return kind
            roll -= share
        return None

    async def _api(self, request: web.Request) -> web.Response:
        self.in_flight += 1
        try:
            return await self._faulty(request)
        finally:
            self.in_flight -= 1

    async def _faulty(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        kind = self._draw(method)
        if kind is not None:
            self.injected.append((method, kind))
        if kind == "rate_limited":
            await request.read()
            return web.json_response(
                {"ok": False, "error": "ratelimited"},
                status=429,
                headers={"Retry-After": str(self.faults.retry_after)},
            )
        if kind == "server_error":
            await request.read()
            return web.Response(
                status=500, text="upstream connect error", content_type="text/plain"
            )
        if kind == "slow":
            await asyncio.sleep(self.faults.slow_seconds)
        return await super()._api(request)

    def record(self) -> Record:
        """Return a copy of everything seen so far."""
        return Record(
            calls=[(c.method, dict(c.params)) for c in self.calls],
            responses=[(r.name, dict(r.body)) for r in self.responses],
            faults=list(self.injected),
        )

    async def _recorded(self, request: web.Request) -> web.Response:
        if request.query.get("all"):
            return web.json_response(self.record().to_json())
        return await super()._recorded(request)


@dataclass(frozen=True)
class RemoteStandIn:
    """A stand-in running in another process, seen through its base URL."""

    url: str
    session: aiohttp.ClientSession

    def response_url(self, name: str = "r") -> str:
        """Return a ``response_url`` whose posts are recorded under ``name``."""
        return self.url.removesuffix("api/") + f"respond/{name}"

    async def record(self) -> Record:
        """Fetch everything the stand-in saw so far."""
        where = self.url.removesuffix("api/") + "_standin/calls"
        async with self.session.get(
            where, params={"all": "1"}, timeout=aiohttp.ClientTimeout(30)
        ) as resp:
            return Record.from_json(await resp.json())


async def _serve(port: int, faults: Faults) -> None:
    standin = FaultyStandIn(faults)
    await standin.start(port=port)
    print(standin.url, flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await standin.stop()


def main() -> None:
    """Serve the faulty stand-in until interrupted; print its base URL first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--faults", default="", help="like 429=0.1,500=0.05,slow=0.05")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port, Faults.parse(args.faults, seed=args.seed)))


if __name__ == "__main__":
    main()
