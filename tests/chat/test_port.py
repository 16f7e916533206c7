"""The neutral errors a platform's failures become, through the one helper every adapter uses."""

from __future__ import annotations

import pytest

from bot.chat import Gone, NotAMember, neutral_errors


class Refused(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


def by_status(exc: Exception) -> type[Gone | NotAMember] | None:
    if not isinstance(exc, Refused):
        return None
    return {404: Gone, 403: NotAMember}.get(exc.status)


@pytest.mark.parametrize(("status", "neutral"), [(404, Gone), (403, NotAMember)])
def test_a_failure_a_flow_tells_apart_becomes_its_neutral_error(status, neutral):
    with pytest.raises(neutral, match=f"HTTP {status}") as caught, neutral_errors(by_status):
        raise Refused(status)
    assert isinstance(caught.value.__cause__, Refused)


def test_other_failures_and_other_errors_pass_through_unchanged():
    with pytest.raises(Refused, match="HTTP 500"), neutral_errors(by_status):
        raise Refused(500)
    with pytest.raises(KeyError), neutral_errors(by_status):
        raise KeyError("x")
