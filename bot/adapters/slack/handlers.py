"""Bolt listeners: Slack payloads in as chat events, the chat core's answers out to Slack.

A slash command is acknowledged at once and answered through its ``response_url``; a click on a
choice is acknowledged only once its answer is committed (so a click Slack showed as taken is
never lost), and its feedback comes as an ephemeral message; a reaction event likewise only
once its answer is committed (Slack redelivers an event that is not acknowledged). Everything
a listener does after that is the chat core's; the core never raises, so no listener raises
after its ack.

The app runs with Bolt's ``process_before_response``: Bolt answers the HTTP request when the
listener returns. Each listener starts the chat core's work as a task and returns as soon as
that work has acknowledged (or settled, for an event), so the answer goes out the moment it is
ready and the rest (the feedback message, the card's refresh) carries on in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import datetime
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext, AsyncRespond
from slack_bolt.listener.async_builtins import AsyncTokenRevocationListeners
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages as M
from bot.adapters.slack import render
from bot.adapters.slack._channels import Channels
from bot.adapters.slack._oauth import CURRENT_TOKEN, SqlInstallationStore, serving
from bot.adapters.slack._replay import SETTLE
from bot.chat import (
    Action,
    Chat,
    Command,
    Content,
    EstimateView,
    Feedback,
    FindCard,
    Gone,
    MessageUser,
    NotAMember,
    Panel,
    PostCard,
    PostText,
    Reaction,
    ReplyInThread,
    ReviewAsk,
    UpdateCard,
    buttons,
    neutral_errors,
)
from bot.chat.events import Press, Submit, mentioned
from bot.chat.forms import Form
from bot.chat.grammar import GRAMMARS
from bot.engine.model import Place, QuestionCard, Reveal
from bot.text import Text, say

log = logging.getLogger(__name__)

PLATFORM = "slack"
Body = dict[str, Any]
# What the app listens to; deploy/slack-manifest.yaml declares exactly these.
COMMANDS = tuple(f"/{grammar.name}" for grammar in GRAMMARS)
EVENTS = ("reaction_added", "app_uninstalled", "tokens_revoked")
# Buttons of messages sent before every button carried its id (``bot.chat.buttons``): the
# choice's round or question in the value; the Home tab's two buttons by name.
LEGACY_ACTION = re.compile(r"quiz_(answer|review)_[A-E]|quiz_home_(review|dashboard)")
LEGACY_IDS = {
    "quiz_home_review": buttons.button_id(buttons.START_REVIEW),
    "quiz_home_dashboard": buttons.button_id(buttons.DASHBOARD),
}
NOT_A_MEMBER = ("not_in_channel", "channel_not_found")
# How Slack writes a person in a command's text: ``<@U123>``, or ``<@U123|ada>``.
SLACK_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
GONE = ("message_not_found", "cant_update_message")
# A question card carries its round in its message metadata
# (https://docs.slack.dev/messaging/message-metadata), so that a process taking over a daily
# post can find a card an earlier try posted but never heard about (``FindCard``).
CARD_EVENT = "quizbot_card"
# conversations.history pages read when looking for one: Slack caps a page at 15 messages for
# apps outside its Marketplace, and the card went out minutes before the look.
HISTORY_PAGE = 15
HISTORY_PAGES = 4
# A click is acknowledged once its answer is committed. Slack wants the ack within 3 s, and
# the request's way in comes on top: a commit slower than this leaves the click unacknowledged
# (Slack tells the user it failed; the feedback still follows). A reaction event is answered
# 503 past it, so that Slack redelivers it (and the redelivery waits for this one).
ANSWER_DEADLINE = 2.5
# No listener holds its HTTP request longer than this, whatever its work is doing.
LISTENER_LIMIT = 2.9

# Slack ships :a: and :b: but no :c:, :d: or :e:, so the digits are the main way to answer with a
# reaction; a workspace may upload its own :c: :d: :e: (or :letter-c: ...) and those count too.
EMOJI_CHOICES: dict[str, str] = {
    **{
        name: key
        for name, key in zip(("one", "two", "three", "four", "five"), "ABCDE", strict=True)
    },
    **{key.lower(): key for key in "ABCDE"},
    **{f"letter-{key.lower()}": key for key in "ABCDE"},
}


def typed(text: str) -> str:
    """Return a command's text with Slack's mentions in the chat core's neutral form."""
    return SLACK_MENTION.sub(lambda m: mentioned(m[1]), text)


def emoji_choice(reaction: str) -> str | None:
    """Return the choice letter an emoji reaction stands for, or None."""
    return EMOJI_CHOICES.get(reaction.split("::", 1)[0])  # a skin tone: ``name::skin-tone-2``


# ---------------------------------------------------------------- sending


class SlackPort:
    """Send the chat core's actions with the Web API (each workspace's token, with OAuth)."""

    platform = PLATFORM
    admins = M.ADMINS_SLACK
    add_me = M.ADD_ME_SLACK
    # chat.postMessage: about one message a second in a channel
    # (https://docs.slack.dev/apis/web-api/rate-limits, "Posting messages").
    post_gap = 1.0

    def __init__(
        self, client: AsyncWebClient, installations: SqlInstallationStore | None = None
    ) -> None:
        self.client = client
        self.installations = installations
        self.channels = Channels(client)

    @contextlib.asynccontextmanager
    async def workspace(self, workspace: str) -> AsyncIterator[None]:
        """Use the workspace's own token when nothing being served has set one (OAuth)."""
        if self.installations is None or CURRENT_TOKEN.get() is not None:
            yield
            return
        with serving(await self.installations.bot_token(workspace)):
            yield

    async def send(self, action: Action) -> str | None:
        """Carry out an action in its channel."""
        async with self.workspace(action.place.workspace):
            with neutral_errors(_neutral):
                channel = action.place.channel
                match action:
                    case PostCard(card=card):
                        return await self.post(channel, card, workspace=action.place.workspace)
                    case FindCard(round_id=round_id, since=since):
                        return await self.find_card(channel, round_id, since)
                    case UpdateCard(ref=ref, card=card):
                        workspace = action.place.workspace
                        arrive = isinstance(card, Reveal) or await self.channels.reactions_arrive(
                            workspace, channel
                        )
                        response = await self.client.chat_update(
                            channel=channel, ts=ref, **_card(card, reactions=arrive).as_kwargs()
                        )
                        self.channels.learn(workspace, response)
                    case ReplyInThread(ref=ref, explanation=item):
                        message = render.explanation(item)
                        response = await self.client.chat_postMessage(
                            channel=channel, thread_ts=ref, **message.as_kwargs()
                        )
                        self.channels.learn(action.place.workspace, response)
                        if item.chart is not None:
                            await self._upload(channel, item.chart, thread=ref)
                    case PostText(text=text):
                        await self.client.chat_postMessage(
                            channel=channel, text=render.mrkdwn(text)
                        )
                    case MessageUser(user=user, text=text, offers=()):
                        await self.client.chat_postEphemeral(
                            channel=channel, user=user, text=render.mrkdwn(text)
                        )
                    case MessageUser(user=user, text=text, offers=offers):
                        shown = render.feedback(Feedback(text, offers=offers))
                        await self.client.chat_postEphemeral(
                            channel=channel, user=user, **shown.as_kwargs()
                        )
        return None

    async def post(self, channel: str, content: Content, *, workspace: str = "") -> str | None:
        """Post content for the whole channel; return the message ts of a card.

        Before a question card the bot joins the channel if it can, so reactions reach it.
        """
        if isinstance(content, EstimateView):
            table = render.code_block(content.table)
            await self.client.chat_postMessage(channel=channel, text=table)
            await self._upload(channel, content.chart)
            return None
        if isinstance(content, QuestionCard | Reveal):
            arrive = isinstance(content, Reveal) or await self.channels.reactions_arrive(
                workspace, channel
            )
            # A question card carries its round, for ``find_card``.
            metadata: dict[str, Any] | None = (
                {"event_type": CARD_EVENT, "event_payload": {"round": content.round_id}}
                if isinstance(content, QuestionCard)
                else None
            )
            try:
                response = await self.client.chat_postMessage(
                    channel=channel,
                    metadata=metadata,
                    **_card(content, reactions=arrive).as_kwargs(),
                )
            except SlackApiError as exc:
                self.channels.forget(workspace, channel)
                if _code(exc) != NOT_A_MEMBER[0] or self.channels.needs_join(workspace):
                    raise
                # Not a member yet, and the token cannot post without being one: join, again.
                arrive = await self.channels.join(workspace, channel)
                response = await self.client.chat_postMessage(
                    channel=channel,
                    metadata=metadata,
                    **_card(content, reactions=arrive).as_kwargs(),
                )
            self.channels.learn(workspace, response)
            return str(response["ts"])
        if isinstance(content, Feedback):
            await self.client.chat_postMessage(
                channel=channel, **render.feedback(content).as_kwargs()
            )
            return None
        await self.client.chat_postMessage(channel=channel, text=_text(content))
        return None

    async def find_card(self, channel: str, round_id: int, since: datetime) -> str | None:
        """Return the ts of the round's question card posted in the channel since ``since``.

        Read from the channel's history with the messages' metadata (scopes
        ``channels:history``, ``groups:history``); None if it is not there, or if the history
        cannot be read (an install from before those scopes: the card is then posted again).
        """
        cursor: str | None = None
        for _ in range(HISTORY_PAGES):
            try:
                page = await self.client.conversations_history(
                    channel=channel,
                    oldest=f"{since.timestamp():.6f}",
                    include_all_metadata=True,
                    limit=HISTORY_PAGE,
                    cursor=cursor,
                )
            except SlackApiError as exc:
                data = getattr(exc.response, "data", None)
                code = str(data.get("error")) if isinstance(data, dict) else ""
                if int(getattr(exc.response, "status_code", 0) or 0) >= 500:
                    raise
                log.warning(
                    "cannot read the history of channel %s (%s) to look for round %s's card; "
                    "it is posted again%s",
                    channel,
                    code,
                    round_id,
                    "; add channels:history and groups:history and reinstall"
                    if code == "missing_scope"
                    else "",
                )
                return None
            for message in page.get("messages") or []:
                meta = message.get("metadata") or {}
                payload = meta.get("event_payload") or {}
                if meta.get("event_type") == CARD_EVENT and str(payload.get("round")) == str(
                    round_id
                ):
                    return str(message["ts"])
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not page.get("has_more") or cursor is None:
                return None
        return None

    async def _upload(self, channel: str, chart: Any, thread: str | None = None) -> None:
        try:
            await self.client.files_upload_v2(
                channel=channel,
                thread_ts=thread,
                content=chart.png,
                filename=chart.filename,
                title=chart.title,
            )
        except Exception:
            # The answer and explanation are out; a missing chart must not undo that.
            log.exception("could not upload a chart to %s", channel)

    def transient(self, error: Exception) -> bool:
        """Return whether a failed call may succeed if made again (5xx, lost connection)."""
        if isinstance(error, SlackApiError):
            return int(getattr(error.response, "status_code", 0) or 0) >= 500
        return isinstance(error, aiohttp.ClientError | TimeoutError)


def _neutral(exc: Exception) -> type[Gone | NotAMember] | None:
    """Name the neutral error a flow tells a Slack error apart by (the client counts them)."""
    if not isinstance(exc, SlackApiError):
        return None
    code = _code(exc)
    return NotAMember if code in NOT_A_MEMBER else Gone if code in GONE else None


def _code(exc: SlackApiError) -> str:
    data = getattr(exc.response, "data", None)
    return str(data.get("error")) if isinstance(data, dict) else ""


def _card(card: QuestionCard | Reveal, *, reactions: bool = True) -> render.Message:
    if isinstance(card, QuestionCard):
        return render.question_card(card, reactions=reactions)
    return render.reveal_card(card)


def _has_buttons(panel: Panel) -> bool:
    return panel.practice or panel.start_review or panel.dashboard


def _panel_message(panel: Panel) -> render.Message:
    """Return a page with buttons as a message: its text, and its blocks with the buttons."""
    blocks = render.panel_blocks(panel, "quiz_panel")
    return render.Message(_text(panel), tuple(b.to_dict() for b in blocks))


def _text(content: Content) -> str:
    if isinstance(content, Panel):
        return render.panel(content)
    if isinstance(content, Feedback):
        return render.mrkdwn(content.text)
    if isinstance(content, Text):
        return render.mrkdwn(content)
    raise TypeError(f"not text: {type(content).__name__}")


class SlackExchange:
    """One Slack request being answered: its ack, then the response_url or the Web API."""

    def __init__(
        self,
        port: SlackPort,
        ack: AsyncAck,
        body: Body,
        *,
        budget: float = 0.0,
        ack_when_late: bool = True,
    ) -> None:
        self.port = port
        self._ack = ack
        self.body = body
        self.budget = budget
        self.ack_when_late = ack_when_late
        self.acked = False
        self.late = False
        self.channel = _where(body).get("channel", "")
        self.user = _where(body).get("user", "")
        # Done once the request has its answer (the ack) or will get none (a late click).
        self.answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def ack(self, **kwargs: Any) -> None:
        """Acknowledge the request (with text for a command), and let its listener return."""
        await self._ack(**kwargs)
        self.acked = True
        self.settle()

    def settle(self) -> None:
        """Let the listener answer Slack: the ack is given, or will not be."""
        if not self.answered.done():
            self.answered.set_result(None)

    async def defer(self, *, private: bool) -> None:
        """Ack now; or, for a click whose answer is not committed yet, never."""
        if self.acked or self.late:
            return
        if self.ack_when_late:
            await self.ack()
        else:
            self.late = True
            self.settle()
            log.warning(
                "an answer took over %.1f s to commit; its click goes unacknowledged",
                self.budget,
                extra=_where(self.body),
            )

    async def reply(self, content: Content, *, private: bool) -> str | None:
        """Answer: in the ack if it is still to come and may carry text, else afterwards."""
        if not self.acked and not self.late:
            if "command" in self.body and isinstance(content, Panel) and _has_buttons(content):
                # A page with buttons (/quiz me: Practice) is answered with its blocks.
                await self.ack(**_panel_message(content).as_kwargs())
                return None
            if "command" in self.body and isinstance(content, Text | Panel):
                await self.ack(text=_text(content))
                return None
            await self.ack()
        with neutral_errors(_neutral):
            return await self._after_ack(content, private)

    async def _after_ack(self, content: Content, private: bool) -> str | None:
        client = self.port.client
        if not private:
            workspace = _where(self.body).get("workspace", "")
            return await self.port.post(self.channel, content, workspace=workspace)
        if isinstance(content, ReviewAsk):
            message = render.review_question(content)
            await client.chat_postEphemeral(
                channel=self.channel, user=self.user, **message.as_kwargs()
            )
        elif isinstance(content, Feedback) and not content.replaces:
            await client.chat_postEphemeral(
                channel=self.channel, user=self.user, **render.feedback(content).as_kwargs()
            )
        elif isinstance(content, Feedback):
            await self._respond(render.feedback(content), replace_original=True)
        elif isinstance(content, Panel) and _has_buttons(content):
            await self._respond(_panel_message(content), replace_original=False)
        else:
            await self._respond(render.Message(_text(content)), replace_original=False)
        return None

    async def _respond(self, message: render.Message, *, replace_original: bool) -> None:
        url = self.body.get("response_url")
        if url:
            respond = AsyncRespond(response_url=url)
            await respond(
                **message.as_kwargs(),
                response_type="ephemeral",
                replace_original=replace_original,
            )
        elif self.channel and self.user:
            await self.port.client.chat_postEphemeral(
                channel=self.channel, user=self.user, **message.as_kwargs()
            )

    async def is_admin(self) -> bool:
        """Ask Slack whether the person is a workspace admin or owner."""
        return await workspace_admin(self.port.client, self.user, _where(self.body))

    # A modal holds every field of a form.
    form_fields = None

    async def open_form(self, form: Form) -> None:
        """Open the form as a modal (``views.open`` with the request's trigger), then ack."""
        with neutral_errors(_neutral):
            await self.port.client.views_open(
                trigger_id=str(self.body.get("trigger_id", "")), view=render.form_view(form)
            )
        if not self.acked:
            await self.ack()

    async def refuse_form(self, form: Form) -> None:
        """Keep the modal open with each error under its field (``response_action: errors``)."""
        await self.ack(response_action="errors", errors=render.form_errors(form))


class FormExchange(SlackExchange):
    """A modal sent back (``view_submission``): answered in the channel it was opened from, or
    in the app's direct messages where the bot cannot post there (a slash command works in
    any channel; an ephemeral message only where the bot is)."""

    def __init__(self, port: SlackPort, ack: AsyncAck, body: Body) -> None:
        super().__init__(port, ack, body)
        self.channel = str((body.get("view") or {}).get("private_metadata") or "")

    async def _respond(self, message: render.Message, *, replace_original: bool) -> None:
        try:
            await super()._respond(message, replace_original=replace_original)
        except SlackApiError as exc:
            if _code(exc) not in NOT_A_MEMBER:
                raise
            # chat.postMessage to a user id opens the app's DM with them.
            await self.port.client.chat_postMessage(channel=self.user, **message.as_kwargs())


async def workspace_admin(client: AsyncWebClient, user: str, where: dict[str, str]) -> bool:
    """Ask Slack whether a person is a workspace admin or owner (users.info)."""
    try:
        info = (await client.users_info(user=user))["user"]
    except SlackApiError as exc:
        data = getattr(exc.response, "data", None)
        if not isinstance(data, dict) or data.get("error") != "missing_scope":
            raise
        # An install without users:read: only QUIZBOT_ADMINS can be admins there.
        log.warning(
            "users.info needs the users:read scope; without it only QUIZBOT_ADMINS are "
            "admins (set QUIZBOT_ADMINS_ONLY=true to stop asking)",
            extra=where,
        )
        return False
    return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))


class HomeExchange(SlackExchange):
    """A press in the Home tab: acknowledged at once, answered in the app's direct messages.

    A Home tab has no channel to answer in, so what the flow says privately (a review question,
    a dashboard link) goes to the person's conversation with the app.
    """

    def __init__(self, port: SlackPort, ack: AsyncAck, body: Body) -> None:
        super().__init__(port, ack, body)
        self.channel = self.user  # chat.postMessage to a user id opens the app's DM

    async def reply(self, content: Content, *, private: bool) -> str | None:
        """Ack, then post the answer in the app's direct messages."""
        if not self.acked:
            await self.ack()
        if isinstance(content, ReviewAsk | Feedback):
            message = (
                render.review_question(content)
                if isinstance(content, ReviewAsk)
                else render.feedback(content)
            )
            await self.port.client.chat_postMessage(channel=self.user, **message.as_kwargs())
            return None
        return await self.port.post(self.user, content)


# ---------------------------------------------------------------- answering in time


class Background:
    """The work listeners leave running once Slack has its answer; a shutdown waits for it."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None], *, tracked: bool = True) -> asyncio.Task[None]:
        """Run the work as a task, counted by the drain while it runs (``tracked``; the chat
        core's handlers count themselves).
        """
        task = asyncio.create_task(self._tracked(work) if tracked else work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a Slack listener's work failed", exc_info=task.exception())

    async def _tracked(self, work: Coroutine[Any, Any, None]) -> None:
        async with self.chat.drain.track():
            await work

    async def answer(
        self, exchange: SlackExchange, work: Coroutine[Any, Any, None]
    ) -> BoltResponse | None:
        """Start the work; return once it has acknowledged the request (None: Bolt sends the
        ack), or 503 for a request it will not acknowledge (a click whose commit is late).
        """
        task = self.spawn(work, tracked=False)
        task.add_done_callback(lambda _task: exchange.settle())
        # A timer, not asyncio.wait: nearly every request is answered long before it.
        limit = asyncio.get_running_loop().call_later(LISTENER_LIMIT, exchange.settle)
        try:
            await exchange.answered
        finally:
            limit.cancel()
        if exchange.acked:
            return None
        if not exchange.late and not task.done():
            log.warning("a request had no answer within %.1f s", LISTENER_LIMIT)
        return BoltResponse(status=503, body="")

    async def settle(
        self, work: Callable[[Callable[[bool], None]], Coroutine[Any, Any, None]], deadline: float
    ) -> BoltResponse | None:
        """Start an event's work; return once it says the event is settled (None: Bolt acks
        it), or 503 if it failed or is late, so that Slack redelivers the event.
        """
        outcome: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def settled(ok: bool) -> None:
            if not outcome.done():
                outcome.set_result(ok)

        task = self.spawn(work(settled), tracked=False)  # the chat core counts it
        task.add_done_callback(lambda _task: settled(True))
        done, _ = await asyncio.wait((outcome,), timeout=deadline)
        if done and outcome.result():
            return None
        if not done:
            log.warning("an event was not settled within %.1f s: Slack will redeliver it", deadline)
        return BoltResponse(status=503, body="")


# ---------------------------------------------------------------- listening


class Listeners:
    """The listeners of the Slack app: each turns a payload into a chat event."""

    def __init__(self, chat: Chat, port: SlackPort) -> None:
        self.chat = chat
        self.port = port
        self.answer_deadline = ANSWER_DEADLINE
        self.background = Background(chat)
        # With OAuth, Bolt's own listeners forget a workspace's tokens in the installation store.
        self.revocations = (
            AsyncTokenRevocationListeners(port.installations) if port.installations else None
        )

    def register(self, app: AsyncApp) -> None:
        """Attach every listener and the error boundary to the app.

        Bolt tries the listeners in the order they were added, so the click on a choice, the
        request that comes in crowds, is first.
        """
        app.action(buttons.PATTERN)(self.press)
        app.action(LEGACY_ACTION)(self.press)
        app.view(buttons.PATTERN)(self.submitted)
        for name in COMMANDS:
            app.command(name)(self._listener(name.removeprefix("/")))
        for event in EVENTS:
            app.event(event)(getattr(self, event))
        app.error(self.on_error)

    def _listener(self, name: str) -> Any:
        async def command(ack: AsyncAck, command: Body) -> BoltResponse | None:
            text = typed(str(command.get("text", "")))
            return await self._hand(
                SlackExchange(self.port, ack, command),
                command,
                M.INCOMPLETE_REQUEST,
                self.chat.command,
                lambda place, user: Command(place, user, name, text=text),
                kind="command",
            )

        return command

    async def _hand(
        self,
        exchange: SlackExchange,
        body: Body,
        refusal: str,
        handle: Callable[..., Coroutine[Any, Any, None]],
        make: Callable[[Place, str], object | None],
        *,
        kind: str = "block_actions",
        place: Place | None = None,
    ) -> BoltResponse | None:
        """Hand the chat core the event a payload makes, or refuse a payload that makes none;
        return once Slack's answer is ready, the work going on in the background.
        """
        where = _where(body)
        event = None
        if place is None and len(where) == 4:
            place = Place(PLATFORM, where["workspace"], where["channel"])
        if place is not None and "user" in where:
            event = make(place, where["user"])
        if event is None:
            work = self.chat.refuse(exchange, None, where.get("user", ""), say(refusal), kind=kind)
        else:
            work = handle(event, exchange, kind=kind)
        return await self.background.answer(exchange, work)

    async def press(self, ack: AsyncAck, body: Body, action: Body) -> BoltResponse | None:
        """Hand a press of one of the bot's buttons to the chat core.

        A choice's ack waits for its commit; a press in the Home tab is answered in the app's
        direct messages, having no channel.
        """
        value = _button_id(action)
        button = buttons.read_button(value)
        refusal = buttons.refusal_of(value)
        place = None
        if (body.get("view") or {}).get("type") == "home":
            exchange: SlackExchange = HomeExchange(self.port, ack, body)
            where = _where(body)
            if "workspace" in where and "user" in where:
                place = Place(PLATFORM, where["workspace"], where["user"])
        elif isinstance(button, buttons.Choice):
            exchange = SlackExchange(
                self.port, ack, body, budget=self.answer_deadline, ack_when_late=False
            )
        else:
            exchange = SlackExchange(self.port, ack, body)
        return await self._hand(
            exchange,
            body,
            refusal,
            self.chat.press,
            lambda place, user: Press(place, user, value) if button is not None else None,
            place=place,
        )

    async def submitted(self, ack: AsyncAck, body: Body, view: Body) -> BoltResponse | None:
        """Hand a form sent back from a modal to the chat core; Slack's answer to it is the
        ack (closing the modal, or keeping it open with the errors)."""
        exchange = FormExchange(self.port, ack, body)
        where = _where(body)
        place = None
        if "workspace" in where and exchange.channel:
            place = Place(PLATFORM, where["workspace"], exchange.channel)
        values = render.form_values(view.get("state") or {})
        form_id = str(view.get("callback_id", ""))
        return await self._hand(
            exchange,
            body,
            M.INCOMPLETE_REQUEST,
            self.chat.submit,
            lambda place, user: Submit(place, user, form_id, values),
            kind="view_submission",
            place=place,
        )

    async def reaction_added(
        self, event: Body, body: Body, context: AsyncBoltContext
    ) -> BoltResponse | None:
        """Hand an emoji reaction on a message to the chat core, if it stands for a choice;
        the event is acknowledged once its answer is committed.
        """
        key, item, user = (
            emoji_choice(event.get("reaction", "")),
            event.get("item", {}),
            event.get("user"),
        )
        if key is None or item.get("type") != "message" or not user or user == context.bot_user_id:
            return None
        place = Place(PLATFORM, str(body.get("team_id")), str(item.get("channel")))
        reaction = Reaction(place, str(user), str(item.get("ts")), key)
        guard = context.get(SETTLE)  # the replay guard's, in HTTP mode

        async def work(settled: Callable[[bool], None]) -> None:
            def both(ok: bool) -> None:
                settled(ok)
                if callable(guard):
                    guard(ok)

            await self.chat.reaction(reaction, kind="event_callback", settled=both)

        return await self.background.settle(work, self.answer_deadline)

    async def app_uninstalled(self, body: Body, context: AsyncBoltContext) -> None:
        """The app was removed from a workspace: forget its tokens and stop its schedules.

        A failure raises, so Slack is answered with an error and redelivers the event.
        """
        team = str(body.get("team_id") or context.team_id or "")
        if self.revocations is not None:
            await self.revocations.handle_app_uninstalled_events(context)
        else:
            log.warning(
                "the app was uninstalled from workspace %s: SLACK_BOT_TOKEN no longer works there",
                team,
                extra={"platform": PLATFORM, "workspace": team},
            )
        await self.chat.left_workspace(team)

    async def tokens_revoked(self, event: Body, body: Body, context: AsyncBoltContext) -> None:
        """Tokens of a workspace were revoked: forget them (with OAuth), or say so."""
        team = str(body.get("team_id") or context.team_id or "")
        if self.revocations is not None:
            await self.revocations.handle_tokens_revoked_events(event, context)
            log.info("tokens revoked in workspace %s: forgotten", team)
        elif (event.get("tokens") or {}).get("bot"):
            log.warning(
                "the bot token of workspace %s was revoked: SLACK_BOT_TOKEN no longer works there",
                team,
                extra={"platform": PLATFORM, "workspace": team},
            )

    async def on_error(self, error: Exception, body: Body) -> None:
        """Log what escaped a listener (the chat core catches what its flows raise)."""
        log.error("a Slack listener failed", exc_info=error, extra=_where(body))


def _button_id(action: Body) -> str:
    """Return the id a pressed button carries, reading the older buttons' ids too."""
    action_id = str(action.get("action_id", ""))
    if action_id in LEGACY_IDS:
        return LEGACY_IDS[action_id]
    if action_id.startswith(("quiz_answer_", "quiz_review_")):
        kind = "quiz" if action_id.startswith("quiz_answer_") else "review"
        return f"{kind}:{action.get('value', '')}"
    return action_id


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
