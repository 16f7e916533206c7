"""The terminal face: a study session for one player, on the same engine and store."""

from bot.adapters.console.session import PlaySummary, play_session, review_session

__all__ = ["PlaySummary", "play_session", "review_session"]
