"""Wire quizbot into discord.py: endpoints, intents, the client, its command tree, the runner."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Unpack

import aiohttp
import discord
import yarl
from discord import app_commands

from bot import messages as M
from bot.adapters.discord import render
from bot.adapters.discord.handlers import (
    DiscordExchange,
    DiscordPort,
    command_tree,
    option_error,
    place_of,
)
from bot.chat import Charts, Chat, Command, Reaction
from bot.chat.buttons import read_button
from bot.chat.events import Press, Submit
from bot.chat.grammar import Grammar, Verb
from bot.chat.runner import Serving, keep_trying, one_line_logs, serve_chat
from bot.config import Admins, Settings
from bot.engine import COMPUTED, QuizEngine
from bot.engine.model import Place
from bot.engine.names import NameKind
from bot.errors import ConfigError
from bot.links import LinkMaker
from bot.observability.heap import freeze_heap
from bot.observability.redact import install_redaction
from bot.text import say
from bot.web import dashboard_pages

log = logging.getLogger(__name__)

# Exactly what the bot does in a channel: read it, post cards and replies with embeds and
# charts, open a thread on a card and post in it, and answer the card itself where no thread
# can be opened (a reply needs the message history).
PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    create_public_threads=True,
    embed_links=True,
    attach_files=True,
    read_message_history=True,
)
SCOPES = ("bot", "applications.commands")
# Past this many seconds without an answer an interaction is deferred, inside Discord's 3 s.
ANSWER_DEADLINE = 2.0


# The bot is text-only: discord.py's warnings that voice libraries are missing are noise.
discord.VoiceClient.warn_nacl = False
discord.VoiceClient.warn_dave = False


def configure_endpoints(api_url: str | None, gateway_url: str | None) -> None:
    """Point discord.py's REST calls and gateway at other URLs (a proxy, or a local stand-in)."""
    if api_url:
        discord.http.Route.BASE = api_url.rstrip("/")
    if gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


def intents() -> discord.Intents:
    """Return the gateway intents the bot uses: guilds and their reactions, nothing privileged."""
    wanted = discord.Intents.none()
    wanted.guilds = True
    wanted.guild_reactions = True
    return wanted


def invite_url(application_id: int) -> str:
    """Return the OAuth2 link that adds the bot and its commands with exactly its permissions."""
    return discord.utils.oauth_url(application_id, permissions=PERMISSIONS, scopes=SCOPES)


class QuizClient(discord.Client):
    """A discord.py client whose commands, buttons and reactions go to the chat core."""

    def __init__(
        self,
        engine: QuizEngine,
        *,
        admins: Admins | frozenset[str] = frozenset(),
        admins_only: bool = False,
        links: LinkMaker | None = None,
        guild_id: int | None = None,
        charts: Charts | None = None,
        refresh_every: float = 5.0,
        answer_deadline: float = ANSWER_DEADLINE,
        guild_ready_timeout: float = 2.0,
        **options: Any,
    ) -> None:
        super().__init__(
            intents=intents(),
            guild_ready_timeout=guild_ready_timeout,
            allowed_mentions=discord.AllowedMentions.none(),
            **options,  # shard_count and shard_ids, for ShardedQuizClient
        )
        self.engine = engine
        self.chat = Chat(
            engine,
            DiscordPort(self),
            admins=admins,
            admins_only=admins_only,
            links=links,
            charts=charts,
            refresh_every=refresh_every,
        )
        self.answer_deadline = answer_deadline
        self.guild_id = guild_id
        self.tree: app_commands.CommandTree[QuizClient] = app_commands.CommandTree(self)
        # ``computed`` first: /quiz next computed asks a question computed from a template.
        computed = (COMPUTED,) if engine.bank.templates else ()
        tags = (*computed, *sorted({t for q in engine.bank.filter(None) for t in q.tags}))
        for command in command_tree(self._command, tags):
            self.tree.add_command(command)
        self.tree.error(self._option_error)
        self.synced: list[app_commands.AppCommand] = []

    @property
    def drain(self) -> Any:
        """Return the count of handlers in flight."""
        return self.chat.drain

    async def setup_hook(self) -> None:
        """Sync the commands, then freeze what startup loaded (see ``freeze_heap``)."""
        guild = discord.Object(self.guild_id) if self.guild_id else None
        if guild is not None:
            # Guild commands appear at once; global ones can take a while to reach every server.
            self.tree.copy_global_to(guild=guild)
        self.synced = await self.tree.sync(guild=guild)
        log.info(
            "synced %d commands %s",
            len(self.synced),
            f"to guild {guild.id}" if guild else "globally",
        )
        # Logged in, not yet connected to the gateway: no interaction is in flight.
        freeze_heap("startup")

    async def _handle(
        self, interaction: discord.Interaction[Any], kind: str, event: Callable[[Place, str], Any]
    ) -> None:
        """Hand an interaction to the chat core as an event; outside a server, refuse it."""
        exchange = DiscordExchange(interaction, budget=self.answer_deadline)
        place, user = place_of(interaction), str(interaction.user.id)
        if place is None:
            await self.chat.refuse(exchange, None, user, say(M.SERVER_ONLY), kind=kind)
            return
        self.learn_names(place, interaction.user, interaction.channel, interaction.guild)
        match event(place, user):
            case Command() as command:
                await self.chat.command(command, exchange, kind=kind)
            case Press() as press:
                await self.chat.press(press, exchange, kind=kind)
            case Submit() as sent:
                await self.chat.submit(sent, exchange, kind=kind)

    async def _command(
        self,
        interaction: discord.Interaction[Any],
        grammar: Grammar,
        verb: Verb,
        options: dict[str, Any],
    ) -> None:
        await self._handle(
            interaction,
            "command",
            lambda place, user: Command(place, user, grammar.name, verb=verb.name, options=options),
        )

    async def _option_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        text = option_error(error)
        if text is None:
            log.error("an application command failed", exc_info=error)
            return
        exchange = DiscordExchange(interaction, budget=self.answer_deadline)
        place, user = place_of(interaction), str(interaction.user.id)
        await self.chat.refuse(exchange, place, user, text, kind="command")

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Hand a click on one of the bot's buttons to the chat core, read from its custom_id.

        Every click comes here, whenever its message was sent: the buttons keep working across
        restarts, and discord.py builds no view for them (see ``render.Buttons``).
        """
        if interaction.type is discord.InteractionType.modal_submit:
            await self.submitted(interaction)
            return
        if interaction.type is not discord.InteractionType.component:
            return
        data: Any = interaction.data
        if data.get("component_type") != discord.ComponentType.button.value:
            return
        value = str(data.get("custom_id", ""))
        if read_button(value) is None:
            return  # another app's component
        await self._handle(interaction, "button", lambda place, user: Press(place, user, value))

    async def submitted(self, interaction: discord.Interaction[Any]) -> None:
        """Hand a modal sent back to the chat core, read from its ``custom_id`` and inputs."""
        data: Any = interaction.data or {}
        form_id = str(data.get("custom_id", ""))
        if read_button(form_id) is None:
            return  # another app's modal
        values = render.form_values(list(data.get("components") or []))
        await self._handle(
            interaction, "form", lambda place, user: Submit(place, user, form_id, values)
        )

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        """Hand a letter reaction on one of the bot's messages to the chat core."""
        me = self.user
        if payload.guild_id is None or me is None or payload.user_id == me.id:
            return
        if payload.member is not None and payload.member.bot:
            return
        if payload.message_author_id is not None and payload.message_author_id != me.id:
            return
        key = (
            render.EMOJI_LETTER.get(payload.emoji.name or "") if payload.emoji.id is None else None
        )
        if key is None:
            return
        place = Place(render.PLATFORM, str(payload.guild_id), str(payload.channel_id))
        self.learn_names(
            place,
            payload.member,
            self.get_channel(payload.channel_id),
            self.get_guild(payload.guild_id),
        )
        reaction = Reaction(place, str(payload.user_id), str(payload.message_id), key)
        await self.chat.reaction(reaction, kind="reaction")

    def learn_names(self, place: Place, person: Any, channel: Any, guild: Any) -> None:
        """Hand the names the gateway cache has for this person, channel and server to the book."""
        names: dict[tuple[NameKind, str], str] = {}
        if person is not None:
            names[(NameKind.USER, str(person.id))] = str(person.display_name)
        channel_name = getattr(channel, "name", None)
        if isinstance(channel_name, str):
            names[(NameKind.CHANNEL, place.channel)] = channel_name
        guild_name = getattr(guild, "name", None)
        if isinstance(guild_name, str):
            names[(NameKind.WORKSPACE, place.workspace)] = guild_name
        self.chat.names.learn(place.workspace, names)

    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """The bot was removed from a server (kicked, or the server deleted): forget it there.

        Its daily questions there stop and its open rounds close without a reveal. discord.py
        calls this only for a server the bot has left, not for one that is down for a while
        (``on_guild_unavailable``), which keeps everything. The gateway does not send the event
        again, so a failure is logged and the schedules stay until an admin stops them.
        """
        try:
            await self.chat.left_workspace(str(guild.id), kind="event")
        except Exception:
            log.exception("could not forget server %s after leaving it", guild.id)

    async def on_ready(self) -> None:
        """Log where the bot is."""
        log.info("connected to Discord as %s in %d servers", self.user, len(self.guilds))


class ShardedQuizClient(QuizClient, discord.AutoShardedClient):
    """The quiz client on several gateway shards in one process (DISCORD_SHARD_COUNT)."""


async def reachable() -> None:
    """Return once Discord's REST API answers at all (``GET /gateway`` needs no token).

    discord.py's login cannot be retried on the same client, so the retries are this probe's.
    """
    timeout = aiohttp.ClientTimeout(total=10)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.get(f"{discord.http.Route.BASE}/gateway") as response,
    ):
        await response.read()


class Gateway:
    """The Discord gateway as the runner's transport."""

    def __init__(self, client: QuizClient, token: str) -> None:
        self.client = client
        self.token = token
        self._connection: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Log in (which syncs the commands; retried while Discord is unreachable), then connect."""
        # discord.py reconnects a lost gateway by itself; its log says so in one line a try.
        one_line_logs("discord.client", "discord.shard", "discord.gateway")
        await keep_trying(
            reachable, "Discord", retry_on=(aiohttp.ClientError, OSError, TimeoutError)
        )
        try:
            await self.client.login(self.token)
        except discord.LoginFailure:
            raise ConfigError("DISCORD_TOKEN was refused by Discord") from None
        self._connection = asyncio.create_task(self.client.connect(), name="discord-gateway")

    async def stop_taking_work(self) -> None:
        """Stay connected: the handlers in flight still answer through it."""

    async def close(self) -> None:
        """Disconnect."""
        await self.client.close()
        if self._connection is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._connection

    async def wait_closed(self) -> None:
        """Return when the gateway connection has ended (raise what ended it)."""
        if self._connection is not None:
            await asyncio.shield(self._connection)


def shard_options(settings: Settings) -> dict[str, Any]:
    """Return the client's shard arguments: none, or the shard count and this process's ids."""
    if settings.discord_shard_count is None:
        if settings.discord_shard_ids:
            raise ConfigError("DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT (the total) as well")
        return {}
    options: dict[str, Any] = {"shard_count": settings.discord_shard_count}
    ids = settings.shard_ids()
    if ids is not None:
        options["shard_ids"] = ids
    return options


async def application_id(settings: Settings) -> int:
    """Return the application id: DISCORD_APPLICATION_ID, or ask Discord with DISCORD_TOKEN."""
    if settings.discord_application_id:
        return settings.discord_application_id
    if not settings.discord_token:
        raise ConfigError(
            "DISCORD_APPLICATION_ID is not set (nor DISCORD_TOKEN to look it up); "
            "see docs/discord.md"
        )
    configure_endpoints(settings.discord_api_url, settings.discord_gateway_url)
    client = discord.Client(intents=intents())
    try:
        await client.login(settings.discord_token)
        if client.application_id is None:
            raise ConfigError("Discord did not say which application DISCORD_TOKEN belongs to")
        return client.application_id
    except discord.LoginFailure:
        raise ConfigError("DISCORD_TOKEN was refused by Discord") from None
    finally:
        await client.close()


async def serve(settings: Settings, **serving: Unpack[Serving]) -> None:
    """Run the bot on Discord until SIGINT or SIGTERM (or ``stop``)."""
    settings.require("DISCORD_TOKEN")
    token = settings.discord_token
    assert token is not None
    install_redaction([token, *settings.secrets()])
    configure_endpoints(settings.discord_api_url, settings.discord_gateway_url)
    from bot.runtime import open_runtime

    shards = shard_options(settings)
    async with open_runtime(settings) as rt:
        kind = ShardedQuizClient if shards else QuizClient
        client = kind(
            rt.engine,
            **settings.chat_options(),
            guild_id=settings.discord_guild_id,
            **shards,
        )
        pages = dashboard_pages(rt)
        if shards:
            log.info(
                "running shards %s of %d",
                shards.get("shard_ids", "all"),
                settings.discord_shard_count,
            )
        await serve_chat(
            client.chat,
            Gateway(client, token),
            settings,
            store=rt.store,
            extra_routes=pages,
            pages_host=settings.listen_host(),
            connected=client.is_ready,  # not ready until the gateway says READY
            **serving,
        )
