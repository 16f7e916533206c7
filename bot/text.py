"""Neutral rich text: sentences whose parts say what they are, formatted by each face's renderer.

The catalogue (``bot.messages``) holds the sentences as templates and ``say`` fills them in. A
part of a sentence is our own words (a ``str``), or a span that says what it is: code, emphasis,
somebody else's words, a mention, a moment, a link, an icon, a preformatted block. Slack, Discord
and the terminal each pass a ``Style`` that decides how a span looks, so no layer below the
renderers writes any markup.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from urllib.parse import quote


@dataclass(frozen=True, slots=True)
class Code:
    """Something to type, or an echo of what was typed: ``09:30``, ``/quiz next``."""

    text: str


@dataclass(frozen=True, slots=True)
class Strong:
    """Words to stress; shown as they are (any markup in them is escaped)."""

    text: str


@dataclass(frozen=True, slots=True)
class Verbatim:
    """Words of a user or of the question bank, shown exactly as written."""

    text: str


@dataclass(frozen=True, slots=True)
class Mention:
    """A user of the platform, by id."""

    user: str


class When(StrEnum):
    """How a moment reads."""

    DATE = "date"  # a day and a time of day
    RELATIVE = "relative"  # how far from now
    SOON = "soon"  # how far from now, and the time of day


@dataclass(frozen=True, slots=True)
class Moment:
    """A point in time, which each reader may see in their own time zone."""

    at: datetime
    style: When = When.DATE


@dataclass(frozen=True, slots=True)
class Link:
    """A titled link."""

    title: str
    url: str


@dataclass(frozen=True, slots=True)
class Label:
    """A lettered choice of a question, ``A`` and its text (stressed, or not)."""

    key: str
    text: str
    strong: bool = False


@dataclass(frozen=True, slots=True)
class Pre:
    """A preformatted block: a table, a usage text."""

    text: str


class Icon(StrEnum):
    """A small picture by meaning; each platform has its own emoji (the terminal has none)."""

    RIGHT = "right"
    WRONG = "wrong"
    STREAK = "streak"
    OTHER = "other"  # a choice that is not the answer, in the results
    ANSWER_EMOJI = "answer-emoji"  # the reactions that count as answers


Span = str | Code | Strong | Verbatim | Mention | Moment | Link | Label | Pre | Icon
Value = Span | int | float
_FORMATTER = string.Formatter()


@dataclass(frozen=True, slots=True)
class Text:
    """A sentence (or several) made of our words and spans."""

    spans: tuple[Span, ...] = ()

    def __add__(self, other: Text | Span) -> Text:
        extra = other.spans if isinstance(other, Text) else (other,)
        return Text(self.spans + extra)

    def __bool__(self) -> bool:
        return any(s != "" for s in self.spans)

    def plain(self) -> str:
        """Return the text with no markup, as the terminal shows it."""
        return render(self, PLAIN)

    def markdown(self) -> str:
        """Return the text with code in backticks and stress in asterisks (logs, tests)."""
        return render(self, MARKDOWN)


def text(value: Text | Span) -> Text:
    """Return a value as Text."""
    return value if isinstance(value, Text) else Text((value,))


def say(template: str, **values: Text | Value) -> Text:
    """Fill a catalogue template's ``{name}`` fields (``{n:.0f}`` formats a number)."""
    spans: list[Span] = []
    for literal, field, spec, _ in _FORMATTER.parse(template):
        if literal:
            spans.append(literal)
        if field is None:
            continue
        value = values[field]
        if isinstance(value, Text):
            spans.extend(value.spans)
        elif isinstance(value, Icon) or not isinstance(value, str | int | float):
            spans.append(value)
        else:
            spans.append(format(value, spec or ""))
    return Text(tuple(spans))


def join(parts: Iterable[Text | Span], separator: str = "\n") -> Text:
    """Join texts with a separator (our words)."""
    spans: list[Span] = []
    for n, part in enumerate(parts):
        if n:
            spans.append(separator)
        spans.extend(text(part).spans)
    return Text(tuple(spans))


def lines(*parts: Text | Span | None) -> Text:
    """Join the given texts one per line, leaving out the missing and the empty ones."""
    return join(p for p in parts if p is not None and text(p))


def plural(count: int, one: str, many: str) -> Text:
    """Fill the singular or the plural template with ``{n}``."""
    return say(one if count == 1 else many, n=count)


ECHO_MAX = 40


def echo(typed: str, limit: int = ECHO_MAX) -> Code:
    """Return what someone typed, clipped, as code: a refusal that quotes it stays short."""
    return Code(clip(typed, limit))


def safe_url(url: str) -> str:
    """Return a URL with every character that chat markup could read as its end percent-encoded.

    Kept: letters, digits and the URL delimiters other than the brackets; so ``<``, ``>``,
    ``|``, ``(``, ``)``, quotes, backticks, spaces and the rest are encoded, and a link's URL
    cannot close the link and start markup of its own, on any platform.
    """
    return quote(url, safe="%:/?#@!$&'*+,;=~-._")


def clip(value: str, limit: int) -> str:
    """Return text cut to at most ``limit`` characters, marking a cut with an ellipsis."""
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def chunks(value: str, limit: int) -> Iterator[str]:
    """Split text at line breaks (or hard, for a very long line) into pieces of at most limit."""
    piece = ""
    for line in value.split("\n"):
        while len(line) > limit:
            if piece:
                yield piece
                piece = ""
            yield line[:limit]
            line = line[limit:]
        candidate = f"{piece}\n{line}" if piece else line
        if len(candidate) > limit:
            yield piece
            piece = line
        else:
            piece = candidate
    if piece:
        yield piece


# ---------------------------------------------------------------- styles


@dataclass(frozen=True)
class Style:
    """How one face shows each kind of span."""

    literal: Callable[[str], str]
    verbatim: Callable[[str], str]
    code: Callable[[str], str]
    strong: Callable[[str], str]
    mention: Callable[[str], str]
    moment: Callable[[datetime, When], str]
    link: Callable[[str, str], str]
    label: Callable[[str, str, bool], str]
    pre: Callable[[str], str]
    icons: Mapping[Icon, str]


# The icons of faces that show Unicode emoji; a face adds how it shows the answer emoji.
EMOJI_ICONS: Mapping[Icon, str] = {
    Icon.RIGHT: "✅",
    Icon.WRONG: "❌",
    Icon.STREAK: "🔥",
    Icon.OTHER: "▫️",
}


def choice_label(key: str, text: str, limit: int) -> str:
    """Return a choice's button label, ``A. InfiniBand``, clipped to a face's ``limit``."""
    return clip(f"{key}. {text}", limit)


def markdown_link(escape: Callable[[str], str], title: str, url: str, *, preview: bool) -> str:
    """Return a Markdown link; without ``preview``, its URL in ``<>``, which Discord shows
    without a preview (``safe_url`` leaves no ``>`` or ``)`` to end it early)."""
    target = safe_url(url)
    return f"[{escape(title)}]({target if preview else f'<{target}>'})"


def markdown_style(
    escape: Callable[[str], str],
    *,
    label_max: int,
    mention: Callable[[str], str],
    moment: Callable[[datetime, When], str],
    previews: bool = True,
    pre: Callable[[str], str] = lambda t: t,
    answer_emoji: str = "",
) -> Style:
    """Return the style of a face that writes Markdown (Discord, Teams' cards).

    ``**strong**``, `` `code` ``, links and a choice's label are written alike there; each face
    brings how it escapes text, how long a button's label may be, how it names a person and
    shows a time, whether a link may show a preview, how it writes a block, and its answer emoji.
    """
    return Style(
        literal=lambda t: t,
        verbatim=escape,
        code=lambda t: "`" + t.replace("`", "'") + "`",
        strong=lambda t: f"**{escape(t)}**",
        mention=mention,
        moment=moment,
        link=lambda title, url: markdown_link(escape, title, url, preview=previews),
        label=lambda key, t, strong: (
            f"**{escape(choice_label(key, t, label_max))}**"
            if strong
            else escape(choice_label(key, t, label_max))
        ),
        pre=pre,
        icons={**EMOJI_ICONS, Icon.ANSWER_EMOJI: answer_emoji},
    )


def render(value: Text, style: Style) -> str:
    """Return the text formatted in a style."""
    out: list[str] = []
    for span in value.spans:
        match span:
            case Icon():
                out.append(style.icons.get(span, ""))
            case str():
                out.append(style.literal(span))
            case Code(text=t):
                out.append(style.code(t))
            case Strong(text=t):
                out.append(style.strong(t))
            case Verbatim(text=t):
                out.append(style.verbatim(t))
            case Mention(user=u):
                out.append(style.mention(u))
            case Moment(at=at, style=how):
                out.append(style.moment(at, how))
            case Link(title=title, url=url):
                out.append(style.link(title, url))
            case Label(key=key, text=t, strong=strong):
                out.append(style.label(key, t, strong))
            case Pre(text=t):
                out.append(style.pre(t))
    return "".join(out)


def utc_moment(at: datetime, how: When) -> str:
    """Return a moment in UTC words, for faces that cannot show local time."""
    return f"{at:%a} {at.day} {at:%b %Y}, {at:%H:%M} UTC"


def _same(value: str) -> str:
    return value


def _indent(block: str) -> str:
    return "\n".join("  " + line for line in block.rstrip().split("\n"))


PLAIN = Style(
    literal=_same,
    verbatim=_same,
    code=lambda t: f"'{t}'",
    strong=_same,
    mention=lambda u: f"@{u}",
    moment=utc_moment,
    link=lambda title, url: f"{title} ({url})",
    label=lambda key, t, _strong: f"{key}) {t}",
    pre=_indent,
    icons={},
)

MARKDOWN = Style(
    literal=_same,
    verbatim=_same,
    code=lambda t: "`" + t.replace("`", "'") + "`",
    strong=lambda t: f"*{t}*",
    mention=lambda u: f"<@{u}>",
    moment=utc_moment,
    link=lambda title, url: f"{title} ({url})",
    label=lambda key, t, strong: f"*{key}. {t}*" if strong else f"{key}. {t}",
    pre=lambda t: f"```\n{t.rstrip()}\n```",
    icons={},
)
