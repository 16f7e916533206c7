"""Check that rates the questions quote for a named link agree with the /bandwidth catalogue.

A sentence of a question (its stem, choices, explanations and why_not texts, each read alone)
that names a catalogue link ("NDR", "HDR100", "NVLink 4", "fourth-generation NVLink", "PCIe 5.0",
"400GbE", "RoCE 400"...) and quotes a rate in Gb/s, GB/s, Tb/s, TB/s or MB/s must quote a rate
that one of the links it names has, read in one of these ways:

- the catalogue's data rate per direction (``rate_gbps``), in bits or bytes per second;
- twice that, where the catalogue documents the figure as the sum of both directions (its
  ``encoding`` says "both directions", as NVIDIA quotes NVLink) or the sentence says so
  ("total", "both directions", "bidirectional"...);
- one lane's or one link's share (``rate_gbps`` over the lane count of ``encoding``), where the
  sentence speaks of lanes or links; for PCIe also the raw signalling rate (lanes x GT/s) and a
  narrower slot's share (x8, x4...) where the sentence names the width;
- any of those times a count the sentence gives ("eight NDR ports", "four 200 Gb/s HDR NICs",
  "18 ... links", or a count spelled out anywhere in it: "so eight should give");
- in a sentence that reports a measurement ("measured", "reached", "in practice", "expect",
  "busbw"...), any figure up to the largest of those: achieved throughput sits below line rate,
  never above it;
- a split port's rate, named by the link ("NDR200" is half an NDR port, "HDR100" half an HDR
  one); a name whose number is not a half or a quarter of the port names the plain link.

A sentence that says "Ethernet" may quote any Ethernet rate of the catalogue in bits per second
(Ethernet is named by its rate: "100 Gb/s to 11 seconds"), and a rate right after "than" or
"versus" is a comparison, not a claim. A sentence that explains a mistake ("forgetting that the
rate is in bits", "treats the 900 as gigabits") quotes the wrong figure on purpose and is not
checked. Rates are compared within 3%, so prose may round (PCIe 4.0 x16's 31.5 GB/s as
"32 GB/s"). A rate right before "card", "NIC" or "adapter" describes a network device, and is
compared only with the network links of its sentence: "a 400 Gb/s network card in a PCIe 5.0
slot" is not about PCIe.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.bandwidth import Catalogue, Interconnect
from bot.engine.model import Question

TOLERANCE = 0.03
NETWORK_FAMILIES = frozenset({"infiniband", "ethernet", "roce", "efa", "slingshot", "omnipath"})

_ORDINALS = {"third": "3", "fourth": "4", "fifth": "5"}
# (pattern, catalogue key or a function of the match) for each way the text names a link.
_MENTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:InfiniBand\s+)?EDR(?!\d)\b"), "ib-edr"),
    (re.compile(r"\b(?:InfiniBand\s+)?HDR(?!\d)\b"), "ib-hdr"),
    (re.compile(r"\b(?:InfiniBand\s+)?NDR(?!\d)\b"), "ib-ndr"),
    (re.compile(r"\b(?:InfiniBand\s+)?XDR(?!\d)\b"), "ib-xdr"),
    (re.compile(r"\bNVLink[ -]?(?:gen(?:eration)?\s*)?([345])\b", re.IGNORECASE), "nvlink{0}"),
    (re.compile(r"\b(third|fourth|fifth)[- ]generation\s+NVLink\b", re.IGNORECASE), "nvlink{0}"),
    (re.compile(r"\bPCIe\s*(?:Gen\s*)?([3456])(?:\.0)?\b", re.IGNORECASE), "pcie{0}"),
    (re.compile(r"\b(1|10|25|100|200|400|800)\s?GbE\b"), "{0}gbe"),
    (re.compile(r"\b(1|10|25|100|200|400|800)\s?(?:G|Gb|Gbit|Gb/s|Gbps)\s+Ethernet\b"), "{0}gbe"),
    (re.compile(r"\bRoCE(?:\s*v2)?\s*(100|200|400)\s*G?\b"), "roce-{0}"),
    (re.compile(r"\b(32|64|128)GFC\b"), "fc{0}"),
)
_SPLIT_PORT = re.compile(r"\b(EDR|HDR|NDR|XDR)(\d{2,3})\b")
_RATE = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s*(Tb/s|Tbps|TB/s|Gb/s|Gbps|Gbit/s|GB/s|Mb/s|Mbps|MB/s)"
)
_BITS_PER = {
    "Tb/s": 1e12,
    "Tbps": 1e12,
    "TB/s": 8e12,
    "Gb/s": 1e9,
    "Gbps": 1e9,
    "Gbit/s": 1e9,
    "GB/s": 8e9,
    "Mb/s": 1e6,
    "Mbps": 1e6,
    "MB/s": 8e6,
}
_ETHERNET = re.compile(r"\bEthernet\b|GbE\b")
_MISTAKE = re.compile(
    r"\b(?:forget\w*|forgott\w*|mistak\w*|confus\w*|treats?|treating|misread\w*|as if|wrongly)\b",
    re.IGNORECASE,
)
_COMPARED = re.compile(r"\b(?:than|versus|vs\.?)\s*$")
_DEVICE_AFTER = re.compile(r"\s*(?:\([^)]*\)\s*)?(?:network\s+)?(?:card|NIC|adapter|HCA)s?\b")
_BOTH_WAYS = re.compile(
    r"\b(?:total|both directions|bidirectional|bi-directional|two-way|combined|aggregate|"
    r"in and out|sum of)\b",
    re.IGNORECASE,
)
_LANES = re.compile(r"\b(?:lanes?|links?|each|per[- ]lane|per[- ]link)\b", re.IGNORECASE)
_WIDTH = re.compile(r"\bx(1|2|4|8|16)\b")
_COUNT_WORDS = {
    "two": 2,
    "four": 4,
    "eight": 8,
    "twelve": 12,
    "sixteen": 16,
    "eighteen": 18,
    "thirty-two": 32,
    "sixty-four": 64,
}
_COUNT = re.compile(
    r"\b(\d+|" + "|".join(_COUNT_WORDS) + r")\s+(?:[\w/.,-]+\s+){0,3}?"
    r"(?:ports?|NICs?|adapters?|HCAs?|links?|lanes?|rails?|GPUs?|cards?)\b",
    re.IGNORECASE,
)
_SPELLED_COUNT = re.compile(r"\b(" + "|".join(_COUNT_WORDS) + r")\b", re.IGNORECASE)
# Words that mark a figure as measured or achieved rather than the link's rate.
_MEASURED = re.compile(
    r"\b(?:measur\w*|reach\w*|achiev\w*|observ\w*|in practice|expect\w*|quotes?|quoted|"
    r"reports?|reported|sustain\w*|tops? out|busbw|bus bandwidth|algbw)\b",
    re.IGNORECASE,
)
_ENCODING_LANES = re.compile(r"^(\d+)\s+(?:lanes?\s+|links?\s+|parallel lanes\s+)?x\s")
_ENCODING_GTS = re.compile(r"(\d+)\s+lanes\s+x\s+([\d.]+)\s+GT/s")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate quoted in a sentence, in bits per second, with where it stood."""

    bits_per_s: float
    text: str
    unit: str
    start: int
    end: int

    @property
    def in_bits(self) -> bool:
        """Return whether the rate was quoted in bits (Gb/s, Gbps) rather than bytes (GB/s)."""
        return self.unit[1] == "b"


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A quoted rate no link named in its sentence has."""

    question_id: str
    where: str
    rate: str
    links: tuple[str, ...]
    sentence: str

    def __str__(self) -> str:
        return (
            f"{self.question_id} ({self.where}): {self.rate} matches none of "
            f"{', '.join(self.links)}: {self.sentence!r}"
        )


def mentions(sentence: str, catalogue: Catalogue) -> list[tuple[Interconnect, float | None]]:
    """Return each catalogue link the sentence names, with a split port's own rate if any."""
    found: list[tuple[Interconnect, float | None]] = []
    for pattern, key in _MENTIONS:
        for m in pattern.finditer(sentence):
            groups = [_ORDINALS.get(g.lower(), g) for g in m.groups()]
            name = key.format(*groups)
            if name in catalogue:
                found.append((catalogue.get(name), None))
    for m in _SPLIT_PORT.finditer(sentence):
        name = "ib-" + m.group(1).lower()
        if name not in catalogue:
            continue
        link = catalogue.get(name)
        split = float(m.group(2)) * 1e9
        halves = (link.rate_gbps * 1e9 / 2, link.rate_gbps * 1e9 / 4)
        found.append((link, split if any(_close(split, h) for h in halves) else None))
    return found


def rates(sentence: str) -> list[Rate]:
    """Return every rate quoted in the sentence."""
    out = []
    for m in _RATE.finditer(sentence):
        value = float(m.group(1).replace(",", "")) * _BITS_PER[m.group(2)]
        out.append(Rate(value, m.group(0), m.group(2), m.start(), m.end()))
    return out


def allowed(link: Interconnect, sentence: str) -> set[float]:
    """Return the rates, in bits per second, a sentence may quote for this link."""
    rate = link.rate_gbps * 1e9
    base = {rate}
    if "both directions" in link.encoding or _BOTH_WAYS.search(sentence):
        base.add(2 * rate)
    lanes = _ENCODING_LANES.match(link.encoding)
    if lanes and _LANES.search(sentence):
        n = int(lanes.group(1))
        base.update({rate / n, 2 * rate / n} if "both directions" in link.encoding else {rate / n})
    raw = _ENCODING_GTS.search(link.encoding)
    if raw:
        n, gts = int(raw.group(1)), float(raw.group(2))
        base.add(n * gts * 1e9)
        if _LANES.search(sentence):
            base.update({rate / n, gts * 1e9})
        for width in _WIDTH.findall(sentence):
            base.update({rate * int(width) / n, gts * 1e9 * int(width)})
    counts = {_count(m.group(1)) for m in _COUNT.finditer(sentence)}
    counts |= {_count(m.group(1)) for m in _SPELLED_COUNT.finditer(sentence)}
    return base | {value * c for value in base for c in counts if c > 1}


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _COUNT_WORDS[word.lower()]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(a, b)


def sentences(text: str) -> list[str]:
    """Return the sentences of a text, its whitespace folded."""
    flat = " ".join(text.split())
    return [s for s in _SENTENCE_END.split(flat) if s]


@dataclass(frozen=True, slots=True)
class Comparison:
    """One quoted rate compared with the links its sentence names."""

    rate: str
    links: tuple[str, ...]
    sentence: str
    ok: bool


def compare_text(text: str, catalogue: Catalogue) -> Iterator[Comparison]:
    """Yield a comparison for each rate quoted in a sentence that names a catalogue link."""
    for sentence in sentences(text):
        named = mentions(sentence, catalogue)
        if not named or _MISTAKE.search(sentence):
            continue
        # Ethernet is named by its rate: a sentence about Ethernet may quote any of its rates.
        ethernet = (
            {ic.rate_gbps * 1e9 for ic in catalogue if ic.family == "ethernet"}
            if _ETHERNET.search(sentence)
            else set()
        )
        for rate in rates(sentence):
            if _COMPARED.search(sentence, 0, rate.start):
                continue  # "faster than 1 Gb/s": a comparison, not a claim about the link
            if rate.in_bits and any(_close(rate.bits_per_s, e) for e in ethernet):
                continue
            device = _DEVICE_AFTER.match(sentence, rate.end) is not None
            links = [
                (link, split)
                for link, split in named
                if not device or link.family in NETWORK_FAMILIES
            ]
            if not links:
                continue
            values = {
                value
                for link, split in links
                for value in ({split} if split is not None else allowed(link, sentence))
            }
            ok = any(_close(rate.bits_per_s, value) for value in values)
            if not ok and _MEASURED.search(sentence):
                # A measured figure may be anything up to what the named links can carry.
                ok = rate.bits_per_s <= max(values) * (1 + TOLERANCE)
            names = tuple(dict.fromkeys(link.key for link, _ in links))
            yield Comparison(rate.text, names, sentence, ok)


def question_texts(question: Question) -> Iterator[tuple[str, str]]:
    """Yield (where, text) for each text of a question a player reads."""
    yield "question", question.text
    for choice in question.choices:
        yield f"choice {choice.key}", choice.text
    yield "explanation.short", question.short
    yield "explanation.full", question.full
    for letter, text in question.why_not.items():
        yield f"why_not {letter}", text


def compare_question(question: Question, catalogue: Catalogue) -> list[tuple[str, Comparison]]:
    """Return (where, comparison) for every rate of the question beside a named link."""
    return [
        (where, c)
        for where, text in question_texts(question)
        for c in compare_text(text, catalogue)
    ]


def check_question(question: Question, catalogue: Catalogue) -> list[Mismatch]:
    """Return every rate in the question that disagrees with the catalogue."""
    return [
        Mismatch(question.id, where, c.rate, c.links, c.sentence)
        for where, c in compare_question(question, catalogue)
        if not c.ok
    ]
