"""A local stand-in of the Slack Web API, Socket Mode and ``response_url`` endpoints.

It records every call (method, parameters, token) so tests can assert on what reached the wire,
answers the methods quizbot uses the way Slack does, can answer 429 with ``Retry-After`` a given
number of times, and plays the Socket Mode side: ``apps.connections.open`` hands out a WebSocket
URL on this server, which sends ``hello`` and then whatever envelopes a test pushes, and records
the acks. Run it alone with ``python -m tests.standins.slack_api`` (it prints its base URL).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

JsonDict = dict[str, Any]

# The bot scope each Web API method needs (None: no scope), as the "Scopes" section of each
# method's page at https://docs.slack.dev/reference/methods/<method> gives it.
BOT_SCOPE: dict[str, str | None] = {
    "auth.test": None,
    "chat.postMessage": "chat:write",
    "chat.update": "chat:write",
    "chat.postEphemeral": "chat:write",
    "conversations.join": "channels:join",
    "conversations.history": "channels:history",
    "users.info": "users:read",
    "team.info": "team:read",
    "files.getUploadURLExternal": "files:write",
    "files.completeUploadExternal": "files:write",
    "reactions.add": "reactions:write",
    "views.publish": None,
    "views.open": None,
    # The app-level token's connections:write, not a bot scope.
    "apps.connections.open": None,
    # Authenticated by the app's client id and secret.
    "oauth.v2.access": None,
}
# What a method needs instead in a private channel (ids starting with G, as Slack's older ones).
PRIVATE_SCOPE: dict[str, str] = {"conversations.history": "groups:history"}
# Posting in a public channel the bot is not a member of takes this scope as well.
POST_PUBLIC = "chat:write.public"
# The scope each Events API event needs, from https://docs.slack.dev/reference/events/<event>.
EVENT_SCOPE: dict[str, str | None] = {
    "reaction_added": "reactions:read",
    "reaction_removed": "reactions:read",
    "app_home_opened": None,
    # https://docs.slack.dev/reference/events/app_uninstalled and .../tokens_revoked: no scope.
    "app_uninstalled": None,
    "tokens_revoked": None,
}


@dataclass(frozen=True)
class ApiCall:
    """One Web API call as it arrived."""

    method: str
    params: JsonDict
    token: str | None
    ok: bool = True  # whether the stand-in answered it with ok: true


@dataclass(frozen=True)
class ResponseUrlPost:
    """One POST to a ``response_url``."""

    name: str
    body: JsonDict


@dataclass(frozen=True)
class SlackLimits:
    """Slack's posting limits and a network latency, enforced only when a test asks for them.

    ``chat.postMessage`` allows about one message a second in a channel and keeps a limit per
    workspace (https://docs.slack.dev/apis/web-api/rate-limits, "Posting messages"); past
    either the call is answered 429 with ``Retry-After`` in whole seconds. Slack does not
    publish the workspace figure: ``per_workspace_per_minute`` is the stand-in's setting.
    ``workspace_of`` names the workspace a channel belongs to (by default, the stand-in's one).
    """

    per_channel_per_second: float = 1.0
    per_workspace_per_minute: int = 300
    latency: float = 0.0
    workspace_of: Callable[[str], str] | None = None


@dataclass
class _RateLimit:
    times: int
    retry_after: int


@dataclass
class _Socket:
    ws: web.WebSocketResponse
    acks: list[JsonDict] = field(default_factory=list)


class SlackApiStandIn:
    """An aiohttp server that answers like ``https://slack.com/api/`` for one workspace."""

    def __init__(
        self,
        *,
        team_id: str = "T0TEAM",
        bot_user_id: str = "U0BOT",
        admins: Iterable[str] = (),
        owners: Iterable[str] = (),
        outside: Iterable[str] = (),
        private: Iterable[str] = (),
        granted: Iterable[str] | None = None,
        limits: SlackLimits | None = None,
        people: dict[str, str] | None = None,
        team_name: str = "Stand-in Cluster Team",
    ) -> None:
        self.team_id = team_id
        # What team.info calls every workspace (its domain is "standin" in the payloads).
        self.team_name = team_name
        self.limits = limits
        # Under ``limits``: when each channel last had a message, each workspace's last minute.
        self._channel_posted: dict[str, float] = {}
        self._workspace_posted: dict[str, deque[float]] = {}
        # Display names users.info gives (profile.display_name); others have only a handle.
        self.people = dict(people or {})
        self.bot_user_id = bot_user_id
        self.admins = set(admins)
        self.owners = set(owners)
        # Channels the bot is not a member of: public ones it may join, private ones it may not.
        # Every other channel id is one it is in.
        self.outside = set(outside)
        self.private = set(private)
        # The bot token's scopes (None: every scope); a call without its scope gets missing_scope.
        self.granted = None if granted is None else set(granted)
        self.scopes_used: set[str] = set()
        self.refused: list[tuple[str, str]] = []
        self.calls: list[ApiCall] = []
        self.responses: list[ResponseUrlPost] = []
        self.uploads: dict[str, bytes] = {}
        self.counts: dict[str, int] = {}
        self.socket_acks: list[JsonDict] = []
        self.limited: list[str] = []
        self._limits: dict[str, _RateLimit] = {}
        self._failures: dict[str, list[str]] = {}
        self._held: dict[str, asyncio.Event] = {}
        # Calls carried out whose answers never leave (the caller dies waiting), per method.
        self._lost: dict[str, int] = {}
        self._never = asyncio.Event()
        # Each channel's messages (not thread replies), oldest first, as history returns them.
        self.history: dict[str, list[JsonDict]] = {}
        # Slack caps a history page at this many messages (None: its usual 999).
        self.history_cap: int | None = None
        self.arrived: dict[str, int] = {}
        self._ts = itertools.count(1)
        self._triggers: set[str] = set()
        self._files = itertools.count(1)
        self._sockets: list[_Socket] = []
        self._socket_ready = asyncio.Event()
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve on host:port (port 0 picks a free one)."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_post("/respond/{name}", self._respond)
        app.router.add_get("/link/", self._socket)
        app.router.add_get("/_standin/calls", self._recorded)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        """Close open sockets and stop serving."""
        self._never.set()
        for sock in list(self._sockets):
            await sock.ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def url(self) -> str:
        """Return the Web API base URL (ends with ``/``), for ``SLACK_API_URL``."""
        return f"http://127.0.0.1:{self.port}/api/"

    def response_url(self, name: str = "r") -> str:
        """Return a ``response_url`` whose posts are recorded under ``name``."""
        return f"http://127.0.0.1:{self.port}/respond/{name}"

    # ------------------------------------------------------------------ test controls

    def rate_limit(self, method: str, times: int, retry_after: int = 0) -> None:
        """Answer the next ``times`` calls of ``method`` with 429 and ``Retry-After``."""
        self._limits[method] = _RateLimit(times, retry_after)

    def hold(self, method: str) -> asyncio.Event:
        """Keep every call of a method waiting, unanswered, until the returned event is set.

        ``wait_arrived`` tells when a held call has come in.
        """
        release = asyncio.Event()
        self._held[method] = release
        return release

    async def wait_arrived(self, method: str, count: int = 1, within: float = 5.0) -> None:
        """Wait until ``count`` calls of a method have arrived (answered or held)."""
        await self.wait_for(lambda: self.arrived.get(method, 0) >= count, within)

    def lose_answer(self, method: str, times: int = 1) -> None:
        """Carry out the next ``times`` calls of ``method`` but never send their answers.

        What a process sees when Slack has done what it asked and the process dies (or the
        connection drops) before the answer reaches it: the message is in the channel, and
        the caller has no ts for it.
        """
        self._lost[method] = times

    def fail(self, method: str, error: str, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with ``{"ok": false, "error": error}``."""
        self._failures[method] = [error] * times

    def token_scopes(self) -> list[str]:
        """Return the bot token's scopes: those granted, or every scope the methods here need."""
        if self.granted is not None:
            return sorted(self.granted)
        # Every scope: it posts where the bot is not a member too.
        every = {*BOT_SCOPE.values(), *PRIVATE_SCOPE.values(), *EVENT_SCOPE.values()}
        every |= {"commands", POST_PUBLIC}
        return sorted(scope for scope in every if scope)

    def is_member(self, channel: str) -> bool:
        """Return whether the bot is in a channel: Slack sends events only from those."""
        return channel not in self.outside and channel not in self.private

    def of(self, method: str) -> list[ApiCall]:
        """Return the recorded calls of one method, oldest first."""
        return [c for c in self.calls if c.method == method]

    def responses_to(self, name: str) -> list[JsonDict]:
        """Return the bodies posted to one ``response_url``."""
        return [r.body for r in self.responses if r.name == name]

    async def wait_for(self, check: Callable[[], bool], within: float = 5.0) -> None:
        """Wait until ``check()`` is true (TimeoutError after ``within`` seconds)."""

        async def waiting() -> None:
            async with self._changed:
                await self._changed.wait_for(check)

        await asyncio.wait_for(waiting(), within)

    async def wait_calls(self, method: str, count: int = 1, within: float = 5.0) -> list[ApiCall]:
        """Wait until ``method`` has been called at least ``count`` times and return the calls."""
        await self.wait_for(lambda: self.counts.get(method, 0) >= count, within)
        return self.of(method)

    async def wait_socket(self, within: float = 5.0) -> None:
        """Wait until a Socket Mode client is connected and has been sent ``hello``."""
        await asyncio.wait_for(self._socket_ready.wait(), within)

    async def send_envelope(self, kind: str, payload: JsonDict) -> str:
        """Push an envelope to the connected Socket Mode client and return its id."""
        envelope_id = str(uuid.uuid4())
        await self._sockets[-1].ws.send_json(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": kind != "events_api",
                "retry_attempt": 0,
                "retry_reason": "",
            }
        )
        return envelope_id

    async def wait_ack(self, envelope_id: str, within: float = 5.0) -> JsonDict:
        """Wait for the client's ack of an envelope and return it."""

        def acked() -> bool:
            return any(a.get("envelope_id") == envelope_id for a in self.socket_acks)

        await self.wait_for(acked, within)
        return next(a for a in self.socket_acks if a.get("envelope_id") == envelope_id)

    # ------------------------------------------------------------------ endpoints

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params: JsonDict = dict(request.query)
        if request.can_read_body:
            if request.content_type == "application/json":
                params.update(await request.json())
            else:
                params.update(dict(await request.post()))
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") or params.pop("token", None)
        self.arrived[method] = self.arrived.get(method, 0) + 1
        release = self._held.get(method)
        if release is not None:
            await self._notify()
            await release.wait()
        if self.limits is not None:
            if self.limits.latency:
                await asyncio.sleep(self.limits.latency)
            wait = self._over_limits(method, params)
            if wait is not None:
                self.limited.append(method)
                self.counts["429"] = self.counts.get("429", 0) + 1
                await self._notify()
                return web.json_response(
                    {"ok": False, "error": "ratelimited"},
                    status=429,
                    headers={"Retry-After": str(wait)},
                )
        limit = self._limits.get(method)
        if limit is not None and limit.times > 0:
            limit.times -= 1
            self.limited.append(method)
            return web.json_response(
                {"ok": False, "error": "ratelimited"},
                status=429,
                headers={"Retry-After": str(limit.retry_after)},
            )
        failures = self._failures.get(method)
        if failures:
            answer = {"ok": False, "error": failures.pop()}
        else:
            refusal = self._refusal(method, params)
            if refusal is not None:
                self.refused.append((method, str(refusal["error"])))
            answer = refusal or self._answer(method, params, request)
        self.calls.append(ApiCall(method, params, token, ok=bool(answer.get("ok"))))
        self.counts[method] = self.counts.get(method, 0) + 1
        await self._notify()
        if self._lost.get(method, 0) > 0:
            self._lost[method] -= 1
            await self._never.wait()
        # Slack names the token's scopes on every answer.
        return web.json_response(answer, headers={"x-oauth-scopes": ",".join(self.token_scopes())})

    def _over_limits(self, method: str, params: JsonDict) -> int | None:
        """Return the whole seconds to wait when a post goes past the limits, else record it."""
        limits = self.limits
        if limits is None or method != "chat.postMessage":
            return None
        channel = str(params.get("channel", ""))
        workspace = limits.workspace_of(channel) if limits.workspace_of else self.team_id
        now = time.monotonic()
        gap = 1.0 / limits.per_channel_per_second
        last = self._channel_posted.get(channel)
        if last is not None and now - last < gap:
            return max(1, math.ceil(last + gap - now))
        recent = self._workspace_posted.setdefault(workspace, deque())
        while recent and now - recent[0] >= 60.0:
            recent.popleft()
        if len(recent) >= limits.per_workspace_per_minute:
            return max(1, math.ceil(recent[0] + 60.0 - now))
        self._channel_posted[channel] = now
        recent.append(now)
        return None

    def _refusal(self, method: str, params: JsonDict) -> JsonDict | None:
        """Return Slack's error for a call the token's scopes or the channel do not allow."""
        channel = str(params.get("channel", ""))
        needed = [PRIVATE_SCOPE.get(method) if channel.startswith("G") else None]
        needed = [needed[0] or BOT_SCOPE.get(method)]
        if method == "conversations.history" and not self.is_member(channel):
            return {
                "ok": False,
                "error": "not_in_channel" if channel in self.outside else "channel_not_found",
            }
        if method in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
            if channel in self.private:
                return {"ok": False, "error": "channel_not_found"}
            if channel in self.outside and method == "chat.postMessage":
                needed.append(POST_PUBLIC)
        for scope in filter(None, needed):
            if self.granted is not None and scope not in self.granted:
                if scope == POST_PUBLIC:
                    return {"ok": False, "error": "not_in_channel"}
                provided = ",".join(sorted(self.granted))
                return {
                    "ok": False,
                    "error": "missing_scope",
                    "needed": scope,
                    "provided": provided,
                }
        self.scopes_used.update(filter(None, needed))
        return None

    def _answer(self, method: str, params: JsonDict, request: web.Request) -> JsonDict:
        base = f"http://{request.host}"
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://standin.slack.invalid/",
                "team": "Stand-in",
                "user": "quizbot",
                "team_id": self.team_id,
                "user_id": self.bot_user_id,
                "bot_id": "B0BOT",
                "is_enterprise_install": False,
            }
        if method == "chat.postMessage":
            ts = f"1700000000.{next(self._ts):06d}"
            message = {"type": "message", "ts": ts, "text": params.get("text", "")}
            if not params.get("thread_ts"):
                self._keep(str(params.get("channel", "")), message, params)
            return {"ok": True, "channel": params.get("channel"), "ts": ts, "message": message}
        if method == "conversations.history":
            return self._history(params)
        if method == "chat.update":
            return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"1700000001.{next(self._ts):06d}"}
        if method == "users.info":
            user = str(params.get("user", ""))
            return {
                "ok": True,
                "user": {
                    "id": user,
                    "team_id": self.team_id,
                    "name": user.lower(),
                    "real_name": self.people.get(user, ""),
                    "profile": {
                        "display_name": self.people.get(user, ""),
                        "real_name": self.people.get(user, ""),
                    },
                    "is_admin": user in self.admins,
                    "is_owner": user in self.owners,
                    "is_bot": False,
                },
            }
        if method == "team.info":
            team = str(params.get("team") or self.team_id)
            return {"ok": True, "team": {"id": team, "name": self.team_name, "domain": "standin"}}
        if method == "files.getUploadURLExternal":
            file_id = f"F{next(self._files):08d}"
            return {"ok": True, "upload_url": f"{base}/upload/{file_id}", "file_id": file_id}
        if method == "files.completeUploadExternal":
            files = params.get("files")
            listed = json.loads(files) if isinstance(files, str) else files or []
            return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in listed]}
        if method == "reactions.add":
            return {"ok": True}
        if method == "views.open":
            view = params.get("view")
            shown = json.loads(view) if isinstance(view, str) else view
            # A trigger_id is good once, for 3 seconds; a modal holds at most 100 blocks and
            # its title at most 24 characters.
            trigger = str(params.get("trigger_id") or "")
            if not trigger or trigger in self._triggers:
                return {"ok": False, "error": "invalid_trigger_id"}
            self._triggers.add(trigger)
            title = ((shown or {}).get("title") or {}).get("text", "")
            if len((shown or {}).get("blocks") or []) > 100 or len(title) > 24:
                return {"ok": False, "error": "invalid_arguments"}
            return {"ok": True, "view": {"id": f"V{next(self._ts):08d}", **(shown or {})}}
        if method == "views.publish":
            view = params.get("view")
            shown = json.loads(view) if isinstance(view, str) else view
            return {"ok": True, "view": {"id": f"V{next(self._ts):08d}", **(shown or {})}}
        if method == "conversations.join":
            channel = str(params.get("channel", ""))
            if channel in self.private:
                return {"ok": False, "error": "method_not_supported_for_channel_type"}
            joined = {"id": channel, "is_channel": True, "is_private": False, "is_member": True}
            if channel not in self.outside:
                return {"ok": True, "channel": joined, "warning": "already_in_channel"}
            self.outside.discard(channel)
            return {"ok": True, "channel": joined}
        if method == "apps.connections.open":
            return {"ok": True, "url": f"ws://{request.host}/link/?ticket={uuid.uuid4()}"}
        return {"ok": False, "error": "unknown_method"}

    def _keep(self, channel: str, message: JsonDict, params: JsonDict) -> None:
        """Keep a posted message in its channel's history, with its metadata if it has one."""
        kept = dict(message, user=self.bot_user_id, bot_id="B0BOT", app_id="A0APP")
        metadata = params.get("metadata")
        if isinstance(metadata, str):
            metadata = json.loads(metadata)
        if isinstance(metadata, dict):
            kept["metadata"] = metadata
        # The stand-in's ts are a counter: ``oldest`` is compared with when it was made.
        kept["_made"] = time.time()
        self.history.setdefault(channel, []).append(kept)

    def _history(self, params: JsonDict) -> JsonDict:
        """Answer conversations.history: newest first, after ``oldest``, a page at a time.

        Message metadata is returned only with ``include_all_metadata``
        (https://docs.slack.dev/reference/methods/conversations.history).
        """
        channel = str(params.get("channel", ""))
        oldest = float(params.get("oldest") or 0)
        inclusive = str(params.get("inclusive", "")).lower() in ("1", "true")
        with_meta = str(params.get("include_all_metadata", "")).lower() in ("1", "true")
        limit = min(int(params.get("limit") or 100), self.history_cap or 999)
        start = int(params.get("cursor") or 0)
        found = [
            m
            for m in reversed(self.history.get(channel, []))
            if m["_made"] > oldest or (inclusive and m["_made"] == oldest)
        ]
        page = []
        for m in found[start : start + limit]:
            shown = {k: v for k, v in m.items() if not k.startswith("_")}
            if not with_meta:
                shown.pop("metadata", None)
            page.append(shown)
        more = start + limit < len(found)
        return {
            "ok": True,
            "messages": page,
            "has_more": more,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    async def _upload(self, request: web.Request) -> web.Response:
        data = await request.read()
        self.uploads[request.match_info["file_id"]] = data
        await self._notify()
        return web.Response(text=f"OK - {len(data)}")

    async def _respond(self, request: web.Request) -> web.Response:
        self.responses.append(ResponseUrlPost(request.match_info["name"], await request.json()))
        self.counts["response_url"] = self.counts.get("response_url", 0) + 1
        await self._notify()
        return web.json_response({"ok": True})

    async def _recorded(self, request: web.Request) -> web.Response:
        # Lets a test in another process read what was recorded.
        method = request.query.get("method", "")
        return web.json_response(
            {"calls": [c.params for c in self.of(method)], "count": self.counts.get(method, 0)}
        )

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        sock = _Socket(ws)
        self._sockets.append(sock)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": len(self._sockets),
                "connection_info": {"app_id": "A0APP"},
                "debug_info": {"host": "standin", "approximate_connection_time": 3600},
            }
        )
        self._socket_ready.set()
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    self.socket_acks.append(json.loads(msg.data))
                    await self._notify()
        finally:
            self._sockets.remove(sock)
        return ws


async def _serve(port: int) -> None:
    standin = SlackApiStandIn()
    await standin.start(port=port)
    print(standin.url, flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await standin.stop()


def main() -> None:
    """Serve the stand-in until interrupted; print its base URL first."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port))


if __name__ == "__main__":
    main()
