"""Convert an Open Trivia DB API response into question files for the bank.

Open Trivia DB (https://opentdb.com/) serves questions as JSON in one of three encodings: HTML
entities (the default), RFC 3986 percent-encoding (``encode=url3986``, or the older ``urlLegacy``
with ``+`` for spaces) and base64 (``encode=base64``, every string value encoded). This module
detects the encoding, decodes every entry, and turns each usable one into the bank's question
format. It does no I/O: the caller reads the response and writes the files.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import unquote_plus

import yaml

from bot.engine.model import CHOICE_KEYS
from bot.errors import UserError

MAX_CHOICE_CHARS = 75
SOURCE_URL = "https://opentdb.com/"
LICENSE_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
TAG_RE = re.compile(r"[a-z0-9-]+")

# The API's documented response codes (https://opentdb.com/api_config.php).
RESPONSE_CODES = {
    0: "success",
    1: "no results: the database holds too few questions for the query",
    2: "invalid parameter in the request",
    3: "session token not found",
    4: "session token exhausted: every question for the query was already served",
    5: "rate limit: too many requests",
}

_TYPES = ("multiple", "boolean")
_DIFFICULTIES = ("easy", "medium", "hard")
_SLUG_MAX = 48
_HASH_CHARS = 8
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


class Encoding(StrEnum):
    """How the strings of a response are encoded."""

    HTML = "html"
    URL = "url3986"
    BASE64 = "base64"


class InvalidResponse(UserError):
    """The file is not an Open Trivia DB response at all."""


class _Skip(Exception):
    """One entry cannot be used; the message says why."""


class _Malformed(_Skip):
    """One entry does not have the shape of an Open Trivia DB result."""

    def __str__(self) -> str:
        return f"malformed entry: {self.args[0]}"


@dataclass(frozen=True, slots=True)
class ImportedQuestion:
    """One converted question, ready to be written as a file of the bank."""

    id: str
    question: str
    choices: tuple[tuple[str, str], ...]
    answer: str
    short: str
    full: str
    tags: tuple[str, ...]
    difficulty: str
    category: str

    @property
    def filename(self) -> str:
        """Return the file name this question is written to."""
        return f"{self.id}.yaml"

    def to_yaml(self) -> str:
        """Render the question in the bank's file format."""
        data: dict[str, object] = {
            "id": self.id,
            "question": self.question,
            "choices": dict(self.choices),
            "answer": self.answer,
            "explanation": {"short": self.short, "full": self.full},
            "tags": list(self.tags),
            "difficulty": self.difficulty,
            "references": [
                {"title": "Open Trivia DB", "url": SOURCE_URL},
                {"title": "Creative Commons Attribution-ShareAlike 4.0", "url": LICENSE_URL},
            ],
        }
        # safe_dump quotes any text that YAML would otherwise read as a boolean or a number
        # ("True", "no", "1969"), so every choice loads back as the string it was.
        text: str = yaml.safe_dump(
            data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
        )
        return text


@dataclass(frozen=True, slots=True)
class Skipped:
    """An entry of the response that was not converted, and why."""

    index: int
    reason: str


@dataclass(frozen=True, slots=True)
class Conversion:
    """Everything a response turned into: questions, skipped entries and the encoding seen."""

    questions: tuple[ImportedQuestion, ...]
    skipped: tuple[Skipped, ...]
    encoding: Encoding
    response_code: int


def slugify(text: str, limit: int = _SLUG_MAX) -> str:
    """Return ``text`` as lowercase ASCII words joined by hyphens, cut at a word boundary."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) <= limit:
        return slug
    cut = slug[:limit]
    if slug[limit] != "-" and "-" in cut:
        cut = cut[: cut.rindex("-")]
    return cut.strip("-")


def question_id(question: str) -> str:
    """Return the stable id of a question: a slug of its text plus a short hash of it."""
    digest = hashlib.sha256(question.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    slug = slugify(question)
    return f"{slug}-{digest}" if slug else f"q-{digest}"


def shuffle_choices(question: str, texts: Sequence[str]) -> list[str]:
    """Return ``texts`` in an order that depends only on the question and the texts themselves."""

    # A hash order rather than random.shuffle: random's algorithms may change between Python
    # versions, and a re-import must produce byte-identical files.
    def rank(text: str) -> str:
        return hashlib.sha256(f"{question}\x00{text}".encode()).hexdigest()

    return sorted(texts, key=rank)


def detect_encoding(results: Sequence[object]) -> Encoding:
    """Guess how the strings of a response's results are encoded."""
    entries = [r for r in results if isinstance(r, Mapping)]
    types = [e.get("type") for e in entries if isinstance(e.get("type"), str)]
    if types and all(_b64(str(t)) in _TYPES for t in types):
        return Encoding.BASE64
    questions = [e.get("question") for e in entries]
    texts = [q for q in questions if isinstance(q, str) and q]
    # Percent-encoded text has no literal whitespace (a space is %20 or +) and at least one
    # escape; HTML-encoded questions are sentences with spaces.
    spaceless = texts and all(not any(c.isspace() for c in t) for t in texts)
    if spaceless and any(_PERCENT_ESCAPE.search(t) for t in texts):
        return Encoding.URL
    return Encoding.HTML


def _b64(text: str) -> str | None:
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _decoder(encoding: Encoding) -> Callable[[str], str]:
    """Return the function that decodes one string, raising ``_Malformed`` on bad input."""

    def decode_b64(text: str) -> str:
        value = _b64(text)
        if value is None:
            raise _Malformed(f"text is not valid base64 of UTF-8: {text[:40]!r}")
        return value

    def decode_url(text: str) -> str:
        # unquote_plus serves both url3986 (where a literal + is always %2B) and urlLegacy.
        try:
            return unquote_plus(text, errors="strict")
        except UnicodeDecodeError as exc:
            raise _Malformed(f"text does not decode to UTF-8: {text[:40]!r}") from exc

    def decode_html(text: str) -> str:
        return html.unescape(text)

    if encoding is Encoding.BASE64:
        return decode_b64
    if encoding is Encoding.URL:
        return decode_url
    return decode_html


def _text(entry: Mapping[str, object], key: str, decode: Callable[[str], str]) -> str:
    value = entry.get(key)
    if not isinstance(value, str):
        raise _Malformed(f"'{key}' is missing or not text")
    text = " ".join(decode(value).split())
    if not text:
        raise _Malformed(f"'{key}' is empty")
    return text


def _entry(entry: object, decode: Callable[[str], str], tags: Sequence[str]) -> ImportedQuestion:
    """Convert one result, or raise ``_Skip`` saying why it cannot be used."""
    if not isinstance(entry, Mapping):
        raise _Malformed("entry is not an object")
    question = _text(entry, "question", decode)
    kind = _text(entry, "type", decode)
    if kind not in _TYPES:
        raise _Malformed(f"unknown type {kind!r} (expected multiple or boolean)")
    correct = _text(entry, "correct_answer", decode)
    raw_wrong = entry.get("incorrect_answers")
    if not isinstance(raw_wrong, list) or not raw_wrong:
        raise _Malformed("'incorrect_answers' is missing or empty")
    wrong = []
    for value in raw_wrong:
        if not isinstance(value, str):
            raise _Malformed("'incorrect_answers' holds something that is not text")
        wrong.append(_text({"incorrect_answers": value}, "incorrect_answers", decode))
    difficulty = entry.get("difficulty")
    level = decode(difficulty) if isinstance(difficulty, str) else "medium"
    level = level if level in _DIFFICULTIES else "medium"
    category_raw = entry.get("category")
    category = decode(category_raw).strip() if isinstance(category_raw, str) else ""

    if kind == "boolean":
        if correct not in ("True", "False") or wrong != ["False" if correct == "True" else "True"]:
            raise _Malformed("a boolean question needs True and False as its two answers")
        texts = ["True", "False"]
    else:
        texts = [correct, *wrong]
        if len(set(texts)) != len(texts):
            raise _Malformed("two answers have the same text")
        if len(texts) > len(CHOICE_KEYS):
            raise _Skip(f"{len(texts)} choices; at most {len(CHOICE_KEYS)} fit")
        texts = shuffle_choices(question, texts)
    too_long = [t for t in texts if len(t) > MAX_CHOICE_CHARS]
    if too_long:
        raise _Skip(
            f"choice too long for a button ({len(too_long[0])} > {MAX_CHOICE_CHARS} "
            f"characters): {too_long[0][:40]!r}..."
        )

    choices = tuple(zip(CHOICE_KEYS, texts, strict=False))
    answer = next(key for key, text in choices if text == correct)
    category_tag = slugify(category, limit=40)
    all_tags = tuple(dict.fromkeys([*tags, *([category_tag] if category_tag else [])]))
    short = f"The answer is {answer}: {correct}."
    # Open Trivia DB records no explanation and the import invents none: the full text restates
    # the question and its answer, nothing else. Sentences shared by every imported question
    # (where it comes from, its licence) would make each one a near-duplicate of all the others
    # in the linter; the references carry the source and the licence instead.
    full = f"{question} Answer: {correct}."
    return ImportedQuestion(
        id=question_id(question),
        question=question,
        choices=choices,
        answer=answer,
        short=short,
        full=full,
        tags=all_tags,
        difficulty=level,
        category=category,
    )


@dataclass(frozen=True, slots=True)
class Alike:
    """Two imported questions whose stems are nearly the same: ``later`` repeats ``first``."""

    later: ImportedQuestion
    first: ImportedQuestion
    similarity: float


def alike_stems(questions: Sequence[ImportedQuestion]) -> list[Alike]:
    """Return the pairs of questions whose stems the linter would call near-duplicates.

    An exact repeat is skipped by ``convert``; this finds the ones that differ by a word or two
    ("What does CPU stand for?" asked twice in other words), so the importer can say so at once
    instead of leaving it to ``quizbot validate --lint``.
    """
    from bot.bank.lint import Limits, similarities

    stems = [q.question for q in questions]
    pairs = similarities(stems, (1, 2), Limits().stem_similarity_percent)
    return [Alike(questions[j], questions[i], share) for i, j, share in pairs]


def check_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Return the tags if each is a valid tag, else raise ``UserError`` naming the bad one."""
    for tag in tags:
        if not TAG_RE.fullmatch(tag):
            raise UserError(f"tag {tag!r} is not valid: use lowercase letters, digits and '-'")
    return tuple(tags)


def convert(response: object, tags: Sequence[str] = ()) -> Conversion:
    """Convert a decoded Open Trivia DB JSON response into questions plus skipped entries."""
    tags = check_tags(tags)
    if not isinstance(response, Mapping):
        raise InvalidResponse("not an Open Trivia DB response: the top level is not an object")
    code = response.get("response_code")
    results = response.get("results")
    if not isinstance(code, int) or isinstance(code, bool):
        raise InvalidResponse("not an Open Trivia DB response: no integer 'response_code'")
    if not isinstance(results, list):
        raise InvalidResponse("not an Open Trivia DB response: no 'results' list")
    encoding = detect_encoding(results)
    if code != 0:
        meaning = RESPONSE_CODES.get(code, "unknown code")
        reason = f"response_code {code} ({meaning}); nothing imported"
        return Conversion((), (Skipped(0, reason),), encoding, code)

    decode = _decoder(encoding)
    converted: list[ImportedQuestion] = []
    skipped: list[Skipped] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(results, start=1):
        try:
            result = _entry(entry, decode, tags)
        except _Skip as exc:
            skipped.append(Skipped(index, str(exc)))
            continue
        if result.id in seen:
            skipped.append(Skipped(index, f"duplicate of result {seen[result.id]} ({result.id})"))
            continue
        seen[result.id] = index
        converted.append(result)
    return Conversion(tuple(converted), tuple(skipped), encoding, code)
