"""Wire quizbot into discord.py: endpoints, intents, the client, its command tree and timers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Any

import discord
import yarl
from discord import app_commands

from bot.adapters.discord import _daily, handlers, render
from bot.adapters.discord._publisher import DiscordPublisher
from bot.config import Settings
from bot.engine import QuizEngine
from bot.errors import ConfigError
from bot.observability.drain import Drain
from bot.observability.health import start_health_server
from bot.observability.metrics import timed
from bot.observability.redact import install_redaction
from bot.scheduler import ScheduleService, run_scheduler, run_timers, schedule_store_of

log = logging.getLogger(__name__)

# Exactly what the bot does in a channel: read it, post cards and replies with embeds and
# charts, open a thread on a card and post in it, and read a card back to grade a reaction.
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
    """A discord.py client that runs the quiz: commands, buttons, reactions and round timers."""

    def __init__(
        self,
        engine: QuizEngine,
        *,
        admins: frozenset[str] = frozenset(),
        guild_id: int | None = None,
        bandwidth: handlers.Bandwidth | None = None,
        timer_interval: float = 5.0,
        scheduler_interval: float = 20.0,
        refresh_interval: float = 5.0,
        answer_deadline: float = 2.0,
        guild_ready_timeout: float = 2.0,
        **options: Any,
    ) -> None:
        super().__init__(
            intents=intents(),
            guild_ready_timeout=guild_ready_timeout,
            allowed_mentions=discord.AllowedMentions.none(),
            **options,  # shard_count and shard_ids, for ShardedQuizClient
        )
        # Counts the interactions and reactions being handled, so SIGTERM can let them finish.
        self.drain = Drain()
        self.engine = engine
        if bandwidth is None:
            from bot.bandwidth import load_catalogue

            bandwidth = handlers.Bandwidth(load_catalogue())
        self.publisher = DiscordPublisher(
            self, engine, chart=bandwidth.for_question, refresh_interval=refresh_interval
        )
        tags = sorted({t for q in engine.bank.filter(None) for t in q.tags})
        self.deps = handlers.Deps(
            engine=engine,
            publisher=self.publisher,
            locator=handlers.RoundLocator(self),
            schedules=ScheduleService(engine, schedule_store_of(engine)),
            admins=admins,
            tags=tuple(tags),
            answer_deadline=answer_deadline,
        )
        self.tree: app_commands.CommandTree[QuizClient] = TrackedTree(self)
        self.tree.add_command(handlers.QuizCommands(self.deps))
        self.tree.add_command(handlers.bandwidth_command(bandwidth))
        self.tree.error(handlers.report_error)
        self.guild_id = guild_id
        self.timer_interval = timer_interval
        self.scheduler_interval = scheduler_interval
        self.synced: list[app_commands.AppCommand] = []
        self._stop_timers = asyncio.Event()
        self._timers: asyncio.Task[None] | None = None
        self._scheduler: asyncio.Task[None] | None = None

    async def setup_hook(self) -> None:
        """Register the buttons, sync the commands, start the timers and the daily scheduler."""
        self.add_dynamic_items(render.ChoiceButton, _daily.ReviewButton)
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
        # Rounds that fell due while the bot was down close on the timers' first pass.
        self._timers = asyncio.create_task(
            run_timers(
                self.engine, self.publisher, interval=self.timer_interval, stop=self._stop_timers
            ),
            name="quiz-timers",
        )
        # Daily questions and digests: every process runs this; slot claims keep posts single.
        self._scheduler = asyncio.create_task(
            run_scheduler(
                self.engine,
                self.publisher,
                schedule_store_of(self.engine),
                clock=self.engine.clock,
                interval=self.scheduler_interval,
                stop=self._stop_timers,
            ),
            name="quiz-scheduler",
        )

    async def choice_clicked(
        self, interaction: discord.Interaction[Any], round_id: int, key: str
    ) -> None:
        """Answer a choice button; errors go to the same boundary as commands."""
        async with self.drain.track():
            with timed(render.PLATFORM, "button"):
                try:
                    await handlers.answer_click(self.deps, interaction, round_id, key)
                except Exception as exc:
                    await handlers.report_error(interaction, exc)

    async def review_clicked(
        self, interaction: discord.Interaction[Any], question_id: str, key: str
    ) -> None:
        """Answer a review button; errors go to the same boundary as commands."""
        async with self.drain.track():
            with timed(render.PLATFORM, "button"):
                try:
                    await _daily.answer_review(self.engine, interaction, question_id, key)
                except Exception as exc:
                    await handlers.report_error(interaction, exc)

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        """Grade a letter reaction on a card."""
        try:
            async with self.drain.track():
                with timed(render.PLATFORM, "reaction"):
                    await handlers.answer_reaction(self.deps, self, payload)
        except Exception:
            log.exception(
                "could not grade a reaction",
                extra={"platform": render.PLATFORM, "user": str(payload.user_id)},
            )

    async def on_ready(self) -> None:
        """Log where the bot is."""
        log.info("connected to Discord as %s in %d servers", self.user, len(self.guilds))

    async def close(self) -> None:
        """Stop the timers and pending edits, then disconnect."""
        self._stop_timers.set()
        for task in (self._timers, self._scheduler):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                    await asyncio.wait_for(task, timeout=10)
        self._timers = self._scheduler = None
        await self.publisher.aclose()
        await super().close()


class TrackedTree(app_commands.CommandTree["QuizClient"]):
    """The command tree, counting and timing each slash command until its handler returns."""

    async def _call(self, interaction: discord.Interaction[Any]) -> None:
        # discord.py runs every application command through this one method, in its own task.
        client = self.client
        async with client.drain.track():
            with timed(render.PLATFORM, "command"):
                await super()._call(interaction)


class ShardedQuizClient(QuizClient, discord.AutoShardedClient):
    """The quiz client on several gateway shards in one process (DISCORD_SHARD_COUNT)."""


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
            "see the README's Discord section"
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


async def serve(settings: Settings) -> None:
    """Run the bot on Discord until SIGINT or SIGTERM."""
    settings.require("DISCORD_TOKEN")
    token = settings.discord_token
    assert token is not None
    install_redaction([token])
    configure_endpoints(settings.discord_api_url, settings.discord_gateway_url)
    from bot.runtime import open_runtime

    shards = shard_options(settings)
    async with open_runtime(settings) as rt:
        kind = ShardedQuizClient if shards else QuizClient
        client = kind(
            rt.engine,
            admins=settings.admin_ids(),
            guild_id=settings.discord_guild_id,
            **shards,
        )
        if shards:
            log.info(
                "running shards %s of %d",
                shards.get("shard_ids", "all"),
                settings.discord_shard_count,
            )
        health = None
        if settings.health_port is not None:
            health = await start_health_server(
                rt.store,
                port=settings.health_port,
                drain=client.drain,
                connected=client.is_ready,  # not ready until the gateway says READY
            )

        async def shut_down() -> None:
            # /readyz turns 503 at once; the handlers in flight finish; then the gateway closes.
            await client.drain.wait(settings.shutdown_timeout)
            await client.close()

        loop = asyncio.get_running_loop()
        stopping: list[asyncio.Task[None]] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: stopping.append(loop.create_task(shut_down())))
        try:
            async with client:
                await client.start(token)
        except discord.LoginFailure:
            raise ConfigError("DISCORD_TOKEN was refused by Discord") from None
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            await asyncio.gather(*stopping, return_exceptions=True)
            if health is not None:
                await health.close()
