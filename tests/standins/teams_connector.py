"""A local stand-in of the Bot Framework connector that Teams bots talk to, and of Teams itself.

The connector side answers what the Agents SDK's connector client calls on an activity's
``serviceUrl``: ``POST /v3/conversations`` (a one-to-one chat), ``POST .../activities`` (send),
``POST .../activities/{id}`` (reply in a thread), ``PUT .../activities/{id}`` (update) and
``GET .../members/{id}`` (a member and their role), each with the bearer token it handed out
at ``POST /token`` (client credentials). The Teams side makes activities as Teams sends them
(a message that mentions the bot, an ``adaptiveCard/action`` invoke), signs each with an RSA
key of its own, publishes that key at ``GET /keys/{key id}`` (a JWKS), and posts them to the bot.
Every call is recorded, so tests assert on the wire.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa

JsonDict = dict[str, Any]

APP_ID = "00000000-0000-4000-8000-0000000000b0"
APP_PASSWORD = "stand-in-secret"
TENANT = "11111111-1111-4111-8111-111111111111"
TEAM = "19:team-general@thread.tacv2"
CHANNEL = "19:quiz@thread.tacv2"
BOT_NAME = "quizbot"
# Bot Framework tokens name this issuer (the SDK reads it to choose where the keys are).
ISSUER = "https://api.botframework.com"


@dataclass(frozen=True)
class Call:
    """One connector call as it arrived, and the status it was answered with."""

    method: str
    path: str
    body: JsonDict
    status: int


@dataclass
class Posted:
    """A message the bot posted: where, in reply to what, and its activity as last updated."""

    id: str
    conversation: str
    reply_to: str | None
    activity: JsonDict
    updates: list[JsonDict] = field(default_factory=list)


@dataclass
class Answer:
    """The bot's HTTP answer to an activity."""

    status: int
    body: Any


class TeamsStandIn:
    """An aiohttp server playing the connector and Teams for one tenant, team and channel."""

    def __init__(
        self,
        *,
        owners: Iterable[str] = (),
        members: Iterable[str] = (),
        app_id: str = APP_ID,
        app_password: str = APP_PASSWORD,
        anonymous: bool = False,
    ) -> None:
        self.app_id = app_id
        # Accept calls without a token, as the SDK's development mode makes them.
        self.anonymous = anonymous
        self.app_password = app_password
        self.owners = set(owners)
        self.members = set(members) | self.owners
        self.listed_members = bool(members)
        self.calls: list[Call] = []
        self.posted: dict[str, Posted] = {}
        self.chats: dict[str, str] = {}  # user -> one-to-one chat id
        self.tokens: set[str] = set()
        self._ids = itertools.count(1_700_000_000_001)
        self._refusals: list[tuple[str, re.Pattern[str], int]] = []
        self._changed = asyncio.Condition()
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        # A key id of its own, and an address of its own for the key set: the SDK keeps one
        # JWKS client per address for the whole process, and PyJWT refreshes a key set for an
        # unknown key id at most once in 30 s, so a stand-in later on the same port must not
        # share the address of this one.
        self.key_id = f"stand-in-{uuid.uuid4().hex[:12]}"
        self._runner: web.AppRunner | None = None
        self.url = ""

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Listen on a free port of 127.0.0.1."""
        app = web.Application()
        app.router.add_get(f"/keys/{self.key_id}", self._keys)
        app.router.add_post("/token", self._token)
        app.router.add_post("/v3/conversations", self._create)
        app.router.add_post("/v3/conversations/{cid}/activities", self._send)
        app.router.add_post("/v3/conversations/{cid}/activities/{aid}", self._reply)
        app.router.add_put("/v3/conversations/{cid}/activities/{aid}", self._update)
        app.router.add_get("/v3/conversations/{cid}/members/{uid}", self._member)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        self.session = aiohttp.ClientSession()

    async def stop(self) -> None:
        """Stop listening."""
        await self.session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def service_url(self) -> str:
        """Return the service URL activities name (the connector's base)."""
        return self.url + "/"

    @property
    def keys_url(self) -> str:
        """Return where the signing keys are published."""
        return f"{self.url}/keys/{self.key_id}"

    @property
    def token_url(self) -> str:
        """Return the client-credentials token endpoint."""
        return self.url + "/token"

    # ------------------------------------------------------------ Teams' side: signed activities

    def sign(self, *, audience: str | None = None, lifetime: int = 3600, key: Any = None) -> str:
        """Return a token as the Bot Framework signs an activity for the bot."""
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": audience or self.app_id,
            "nbf": now - 5,
            "exp": now + lifetime,
            "serviceurl": self.service_url,
        }
        signer = key or self._key
        return jwt.encode(claims, signer, algorithm="RS256", headers={"kid": self.key_id})

    def _base(self, user: str, person: str, conversation: JsonDict, **more: Any) -> JsonDict:
        activity: JsonDict = {
            "id": str(next(self._ids)),
            "channelId": "msteams",
            "serviceUrl": self.service_url,
            "timestamp": "2026-12-04T09:00:00.000Z",
            "from": {
                "id": user,
                "name": person,
                "aadObjectId": str(uuid.uuid5(uuid.NAMESPACE_URL, user)),
            },
            "recipient": {"id": f"28:{self.app_id}", "name": BOT_NAME},
            "conversation": conversation,
            "channelData": {"tenant": {"id": TENANT}},
        }
        activity.update(more)
        return activity

    def _in_channel(self, channel: str, thread: str | None) -> JsonDict:
        cid = f"{channel};messageid={thread}" if thread else channel
        return {"id": cid, "conversationType": "channel", "isGroup": True, "tenantId": TENANT}

    def mention(
        self,
        text: str,
        *,
        user: str,
        name: str = "",
        channel: str = CHANNEL,
        personal: bool = False,
        people: Mapping[str, str] | None = None,
    ) -> JsonDict:
        """Return a message as Teams sends it: in a channel, with the bot mentioned first.

        ``people`` (name -> user id) are the others the text names as ``<at>name</at>``: each
        gets its mention entity, as Teams writes one for a person picked after ``@``.
        """
        if personal:
            conversation = {
                "id": self.chat_id(user),
                "conversationType": "personal",
                "tenantId": TENANT,
            }
            activity = self._base(user, name or user, conversation, type="message", text=text)
            return activity
        mention = f"<at>{BOT_NAME}</at>"
        activity = self._base(
            user,
            name or user,
            self._in_channel(channel, None),
            type="message",
            text=f"{mention} {text}",
            textFormat="plain",
            entities=[
                {
                    "type": "mention",
                    "text": mention,
                    "mentioned": {"id": f"28:{self.app_id}", "name": BOT_NAME},
                },
                *(
                    {
                        "type": "mention",
                        "text": f"<at>{who}</at>",
                        "mentioned": {"id": uid, "name": who},
                    }
                    for who, uid in (people or {}).items()
                ),
            ],
        )
        activity["channelData"].update(
            team={"id": TEAM, "name": "Platform"},
            channel={"id": channel, "name": "quiz"},
        )
        return activity

    def press(
        self,
        message_id: str,
        data: JsonDict,
        *,
        user: str,
        name: str = "",
        channel: str = CHANNEL,
        personal: bool = False,
        tenant: str = TENANT,
        verb: str = "quizbot",
    ) -> JsonDict:
        """Return the invoke Teams sends when someone presses an ``Action.Execute`` button."""
        if personal:
            conversation = {
                "id": self.chat_id(user),
                "conversationType": "personal",
                "tenantId": tenant,
            }
        else:
            conversation = self._in_channel(channel, message_id)
        activity = self._base(
            user,
            name or user,
            conversation,
            type="invoke",
            name="adaptiveCard/action",
            replyToId=message_id,
            value={
                "action": {"type": "Action.Execute", "verb": verb, "data": data},
                "trigger": "manual",
            },
        )
        activity["channelData"] = {"tenant": {"id": tenant}}
        if not personal:
            activity["channelData"].update(
                team={"id": TEAM, "name": "Platform"}, channel={"id": channel, "name": "quiz"}
            )
        return activity

    def removed(self, *, user: str = "29:owner", deleted: bool = False) -> JsonDict:
        """Return the update Teams sends when the bot leaves the team (or the team is deleted)."""
        activity = self._base(user, user, self._in_channel(TEAM, None), type="conversationUpdate")
        activity["channelData"].update(
            team={"id": TEAM, "name": "Platform"},
            eventType="teamDeleted" if deleted else "teamMemberRemoved",
        )
        if not deleted:
            activity["membersRemoved"] = [{"id": f"28:{self.app_id}"}]
        return activity

    def chat_id(self, user: str) -> str:
        """Return the id of a person's one-to-one chat with the bot (made on first use)."""
        return self.chats.setdefault(user, f"a:chat-{user.split(':')[-1]}")

    async def deliver(
        self, url: str, activity: JsonDict, *, token: str | None = "", within: float = 20.0
    ) -> Answer:
        """Post an activity to the bot's endpoint with a signed token (None: no header)."""
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {token or self.sign()}"
        async with (
            asyncio.timeout(within),
            self.session.post(url, json=activity, headers=headers) as response,
        ):
            text = await response.text()
            json_body = response.content_type == "application/json" and text
            return Answer(response.status, json.loads(text) if json_body else text)

    # ------------------------------------------------------------ looking at the wire

    def refuse(self, method: str, path: str, status: int = 403) -> None:
        """Answer the next call matching a method and path pattern with an error status."""
        self._refusals.append((method, re.compile(path), status))

    def in_conversation(self, conversation: str) -> list[Posted]:
        """Return what the bot posted in a conversation (not replies), oldest first."""
        return [
            p for p in self.posted.values() if p.conversation == conversation and p.reply_to is None
        ]

    def replies_to(self, message_id: str) -> list[Posted]:
        """Return the bot's replies in a message's thread."""
        return [p for p in self.posted.values() if p.reply_to == message_id]

    async def wait_for(self, check: Callable[[], Any], within: float = 20.0) -> Any:
        """Wait until a check of what was received holds; return its value."""
        async with asyncio.timeout(within), self._changed:
            while not (found := check()):
                await self._changed.wait()
            return found

    async def _record(self, request: web.Request, body: JsonDict, status: int) -> None:
        self.calls.append(Call(request.method, request.path, body, status))
        async with self._changed:
            self._changed.notify_all()

    def _refused(self, request: web.Request) -> int | None:
        for i, (method, pattern, status) in enumerate(self._refusals):
            if method == request.method and pattern.search(request.path):
                del self._refusals[i]
                return status
        return None

    async def _checked(self, request: web.Request) -> tuple[JsonDict, web.Response | None]:
        text = await request.text()
        body = json.loads(text) if text else {}
        auth = request.headers.get("Authorization", "")
        if not (self.anonymous and not auth) and auth.removeprefix("Bearer ") not in self.tokens:
            await self._record(request, body, 401)
            return body, web.json_response({"error": {"code": "Unauthorized"}}, status=401)
        status = self._refused(request)
        if status is not None:
            await self._record(request, body, status)
            return body, web.json_response({"error": {"code": "Refused"}}, status=status)
        return body, None

    # ------------------------------------------------------------ handlers

    async def _keys(self, request: web.Request) -> web.Response:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self._key.public_key()))
        jwk.update(kid=self.key_id, use="sig", alg="RS256")
        return web.json_response({"keys": [jwk]})

    async def _token(self, request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("client_id") != self.app_id or form.get("client_secret") != self.app_password:
            return web.json_response({"error": "invalid_client"}, status=401)
        token = f"connector-{uuid.uuid4().hex}"
        self.tokens.add(token)
        return web.json_response(
            {"token_type": "Bearer", "expires_in": 3600, "access_token": token}
        )

    def _post(self, conversation: str, reply_to: str | None, activity: JsonDict) -> str:
        message_id = str(next(self._ids))
        self.posted[message_id] = Posted(message_id, conversation, reply_to, activity)
        return message_id

    async def _create(self, request: web.Request) -> web.Response:
        body, refused = await self._checked(request)
        if refused is not None:
            return refused
        members = body.get("members") or []
        if body.get("isGroup") or len(members) != 1 or not body.get("tenantId"):
            await self._record(request, body, 400)
            return web.json_response({"error": {"code": "BadArgument"}}, status=400)
        chat = self.chat_id(members[0]["id"])
        await self._record(request, body, 201)
        return web.json_response({"id": chat}, status=201)

    async def _send(self, request: web.Request) -> web.Response:
        body, refused = await self._checked(request)
        if refused is not None:
            return refused
        cid = request.match_info["cid"]
        conversation, _, thread = cid.partition(";messageid=")
        message_id = self._post(conversation, thread or None, body)
        await self._record(request, body, 201)
        return web.json_response({"id": message_id}, status=201)

    async def _reply(self, request: web.Request) -> web.Response:
        body, refused = await self._checked(request)
        if refused is not None:
            return refused
        conversation = request.match_info["cid"].partition(";messageid=")[0]
        message_id = self._post(conversation, request.match_info["aid"], body)
        await self._record(request, body, 201)
        return web.json_response({"id": message_id}, status=201)

    async def _update(self, request: web.Request) -> web.Response:
        body, refused = await self._checked(request)
        if refused is not None:
            return refused
        posted = self.posted.get(request.match_info["aid"])
        if posted is None:
            await self._record(request, body, 404)
            return web.json_response({"error": {"code": "NotFound"}}, status=404)
        posted.updates.append(body)
        posted.activity = body
        await self._record(request, body, 200)
        return web.json_response({"id": posted.id})

    async def _member(self, request: web.Request) -> web.Response:
        body, refused = await self._checked(request)
        if refused is not None:
            return refused
        user = request.match_info["uid"]
        # A team that lists its members (``members``) does not know anyone else.
        listed = not self.listed_members or user in self.members
        if request.match_info["cid"] != TEAM or not listed:
            await self._record(request, body, 404)
            return web.json_response({"error": {"code": "NotFound"}}, status=404)
        role = "owner" if user in self.owners else "user"
        await self._record(request, body, 200)
        return web.json_response({"id": user, "name": user, "userRole": role, "tenantId": TENANT})


class StandInTokens:
    """The SDK's token-provider protocol, with client-credentials tokens from the stand-in.

    MSAL asks only https authorities, so tests take the bot's outgoing token from the
    stand-in's token endpoint instead; the connector client, and everything after it, is the
    SDK's. The connector refuses any call without a token it handed out.
    """

    def __init__(self, standin: TeamsStandIn) -> None:
        self.standin = standin
        self._token: str | None = None

    async def get_access_token(
        self, resource_url: str, scopes: list[str], force_refresh: bool = False
    ) -> str:
        """Return a token for the connector (one per process, as MSAL caches it)."""
        if self._token is None or force_refresh:
            form = {
                "grant_type": "client_credentials",
                "client_id": self.standin.app_id,
                "client_secret": self.standin.app_password,
                "scope": " ".join(scopes),
            }
            async with (
                aiohttp.ClientSession() as session,
                session.post(self.standin.token_url, data=form) as response,
            ):
                response.raise_for_status()
                self._token = str((await response.json())["access_token"])
        return self._token

    # The Connections protocol, one connection for everything.
    def get_connection(self, connection_name: str) -> StandInTokens:
        """Return this provider."""
        return self

    def get_default_connection(self) -> StandInTokens:
        """Return this provider."""
        return self

    def get_token_provider(self, claims_identity: Any, service_url: str) -> StandInTokens:
        """Return this provider."""
        return self

    def get_default_connection_configuration(self) -> Any:
        """Return nothing: the stand-in needs no configuration."""
        return None
