"""What a platform implements for the chat layer: a port for sending, an exchange per interaction.

The port carries out actions nobody is waiting on (a timer's reveal, a daily card); an exchange
answers one interaction, whose first response each platform wants within its own deadline.
Failures a flow must tell apart arrive as the neutral errors below.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from bot.chat.content import Action, Content

if TYPE_CHECKING:
    from bot.chat.forms import Form


class Gone(Exception):
    """The message or channel an action is about no longer exists."""


class NotAMember(Exception):
    """The bot may not post in that channel."""


#: What a platform says of one of its own errors: the neutral error a flow tells it apart by,
#: or None to let it through as it is (after counting it, where the platform counts there).
Neutral = Callable[[Exception], type[Gone | NotAMember] | None]


@contextlib.contextmanager
def neutral_errors(neutral: Neutral) -> Iterator[None]:
    """Raise, in place of a platform's error, the neutral error its ``neutral`` names."""
    try:
        yield
    except Exception as exc:
        error = neutral(exc)
        if error is None:
            raise
        raise error(str(exc)) from exc


class Port(Protocol):
    """A platform, as the chat layer sends to it."""

    @property
    def platform(self) -> str:
        """Return the platform name rounds are stored under."""
        ...

    @property
    def admins(self) -> str:
        """Return who this platform's admins are, in words (from the message catalogue)."""
        ...

    @property
    def add_me(self) -> str:
        """Return how to let the bot post in a channel, in words (from the message catalogue)."""
        ...

    @property
    def post_gap(self) -> float:
        """Return the seconds the platform wants between two messages the bot posts in one
        channel (0 where it sets no such limit, or enforces its own)."""
        ...

    async def send(self, action: Action) -> str | None:
        """Carry out an action; return the new message's reference for a posted card, and
        the found card's (or None) for ``FindCard``."""
        ...

    def transient(self, error: Exception) -> bool:
        """Return whether a failed send may succeed if made again (5xx, lost connection)."""
        ...


class Exchange(Protocol):
    """One interaction being answered."""

    @property
    def budget(self) -> float:
        """Return how long the work may take before the first response is due (seconds)."""
        ...

    async def defer(self, *, private: bool) -> None:
        """Give the first response now, the answer to follow (once; later calls do nothing)."""
        ...

    async def reply(self, content: Content, *, private: bool) -> str | None:
        """Answer: as the first response if none was given, else as a follow-up.

        Return the message's reference when the answer is a card posted for the channel.
        """
        ...

    async def is_admin(self) -> bool:
        """Return whether the person who acted administers this workspace or server."""
        ...

    @property
    def form_fields(self) -> int | None:
        """Return how many fields one form of the platform holds (None: as many as needed)."""
        ...

    async def open_form(self, form: Form) -> None:
        """Open a form for the person, as the first response (a modal, or a card of inputs)."""
        ...

    async def refuse_form(self, form: Form) -> None:
        """Answer a sent form with its errors (``form.errors``), the form kept as it was sent."""
        ...
