"""Many workspaces: Slack's OAuth install flow, with installations kept in quizbot's database.

With SLACK_CLIENT_ID and SLACK_CLIENT_SECRET set, /slack/install sends an admin to Slack and
/slack/oauth_redirect stores the workspace's bot token. Bolt then authorises each request with
its workspace's token; what the bot posts on its own (timers, daily questions) looks the token up
by the round's workspace (see ``SlackPort.workspace``). Tokens are never logged: only team ids
are.

With token rotation turned on in the app's settings, Slack's tokens expire after 12 hours and
come with a refresh token. Both ways to a token renew it when it has less than
``ROTATE_MINUTES`` left, and store the new pair: Bolt for a request, ``bot_token`` for the rest.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from base64 import b64encode, urlsafe_b64decode, urlsafe_b64encode
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt.authorization.async_authorize import AsyncInstallationStoreAuthorize
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.config import Settings
from bot.engine.ports import Clock, utc_now
from bot.storage import InstallationSql

log = logging.getLogger(__name__)

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
STATE_LIFETIME = timedelta(minutes=10)
_NONCE_BYTES = 16
_MAC_BYTES = 32
_STATE_CHARS = 80  # the base64 of a nonce, an expiry and a MAC (75 characters)
# Renew a rotating token this long before it expires (Bolt's default, two hours).
ROTATE_MINUTES = 120
# The bot scopes of deploy/slack-manifest.yaml: what the handlers and the publisher call.
BOT_SCOPES = (
    "commands",
    "chat:write",
    "channels:join",
    "channels:history",
    "groups:history",
    "reactions:read",
    "users:read",
    "team:read",
    "files:write",
)

# The bot token of the workspace being served, for clients built without one.
CURRENT_TOKEN: ContextVar[str | None] = ContextVar("quizbot_slack_token", default=None)

# Installation's keyword arguments: the document stored is exactly what rebuilds it.
_FIELDS = (
    "app_id",
    "enterprise_id",
    "enterprise_name",
    "enterprise_url",
    "team_id",
    "team_name",
    "bot_token",
    "bot_id",
    "bot_user_id",
    "bot_scopes",
    "bot_refresh_token",
    "bot_token_expires_at",
    "user_id",
    "user_token",
    "user_scopes",
    "user_refresh_token",
    "user_token_expires_at",
    "incoming_webhook_url",
    "incoming_webhook_channel",
    "incoming_webhook_channel_id",
    "incoming_webhook_configuration_url",
    "is_enterprise_install",
    "token_type",
    "installed_at",
    "custom_values",
)


def _document(installation: Installation) -> dict[str, Any]:
    return {name: getattr(installation, name, None) for name in _FIELDS}


class _OnDatabase:
    """A slack_sdk store kept in quizbot's database, on its clock."""

    def __init__(
        self,
        sql: InstallationSql,
        *,
        clock: Clock = utc_now,
        rotator: AsyncTokenRotator | None = None,
    ) -> None:
        self.sql = sql
        self.clock = clock
        self.rotator = rotator

    @property
    def logger(self) -> logging.Logger:
        """Return the logger slack_sdk expects (it never receives a token)."""
        return log


class SqlInstallationStore(_OnDatabase, AsyncInstallationStore):
    """slack_sdk's installation store on quizbot's database (every replica sees every install)."""

    async def async_save(self, installation: Installation) -> None:
        """Store an installation (the workspace's latest, and its installer's)."""
        await self.sql.save_installation(
            installation.enterprise_id,
            installation.team_id,
            installation.user_id,
            _document(installation),
            self.clock(),
        )
        log.info("installed in workspace %s", installation.team_id)

    async def async_save_bot(self, bot: Bot) -> None:
        """Keep nothing apart: the bot is saved with its installation."""

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        """Return the workspace's latest installation, or one installer's."""
        if is_enterprise_install:
            team_id = None
        document = await self.sql.find_installation(enterprise_id, team_id, user_id)
        return Installation(**document) if document is not None else None

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        """Return the workspace's bot (token included), or None if it is not installed."""
        installation = await self.async_find_installation(
            enterprise_id=enterprise_id,
            team_id=team_id,
            is_enterprise_install=is_enterprise_install,
        )
        if installation is None or installation.bot_token is None:
            return None
        return installation.to_bot()

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        """Forget one installer's installation, or every one of the workspace."""
        await self.sql.delete_installations(enterprise_id, team_id, user_id)
        log.info("uninstalled from workspace %s", team_id)

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        """Forget the workspace's installations (its bot token goes with them)."""
        await self.sql.delete_installations(enterprise_id, team_id)

    async def async_delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        """Forget everything about the workspace."""
        await self.sql.delete_installations(enterprise_id, team_id)

    async def bot_token(self, workspace: str) -> str | None:
        """Return the bot token of a workspace (renewed if it rotates and expires soon).

        None if the app is not installed there.
        """
        installation = await self.async_find_installation(enterprise_id=None, team_id=workspace)
        if installation is None or installation.bot_token is None:
            return None
        if self.rotator is not None and installation.bot_refresh_token is not None:
            renewed = await self.rotator.perform_token_rotation(
                installation=installation, minutes_before_expiration=ROTATE_MINUTES
            )
            if renewed is not None:
                await self.async_save(renewed)
                log.info("renewed the bot token of workspace %s", workspace)
                return renewed.bot_token
        return installation.bot_token


class SqlStateStore(_OnDatabase, AsyncOAuthStateStore):
    """Signed one-time OAuth states: issuing one writes nothing, using one records its nonce.

    A state is ``b64(nonce | expiry | HMAC-SHA256(key, nonce | expiry))``, so the install page
    can be served to anyone without a database write per request (each write would be a row an
    anonymous client adds at will). The callback checks the signature and the expiry, then
    records the nonce as used; a second use of it, on any replica, is refused. Used nonces are
    kept until their state would have expired, and the expired ones are deleted then.
    """

    def __init__(
        self,
        sql: InstallationSql,
        *,
        key: bytes,
        clock: Clock = utc_now,
        rotator: AsyncTokenRotator | None = None,
    ) -> None:
        super().__init__(sql, clock=clock, rotator=rotator)
        self._key = key

    def _mac(self, signed: bytes) -> bytes:
        return hmac.new(self._key, b"quizbot-oauth-state:" + signed, hashlib.sha256).digest()

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        """Issue a new state value (signed, nothing stored)."""
        expires = int((self.clock() + STATE_LIFETIME).timestamp())
        signed = secrets.token_bytes(_NONCE_BYTES) + expires.to_bytes(8, "big")
        return urlsafe_b64encode(signed + self._mac(signed)).rstrip(b"=").decode("ascii")

    async def async_consume(self, state: str) -> bool:
        """Use a state value: True only once, only before it expires, only if we signed it."""
        if not state.isascii() or len(state) > _STATE_CHARS:
            return False
        try:
            raw = urlsafe_b64decode(state + "=" * (-len(state) % 4))
        except ValueError:
            return False
        signed, mac = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
        if len(signed) != _NONCE_BYTES + 8 or not hmac.compare_digest(mac, self._mac(signed)):
            return False
        expires = datetime.fromtimestamp(int.from_bytes(signed[_NONCE_BYTES:], "big"), UTC)
        now = self.clock()
        if now >= expires:
            return False
        nonce = urlsafe_b64encode(signed[:_NONCE_BYTES]).rstrip(b"=").decode("ascii")
        return await self.sql.use_state(nonce, expires, now)


def state_key(client_secret: str) -> bytes:
    """Return the key that signs OAuth states, derived from the app's client secret."""
    return hmac.new(client_secret.encode(), b"quizbot-oauth-state-key", hashlib.sha256).digest()


def token_rotator(settings: Settings, client: AsyncWebClient) -> AsyncTokenRotator:
    """Return what renews rotating tokens, calling Slack through the bot's own client."""
    return AsyncTokenRotator(
        client_id=settings.slack_client_id or "",
        client_secret=settings.slack_client_secret or "",
        client=client,
    )


def oauth_settings(
    settings: Settings,
    installations: SqlInstallationStore,
    states: SqlStateStore,
    client: AsyncWebClient | None = None,
) -> AsyncOAuthSettings:
    """Return Bolt's OAuth settings on the database stores.

    Given the client, Bolt renews rotating tokens through it (and so through SLACK_API_URL).
    """
    oauth = AsyncOAuthSettings(
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret,
        scopes=list(BOT_SCOPES),
        redirect_uri=settings.slack_redirect_uri,
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        installation_store=installations,
        state_store=states,
        state_expiration_seconds=int(STATE_LIFETIME.total_seconds()),
        token_rotation_expiration_minutes=ROTATE_MINUTES,
    )
    if client is not None:
        oauth.authorize = AsyncInstallationStoreAuthorize(
            logger=log,
            client_id=oauth.client_id,
            client_secret=oauth.client_secret,
            token_rotation_expiration_minutes=ROTATE_MINUTES,
            installation_store=installations,
            client=client,
        )
    return oauth


class TokenClient(AsyncWebClient):
    """A Web API client without a token of its own: it uses the current workspace's."""

    async def api_call(
        self, api_method: str, *, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> AsyncSlackResponse:
        """Call the method with the bot token of the workspace being served."""
        token = CURRENT_TOKEN.get()
        if self.token is None and token:
            headers = {**(headers or {}), "Authorization": f"Bearer {token}"}
        auth = kwargs.pop("auth", None)
        if auth is not None:
            # oauth.v2.access authenticates the app itself; build the header here, since
            # aiohttp deprecates the BasicAuth helper slack_sdk would use.
            pair = f"{auth['client_id']}:{auth['client_secret']}".encode()
            headers = {**(headers or {}), "Authorization": f"Basic {b64encode(pair).decode()}"}
        response: AsyncSlackResponse = await super().api_call(api_method, headers=headers, **kwargs)
        return response


@contextmanager
def serving(token: str | None) -> Iterator[None]:
    """Make ``token`` the current workspace's within the block (and tasks started in it)."""
    reset = CURRENT_TOKEN.set(token)
    try:
        yield
    finally:
        CURRENT_TOKEN.reset(reset)


async def bind_workspace(
    req: AsyncBoltRequest, next: Callable[[], Awaitable[BoltResponse]]
) -> BoltResponse:
    """Bolt middleware: the request's workspace token becomes the current one."""
    CURRENT_TOKEN.set(req.context.bot_token)
    return await next()
