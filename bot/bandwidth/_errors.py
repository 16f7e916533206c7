"""The one error the bandwidth package raises on purpose."""

from __future__ import annotations

from bot.errors import UserError


class BandwidthError(UserError):
    """Input the estimator cannot use; the message is safe to show and says what would work."""
