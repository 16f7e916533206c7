"""The adapter-neutral "post this here" port that timers and schedules drive."""

from __future__ import annotations

from typing import Protocol

from bot.engine.model import Place, QuestionCard, Reveal
from bot.text import Text


class Publisher(Protocol):
    """What a chat adapter offers to post without a user's command."""

    @property
    def platform(self) -> str:
        """Return the platform name rounds are stored under (``slack``, ``discord``)."""
        ...

    async def post_card(self, card: QuestionCard) -> str:
        """Post the question card and return the message reference to store."""
        ...

    async def publish_reveal(self, reveal: Reveal) -> None:
        """Show the answer on the card and the full explanation in its thread."""
        ...

    async def post_text(self, place: Place, text: Text) -> None:
        """Post a message in a channel (the platform renders its spans)."""
        ...
