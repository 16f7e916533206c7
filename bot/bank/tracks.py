"""Load learning tracks (``tracks/*.yaml`` beside the question folders) and check every rule.

A track file::

    title: Collectives in ten days        # required, at most 80 characters
    summary: What the track teaches.       # optional, at most 300 characters
    units:                                 # required: 1 to 60 units, in order
      - title: Why the network matters     # optional, at most 80 characters
        intro: One or two sentences.       # optional, at most 300 characters
        questions: [multinode-interconnect, infiniband-ndr-rate]
      - tag: sharp                         # or every question of one tag (at most 10)

The track's name is the file's name without ``.yaml``. Every problem names the file, the line
and the field (``units[2].questions[1]``); unknown keys, unknown question ids and unknown tags
are refused, with the nearest known spelling when there is one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bot.bank.bank import Problem, QuestionBank
from bot.bank.loader import TRACKS_FOLDER
from bot.engine.tracks import Track, Unit

NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]*")
TRACK_KEYS = ("title", "summary", "units")
UNIT_KEYS = ("title", "intro", "questions", "tag")
MAX_TITLE_CHARS = 80
MAX_TEXT_CHARS = 300
MAX_UNITS = 60
# A unit is one day's study: a tag with more questions than this is better split into units.
MAX_UNIT_QUESTIONS = 10
SUFFIXES = (".yaml", ".yml")
_STR = "tag:yaml.org,2002:str"


def track_files(paths: Sequence[Path]) -> list[Path]:
    """Return the track files of these question paths: each folder's ``tracks/*.yaml``, and any
    file given that lies in a ``tracks`` folder."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            folder = path if path.name == TRACKS_FOLDER else path / TRACKS_FOLDER
            if folder.is_dir():
                found += sorted(p for p in folder.iterdir() if p.suffix.lower() in SUFFIXES)
        elif is_track_file(path):
            found.append(path)
    unique: dict[Path, Path] = {}
    for file in found:
        unique.setdefault(file.resolve(), file)
    return list(unique.values())


def is_track_file(path: Path) -> bool:
    """Return whether a path is a track file (a YAML file in a ``tracks`` folder)."""
    return path.suffix.lower() in SUFFIXES and path.parent.name == TRACKS_FOLDER


def check_tracks(
    files: Sequence[Path], bank: QuestionBank
) -> tuple[dict[str, Track], list[Problem]]:
    """Read every track file against the bank; return the tracks by name and every problem."""
    tracks: dict[str, Track] = {}
    problems: list[Problem] = []
    for file in files:
        checker = _TrackChecker(file, bank)
        track = checker.run()
        problems += sorted(checker.problems, key=lambda p: p.line)
        if track is None:
            continue
        if track.name in tracks:
            first = tracks[track.name].source
            problems.append(Problem(str(file), 1, f"a second track named {track.name!r} ({first})"))
            continue
        tracks[track.name] = track
    return tracks, problems


def load_tracks(paths: Sequence[Path], bank: QuestionBank) -> dict[str, Track]:
    """Return the tracks of these question paths, or raise BankError with every problem."""
    from bot.bank.bank import BankError

    tracks, problems = check_tracks(track_files(paths), bank)
    if problems:
        raise BankError(problems)
    return tracks


class _TrackChecker:
    """One track file's checks; problems pile up so that all are reported at once."""

    def __init__(self, path: Path, bank: QuestionBank) -> None:
        self.path = path
        self.bank = bank
        self.problems: list[Problem] = []

    def add(self, node: Node | int, message: str) -> None:
        line = node if isinstance(node, int) else node.start_mark.line + 1
        self.problems.append(Problem(str(self.path), line, message))

    def run(self) -> Track | None:
        name = self.path.stem
        if not NAME_PATTERN.fullmatch(name):
            self.add(1, f"the file name {name!r} is the track's name: use a-z, 0-9 and -")
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.add(1, f"cannot read the file: {exc}")
            return None
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            line = mark.line + 1 if mark is not None else 1
            self.add(line, f"not valid YAML: {exc.problem or exc}")
            return None
        except yaml.YAMLError as exc:
            self.add(1, f"not valid YAML: {exc}")
            return None
        if not isinstance(root, MappingNode):
            self.add(
                root.start_mark.line + 1 if root is not None else 1,
                "a track is a mapping with title and units",
            )
            return None
        fields = self.mapping(root, "", TRACK_KEYS)
        title = self.text(fields.get("title"), "title", MAX_TITLE_CHARS)
        summary = self.text(fields.get("summary"), "summary", MAX_TEXT_CHARS)
        if "title" not in fields:
            self.add(root, "title: missing (the track's name in chat)")
        units_node = fields.get("units")
        units: list[Unit] = []
        if units_node is None:
            self.add(root, "units: missing (a list of units, one a day)")
        elif not isinstance(units_node, SequenceNode) or not units_node.value:
            self.add(units_node, "units: a list of at least one unit")
        else:
            if len(units_node.value) > MAX_UNITS:
                self.add(units_node, f"units: at most {MAX_UNITS} units")
            seen: dict[str, str] = {}
            for i, node in enumerate(units_node.value):
                unit = self.unit(node, f"units[{i + 1}]", seen)
                if unit is not None:
                    units.append(unit)
        if self.problems or title is None:
            return None
        return Track(name, title, tuple(units), summary or "", str(self.path))

    def mapping(self, node: MappingNode, where: str, known: Sequence[str]) -> dict[str, Node]:
        fields: dict[str, Node] = {}
        for key_node, value in node.value:
            key = key_node.value if isinstance(key_node, ScalarNode) else None
            named = f"{where}.{key}" if where else str(key)
            if not isinstance(key, str) or key not in known:
                near = difflib.get_close_matches(str(key), known, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                self.add(key_node, f"{named}: unknown key{hint}; known: {', '.join(known)}")
                continue
            if key in fields:
                self.add(key_node, f"{named}: given twice")
                continue
            fields[key] = value
        return fields

    def text(self, node: Node | None, what: str, limit: int) -> str | None:
        if node is None:
            return None
        if not isinstance(node, ScalarNode) or node.tag != _STR:
            self.add(node, f"{what}: must be text (quote it if YAML reads it as something else)")
            return None
        value = str(node.value).strip()
        if not value:
            self.add(node, f"{what}: must not be empty")
            return None
        if len(value) > limit:
            self.add(node, f"{what}: {len(value)} characters, at most {limit}")
            return None
        return value

    def unit(self, node: Node, where: str, seen: dict[str, str]) -> Unit | None:
        if not isinstance(node, MappingNode):
            self.add(node, f"{where}: a unit is a mapping with questions or tag (and an intro)")
            return None
        before = len(self.problems)
        fields = self.mapping(node, where, UNIT_KEYS)
        title = self.text(fields.get("title"), f"{where}.title", MAX_TITLE_CHARS)
        intro = self.text(fields.get("intro"), f"{where}.intro", MAX_TEXT_CHARS)
        listed, tag_node = fields.get("questions"), fields.get("tag")
        ids: list[str] = []
        tag: str | None = None
        if (listed is None) == (tag_node is None):
            self.add(node, f"{where}: give either questions (a list of ids) or tag, not both")
            return None
        if listed is not None:
            ids = self.question_ids(listed, f"{where}.questions")
        elif tag_node is not None:
            tag = self.text(tag_node, f"{where}.tag", 64)
            if tag is not None:
                ids = self.tagged(tag_node, tag, f"{where}.tag")
        for qid in ids:
            if qid in seen:
                self.add(node, f"{where}: question {qid!r} is already in {seen[qid]}")
            else:
                seen[qid] = where
        if len(self.problems) > before:
            return None
        return Unit(tuple(ids), intro or "", title or "", tag)

    def question_ids(self, node: Node, where: str) -> list[str]:
        if not isinstance(node, SequenceNode) or not node.value:
            self.add(node, f"{where}: a list of at least one question id")
            return []
        if len(node.value) > MAX_UNIT_QUESTIONS:
            self.add(node, f"{where}: at most {MAX_UNIT_QUESTIONS} questions a unit")
        ids: list[str] = []
        known = [q.id for q in self.bank]
        for i, item in enumerate(node.value):
            qid = self.text(item, f"{where}[{i + 1}]", 120)
            if qid is None:
                continue
            try:
                self.bank.by_id(qid)
            except KeyError:
                near = difflib.get_close_matches(qid, known, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                self.add(item, f"{where}[{i + 1}]: no question with id {qid!r}{hint}")
                continue
            if qid in ids:
                self.add(item, f"{where}[{i + 1}]: {qid!r} is listed twice")
                continue
            ids.append(qid)
        return ids

    def tagged(self, node: Node, tag: str, where: str) -> list[str]:
        questions = self.bank.filter(tag)
        if not questions:
            near = difflib.get_close_matches(tag, self.bank.tags(), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            self.add(node, f"{where}: no question has the tag {tag!r}{hint}")
            return []
        if len(questions) > MAX_UNIT_QUESTIONS:
            self.add(
                node,
                f"{where}: the tag {tag!r} has {len(questions)} questions, at most "
                f"{MAX_UNIT_QUESTIONS} a unit: list the unit's questions by id instead",
            )
            return []
        return [q.id for q in questions]
