"""Bolt listeners: parse the Slack request, call the engine or /bandwidth, render, send.

Each listener acknowledges first (Slack allows 3 seconds), so a slow database or API call never
costs the user an error. Failures go to one error boundary, ``on_error``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext, AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import _daily, render
from bot.adapters.slack._charts import ChartMaker
from bot.adapters.slack._commands import (
    USAGE,
    ChannelOptions,
    CloseRound,
    NextQuestion,
    QuizCommand,
    Review,
    Schedule,
    ShowHelp,
    ShowLeaderboard,
    ShowStats,
    emoji_choice,
    parse_quiz,
)
from bot.adapters.slack._publisher import PLATFORM, SlackPublisher
from bot.config import Settings
from bot.engine import QuizEngine
from bot.engine.model import AnswerOutcome, AnswerStatus, ChannelSettings, Place
from bot.engine.ports import Days
from bot.errors import UserError
from bot.observability.drain import Drain
from bot.observability.metrics import count_answer, timed
from bot.scheduler import ScheduleRequest, ScheduleService, schedule_store_of

log = logging.getLogger(__name__)

Body = dict[str, Any]
ANSWER_ACTION = re.compile(re.escape(render.ANSWER_ACTION_PREFIX) + "[A-E]")
COUNTED = (AnswerStatus.ACCEPTED, AnswerStatus.CHANGED)
NOT_A_MEMBER = ("not_in_channel", "channel_not_found")
# A click is acknowledged once its answer is committed, so an acked click is never lost. Slack
# wants the ack within 3 s, and the request's way in comes on top: a commit slower than this
# leaves the click unacknowledged (Slack tells the user it failed; the feedback still follows).
ANSWER_DEADLINE = 2.5
NOT_A_BUTTON = "That button is not from a quiz question."
INVITE_ME = "I can't post in this channel yet: add me with `/invite @quizbot`, then try again."


class Handlers:
    """The listeners of the Slack app, sharing the engine, the publisher and the settings."""

    def __init__(
        self,
        engine: QuizEngine,
        publisher: SlackPublisher,
        settings: Settings,
        charts: ChartMaker,
    ) -> None:
        self.engine = engine
        self.publisher = publisher
        self.settings = settings
        self.charts = charts
        self.schedules = ScheduleService(engine, schedule_store_of(engine))
        # More answers at once than the store has connections would only queue in its pool,
        # where a long burst meets the pool's timeout; here they wait their turn instead.
        self._answering = asyncio.Semaphore(settings.db_pool_size + settings.db_max_overflow)
        self.answer_deadline = ANSWER_DEADLINE
        # Counts the work still running after each ack, so SIGTERM can let it finish.
        self.drain = Drain()

    def register(self, app: AsyncApp) -> None:
        """Attach every listener and the error boundary to the app."""
        app.command("/quiz")(self.quiz)
        app.command("/bandwidth")(self.bandwidth)
        app.action(ANSWER_ACTION)(self.answer_click)
        app.action(_daily.REVIEW_ACTION)(self.review_click)
        app.event("reaction_added")(self.reaction_added)
        app.error(self.on_error)

    # ---------------------------------------------------------------- commands

    async def quiz(
        self, ack: AsyncAck, command: Body, respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        """Answer ``/quiz ...``."""
        try:
            parsed = parse_quiz(command.get("text", ""))
        except UserError as exc:
            await ack(text=str(exc))
            return
        if isinstance(parsed, ShowHelp):
            await ack(text=USAGE)
            return
        await ack()
        async with self.boundary(command, client):
            place = Place(PLATFORM, command["team_id"], command["channel_id"])
            reply = await self._run(parsed, place, command["user_id"])
            if reply:
                await respond(text=reply, response_type="ephemeral")

    async def _run(self, cmd: QuizCommand, place: Place, user: str) -> str | None:
        match cmd:
            case NextQuestion(tag=tag):
                card = await self.engine.start_round(place, tag=tag)
                try:
                    ts = await self.publisher.post_card(card)
                except Exception as exc:
                    # The card never reached the channel: free the channel for the next try.
                    await self.engine.withdraw(card.round_id)
                    if _slack_error(exc) in NOT_A_MEMBER:
                        raise UserError(INVITE_ME) from exc
                    raise
                await self.engine.attach_message(card.round_id, ts)
                return None
            case CloseRound():
                await self.publisher.publish_reveal(await self.engine.close_in_channel(place))
                return None
            case ShowLeaderboard(period=period):
                board = await self.engine.leaderboard(PLATFORM, place.workspace, period, user)
                return render.leaderboard(board)
            case ShowStats(user=who):
                return render.stats(await self.engine.stats(place, who or user))
            case ChannelOptions():
                return await self._settings(cmd, place, user)
            case Schedule():
                return await self._schedule(cmd, place, user)
            case Review():
                return await _daily.send_review(self.engine, self.publisher.client, place, user)
        raise AssertionError(f"unhandled command {cmd!r}")

    async def _schedule(self, cmd: Schedule, place: Place, user: str) -> str:
        if cmd.at is None and not cmd.off:
            return await self.schedules.show_text(place)
        admin = await self._is_admin(user)
        if cmd.at is None:
            return await self.schedules.remove_text(place, admin=admin)
        request = ScheduleRequest(
            hour=cmd.at.hour,
            minute=cmd.at.minute,
            zone=cmd.zone,
            days=Days.WEEKDAYS if cmd.weekdays_only else Days.DAILY,
            tag=cmd.tag,
            digest_weekday=cmd.digest,
            close_minutes=cmd.close_minutes,
        )
        return await self.schedules.set_text(place, request, user=user, admin=admin)

    async def _settings(self, cmd: ChannelOptions, place: Place, user: str) -> str:
        current = await self.engine.channel_settings(place)
        if not cmd.changes_something:
            return render.channel_settings(current)
        if not await self._is_admin(user):
            raise UserError("Only workspace admins can change this channel's quiz settings.")
        new = ChannelSettings(
            allow_change=current.allow_change if cmd.allow_change is None else cmd.allow_change,
            round_minutes=cmd.round_minutes or current.round_minutes,
        )
        await self.engine.set_channel_settings(place, new)
        return "Saved. " + render.channel_settings(new)

    async def _is_admin(self, user: str) -> bool:
        if user in self.settings.admin_ids():
            return True
        info = (await self.publisher.client.users_info(user=user))["user"]
        return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))

    async def bandwidth(self, ack: AsyncAck, command: Body, client: AsyncWebClient) -> None:
        """Answer ``/bandwidth ...``: the table in the channel, then the chart uploaded."""
        try:
            result = self.charts.estimate(command.get("text", ""))
        except UserError as exc:
            usage = f"\n{render.code_block(exc.usage)}" if exc.usage else ""
            await ack(text=exc.message + usage)
            return
        await ack()
        async with self.boundary(command, client):
            channel = command["channel_id"]
            table = render.code_block(self.charts.table(result))
            await client.chat_postMessage(channel=channel, text=table)
            chart = await self.charts.chart(result)
            await client.files_upload_v2(
                channel=channel, content=chart.png, filename=chart.filename, title=chart.title
            )

    # ---------------------------------------------------------------- answers

    async def answer_click(
        self, ack: AsyncAck, body: Body, action: Body, client: AsyncWebClient
    ) -> None:
        """Record a button answer, acknowledge the click, then tell the clicker privately.

        The ack follows the answer's commit, so a click Slack showed as taken survives this
        process dying right after. A commit slower than ``answer_deadline`` leaves the click
        unacknowledged: better Slack's "did not respond" than a taken click that could be lost.
        """
        answering = asyncio.ensure_future(self._record(body, action))
        await asyncio.wait({answering}, timeout=self.answer_deadline)
        if answering.done():
            await ack()
        else:
            log.warning(
                "an answer took over %.1f s to commit; its click goes unacknowledged",
                self.answer_deadline,
                extra=_where(body),
            )
        async with self.boundary(body, client):
            round_id, outcome = await answering
            user, channel = body["user"]["id"], body["channel"]["id"]
            count_answer(PLATFORM, outcome.status.value)
            text = render.answer_feedback(outcome)
            await client.chat_postEphemeral(channel=channel, user=user, text=text)
            if outcome.status in COUNTED:
                self.publisher.note_answer(round_id)

    async def _record(self, body: Body, action: Body) -> tuple[int, AnswerOutcome]:
        round_id, key = _parse_answer(action.get("value", ""))
        try:
            team, user = str(body["team"]["id"]), str(body["user"]["id"])
            str(body["channel"]["id"])  # the feedback goes there: no channel, no answer
        except (KeyError, TypeError):
            raise UserError(NOT_A_BUTTON) from None
        async with self._answering:
            outcome = await self.engine.answer(PLATFORM, team, round_id, user, key)
        return round_id, outcome

    async def review_click(
        self, ack: AsyncAck, body: Body, action: Body, respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        """Grade a private review answer and replace the question with the feedback."""
        await ack()
        async with self.boundary(body, client):
            user, workspace = body["user"]["id"], body["team"]["id"]
            await _daily.answer_review(
                self.engine, workspace, user, action.get("value", ""), respond
            )

    async def reaction_added(
        self, event: Body, body: Body, context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        """Count an emoji reaction on an open card as that user's answer."""
        key, item, user = emoji_choice(event["reaction"]), event.get("item", {}), event["user"]
        if key is None or item.get("type") != "message" or user == context.bot_user_id:
            return
        async with self.boundary(body, client):
            place = Place(PLATFORM, body["team_id"], item["channel"])
            rnd = await self.engine.open_round(place)
            if rnd is None or rnd.message_ref != item["ts"]:
                return
            async with self._answering:
                outcome = await self.engine.answer(PLATFORM, place.workspace, rnd.id, user, key)
            count_answer(PLATFORM, outcome.status.value)
            if outcome.status is AnswerStatus.ALREADY and outcome.choice.key == key:
                return  # a redelivered event, or the same answer again: already told
            text = render.answer_feedback(outcome)
            await client.chat_postEphemeral(channel=place.channel, user=user, text=text)
            if outcome.status in COUNTED:
                self.publisher.note_answer(rnd.id)

    # ---------------------------------------------------------------- the error boundary

    @asynccontextmanager
    async def boundary(self, body: Body, client: AsyncWebClient) -> AsyncIterator[None]:
        """Send whatever the block raises to ``on_error`` instead of back into Bolt.

        Bolt forgets an ack when its listener raises within the 10 ms it polls for the ack, and
        then answers Slack 404; so listeners never raise after acking.
        """
        kind = "command" if "command" in body else str(body.get("type", "event"))
        async with self.drain.track():
            with timed(PLATFORM, kind):
                try:
                    yield
                except Exception as exc:
                    await self.on_error(exc, body, client)

    async def on_error(self, error: Exception, body: Body, client: AsyncWebClient) -> None:
        """Tell the user what went wrong: their mistake as is, ours as an apology with an id."""
        where = _where(body)
        if isinstance(error, UserError):
            text = str(error)
            log.info("refused: %s", error.message, extra=where)
        else:
            error_id = uuid.uuid4().hex[:8]
            log.error(
                "error %s handling %s",
                error_id,
                body.get("type") or "command",
                exc_info=error,
                extra={**where, "error_id": error_id},
            )
            text = render.apology(error_id)
        try:
            if body.get("response_url"):
                respond = AsyncRespond(response_url=body["response_url"])
                await respond(text=text, response_type="ephemeral", replace_original=False)
            elif where.get("channel") and where.get("user"):
                await client.chat_postEphemeral(
                    channel=where["channel"], user=where["user"], text=text
                )
        except Exception:
            log.exception("could not tell the user about an error", extra=where)


def _slack_error(exc: Exception) -> str | None:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return None


def _parse_answer(value: str) -> tuple[int, str]:
    round_part, _, key = value.partition(":")
    # isdigit() alone lets through digits int() refuses, such as superscripts.
    if not (round_part.isascii() and round_part.isdigit()) or not key:
        raise UserError(NOT_A_BUTTON)
    return int(round_part), key


def _where(body: Body) -> dict[str, str]:
    """Return the platform, workspace, channel and user of a request, for logs and replies."""
    event = body.get("event") or {}
    item = event.get("item") or {}
    where = {
        "platform": PLATFORM,
        "workspace": body.get("team_id") or (body.get("team") or {}).get("id"),
        "channel": body.get("channel_id")
        or (body.get("channel") or {}).get("id")
        or item.get("channel"),
        "user": body.get("user_id") or (body.get("user") or {}).get("id") or event.get("user"),
    }
    return {k: v for k, v in where.items() if isinstance(v, str)}
