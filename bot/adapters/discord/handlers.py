"""Discord in, chat events out: the command tree made from the grammar, the interaction
exchange, and the port that posts, edits, opens threads and sends direct messages.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Literal

import aiohttp
import discord
from discord import app_commands

from bot import messages as M
from bot.adapters.discord import render
from bot.chat import (
    Action,
    Chat,
    Content,
    FindCard,
    Gone,
    MessageUser,
    NotAMember,
    PostCard,
    PostText,
    ReplyInThread,
    UpdateCard,
    forms,
    neutral_errors,
)
from bot.chat.buttons import of_round
from bot.chat.forms import Form
from bot.chat.grammar import GRAMMARS, Grammar, Kind, Option, Verb
from bot.engine.model import Place, QuestionCard, Reveal
from bot.observability.metrics import count_api_error, http_error_kind
from bot.text import Code, Link, Text, say

log = logging.getLogger(__name__)

Interaction = discord.Interaction[Any]
OnCommand = Callable[[Interaction, Grammar, Verb, dict[str, Any]], Awaitable[None]]
# Discord's "Missing Access" and "Missing Permissions".
NO_ACCESS = (50001, 50013)
# Messages read when looking for a card an earlier try may have posted (``FindCard``).
HISTORY_LIMIT = 50


def card_nonce(round_id: int) -> str:
    """Return the nonce a round's question card is created with (at most 25 characters).

    discord.py sends it with ``enforce_nonce``: Discord then creates one message per nonce and
    author within a few minutes and answers a repeat with the message it made the first time
    (https://discord.com/developers/docs/resources/message#create-message).
    """
    return f"quiz-card-{round_id}"


def _neutral(exc: Exception) -> type[Gone | NotAMember] | None:
    """Count a failed REST call by kind; name the neutral error a flow tells it apart by."""
    if not isinstance(exc, discord.HTTPException):
        return None
    count_api_error(render.PLATFORM, http_error_kind(exc.status))
    if isinstance(exc, discord.NotFound):
        return Gone
    return NotAMember if isinstance(exc, discord.Forbidden) and exc.code in NO_ACCESS else None


def place_of(interaction: Interaction) -> Place | None:
    """Return the server channel an interaction came from, or None outside one."""
    if interaction.guild_id is None or interaction.channel_id is None:
        return None
    return Place(render.PLATFORM, str(interaction.guild_id), str(interaction.channel_id))


# ---------------------------------------------------------------- sending


class DiscordPort:
    """Send the chat core's actions through the client's REST session."""

    platform = render.PLATFORM
    admins = M.ADMINS_DISCORD
    add_me = M.ADD_ME_DISCORD
    post_gap = 0.0  # discord.py keeps to each route's bucket itself

    def __init__(self, client: discord.Client) -> None:
        self.client = client

    def channel(self, place: Place) -> discord.PartialMessageable:
        """Return a sendable handle on the place's channel, without any cache lookup."""
        return self.client.get_partial_messageable(
            int(place.channel), guild_id=int(place.workspace), type=discord.ChannelType.text
        )

    async def send(self, action: Action) -> str | None:
        """Carry out an action."""
        channel = self.channel(action.place)
        with neutral_errors(_neutral):
            match action:
                case PostCard(card=card):
                    if isinstance(card, QuestionCard):
                        sent = await channel.send(
                            **render.message(card), nonce=card_nonce(card.round_id)
                        )
                    else:
                        sent = await channel.send(**render.message(card))
                    return str(sent.id)
                case FindCard(round_id=round_id, since=since):
                    return await self._find_card(channel, round_id, since)
                case UpdateCard(ref=ref, card=card):
                    edit = render.message(card)
                    if isinstance(card, QuestionCard):
                        edit.pop("view")  # an open card keeps its buttons as they are
                    await channel.get_partial_message(int(ref)).edit(**edit)
                case ReplyInThread(ref=ref, explanation=item):
                    await self._explain(channel, int(ref), item)
                case PostText(text=text):
                    await channel.send(
                        render.markdown(text), allowed_mentions=discord.AllowedMentions.none()
                    )
                case MessageUser(place=place, user=user, text=text, about=about, offers=offers):
                    if offers:
                        # A press in a direct message has no server to act in: say what does.
                        how = say(M.DM_NO_BUTTONS, command=Code("/quiz proposals"))
                        text = text + "\n" + how
                    await self._direct(place, user, text, about)
        return None

    async def _find_card(
        self, channel: discord.PartialMessageable, round_id: int, since: datetime
    ) -> str | None:
        """Return the id of the round's card among the bot's messages in the channel since then.

        The card's buttons carry its round (``bot.chat.buttons``). Reading needs Read Message
        History, which the invite asks for; without it, None (the nonce still keeps a card
        posted again within minutes from doubling).
        """
        me = self.client.user
        try:
            async for message in channel.history(limit=HISTORY_LIMIT, after=since):
                if me is not None and message.author.id != me.id:
                    continue
                for row in message.components:
                    for item in getattr(row, "children", ()):
                        if of_round(str(getattr(item, "custom_id", "") or ""), round_id):
                            return str(message.id)
        except discord.Forbidden as exc:
            log.warning(
                "cannot read channel %s to look for round %s's card: %s", channel.id, round_id, exc
            )
        return None

    async def _explain(self, channel: discord.PartialMessageable, ref: int, item: Any) -> None:
        card = channel.get_partial_message(ref)
        files = [render.chart_file(item.chart)] if item.chart is not None else []
        embed = render.explanation_embed(item)
        try:
            # Through the REST route itself: PartialMessage.create_thread wants the server in
            # the gateway's cache, which a process posting by REST alone does not fill.
            started = await self.client.http.start_thread_with_message(
                channel.id, ref, name=render.thread_name(item.reveal), auto_archive_duration=1440
            )
            thread = self.client.get_partial_messageable(
                int(started["id"]),
                guild_id=channel.guild_id,
                type=discord.ChannelType.public_thread,
            )
        except discord.HTTPException as exc:
            # No thread permission, or the card is itself in a thread: answer the card instead.
            log.info("no thread on message %s (%s); replying instead", ref, exc.status)
            await channel.send(
                embed=embed,
                files=files,
                reference=card.to_reference(fail_if_not_exists=False),
                allowed_mentions=discord.AllowedMentions.none(),
            )
        else:
            await thread.send(embed=embed, files=files)

    async def _direct(self, place: Place, user: str, text: Text, about: str | None) -> None:
        if about is not None:
            url = f"https://discord.com/channels/{place.workspace}/{place.channel}/{about}"
            text = say(M.REACTION_ABOUT, link=Link(url, url)) + "\n" + text
        try:
            dm = await self.client.create_dm(discord.Object(int(user)))
            await dm.send(render.markdown(text))
        except discord.Forbidden:
            log.info("user %s does not accept direct messages", user)

    def transient(self, error: Exception) -> bool:
        """Return whether a send may succeed again (discord.py retries 5xx and 429 itself)."""
        return isinstance(error, aiohttp.ClientConnectionError | TimeoutError)


class DiscordExchange:
    """One interaction being answered: its response, or a follow-up once it has one."""

    def __init__(self, interaction: Interaction, *, budget: float) -> None:
        self.interaction = interaction
        self.budget = budget

    async def defer(self, *, private: bool) -> None:
        """Send the "thinking" response (type 5), if no response was given yet."""
        if not self.interaction.response.is_done():
            with neutral_errors(_neutral):
                await self.interaction.response.defer(ephemeral=private, thinking=True)

    async def reply(self, content: Content, *, private: bool) -> str | None:
        """Answer as the interaction's response, or as a follow-up."""
        kwargs = render.message(content)
        response = self.interaction.response
        with neutral_errors(_neutral):
            if not response.is_done():
                sent = await response.send_message(**kwargs, ephemeral=private)
                if not isinstance(content, QuestionCard | Reveal):
                    return None
                if sent.message_id is not None:
                    return str(sent.message_id)
                return str((await self.interaction.original_response()).id)
            message = await self.interaction.followup.send(**kwargs, ephemeral=private, wait=True)
            return str(message.id)

    # A modal holds five fields: a longer form comes in pages (``bot.chat.forms``).
    form_fields = render.MODAL_FIELDS

    async def open_form(self, form: Form) -> None:
        """Open the form as a modal: the interaction's response (type 9)."""
        with neutral_errors(_neutral):
            await self.interaction.response.send_modal(render.form_modal(form))

    async def refuse_form(self, form: Form) -> None:
        """Answer privately with each field's error and a button that opens the form again:
        a modal cannot stay open, nor be opened in answer to itself."""
        await self.reply(forms.refused(form), private=True)

    async def is_admin(self) -> bool:
        """Return whether the person holds Manage Server here."""
        return bool(self.interaction.permissions.manage_guild)


# ---------------------------------------------------------------- the command tree


AppCommand = app_commands.Command[Any, ..., Any] | app_commands.Group


def command_tree(on_command: OnCommand, tags: tuple[str, ...]) -> list[AppCommand]:
    """Return Discord's commands for the whole grammar: a group per command with verbs."""
    built: list[AppCommand] = []
    for grammar in GRAMMARS:
        if all(verb.name for verb in grammar.verbs):
            group = app_commands.Group(name=grammar.name, description=grammar.help, guild_only=True)
            for verb in grammar.verbs:
                group.add_command(_command(grammar, verb, on_command, tags))
            built.append(group)
        else:
            built.append(_command(grammar, grammar.verbs[0], on_command, tags))
    return built


def _annotation(option: Option) -> Any:
    low, high = option.low, option.high
    match option.kind:
        case Kind.BOOLEAN:
            return bool
        case Kind.USER:
            return discord.User
        case Kind.CHOICE:
            return Literal[option.choices]
        case Kind.INTEGER:
            return app_commands.Range[int, int(low or 1), int(high or 2**31)]
        case Kind.NUMBER:
            return app_commands.Range[float, float(low or 0.0), float(high or 1e9)]
    if low is not None and high is not None:
        return app_commands.Range[str, int(low), int(high)]
    return str


def _command(
    grammar: Grammar, verb: Verb, on_command: OnCommand, tags: tuple[str, ...]
) -> app_commands.Command[Any, Any, None]:
    async def callback(interaction: Interaction, /, **options: Any) -> None:
        given = {k: str(v.id) if isinstance(v, discord.abc.User) else v for k, v in options.items()}
        await on_command(interaction, grammar, verb, given)

    callback.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("interaction", inspect.Parameter.POSITIONAL_ONLY)]
        + [
            inspect.Parameter(
                o.name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=_annotation(o),
                default=inspect.Parameter.empty if o.required else None,
            )
            for o in verb.options
        ]
    )
    callback.__discord_app_commands_param_description__ = {  # type: ignore[attr-defined]
        o.name: o.help for o in verb.options
    }
    command: app_commands.Command[Any, Any, None] = app_commands.Command(
        name=verb.name or grammar.name, description=verb.help, callback=callback
    )
    for option in verb.options:
        if option.suggest_tags:

            async def suggest(
                _interaction: Interaction, current: str
            ) -> list[app_commands.Choice[str]]:
                typed = current.strip().lower()
                return [app_commands.Choice(name=t, value=t) for t in tags if typed in t][:25]

            command.autocomplete(option.name)(suggest)
    return command


def option_error(error: app_commands.AppCommandError) -> Text | None:
    """Return the refusal for what discord.py's own checks caught, or None if unexpected."""
    if isinstance(error, app_commands.TransformerError):
        return say(M.BAD_OPTION_VALUE, value=Code(str(error.value)), help=Code("/quiz help"))
    if isinstance(error, app_commands.CheckFailure):
        return say(M.CANNOT_USE_HERE)
    return None


__all__ = ["Chat", "DiscordExchange", "DiscordPort", "command_tree", "option_error", "place_of"]
