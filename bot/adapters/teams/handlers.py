"""Teams in, chat events out: activities read into places and commands, the invoke and message
exchanges, and the port that posts, updates and replies through the Bot Framework connector.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import logging
import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import aiohttp
from microsoft_agents.activity import Activity, ConversationParameters, InvokeResponse
from microsoft_agents.hosting.core import ChannelServiceClientFactoryBase, TurnContext
from microsoft_agents.hosting.core.authorization import AuthenticationConstants, ClaimsIdentity
from microsoft_agents.hosting.core.connector.teams import TeamsConnectorClient
from microsoft_agents.hosting.teams import TeamsInfo

from bot import messages as M
from bot.adapters.teams import render
from bot.chat import (
    Action,
    Chart,
    Command,
    Content,
    EstimateView,
    Explanation,
    Feedback,
    FindCard,
    Gone,
    MessageUser,
    NotAMember,
    Offer,
    PostCard,
    PostText,
    ReplyInThread,
    UpdateCard,
    neutral_errors,
)
from bot.chat.events import mentioned
from bot.chat.forms import Form
from bot.chat.grammar import GRAMMARS
from bot.engine.model import Place, QuestionCard, Reveal
from bot.observability.metrics import count_api_error, http_error_kind
from bot.storage import ChartSql, ConversationSql, Reference
from bot.text import Link, Text, say

log = logging.getLogger(__name__)

ADAPTIVE_CARD_ACTION = "adaptiveCard/action"
MESSAGE_RESPONSE = "application/vnd.microsoft.activity.message"
# Teams' role name for a team's owners in a member's ``userRole``.
OWNER_ROLE = "owner"
# The thread part of a channel conversation id: ``19:...@thread.tacv2;messageid=1700000000000``.
_THREAD = re.compile(r";messageid=\d+$")
_AT = re.compile(r"<at>(.*?)</at>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")
# Where a person named in a command stands while the HTML is taken out: NUL, their number, NUL.
_PERSON = re.compile(r"\x00([0-9]+)\x00")
NAMES = {g.name for g in GRAMMARS}


# A connector's answers that a flow tells apart, by HTTP status.
_NEUTRAL: dict[int, type[Gone | NotAMember]] = {404: Gone, 403: NotAMember}


def _neutral(exc: Exception) -> type[Gone | NotAMember] | None:
    """Count a failed connector call by kind; name the neutral error a flow tells it apart by."""
    if not isinstance(exc, aiohttp.ClientResponseError):
        return None
    count_api_error(render.PLATFORM, http_error_kind(exc.status))
    return _NEUTRAL.get(exc.status)


# ---------------------------------------------------------------- reading activities


@dataclass(frozen=True, slots=True)
class Heard:
    """Where an activity came from, as the chat layer and the port need it."""

    place: Place
    user: str
    user_name: str
    conversation: str  # the conversation the activity is in (a thread of a channel, or a chat)
    activity_id: str | None
    service_url: str
    bot: Mapping[str, Any]
    team: str | None
    personal: bool
    channel_name: str | None = None
    team_name: str | None = None

    @property
    def reference(self) -> Reference:
        """Return what the port needs to reach this activity's channel later, unprompted."""
        return Reference(
            self.service_url,
            {"bot": dict(self.bot), "tenant": self.place.workspace, "team": self.team},
        )


def heard(activity: Mapping[str, Any]) -> Heard | None:
    """Return where an activity came from, or None for one the bot cannot place.

    The workspace is the tenant (a person's scores follow them across their organisation's
    teams and their chat with the bot); the channel is the Teams channel, or the chat itself.
    """
    data = activity.get("channelData") or {}
    conversation = activity.get("conversation") or {}
    sender = activity.get("from") or {}
    tenant = (data.get("tenant") or {}).get("id") or conversation.get("tenantId")
    conversation_id = conversation.get("id")
    service_url = activity.get("serviceUrl")
    if not (tenant and conversation_id and service_url and sender.get("id")):
        return None
    kind = conversation.get("conversationType") or "personal"
    channel = (data.get("channel") or {}).get("id") if kind == "channel" else None
    channel = channel or _THREAD.sub("", str(conversation_id))
    team = data.get("team") or {}
    return Heard(
        place=Place(render.PLATFORM, str(tenant), str(channel)),
        user=str(sender["id"]),
        user_name=str(sender.get("name") or ""),
        conversation=str(conversation_id),
        activity_id=activity.get("id"),
        service_url=str(service_url),
        bot=dict(activity.get("recipient") or {}),
        team=team.get("id"),
        personal=kind == "personal",
        channel_name=(data.get("channel") or {}).get("name"),
        team_name=team.get("name"),
    )


def removed_from_team(activity: Mapping[str, Any]) -> str | None:
    """Return the team the bot was just removed from (or that was deleted), else None.

    Teams says so with a ``conversationUpdate`` (``teamDeleted``, or the bot among
    ``membersRemoved``) or an ``installationUpdate`` whose action is ``remove``.
    """
    data = activity.get("channelData") or {}
    team = (data.get("team") or {}).get("id")
    if not team:
        return None
    kind = activity.get("type")
    bot_id = (activity.get("recipient") or {}).get("id")
    if kind == "conversationUpdate":
        removed = {m.get("id") for m in activity.get("membersRemoved") or []}
        if data.get("eventType") == "teamDeleted" or bot_id in removed:
            return str(team)
    if kind == "installationUpdate" and activity.get("action") == "remove":
        return str(team)
    return None


def typed_text(activity: Mapping[str, Any]) -> str:
    """Return a message's text with the bot's mention taken out (the command as typed).

    In a channel Teams delivers only messages that mention the bot, as ``<at>quizbot</at>``;
    the mention is removed wherever it stands, and what is left is the command.
    """
    text = str(activity.get("text") or "").replace("\0", "")
    bot_id = (activity.get("recipient") or {}).get("id")
    people: list[str] = []
    for entity in activity.get("entities") or []:
        if entity.get("type") != "mention" or not entity.get("text"):
            continue
        person = (entity.get("mentioned") or {}).get("id")
        if person == bot_id:
            text = text.replace(str(entity["text"]), " ")
        elif person:
            # Another person (``/quiz stats @ada``): marked now, written out once tags are out.
            text = text.replace(str(entity["text"]), f" \0{len(people)}\0 ")
            people.append(str(person))
    text = _AT.sub(lambda m: m[1], text)  # a mention with no entity, as its name
    # Teams sends the text as HTML: tags out, entities (&lt; &amp; &nbsp;) back to characters.
    text = html.unescape(_TAGS.sub(" ", text))
    # Each person named, in the chat core's neutral form.
    text = _PERSON.sub(lambda m: mentioned(people[int(m[1])]), text)
    return " ".join(text.split())


def command_of(place: Place, user: str, line: str) -> Command:
    """Read a typed line as a command: ``next``, ``quiz next``, ``/bandwidth plan ...``.

    A first word naming a command picks it; anything else is a ``/quiz`` command, so
    ``@quizbot next`` reads as Slack's ``/quiz next`` does.
    """
    first, _, rest = line.partition(" ")
    name = first.lower().removeprefix("/")
    if name in NAMES:
        return Command(place, user, name, text=rest.strip())
    return Command(place, user, "quiz", text=line)


def _card_data(activity: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Return the data one of the bot's card actions sent (an ``Action.Execute`` invoke with
    the bot's verb, or an ``Action.Submit`` message), or None for any other activity."""
    value = activity.get("value")
    if not isinstance(value, Mapping):
        return None
    if activity.get("type") == "invoke":
        if activity.get("name") != ADAPTIVE_CARD_ACTION:
            return None
        action = value.get("action") or {}
        if action.get("verb") != render.VERB:
            return None
        value = action.get("data") or {}
    return value if isinstance(value, Mapping) else None


def pressed(activity: Mapping[str, Any]) -> str | None:
    """Return the button id a card action carries (``Action.Execute``, or ``Action.Submit``)."""
    value = _card_data(activity)
    button = value.get(render.DATA_KEY) if value is not None else None
    return button if isinstance(button, str) else None


def pressed_team(activity: Mapping[str, Any]) -> str | None:
    """Return the team a pressed button carries (one sent to the one-to-one chat from a team's
    channel), or None."""
    value = _card_data(activity)
    team = value.get(render.TEAM_KEY) if value is not None else None
    return team if isinstance(team, str) and team else None


def form_sent(activity: Mapping[str, Any]) -> tuple[str, dict[str, str], str | None] | None:
    """Return a form sent back (its id, its values by field name, the team it was opened
    from), or None for an activity that is not one."""
    value = _card_data(activity)
    if value is None or not value.get(render.FORM_KEY):
        return None
    form_id = value.get(render.DATA_KEY)
    if not isinstance(form_id, str):
        return None
    values = {
        str(k): v if isinstance(v, str) else ""
        for k, v in value.items()
        if k not in render.SENT_KEYS
    }
    team = value.get(render.TEAM_KEY)
    return form_id, values, team if isinstance(team, str) else None


# ---------------------------------------------------------------- the connector


class Connector:
    """Connector clients for a service URL, with the bot's token (the SDK's client factory)."""

    def __init__(
        self, factory: ChannelServiceClientFactoryBase, app_id: str, *, anonymous: bool = False
    ) -> None:
        self.factory = factory
        self.app_id = app_id
        self.anonymous = anonymous

    @contextlib.asynccontextmanager
    async def client(self, service_url: str) -> AsyncIterator[TeamsConnectorClient]:
        """Yield a connector client for a service URL, closed afterwards."""
        claims = ClaimsIdentity({"aud": self.app_id, "appid": self.app_id}, True)
        scope = AuthenticationConstants.AGENTS_SDK_SCOPE
        client: Any = await self.factory.create_connector_client(
            None, claims, service_url, scope, [f"{scope}/.default"], self.anonymous
        )
        try:
            yield client
        finally:
            await client.close()


def _activity(fields: Mapping[str, Any]) -> Activity:
    return Activity.model_validate(dict(fields))


# ---------------------------------------------------------------- sending


class ChartImages:
    """Charts too large to inline in a card, served at ``/teams/charts/{key}.png``.

    Teams refuses a message over about 28 KB, and most charts are larger as a data URI: those
    are stored in the database (every replica serves them, and they outlive a restart) and the
    card names their URL under the bot's public address (``QUIZBOT_PUBLIC_URL``), from which
    Teams fetches the image. A small chart is inlined; without a public address a large one is
    left out with a line saying so.
    """

    PATH = "/teams/charts/{key}.png"

    def __init__(self, base: str | None, sql: ChartSql, clock: Callable[[], datetime]) -> None:
        self.base = base.rstrip("/") if base else None
        self.sql = sql
        self.clock = clock

    @staticmethod
    def key(chart: Chart) -> str:
        """Return the key a chart is kept and served under."""
        return hashlib.sha256(chart.png).hexdigest()[:32]

    def url(self, chart: Chart) -> str | None:
        """Return where the card shows the chart from, or None if it cannot be shown."""
        inline = render.small_inline(chart)
        if inline is not None or self.base is None:
            return inline
        return self.base + self.PATH.format(key=self.key(chart))

    async def keep(self, content: Content | Explanation) -> None:
        """Store the chart a piece of content shows, if it is to be served by URL."""
        chart = content.chart if isinstance(content, Explanation | EstimateView) else None
        if chart is None or self.base is None or render.small_inline(chart) is not None:
            return
        await self.sql.keep(self.key(chart), chart.png, self.clock())

    async def png(self, key: str) -> bytes | None:
        """Return a kept chart's image, or None."""
        return await self.sql.png(key)


class TeamsPort:
    """Send the chat core's actions through the Bot Framework connector of each conversation."""

    platform = render.PLATFORM
    admins = M.ADMINS_TEAMS
    add_me = M.ADD_ME_TEAMS
    post_gap = 0.0

    def __init__(
        self, connector: Connector, conversations: ConversationSql, images: ChartImages
    ) -> None:
        self.connector = connector
        self.conversations = conversations
        self.images = images
        # (tenant, channel) -> where it is reached; filled from activities and the database.
        self._known: dict[tuple[str, str], Reference] = {}

    async def _message(self, content: Content | Explanation) -> dict[str, Any]:
        await self.images.keep(content)
        return render.message(content, self.images.url)

    async def remember(self, heard: Heard, now: Any) -> None:
        """Keep where an activity's channel is reached, writing only what changed."""
        key = (heard.place.workspace, heard.place.channel)
        reference = heard.reference
        if self._known.get(key) == reference:
            return
        await self.conversations.remember(
            render.PLATFORM, heard.place.workspace, heard.place.channel, reference, now
        )
        self._known[key] = reference

    async def team_places(self, tenant: str, team: str) -> list[Place]:
        """Return the places of a team's channels the bot has heard from."""
        channels = await self.conversations.channels_of_team(render.PLATFORM, tenant, team)
        return [Place(render.PLATFORM, tenant, channel) for channel in channels]

    async def forget(self, places: list[Place]) -> None:
        """Forget where these channels (of one tenant) are reached."""
        for place in places:
            self._known.pop((place.workspace, place.channel), None)
        if places:
            channels = [place.channel for place in places]
            await self.conversations.forget(render.PLATFORM, places[0].workspace, channels)

    async def reference(self, place: Place) -> Reference:
        """Return where a place is reached; NotAMember if the bot never heard from it."""
        key = (place.workspace, place.channel)
        found = self._known.get(key)
        if found is None:
            found = await self.conversations.find(render.PLATFORM, place.workspace, place.channel)
            if found is None:
                raise NotAMember(f"no conversation reference for {place.channel}")
            self._known[key] = found
        return found

    async def send(self, action: Action) -> str | None:
        """Carry out an action."""
        if isinstance(action, FindCard):
            # The connector cannot list a channel's messages (that is Microsoft Graph, with
            # permissions of its own): a card an earlier try posted is not found, and a daily
            # slot taken over after its claimant died may post its card a second time.
            return None
        place = action.place
        reference = await self.reference(place)
        async with self.connector.client(reference.service_url) as client:
            conversations = client.conversations
            with neutral_errors(_neutral):
                match action:
                    case PostCard(card=card):
                        sent = await conversations.send_to_conversation(
                            place.channel, _activity(await self._message(card))
                        )
                        return str(sent.id)
                    case UpdateCard(ref=ref, card=card):
                        edit = {**await self._message(card), "id": ref}
                        await conversations.update_activity(place.channel, ref, _activity(edit))
                    case ReplyInThread(ref=ref, explanation=item):
                        await conversations.reply_to_activity(
                            place.channel, ref, _activity(await self._message(item))
                        )
                    case PostText(text=text):
                        await conversations.send_to_conversation(
                            place.channel, _activity(await self._message(text))
                        )
                    case MessageUser(user=user, text=text, about=about, offers=offers):
                        await self._direct(client, reference, place, user, text, about, offers)
        return None

    async def direct(
        self, place: Place, user: str, content: Content, *, team: str | None = None
    ) -> None:
        """Send a person something in their one-to-one chat with the bot; its buttons carry
        ``team``, the team it was asked from, whose owners are the person's admins there."""
        reference = await self.reference(place)
        async with self.connector.client(reference.service_url) as client:
            with neutral_errors(_neutral):
                chat = await self._chat_with(client, reference, user)
                made = await self._message(content)
                await client.conversations.send_to_conversation(
                    chat, _activity(render.with_team(made, team) if team else made)
                )

    async def _direct(
        self,
        client: TeamsConnectorClient,
        reference: Reference,
        place: Place,
        user: str,
        text: Text,
        about: str | None,
        offers: tuple[Offer, ...] = (),
    ) -> None:
        if about is not None:
            link = f"https://teams.microsoft.com/l/message/{place.channel}/{about}"
            text = say(M.REACTION_ABOUT, link=Link(link, link)) + "\n" + text
        chat = await self._chat_with(client, reference, user)
        content: Content = Feedback(text, offers=offers) if offers else text
        await client.conversations.send_to_conversation(
            chat, _activity(await self._message(content))
        )

    async def _chat_with(
        self, client: TeamsConnectorClient, reference: Reference, user: str
    ) -> str:
        """Return the id of the one-to-one chat with a person (made once, then found)."""
        tenant = reference.details.get("tenant")
        parameters = ConversationParameters.model_validate(
            {
                "isGroup": False,
                "bot": reference.details.get("bot") or {"id": self.connector.app_id},
                "members": [{"id": user}],
                "tenantId": tenant,
                "channelData": {"tenant": {"id": tenant}},
            }
        )
        made = await client.conversations.create_conversation(parameters)
        return str(made.id)

    async def card_to(self, heard: Heard, made: dict[str, Any], *, direct: bool) -> None:
        """Send a card in the activity's conversation, or (``direct``) to the person's
        one-to-one chat with the bot."""
        message = _activity({"type": "message", "attachments": [render.attachment(made)]})
        async with self.connector.client(heard.service_url) as client:
            with neutral_errors(_neutral):
                if direct:
                    chat = await self._chat_with(
                        client, await self.reference(heard.place), heard.user
                    )
                    await client.conversations.send_to_conversation(chat, message)
                else:
                    await client.conversations.send_to_conversation(heard.conversation, message)

    async def post(self, place: Place, content: Content) -> str | None:
        """Post content as a new message of a channel; return its id."""
        reference = await self.reference(place)
        async with self.connector.client(reference.service_url) as client:
            with neutral_errors(_neutral):
                sent = await client.conversations.send_to_conversation(
                    place.channel, _activity(await self._message(content))
                )
        return str(sent.id)

    async def answer_in_thread(self, heard: Heard, content: Content) -> None:
        """Reply to the activity in its own thread (or its chat)."""
        async with self.connector.client(heard.service_url) as client:
            with neutral_errors(_neutral):
                message = _activity(await self._message(content))
                if heard.activity_id and not heard.personal:
                    await client.conversations.reply_to_activity(
                        heard.conversation, heard.activity_id, message
                    )
                else:
                    await client.conversations.send_to_conversation(heard.conversation, message)

    def transient(self, error: Exception) -> bool:
        """Return whether a send may succeed again: a 429, a 5xx, or a lost connection."""
        if isinstance(error, aiohttp.ClientResponseError):
            return error.status == 429 or error.status >= 500
        return isinstance(error, aiohttp.ClientConnectionError | TimeoutError)


# ---------------------------------------------------------------- the exchange


class TeamsExchange:
    """One activity being answered: an invoke's response, or messages in the conversation.

    Private answers: the answer to a click is the invoke's response, a message Teams shows to
    the person who clicked and to nobody else; any other private answer (to a command typed in a
    channel, or rich content such as a review card) goes to the person's one-to-one chat with
    the bot. Teams has no ephemeral channel message (see docs/teams.md).
    """

    def __init__(
        self, context: TurnContext, heard: Heard, port: TeamsPort, *, budget: float
    ) -> None:
        self.context = context
        self.heard = heard
        self.port = port
        self.budget = budget
        self.invoke = context.activity.type == "invoke"
        self._responded = False
        # The team whose owners are this person's admins: the activity's, or the one a form
        # sent back from the one-to-one chat was opened from.
        self.team = heard.team
        # A form sent back: the invoke's answer replaces the form's card.
        self.form = False

    async def defer(self, *, private: bool) -> None:
        """Show that the bot is working (a typing indicator); an invoke's response waits anyway."""
        if self.invoke or self._responded:
            return
        self._responded = True
        with contextlib.suppress(Exception):
            await self.context.send_activity(_activity({"type": "typing"}))

    async def reply(self, content: Content, *, private: bool) -> str | None:
        """Answer: privately as above, or publicly (a card as a new post of the channel)."""
        first = not self._responded
        self._responded = True
        short = render.plain(content)
        if self.invoke and first and private and self.form:
            await self._respond_card(render.content_card(content))
            return None
        if self.invoke and first and private and short is not None:
            await self._respond(short)
            return None
        if private and not self.heard.personal:
            await self.port.direct(self.heard.place, self.heard.user, content, team=self.team)
            if self.invoke and first:
                await self._respond(M.SENT_IN_CHAT)
            return None
        if isinstance(content, QuestionCard | Reveal):
            ref = await self.port.post(self.heard.place, content)
            if self.invoke and first:
                await self._respond(M.POSTED_FOR_EVERYONE)
            return ref
        await self.port.answer_in_thread(self.heard, content)
        if self.invoke and first:
            await self._respond(M.POSTED_FOR_EVERYONE)
        return None

    async def _respond(self, text: str) -> None:
        body = {"statusCode": 200, "type": MESSAGE_RESPONSE, "value": text}
        await self.context.send_activity(
            Activity(type="invokeResponse", value=InvokeResponse(status=200, body=body))
        )

    # A card holds every field of a form.
    form_fields = None

    async def open_form(self, form: Form) -> None:
        """Send the form as a card of inputs to the person's one-to-one chat with the bot (or
        in that chat, where it was asked for); a press is answered that it went there."""
        first = not self._responded
        self._responded = True
        made = render.form_card(form, self.team)
        await self.port.card_to(self.heard, made, direct=not self.heard.personal)
        if self.invoke and first:
            await self._respond(M.SENT_IN_CHAT)

    async def refuse_form(self, form: Form) -> None:
        """Show the form again with each error under its field: the invoke's answer replaces
        the card that was sent (a new card, where the form came as a message)."""
        first = not self._responded
        self._responded = True
        made = render.form_card(form, self.team)
        if self.invoke and first:
            await self._respond_card(made)
        else:
            await self.port.card_to(self.heard, made, direct=False)

    async def _respond_card(self, made: dict[str, Any]) -> None:
        body = {"statusCode": 200, "type": render.CARD_TYPE, "value": made}
        await self.context.send_activity(
            Activity(type="invokeResponse", value=InvokeResponse(status=200, body=body))
        )

    async def is_admin(self) -> bool:
        """Return whether the person owns the team this came from (False outside a team).

        The SDK's ``TeamsInfo`` asks the connector for the member, whose ``userRole`` names
        the team's owners; someone the team does not list (404) is no owner.
        """
        if self.team is None:
            return False
        try:
            with neutral_errors(_neutral):
                member = await TeamsInfo.get_team_member(self.context, self.team, self.heard.user)
        except Gone:
            return False
        return (member.user_role or "").lower() == OWNER_ROLE
