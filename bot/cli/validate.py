"""``quizbot validate [PATH ...]``: check question files and print every problem."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.engine.loader import QuestionBank


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``validate`` subcommand."""
    parser = subparsers.add_parser(
        "validate",
        help="check question files; print every problem as file:line: message",
        description=(
            "Check question files against the question format and print every problem as "
            "file:line: message. A PATH is a file or a folder (searched for *.yaml and *.yml). "
            "Without PATH, the configured question folders are checked (QUIZBOT_QUESTIONS, "
            "else the bundled questions/). Exit status: 0 when every file is clean, 1 otherwise."
        ),
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="file or folder")
    parser.set_defaults(handler=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    """Check the files, print each problem on stdout, and return 1 if there was any."""
    from bot.engine.loader import check_paths

    paths: list[Path] = list(args.paths)
    if not paths:
        from bot.config import load_settings

        paths = load_settings().question_paths()
    bank, problems = check_paths(paths)
    for problem in problems:
        print(problem)
    if bank is None:
        files = len({p.file for p in problems})
        print(
            f"quizbot validate: {_count(len(problems), 'problem')} in {_count(files, 'file')}",
            file=sys.stderr,
        )
        return 1
    if not len(bank):
        print("quizbot validate: no question files found", file=sys.stderr)
        return 1
    print(summary(bank, paths))
    return 0


def summary(bank: QuestionBank, paths: Sequence[Path]) -> str:
    """Return the one-line summary of a clean bank: questions, topic folders, tags, difficulty."""
    topics = {_topic(Path(q.source), paths) for q in bank}
    levels = Counter(q.difficulty.value for q in bank)
    return (
        f"ok: {_count(len(bank), 'question')}, {_count(len(topics), 'topic')} (folders), "
        f"{_count(len(bank.tags()), 'tag')}; "
        f"easy {levels['easy']}, medium {levels['medium']}, hard {levels['hard']}"
    )


def _topic(source: Path, paths: Sequence[Path]) -> Path:
    """Return the topic folder of a file: the first folder below the path it was found under."""
    for root in paths:
        try:
            parts = source.relative_to(root).parts
        except ValueError:
            continue
        if len(parts) > 1:
            return root / parts[0]
        if parts:
            return root
    return source.parent


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
