"""Load the question bank from YAML files and check every rule of the question format.

Files are composed into YAML nodes rather than plain Python values so that every problem can
name the line it comes from, and so that YAML 1.1's implicit types (``yes`` read as a boolean,
``2024-01-01`` as a date) are reported instead of silently turning text into something else.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bot.bandwidth import OPS, BandwidthError, parse_size
from bot.bank.bank import BankError, Problem, QuestionBank
from bot.engine.charts import plan_problem
from bot.engine.model import (
    CHOICE_KEYS,
    ChartSpec,
    Choice,
    Difficulty,
    PlanSpec,
    Question,
    Reference,
)

ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]*")
TAG_PATTERN = re.compile(r"[a-z0-9-]+")
MIN_CHOICES = 2
MAX_CHOICE_CHARS = 75
MAX_SHORT_CHARS = 300
# A thread reply is at most 50 Slack blocks of 3,000 characters, with the why-nots and references
# beside the explanation; a Discord embed shows 4,096. Past this a reveal could not post.
MAX_FULL_CHARS = 6000
QUESTION_SUFFIXES = (".yaml", ".yml")
TRACKS_FOLDER = "tracks"

QUESTION_KEYS = (
    "id",
    "question",
    "choices",
    "answer",
    "explanation",
    "tags",
    "difficulty",
    "references",
    "image",
    "chart",
)
REQUIRED_KEYS = ("id", "question", "choices", "answer", "explanation")
EXPLANATION_KEYS = ("short", "full", "why_not")
REFERENCE_KEYS = ("title", "url")
CHART_KEYS = ("size", "op", "nodes", "gpus", "over", "plan")
PLAN_KEYS = ("model", "gpus", "tp", "pp", "cp", "zero", "seq", "batch", "gpu")
_PLAN_INTS = ("gpus", "tp", "pp", "cp", "seq", "batch")

_TAG = "tag:yaml.org,2002:"
_STR = _TAG + "str"
_BOOL = _TAG + "bool"
_INT = _TAG + "int"
_FLOAT = _TAG + "float"
_NULL = _TAG + "null"
_TIMESTAMP = _TAG + "timestamp"
_MERGE = _TAG + "merge"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
# A URL never holds the characters chat markup uses to end a link (<, >, |, ", `): a question
# file cannot close a link early and add a mention or a link of its own.
_URL = re.compile(r"https?://[^\s/<>|\"`]+[^\s<>|\"`]*")
_HTTPS_URL = re.compile(r"https://[^\s/<>|\"`]+[^\s<>|\"`]*")

_NESTED_KEYS = ("choices", "explanation", "explanation.why_not", "chart")

if TYPE_CHECKING:
    from bot.bank.templates import Template

_Pairs = dict[str, tuple[ScalarNode, Node]]
_T = TypeVar("_T")


def load_bank(paths: Sequence[Path], templates: Iterable[Template] = ()) -> QuestionBank:
    """Load every question under these files and folders, or raise BankError with all problems.

    ``templates`` are the computed questions the bank also answers for (by ``template#seed``).
    """
    bank, problems = check_paths(paths, templates)
    if bank is None:
        raise BankError(problems)
    return bank


def check_paths(
    paths: Sequence[Path], templates: Iterable[Template] = ()
) -> tuple[QuestionBank | None, list[Problem]]:
    """Check every question file under these paths; return the bank (None if any problem)."""
    problems: list[Problem] = []
    questions: list[Question] = []
    seen_ids: dict[str, str] = {}
    for file, path_problem in _question_files(paths):
        if path_problem is not None:
            problems.append(Problem(str(file), 1, path_problem))
            continue
        checker = _FileChecker(file, seen_ids)
        questions.extend(checker.run())
        problems.extend(sorted(checker.problems, key=lambda p: p.line))
    if problems:
        return None, problems
    return QuestionBank(questions, templates), []


def check_text(
    text: str, name: str, seen_ids: dict[str, str] | None = None
) -> tuple[list[Question], list[Problem]]:
    """Check question text that is not a file (a workspace's question, a form, an import).

    The same rules as a file's, problems named ``name:line``; an image must be an https URL.
    Return the questions (none when any problem was found) and the problems.
    """
    checker = _FileChecker(Path(name), {} if seen_ids is None else seen_ids, text)
    questions = checker.run()
    problems = sorted(checker.problems, key=lambda p: p.line)
    return ([] if problems else questions), problems


def _question_files(paths: Sequence[Path]) -> Iterator[tuple[Path, str | None]]:
    """Yield each question file once, in load order, or a path with the reason it holds none."""
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found = sorted(
                (
                    p
                    for p in path.rglob("*")
                    if p.suffix.lower() in QUESTION_SUFFIXES
                    and not any(part.startswith(".") for part in p.relative_to(path).parts)
                    # Learning tracks live beside the topic folders (bot.bank.tracks).
                    and p.relative_to(path).parts[0] != TRACKS_FOLDER
                    and p.is_file()
                ),
                key=lambda p: p.relative_to(path).parts,
            )
            if not found:
                yield path, "no question files (*.yaml, *.yml) in this folder"
            files = found
        elif path.exists():
            files = [path]
        else:
            yield path, "no such file or folder"
            continue
        for file in files:
            try:
                key = file.resolve()
            except (OSError, RuntimeError):
                key = file.absolute()
            if key not in seen:
                seen.add(key)
                yield file, None


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


def _key_lines(node: MappingNode, prefix: str = "") -> dict[str, int]:
    """Return the line of every key of a question, dotted below ``choices``, ``explanation``..."""
    found: dict[str, int] = {}
    for key, value in node.value:
        if not isinstance(key, ScalarNode):
            continue
        name = prefix + str(key.value)
        found.setdefault(name, _line(key))
        if isinstance(value, MappingNode) and name in _NESTED_KEYS:
            for inner, line in _key_lines(value, name + ".").items():
                found.setdefault(inner, line)
        elif isinstance(value, SequenceNode) and name == "references":
            for index, item in enumerate(value.value):
                found.setdefault(f"{name}.{index}", _line(item))
    return found


def _kind(node: Node) -> str:
    if isinstance(node, ScalarNode) and node.tag == _NULL:
        return "no value"
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return "text"


class _FileChecker:
    """Check one file, collecting problems instead of stopping at the first."""

    def __init__(self, path: Path, seen_ids: dict[str, str], text: str | None = None) -> None:
        self.path = path
        self.name = str(path)
        self.seen_ids = seen_ids
        self.problems: list[Problem] = []
        # Text given directly (a workspace's question, a form): there is no folder around it.
        self.given = text

    def add(self, where: Node | int, message: str) -> None:
        line = where if isinstance(where, int) else _line(where)
        self.problems.append(Problem(self.name, line, message))

    # ------------------------------------------------------------ file and top level

    def run(self) -> list[Question]:
        root = self.compose()
        if root is None:
            return []
        if isinstance(root, ScalarNode) and root.tag == _NULL and root.value == "":
            self.add(root, "file is empty: expected a question or a `questions:` list")
            return []
        if isinstance(root, SequenceNode):
            self.add(root, "the top level is a list; put the questions under a `questions:` key")
            return []
        if not isinstance(root, MappingNode):
            self.add(
                root,
                "the top level must be a question (a mapping of fields) or a `questions:` list, "
                f"found {_kind(root)}",
            )
            return []
        names = [k.value for k, _ in root.value if isinstance(k, ScalarNode)]
        if "questions" not in names:
            question = self.question(root)
            return [] if question is None else [question]
        return self.question_list(root)

    def compose(self) -> Node | None:
        if self.given is not None:
            return self.compose_text(self.given)
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            self.add(1, f"cannot read the file: {exc.strerror or exc}")
            return None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            self.add(line, f"not UTF-8 text: byte {data[exc.start]:#04x} cannot be decoded")
            return None
        return self.compose_text(text)

    def compose_text(self, text: str) -> Node | None:
        if not text.strip():
            self.add(1, "file is empty: expected a question or a `questions:` list")
            return None
        documents: list[Node] = []
        try:
            for document in yaml.compose_all(text, Loader=yaml.SafeLoader):
                documents.append(document)
                if len(documents) > 1:
                    self.add(
                        document,
                        "more than one YAML document (---); write one question per file "
                        "or a `questions:` list",
                    )
                    return None
        except yaml.MarkedYAMLError as exc:
            self.add_yaml_error(exc, text)
            return None
        except yaml.reader.ReaderError as exc:
            line = text.count("\n", 0, max(exc.position, 0)) + 1
            char = exc.character if isinstance(exc.character, int) else ord(exc.character)
            self.add(line, f"invalid YAML: character {char:#x} is not allowed in YAML text")
            return None
        except yaml.YAMLError as exc:
            self.add(1, f"invalid YAML: {exc}")
            return None
        except RecursionError:
            self.add(1, "invalid YAML: nested too deeply")
            return None
        if not documents:
            self.add(1, "file is empty: expected a question or a `questions:` list")
            return None
        return documents[0]

    def add_yaml_error(self, exc: yaml.MarkedYAMLError, text: str) -> None:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        # An error at the end of the stream sits after the final newline; name the last line.
        line = max(1, min(line, len(text.splitlines())))
        parts = []
        if exc.context:
            started = exc.context_mark
            if started is not None and started.line + 1 != line:
                parts.append(f"{exc.context} started at line {started.line + 1}")
            else:
                parts.append(str(exc.context))
        if exc.problem:
            parts.append(str(exc.problem))
        message = "invalid YAML: " + "; ".join(parts)
        if "'\\t'" in message:
            message += " (YAML indents with spaces, never tabs: replace the tab with spaces)"
        elif "expected <block end>" in message or "not allowed here" in message:
            message += " (check the indentation, and quote text that contains ': ')"
        self.add(line, message)

    def question_list(self, root: MappingNode) -> list[Question]:
        pairs = self.pairs(root, "")
        for name, (key, _) in pairs.items():
            if name != "questions":
                self.add(
                    key,
                    f"unexpected key '{name}' beside `questions:`; "
                    "fields belong inside a question of the list",
                )
        node = pairs["questions"][1]
        if not isinstance(node, SequenceNode):
            self.add(node, f"`questions:` must be a list of questions, found {_kind(node)}")
            return []
        if not node.value:
            self.add(node, "`questions:` is an empty list")
            return []
        questions = []
        for number, entry in enumerate(node.value, start=1):
            if not isinstance(entry, MappingNode):
                self.add(
                    entry,
                    f"entry {number} under `questions:` must be a question "
                    f"(a mapping of fields), found {_kind(entry)}",
                )
                continue
            question = self.question(entry)
            if question is not None:
                questions.append(question)
        return questions

    # ------------------------------------------------------------ building blocks

    def pairs(self, node: MappingNode, where: str) -> _Pairs:
        """Return the mapping's entries by name, reporting duplicate and non-text keys."""
        found: _Pairs = {}
        for key, value in node.value:
            if not isinstance(key, ScalarNode):
                self.add(key, f"keys{where} must be plain text, found {_kind(key)}")
                continue
            if key.tag == _MERGE:
                self.add(key, "YAML merge keys (<<) are not supported; write the fields out")
                continue
            name = key.value
            if name in found:
                first = _line(found[name][0])
                self.add(key, f"duplicate key '{name}'{where} (first at line {first})")
                continue
            found[name] = (key, value)
        return found

    def unknown_keys(self, pairs: _Pairs, known: Sequence[str], where: str) -> None:
        for name, (key, _) in pairs.items():
            if name in known:
                continue
            if not where and name in EXPLANATION_KEYS:
                hint = f"did you mean 'explanation.{name}'? It goes under `explanation:`"
            else:
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
                hint = f"did you mean '{close[0]}'?" if close else "known keys: " + ", ".join(known)
            self.add(key, f"unknown key '{name}'{where}; {hint}")

    def missing(self, pairs: _Pairs, required: Sequence[str], node: Node, prefix: str) -> None:
        for name in required:
            if name not in pairs:
                self.add(node, f"missing required field '{prefix}{name}'")

    def text(self, node: Node, what: str, limit: int | None = None, why: str = "") -> str | None:
        """Return the node's text stripped, or report why it is not usable text."""
        if not isinstance(node, ScalarNode):
            self.add(node, f"{what} must be text, found {_kind(node)}")
            return None
        if node.tag == _STR:
            if not node.value.strip():
                self.add(node, f"{what} is empty")
                return None
            if limit is not None and len(node.value) > limit:
                self.add(node, f"{what} is {len(node.value)} characters; at most {limit}{why}")
                return None
            return str(node.value).strip()
        raw = node.value
        if node.tag == _NULL:
            if raw in ("", "~"):
                self.add(node, f"{what} is empty")
            else:
                self.add(node, f'{what}: {raw} was read as null (no value); quote it: "{raw}"')
        elif node.tag == _BOOL:
            self.add(node, f'{what}: {raw} was read as a boolean; quote it: "{raw}"')
        elif node.tag in (_INT, _FLOAT):
            self.add(node, f'{what}: {raw} was read as a number; quote it: "{raw}"')
        elif node.tag == _TIMESTAMP:
            self.add(node, f'{what}: {raw} was read as a date; quote it: "{raw}"')
        else:
            self.add(node, f"{what}: unsupported YAML tag {node.tag}; write plain text")
        return None

    def word(self, node: Node, what: str) -> str | None:
        """Return a scalar's exact text (ids, letters, tags), without stripping."""
        if isinstance(node, ScalarNode) and node.tag == _STR and node.value.strip():
            return str(node.value)
        return self.text(node, what)

    def positive_int(self, node: Node, what: str) -> int | None:
        if not isinstance(node, ScalarNode):
            self.add(node, f"{what} must be a whole number, found {_kind(node)}")
            return None
        if node.tag == _BOOL:
            self.add(node, f"{what}: {node.value} was read as a boolean; write a whole number")
            return None
        if node.tag == _STR:
            self.add(node, f"{what} must be a whole number, found the text '{node.value}'")
            return None
        if node.tag != _INT:
            self.add(node, f"{what} must be a whole number, found '{node.value}'")
            return None
        try:
            value = int(yaml.SafeLoader("").construct_yaml_int(node))
        except ValueError:
            self.add(node, f"{what} must be a whole number, found '{node.value}'")
            return None
        if value < 1:
            self.add(node, f"{what} must be at least 1, found {value}")
            return None
        return value

    # ------------------------------------------------------------ one question

    def question(self, node: MappingNode) -> Question | None:
        before = len(self.problems)
        fields = self.pairs(node, "")
        self.unknown_keys(fields, QUESTION_KEYS, "")
        self.missing(fields, REQUIRED_KEYS, node, "")

        def value(name: str) -> Node | None:
            entry = fields.get(name)
            return None if entry is None else entry[1]

        qid = self.question_id(value("id"))
        text = self.optional(value("question"), lambda n: self.text(n, "question"))
        choices, keys = self.choices(value("choices"))
        answer = self.answer(value("answer"), keys)
        explanation = self.explanation(fields.get("explanation"), keys, answer)
        tags = self.optional(value("tags"), self.tags)
        difficulty = self.optional(value("difficulty"), self.difficulty)
        references = self.optional(value("references"), self.references)
        image = self.optional(value("image"), self.image)
        chart = self.chart(fields["chart"]) if "chart" in fields else None

        if len(self.problems) > before:
            return None
        if qid is None or text is None or choices is None or answer is None or explanation is None:
            return None
        short, full, why_not = explanation
        return Question(
            id=qid,
            text=text,
            choices=choices,
            answer=answer,
            short=short,
            full=full,
            why_not=why_not,
            tags=tags or (),
            difficulty=difficulty or Difficulty.MEDIUM,
            references=references or (),
            image=image,
            chart=chart,
            source=self.name,
            line=_line(node),
            lines=_key_lines(node),
        )

    @staticmethod
    def optional(node: Node | None, check: Callable[[Node], _T | None]) -> _T | None:
        return None if node is None else check(node)

    def question_id(self, node: Node | None) -> str | None:
        if node is None:
            return None
        qid = self.word(node, "id")
        if qid is None:
            return None
        if not ID_PATTERN.fullmatch(qid):
            self.add(
                node,
                f"id '{qid}' must be lowercase letters, digits and hyphens, "
                "starting with a letter or digit",
            )
            return None
        here = f"{self.name}:{_line(node)}"
        first = self.seen_ids.setdefault(qid, here)
        if first != here:
            self.add(node, f"duplicate id '{qid}' (first defined at {first})")
            return None
        return qid

    def choices(self, node: Node | None) -> tuple[tuple[Choice, ...] | None, tuple[str, ...]]:
        """Return the choices (None if any is wrong) and the valid letters used as keys."""
        if node is None:
            return None, ()
        if not isinstance(node, MappingNode):
            shape = "not a list" if isinstance(node, SequenceNode) else f"found {_kind(node)}"
            self.add(
                node, f"choices must be a mapping of letters to text (A: ..., B: ...), {shape}"
            )
            return None, ()
        before = len(self.problems)
        pairs = self.pairs(node, " in choices")
        items = list(pairs.items())
        if len(items) > len(CHOICE_KEYS):
            sixth = items[len(CHOICE_KEYS)][1][0]
            self.add(sixth, f"too many choices ({len(items)}): at most 5, A to E")
            items = items[: len(CHOICE_KEYS)]
        letters: list[str] = []
        for name, (key, _) in items:
            if name in CHOICE_KEYS:
                letters.append(name)
            elif name.upper() in CHOICE_KEYS:
                self.add(key, f"choice key '{name}' must be an uppercase letter: {name.upper()}")
            else:
                self.add(key, f"choice key '{name}' is not a letter from A to E")
        if len(letters) == len(items):
            for index, name in enumerate(letters):
                expected = CHOICE_KEYS[index]
                if name == expected:
                    continue
                key = pairs[name][0]
                if expected not in letters:
                    self.add(key, f"choice {expected} is missing: keys run A, B, C... with no gaps")
                else:
                    self.add(
                        key,
                        f"choice {name} is out of order: expected {expected} here "
                        "(keys run A, B, C... in order)",
                    )
                break
        if len(items) < MIN_CHOICES:
            self.add(node, f"needs at least {MIN_CHOICES} choices, found {len(items)}")
        out = []
        for name, (_, value) in items:
            text = self.text(
                value, f"choice {name}", MAX_CHOICE_CHARS, " (it must fit on a button)"
            )
            if text is not None:
                out.append(Choice(name, text))
        # Letters are only trusted for checking the answer and why_not when every key is one.
        valid = tuple(letters) if len(letters) == len(items) else ()
        if len(self.problems) > before:
            return None, valid
        return tuple(out), valid

    def answer(self, node: Node | None, keys: tuple[str, ...]) -> str | None:
        if node is None:
            return None
        answer = self.word(node, "answer")
        if answer is None:
            return None
        if keys and answer not in keys:
            self.add(node, f"answer '{answer}' is not one of the choice keys {', '.join(keys)}")
            return None
        if answer not in CHOICE_KEYS:
            self.add(node, f"answer '{answer}' must be a choice letter from A to E")
            return None
        return answer

    def explanation(
        self, entry: tuple[ScalarNode, Node] | None, keys: tuple[str, ...], answer: str | None
    ) -> tuple[str, str, dict[str, str]] | None:
        if entry is None:
            return None
        key, node = entry
        if not isinstance(node, MappingNode):
            self.add(
                node,
                f"explanation must be a mapping with `short:` and `full:`, found {_kind(node)}",
            )
            return None
        pairs = self.pairs(node, " in explanation")
        self.unknown_keys(pairs, EXPLANATION_KEYS, " in explanation")
        self.missing(pairs, ("short", "full"), key, "explanation.")
        short = full = None
        if "short" in pairs:
            short = self.text(
                pairs["short"][1],
                "explanation.short",
                MAX_SHORT_CHARS,
                " (it is shown privately right after answering)",
            )
        if "full" in pairs:
            full = self.text(
                pairs["full"][1],
                "explanation.full",
                MAX_FULL_CHARS,
                " (it is posted in the round's thread)",
            )
        why_not: dict[str, str] | None = {}
        if "why_not" in pairs:
            why_not = self.why_not(pairs["why_not"][1], keys, answer)
        if short is None or full is None or why_not is None:
            return None
        return short, full, why_not

    def why_not(
        self, node: Node, keys: tuple[str, ...], answer: str | None
    ) -> dict[str, str] | None:
        if not isinstance(node, MappingNode):
            self.add(
                node,
                "explanation.why_not must be a mapping from wrong choice letters to text, "
                f"found {_kind(node)}",
            )
            return None
        choices = keys or CHOICE_KEYS
        out: dict[str, str] = {}
        ok = True
        for name, (key, value) in self.pairs(node, " in explanation.why_not").items():
            if name not in choices:
                self.add(
                    key,
                    f"explanation.why_not has '{name}', which is not a choice "
                    f"(choices: {', '.join(choices)})",
                )
                ok = False
            elif name == answer:
                self.add(
                    key,
                    f"explanation.why_not has '{name}', which is the answer; "
                    "why_not explains the wrong choices",
                )
                ok = False
            text = self.text(value, f"explanation.why_not.{name}")
            if text is None:
                ok = False
            else:
                out[name] = text
        return out if ok else None

    def tags(self, node: Node) -> tuple[str, ...] | None:
        if not isinstance(node, SequenceNode):
            self.add(node, f"tags must be a list, e.g. [networking, rdma], found {_kind(node)}")
            return None
        out: list[str] = []
        ok = True
        for item in node.value:
            tag = self.word(item, "tag")
            if tag is None:
                ok = False
            elif not TAG_PATTERN.fullmatch(tag):
                self.add(item, f"tag '{tag}' must be lowercase letters, digits and hyphens")
                ok = False
            elif tag in out:
                self.add(item, f"duplicate tag '{tag}'")
                ok = False
            else:
                out.append(tag)
        return tuple(out) if ok else None

    def difficulty(self, node: Node) -> Difficulty | None:
        value = self.word(node, "difficulty")
        if value is None:
            return None
        try:
            return Difficulty(value)
        except ValueError:
            names = ", ".join(d.value for d in Difficulty)
            self.add(node, f"difficulty '{value}' must be one of {names}")
            return None

    def references(self, node: Node) -> tuple[Reference, ...] | None:
        if not isinstance(node, SequenceNode):
            self.add(
                node, f"references must be a list of {{title, url}} mappings, found {_kind(node)}"
            )
            return None
        out: list[Reference] = []
        ok = True
        for item in node.value:
            reference = self.reference(item)
            if reference is None:
                ok = False
            else:
                out.append(reference)
        return tuple(out) if ok else None

    def reference(self, node: Node) -> Reference | None:
        if not isinstance(node, MappingNode):
            self.add(node, f"a reference must be a mapping with title and url, found {_kind(node)}")
            return None
        before = len(self.problems)
        pairs = self.pairs(node, " in a reference")
        self.unknown_keys(pairs, REFERENCE_KEYS, " in a reference")
        for name in REFERENCE_KEYS:
            if name not in pairs:
                self.add(node, f"a reference is missing '{name}'")
        title = url = None
        if "title" in pairs:
            title = self.text(pairs["title"][1], "reference title")
        if "url" in pairs:
            url_node = pairs["url"][1]
            url = self.word(url_node, "reference url")
            if url is not None and not _URL.fullmatch(url):
                self.add(
                    url_node,
                    f"reference url '{url}' must start with http:// or https:// and hold no "
                    'spaces and none of < > | " `',
                )
        if len(self.problems) > before or title is None or url is None:
            return None
        return Reference(title=title, url=url)

    def image(self, node: Node) -> str | None:
        value = self.word(node, "image")
        if value is None:
            return None
        if _SCHEME.match(value) or value.startswith("//"):
            if _HTTPS_URL.fullmatch(value):
                return value
            self.add(
                node,
                f"image '{value}' must be an https URL or a path relative to the file "
                '(a URL holds no spaces and none of < > | " `)',
            )
            return None
        if self.given is not None:
            self.add(node, f"image '{value}' must be an https URL: this question has no folder")
            return None
        if value.startswith(("/", "\\", "~")) or Path(value).is_absolute():
            self.add(node, f"image '{value}' must be a path relative to the file, not absolute")
            return None
        shown = Path(self.name).parent / value
        if not (self.path.parent / value).is_file():
            self.add(node, f"image '{value}' not found: no file {shown}")
            return None
        return str(shown)

    def chart(self, entry: tuple[ScalarNode, Node]) -> ChartSpec | None:
        key, node = entry
        if not isinstance(node, MappingNode):
            self.add(
                node,
                f"chart must be a mapping like {{size: 140GB, op: allreduce}}, found {_kind(node)}",
            )
            return None
        before = len(self.problems)
        pairs = self.pairs(node, " in chart")
        self.unknown_keys(pairs, CHART_KEYS, " in chart")
        if "plan" in pairs:
            return self.plan_chart(pairs, before)
        self.missing(pairs, ("size",), key, "chart.")
        size = None
        if "size" in pairs:
            size_node = pairs["size"][1]
            size = self.text(size_node, "chart.size")
            if size is not None:
                error = _size_error(size)
                if error is not None:
                    self.add(size_node, f"chart.size '{size}' does not parse: {error}")
        op = nodes = gpus = over = None
        if "op" in pairs:
            op_node = pairs["op"][1]
            op = self.word(op_node, "chart.op")
            if op is not None and op not in OPS:
                self.add(op_node, f"chart.op '{op}' must be one of {', '.join(OPS)}")
        if "nodes" in pairs:
            nodes = self.positive_int(pairs["nodes"][1], "chart.nodes")
        if "gpus" in pairs:
            gpus = self.positive_int(pairs["gpus"][1], "chart.gpus")
        if "over" in pairs:
            over = self.chart_over(pairs["over"][1])
        if len(self.problems) > before or size is None:
            return None
        spec = ChartSpec(size=size)
        if op is not None:
            spec = replace(spec, op=op)
        if nodes is not None:
            spec = replace(spec, nodes=nodes)
        if gpus is not None:
            spec = replace(spec, gpus=gpus)
        if over is not None:
            spec = replace(spec, over=over)
        return spec

    def plan_chart(self, pairs: _Pairs, before: int) -> ChartSpec | None:
        """Return a chart that shows a training-step plan (``chart: {plan: {...}}``)."""
        for name in ("size", "op", "nodes", "gpus"):
            if name in pairs:
                self.add(
                    pairs[name][0],
                    f"chart.{name} does not go with chart.plan; a plan gives its model and gpus",
                )
        key, node = pairs["plan"]
        if not isinstance(node, MappingNode):
            self.add(
                node,
                "chart.plan must be a mapping like {model: llama3-70b, gpus: 128, tp: 8},"
                f" found {_kind(node)}",
            )
            return None
        fields = self.pairs(node, " in chart.plan")
        self.unknown_keys(fields, PLAN_KEYS, " in chart.plan")
        self.missing(fields, ("model", "gpus"), key, "chart.plan.")
        values: dict[str, int | str] = {}
        for name, (_, value_node) in fields.items():
            if name in _PLAN_INTS:
                number = self.positive_int(value_node, f"chart.plan.{name}")
                if number is not None:
                    values[name] = number
            elif name == "zero":
                zero = self.zero_stage(value_node)
                if zero is not None:
                    values[name] = zero
            elif name in ("model", "gpu"):
                word = self.text(value_node, f"chart.plan.{name}")
                if word is not None:
                    values[name] = word
        over = self.chart_over(pairs["over"][1]) if "over" in pairs else ()
        if len(self.problems) > before or over is None:
            return None
        spec = PlanSpec(
            model=str(values["model"]),
            gpus=int(values["gpus"]),
            tp=_int_or_none(values.get("tp")),
            pp=int(values.get("pp", 1)),
            cp=int(values.get("cp", 1)),
            zero=int(values.get("zero", 1)),
            seq=_int_or_none(values.get("seq")),
            batch=_int_or_none(values.get("batch")),
            gpu=None if "gpu" not in values else str(values["gpu"]),
        )
        error = _plan_error(spec, over)
        if error is not None:
            self.add(node, f"chart.plan does not work: {error}")
            return None
        return ChartSpec(over=over, plan=spec)

    def zero_stage(self, node: Node) -> int | None:
        if isinstance(node, ScalarNode) and node.tag == _INT and node.value in ("0", "1", "2", "3"):
            return int(node.value)
        self.add(
            node, f"chart.plan.zero must be 0, 1, 2 or 3, found '{getattr(node, 'value', '')}'"
        )
        return None

    def chart_over(self, node: Node) -> tuple[str, ...] | None:
        if not isinstance(node, SequenceNode):
            self.add(
                node,
                "chart.over must be a list of interconnect keys, e.g. [ib-ndr, 400gbe], "
                f"found {_kind(node)}",
            )
            return None
        keys = [self.word(item, "chart.over entry") for item in node.value]
        out = tuple(k for k in keys if k is not None)
        return out if len(out) == len(keys) else None


def _int_or_none(value: int | str | None) -> int | None:
    return None if value is None else int(value)


def _plan_error(spec: PlanSpec, over: tuple[str, ...]) -> str | None:
    """Return why the plan cannot be priced, or None when it can."""
    return plan_problem(spec, over)


def _size_error(size: str) -> str | None:
    """Return why ``size`` does not parse as a /bandwidth size, or None when it does."""
    try:
        parse_size(size)
    except BandwidthError as exc:
        return exc.message
    return None
