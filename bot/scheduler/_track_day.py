"""What a learning track's scheduled day says in its channel: the unit it opens, or its end."""

from __future__ import annotations

from bot import messages as M
from bot.engine.tracks import TrackDay, TrackSummary, Unit
from bot.text import Code, Mention, Strong, Text, Verbatim, join, lines, say

# At most this many finishers are named at a track's end; the rest are counted.
FINISHERS_NAMED = 20


def unit_name(unit: Unit, index: int) -> str:
    """Return a unit's title, or its number when the file gave none."""
    return unit.title or f"{index + 1}"


def unit_text(day: TrackDay) -> Text:
    """Return the post that opens a unit: the track, the unit, its intro and its questions."""
    assert day.unit is not None
    unit = day.track.units[day.unit]
    head = say(
        M.TRACK_DAY,
        title=Strong(day.track.title),
        unit=day.unit + 1,
        units=len(day.track.units),
        name=Verbatim(unit_name(unit, day.unit)),
    )
    n = len(unit.questions)
    if n == 1:
        count = say(M.TRACK_DAY_QUESTIONS_ONE)
    else:
        count = say(M.TRACK_DAY_QUESTIONS_MANY, n=n, command=Code("/quiz track"))
    return lines(head, Verbatim(unit.intro) if unit.intro else None, count)


def summary_text(summary: TrackSummary) -> Text:
    """Return the post that ends a track: who finished it, and how many did each unit."""
    head = say(M.TRACK_END_TITLE, title=Strong(summary.track.title), units=summary.units)
    if summary.finishers:
        named = [Text((Mention(u),)) for u in summary.finishers[:FINISHERS_NAMED]]
        more = len(summary.finishers) - FINISHERS_NAMED
        if more > 0:
            named.append(Text((f"+{more}",)))
        finishers = say(M.TRACK_END_FINISHERS, who=join(named, ", "))
    else:
        finishers = say(M.TRACK_END_NOBODY)
    if summary.people == 1:
        people = say(M.TRACK_END_PEOPLE_ONE)
    else:
        people = say(M.TRACK_END_PEOPLE_MANY, n=summary.people)
    per_unit = say(M.TRACK_END_UNITS, counts=", ".join(str(c) for c in summary.per_unit))
    return lines(head, finishers, people, per_unit)
