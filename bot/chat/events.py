"""What the chat layer hears: platform-free events that the adapters translate payloads into."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.engine.model import Place

# A person named in a command's text, as every platform's ingress writes it before the grammar
# reads the line: ``<@`` the platform's user id ``>``. Each platform's own syntax (Slack's
# ``<@U123|ada>``, Teams' ``<at>Ada</at>`` with the id in the activity's entities) is turned
# into this form by its adapter.
MENTION = re.compile(r"<@([^\s<>|@]+)>")


def mentioned(user: str) -> str:
    """Return a mention of ``user`` (a platform's user id) in the neutral form."""
    return f"<@{user}>"


@dataclass(frozen=True, slots=True)
class Command:
    """A slash command: the text typed after it, or the options a form gave (with its verb)."""

    place: Place
    user: str
    name: str  # "quiz", "bandwidth"
    text: str | None = None  # the text form (Slack, Teams), mentions as ``mentioned`` writes them
    verb: str = ""  # the options form (Discord): the subcommand
    options: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Click:
    """A click on a choice button of a question card."""

    place: Place
    user: str
    round_id: int
    key: str


@dataclass(frozen=True, slots=True)
class Reaction:
    """An emoji reaction standing for a choice, on a message of a channel."""

    place: Place
    user: str
    message_ref: str
    key: str


@dataclass(frozen=True, slots=True)
class ReviewClick:
    """A click on a choice of a private review question."""

    place: Place
    user: str
    question_id: str
    key: str


@dataclass(frozen=True, slots=True)
class Press:
    """A press of one of the bot's buttons, with the id it carries (``bot.chat.buttons``)."""

    place: Place
    user: str
    button_id: str


@dataclass(frozen=True, slots=True)
class Submit:
    """A form sent back (``bot.chat.forms``): its id (``bot.chat.buttons``) and its values."""

    place: Place
    user: str
    form_id: str
    values: Mapping[str, str] = field(default_factory=dict)
