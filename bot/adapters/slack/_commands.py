"""Parse what people type after ``/quiz``, and the emoji that count as answers.

Every command of the ``/quiz`` table becomes one frozen value here, so a handler only has to
act on it; anything that does not parse raises ``UserError`` carrying the usage text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time

from bot.engine.model import Period
from bot.errors import UserError
from bot.scheduler import parse_duration, parse_weekday, parse_zone

USAGE = """*Quiz commands*
`/quiz` or `/quiz next [tag]`: post the next question in this channel
`/quiz close`: close the open question here now and show the answer
`/quiz leaderboard [week|month|all]`: the top 10 and your own rank
`/quiz stats [@user]`: answered, right, points and streaks
`/quiz settings [changes on|off] [minutes N]`: this channel's options (admins change them)
`/quiz schedule HH:MM [Area/City] [daily|weekdays] [tag] [digest=DAY] [close=2h]`: daily question
`/quiz schedule`: show the daily question here; `/quiz schedule off`: stop it (admins set and stop)
`/quiz review`: re-ask a question you missed
`/quiz help`: this list
Answer with the buttons, or react to the question with :one: to :five: (or :a: / :b:).
`/bandwidth SIZE [op] [nodes=N] [gpus=G] [nics=K] [step=S] [over=k1,k2]`: transfer-time estimates"""

TAG = re.compile(r"[a-z0-9-]+")
MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
HHMM = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")
ROUND_MINUTES_MAX = 7 * 24 * 60


@dataclass(frozen=True)
class NextQuestion:
    """Post the next question here, optionally from one tag."""

    tag: str | None = None


@dataclass(frozen=True)
class CloseRound:
    """Close the open round in this channel now."""


@dataclass(frozen=True)
class ShowLeaderboard:
    """Show the top scorers of a period and the caller's rank."""

    period: Period = Period.WEEK


@dataclass(frozen=True)
class ShowStats:
    """Show a user's totals; ``None`` means the caller."""

    user: str | None = None


@dataclass(frozen=True)
class ShowHelp:
    """Show the usage."""


@dataclass(frozen=True)
class ChannelOptions:
    """Show (no fields set) or change this channel's options."""

    allow_change: bool | None = None
    round_minutes: int | None = None

    @property
    def changes_something(self) -> bool:
        """Return whether any option is being set."""
        return self.allow_change is not None or self.round_minutes is not None


@dataclass(frozen=True)
class Schedule:
    """Show (``at`` None and not ``off``), stop, or set the daily question of this channel."""

    at: time | None = None
    zone: str = "UTC"
    weekdays_only: bool = False
    tag: str | None = None
    off: bool = False
    digest: int | None = None  # weekday of the weekly digest, 0 is Monday
    close_minutes: int | None = None


@dataclass(frozen=True)
class Review:
    """Privately re-ask a question the caller missed."""


QuizCommand = (
    NextQuestion
    | CloseRound
    | ShowLeaderboard
    | ShowStats
    | ShowHelp
    | ChannelOptions
    | Schedule
    | Review
)


def usage_error(message: str) -> UserError:
    """Return a UserError that shows the message followed by the usage."""
    return UserError(message, usage=USAGE)


def parse_quiz(text: str) -> QuizCommand:
    """Parse the text after ``/quiz``; raise UserError with the usage if it does not parse."""
    words = text.split()
    if not words:
        return NextQuestion()
    verb, args = words[0].lower(), words[1:]
    if verb == "next":
        return NextQuestion(tag=_tag(args))
    if verb in ("help", "?"):
        return ShowHelp()
    if verb == "close" and not args:
        return CloseRound()
    if verb == "review" and not args:
        return Review()
    if verb in ("leaderboard", "top"):
        return _leaderboard(args)
    if verb == "stats":
        return _stats(args)
    if verb == "settings":
        return _settings(args)
    if verb == "schedule":
        return _schedule(args)
    raise usage_error(f"I don't know `/quiz {escape_code(text.strip())}`.")


def escape_code(text: str) -> str:
    """Return user text safe to quote inside inline code."""
    return text.replace("`", "'")[:80]


def _tag(args: list[str]) -> str | None:
    if not args:
        return None
    if len(args) > 1 or not TAG.fullmatch(args[0].lower()):
        raise usage_error("A tag is one word of letters, digits and dashes, like `networking`.")
    return args[0].lower()


def _leaderboard(args: list[str]) -> ShowLeaderboard:
    if not args:
        return ShowLeaderboard()
    if len(args) == 1:
        word = args[0].lower()
        for period in Period:
            if word == period.value:
                return ShowLeaderboard(period)
    raise usage_error("The leaderboard period is `week`, `month` or `all`.")


def _stats(args: list[str]) -> ShowStats:
    if not args:
        return ShowStats()
    match = MENTION.fullmatch(args[0]) if len(args) == 1 else None
    if match is None:
        raise usage_error("Mention the person with @, like `/quiz stats @ada`.")
    return ShowStats(match.group(1))


def _settings(args: list[str]) -> ChannelOptions:
    allow: bool | None = None
    minutes: int | None = None
    rest = [a.lower() for a in args]
    while rest:
        key = rest.pop(0)
        value = rest.pop(0) if rest else ""
        if key == "changes" and value in ("on", "off"):
            allow = value == "on"
        elif key == "minutes" and value.isdigit() and 1 <= int(value) <= ROUND_MINUTES_MAX:
            minutes = int(value)
        else:
            raise usage_error(
                "Settings are `changes on|off` and `minutes N` (1 to 10080),"
                " like `/quiz settings changes off minutes 15`."
            )
    return ChannelOptions(allow_change=allow, round_minutes=minutes)


def _schedule(args: list[str]) -> Schedule:
    if not args:
        return Schedule()
    if len(args) == 1 and args[0].lower() == "off":
        return Schedule(off=True)
    match = HHMM.fullmatch(args[0])
    if match is None:
        raise usage_error(
            "Give the time as HH:MM on a 24-hour clock, like `09:30`, `13:00` or `17:45`: "
            "`/quiz schedule 09:30 Europe/Paris`."
        )
    at = time(int(match.group(1)), int(match.group(2)))
    zone, weekdays, tag = "UTC", False, None
    digest: int | None = None
    close: int | None = None
    for word in args[1:]:
        low = word.lower()
        if low.startswith(("digest=", "close=")):
            name, _, value = low.partition("=")
            try:
                if name == "digest":
                    digest = parse_weekday(value)
                else:
                    close = parse_duration(value)
            except UserError as exc:
                raise usage_error(exc.message) from None
        elif "/" in word or word.upper() == "UTC":
            zone = _zone(word)
        elif low in ("daily", "weekdays"):
            weekdays = low == "weekdays"
        elif tag is None and TAG.fullmatch(low):
            tag = low
        else:
            raise usage_error(f"I can't read `{escape_code(word)}` in a schedule.")
    return Schedule(
        at=at,
        zone=zone,
        weekdays_only=weekdays,
        tag=tag,
        digest=digest,
        close_minutes=close,
    )


def _zone(name: str) -> str:
    try:
        return parse_zone(name)
    except UserError as exc:
        raise usage_error(exc.message) from None


# ---------------------------------------------------------------- emoji answers

# Slack ships :a: and :b: but no :c:, :d: or :e:, so the digits are the main way to answer with a
# reaction; a workspace may upload its own :c: :d: :e: (or :letter-c: ...) and those count too.
EMOJI_CHOICES: dict[str, str] = {
    "one": "A",
    "two": "B",
    "three": "C",
    "four": "D",
    "five": "E",
    "a": "A",
    "b": "B",
    "c": "C",
    "d": "D",
    "e": "E",
    "letter-a": "A",
    "letter-b": "B",
    "letter-c": "C",
    "letter-d": "D",
    "letter-e": "E",
}


def emoji_choice(reaction: str) -> str | None:
    """Return the choice letter an emoji reaction stands for, or None."""
    name = reaction.split("::", 1)[0]  # a skin tone arrives as ``name::skin-tone-2``
    return EMOJI_CHOICES.get(name)
