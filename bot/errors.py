"""The error hierarchy shared by every layer.

A ``UserError`` carries a message that is safe to show to the person who caused it; anything
else that escapes a handler is a bug, logged with context by the chat layer's error boundary.
"""

from __future__ import annotations

from bot.text import Text, text


class QuizbotError(Exception):
    """Base class of every error quizbot raises on purpose."""


class UserError(QuizbotError):
    """Bad input from a user: the message is safe to show and nothing was changed.

    ``text`` is the message as neutral rich text, for the renderers; ``message`` is the same in
    backtick markdown, for logs.
    """

    def __init__(self, message: str | Text, *, usage: str | None = None) -> None:
        self.text = text(message)
        self.message = self.text.markdown()
        super().__init__(self.message)
        self.usage = usage

    def __str__(self) -> str:
        return self.message if self.usage is None else f"{self.message}\n{self.usage}"

    def plain(self) -> str:
        """Return the message (and the usage) as the terminal shows it: no markup."""
        told = self.text.plain()
        return told if self.usage is None else f"{told}\n{self.usage}"


class ConfigError(QuizbotError):
    """A setting is missing or wrong; the message names the variable."""


class NotFound(UserError):
    """The thing asked for does not exist (or belongs to another workspace)."""
