"""The one error the bandwidth package raises on purpose, and a collector of several."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from bot.bandwidth import _words as say
from bot.errors import UserError


class BandwidthError(UserError):
    """Input the estimator cannot use; the message is safe to show and says what would work.

    ``problems`` holds each thing wrong, one sentence each; ``message`` says them all.
    """

    def __init__(self, message: str, *, usage: str | None = None) -> None:
        super().__init__(message, usage=usage)
        self.problems: tuple[str, ...] = (message,)

    @classmethod
    def of(cls, problems: list[str], *, usage: str | None = None) -> BandwidthError:
        """Return one error that reports every problem, each on its own line."""
        unique = list(dict.fromkeys(problems))
        if len(unique) == 1:
            error = cls(unique[0], usage=usage)
        else:
            lines = "\n".join(say.PROBLEM_LINE.format(problem=p) for p in unique)
            error = cls(say.PROBLEMS.format(count=len(unique), lines=lines), usage=usage)
        error.problems = tuple(unique)
        return error

    def with_usage(self, usage: str | None) -> BandwidthError:
        """Return the same problems with another usage text."""
        return BandwidthError.of(list(self.problems), usage=usage)


class Problems:
    """Collects the problems of independent checks, so a request is told all of them at once.

    ``with problems.check(): ...`` records a BandwidthError raised inside and goes on;
    ``raise_any()`` raises one error naming every problem recorded, if any.
    """

    def __init__(self) -> None:
        self.found: list[str] = []
        self.usage: str | None = None

    @contextmanager
    def check(self) -> Iterator[None]:
        """Run a check; a BandwidthError it raises is recorded instead of ending the caller."""
        try:
            yield
        except BandwidthError as exc:
            self.found.extend(exc.problems)
            self.usage = self.usage or exc.usage

    def __bool__(self) -> bool:
        return bool(self.found)

    def raise_any(self) -> None:
        """Raise one BandwidthError naming every problem recorded; nothing if there is none."""
        if self.found:
            raise BandwidthError.of(self.found, usage=self.usage)
