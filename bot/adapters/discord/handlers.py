"""Thin handlers: parse a Discord interaction or reaction, call the engine, render, reply."""

from __future__ import annotations

import asyncio
import io
import logging
import secrets
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Literal

import discord
from discord import app_commands

from bot.adapters.discord import _daily, render
from bot.adapters.discord._publisher import DiscordPublisher
from bot.bandwidth import (
    OPS,
    BandwidthError,
    BandwidthRequest,
    Catalogue,
    Estimate,
    estimate,
    headline,
    parse_over,
    parse_size,
    render_chart,
    render_table,
)
from bot.engine import QuizEngine
from bot.engine.model import AnswerStatus, ChartSpec, Period, Place
from bot.errors import NotFound, UserError
from bot.observability.metrics import count_answer, count_api_error, http_error_kind
from bot.scheduler import ScheduleService

log = logging.getLogger(__name__)

Interaction = discord.Interaction[Any]

WEEKDAY = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


@dataclass(frozen=True)
class Deps:
    """What the handlers work with."""

    engine: QuizEngine
    publisher: DiscordPublisher
    locator: RoundLocator
    schedules: ScheduleService
    admins: frozenset[str] = frozenset()
    tags: tuple[str, ...] = ()
    # Past this many seconds without the engine's answer a click is deferred, inside Discord's 3 s.
    answer_deadline: float = 2.0


def place_of(interaction: Interaction) -> Place:
    """Return the channel an interaction came from (UserError outside a server channel)."""
    if interaction.guild_id is None or interaction.channel_id is None:
        raise UserError("Use this in a server channel.")
    return Place(render.PLATFORM, str(interaction.guild_id), str(interaction.channel_id))


async def reply(
    interaction: Interaction,
    content: str | None = None,
    *,
    embed: discord.Embed | None = None,
    ephemeral: bool = True,
) -> None:
    """Answer an interaction, as its first response or as a follow-up once it has one."""
    kwargs: dict[str, Any] = {"ephemeral": ephemeral}
    if content is not None:
        kwargs["content"] = content
    if embed is not None:
        kwargs["embed"] = embed
    if interaction.response.is_done():
        await interaction.followup.send(**kwargs)
    else:
        await interaction.response.send_message(**kwargs)


async def report_error(interaction: Interaction, error: BaseException) -> None:
    """Be the one error boundary: show a user error as is, log anything else with an id."""
    original = error.original if isinstance(error, app_commands.CommandInvokeError) else error
    if isinstance(original, discord.HTTPException):
        count_api_error(render.PLATFORM, http_error_kind(original.status))
    if isinstance(original, UserError):
        text = str(original)
    elif isinstance(original, app_commands.TransformerError):
        text = f"`{original.value}` does not fit that option; see /quiz help."
    elif isinstance(original, app_commands.CheckFailure):
        text = "You cannot use that command here."
    else:
        error_id = secrets.token_hex(4)
        command = interaction.command.qualified_name if interaction.command else "a component"
        log.error(
            "unexpected error in %s (error id %s)",
            command,
            error_id,
            exc_info=(type(original), original, original.__traceback__),
            extra={
                "platform": render.PLATFORM,
                "workspace": str(interaction.guild_id),
                "channel": str(interaction.channel_id),
                "user": str(interaction.user.id),
                "error_id": error_id,
            },
        )
        text = render.apology(error_id)
    try:
        await reply(interaction, text)
    except discord.HTTPException as exc:
        log.warning("could not tell the user about an error: %s", exc)


def is_admin(deps: Deps, interaction: Interaction) -> bool:
    """Return whether the caller holds Manage Server or is listed in QUIZBOT_ADMINS."""
    return bool(interaction.permissions.manage_guild or str(interaction.user.id) in deps.admins)


def require_admin(deps: Deps, interaction: Interaction) -> None:
    """Let through Manage Server holders and QUIZBOT_ADMINS; refuse anyone else."""
    if is_admin(deps, interaction):
        return
    raise UserError("Only people with the Manage Server permission can do that.")


# ---------------------------------------------------------------- /quiz


class QuizCommands(app_commands.Group, name="quiz", description="Quiz questions, scores, settings"):
    """The ``/quiz`` command group."""

    def __init__(self, deps: Deps) -> None:
        super().__init__(guild_only=True)
        self.deps = deps

    @app_commands.command(name="next", description="Post the next question in this channel")
    @app_commands.describe(tag="Only questions with this tag")
    async def next_question(self, interaction: Interaction, tag: str | None = None) -> None:
        """Open a round here and post its card as the reply."""
        card = await self.deps.engine.start_round(place_of(interaction), tag=tag)
        try:
            sent = await interaction.response.send_message(
                embed=render.card_embed(card), view=render.card_view(card)
            )
        except Exception:
            # The card never reached the channel: free the channel for the next try.
            await self.deps.engine.withdraw(card.round_id)
            raise
        message_id = sent.message_id or (await interaction.original_response()).id
        await self.deps.engine.attach_message(card.round_id, str(message_id))

    @next_question.autocomplete("tag")
    async def tag_choices(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Offer the bank's tags that contain what has been typed."""
        typed = current.strip().lower()
        return [app_commands.Choice(name=t, value=t) for t in self.deps.tags if typed in t][:25]

    @app_commands.command(name="close", description="Close the open question here and reveal")
    async def close_round(self, interaction: Interaction) -> None:
        """Close this channel's round, say so, then edit the card and explain in its thread."""
        reveal = await self.deps.engine.close_in_channel(place_of(interaction))
        await interaction.response.send_message(
            "Closed: the answer is on the question and explained in its thread.", ephemeral=True
        )
        await self.deps.publisher.publish_reveal(reveal)

    @app_commands.command(name="leaderboard", description="Top 10 of this server and your rank")
    @app_commands.describe(period="Which answers count (default: this week)")
    async def leaderboard(
        self, interaction: Interaction, period: Literal["week", "month", "all"] = "week"
    ) -> None:
        """Show the top scorers of a period and the caller's rank."""
        place = place_of(interaction)
        board = await self.deps.engine.leaderboard(
            render.PLATFORM, place.workspace, Period(period), str(interaction.user.id)
        )
        await reply(interaction, embed=render.leaderboard_embed(board), ephemeral=False)

    @app_commands.command(name="stats", description="Answered, right, points and streaks")
    @app_commands.describe(user="Whose stats (default: yours)")
    async def stats(self, interaction: Interaction, user: discord.User | None = None) -> None:
        """Show one person's totals and streaks, privately."""
        who = user or interaction.user
        result = await self.deps.engine.stats(place_of(interaction), str(who.id))
        await reply(interaction, render.stats_text(result))

    @app_commands.command(name="settings", description="Answer changes and round length here")
    @app_commands.describe(
        changes="May people change their answer until the round closes?",
        minutes="How long a round from /quiz next stays open",
    )
    async def settings(
        self,
        interaction: Interaction,
        changes: bool | None = None,
        minutes: app_commands.Range[int, 1, 7 * 24 * 60] | None = None,
    ) -> None:
        """Show, or (Manage Server) change, this channel's options."""
        require_admin(self.deps, interaction)
        place = place_of(interaction)
        current = await self.deps.engine.channel_settings(place)
        wanted = replace(
            current,
            allow_change=current.allow_change if changes is None else changes,
            round_minutes=current.round_minutes if minutes is None else minutes,
        )
        if wanted != current:
            await self.deps.engine.set_channel_settings(place, wanted)
        await reply(interaction, render.settings_text(wanted))

    @app_commands.command(name="schedule", description="Daily question in this channel")
    @app_commands.describe(
        time="HH:MM (no options: show the schedule)",
        tz="Time zone, Area/City",
        days="Every day or weekdays",
        tag="Only this tag",
        digest="Weekly digest on this day",
        close="Close each question after 45m, 2h, 1h30m (default: at the next post)",
    )
    async def schedule(
        self,
        interaction: Interaction,
        time: str | None = None,
        tz: str | None = None,
        days: Literal["daily", "weekdays"] | None = None,
        tag: str | None = None,
        digest: WEEKDAY | None = None,
        close: str | None = None,
    ) -> None:
        """Show the daily post, or set it (Manage Server)."""
        text = await _daily.schedule_reply(
            self.deps.schedules,
            place_of(interaction),
            str(interaction.user.id),
            admin=is_admin(self.deps, interaction),
            time=time,
            tz=tz,
            days=days,
            tag=tag,
            digest=digest,
            close=close,
        )
        await reply(interaction, text)

    @app_commands.command(name="unschedule", description="Stop the daily question here")
    async def unschedule(self, interaction: Interaction) -> None:
        """Stop the daily post (Manage Server)."""
        require_admin(self.deps, interaction)
        text = await self.deps.schedules.remove_text(place_of(interaction), admin=True)
        await reply(interaction, text)

    @app_commands.command(name="review", description="Re-ask a question you missed, privately")
    async def review(self, interaction: Interaction) -> None:
        """Re-ask the caller's most overdue missed question, privately."""
        await _daily.show_review(self.deps.engine, interaction, place_of(interaction))

    @app_commands.command(name="help", description="How to use the quiz")
    async def help(self, interaction: Interaction) -> None:
        """Show the commands."""
        await reply(interaction, render.HELP)


# ---------------------------------------------------------------- answers


async def answer_click(deps: Deps, interaction: Interaction, round_id: int, key: str) -> None:
    """Grade a button click; the answer is committed before the user hears anything."""
    if interaction.guild_id is None:
        raise NotFound("That question does not exist here.")
    answering = asyncio.ensure_future(
        deps.engine.answer(
            render.PLATFORM, str(interaction.guild_id), round_id, str(interaction.user.id), key
        )
    )
    done, _ = await asyncio.wait({answering}, timeout=deps.answer_deadline)
    if not done:
        await interaction.response.defer(ephemeral=True, thinking=True)
    outcome = await answering
    count_answer(render.PLATFORM, outcome.status.value)
    await reply(interaction, render.answer_feedback(outcome))
    if outcome.status in (AnswerStatus.ACCEPTED, AnswerStatus.CHANGED):
        deps.publisher.touch(round_id)


class RoundLocator:
    """Find which round a card shows from the card's own buttons; remembers recent answers."""

    def __init__(self, client: discord.Client, *, size: int = 4096) -> None:
        self.client = client
        self.size = size
        self._known: OrderedDict[int, int | None] = OrderedDict()

    async def round_of(self, channel_id: int, message_id: int) -> int | None:
        """Return the round id of a card message, or None when it is not a card."""
        if message_id in self._known:
            self._known.move_to_end(message_id)
            return self._known[message_id]
        channel = self.client.get_partial_messageable(channel_id)
        try:
            message = await channel.fetch_message(message_id)
        except discord.NotFound:
            round_id = None
        else:
            round_id = _round_in(message)
        self._known[message_id] = round_id
        while len(self._known) > self.size:
            self._known.popitem(last=False)
        return round_id


def _round_in(message: discord.Message) -> int | None:
    for row in message.components:
        for child in getattr(row, "children", ()):
            parsed = render.parse_custom_id(getattr(child, "custom_id", None) or "")
            if parsed is not None:
                return parsed[0]
    return None


async def answer_reaction(
    deps: Deps, client: discord.Client, payload: discord.RawReactionActionEvent
) -> None:
    """Grade a 🇦..🇪 reaction on a card; the reactor hears back by direct message."""
    me = client.user
    if payload.guild_id is None or me is None or payload.user_id == me.id:
        return
    if payload.member is not None and payload.member.bot:
        return
    if payload.message_author_id is not None and payload.message_author_id != me.id:
        return
    key = render.EMOJI_LETTER.get(payload.emoji.name or "") if payload.emoji.id is None else None
    if key is None:
        return
    round_id = await deps.locator.round_of(payload.channel_id, payload.message_id)
    if round_id is None:
        return
    try:
        outcome = await deps.engine.answer(
            render.PLATFORM, str(payload.guild_id), round_id, str(payload.user_id), key
        )
    except NotFound:
        return
    except UserError as exc:
        text = str(exc)
    else:
        count_answer(render.PLATFORM, outcome.status.value)
        text = render.answer_feedback(outcome)
        if outcome.status in (AnswerStatus.ACCEPTED, AnswerStatus.CHANGED):
            deps.publisher.touch(round_id)
    link = (
        f"https://discord.com/channels/{payload.guild_id}/{payload.channel_id}/{payload.message_id}"
    )
    dm_target = payload.member or await client.fetch_user(payload.user_id)
    try:
        await dm_target.send(render.clip(f"Your answer to {link}\n{text}", render.CONTENT_MAX))
    except discord.Forbidden:
        log.info("user %s does not accept direct messages", payload.user_id)


# ---------------------------------------------------------------- /bandwidth


class Bandwidth:
    """Estimates from bot.bandwidth; charts drawn in a worker thread, one at a time."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        # matplotlib must not draw from two threads at once.
        self._drawing = asyncio.Lock()

    def estimate(
        self,
        size: str,
        op: str = "transfer",
        *,
        nodes: int = 2,
        gpus: int = 1,
        nics: int | None = None,
        step: float | None = None,
        over: str | tuple[str, ...] | None = None,
    ) -> Estimate:
        """Estimate one request; a BandwidthError carries the Discord usage."""
        try:
            request = BandwidthRequest(
                size_text=size,
                bytes=parse_size(size),
                op=op,
                nodes=nodes,
                gpus=gpus,
                nics=nics,
                step=step,
                over=parse_over(over) if isinstance(over, str) else (over or ()),
            )
            return estimate(request, self.catalogue)
        except BandwidthError as exc:
            raise BandwidthError(exc.message, usage=render.BANDWIDTH_USAGE) from None

    async def chart(self, result: Estimate) -> discord.File:
        """Draw the estimate as a PNG attachment."""
        async with self._drawing:
            png = await asyncio.to_thread(render_chart, result)
        return discord.File(io.BytesIO(png), filename="bandwidth.png", description=headline(result))

    async def for_question(self, spec: ChartSpec) -> discord.File | None:
        """Draw the chart a question's reveal carries (None, logged, if the spec is unusable)."""
        try:
            result = self.estimate(
                spec.size, spec.op, nodes=spec.nodes, gpus=spec.gpus, over=spec.over
            )
        except BandwidthError as exc:
            log.warning("the chart of a question cannot be drawn: %s", exc.message)
            return None
        return await self.chart(result)


def bandwidth_command(bandwidth: Bandwidth) -> app_commands.Command[Any, Any, None]:
    """Return the ``/bandwidth`` command: the table in a code block, the chart attached."""

    @app_commands.command(
        name="bandwidth", description="How long moving data takes over each interconnect"
    )
    @app_commands.describe(
        size="Bytes (140GB, 1.5TiB), bits (400Gb) or parameters (70B params bf16, 13B adam)",
        op="What moves the data (default: transfer, one point-to-point link)",
        nodes="Nodes taking part (default 2)",
        gpus="GPUs per node (default 1)",
        nics="Network cards per node (default one per GPU)",
        step="Compute seconds per training step: adds scaling efficiency",
        over="Interconnects to compare, such as ib-hdr,1gbe (or all)",
    )
    @app_commands.choices(op=[app_commands.Choice(name=o, value=o) for o in OPS])
    async def bandwidth_estimate(
        interaction: Interaction,
        size: app_commands.Range[str, 1, 200],
        op: str = "transfer",
        nodes: app_commands.Range[int, 1, 100_000] = 2,
        gpus: app_commands.Range[int, 1, 1024] = 1,
        nics: app_commands.Range[int, 1, 1024] | None = None,
        step: app_commands.Range[float, 0.000001, 1_000_000.0] | None = None,
        over: app_commands.Range[str, 1, 500] | None = None,
    ) -> None:
        result = bandwidth.estimate(
            size, op, nodes=nodes, gpus=gpus, nics=nics, step=step, over=over
        )
        # Drawing takes longer than Discord's 3 s allow on a busy machine: defer first.
        await interaction.response.defer(thinking=True)
        chart = await bandwidth.chart(result)
        table = render_table(result)
        files = [chart]
        if render.fits_code_block(table):
            text = render.code_block(table)
        else:
            # A long comparison (over:all) does not fit one message: attach the table too.
            text = render.clip(headline(result), render.CONTENT_MAX - 20) + " (table attached)"
            files.append(discord.File(io.BytesIO(table.encode()), filename="bandwidth.txt"))
        await interaction.followup.send(text, files=files)

    return bandwidth_estimate
