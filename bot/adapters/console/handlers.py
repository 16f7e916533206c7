"""The terminal as a platform: its port and its exchange, printing neutral content with rich.

The terminal has one person and no channel: every answer is private by nature, nothing is
posted for others, and nobody waits on a platform's deadline. The session (``app.py``)
turns typed lines into the same events the chat platforms hand the core; what the core answers
comes back through ``ConsoleExchange.reply`` and is drawn by ``render.py``.
"""

from __future__ import annotations

import math

from rich.console import Console

from bot import messages as M
from bot.adapters.console import render
from bot.chat.content import Action, Content, MessageUser, PostText
from bot.chat.forms import Form
from bot.chat.port import NotAMember
from bot.engine.model import QuestionCard
from bot.text import Code, say


class ConsolePort:
    """What the core sends unprompted: told to the person at the terminal; no channel to post in."""

    platform = render.PLATFORM
    admins = M.ADMINS_TERMINAL
    add_me = M.ADD_ME_TERMINAL
    post_gap = 0.0

    def __init__(self, screen: Console) -> None:
        self.screen = screen

    async def send(self, action: Action) -> str | None:
        """Print a message for the person; refuse a card, which has no channel to go to."""
        match action:
            case MessageUser(text=text) | PostText(text=text):
                self.screen.print(render.content(text), crop=False)
                return None
            case _:
                raise NotAMember("the terminal has no channel")

    def transient(self, error: Exception) -> bool:
        """Return False: printing fails for good, or not at all."""
        return False


class ConsoleExchange:
    """One line typed, answered on the screen; what was answered is kept for the session."""

    # Nobody is waiting on a deadline: the answer is the first response, however long it takes.
    budget = math.inf

    def __init__(self, screen: Console) -> None:
        self.screen = screen
        self.replies: list[Content] = []

    @property
    def last(self) -> Content | None:
        """Return the latest answer, or None when there was none."""
        return self.replies[-1] if self.replies else None

    async def defer(self, *, private: bool) -> None:
        """Do nothing: the answer is printed when it is ready."""

    async def reply(self, content: Content, *, private: bool) -> str | None:
        """Print the answer; refuse a question card for a channel, which the terminal has not."""
        if isinstance(content, QuestionCard) and not private:
            raise NotAMember("the terminal has no channel")
        self.replies.append(content)
        self.screen.print(render.content(content), crop=False)
        self.screen.file.flush()
        return None

    async def is_admin(self) -> bool:
        """Return True: whoever runs quizbot here holds its database."""
        return True

    # The terminal draws no form: its prompts are ``quizbot questions add``.
    form_fields: int | None = None

    async def open_form(self, form: Form) -> None:
        """Say where the terminal writes a question: the prompts of ``quizbot questions add``."""
        await self.reply(
            say(M.FORM_IN_TERMINAL, command=Code("quizbot questions add")), private=True
        )

    async def refuse_form(self, form: Form) -> None:
        """Say where the terminal writes a question (a form is never sent back here)."""
        await self.open_form(form)
