"""Wire the Slack bot: Web API client, Bolt app, HTTP or Socket Mode, on the chat layer's runner."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Unpack

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages as M
from bot.adapters.slack._home import HomeTab
from bot.adapters.slack._metrics import ApiErrorCounter
from bot.adapters.slack._names import SlackNames, learner
from bot.adapters.slack._oauth import (
    SqlInstallationStore,
    SqlStateStore,
    TokenClient,
    bind_workspace,
    oauth_settings,
    state_key,
    token_rotator,
)
from bot.adapters.slack._replay import ReplayGuard, answered, replay_guard
from bot.adapters.slack.handlers import Listeners, SlackPort
from bot.chat import Charts, Chat, Publisher
from bot.chat.runner import (
    Closing,
    Endpoint,
    Serving,
    keep_trying,
    one_line_logs,
    serve_chat,
)
from bot.config import Settings
from bot.engine import QuizEngine
from bot.errors import ConfigError
from bot.observability.health import mount_liveness, serve_http
from bot.observability.heap import freeze_heap
from bot.observability.redact import install_redaction
from bot.ratelimit import RateLimit
from bot.storage import InstallationSql, TokenCipher
from bot.text import say
from bot.web import dashboard_pages

log = logging.getLogger(__name__)
# The Socket Mode client's own logger (its reconnects).
SOCKET_LOG = "bot.adapters.slack.socket"

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
RATE_LIMIT_RETRIES = 3
# The install page per client address: a few loads at once, then one every six seconds.
INSTALL_BURST = 10
INSTALL_PER_MINUTE = 10


Next = Callable[[], Awaitable[BoltResponse]]


class Middleware(AsyncMiddleware):
    """A Bolt middleware that is handed the request and ``next``, and nothing it must look up.

    Bolt wraps a plain function in a middleware that works out, on every request, which of the
    arguments it may name the function asks for (``inspect.signature`` and a dict of them). The
    replay check is on every request's way in, and that lookup cost about as much CPU as the
    check itself (py-spy, ``benchmarks/slack_clicks.py``); an instance of this class is called
    directly.
    """

    def __init__(self, process: Callable[[AsyncBoltRequest, Next], Awaitable[BoltResponse]]):
        self.process = process
        self._name = f"{process.__module__}.{process.__qualname__}"

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Next
    ) -> BoltResponse:
        return await self.process(req, next)

    @property
    def name(self) -> str:
        """The middleware's name in Bolt's debug log: the function's."""
        return self._name


class _TokenInClient(logging.Filter):
    """Drop Bolt's warning that SLACK_BOT_TOKEN goes unused: the client it is given holds it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


TOKEN_IN_CLIENT = _TokenInClient()


@dataclass(frozen=True)
class SlackBot:
    """The assembled pieces of a running Slack bot."""

    app: AsyncApp
    client: AsyncWebClient
    chat: Chat
    handlers: Listeners
    guard: ReplayGuard | None = None

    @property
    def publisher(self) -> Publisher:
        """Return the publisher that posts cards and reveals."""
        return self.chat.publisher

    async def settle(self) -> None:
        """Let what served requests left in the background finish, once no more arrive.

        The card refreshes, the replay guard's claims and the display names being learnt each
        write to the store: stopped half-way, they would leave a connection to the collector.
        """
        await self.publisher.aclose()
        if self.guard is not None:
            await self.guard.settle()
        await self.chat.names.settle()


def check_credentials(settings: Settings) -> bool:
    """Raise ConfigError naming a missing variable; return True for Socket Mode."""
    settings.listed_admins_only()
    if settings.slack_oauth():
        # Each workspace's token comes from its installation; installing needs HTTP mode.
        if settings.slack_app_token:
            raise ConfigError(
                "SLACK_APP_TOKEN is set with SLACK_CLIENT_ID: the OAuth install flow needs HTTP "
                "mode, so unset SLACK_APP_TOKEN"
            )
        # Workspace tokens are stored encrypted, never as plain text.
        if not settings.token_key:
            raise ConfigError(
                "QUIZBOT_TOKEN_KEY is not set; the OAuth install flow stores each workspace's "
                "tokens encrypted with it (make one with `quizbot db new-token-key`)"
            )
        TokenCipher.from_setting(settings.token_key)
    else:
        settings.require("SLACK_BOT_TOKEN")
    if settings.slack_app_token:
        return True
    if not settings.slack_signing_secret:
        raise ConfigError(
            "SLACK_SIGNING_SECRET is not set; HTTP mode needs it "
            "(or set SLACK_APP_TOKEN to use Socket Mode)"
        )
    return False


def web_client(settings: Settings, session: aiohttp.ClientSession | None = None) -> AsyncWebClient:
    """Return the Web API client: SLACK_API_URL honoured, rate-limited calls retried."""
    url = settings.slack_api_url or AsyncWebClient.BASE_URL
    # With many workspaces the client has no token of its own; it uses the one being served.
    kind = TokenClient if settings.slack_oauth() else AsyncWebClient
    return kind(
        token=settings.slack_bot_token,
        # The client joins method names onto the base URL, so it must end with a slash.
        base_url=url if url.endswith("/") else url + "/",
        session=session,
        retry_handlers=[
            # First, so it sees every failed call before a retry handler repeats it.
            ApiErrorCounter(),
            AsyncConnectionErrorRetryHandler(),
            AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ],
    )


def assemble(
    settings: Settings,
    engine: QuizEngine,
    client: AsyncWebClient,
    *,
    charts: Charts,
    refresh_every: float = 3.0,
    oauth: AsyncOAuthSettings | None = None,
    installations: SqlInstallationStore | None = None,
) -> SlackBot:
    """Build the Bolt app with every listener on the chat core, an engine and a client."""
    port = SlackPort(client, installations)
    chat = Chat(
        engine,
        port,
        **settings.chat_options(),
        charts=charts,
        refresh_every=refresh_every,
        # With only the listed admins, users.info (users:read) and team.info (team:read) stay
        # unused: names come from the requests alone.
        name_lookup=None if settings.listed_admins_only() else SlackNames(client),
    )
    logging.getLogger("slack_bolt.AsyncApp").addFilter(TOKEN_IN_CLIENT)
    app = AsyncApp(
        name="quizbot",
        client=client,
        signing_secret=settings.slack_signing_secret or "",
        # Socket Mode requests come over an authenticated WebSocket and carry no signature.
        request_verification_enabled=not settings.slack_app_token,
        oauth_settings=oauth,
        # The HTTP answer goes when the listener returns; each listener returns once its work
        # has acknowledged (bot.adapters.slack.handlers.Background), not on a 10 ms poll.
        process_before_response=True,
    )
    guard = None if settings.slack_app_token else replay_guard(engine)
    if guard is not None:
        app.middleware(Middleware(guard.middleware))
    if oauth is not None:
        app.middleware(Middleware(bind_workspace))
    # After the replay check and the workspace's token: names of requests that will be served.
    app.middleware(Middleware(learner(chat.names)))
    listeners = Listeners(chat, port)
    listeners.register(app)
    HomeTab(chat, port, listeners.background).register(app)
    return SlackBot(app=app, client=client, chat=chat, handlers=listeners, guard=guard)


SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")
TIMESTAMP = re.compile(r"[0-9]{1,12}")


def signed_shape(headers: Mapping[str, str]) -> bool:
    """Return whether a request carries a Slack signature and timestamp of the right shape."""
    signature = headers.get("X-Slack-Signature", "")
    timestamp = headers.get("X-Slack-Request-Timestamp", "")
    return bool(SIGNATURE.fullmatch(signature) and TIMESTAMP.fullmatch(timestamp))


def web_app(
    app: AsyncApp,
    *,
    extra: Callable[[web.Application], None] | None = None,
    install_limit: RateLimit | None = None,
) -> web.Application:
    """Return the public aiohttp application: Bolt at /slack/events, a liveness check at /healthz.

    /readyz and /metrics are never served here (they are the operations port's, which is not
    public). In OAuth mode /slack/install is limited per client (``install_limit``).
    """

    async def events(request: web.Request) -> web.Response:
        if not signed_shape(request.headers):
            # Bolt's own check would raise on a timestamp that is not a number (a 500 and an
            # error traceback per request); a malformed signature can never verify anyway.
            log.info("refused a request without a well-formed Slack signature")
            return web.Response(status=401, text="invalid request signature")
        try:
            bolt_request = await to_bolt_request(request)
        except (ValueError, TypeError, AttributeError) as exc:
            # Bolt parses the body before it checks the signature: whoever sends a body that is
            # not JSON or a form gets 400, and the log one line, not a traceback.
            log.warning("refused a malformed request body (%s)", type(exc).__name__)
            return web.Response(status=400, text="malformed request body")
        try:
            response = await app.async_dispatch(bolt_request)
        except Exception:
            # Listeners' errors go to the error boundary; this is a signed request whose shape
            # Bolt itself could not route. Refuse it rather than answer 500.
            log.exception("could not dispatch a request")
            return web.Response(status=400, text="unexpected request")
        answered(bolt_request, response)
        return await to_aiohttp_response(response)

    application = web.Application()
    application.router.add_post(EVENTS_PATH, events)
    flow = app.oauth_flow
    if flow is not None:
        limit = install_limit or RateLimit(INSTALL_PER_MINUTE, INSTALL_BURST)

        async def install(request: web.Request) -> web.Response:
            # The page is anyone's to load; each load signs a state (no database write), and
            # one client may load it only so often.
            wait = limit.check(request.remote or "")
            if wait > 0:
                seconds = math.ceil(wait)
                return web.Response(
                    status=429,
                    text=say(M.INSTALL_TOO_OFTEN, seconds=seconds).plain(),
                    headers={"Retry-After": str(seconds)},
                )
            return await to_aiohttp_response(
                await flow.handle_installation(await to_bolt_request(request))
            )

        async def redirect(request: web.Request) -> web.Response:
            return await to_aiohttp_response(
                await flow.handle_callback(await to_bolt_request(request))
            )

        application.router.add_get(flow.install_path, install)
        application.router.add_get(flow.redirect_uri_path, redirect)
    mount_liveness(application)
    if extra is not None:
        extra(application)  # the dashboard's pages
    return application


async def start_http(
    app: AsyncApp,
    host: str,
    port: int,
    *,
    extra: Callable[[web.Application], None] | None = None,
) -> tuple[web.AppRunner, int]:
    """Serve the public app over HTTP; return the runner (to clean up) and the port bound."""
    server = await serve_http(web_app(app, extra=extra), host, port)
    return server.runner, server.port


async def serve(
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    port: int = 3000,
    on_ready: Callable[[str], None] | None = None,
    **serving: Unpack[Serving],
) -> None:
    """Run the bot until ``stop`` is set; rounds that fell due while it was down close at once.

    Unlike the other platforms' ``serve``, it leaves SIGINT and SIGTERM alone unless told
    (``quizbot slack`` tells it).
    """
    served = Serving(handle_signals=False)
    served.update(serving)
    from bot.runtime import open_runtime

    socket_mode = check_credentials(settings)
    install_redaction(settings.secrets())
    charts = Charts.load()
    async with open_runtime(settings) as rt, aiohttp.ClientSession() as session:
        oauth = installations = None
        client = web_client(settings, session)
        if settings.slack_oauth():
            sql = InstallationSql(rt.store, TokenCipher.from_setting(settings.token_key or ""))
            plain, rotated = await sql.reencrypt()
            if plain or rotated:
                log.info(
                    "encrypted %d stored installation(s) under the current token key "
                    "(%d were plain text, %d had an older key)",
                    plain + rotated,
                    plain,
                    rotated,
                )
            installations = SqlInstallationStore(sql, rotator=token_rotator(settings, client))
            states = SqlStateStore(sql, key=state_key(settings.slack_client_secret or ""))
            oauth = oauth_settings(settings, installations, states, client)
        bot = assemble(
            settings,
            rt.engine,
            client,
            charts=charts,
            oauth=oauth,
            installations=installations,
        )
        pages = dashboard_pages(rt)
        transport: SocketMode | HttpMode
        if socket_mode:
            transport = SocketMode(bot, settings.slack_app_token or "", on_ready)
        else:
            transport = HttpMode(bot, host, port, on_ready, extra=pages)
        await serve_chat(
            bot.chat,
            transport,
            settings,
            store=rt.store,
            # In HTTP mode the pages are served beside /slack/events; else on a port of their own.
            extra_routes=pages if socket_mode else None,
            pages_host=host,
            **served,
        )


class HttpMode(Endpoint):
    """Bolt behind aiohttp: /slack/events, the OAuth pages, and the probes."""

    name = "quizbot slack: HTTP mode"
    path = EVENTS_PATH

    def __init__(
        self,
        bot: SlackBot,
        host: str,
        port: int,
        on_ready: Callable[[str], None] | None,
        *,
        extra: Callable[[web.Application], None] | None = None,
    ) -> None:
        super().__init__(host, port, on_ready)
        self.bot, self.extra = bot, extra

    def app(self) -> web.Application:
        return web_app(self.bot.app, extra=self.extra)

    async def settle(self) -> None:
        if self.bot.guard is not None:
            # Requests refused for a late replay check give their claims back before the end.
            await self.bot.guard.settle()


class SocketMode(Closing):
    """Bolt over Slack's Socket Mode WebSocket."""

    def __init__(
        self, bot: SlackBot, app_token: str, on_ready: Callable[[str], None] | None
    ) -> None:
        super().__init__()
        # The client retries a lost socket by itself; its log says so in one line a try.
        one_line_logs(SOCKET_LOG)
        # Its own Web API client, without the connection retry: ``open`` retries, one line a try.
        client = AsyncWebClient(
            base_url=bot.client.base_url,
            session=bot.client.session,
            retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES)],
        )
        self.handler = AsyncSocketModeHandler(
            bot.app, app_token, web_client=client, logger=logging.getLogger(SOCKET_LOG)
        )
        self.on_ready = on_ready

    async def open(self) -> None:
        """Freeze what startup loaded, ask Slack for a socket (retrying), then connect."""
        freeze_heap("startup")
        client = self.handler.client
        client.wss_uri = await keep_trying(
            self._socket_url, "Slack", retry_on=(aiohttp.ClientError, OSError, TimeoutError)
        )
        await self.handler.connect_async()  # type: ignore[no-untyped-call]
        log.info("quizbot slack: connected in Socket Mode")
        if self.on_ready is not None:
            self.on_ready("socket-mode")

    async def _socket_url(self) -> str:
        """Return a Socket Mode URL from ``apps.connections.open``; a refused token is fatal."""
        try:
            url: str = await self.handler.client.issue_new_wss_url()
        except SlackApiError as exc:
            error = exc.response.get("error", "an error")
            raise ConfigError(
                f"Slack refused SLACK_APP_TOKEN ({error}); see docs/slack.md"
            ) from None
        return url

    async def close(self) -> None:
        """Disconnect."""
        await super().close()
        await self.handler.close_async()  # type: ignore[no-untyped-call]
