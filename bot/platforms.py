"""The platforms quizbot serves, by the names their rounds, answers and sessions are kept under."""

from __future__ import annotations

#: The chat platforms, each served by a ``quizbot`` command of the same name.
CHATS = ("slack", "discord", "teams")
#: The terminal's name in the store (``quizbot play``).
TERMINAL = "console"
