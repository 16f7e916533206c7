"""A local stand-in of Discord's REST API and gateway, for tests and benchmarks.

The real discord.py client talks to it over HTTP and WebSocket on 127.0.0.1. It answers the
routes the bot uses, keeps the messages it was sent (so a click can carry the real card), records
every request, and lets a test push gateway dispatches (INTERACTION_CREATE, MESSAGE_REACTION_ADD).

    async with DiscordStandIn() as api:
        configure_endpoints(api.api_url, api.gateway_url)
        ...
        call = await api.interact(api.command("quiz", "next"))
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import BodyPartReader, WSMsgType, web

DISCORD_EPOCH_MS = 1_420_070_400_000
API_PREFIX = "/api/v10"
EPHEMERAL = 64

# Option types of application commands (Discord's numbering).
SUB_COMMAND = 1
STRING = 3
INTEGER = 4
BOOLEAN = 5
USER = 6
NUMBER = 10


def _iso(ts: float | None = None) -> str:
    return datetime.fromtimestamp(ts if ts is not None else time.time(), UTC).isoformat()


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # discord.py parses a body only when Content-Type is exactly application/json (no charset).
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return web.Response(body=json.dumps(data).encode(), status=status, headers=all_headers)


@dataclass
class UploadedFile:
    """One file part of a multipart request."""

    field: str
    filename: str
    content_type: str
    data: bytes


@dataclass
class Call:
    """One request that reached the stand-in."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    files: list[UploadedFile]
    status: int
    at: float
    authorization: str | None


@dataclass(frozen=True)
class DiscordLimits:
    """Discord's rate limits and a network latency, enforced only when a test asks for them.

    A bot may make 50 requests a second in all (the global limit), and each route, per channel
    for the channel routes, has a bucket of its own; every answer carries the bucket's
    ``X-RateLimit-*`` headers, and a request past a limit is answered 429 with ``retry_after``
    and ``global`` (https://discord.com/developers/docs/topics/rate-limits). Discord does not
    publish the buckets' sizes: ``route_per_window`` in ``route_window`` seconds is the
    stand-in's setting. Interaction endpoints are outside the global limit, as on Discord.
    """

    global_per_second: int = 50
    route_per_window: int = 5
    route_window: float = 5.0
    latency: float = 0.0


@dataclass
class _Bucket:
    remaining: int
    reset_at: float


_SNOWFLAKE = re.compile(r"/\d{5,}")


@dataclass
class RateLimit:
    """Answer 429 to matching requests ``times`` times."""

    method: str
    pattern: re.Pattern[str]
    times: int
    retry_after: float
    is_global: bool
    via: bool


@dataclass
class _Session:
    ws: web.WebSocketResponse
    session_id: str = ""
    seq: int = 0
    identified: asyncio.Event = field(default_factory=asyncio.Event)


class DiscordStandIn:
    """An aiohttp server that plays Discord for one bot in one or more guilds."""

    def __init__(
        self,
        *,
        application_id: int = 900_000_000_000_000_001,
        bot_id: int = 900_000_000_000_000_002,
        guild_ids: tuple[int, ...] = (910_000_000_000_000_001,),
        channels_per_guild: int = 2,
        limits: DiscordLimits | None = None,
    ) -> None:
        self.limits = limits
        self.rate_limited = 0  # 429s answered under ``limits``
        self._global: deque[float] = deque()
        self._buckets: dict[str, _Bucket] = {}
        self.application_id = application_id
        self.bot_id = bot_id
        self.bot_user = self.user(bot_id, "quizbot", bot=True)
        self.token = "stand-in-token"
        self.calls: list[Call] = []
        self.identifies: list[dict[str, Any]] = []
        self.resumes: list[dict[str, Any]] = []
        self.messages: dict[int, dict[str, Any]] = {}
        self.channels: dict[int, dict[str, Any]] = {}
        self.commands: dict[str, list[dict[str, Any]]] = {}
        self.forbid_threads = False
        # Create message with ``enforce_nonce``: one message per author and nonce within this
        # window ("the past few minutes": Discord does not give the figure), a repeat answered
        # with the first (https://discord.com/developers/docs/resources/message#create-message).
        self.nonce_window = 300.0
        self._nonces: dict[str, tuple[float, int]] = {}
        # Requests carried out whose answers never leave, by (method, path pattern).
        self._lost: list[tuple[str, re.Pattern[str], list[int]]] = []
        self._never: asyncio.Event | None = None
        self.dispatched_at: dict[int, float] = {}
        self._interactions: dict[str, dict[str, Any]] = {}
        self._limits: list[RateLimit] = []
        self._refusals: list[tuple[str, re.Pattern[str], int, int, list[int]]] = []
        self._sessions: list[_Session] = []
        self._known_sessions: dict[str, _Session] = {}
        self._ids = itertools.count()
        self._changed: asyncio.Condition | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.guilds: dict[int, dict[str, Any]] = {}
        for gid in guild_ids:
            chans = [self._text_channel(gid, f"study-{i}") for i in range(channels_per_guild)]
            self.guilds[gid] = self._guild(gid, chans)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> DiscordStandIn:
        """Start serving on 127.0.0.1 on a free port."""
        self._changed = asyncio.Condition()
        self._never = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", API_PREFIX + "/{tail:.*}", self._rest)
        self._runner = web.AppRunner(
            app, handle_signals=False, access_log=None, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        """Close every gateway connection and stop the server."""
        if self._never is not None:
            self._never.set()
        await self.drop_connections(code=1001)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> DiscordStandIn:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def api_url(self) -> str:
        """Return the REST base URL (what ``DISCORD_API_URL`` is set to)."""
        return f"http://127.0.0.1:{self.port}{API_PREFIX}"

    @property
    def gateway_url(self) -> str:
        """Return the gateway URL (what ``DISCORD_GATEWAY_URL`` is set to)."""
        return f"ws://127.0.0.1:{self.port}/gateway"

    # ------------------------------------------------------------------ fixtures of the world

    def snowflake(self) -> int:
        """Return a new id, increasing, with a creation time of now."""
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        return (ms << 22) | (next(self._ids) & 0x3FFFFF)

    @staticmethod
    def user(user_id: int, name: str | None = None, *, bot: bool = False) -> dict[str, Any]:
        """Return a user object."""
        return {
            "id": str(user_id),
            "username": name or f"user{user_id % 10_000}",
            "discriminator": "0",
            "global_name": None,
            "avatar": None,
            "bot": bot,
            "flags": 0,
            "public_flags": 0,
        }

    def member(self, user_id: int, *, permissions: int = 0) -> dict[str, Any]:
        """Return a guild member object with the given permission bits."""
        return {
            "user": self.user(user_id),
            "nick": None,
            "avatar": None,
            "roles": [],
            "joined_at": _iso(),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "permissions": str(permissions),
            "communication_disabled_until": None,
        }

    def _text_channel(self, guild_id: int, name: str) -> dict[str, Any]:
        channel = {
            "id": str(self.snowflake()),
            "type": 0,
            "guild_id": str(guild_id),
            "name": name,
            "position": len(self.channels),
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
        }
        self.channels[int(channel["id"])] = channel
        return channel

    def _guild(self, guild_id: int, channels: list[dict[str, Any]]) -> dict[str, Any]:
        everyone = {
            "id": str(guild_id),
            "name": "@everyone",
            "permissions": str((1 << 31) | (1 << 10) | (1 << 11) | (1 << 6)),
            "position": 0,
            "color": 0,
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }
        return {
            "id": str(guild_id),
            "name": f"guild {guild_id % 10_000}",
            "icon": None,
            "owner_id": "1",
            "roles": [everyone],
            "emojis": [],
            "stickers": [],
            "features": [],
            "channels": channels,
            "threads": [],
            "members": [self.member(self.bot_id) | {"user": self.bot_user}],
            "member_count": 2,
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "large": False,
            "unavailable": False,
            "joined_at": _iso(),
            "preferred_locale": "en-US",
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "system_channel_flags": 0,
        }

    @property
    def guild_id(self) -> int:
        """Return the first guild's id."""
        return next(iter(self.guilds))

    def channel_ids(self, guild_id: int | None = None) -> list[int]:
        """Return the text channels of a guild (the first guild by default)."""
        gid = guild_id or self.guild_id
        return [int(c["id"]) for c in self.guilds[gid]["channels"]]

    @property
    def application(self) -> dict[str, Any]:
        """Return the application object of ``GET /oauth2/applications/@me``."""
        return {
            "id": str(self.application_id),
            "name": "quizbot",
            "description": "",
            "icon": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": self.user(1, "owner"),
            "verify_key": "00" * 32,
            "flags": 0,
            "summary": "",
            "team": None,
            "bot": self.bot_user,
        }

    # ------------------------------------------------------------------ rate limits

    def limit(
        self,
        method: str,
        path_regex: str,
        *,
        times: int = 1,
        retry_after: float = 0.05,
        is_global: bool = False,
        via: bool = True,
    ) -> None:
        """Answer the next ``times`` matching requests with 429 (``via``: send a ``Via`` header)."""
        self._limits.append(
            RateLimit(method.upper(), re.compile(path_regex), times, retry_after, is_global, via)
        )

    def refuse(
        self, method: str, path_regex: str, *, status: int = 403, code: int = 50013, times: int = 1
    ) -> None:
        """Answer the next ``times`` matching requests with an error (403 Missing Permissions)."""
        self._refusals.append((method.upper(), re.compile(path_regex), status, code, [times]))

    def lose_answer(self, method: str, path_regex: str, times: int = 1) -> None:
        """Carry out the next ``times`` matching requests but never send their answers.

        What a process sees when Discord has made the message and the process dies (or the
        connection drops) before the answer reaches it.
        """
        self._lost.append((method, re.compile(path_regex), [times]))

    def _loses(self, method: str, path: str) -> bool:
        for lost_method, pattern, left in self._lost:
            if lost_method == method and pattern.search(path) and left[0] > 0:
                left[0] -= 1
                return True
        return False

    def _refused(self, method: str, path: str) -> web.Response | None:
        for want, pattern, status, code, left in self._refusals:
            if left[0] > 0 and want == method and pattern.search(path):
                left[0] -= 1
                return _json({"message": "Refused by the stand-in", "code": code}, status)
        return None

    def _limited(self, method: str, path: str) -> web.Response | None:
        for lim in self._limits:
            if lim.times > 0 and lim.method == method and lim.pattern.search(path):
                lim.times -= 1
                headers = {
                    "Retry-After": str(max(1, round(lim.retry_after))),
                    "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset-After": str(lim.retry_after),
                    "X-RateLimit-Bucket": "stand-in",
                    "X-RateLimit-Scope": "global" if lim.is_global else "user",
                }
                if lim.via:
                    headers["Via"] = "1.1 google"
                body = {
                    "message": "You are being rate limited.",
                    "retry_after": lim.retry_after,
                    "global": lim.is_global,
                }
                return _json(body, 429, headers)
        return None

    def _over_limits(self, method: str, path: str) -> tuple[web.Response | None, Any]:
        """Answer 429 past the global or the route's limit; else count the request in both."""
        limits = self.limits
        assert limits is not None
        parts = path.strip("/").split("/")
        if parts[0] in ("interactions", "webhooks"):
            return None, None
        now = time.monotonic()
        # A route's bucket: the route with its ids generic, except the channel it acts on.
        major = parts[1] if parts[0] == "channels" and len(parts) > 1 else ""
        key = f"{method} {_SNOWFLAKE.sub('/{id}', path)} {major}"
        bucket = self._buckets.get(key)
        if bucket is None or bucket.reset_at <= now:
            bucket = self._buckets[key] = _Bucket(
                limits.route_per_window, now + limits.route_window
            )
        recent = self._global
        while recent and now - recent[0] >= 1.0:
            recent.popleft()
        if len(recent) >= limits.global_per_second:
            return self._too_many(recent[0] + 1.0 - now, scope="global"), None
        if bucket.remaining <= 0:
            response = self._too_many(bucket.reset_at - now, scope="user")
            response.headers.update(self._bucket_headers(key, bucket))
            return response, None
        bucket.remaining -= 1
        recent.append(now)
        return None, (key, bucket)

    def _too_many(self, wait: float, *, scope: str) -> web.Response:
        self.rate_limited += 1
        wait = max(wait, 0.001)
        headers = {
            "Retry-After": str(max(1, round(wait))),
            "X-RateLimit-Scope": scope,
            # Discord's 429s come through its proxy; without Via discord.py takes one for a ban.
            "Via": "1.1 google",
        }
        if scope == "global":
            headers["X-RateLimit-Global"] = "true"
        body = {
            "message": "You are being rate limited.",
            "retry_after": round(wait, 3),
            "global": scope == "global",
        }
        return _json(body, 429, headers)

    def _bucket_headers(self, key: str, bucket: _Bucket) -> dict[str, str]:
        assert self.limits is not None
        reset_after = max(0.0, bucket.reset_at - time.monotonic())
        return {
            "X-RateLimit-Limit": str(self.limits.route_per_window),
            "X-RateLimit-Remaining": str(max(0, bucket.remaining)),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": f"{abs(hash(key.rsplit(' ', 1)[0])):x}",
        }

    # ------------------------------------------------------------------ recording

    async def _record(self, call: Call) -> None:
        self.calls.append(call)
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(
        self, predicate: Callable[[Call], bool], *, within: float = 5.0, after: int = 0
    ) -> Call:
        """Return the first recorded call (from index ``after``) that matches, waiting for it."""
        assert self._changed is not None

        def found() -> Call | None:
            return next((c for c in self.calls[after:] if predicate(c)), None)

        try:
            async with asyncio.timeout(within), self._changed:
                await self._changed.wait_for(lambda: found() is not None)
        except TimeoutError:
            seen = "\n".join(f"  {c.method} {c.path} -> {c.status}" for c in self.calls[after:])
            raise AssertionError(f"no matching request within {within}s; saw:\n{seen}") from None
        result = found()
        assert result is not None
        return result

    def find(self, method: str, path_regex: str) -> list[Call]:
        """Return the recorded successful calls with this method whose path matches."""
        rx = re.compile(path_regex)
        return [
            c for c in self.calls if c.method == method and rx.search(c.path) and c.status < 300
        ]

    # ------------------------------------------------------------------ REST

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        method = request.method
        body, files = await self._read_body(request)
        bucket: tuple[str, _Bucket] | None = None
        limited = self._limited(method, path) or self._refused(method, path)
        if limited is None and self.limits is not None:
            if self.limits.latency:
                await asyncio.sleep(self.limits.latency)
            limited, bucket = self._over_limits(method, path)
        if limited is not None:
            response = limited
        else:
            try:
                response = await self._route(method, path, body, files, request)
            except _Error as err:
                response = _json({"message": err.message, "code": err.code}, err.status)
            if bucket is not None:
                response.headers.update(self._bucket_headers(*bucket))
        await self._record(
            Call(
                method=method,
                path=path,
                query=dict(request.query),
                body=body,
                files=files,
                status=response.status,
                at=time.perf_counter(),
                authorization=request.headers.get("Authorization"),
            )
        )
        if response.status < 300 and self._loses(method, path):
            assert self._never is not None
            await self._never.wait()
        return response

    @staticmethod
    async def _read_body(request: web.Request) -> tuple[Any, list[UploadedFile]]:
        files: list[UploadedFile] = []
        if request.content_type.startswith("multipart/"):
            body: Any = None
            reader = await request.multipart()
            while (part := await reader.next()) is not None:
                if not isinstance(part, BodyPartReader):
                    continue
                data = await part.read(decode=False)
                name = part.name or ""
                if name == "payload_json":
                    body = json.loads(data)
                else:
                    files.append(
                        UploadedFile(
                            field=name,
                            filename=part.filename or "",
                            content_type=part.headers.get("Content-Type", ""),
                            data=bytes(data),
                        )
                    )
            return body, files
        raw = await request.read()
        if not raw:
            return None, files
        try:
            return json.loads(raw), files
        except ValueError:
            return raw.decode("utf-8", "replace"), files

    async def _route(
        self,
        method: str,
        path: str,
        body: Any,
        files: list[UploadedFile],
        request: web.Request,
    ) -> web.Response:
        parts = path.strip("/").split("/")
        if request.headers.get("Authorization") != f"Bot {self.token}" and parts[0] not in (
            "interactions",
            "webhooks",
        ):
            raise _Error(401, 0, "401: Unauthorized")
        match method, parts:
            case "GET", ["users", "@me"]:
                return _json(self.bot_user | {"verified": True, "mfa_enabled": False})
            case "GET", ["oauth2", "applications", "@me"]:
                return _json(self.application)
            case "GET", ["gateway", "bot"]:
                return _json(
                    {
                        "url": self.gateway_url,
                        "shards": 1,
                        "session_start_limit": {
                            "total": 1000,
                            "remaining": 999,
                            "reset_after": 0,
                            "max_concurrency": 1,
                        },
                    }
                )
            case "GET", ["gateway"]:
                return _json({"url": self.gateway_url})
            case "PUT", ["applications", app, "commands"]:
                return _json(self._sync(app, None, body))
            case "PUT", ["applications", app, "guilds", gid, "commands"]:
                return _json(self._sync(app, gid, body))
            case "POST", ["users", "@me", "channels"]:
                return _json(self._dm_channel(int(body["recipient_id"])))
            case "POST", ["channels", cid, "messages"]:
                channel = self._channel(int(cid))
                return _json(self._create(channel, body or {}, files))
            case "GET", ["channels", cid, "messages"]:
                return _json(self._history(int(cid), request.query))
            case "GET", ["channels", cid, "messages", mid]:
                return _json(self._message(int(cid), int(mid)))
            case "PATCH", ["channels", cid, "messages", mid]:
                msg = self._message(int(cid), int(mid))
                return _json(self._edit_message(msg, body or {}, files))
            case "POST", ["channels", cid, "messages", mid, "threads"]:
                return _json(self._thread(int(cid), int(mid), body or {}), 201)
            case "POST", ["interactions", iid, token, "callback"]:
                return self._callback(iid, token, body or {}, files)
            case "POST", ["webhooks", app, token]:
                return _json(self._followup(app, token, body or {}, files))
            case "GET", ["webhooks", app, token, "messages", "@original"]:
                return _json(self._original(token))
            case "PATCH", ["webhooks", app, token, "messages", mref]:
                msg = self._original(token) if mref == "@original" else self._by_id(int(mref))
                return _json(self._edit_message(msg, body or {}, files))
        raise _Error(404, 0, "404: Not Found")

    def _sync(self, app: str, guild_id: str | None, body: Any) -> list[dict[str, Any]]:
        if int(app) != self.application_id:
            raise _Error(403, 50001, "Missing Access")
        if guild_id is not None and int(guild_id) not in self.guilds:
            raise _Error(403, 50001, "Missing Access")
        synced = []
        for cmd in body:
            synced.append(
                {
                    "id": str(self.snowflake()),
                    "application_id": app,
                    "version": str(self.snowflake()),
                    "type": cmd.get("type", 1),
                    "default_member_permissions": cmd.get("default_member_permissions"),
                    "dm_permission": cmd.get("dm_permission", True),
                    "nsfw": cmd.get("nsfw", False),
                    "description": cmd.get("description", ""),
                    "options": cmd.get("options", []),
                    "name": cmd["name"],
                }
                | ({"guild_id": guild_id} if guild_id else {})
            )
        self.commands[guild_id or "global"] = synced
        return synced

    def _create(
        self, channel: dict[str, Any], body: dict[str, Any], files: list[UploadedFile]
    ) -> dict[str, Any]:
        """Create a message, or with ``enforce_nonce`` return the one its nonce made lately."""
        nonce = body.get("nonce")
        if nonce is None or not body.get("enforce_nonce"):
            return self._new_message(channel, body, files)
        key = f"{self.bot_id}:{nonce}"
        now = time.monotonic()
        seen = self._nonces.get(key)
        if seen is not None and now - seen[0] < self.nonce_window and seen[1] in self.messages:
            return self.messages[seen[1]]
        msg = self._new_message(channel, body, files)
        msg["nonce"] = str(nonce)
        self._nonces[key] = (now, int(msg["id"]))
        return msg

    def _history(self, channel_id: int, query: Any) -> list[dict[str, Any]]:
        """Answer Get Channel Messages: newest first, ``limit`` of them, before or after an id.

        A fetched message carries no nonce, as on Discord.
        """
        self._channel(channel_id)
        limit = max(1, min(100, int(query.get("limit", 50))))
        after = int(query.get("after", 0))
        before = int(query.get("before", 0)) or None
        found = sorted(
            (
                mid
                for mid, m in self.messages.items()
                if m["channel_id"] == str(channel_id)
                and mid > after
                and (before is None or mid < before)
            ),
            reverse=True,
        )
        if after and before is None:
            found = found[-limit:]  # the ones right after ``after``, still newest first
        return [
            {k: v for k, v in self.messages[mid].items() if k != "nonce"} for mid in found[:limit]
        ]

    def _channel(self, channel_id: int) -> dict[str, Any]:
        try:
            return self.channels[channel_id]
        except KeyError:
            raise _Error(404, 10003, "Unknown Channel") from None

    def _dm_channel(self, user_id: int) -> dict[str, Any]:
        for ch in self.channels.values():
            if ch["type"] == 1 and ch["recipients"][0]["id"] == str(user_id):
                return ch
        channel = {
            "id": str(self.snowflake()),
            "type": 1,
            "last_message_id": None,
            "recipients": [self.user(user_id)],
        }
        self.channels[int(channel["id"])] = channel
        return channel

    def _message(self, channel_id: int, message_id: int) -> dict[str, Any]:
        msg = self.messages.get(message_id)
        if msg is None or msg["channel_id"] != str(channel_id):
            raise _Error(404, 10008, "Unknown Message")
        return msg

    def _by_id(self, message_id: int) -> dict[str, Any]:
        msg = self.messages.get(message_id)
        if msg is None:
            raise _Error(404, 10008, "Unknown Message")
        return msg

    def _new_message(
        self,
        channel: dict[str, Any],
        body: dict[str, Any],
        files: list[UploadedFile],
        *,
        flags: int = 0,
        interaction: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        mid = self.snowflake()
        msg: dict[str, Any] = {
            "id": str(mid),
            "channel_id": channel["id"],
            "author": self.bot_user,
            "content": body.get("content") or "",
            "timestamp": _iso(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": self._attachments(body, files),
            "embeds": body.get("embeds") or [],
            "components": body.get("components") or [],
            "pinned": False,
            "type": 0 if interaction is None else 20,
            "flags": flags | int(body.get("flags") or 0),
        }
        if "guild_id" in channel:
            msg["guild_id"] = channel["guild_id"]
        if body.get("message_reference"):
            msg["message_reference"] = body["message_reference"]
            msg["type"] = 19
        if interaction is not None:
            msg["application_id"] = str(self.application_id)
            msg["interaction_metadata"] = {
                "id": interaction["id"],
                "type": interaction["type"],
                "user": interaction["member"]["user"],
                "authorizing_integration_owners": {},
            }
        self.messages[mid] = msg
        return msg

    def _attachments(self, body: dict[str, Any], files: list[UploadedFile]) -> list[dict[str, Any]]:
        out = []
        for i, f in enumerate(files):
            aid = self.snowflake()
            out.append(
                {
                    "id": str(aid),
                    "filename": f.filename or f"file{i}",
                    "size": len(f.data),
                    "url": f"https://cdn.invalid/attachments/{aid}/{f.filename}",
                    "proxy_url": f"https://cdn.invalid/attachments/{aid}/{f.filename}",
                    "content_type": f.content_type,
                }
            )
        return out

    def _edit_message(
        self, msg: dict[str, Any], body: dict[str, Any], files: list[UploadedFile]
    ) -> dict[str, Any]:
        for key in ("content", "embeds", "components", "flags"):
            if key in body:
                msg[key] = body[key] if body[key] is not None else ([] if key != "content" else "")
        if files:
            msg["attachments"] = self._attachments(body, files)
        msg["edited_timestamp"] = _iso()
        return msg

    def _thread(self, channel_id: int, message_id: int, body: dict[str, Any]) -> dict[str, Any]:
        parent = self._channel(channel_id)
        self._message(channel_id, message_id)
        if self.forbid_threads:
            raise _Error(403, 50013, "Missing Permissions")
        # A thread started from a message takes the message's id.
        thread = {
            "id": str(message_id),
            "type": 11,
            "guild_id": parent["guild_id"],
            "parent_id": parent["id"],
            "owner_id": str(self.bot_id),
            "name": body.get("name", ""),
            "last_message_id": None,
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "flags": 0,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": body.get("auto_archive_duration", 1440),
                "archive_timestamp": _iso(),
                "locked": False,
            },
        }
        self.channels[message_id] = thread
        self.messages[message_id]["thread"] = thread
        return thread

    # ------------------------------------------------------------------ interactions

    def _callback(
        self, iid: str, token: str, body: dict[str, Any], files: list[UploadedFile]
    ) -> web.Response:
        inter = self._interactions.get(token)
        if inter is None or inter["id"] != iid:
            raise _Error(404, 10062, "Unknown interaction")
        if inter.get("_responded"):
            raise _Error(400, 40060, "Interaction has already been acknowledged.")
        inter["_responded"] = True
        kind = body.get("type")
        data = body.get("data") or {}
        channel = self.channels.get(int(inter["channel_id"]), {"id": inter["channel_id"]})
        message = None
        flags = int(data.get("flags") or 0)
        if kind == 4:
            message = self._new_message(channel, data, files, interaction=inter)
            inter["_original"] = int(message["id"])
        elif kind == 5:
            message = self._new_message(channel, {}, [], flags=flags, interaction=inter)
            message["flags"] |= 128  # loading
            inter["_original"] = int(message["id"])
        elif kind == 7:
            message = self._edit_message(self._by_id(int(inter["message"]["id"])), data, files)
        elif kind == 9:
            check_modal(data)
            inter["_modal"] = data
        resource: dict[str, Any] = {"type": kind}
        if message is not None:
            resource["message"] = message
        return _json(
            {
                "interaction": {
                    "id": iid,
                    "type": inter["type"],
                    "response_message_id": message["id"] if message else None,
                    "response_message_loading": kind == 5,
                    "response_message_ephemeral": bool(flags & EPHEMERAL),
                },
                "resource": resource,
            }
        )

    def _interaction_by_token(self, app: str, token: str) -> dict[str, Any]:
        inter = self._interactions.get(token)
        if inter is None or app != str(self.application_id):
            raise _Error(404, 10015, "Unknown Webhook")
        return inter

    def _followup(
        self, app: str, token: str, body: dict[str, Any], files: list[UploadedFile]
    ) -> dict[str, Any]:
        inter = self._interaction_by_token(app, token)
        channel = self.channels.get(int(inter["channel_id"]), {"id": inter["channel_id"]})
        return self._new_message(channel, body, files, interaction=inter)

    def _original(self, token: str) -> dict[str, Any]:
        inter = self._interactions.get(token)
        if inter is None or "_original" not in inter:
            raise _Error(404, 10008, "Unknown Message")
        return self.messages[inter["_original"]]

    def _interaction(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        user: int,
        channel: int | None,
        guild: int | None,
        permissions: int,
        message: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        gid = guild or self.guild_id
        cid = channel or self.channel_ids(gid if gid in self.guilds else None)[0]
        chan = self.channels.get(cid) or {
            "id": str(cid),
            "type": 0,
            "guild_id": str(gid),
            "name": "elsewhere",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
        }
        payload: dict[str, Any] = {
            "id": str(self.snowflake()),
            "application_id": str(self.application_id),
            "type": kind,
            "token": "itok-" + secrets.token_hex(12),
            "version": 1,
            "data": data,
            "guild_id": str(gid),
            "guild": {"id": str(gid), "locale": "en-US", "features": []},
            "channel_id": str(cid),
            "channel": chan,
            "member": self.member(user, permissions=permissions),
            "app_permissions": str((1 << 50) - 1),
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(gid)},
            "context": 0,
            "attachment_size_limit": 10 * 1024 * 1024,
        }
        if message is not None:
            payload["message"] = message
        return payload

    def command(
        self,
        name: str,
        sub: str | None = None,
        options: dict[str, Any] | None = None,
        *,
        user: int = 1001,
        channel: int | None = None,
        guild: int | None = None,
        permissions: int = 0,
        focused: str | None = None,
    ) -> dict[str, Any]:
        """Build a slash command (or, with ``focused``, an autocomplete) interaction payload."""
        opts: list[dict[str, Any]] = []
        resolved: dict[str, Any] = {}
        for key, value in (options or {}).items():
            opt = _option(key, value)
            if isinstance(value, UserRef):
                users = resolved.setdefault("users", {})
                users[str(value.id)] = self.user(value.id)
                members = resolved.setdefault("members", {})
                m = self.member(value.id)
                del m["user"]
                members[str(value.id)] = m
            if key == focused:
                opt["focused"] = True
            opts.append(opt)
        top = opts if sub is None else [{"name": sub, "type": SUB_COMMAND, "options": opts}]
        synced = [c for cs in self.commands.values() for c in cs if c["name"] == name]
        data: dict[str, Any] = {
            "id": synced[0]["id"] if synced else str(self.snowflake()),
            "name": name,
            "type": 1,
            "options": top,
        }
        if resolved:
            data["resolved"] = resolved
        kind = 4 if focused is not None else 2
        return self._interaction(
            kind, data, user=user, channel=channel, guild=guild, permissions=permissions
        )

    def click(
        self,
        message_id: int,
        custom_id: str,
        *,
        user: int = 1001,
        guild: int | None = None,
        permissions: int = 0,
    ) -> dict[str, Any]:
        """Build a button click interaction on a message the bot posted, by a member holding
        ``permissions`` in the server."""
        msg = self._by_id(message_id)
        data = {"custom_id": custom_id, "component_type": 2}
        return self._interaction(
            3,
            data,
            user=user,
            channel=int(msg["channel_id"]),
            guild=guild or int(msg.get("guild_id") or self.guild_id),
            permissions=permissions,
            message=msg,
        )

    def modal_submit(
        self,
        opened: dict[str, Any],
        modal: dict[str, Any],
        values: dict[str, str],
        *,
        user: int = 1001,
        permissions: int = 0,
    ) -> dict[str, Any]:
        """Build the interaction a modal sends back: ``values`` typed into its inputs (by
        custom_id; a pick list's value chosen), from where the modal was opened."""
        components: list[dict[str, Any]] = []
        for row in modal["components"]:
            if row["type"] == 18:  # a label around one component
                inner = row["component"]
                value = values.get(inner["custom_id"], "")
                sent = {"type": inner["type"], "custom_id": inner["custom_id"]}
                if inner["type"] == 3:
                    sent["values"] = [value] if value else []
                else:
                    sent["value"] = value
                components.append({"type": 18, "id": len(components) + 1, "component": sent})
            else:
                inner = row["components"][0]
                components.append(
                    {
                        "type": 1,
                        "components": [
                            {
                                "type": 4,
                                "custom_id": inner["custom_id"],
                                "value": values.get(inner["custom_id"], ""),
                            }
                        ],
                    }
                )
        data = {"custom_id": modal["custom_id"], "components": components}
        return self._interaction(
            5,
            data,
            user=user,
            channel=int(opened["channel_id"]),
            guild=int(opened["guild_id"]),
            permissions=permissions,
            message=opened.get("message"),
        )

    def modal_of(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Return the modal an interaction was answered with, if any."""
        inter = self._interactions.get(payload["token"]) or {}
        modal = inter.get("_modal")
        return modal if isinstance(modal, dict) else None

    async def send_interaction(self, payload: dict[str, Any]) -> None:
        """Dispatch INTERACTION_CREATE to the connected client."""
        self._interactions[payload["token"]] = payload
        self.dispatched_at[int(payload["id"])] = time.perf_counter()
        await self.dispatch("INTERACTION_CREATE", payload)

    async def interact(self, payload: dict[str, Any], *, within: float = 5.0) -> Call:
        """Dispatch an interaction and return its callback once one gets past any rate limit."""
        start = len(self.calls)
        await self.send_interaction(payload)
        path = f"/interactions/{payload['id']}/{payload['token']}/callback"
        return await self.wait_for(
            lambda c: c.path == path and c.status != 429, within=within, after=start
        )

    async def followup(self, payload: dict[str, Any], *, within: float = 5.0) -> Call:
        """Return the first follow-up message sent with this interaction's token."""
        path = f"/webhooks/{self.application_id}/{payload['token']}"
        return await self.wait_for(lambda c: c.method == "POST" and c.path == path, within=within)

    async def react(
        self, message_id: int, emoji: str, *, user: int = 1001, guild: int | None = None
    ) -> None:
        """Dispatch MESSAGE_REACTION_ADD for a user reacting to a message."""
        msg = self._by_id(message_id)
        gid = guild or int(msg.get("guild_id") or self.guild_id)
        await self.dispatch(
            "MESSAGE_REACTION_ADD",
            {
                "user_id": str(user),
                "channel_id": msg["channel_id"],
                "message_id": msg["id"],
                "guild_id": str(gid),
                "member": self.member(user),
                "emoji": {"id": None, "name": emoji},
                "burst": False,
                "burst_colors": [],
                "type": 0,
                "message_author_id": msg["author"]["id"],
            },
        )

    def add_message(self, channel_id: int, body: dict[str, Any]) -> dict[str, Any]:
        """Put a bot message into a channel, as if the bot had posted it."""
        return self._new_message(self._channel(channel_id), body, [])

    def response_message(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Return the message an interaction's response created."""
        return self._original(payload["token"])

    def messages_in(self, channel_id: int) -> list[dict[str, Any]]:
        """Return the messages in a channel, oldest first."""
        return [m for m in self.messages.values() if m["channel_id"] == str(channel_id)]

    # ------------------------------------------------------------------ gateway

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        session = _Session(ws=ws)
        self._sessions.append(session)
        try:
            hello = {"op": 10, "d": {"heartbeat_interval": 41_250}, "s": None, "t": None}
            await ws.send_json(hello)
            async for msg in ws:
                if msg.type is not WSMsgType.TEXT:
                    continue
                await self._gateway_message(session, json.loads(msg.data))
        finally:
            if session in self._sessions:
                self._sessions.remove(session)
        return ws

    async def _gateway_message(self, session: _Session, msg: dict[str, Any]) -> None:
        op = msg.get("op")
        if op == 1:
            await session.ws.send_json({"op": 11, "d": None, "s": None, "t": None})
        elif op == 2:
            self.identifies.append(msg["d"])
            session.session_id = secrets.token_hex(8)
            self._known_sessions[session.session_id] = session
            await self._send(
                session,
                "READY",
                {
                    "v": 10,
                    "user": self.bot_user,
                    "guilds": [{"id": str(g), "unavailable": True} for g in self.guilds],
                    "session_id": session.session_id,
                    "resume_gateway_url": self.gateway_url,
                    "application": {"id": str(self.application_id), "flags": 0},
                    "private_channels": [],
                    "relationships": [],
                    # Discord echoes the shard a sharded client identified as.
                    **({"shard": msg["d"]["shard"]} if "shard" in msg["d"] else {}),
                },
            )
            for guild in self.guilds.values():
                await self._send(session, "GUILD_CREATE", guild)
            await self._connected(session)
        elif op == 6:
            self.resumes.append(msg["d"])
            old = self._known_sessions.get(msg["d"].get("session_id", ""))
            if old is None:
                await session.ws.send_json({"op": 9, "d": False, "s": None, "t": None})
                return
            session.session_id = old.session_id
            session.seq = max(old.seq, int(msg["d"].get("seq") or 0))
            self._known_sessions[session.session_id] = session
            await self._send(session, "RESUMED", {})
            await self._connected(session)

    async def _connected(self, session: _Session) -> None:
        session.identified.set()
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()

    async def _send(self, session: _Session, event: str, data: Any) -> None:
        session.seq += 1
        await session.ws.send_json({"op": 0, "t": event, "s": session.seq, "d": data})

    async def dispatch(self, event: str, data: Any) -> None:
        """Send a dispatch to every identified gateway session."""
        live = [s for s in self._sessions if s.identified.is_set() and not s.ws.closed]
        if not live:
            raise AssertionError("no client is connected to the stand-in gateway")
        for session in live:
            await self._send(session, event, data)

    async def wait_connected(self, *, within: float = 10.0, count: int = 1) -> None:
        """Wait until ``count`` gateway sessions have identified or resumed."""
        assert self._changed is not None

        def live() -> int:
            return sum(s.identified.is_set() and not s.ws.closed for s in self._sessions)

        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: live() >= count)

    async def drop_connections(self, *, code: int = 4000) -> None:
        """Close every gateway connection (4000 makes the client reconnect and RESUME)."""
        for session in list(self._sessions):
            session.identified.clear()
            await session.ws.close(code=code)


@dataclass(frozen=True)
class UserRef:
    """A user option value: sent as type 6 with the resolved user."""

    id: int


def _option(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, UserRef):
        return {"name": name, "type": USER, "value": str(value.id)}
    if isinstance(value, bool):
        return {"name": name, "type": BOOLEAN, "value": value}
    if isinstance(value, int):
        return {"name": name, "type": INTEGER, "value": value}
    if isinstance(value, float):
        return {"name": name, "type": NUMBER, "value": value}
    return {"name": name, "type": STRING, "value": str(value)}


class _Error(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def check_modal(data: dict[str, Any]) -> None:
    """Refuse a modal past Discord's limits, as Discord does (50035 Invalid Form Body)."""
    problems = []
    if not data.get("custom_id") or len(str(data["custom_id"])) > 100:
        problems.append("custom_id")
    if not data.get("title") or len(str(data["title"])) > 45:
        problems.append("title")
    rows = data.get("components") or []
    if not 1 <= len(rows) <= 5:
        problems.append("components: 1 to 5")
    for row in rows:
        labelled = row.get("type") == 18
        inner = row.get("component") if labelled else (row.get("components") or [{}])[0]
        label = row.get("label") if labelled else inner.get("label")
        if not label or len(label) > 45:
            problems.append(f"label {label!r}")
        if inner.get("type") == 4:
            most = int(inner.get("max_length") or 4000)
            if most > 4000 or len(inner.get("value") or "") > most:
                problems.append(f"text input {inner.get('custom_id')}")
            if len(inner.get("placeholder") or "") > 100:
                problems.append(f"placeholder of {inner.get('custom_id')}")
    if problems:
        raise _Error(400, 50035, "Invalid Form Body: " + ", ".join(problems))
