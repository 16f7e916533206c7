"""One command grammar for every face: typed text (Slack) and separate options (Discord).

A command (``/quiz``, ``/bandwidth``) has verbs and a verb has options. The text form reads words
(``/quiz schedule 09:30 Europe/Paris weekdays digest=fri``); the options form gets the values the
platform has already split (``/quiz schedule time:09:30 tz:Europe/Paris``). Both end in the same
``Args``, read by the same option readers, so every rule is written once. The tables ``QUIZ`` and
``BANDWIDTH`` are the whole command set: Discord's command tree and every usage text are made
from them. ``/bandwidth``'s options are bot.bandwidth's own table (``ESTIMATE``), whose parser
reads the text form: its limits and choices are written there once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from bot import messages as M
from bot.bandwidth import ESTIMATE as BANDWIDTH_OPTIONS
from bot.bandwidth import USAGE as BANDWIDTH_TEXT_USAGE
from bot.bandwidth import Kind as BwKind
from bot.bandwidth import Opt
from bot.chat.events import MENTION
from bot.engine.model import DifficultyMode, Period, ReviewScope
from bot.engine.practice import MAX_COUNT as PRACTICE_MAX
from bot.errors import UserError
from bot.scheduler import parse_duration, parse_weekday, parse_zone
from bot.scheduler._parse import parse_days, parse_tag, parse_time
from bot.text import Code, Icon, Pre, Strong, Text, echo, join, say

ROUND_MINUTES_MAX = 7 * 24 * 60
# The workspace's desired retention, as a percent (learning.MIN_RETENTION..MAX_RETENTION).
RETENTION_PERCENT_MIN, RETENTION_PERCENT_MAX = 70, 97
_KEYED = re.compile(r"^([a-z]+)[=:](.*)$", re.IGNORECASE)
_HHMM = re.compile(r"^\d{1,2}:\d{2}$")
_TRACK_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,119}")
_TOPIC = re.compile(r"[a-z0-9][a-z0-9_-]{0,119}")


class Form(StrEnum):
    """How a command arrived."""

    TEXT = "text"  # one line of words
    OPTIONS = "options"  # named values


class Marked(StrEnum):
    """How the text form marks an option."""

    FIRST = "first"  # the first word after the verb, whatever it looks like
    BARE = "bare"  # a word recognised by its look
    PAIR = "pair"  # the option's name, then its value: ``minutes 15``
    KEY = "key"  # ``name=value`` (or ``name:value``)


class Kind(StrEnum):
    """What an option holds, as a form with typed fields declares it."""

    TEXT = "text"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    USER = "user"
    CHOICE = "choice"


def _anything(_word: str) -> bool:
    return True


@dataclass(frozen=True)
class Option:
    """One named value of a verb, with its reader and how each form spells it."""

    name: str
    help: str  # one line; a form's field description
    read: Callable[[str], object]  # the text of a value -> the value (UserError if it is bad)
    hint: str  # how the text form's usage writes it
    example: str = ""  # a value, for the options form's usage
    marked: Marked = Marked.BARE
    looks: Callable[[str], bool] = _anything
    kind: Kind = Kind.TEXT
    low: float | None = None  # numbers: the least value; text: the least length
    high: float | None = None
    choices: tuple[str, ...] = ()
    suggest_tags: bool = False  # a form may offer the bank's tags as one types
    required: bool = False
    twice: str = M.GIVEN_TWICE  # the refusal when the text form gives it twice
    noun: str = ""  # what the refusals call it (its name if empty)

    @property
    def called(self) -> str:
        """Return the option's name in sentences."""
        return self.noun or self.name


@dataclass(frozen=True)
class Verb:
    """One thing a command does."""

    name: str  # "" for a command that has no verbs
    help: str
    options: tuple[Option, ...] = ()
    words: tuple[str, ...] = ()  # other ways the text form names it: "top", "?"
    spelled: str = ""  # how the text form's usage writes it, if not by its name
    public: bool = False  # its answer is for the whole channel
    raw: Option | None = None  # the text form hands the whole text to this option
    text_usage: str | None = None  # a preformatted usage of the text form


@dataclass(frozen=True)
class Grammar:
    """A slash command and its verbs."""

    name: str
    help: str
    verbs: tuple[Verb, ...]
    default: str | None = None  # the verb an empty text means
    heading: str = ""  # the title of its usage

    def verb(self, name: str) -> Verb:
        """Return the verb of this name (KeyError if none)."""
        for verb in self.verbs:
            if verb.name == name:
                return verb
        raise KeyError(name)


@dataclass(frozen=True)
class Args(Mapping[str, object]):
    """The values of a call's options, read and checked."""

    given: Mapping[str, object] = field(default_factory=dict)

    def __getitem__(self, key: str) -> object:
        return self.given[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.given)

    def __len__(self) -> int:
        return len(self.given)

    def text(self, name: str) -> str | None:
        """Return a text option, or None when it was not given."""
        value = self.given.get(name)
        return None if value is None else str(value)

    def number(self, name: str) -> int | None:
        """Return a whole-number option, or None."""
        value = self.given.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def decimal(self, name: str) -> float | None:
        """Return a number option, or None."""
        value = self.given.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)

    def flag(self, name: str) -> bool | None:
        """Return a yes/no option, or None."""
        value = self.given.get(name)
        return value if isinstance(value, bool) else None


@dataclass(frozen=True)
class Call:
    """A command as read: which verb, with which values, in which form."""

    grammar: Grammar
    verb: Verb
    args: Args
    form: Form


class BadInput(UserError):
    """Input a command cannot read: the refusal comes with the command's usage."""

    def __init__(self, message: Text, *, grammar: Grammar, verb: Verb | None = None) -> None:
        super().__init__(message)
        self.grammar = grammar
        self.verb = verb


# ---------------------------------------------------------------- reading


def read_text(grammar: Grammar, line: str) -> Call:
    """Read the text after a slash command; BadInput with the usage if it does not read."""
    words = line.split()
    verb, rest = _verb_of(grammar, words, line)
    try:
        if verb.raw is not None:
            # A command without verbs reads all its text; a verb, the text after it.
            text = " ".join(rest) if verb.name else line.strip()
            args = {verb.raw.name: verb.raw.read(text)}
        else:
            args = _read_words(verb, rest)
    except BadInput:
        raise
    except UserError as exc:
        raise BadInput(exc.text, grammar=grammar, verb=verb) from None
    return Call(grammar, verb, Args(args), Form.TEXT)


def read_options(grammar: Grammar, verb_name: str, given: Mapping[str, object]) -> Call:
    """Read a command whose platform sent named values; BadInput if one does not read."""
    verb = grammar.verb(verb_name)
    known = {o.name: o for o in verb.options}
    values: dict[str, object] = {}
    try:
        for name, value in given.items():
            if value is None:
                continue
            option = known.get(name)
            if option is None:
                raise UserError(say(M.UNKNOWN_OPTION, option=echo(name)))
            values[name] = accept(option, value, Form.OPTIONS)
        _require(verb, values)
    except UserError as exc:
        raise BadInput(exc.text, grammar=grammar, verb=verb) from None
    return Call(grammar, verb, Args(values), Form.OPTIONS)


def accept(option: Option, value: object, form: Form) -> object:
    """Return an option's value read from text, or checked when a form typed it already."""
    if isinstance(value, str) and (form is Form.TEXT or option.kind is not Kind.USER):
        return option.read(value)
    match option.kind:
        case Kind.BOOLEAN if isinstance(value, bool):
            return value
        case Kind.INTEGER | Kind.NUMBER if isinstance(value, int | float) and not isinstance(
            value, bool
        ):
            low = option.low if option.low is not None else float("-inf")
            high = option.high if option.high is not None else float("inf")
            if not low <= value <= high:
                raise UserError(say(M.OUT_OF_RANGE, option=Code(option.name), low=low, high=high))
            return value
        case Kind.USER if isinstance(value, str):
            return value
    raise UserError(say(M.WRONG_VALUE, value=echo(str(value)), option=Code(option.name)))


def _verb_of(grammar: Grammar, words: list[str], line: str) -> tuple[Verb, list[str]]:
    lowered = [w.lower() for w in words]
    if not words and grammar.default is not None:
        return grammar.verb(grammar.default), []
    best: tuple[int, Verb] | None = None
    for verb in grammar.verbs:
        for spelling in (verb.name, verb.spelled, *verb.words):
            if not spelling:
                continue
            spelled = spelling.split()
            better = best is None or len(spelled) > best[0]
            if lowered[: len(spelled)] == spelled and better:
                best = (len(spelled), verb)
    if best is None and any(not v.name for v in grammar.verbs):
        return grammar.verb(""), words  # a command without verbs reads all its text
    if best is None:
        typed = f"/{grammar.name} {line.strip()}"[:80]
        raise BadInput(say(M.UNKNOWN_VERB, typed=Code(typed)), grammar=grammar)
    return best[1], words[best[0] :]


def _read_words(verb: Verb, words: list[str]) -> dict[str, object]:
    values: dict[str, object] = {}
    by_name = {o.name: o for o in verb.options}
    i = 0
    while i < len(words):
        word = words[i]
        keyed = _KEYED.match(word)
        option: Option | None = None
        raw = word
        first = verb.options[0] if verb.options else None
        if i == 0 and first is not None and first.marked is Marked.FIRST:
            option = first
        elif keyed and by_name.get(keyed[1].lower()) is not None:
            option = by_name[keyed[1].lower()]
            raw = keyed[2]
            if option.marked is not Marked.KEY:
                option = None
            elif not raw:
                raise UserError(say(M.NEEDS_VALUE, word=echo(word), example=Code(option.hint)))
        elif (pair := by_name.get(word.lower())) is not None and pair.marked is Marked.PAIR:
            option = pair
            i += 1
            if i == len(words):
                raise UserError(say(M.NEEDS_VALUE, word=echo(word), example=Code(pair.hint)))
            raw = words[i]
        else:
            option = next(
                (o for o in verb.options if o.marked is Marked.BARE and o.looks(word)), None
            )
        if option is None:
            raise UserError(say(M.CANNOT_READ, word=Code(word[:80]), verb=Code(verb.name)))
        if option.name in values:
            raise UserError(say(option.twice, word=Code(word[:80]), option=option.called))
        values[option.name] = accept(option, raw, Form.TEXT)
        i += 1
    _require(verb, values)
    return values


def _require(verb: Verb, values: Mapping[str, object]) -> None:
    for option in verb.options:
        if option.required and option.name not in values:
            raise UserError(say(M.MISSING_OPTION, option=Code(option.name)))


# ---------------------------------------------------------------- usage


def usage(grammar: Grammar, form: Form, verb: Verb | None = None) -> Text:
    """Return how to use a command in a form: every verb, or the verb a refusal is about."""
    if form is Form.OPTIONS and verb is not None:
        return _options_line(grammar, verb)
    if form is Form.TEXT and verb is not None and verb.text_usage is not None:
        return Text((Pre(verb.text_usage),))
    verbs = [v for v in grammar.verbs if v.name or form is Form.OPTIONS]
    if not verbs:
        return usage(grammar, form, grammar.verbs[0])
    heading = [Text((Strong(grammar.heading),))] if grammar.heading else []
    lines = [
        _text_line(grammar, v) if form is Form.TEXT else _options_line(grammar, v) for v in verbs
    ]
    return join([*heading, *lines])


def _text_line(grammar: Grammar, verb: Verb) -> Text:
    spelled = verb.spelled or verb.name
    hints = " ".join(o.hint for o in ((verb.raw,) if verb.raw else verb.options))
    typed = Code(" ".join(p for p in (f"/{grammar.name}", spelled, hints) if p))
    if verb.name == grammar.default:
        return say(M.USAGE_DEFAULT, bare=Code(f"/{grammar.name}"), typed=typed, help=verb.help)
    return say(M.USAGE_LINE, typed=typed, help=verb.help)


def _options_line(grammar: Grammar, verb: Verb) -> Text:
    if not verb.name:
        return _options_usage(grammar, verb)
    named = Strong(f"/{grammar.name} {verb.name}")
    fields = " ".join(o.name if o.required else f"[{o.name}]" for o in verb.options)
    if not fields:
        return say(M.USAGE_LINE, typed=named, help=verb.help)
    return say(M.USAGE_OPTIONS_LINE, typed=named, fields=Code(fields), help=verb.help)


def _options_usage(grammar: Grammar, verb: Verb) -> Text:
    parts = [
        f"{o.name}:{o.example}" if o.required else f"[{o.name}:{o.example}]" for o in verb.options
    ]
    width = max((len(o.name) for o in verb.options), default=0)
    described = [f"  {o.name.ljust(width)}  {o.help}" for o in verb.options]
    block = "\n".join([f"Usage: /{grammar.name} {' '.join(parts)}", *described])
    return Text((Pre(block),))


def help_text(grammars: tuple[Grammar, ...], form: Form) -> Text:
    """Return the help: every verb of every command, and how answering works."""
    parts = [usage(grammars[0], form)]
    for grammar in grammars[1:]:
        for verb in grammar.verbs:
            parts.append(
                _text_line(grammar, verb) if form is Form.TEXT else _summary(grammar, verb)
            )
    parts.append(say(M.HELP_ANSWERING, emoji=Icon.ANSWER_EMOJI))
    return join(parts)


def _summary(grammar: Grammar, verb: Verb) -> Text:
    named = Strong(" ".join(p for p in (f"/{grammar.name}", verb.name) if p))
    fields = " ".join(o.name if o.required else f"[{o.name}]" for o in verb.options)
    return say(M.USAGE_OPTIONS_LINE, typed=named, fields=Code(fields), help=verb.help)


# ---------------------------------------------------------------- the readers


def _tag(word: str) -> str:
    return parse_tag(word)


def _period(word: str) -> Period:
    for period in Period:
        if word.strip().lower() == period.value:
            return period
    raise UserError(say(M.BAD_PERIOD, week=Code("week"), month=Code("month"), all=Code("all")))


def _mention(word: str) -> str:
    match = MENTION.fullmatch(word.strip())
    if match is None:
        raise UserError(say(M.BAD_MENTION, example=Code("/quiz stats @ada")))
    return match.group(1)


def _on_off(word: str) -> bool:
    low = word.strip().lower()
    if low in ("on", "yes", "true"):
        return True
    if low in ("off", "no", "false"):
        return False
    raise UserError(say(M.BAD_ON_OFF, word=Code(word[:40]), on=Code("on"), off=Code("off")))


def _difficulty(word: str) -> DifficultyMode:
    try:
        return DifficultyMode(word.strip().lower())
    except ValueError:
        modes = join([Code(d.value) for d in DifficultyMode], ", ")
        raise UserError(say(M.BAD_DIFFICULTY, word=Code(word[:40]), modes=modes)) from None


def _topic(word: str) -> str:
    topic = word.strip().lower()
    if not _TOPIC.fullmatch(topic):
        raise UserError(say(M.BAD_TOPIC, word=Code(word[:40]), example=Code("collectives")))
    return topic


def _me(word: str) -> str:
    if word.strip().lower() != "me":
        raise UserError(say(M.BAD_DASHBOARD_SCOPE, word=Code(word[:40]), me=Code("me")))
    return "me"


def _whole(name: str, low: int, high: int) -> Callable[[str], int]:
    """Return a reader of a whole number from ``low`` to ``high`` (the options form's range)."""

    def read(word: str) -> int:
        raw = word.strip()
        if not (raw.isascii() and raw.isdigit()):
            raise UserError(say(M.NOT_A_NUMBER, word=Code(raw[:40])))
        if not low <= int(raw) <= high:
            raise UserError(say(M.OUT_OF_RANGE, option=Code(name), low=low, high=high))
        return int(raw)

    return read


def _track_name(word: str) -> str:
    name = word.strip().lower()
    if not _TRACK_NAME.fullmatch(name):
        raise UserError(say(M.BAD_TRACK_NAME, word=echo(word), example=Code("/quiz track list")))
    return name


def _looks_like_time(word: str) -> bool:
    return bool(_HHMM.match(word))


def _looks_like_zone(word: str) -> bool:
    return "/" in word or word.casefold() in ("utc", "gmt")


def _looks_like_days(word: str) -> bool:
    return word.lower() in ("daily", "weekdays")


def _checked(read: Callable[[str], tuple[int, int]]) -> Callable[[str], str]:
    """Return a reader that checks a time of day and keeps it as typed."""

    def check(word: str) -> str:
        hour, minute = read(word)
        return f"{hour:02d}:{minute:02d}"

    return check


def _request_text(line: str) -> str:
    return line


FLAG_REASONS = ("wrong", "unclear", "outdated", "typo")
FLAG_NOTE_MAX = 300


def _flag_reason(word: str) -> str:
    reason = word.strip().lower()
    if reason not in FLAG_REASONS:
        raise UserError(say(M.FLAG_USAGE))
    return reason


def _flag_note(text: str) -> str:
    note = " ".join(text.split())
    if len(note) > FLAG_NOTE_MAX:
        raise UserError(say(M.FLAG_NOTE_TOO_LONG, most=FLAG_NOTE_MAX))
    return note


def _flag_text(line: str) -> tuple[str, str | None]:
    """Read ``REASON [what is wrong]`` (the text form of /quiz flag)."""
    reason, _, note = line.strip().partition(" ")
    return _flag_reason(reason), (_flag_note(note) or None)


def _review(word: str) -> str:
    scope = word.strip().lower()
    if scope not in tuple(ReviewScope):
        choices = join([Code(r.value) for r in ReviewScope], ", ")
        raise UserError(say(M.BAD_REVIEW, word=Code(word[:40]), choices=choices))
    return scope


PROPOSAL_ACTIONS = ("approve", "reject")
PROPOSAL_ID_MAX = 2**31 - 1  # the store's integer
PROPOSAL_REASON_MAX = 500  # bot.bank.workspace.REASON_MAX


def _proposal_action(word: str) -> str:
    action = word.strip().lower()
    if action not in PROPOSAL_ACTIONS:
        raise UserError(say(M.PROPOSALS_USAGE))
    return action


def _proposal_reason(text: str) -> str:
    reason = " ".join(text.split())
    if len(reason) > PROPOSAL_REASON_MAX:
        raise UserError(say(M.PROPOSAL_REASON_LONG, limit=PROPOSAL_REASON_MAX, length=len(reason)))
    return reason


def _proposals_text(line: str) -> tuple[str | None, int | None, str | None]:
    """Read ``[approve ID | reject ID [reason]]`` (the text form of /quiz proposals)."""
    words = line.split(maxsplit=2)
    if not words:
        return None, None, None
    action = _proposal_action(words[0])
    if len(words) < 2:
        raise UserError(say(M.PROPOSALS_USAGE))
    proposal_id = _whole("id", 1, PROPOSAL_ID_MAX)(words[1])
    if action == "approve" and len(words) > 2:
        raise UserError(say(M.PROPOSALS_USAGE))
    reason = _proposal_reason(words[2]) if len(words) > 2 else None
    return action, proposal_id, reason or None


QUESTION_ID_MAX = 120  # the store's question ids
_QUESTION_ID = re.compile(r"[a-z0-9][a-z0-9-]*")  # bot.bank.loader.ID_PATTERN


def _question_id(word: str) -> str:
    qid = word.strip().lower()
    if len(qid) > QUESTION_ID_MAX or not _QUESTION_ID.fullmatch(qid):
        raise UserError(
            say(M.BAD_QUESTION_ID, word=echo(word[:40]), example=Code("multinode-interconnect"))
        )
    return qid


QUESTION_ID = Option(
    "id",
    M.OPTION_QUESTION_ID,
    _question_id,
    "ID",
    "multinode-interconnect",
    Marked.FIRST,
    low=1,
    high=QUESTION_ID_MAX,
    required=True,
)

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

TAG = Option(
    "tag",
    M.OPTION_TAG,
    _tag,
    "[tag|computed]",
    "networking",
    suggest_tags=True,
    twice=M.ONE_TAG,
)

QUIZ = Grammar(
    name="quiz",
    help=M.COMMAND_QUIZ,
    heading=M.USAGE_HEADING,
    default="next",
    verbs=(
        Verb("next", M.VERB_NEXT, (TAG,), public=True),
        Verb("close", M.VERB_CLOSE),
        Verb(
            "leaderboard",
            M.VERB_LEADERBOARD,
            (
                Option(
                    "period",
                    M.OPTION_PERIOD,
                    _period,
                    "[week|month|all]",
                    "week",
                    kind=Kind.CHOICE,
                    choices=tuple(p.value for p in Period),
                ),
            ),
            words=("top",),
        ),
        Verb(
            "stats",
            M.VERB_STATS,
            (Option("user", M.OPTION_USER, _mention, "[@user]", kind=Kind.USER),),
        ),
        Verb(
            "settings",
            M.VERB_SETTINGS,
            (
                Option(
                    "changes",
                    M.OPTION_CHANGES,
                    _on_off,
                    "[changes on|off]",
                    marked=Marked.PAIR,
                    kind=Kind.BOOLEAN,
                ),
                Option(
                    "minutes",
                    M.OPTION_MINUTES,
                    _whole("minutes", 1, ROUND_MINUTES_MAX),
                    "[minutes N]",
                    marked=Marked.PAIR,
                    kind=Kind.INTEGER,
                    low=1,
                    high=ROUND_MINUTES_MAX,
                ),
                Option(
                    "difficulty",
                    M.OPTION_DIFFICULTY,
                    _difficulty,
                    "[difficulty adaptive|level|mixed|easy|hard]",
                    marked=Marked.PAIR,
                    kind=Kind.CHOICE,
                    choices=tuple(d.value for d in DifficultyMode),
                ),
                Option(
                    "computed",
                    M.OPTION_COMPUTED,
                    _whole("computed", 0, 100),
                    "[computed PERCENT]",
                    marked=Marked.PAIR,
                    kind=Kind.INTEGER,
                    low=0,
                    high=100,
                ),
                Option(
                    "retention",
                    M.OPTION_RETENTION,
                    _whole("retention", RETENTION_PERCENT_MIN, RETENTION_PERCENT_MAX),
                    "[retention PERCENT]",
                    marked=Marked.PAIR,
                    kind=Kind.INTEGER,
                    low=RETENTION_PERCENT_MIN,
                    high=RETENTION_PERCENT_MAX,
                ),
                Option(
                    "review",
                    M.OPTION_REVIEW,
                    _review,
                    "[review others|everyone]",
                    marked=Marked.PAIR,
                    kind=Kind.CHOICE,
                    choices=tuple(r.value for r in ReviewScope),
                ),
            ),
        ),
        Verb(
            "schedule",
            M.VERB_SCHEDULE,
            (
                Option("time", M.OPTION_TIME, _checked(parse_time), "HH:MM", "09:30", Marked.FIRST),
                Option(
                    "tz",
                    M.OPTION_ZONE,
                    parse_zone,
                    "[Area/City]",
                    "Europe/Berlin",
                    looks=_looks_like_zone,
                    twice=M.SCHEDULE_TWICE,
                    noun="zone",
                ),
                Option(
                    "days",
                    M.OPTION_DAYS,
                    lambda w: parse_days(w).value,
                    "[daily|weekdays]",
                    looks=_looks_like_days,
                    kind=Kind.CHOICE,
                    choices=("daily", "weekdays"),
                    twice=M.SCHEDULE_TWICE,
                ),
                Option(
                    "tag",
                    M.OPTION_TAG,
                    _tag,
                    "[tag]",
                    "networking",
                    twice=M.SCHEDULE_TWICE,
                ),
                Option(
                    "digest",
                    M.OPTION_DIGEST,
                    lambda w: WEEKDAYS[parse_weekday(w)],
                    "[digest=DAY]",
                    "fri",
                    Marked.KEY,
                    kind=Kind.CHOICE,
                    choices=WEEKDAYS,
                    twice=M.SCHEDULE_TWICE,
                ),
                Option(
                    "close",
                    M.OPTION_CLOSE,
                    lambda w: f"{parse_duration(w)}m",
                    "[close=2h]",
                    "2h",
                    Marked.KEY,
                    twice=M.SCHEDULE_TWICE,
                ),
            ),
        ),
        Verb("unschedule", M.VERB_UNSCHEDULE, spelled="schedule off"),
        Verb("review", M.VERB_REVIEW),
        Verb(
            "flag",
            M.VERB_FLAG,
            (
                Option(
                    "reason",
                    M.OPTION_FLAG_REASON,
                    _flag_reason,
                    "wrong|unclear|outdated|typo",
                    "wrong",
                    Marked.FIRST,
                    kind=Kind.CHOICE,
                    choices=FLAG_REASONS,
                    required=True,
                ),
                Option(
                    "note",
                    M.OPTION_FLAG_NOTE,
                    _flag_note,
                    "[what is wrong]",
                    "the key should be C",
                    high=FLAG_NOTE_MAX,
                ),
            ),
            raw=Option(
                "flag",
                M.VERB_FLAG,
                _flag_text,
                "wrong|unclear|outdated|typo [what is wrong]",
            ),
        ),
        Verb("add", M.VERB_ADD),
        Verb("report", M.VERB_REPORT),
        Verb(
            "proposals",
            M.VERB_PROPOSALS,
            (
                Option(
                    "action",
                    M.OPTION_PROPOSAL_ACTION,
                    _proposal_action,
                    "approve|reject",
                    "approve",
                    Marked.FIRST,
                    kind=Kind.CHOICE,
                    choices=PROPOSAL_ACTIONS,
                ),
                Option(
                    "id",
                    M.OPTION_PROPOSAL_ID,
                    _whole("id", 1, PROPOSAL_ID_MAX),
                    "ID",
                    "12",
                    kind=Kind.INTEGER,
                    low=1,
                    high=PROPOSAL_ID_MAX,
                ),
                Option(
                    "reason",
                    M.OPTION_PROPOSAL_REASON,
                    _proposal_reason,
                    "[reason]",
                    "a duplicate of an older question",
                    high=PROPOSAL_REASON_MAX,
                ),
            ),
            raw=Option(
                "proposals",
                M.VERB_PROPOSALS,
                _proposals_text,
                "[approve ID | reject ID [reason]]",
            ),
        ),
        Verb("hide", M.VERB_HIDE, (QUESTION_ID,)),
        Verb("unhide", M.VERB_UNHIDE, (QUESTION_ID,)),
        Verb(
            "dashboard",
            M.VERB_DASHBOARD,
            (
                Option(
                    "scope",
                    M.OPTION_DASHBOARD_ME,
                    _me,
                    "[me]",
                    kind=Kind.CHOICE,
                    choices=("me",),
                    looks=lambda w: w.lower() == "me",
                ),
            ),
        ),
        Verb("me", M.VERB_ME),
        Verb("track", M.VERB_TRACK),
        Verb("track-list", M.VERB_TRACK_LIST, spelled="track list"),
        Verb(
            "track-start",
            M.VERB_TRACK_START,
            (
                Option(
                    "name",
                    M.OPTION_TRACK,
                    _track_name,
                    "NAME",
                    "collectives-in-ten-days",
                    Marked.FIRST,
                    low=1,
                    high=120,
                    required=True,
                ),
                Option(
                    "time",
                    M.OPTION_TIME,
                    _checked(parse_time),
                    "[HH:MM]",
                    "09:30",
                    looks=_looks_like_time,
                    twice=M.SCHEDULE_TWICE,
                ),
                Option(
                    "tz",
                    M.OPTION_ZONE,
                    parse_zone,
                    "[Area/City]",
                    "Europe/Berlin",
                    looks=_looks_like_zone,
                    twice=M.SCHEDULE_TWICE,
                    noun="zone",
                ),
                Option(
                    "days",
                    M.OPTION_DAYS,
                    lambda w: parse_days(w).value,
                    "[daily|weekdays]",
                    looks=_looks_like_days,
                    kind=Kind.CHOICE,
                    choices=("daily", "weekdays"),
                    twice=M.SCHEDULE_TWICE,
                ),
            ),
            spelled="track start",
        ),
        Verb("track-stop", M.VERB_TRACK_STOP, spelled="track stop"),
        Verb(
            "practice",
            M.VERB_PRACTICE,
            (
                Option(
                    "topic",
                    M.OPTION_TOPIC,
                    _topic,
                    "[topic]",
                    "collectives",
                    looks=lambda w: not w.isdigit(),
                    twice=M.ONE_TOPIC,
                    low=1,
                    high=120,
                ),
                Option(
                    "count",
                    M.OPTION_COUNT,
                    _whole("count", 1, PRACTICE_MAX),
                    "[N]",
                    "5",
                    looks=str.isdigit,
                    kind=Kind.INTEGER,
                    low=1,
                    high=PRACTICE_MAX,
                ),
            ),
        ),
        Verb("help", M.VERB_HELP, words=("?",)),
    ),
)


# Each kind of /bandwidth option and the typed field a form gives it, with its reader for text.
_BANDWIDTH_KINDS: dict[BwKind, tuple[Kind, Callable[[str], object]]] = {
    BwKind.COUNT: (Kind.INTEGER, int),
    BwKind.SECONDS: (Kind.NUMBER, float),
    BwKind.NUMBER: (Kind.NUMBER, float),
    BwKind.CHOICE: (Kind.CHOICE, str),
    BwKind.SWITCH: (Kind.BOOLEAN, _on_off),
    BwKind.KEYS: (Kind.TEXT, str),
    BwKind.KEY: (Kind.TEXT, str),
}


def _bandwidth_option(opt: Opt) -> Option:
    """Return the grammar's option for a /bandwidth option of bot.bandwidth's table.

    Its name, help, limits and choices are the table's; "auto" (NCCL's own pick) is what leaving
    a choice out means, so a form does not offer it.
    """
    kind, read = _BANDWIDTH_KINDS[opt.kind]
    return Option(
        opt.name,
        opt.help,
        read,
        opt.hint,
        opt.example,
        Marked.KEY if opt.keyed else Marked.BARE,
        kind=kind,
        low=opt.low,
        high=opt.high,
        choices=tuple(c for c in opt.choices if c != "auto"),
    )


BANDWIDTH = Grammar(
    name="bandwidth",
    help=M.COMMAND_BANDWIDTH,
    verbs=(
        Verb(
            "",
            M.COMMAND_BANDWIDTH,
            (
                Option("size", M.OPTION_SIZE, str, "SIZE", "140GB", low=1, high=200),
                *(_bandwidth_option(opt) for opt in BANDWIDTH_OPTIONS),
                Option(
                    "plan",
                    M.OPTION_PLAN,
                    str,
                    "plan MODEL gpus=N",
                    "llama3-70b gpus=128 tp=8 pp=2",
                    Marked.KEY,
                    low=1,
                    high=500,
                ),
            ),
            public=True,
            raw=Option(
                "request",
                M.COMMAND_BANDWIDTH,
                _request_text,
                " ".join(["SIZE", *(opt.hint for opt in BANDWIDTH_OPTIONS)]),
            ),
            text_usage=BANDWIDTH_TEXT_USAGE,
        ),
    ),
)

GRAMMARS = (QUIZ, BANDWIDTH)
