"""Wire quizbot into the Microsoft 365 Agents SDK: the messaging endpoint, its token check, the
agent that hands activities to the chat core, and the runner.

Teams posts every activity to ``/api/messages`` with a JWT that the SDK's validator checks (the
signing keys are Microsoft's, or ``TEAMS_KEYS_URL``'s); the SDK's ``CloudAdapter`` runs the turn
and writes an invoke's response. What the bot sends goes through the SDK's connector client on
the service URL each conversation named (``handlers.TeamsPort``).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import Any, Unpack

import jwt
import pydantic
from aiohttp import web
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import (
    ChannelServiceClientFactoryBase,
    RestChannelServiceClientFactory,
    TurnContext,
)
from microsoft_agents.hosting.core.authorization import (
    AgentAuthConfiguration,
    AuthTypes,
    Connections,
    JwtTokenValidator,
)

from bot.adapters.teams.handlers import (
    ChartImages,
    Connector,
    Heard,
    TeamsExchange,
    TeamsPort,
    command_of,
    form_sent,
    heard,
    pressed,
    pressed_team,
    removed_from_team,
    typed_text,
)
from bot.chat import Charts, Chat, Press
from bot.chat.buttons import read_button
from bot.chat.events import Submit
from bot.chat.runner import Endpoint, Serving, serve_chat
from bot.config import Admins, Settings
from bot.engine import QuizEngine
from bot.engine.names import NameKind
from bot.errors import ConfigError
from bot.links import LinkMaker
from bot.observability.redact import install_redaction
from bot.storage import ChartSql, ConversationSql, SqlStore
from bot.web import dashboard_pages

log = logging.getLogger(__name__)

MESSAGES_PATH = "/api/messages"
CLAIMS_KEY = "claims_identity"
# Where TEAMS_ANONYMOUS may listen: this machine only.
LOOPBACK = ("127.0.0.1", "::1", "localhost")
# The token authority of a multi-tenant bot registration (Bot Framework's own tenant).
MULTI_TENANT = "botframework.com"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Teams waits about 15 s for the answer to an activity and a few seconds for an invoke's; the
# chat core answers within this budget, or shows the typing indicator first.
ANSWER_DEADLINE = 4.0


class KeysValidator(JwtTokenValidator):  # type: ignore[misc]
    """The SDK's token validator, reading the signing keys from ``keys_url`` when one is given.

    The SDK takes the keys from Microsoft's endpoints; a sovereign cloud, a proxy or a local
    stand-in publishes them elsewhere (``TEAMS_KEYS_URL``). Everything else, the signature,
    the lifetime and the audience (the bot's app id), is the SDK's check.
    """

    def __init__(self, configuration: AgentAuthConfiguration, keys_url: str | None) -> None:
        super().__init__(configuration)
        self.keys_url = keys_url

    async def _get_public_key_or_secret(self, token: str) -> Any:
        if self.keys_url is None:
            return await super()._get_public_key_or_secret(token)
        header = jwt.get_unverified_header(token)
        return await self._jwk_client_manager.get_signing_key(self.keys_url, header)


def token_check(
    configuration: AgentAuthConfiguration, keys_url: str | None, *, anonymous: bool = False
) -> Any:
    """Return the middleware that lets only activities with a valid token reach the bot.

    ``anonymous`` (``TEAMS_ANONYMOUS``) lets a request without a token through, as the SDK's
    own development mode does, for a local test client; a token that is given is still checked.
    """
    validator = KeysValidator(configuration, keys_url)

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path != MESSAGES_PATH:
            return await handler(request)
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token:
            try:
                claims = await validator.validate_token(token)
            except (ValueError, jwt.PyJWTError) as exc:
                log.info("refused an activity: %s", exc)
                return web.json_response({"error": "invalid token"}, status=401)
        elif anonymous:
            claims = validator.get_anonymous_claims()
        else:
            return web.json_response({"error": "no token"}, status=401)
        # The SDK's request adapter reads the claims under this plain string key.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", web.NotAppKeyWarning)
            request[CLAIMS_KEY] = claims
        return await handler(request)

    return check


class QuizAgent:
    """The SDK's agent: every activity read into a chat event and handed to the core."""

    def __init__(self, chat: Chat, port: TeamsPort, *, answer_deadline: float) -> None:
        self.chat = chat
        self.port = port
        self.answer_deadline = answer_deadline

    async def on_turn(self, context: TurnContext) -> None:
        """Handle one activity: a press of a card's button, or a typed command."""
        raw = context.activity.model_dump(by_alias=True, mode="json", exclude_none=True)
        where = heard(raw)
        if where is None:
            log.info("an activity without a tenant, conversation or sender was ignored")
            return
        team = removed_from_team(raw)
        if team is not None:
            # Stop the team's daily questions, then forget where its channels are reached (in
            # that order: if stopping fails, logged, the channels are still known).
            places = await self.port.team_places(where.place.workspace, team)
            await self.chat.left_channels(places)
            await self.port.forget(places)
            return
        await self.port.remember(where, self.chat.engine.clock())
        self.learn_names(where)
        exchange = TeamsExchange(context, where, self.port, budget=self.answer_deadline)
        sent = form_sent(raw)
        if sent is not None:
            form_id, values, team = sent
            exchange.form = True
            exchange.team = exchange.team or team
            await self.chat.submit(Submit(where.place, where.user, form_id, values), exchange)
            return
        button = pressed(raw)
        if button is not None:
            # A button in the one-to-one chat carries the team it was sent from, as a form does.
            exchange.team = exchange.team or pressed_team(raw)
            if read_button(button) is not None:
                await self.chat.press(Press(where.place, where.user, button), exchange)
            return
        if raw.get("type") == "message" and raw.get("text"):
            command = command_of(where.place, where.user, typed_text(raw))
            await self.chat.command(command, exchange)

    def learn_names(self, where: Heard) -> None:
        """Hand the names an activity carries to the name book."""
        names: dict[tuple[NameKind, str], str] = {}
        if where.user_name:
            names[(NameKind.USER, where.user)] = where.user_name
        if where.channel_name:
            names[(NameKind.CHANNEL, where.place.channel)] = where.channel_name
        self.chat.names.learn(where.place.workspace, names)


class TeamsBot:
    """The chat core on Teams: the SDK's adapter, the agent, and the port they share."""

    def __init__(
        self,
        engine: QuizEngine,
        store: SqlStore,
        *,
        app_id: str,
        configuration: AgentAuthConfiguration,
        factory: ChannelServiceClientFactoryBase,
        keys_url: str | None = None,
        anonymous: bool = False,
        admins: Admins | frozenset[str] = frozenset(),
        admins_only: bool = False,
        links: LinkMaker | None = None,
        charts: Charts | None = None,
        refresh_every: float = 5.0,
        answer_deadline: float = ANSWER_DEADLINE,
        public_url: str | None = None,
    ) -> None:
        self.engine = engine
        self.images = ChartImages(public_url, ChartSql(store), engine.clock)
        self.configuration = configuration
        self.keys_url = keys_url
        self.anonymous = anonymous
        self.port = TeamsPort(
            Connector(factory, app_id, anonymous=anonymous), ConversationSql(store), self.images
        )
        self.chat = Chat(
            engine,
            self.port,
            admins=admins,
            admins_only=admins_only,
            links=links,
            charts=charts,
            refresh_every=refresh_every,
        )
        self.agent = QuizAgent(self.chat, self.port, answer_deadline=answer_deadline)
        self.adapter = CloudAdapter(channel_service_client_factory=factory)
        # The SDK's default posts the error's text into the conversation; the chat core tells
        # people what went wrong itself, so what escapes it is only logged.
        self.adapter.on_turn_error = self._turn_failed

    async def _turn_failed(self, context: TurnContext, error: Exception) -> None:
        log.error(
            "an activity of type %s failed outside the chat core",
            context.activity.type,
            exc_info=error,
        )

    def web_app(self, extra: Callable[[web.Application], None] | None = None) -> web.Application:
        """Return the aiohttp app: the messaging endpoint behind the token check."""
        app = web.Application(
            middlewares=[token_check(self.configuration, self.keys_url, anonymous=self.anonymous)]
        )

        async def messages(request: web.Request) -> web.StreamResponse:
            try:
                response: web.StreamResponse | None = await self.adapter.process(
                    request, self.agent
                )
            except pydantic.ValidationError as exc:
                log.info("refused an activity that is not one: %s", exc.errors()[:1])
                return web.json_response({"error": "not an activity"}, status=400)
            return response if response is not None else web.Response(status=202)

        async def chart(request: web.Request) -> web.StreamResponse:
            png = await self.images.png(request.match_info["key"])
            if png is None:
                raise web.HTTPNotFound()
            return web.Response(body=png, content_type="image/png")

        app.router.add_post(MESSAGES_PATH, messages)
        app.router.add_get(ChartImages.PATH, chart)
        if extra is not None:
            extra(app)
        return app


class TeamsHttp(Endpoint):
    """The messaging endpoint as the runner's transport."""

    name = "quizbot teams"
    path = MESSAGES_PATH

    def __init__(
        self,
        bot: TeamsBot,
        host: str,
        port: int,
        on_ready: Callable[[str], None] | None = None,
        *,
        extra: Callable[[web.Application], None] | None = None,
    ) -> None:
        super().__init__(host, port, on_ready)
        self.bot, self.extra = bot, extra

    def app(self) -> web.Application:
        return self.bot.web_app(self.extra)


def auth_configuration(settings: Settings) -> AgentAuthConfiguration:
    """Return the SDK's auth configuration from TEAMS_APP_ID, TEAMS_APP_PASSWORD, TEAMS_TENANT_ID.

    Without the password only ``TEAMS_ANONYMOUS=true`` runs (a local test client, no Teams),
    and only on a loopback address: it takes activities nobody signed, naming any service URL.
    """
    if not settings.teams_anonymous:
        settings.require("TEAMS_APP_ID", "TEAMS_APP_PASSWORD")
    elif settings.listen_host() not in LOOPBACK:
        raise ConfigError(
            "TEAMS_ANONYMOUS takes activities nobody signed: it listens on 127.0.0.1 only "
            f"(QUIZBOT_HOST is {settings.listen_host()})"
        )
    return AgentAuthConfiguration(
        auth_type=AuthTypes.client_secret,
        client_id=settings.teams_app_id,
        tenant_id=settings.teams_tenant_id or MULTI_TENANT,
        client_secret=settings.teams_app_password,
        connection_name="SERVICE_CONNECTION",
        anonymous_allowed=settings.teams_anonymous,
    )


def client_factory(
    configuration: AgentAuthConfiguration, connections: Connections | None = None
) -> RestChannelServiceClientFactory:
    """Return the SDK's connector client factory, its tokens from MSAL (client credentials)."""
    if connections is None:
        connections = MsalConnectionManager(
            connections_configurations={"SERVICE_CONNECTION": configuration}
        )
    return RestChannelServiceClientFactory(connections)


async def serve(
    settings: Settings,
    *,
    on_ready: Callable[[str], None] | None = None,
    **serving: Unpack[Serving],
) -> None:
    """Run the bot on Teams until SIGINT or SIGTERM (or ``stop``)."""
    configuration = auth_configuration(settings)
    if settings.teams_anonymous:
        log.warning(
            "TEAMS_ANONYMOUS is set: activities without a token are accepted "
            "(for a local test client only; never expose this endpoint)"
        )
    install_redaction(settings.secrets())
    from bot.runtime import open_runtime

    async with open_runtime(settings) as rt:
        bot = TeamsBot(
            rt.engine,
            rt.store,
            app_id=settings.teams_app_id or "",
            configuration=configuration,
            factory=client_factory(configuration),
            keys_url=settings.teams_keys_url,
            anonymous=settings.teams_anonymous,
            **settings.chat_options(),
            public_url=settings.public_url,
        )
        pages = dashboard_pages(rt)
        host = settings.listen_host()
        transport = TeamsHttp(bot, host, settings.teams_port, on_ready, extra=pages)
        await serve_chat(
            bot.chat,
            transport,
            settings,
            store=rt.store,
            pages_host=host,
            **serving,
        )


__all__ = ["QuizAgent", "TeamsBot", "TeamsHttp", "serve"]
