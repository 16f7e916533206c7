"""The terminal as a platform: typed lines into the chat core, its answers drawn with rich."""

from bot.adapters.console.session import play_session, review_session

__all__ = ["play_session", "review_session"]
