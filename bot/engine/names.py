"""Display names: what a platform calls a person, a channel or a workspace, and how old it is.

Ids (``U07ABC123``, ``C07XYZ9KL``) are what the platforms send and what the store keys on; people
read names. Adapters learn names from request payloads and the platform's API or gateway cache
and store them with the time they were learnt; pages and exports show the name, and the id only
when no name is known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

# A stored name is learnt again after this long (people rename themselves and channels).
REFRESH_AFTER = timedelta(days=7)


class NameKind(StrEnum):
    """What a name is the name of."""

    USER = "user"
    CHANNEL = "channel"
    WORKSPACE = "workspace"


@dataclass(frozen=True)
class Known:
    """A stored name and when it was learnt."""

    name: str
    fetched_at: datetime

    def stale(self, now: datetime, after: timedelta = REFRESH_AFTER) -> bool:
        """Return whether the name is old enough to be learnt again."""
        return now - self.fetched_at >= after


@dataclass(frozen=True)
class Names:
    """The names of one workspace, for display: a name if known, else the id."""

    workspace_id: str
    known: Mapping[tuple[NameKind, str], Known]

    def _name(self, kind: NameKind, ident: str) -> str:
        found = self.known.get((kind, ident))
        return found.name if found is not None else ident

    def person(self, ident: str) -> str:
        """Return a person's name, or the id when none is known."""
        return self._name(NameKind.USER, ident)

    def channel(self, ident: str) -> str:
        """Return a channel's name with its ``#``, or the id when none is known."""
        found = self.known.get((NameKind.CHANNEL, ident))
        return f"#{found.name}" if found is not None else ident

    @property
    def workspace(self) -> str:
        """Return the workspace's (server's) name, or its id."""
        return self._name(NameKind.WORKSPACE, self.workspace_id)


def fresh(
    known: Mapping[tuple[NameKind, str], Known],
    learnt: Mapping[tuple[NameKind, str], str],
    now: datetime,
    after: timedelta = REFRESH_AFTER,
) -> dict[tuple[NameKind, str], str]:
    """Return the learnt names worth storing: new, renamed, or stored too long ago."""
    worth: dict[tuple[NameKind, str], str] = {}
    for key, name in learnt.items():
        name = name.strip()
        if not name:
            continue
        old = known.get(key)
        if old is None or old.name != name or old.stale(now, after):
            worth[key] = name
    return worth
