"""The bank the engine draws from: an ordered set of questions, and the problems found in files."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bot.engine.model import Question
from bot.errors import ConfigError


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
    """An immutable, ordered set of questions with unique ids."""

    __slots__ = ("_by_folded_tag", "_by_id", "_by_tag", "_questions")

    _questions: tuple[Question, ...]
    _by_id: dict[str, Question]
    _by_tag: dict[str, tuple[Question, ...]]
    _by_folded_tag: dict[str, tuple[Question, ...]]

    def __init__(self, questions: Iterable[Question]) -> None:
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

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"QuestionBank is immutable; cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"QuestionBank is immutable; cannot delete {name}")

    @property
    def questions(self) -> tuple[Question, ...]:
        """Return every question in load order."""
        return self._questions

    def by_id(self, question_id: str) -> Question:
        """Return the question with this id (KeyError if there is none)."""
        return self._by_id[question_id]

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
        return question_id in self._by_id

    def __repr__(self) -> str:
        return f"QuestionBank({len(self._questions)} questions)"
