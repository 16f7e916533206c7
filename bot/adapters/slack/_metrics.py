"""Count failed Slack Web API calls by kind, from inside the client's retry loop."""

from __future__ import annotations

from typing import Any

from slack_sdk.http_retry.async_handler import AsyncRetryHandler

from bot.observability.metrics import count_api_error, http_error_kind

PLATFORM = "slack"


def error_kind(status: int, body: dict[str, Any] | None, error: Exception | None) -> str | None:
    """Name what went wrong with one call, or None when it succeeded."""
    if error is not None:
        return "connection"
    if status >= 400:
        return http_error_kind(status)
    if body is not None and body.get("ok") is False:
        # Slack reports most failures as 200 with ok=false and a short, fixed error code.
        return f"api:{body.get('error', 'unknown')}"
    return None


class ApiErrorCounter(AsyncRetryHandler):
    """A retry handler that never retries: it sees every response first and counts failures."""

    async def can_retry_async(self, **kwargs: Any) -> bool:
        """Count the call's failure, if any; leave retrying to the handlers after this one."""
        response = kwargs.get("response")
        kind = error_kind(
            response.status_code if response is not None else 0,
            response.body if response is not None else None,
            kwargs.get("error"),
        )
        if kind is not None:
            count_api_error(PLATFORM, kind)
        return False
