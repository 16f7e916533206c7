"""A Publisher stand-in that records what would reach the channel, in order."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bot.engine.model import Place, QuestionCard, Reveal
from bot.text import Text


@dataclass
class RecordingPublisher:
    """Implements the scheduler's Publisher port by remembering every call."""

    platform: str = "slack"
    events: list[tuple[str, object]] = field(default_factory=list)
    fail_cards: bool = False
    card_posted: asyncio.Event = field(default_factory=asyncio.Event)

    async def post_card(self, card: QuestionCard) -> str:
        if self.fail_cards:
            raise ConnectionError("the chat platform is unreachable")
        self.events.append(("card", card))
        self.card_posted.set()
        return f"msg-{card.round_id}"

    async def find_card(self, card: QuestionCard) -> str | None:
        # The channel as the platform keeps it: a card recorded here was posted.
        found = [c for c in self.cards if c.round_id == card.round_id]
        self.events.append(("find", card.round_id))
        return f"msg-{card.round_id}" if found else None

    async def publish_reveal(self, reveal: Reveal) -> None:
        self.events.append(("reveal", reveal))

    async def post_text(self, place: Place, text: Text) -> None:
        self.events.append(("text", (place, text.markdown())))

    async def message_user(self, place: Place, user: str, text: Text) -> None:
        self.events.append(("dm", (place, user, text.markdown())))

    def of(self, kind: str) -> list:
        return [value for k, value in self.events if k == kind]

    @property
    def cards(self) -> list[QuestionCard]:
        return self.of("card")

    @property
    def reveals(self) -> list[Reveal]:
        return self.of("reveal")

    @property
    def texts(self) -> list[tuple[Place, str]]:
        return self.of("text")
