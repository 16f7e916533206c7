"""Teaching-quality checks on a loaded question bank: the cues that let players guess.

Every rule is a pure function of the loaded questions (their text, and the file and line each key
came from); nothing here reads a file. ``lint`` runs them all and returns a ``LintReport``: the
per-question findings, the bank-wide shares, and which bank-wide limit, if any, was passed.

The rules, and the reasons behind them:

- ``length-cue``: in a text-choice question the keyed choice is strictly the longest. Writers
  qualify the right answer until it is exactly true and leave the distractors bare, so "pick the
  longest" wins far more often than chance. A question is *text-choice* unless every choice is a
  quantity (a number with at most a short unit, such as "About 450 GB/s", "2:1", "80%" or
  "every 12 hours"); among quantities length only tells the number of digits. True/False and
  Yes/No questions are left out too: "False" is always one letter longer than "True".
- ``letter-balance``: the keyed letters should spread evenly, bank-wide and in each folder.
- ``give-away-word``: a content word of the stem that appears in the keyed choice and in no
  distractor lets a player match words instead of knowing the answer.
- ``all-none-above``: "all of the above" and "none of the above" (and their variants) test
  reading the choices, not the subject.
- ``numeric-order``: quantities listed neither ascending nor descending make players hunt.
- ``near-duplicate``: two questions whose stems or full explanations share most of their word
  sequences teach the same lesson twice.
- ``why-not``: a why_not that only negates its choice, or is too short to teach anything.
- ``primary-source``: every question should cite at least one primary source (see
  ``PRIMARY_SOURCES``); blogs, encyclopaedias and forums are secondary.
- ``tag-names-key``: a tag whose words appear in the keyed choice and in no other choice names
  the answer to anyone who reads the tags.
- ``sorted-key``: in questions whose choices are sorted quantities, writers key the middle ones
  (an extreme "looks" like a trap); bank-wide, the first or last choice should be keyed in 35-65%
  of them, as it is by chance with four choices (50%).
- ``reviewer-note``: "unchecked", "our own arithmetic" and their kin are notes to the bank's
  reviewers, not something players should read: check the claim or leave it out.
- ``answer-leak``: one question's explanation quoting another question's keyed choice, in the
  same topic, gives that answer away to whoever met the first question.

The bank-wide shares are judged on a bank of ``min_sample`` questions or more; a smaller bank is
judged by a binomial test instead: its share fails only when chance alone would reach it less
often than ``significance_permille`` in a thousand (five questions all keyed A: p = 0.001).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from urllib.parse import urlparse

from bot.engine.model import CHOICE_KEYS, Question

# Every rule's name, as printed in brackets after each warning.
RULES = (
    "length-cue",
    "letter-balance",
    "give-away-word",
    "all-none-above",
    "numeric-order",
    "near-duplicate",
    "why-not",
    "primary-source",
    "tag-names-key",
    "sorted-key",
    "reviewer-note",
    "answer-leak",
)
# The rules judged on the whole bank only (a breach, not a per-question warning).
BANK_RULES = ("sorted-key",)

# ---------------------------------------------------------------- limits


@dataclass(frozen=True, slots=True)
class Limits:
    """The thresholds of the rules; percentages are whole numbers, compared exactly."""

    # Bank-wide: passing either makes the lint fail.
    length_cue_percent: int = 30
    letter_percent: int = 35
    # Bank-wide shares are judged only on at least this many questions: on a handful, one
    # question is 20% of the sample, and a single file being written could never pass.
    min_sample: int = 20
    # Under min_sample, a share past its limit fails only when a binomial test puts the chance of
    # reaching it under this many in a thousand.
    significance_permille: int = 10
    # Sorted-number questions: the first or last choice keyed in this band of them (percent).
    sorted_extreme_min_percent: int = 35
    sorted_extreme_max_percent: int = 65
    # Per folder (a warning): one letter keyed in more than half of a folder's questions.
    folder_letter_percent: int = 50
    folder_min: int = 4
    # Near-duplicates: Jaccard similarity of the sets of words and word pairs (stems) and of
    # word triples (full explanations), over content words.
    stem_similarity_percent: int = 40
    full_similarity_percent: int = 25
    # why_not: fewer words than this is too short to teach anything.
    why_not_min_words: int = 5
    # why_not: it must add at least this many content words not already in its choice.
    why_not_min_new_words: int = 3
    # give-away words: a word found in more stems than this share of the bank (and in more
    # than give_away_min_common stems) is the bank's common vocabulary ("GPU", "NCCL"), not a cue.
    give_away_common_percent: int = 10
    give_away_min_common: int = 3
    # answer-leak: a keyed choice must have at least this many words to count as quoted.
    leak_min_words: int = 3
    # answer-leak: a keyed quantity counts as quoted only beside this many words of its stem.
    leak_stem_words: int = 2
    # answer-leak: ... within this many words either side of it, in the same sentence.
    leak_window_words: int = 8


# ---------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Finding:
    """One warning about one question, at the line of the key it is about."""

    file: str
    line: int
    rule: str
    message: str
    question_id: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: warning: {self.message} [{self.rule}]"


@dataclass(frozen=True, slots=True)
class LetterShares:
    """How often each letter is the key, in the bank or in one folder."""

    scope: str
    total: int
    counts: tuple[tuple[str, int], ...]

    def percent(self, letter: str) -> float:
        """Return the share of questions keyed ``letter``, 0 to 100."""
        count = dict(self.counts).get(letter, 0)
        return 100.0 * count / self.total if self.total else 0.0

    def text(self) -> str:
        """Return the shares as ``A 25% B 26% ...``."""
        return " ".join(f"{letter} {self.percent(letter):.0f}%" for letter, _ in self.counts)


@dataclass(frozen=True, slots=True)
class Breach:
    """A bank-wide limit passed; any one makes the lint fail."""

    rule: str
    message: str

    def __str__(self) -> str:
        return f"lint: error: {self.message} [{self.rule}]"


@dataclass(frozen=True, slots=True)
class LintReport:
    """Everything the lint found about a bank."""

    findings: tuple[Finding, ...]
    questions: int
    topics: int
    text_choice: int
    length_cued: int
    letters: LetterShares
    folders: tuple[LetterShares, ...]
    breaches: tuple[Breach, ...]
    limits: Limits = field(default_factory=Limits)
    sorted_number: int = 0
    sorted_extreme: int = 0

    @property
    def ok(self) -> bool:
        """Return whether no bank-wide limit was passed."""
        return not self.breaches

    @property
    def length_cue_percent(self) -> float:
        """Return the share of text-choice questions whose key is the longest, 0 to 100."""
        return 100.0 * self.length_cued / self.text_choice if self.text_choice else 0.0

    def summary(self) -> str:
        """Return the one-line, bank-wide summary."""
        limits = self.limits
        small = ", binomial test"
        judged = "" if self.text_choice >= limits.min_sample else small
        letters_judged = "" if self.questions >= limits.min_sample else small
        sorted_judged = "" if self.sorted_number >= limits.min_sample else small
        extremes = 100.0 * self.sorted_extreme / self.sorted_number if self.sorted_number else 0.0
        warnings = len(self.findings)
        line = (
            f"lint: {_count(self.questions, 'question')} in {_count(self.topics, 'topic')}; "
            f"length cue {self.length_cue_percent:.0f}% of {self.text_choice} text-choice "
            f"(limit {limits.length_cue_percent}%{judged}); "
            f"letters {self.letters.text()} (limit {limits.letter_percent}%{letters_judged}); "
            f"extremes keyed {extremes:.0f}% of {self.sorted_number} sorted-number "
            f"(band {limits.sorted_extreme_min_percent}-{limits.sorted_extreme_max_percent}%"
            f"{sorted_judged}); "
            f"{_count(warnings, 'warning')}"
        )
        if self.breaches:
            line += f"; {_count(len(self.breaches), 'limit')} passed"
        return line


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _over(count: int, total: int, percent: int) -> bool:
    """Return whether count/total is strictly over percent%, in exact integer arithmetic."""
    return count * 100 > percent * total


# ---------------------------------------------------------------- words


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Function words and the question-writing words every stem uses; none of them can be a cue.
STOP_WORDS = _word_set(
    """
    a about above across after again against all almost along also although am among an and
    another any are aren't around as at be because been before being below between both but by
    can can't cannot could did didn't do does doesn't doing done don't down during each either
    else enough etc even ever every few for from further had has hasn't have haven't having he
    her here hers him his how however i if in into is isn't it it's its itself just least less
    let like likely many may me might more most much must my near nearly neither no nor not now
    of off often on once one only onto or other others our out over own per quite rather really
    same shall she should since so some such than that that's the their them then there these
    they this those though through thus to too toward towards two under unless until up upon us
    very via was wasn't we were weren't what what's when where whether which while who whom whose
    why will with within without won't would yes yet you your
    best choice correct describe describes following mainly most likely statement true false
    usually typically main happens happen explain explains
    """
)
# Words a why_not adds to negate its choice; they teach nothing by themselves.
NEGATIONS = _word_set(
    """
    not no never none nothing nobody isn't aren't wasn't weren't doesn't don't didn't can't
    cannot won't wouldn't shouldn't couldn't hasn't haven't wrong incorrect false untrue
    inaccurate mistaken answer choice option right true correct
    """
)
_WORD = re.compile(r"[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*")
# An acronym's plural: GPUs, NICs, TPUs (where "bus" or "status" must keep their s).
_ACRONYM_PLURAL = re.compile(r"(?:[A-Za-z0-9]+-)*[A-Z0-9]{2,}s")


@functools.lru_cache(maxsize=65536)
def normalise(word: str) -> str:
    """Return a word lower-cased with a plural or possessive ending stripped."""
    word = word.replace("’", "'")
    if word.endswith(("'s", "'S")):
        word = word[:-2]
    if _ACRONYM_PLURAL.fullmatch(word):
        return word[:-1].lower()
    word = word.lower()
    head, _, last = word.rpartition("-")
    if len(last) > 4 and last.endswith("ies"):
        last = last[:-3] + "y"
    elif len(last) > 4 and last.endswith(("sses", "xes", "shes", "tches", "nches", "rches")):
        last = last[:-2]
    elif len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is")):
        last = last[:-1]
    return f"{head}-{last}" if head else last


@functools.lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[tuple[str, str], ...]:
    """Return each word of a text as (lower-cased, normalised); every rule reads the same texts."""
    found = _WORD.findall(text.replace("’", "'"))
    return tuple((w.lower(), normalise(w)) for w in found)


def words(text: str) -> list[str]:
    """Return the normalised words of a text, in order (hyphenated compounds kept whole)."""
    return [norm for _, norm in _tokens(text)]


def content_words(text: str) -> list[str]:
    """Return the words of a text that carry meaning: no stop words, no bare numbers."""
    return [
        norm
        for raw, norm in _tokens(text)
        if raw not in STOP_WORDS
        and norm not in STOP_WORDS
        and len(norm) > 1
        and any(ch.isalpha() for ch in norm)
    ]


def _teaching_words(text: str) -> list[str]:
    """Return the content words of a text and its numbers: what a why_not can add."""
    return [
        norm
        for raw, norm in _tokens(text)
        if raw not in STOP_WORDS and norm not in STOP_WORDS and (len(norm) > 1 or norm.isdigit())
    ]


# ---------------------------------------------------------------- quantities


@dataclass(frozen=True, slots=True)
class Quantity:
    """A choice read as a number: its value in a base unit, and that unit's dimension."""

    value: float
    dimension: str


_QUALIFIER = re.compile(
    r"(?:about|around|roughly|approximately|approx\.?|nearly|almost|just|under|over|below|"
    r"above|less than|more than|up to|at least|at most|once|every|~|≈|<|>|≤|≥)\s*",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")
_RATIO = re.compile(rf"({_NUMBER.pattern})\s*:\s*({_NUMBER.pattern})")
_UNIT_WORDS = re.compile(r"(?:[%×x]|[A-Za-zµμ][A-Za-zµμ/²³]*)(?:\s+[A-Za-zµμ][A-Za-zµμ/²³]*){0,2}")
_TIME_UNITS = {
    "ns": 1e-9,
    "nanosecond": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "microsecond": 1e-6,
    "ms": 1e-3,
    "millisecond": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "min": 60.0,
    "minute": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hour": 3600.0,
    "day": 86400.0,
    "week": 604800.0,
    "month": 2629800.0,
    "year": 31557600.0,
}
_DATA_UNIT = re.compile(r"([kKMGTPE]?)(i?)(B|b|bit|bits|byte|bytes)(/s|ps)?")
_PREFIX = {"": 0, "k": 1, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}


def quantity(text: str) -> Quantity | None:
    """Return the choice as a quantity, or None when it is text.

    A quantity is an optional qualifier ("about", "under", "every"...), a number or a ratio
    ("2:1"), and at most three unit words ("GB/s", "bytes", "times", "%"); or a qualifier and a
    lone time unit ("about every minute").
    """
    rest = text.strip().rstrip(".")
    while True:
        found = _QUALIFIER.match(rest)
        if found is None or not found.group(0):
            break
        # A qualifier must stand alone: "over" but not "overlap".
        end = found.end()
        if found.group(0)[-1].isalpha() and end < len(rest) and rest[end].isalpha():
            break
        rest = rest[end:]
    ratio = _RATIO.match(rest)
    if ratio is not None:
        left, right = _to_float(ratio.group(1)), _to_float(ratio.group(2))
        if rest[ratio.end() :].strip() or right == 0:
            return None
        return Quantity(left / right, "ratio")
    number = _NUMBER.match(rest)
    if number is None:
        unit = _time_unit(rest.strip())
        return None if unit is None else Quantity(unit, "time")
    value = _to_float(number.group(0))
    unit_text = rest[number.end() :].strip()
    if not unit_text:
        return Quantity(value, "")
    if not _UNIT_WORDS.fullmatch(unit_text) or len(unit_text) > 24:
        return None
    time_factor = _time_unit(unit_text)
    if time_factor is not None:
        return Quantity(value * time_factor, "time")
    data = _DATA_UNIT.fullmatch(unit_text)
    if data is not None:
        prefix, binary, base, per_second = data.groups()
        factor = float((1024 if binary else 1000) ** _PREFIX[prefix])
        if base in ("B", "byte", "bytes"):
            factor *= 8
        return Quantity(value * factor, "bits/s" if per_second else "bits")
    return Quantity(value, unit_text.lower())


def _to_float(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def _time_unit(text: str) -> float | None:
    word = text.lower()
    if word in _TIME_UNITS:
        return _TIME_UNITS[word]
    if word.endswith("s") and word[:-1] in _TIME_UNITS and len(word) > 2:
        return _TIME_UNITS[word[:-1]]
    return None


# Two-choice questions whose choices are these words: "False" is longer than "True" whichever is
# keyed, so their lengths carry no cue.
BINARY_PAIRS = (frozenset({"true", "false"}), frozenset({"yes", "no"}))


def is_binary(question: Question) -> bool:
    """Return whether the choices are exactly True/False or Yes/No (in any case)."""
    words = frozenset(c.text.strip().lower() for c in question.choices)
    return len(question.choices) == 2 and words in BINARY_PAIRS


def is_text_choice(question: Question) -> bool:
    """Return whether any choice is text rather than a quantity (see ``quantity``).

    A True/False or Yes/No question is not text-choice: the length of its two fixed words says
    nothing about which is keyed.
    """
    if is_binary(question):
        return False
    return any(quantity(c.text) is None for c in question.choices)


# ---------------------------------------------------------------- per-question rules


def _finding(question: Question, rule: str, message: str, *keys: str) -> Finding:
    return Finding(question.source, question.line_of(*keys), rule, message, question.id)


def length_cue(question: Question) -> Finding | None:
    """Warn when a text-choice question's keyed choice is strictly the longest."""
    if not is_text_choice(question):
        return None
    key = question.answer_choice
    others = [len(c.text) for c in question.choices if c.key != question.answer]
    if not others or len(key.text) <= max(others):
        return None
    return _finding(
        question,
        "length-cue",
        f"the keyed choice {key.key} is the longest ({len(key.text)} characters, the next "
        f"{max(others)}); shorten it or give the distractors the same detail",
        f"choices.{key.key}",
        "answer",
    )


def give_away_words(question: Question, common: frozenset[str] = frozenset()) -> Finding | None:
    """Warn when a content word of the stem is in the keyed choice and in no distractor."""
    stem = set(content_words(question.text)) - common
    key = question.answer_choice
    in_key = set(content_words(key.text))
    in_others: set[str] = set()
    for c in question.choices:
        if c.key != question.answer:
            in_others.update(content_words(c.text))
    cues = sorted((stem & in_key) - in_others)
    if not cues:
        return None
    listed = ", ".join(f"'{w}'" for w in cues)
    word = "word" if len(cues) == 1 else "words"
    return _finding(
        question,
        "give-away-word",
        f"the stem's {word} {listed} appear{'s' if len(cues) == 1 else ''} in the keyed choice "
        f"{key.key} and in no distractor",
        f"choices.{key.key}",
    )


_ABOVE = re.compile(
    r"\b(?:all|none|any|both|neither|each)\s+(?:of\s+)?(?:the\s+)?"
    r"(?:above|these|those|them|others|other\s+(?:choices|answers|options))\b"
    r"|\bboth\s+[A-E]\s+and\s+[A-E]\b|\b(?:[A-E]\s+and\s+[A-E])\s*$",
    re.IGNORECASE,
)


def all_none_of_the_above(question: Question) -> list[Finding]:
    """Warn on each choice of the "all/none of the above" family."""
    out = []
    for c in question.choices:
        found = _ABOVE.search(c.text)
        if found is not None:
            out.append(
                _finding(
                    question,
                    "all-none-above",
                    f"choice {c.key} ('{found.group(0)}') points at the other choices; "
                    "write a choice that stands on its own",
                    f"choices.{c.key}",
                )
            )
    return out


def numeric_order(question: Question) -> Finding | None:
    """Warn when every choice is a quantity of one kind and they are not listed in order."""
    if len(question.choices) < 3:
        return None
    values = [quantity(c.text) for c in question.choices]
    if any(v is None for v in values):
        return None
    found = [v for v in values if v is not None]
    if len({v.dimension for v in found}) != 1:
        return None
    numbers = [v.value for v in found]
    if _monotone(numbers):
        return None
    # Point at the first choice that breaks the order of the ones before it.
    index = next(k for k in range(2, len(numbers)) if not _monotone(numbers[: k + 1]))
    shown = ", ".join(c.text for c in question.choices)
    return _finding(
        question,
        "numeric-order",
        f"the quantities are neither ascending nor descending ({shown}); list them in order",
        f"choices.{question.choices[index].key}",
        "choices",
    )


def _monotone(numbers: Sequence[float]) -> bool:
    pairs = list(itertools.pairwise(numbers))
    return all(a <= b for a, b in pairs) or all(a >= b for a, b in pairs)


def why_not_checks(question: Question, limits: Limits) -> list[Finding]:
    """Warn on each why_not that is too short, or only negates or restates its choice."""
    out = []
    for letter, text in question.why_not.items():
        try:
            choice = question.choice(letter)
        except KeyError:
            continue
        said = words(text)
        where = f"explanation.why_not.{letter}"
        if len(said) < limits.why_not_min_words:
            out.append(
                _finding(
                    question,
                    "why-not",
                    f"why_not {letter} has {len(said)} words: too short to teach why "
                    f"'{choice.text}' is wrong",
                    where,
                )
            )
            continue
        own = set(_teaching_words(choice.text))
        new = {w for w in _teaching_words(text) if w not in own and w not in NEGATIONS}
        if len(new) < limits.why_not_min_new_words:
            added = ", ".join(sorted(new)) or "nothing"
            out.append(
                _finding(
                    question,
                    "why-not",
                    f"why_not {letter} only restates or negates its choice (it adds: {added}); "
                    "say what is true instead and why",
                    where,
                )
            )
    return out


# Where a reference counts as a primary source: the standard, the paper, the vendor's own
# documentation, the project's own code and docs. A pattern is a host (matching it and its
# subdomains), optionally with a path prefix; the longest matching pattern decides.
PRIMARY_SOURCES: tuple[tuple[str, str], ...] = (
    # papers
    ("arxiv.org", "paper"),
    ("doi.org", "paper"),
    ("dl.acm.org", "paper"),
    ("acm.org", "paper"),
    ("ieeexplore.ieee.org", "paper"),
    ("computer.org", "paper"),
    ("usenix.org", "paper"),
    ("openreview.net", "paper"),
    ("proceedings.mlsys.org", "paper"),
    ("proceedings.neurips.cc", "paper"),
    ("papers.nips.cc", "paper"),
    ("proceedings.mlr.press", "paper"),
    ("aclanthology.org", "paper"),
    ("sigops.org", "paper"),
    ("research.google", "paper"),
    ("research.google.com", "paper"),
    ("link.springer.com", "paper"),
    ("sciencedirect.com", "paper"),
    ("nature.com", "paper"),
    ("semanticscholar.org", "paper"),
    # standards and specifications
    ("ieee802.org", "standard"),
    ("standards.ieee.org", "standard"),
    ("pcisig.com", "standard"),
    ("infinibandta.org", "standard"),
    ("fibrechannel.org", "standard"),
    ("t11.org", "standard"),
    ("rfc-editor.org", "standard"),
    ("ietf.org", "standard"),
    ("jedec.org", "standard"),
    ("nvmexpress.org", "standard"),
    ("ultraethernet.org", "standard"),
    ("opencompute.org", "standard"),
    ("snia.org", "standard"),
    ("cxlconsortium.org", "standard"),
    ("iso.org", "standard"),
    ("nist.gov", "standard"),
    ("thegreengrid.org", "standard"),
    ("ashrae.org", "standard"),
    # survey and measurement data from its own collectors
    ("uptimeinstitute.com", "research data"),
    # vendor and project documentation
    ("docs.nvidia.com", "vendor documentation"),
    ("nvidia.com", "vendor documentation"),
    ("developer.nvidia.com", "vendor documentation"),
    ("network.nvidia.com", "vendor documentation"),
    ("mellanox.com", "vendor documentation"),
    ("pytorch.org/docs", "vendor documentation"),
    ("docs.pytorch.org", "vendor documentation"),
    ("pytorch.org/tutorials", "vendor documentation"),
    ("docs.aws.amazon.com", "vendor documentation"),
    ("aws.amazon.com", "vendor documentation"),
    ("cloud.google.com", "vendor documentation"),
    ("learn.microsoft.com", "vendor documentation"),
    ("amd.com", "vendor documentation"),
    ("rocm.docs.amd.com", "vendor documentation"),
    ("intel.com", "vendor documentation"),
    ("broadcom.com", "vendor documentation"),
    ("arista.com", "vendor documentation"),
    ("cisco.com", "vendor documentation"),
    ("kernel.org", "vendor documentation"),
    ("man7.org", "vendor documentation"),
    ("deepspeed.ai", "vendor documentation"),
    ("doc.lustre.org", "vendor documentation"),
    ("lustre.org", "vendor documentation"),
    ("slurm.schedmd.com", "vendor documentation"),
    ("kubernetes.io", "vendor documentation"),
    ("k8s.io", "vendor documentation"),
    ("docs.oracle.com", "vendor documentation"),
    ("docs.coreweave.com", "vendor documentation"),
    ("alcf.anl.gov", "vendor documentation"),
    ("vertiv.com", "vendor documentation"),
    ("supermicro.com", "vendor documentation"),
    # the projects' own code and documentation
    ("github.com/NVIDIA/nccl", "project source"),
    ("github.com/NVIDIA/nccl-tests", "project source"),
    ("github.com/NVIDIA", "project source"),
    ("github.com/linux-rdma", "project source"),
    ("github.com/pytorch", "project source"),
    ("github.com/microsoft/DeepSpeed", "project source"),
    ("github.com/webdataset", "project source"),
    ("github.com/ROCm", "project source"),
    ("github.com/openucx", "project source"),
)
# Secondary: worth reading, but a summary of someone else's work; they win over a primary
# host when their pattern is longer (a vendor's blog is a blog).
SECONDARY_SOURCES: tuple[tuple[str, str], ...] = (
    ("wikipedia.org", "encyclopaedia"),
    ("medium.com", "blog"),
    ("substack.com", "blog"),
    ("towardsdatascience.com", "blog"),
    ("dev.to", "blog"),
    ("blogspot.com", "blog"),
    ("wordpress.com", "blog"),
    ("developer.nvidia.com/blog", "blog"),
    ("blogs.nvidia.com", "blog"),
    ("pytorch.org/blog", "blog"),
    ("aws.amazon.com/blogs", "blog"),
    ("cloud.google.com/blog", "blog"),
    ("engineering.fb.com", "blog"),
    ("rdmamojo.com", "blog"),
    ("stackoverflow.com", "forum"),
    ("stackexchange.com", "forum"),
    ("serverfault.com", "forum"),
    ("superuser.com", "forum"),
    ("reddit.com", "forum"),
    ("news.ycombinator.com", "forum"),
    ("quora.com", "forum"),
    ("forums.developer.nvidia.com", "forum"),
    ("discuss.pytorch.org", "forum"),
    ("youtube.com", "video"),
    ("servethehome.com", "press"),
    ("nextplatform.com", "press"),
    ("anandtech.com", "press"),
    ("tomshardware.com", "press"),
    ("fierceelectronics.com", "press"),
)


def classify_source(url: str) -> str:
    """Return ``primary``, ``secondary`` or ``unknown`` for a reference URL.

    The longest matching pattern of ``PRIMARY_SOURCES`` and ``SECONDARY_SOURCES`` decides. A URL
    matched only by a bare host whose path has a ``blog`` segment (or whose host starts with
    ``blog.``) is secondary: a blog on a vendor's site is still a blog.
    """
    parsed = urlparse(url)
    host = (parsed.hostname or "").lower().removeprefix("www.")
    path = parsed.path or "/"
    best = ""
    kind = "unknown"
    for table, label in ((PRIMARY_SOURCES, "primary"), (SECONDARY_SOURCES, "secondary")):
        for pattern, _ in table:
            if len(pattern) > len(best) and _source_matches(pattern, host, path):
                best, kind = pattern, label
    if "/" in best:
        return kind
    segments = [s.lower() for s in path.split("/") if s]
    if host.startswith("blog.") or any(s.startswith("blog") for s in segments):
        return "secondary"
    return kind


def _source_matches(pattern: str, host: str, path: str) -> bool:
    want_host, _, want_path = pattern.partition("/")
    if host != want_host and not host.endswith("." + want_host):
        return False
    if not want_path:
        return True
    prefix = "/" + want_path.lower()
    here = path.lower()
    return here == prefix or here.startswith(prefix + "/")


def primary_source(question: Question) -> Finding | None:
    """Warn when the question cites no primary source."""
    if not question.references:
        return _finding(
            question,
            "primary-source",
            "no references: cite at least one primary source (a spec, paper or vendor doc)",
            "id",
        )
    kinds = [classify_source(r.url) for r in question.references]
    if "primary" in kinds:
        return None
    hosts = ", ".join(
        sorted(
            {(urlparse(r.url).hostname or r.url).removeprefix("www.") for r in question.references}
        )
    )
    return _finding(
        question,
        "primary-source",
        f"no primary source among the references ({hosts}); add the spec, paper or vendor "
        "documentation the facts come from",
        "references",
    )


def _phrase(text: str) -> tuple[str, ...]:
    """Return the normalised words of a text with hyphenated compounds split apart."""
    return tuple(words(text.replace("-", " ").replace("_", " ")))


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Return whether the words of ``needle`` appear as a run in ``haystack``."""
    n = len(needle)
    if not n:
        return False
    return any(tuple(haystack[i : i + n]) == tuple(needle) for i in range(len(haystack) - n + 1))


# Two forms of one word share all but a short ending: "recomputation" and "recomputed",
# "networking" and "network". Words that short are compared whole.
_STEM_MIN = 5
_ENDING_MAX = 4


def same_word(a: str, b: str) -> bool:
    """Return whether two normalised words are forms of one word (equal, or one stem)."""
    if a == b:
        return True
    if min(len(a), len(b)) < _STEM_MIN or not (a.isalpha() and b.isalpha()):
        return False
    common = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return common >= _STEM_MIN and max(len(a), len(b)) - common <= _ENDING_MAX + 1


def _names(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Return whether the words of ``needle`` appear as a run in ``haystack``, in any form."""
    n = len(needle)
    if not n:
        return False
    return any(
        all(same_word(h, w) for h, w in zip(haystack[i : i + n], needle, strict=True))
        for i in range(len(haystack) - n + 1)
    )


def tag_names_key(question: Question) -> list[Finding]:
    """Warn on each tag whose words appear in the keyed choice and in no other choice.

    A word counts in any of its forms ("recomputation" in "activations are recomputed"): a
    player who reads the tag matches the form as easily as the word.
    """
    key = _phrase(question.answer_choice.text)
    others = [_phrase(c.text) for c in question.choices if c.key != question.answer]
    out = []
    for tag in question.tags:
        said = _phrase(tag)
        if not said or not any(ch.isalpha() for w in said for ch in w):
            continue
        if _names(key, said) and not any(_names(o, said) for o in others):
            out.append(
                _finding(
                    question,
                    "tag-names-key",
                    f"the tag '{tag}' names the keyed choice {question.answer} and no other: "
                    "players who read the tags read the answer; tag the subject instead",
                    "tags",
                )
            )
    return out


# Notes meant for the bank's reviewers; players should never read them.
REVIEWER_NOTES = re.compile(
    r"\b(?:unchecked|unverified|not\s+(?:yet\s+)?(?:checked|verified)|to\s+be\s+(?:checked|verified)"
    r"|our\s+own\s+(?:arithmetic|estimate|calculation|reckoning)|citation\s+needed"
    r"|needs?\s+a\s+source|source\s+needed)\b",
    re.IGNORECASE,
)


def reviewer_notes(question: Question) -> list[Finding]:
    """Warn on each text players read that carries a note for reviewers ("unchecked"...)."""
    texts: list[tuple[str, str, str]] = [
        ("question", "the stem", question.text),
        *((f"choices.{c.key}", f"choice {c.key}", c.text) for c in question.choices),
        ("explanation.short", "the short explanation", question.short),
        ("explanation.full", "the full explanation", question.full),
        *(
            (f"explanation.why_not.{k}", f"why_not {k}", t)
            for k, t in sorted(question.why_not.items())
        ),
        *(
            (f"references.{i}", f"reference {i + 1}'s title", r.title)
            for i, r in enumerate(question.references)
        ),
    ]
    out = []
    for key, where, text in texts:
        found = REVIEWER_NOTES.search(text)
        if found is not None:
            out.append(
                _finding(
                    question,
                    "reviewer-note",
                    f"{where} says '{found.group(0)}': a note for reviewers that players read; "
                    "check the claim against a source or leave it out",
                    key,
                )
            )
    return out


def _key_phrase(question: Question) -> tuple[str, ...]:
    """Return the keyed choice's words, qualifiers dropped ("About 450 GB/s" -> 450 gb s)."""
    text = question.answer_choice.text.strip().rstrip(".")
    while True:
        found = _QUALIFIER.match(text)
        if found is None or not found.group(0):
            break
        end = found.end()
        if found.group(0)[-1].isalpha() and end < len(text) and text[end].isalpha():
            break
        text = text[end:]
    return _phrase(text)


def answer_leaks(
    questions: Sequence[Question], topics: Mapping[str, str], limits: Limits
) -> list[Finding]:
    """Warn when an explanation quotes the keyed choice of another question in its topic.

    A keyed choice counts when it has at least ``leak_min_words`` words (numbers and units
    included), is not one of the quoting question's own choices and is not given in its stem
    (then the explanation tells nothing the question did not). A quantity ("400 Gb/s") is common
    coin, so it counts only with ``leak_stem_words`` content words of the other question's stem
    within ``leak_window_words`` of it in one sentence: "NDR carries 400 Gb/s each way" answers
    "How fast is an NDR port, each way?", "Ethernet at 400 Gb/s" does not.
    """
    by_topic: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_topic[topics[q.id]].append(q)
    out = []
    for members in by_topic.values():
        keys = [(q, _key_phrase(q)) for q in members]
        keys = [(q, k) for q, k in keys if len(k) >= limits.leak_min_words]
        for q in members:
            sentences = [_phrase(t) for t in _SENTENCE.split(f"{q.short}\n{q.full}")]
            own = {_key_phrase(q)} | {_phrase(c.text) for c in q.choices}
            given = _phrase(q.text)
            vocabulary = {w for said in sentences for w in said}
            for other, phrase in keys:
                if not vocabulary.issuperset(phrase):
                    continue
                if other.id == q.id or phrase in own or _contains(given, phrase):
                    continue
                if quantity(other.answer_choice.text) is None:
                    if not any(_contains(said, phrase) for said in sentences):
                        continue
                elif not _quoted_beside(
                    sentences, phrase, set(content_words(other.text)) - set(phrase), limits
                ):
                    continue
                out.append(
                    _finding(
                        q,
                        "answer-leak",
                        f"the explanation says '{other.answer_choice.text}', the keyed answer of "
                        f"'{other.id}' ({other.source}:{other.line_of('answer')}) in the same "
                        "topic: a player who meets this one first is told that answer",
                        "explanation.full",
                    )
                )
    return out


def _quoted_beside(
    sentences: Sequence[Sequence[str]], phrase: Sequence[str], stem: set[str], limits: Limits
) -> bool:
    """Return whether the phrase appears with enough stem words near it, in one sentence."""
    n, reach = len(phrase), limits.leak_window_words
    for said in sentences:
        for i in range(len(said) - n + 1):
            if tuple(said[i : i + n]) != tuple(phrase):
                continue
            near = set(said[max(0, i - reach) : i + n + reach])
            if len(stem & near) >= limits.leak_stem_words:
                return True
    return False


_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n")


def is_sorted_number(question: Question) -> bool:
    """Return whether every choice is a quantity of one kind, listed in order (3 or more)."""
    if len(question.choices) < 3:
        return False
    values = [quantity(c.text) for c in question.choices]
    found = [v for v in values if v is not None]
    if len(found) != len(values) or len({v.dimension for v in found}) != 1:
        return False
    return _monotone([v.value for v in found])


def keyed_extreme(question: Question) -> bool:
    """Return whether the keyed choice is the first or the last."""
    keys = [c.key for c in question.choices]
    return question.answer in (keys[0], keys[-1])


def binomial_tail(chances: Sequence[float], count: int) -> float:
    """Return the chance of ``count`` or more successes among trials of these chances."""
    # The Poisson binomial distribution, built one trial at a time.
    dist = [1.0]
    for p in chances:
        nxt = [0.0] * (len(dist) + 1)
        for k, mass in enumerate(dist):
            nxt[k] += mass * (1 - p)
            nxt[k + 1] += mass * p
        dist = nxt
    return sum(dist[count:]) if count <= len(chances) else 0.0


def _significant(chances: Sequence[float], count: int, limits: Limits) -> bool:
    """Return whether ``count`` successes are too many to put down to chance."""
    return binomial_tail(chances, count) * 1000 < limits.significance_permille


def _judged(total: int, chances: Sequence[float], count: int, limits: Limits) -> bool:
    """Return whether a share past its limit counts: a large sample, or a significant one."""
    return total >= limits.min_sample or _significant(chances, count, limits)


# ---------------------------------------------------------------- bank-wide rules


def _shingles(tokens: Sequence[str], sizes: Sequence[int]) -> frozenset[tuple[str, ...]]:
    """Return the runs of each of these lengths in the tokens (the whole text when shorter)."""
    out: set[tuple[str, ...]] = set()
    for size in sizes:
        if len(tokens) < size:
            if tokens:
                out.add(tuple(tokens))
            continue
        out.update(tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1))
    return frozenset(out)


def similarities(
    texts: Sequence[str], sizes: Sequence[int], percent: int
) -> list[tuple[int, int, float]]:
    """Return (i, j, Jaccard) for each pair i < j of texts at least ``percent``% alike.

    The texts are compared as sets of shingles (runs of ``sizes`` words) of their content words.
    An inverted index from shingle to texts counts the shared shingles of only the pairs that
    share any, so the cost follows the overlaps, not the square of the bank.
    """
    sets = [_shingles(content_words(t), sizes) for t in texts]
    index: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, shingles in enumerate(sets):
        for s in shingles:
            index[s].append(i)
    shared: Counter[tuple[int, int]] = Counter()
    for holders in index.values():
        for a in range(len(holders)):
            for b in range(a + 1, len(holders)):
                shared[holders[a], holders[b]] += 1
    out = []
    for (i, j), both in shared.items():
        union = len(sets[i]) + len(sets[j]) - both
        if union and both * 100 >= percent * union:
            out.append((i, j, both / union))
    return sorted(out)


def near_duplicates(questions: Sequence[Question], limits: Limits) -> list[Finding]:
    """Warn on the later question of each pair whose stems or full explanations are alike."""
    out = []
    checks = (
        ("stem", "question", [q.text for q in questions], (1, 2), "words and word pairs"),
        ("full explanation", "explanation.full", [q.full for q in questions], (3,), "word triples"),
    )
    limit = {
        "stem": limits.stem_similarity_percent,
        "full explanation": limits.full_similarity_percent,
    }
    for what, key, texts, sizes, unit in checks:
        percent = limit[what]
        for i, j, similarity in similarities(texts, sizes, percent):
            first, later = questions[i], questions[j]
            out.append(
                _finding(
                    later,
                    "near-duplicate",
                    f"{what} shares {similarity:.0%} of its {unit} with '{first.id}' "
                    f"({first.source}:{first.line_of(key)}; limit {percent}%): "
                    "one lesson taught twice",
                    key,
                )
            )
    return out


def letter_shares(scope: str, questions: Iterable[Question]) -> LetterShares:
    """Return how often each letter is keyed, over the letters the questions offer."""
    chosen = list(questions)
    counts = Counter(q.answer for q in chosen)
    widest = max((len(q.choices) for q in chosen), default=0)
    letters = CHOICE_KEYS[: max(widest, 1)]
    return LetterShares(scope, len(chosen), tuple((k, counts[k]) for k in letters))


def folder_balance(
    questions: Sequence[Question], topics: Mapping[str, str], limits: Limits
) -> tuple[tuple[LetterShares, ...], list[Finding]]:
    """Return each folder's letter shares, and a warning for a folder one letter dominates."""
    by_folder: dict[str, list[Question]] = {}
    for q in questions:
        by_folder.setdefault(topics[q.id], []).append(q)
    shares = []
    out = []
    for folder, members in by_folder.items():
        share = letter_shares(folder, members)
        shares.append(share)
        if len(members) < limits.folder_min:
            continue
        for letter, count in share.counts:
            if _over(count, len(members), limits.folder_letter_percent):
                first = next(q for q in members if q.answer == letter)
                out.append(
                    _finding(
                        first,
                        "letter-balance",
                        f"folder {folder} keys {letter} in {count} of {len(members)} questions "
                        f"({share.percent(letter):.0f}%, limit {limits.folder_letter_percent}%)",
                        "answer",
                    )
                )
    return tuple(shares), out


def common_words(questions: Sequence[Question], limits: Limits) -> frozenset[str]:
    """Return the stem words so widespread in this bank that they cannot be a cue."""
    counts: Counter[str] = Counter()
    for q in questions:
        counts.update(set(content_words(q.text)))
    return frozenset(
        w
        for w, n in counts.items()
        if n > limits.give_away_min_common
        and _over(n, len(questions), limits.give_away_common_percent)
    )


def default_topic(question: Question) -> str:
    """Return the folder a question's file sits in."""
    return PurePath(question.source).parent.name or "."


def lint(
    questions: Sequence[Question],
    topics: Mapping[str, str] | None = None,
    limits: Limits | None = None,
) -> LintReport:
    """Run every rule over the bank; ``topics`` maps question ids to their topic folder."""
    limits = limits or Limits()
    topic_of = dict(topics) if topics is not None else {}
    for q in questions:
        topic_of.setdefault(q.id, default_topic(q))
    common = common_words(questions, limits)
    findings: list[Finding] = []
    text_choice = cued = 0
    for q in questions:
        if is_text_choice(q):
            text_choice += 1
        cue = length_cue(q)
        if cue is not None:
            cued += 1
        single = [cue, give_away_words(q, common), numeric_order(q), primary_source(q)]
        findings.extend(f for f in single if f is not None)
        findings.extend(all_none_of_the_above(q))
        findings.extend(why_not_checks(q, limits))
        findings.extend(tag_names_key(q))
        findings.extend(reviewer_notes(q))
    findings.extend(near_duplicates(questions, limits))
    findings.extend(answer_leaks(questions, topic_of, limits))
    folders, folder_findings = folder_balance(questions, topic_of, limits)
    findings.extend(folder_findings)

    order = {q.source: i for i, q in reversed(list(enumerate(questions)))}
    findings.sort(key=lambda f: (order.get(f.file, len(order)), f.file, f.line, f.rule))
    letters = letter_shares("bank", questions)
    breaches = []
    text_chances = [1 / len(q.choices) for q in questions if is_text_choice(q)]
    if _over(cued, text_choice, limits.length_cue_percent) and _judged(
        text_choice, text_chances, cued, limits
    ):
        breaches.append(
            Breach(
                "length-cue",
                f"the keyed choice is strictly the longest in {cued} of {text_choice} "
                f"text-choice questions ({100 * cued / text_choice:.1f}%), over the "
                f"{limits.length_cue_percent}% limit" + _chance_note(text_choice, limits),
            )
        )
    for letter, count in letters.counts:
        chances = [
            1 / len(q.choices) if letter in {c.key for c in q.choices} else 0.0 for q in questions
        ]
        if _over(count, len(questions), limits.letter_percent) and _judged(
            len(questions), chances, count, limits
        ):
            breaches.append(
                Breach(
                    "letter-balance",
                    f"{letter} is the key of {count} of {len(questions)} questions "
                    f"({letters.percent(letter):.1f}%), over the {limits.letter_percent}% "
                    "limit" + _chance_note(len(questions), limits),
                )
            )
    sorted_questions = [q for q in questions if is_sorted_number(q)]
    extremes = sum(1 for q in sorted_questions if keyed_extreme(q))
    breach = _sorted_breach(sorted_questions, extremes, limits)
    if breach is not None:
        breaches.append(breach)
    return LintReport(
        findings=tuple(findings),
        questions=len(questions),
        topics=len(set(topic_of[q.id] for q in questions)),
        text_choice=text_choice,
        length_cued=cued,
        letters=letters,
        folders=folders,
        breaches=tuple(breaches),
        limits=limits,
        sorted_number=len(sorted_questions),
        sorted_extreme=extremes,
    )


def _chance_note(total: int, limits: Limits) -> str:
    """Return how a small sample was judged, for the breach message."""
    if total >= limits.min_sample:
        return ""
    return (
        f" (under {limits.min_sample} questions, and chance reaches it less than "
        f"{limits.significance_permille / 10:g}% of the time)"
    )


def _sorted_breach(questions: Sequence[Question], extremes: int, limits: Limits) -> Breach | None:
    """Return the breach when sorted-number questions key their extremes too seldom or often."""
    total = len(questions)
    if not total:
        return None
    low, high = limits.sorted_extreme_min_percent, limits.sorted_extreme_max_percent
    chances = [min(1.0, 2 / len(q.choices)) for q in questions]
    if _over(extremes, total, high):
        judged = _judged(total, chances, extremes, limits)
        side = "often"
    elif extremes * 100 < low * total:
        # Too few extremes is too many middles: the same test on the other side.
        middles = [1 - p for p in chances]
        judged = _judged(total, middles, total - extremes, limits)
        side = "seldom"
    else:
        return None
    if not judged:
        return None
    return Breach(
        "sorted-key",
        f"the first or last choice is keyed in {extremes} of {total} sorted-number questions "
        f"({100 * extremes / total:.1f}%), too {side} for the {low}-{high}% band: players learn "
        "to pick the middle (or the ends)" + _chance_note(total, limits),
    )
