"""The bank the engine draws from: an ordered set of questions, and the problems found in files."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.engine.model import Question
from bot.errors import ConfigError

if TYPE_CHECKING:
    from bot.bandwidth import Catalogue
    from bot.bank.templates import Template

# Computed instances rebuilt and kept, most recently used first (a draw costs milliseconds).
INSTANCE_CACHE_SIZE = 512


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong in a question file, at a 1-based line."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class BankError(ConfigError):
    """The question files break the format; ``problems`` lists every problem found.

    A ConfigError (so a QuizbotError): the configured bank is unusable, and the command line
    reports it in one place, without a traceback, like any other configuration mistake.
    """

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


class QuestionBank:
    """An immutable, ordered set of questions with unique ids, and the computed templates.

    A computed question is not in the list: its id ``template#seed`` names a template and a
    seed, and ``by_id`` draws it again from them (the same id gives the same question while the
    template and the estimator are unchanged). A round's instance is stored as asked, and the
    engine reads that first (``QuizEngine.question``); drawing again serves ids never stored.
    """

    __slots__ = (
        "_by_folded_tag",
        "_by_id",
        "_by_tag",
        "_catalogue",
        "_instances",
        "_questions",
        "_templates",
    )

    _questions: tuple[Question, ...]
    _by_id: dict[str, Question]
    _by_tag: dict[str, tuple[Question, ...]]
    _by_folded_tag: dict[str, tuple[Question, ...]]
    _templates: dict[str, Template]
    _instances: OrderedDict[str, Question]
    _catalogue: list[Catalogue]

    def __init__(
        self,
        questions: Iterable[Question],
        templates: Iterable[Template] = (),
        catalogue: Catalogue | None = None,
    ) -> None:
        ordered = tuple(questions)
        by_id: dict[str, Question] = {}
        problems: list[Problem] = []
        for q in ordered:
            first = by_id.get(q.id)
            if first is None:
                by_id[q.id] = q
            else:
                where = f"{first.source}:{first.line}"
                problems.append(
                    Problem(q.source, q.line, f"duplicate id '{q.id}' (first defined at {where})")
                )
        if problems:
            raise BankError(problems)
        by_tag: dict[str, list[Question]] = {}
        for q in ordered:
            for tag in q.tags:
                by_tag.setdefault(tag, []).append(q)
        object.__setattr__(self, "_questions", ordered)
        object.__setattr__(self, "_by_id", by_id)
        object.__setattr__(self, "_by_tag", {t: tuple(qs) for t, qs in sorted(by_tag.items())})
        # Tags are matched regardless of case when no tag has the exact spelling (RDMA, rdma).
        folded: dict[str, list[Question]] = {}
        for q in ordered:
            for tag in dict.fromkeys(t.casefold() for t in q.tags):
                folded.setdefault(tag, []).append(q)
        object.__setattr__(self, "_by_folded_tag", {t: tuple(qs) for t, qs in folded.items()})
        object.__setattr__(self, "_templates", {t.id: t for t in templates})
        object.__setattr__(self, "_instances", OrderedDict())
        object.__setattr__(self, "_catalogue", [] if catalogue is None else [catalogue])

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"QuestionBank is immutable; cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"QuestionBank is immutable; cannot delete {name}")

    @property
    def questions(self) -> tuple[Question, ...]:
        """Return every question in load order."""
        return self._questions

    def by_id(self, question_id: str) -> Question:
        """Return the question with this id, a computed one drawn again (KeyError if none)."""
        found = self._by_id.get(question_id)
        if found is not None:
            return found
        cached = self._instances.get(question_id)
        if cached is not None:
            self._instances.move_to_end(question_id)
            return cached
        from bot.bank.templates import parse_instance_id

        parsed = parse_instance_id(question_id)
        if parsed is None or parsed[0] not in self._templates:
            raise KeyError(question_id)
        return self.instance(*parsed)

    @property
    def templates(self) -> tuple[str, ...]:
        """Return the ids of the computed-question templates, sorted."""
        return tuple(sorted(self._templates))

    def instance(self, template_id: str, seed: int) -> Question:
        """Return a template's question for a seed (KeyError for an unknown template)."""
        from bot.bank.templates import MAX_SEED, TemplateError, draw

        template = self._templates[template_id]
        if not 0 <= seed <= MAX_SEED:
            raise KeyError(f"{template_id}#{seed}")
        question_id = f"{template_id}#{seed}"
        cached = self._instances.get(question_id)
        if cached is not None:
            self._instances.move_to_end(question_id)
            return cached
        if not self._catalogue:
            from bot.bandwidth import load_catalogue

            self._catalogue.append(load_catalogue())
        try:
            question = draw(template, seed, self._catalogue[0]).question
        except TemplateError:
            raise KeyError(question_id) from None
        self._instances[question_id] = question
        if len(self._instances) > INSTANCE_CACHE_SIZE:
            self._instances.popitem(last=False)
        return question

    def with_questions(self, questions: Iterable[Question]) -> QuestionBank:
        """Return a bank of these questions with this bank's templates (a workspace's bank)."""
        return QuestionBank(
            questions, self._templates.values(), self._catalogue[0] if self._catalogue else None
        )

    def tags(self) -> tuple[str, ...]:
        """Return every tag used in the bank, sorted."""
        return tuple(self._by_tag)

    def filter(self, tag: str | None) -> tuple[Question, ...]:
        """Return the questions with this tag in load order, or all of them for ``None``."""
        if tag is None:
            return self._questions
        return self._by_tag.get(tag) or self._by_folded_tag.get(tag.casefold(), ())

    def __len__(self) -> int:
        return len(self._questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self._questions)

    def __contains__(self, question_id: object) -> bool:
        if not isinstance(question_id, str):
            return False
        try:
            self.by_id(question_id)
        except KeyError:
            return False
        return True

    def __repr__(self) -> str:
        more = f", {len(self._templates)} templates" if self._templates else ""
        return f"QuestionBank({len(self._questions)} questions{more})"
