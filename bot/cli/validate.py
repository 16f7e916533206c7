"""``quizbot validate [PATH ...]``: check question files and print every problem."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.bank import QuestionBank
    from bot.bank.lint import Finding
    from bot.bank.templates import Template
    from bot.engine.tracks import Track


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``validate`` subcommand."""
    parser = subparsers.add_parser(
        "validate",
        help="check question files; print every problem as file:line: message",
        description=(
            "Check question files against the question format and print every problem as\n"
            "file:line: message. A PATH is a file or a folder (searched for *.yaml and *.yml).\n"
            "Without PATH, the configured question folders are checked (QUIZBOT_QUESTIONS,\n"
            "else the bundled questions/). The learning tracks in each folder's tracks/ (or a\n"
            "track file given by name) are checked against the bank: unknown question ids and\n"
            "tags are problems. The bundled computed-question templates are checked too.\n"
            "Exit status: 0 when every file is clean, 1 otherwise."
        ),
        epilog=lint_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="file or folder")
    parser.add_argument(
        "--lint",
        action="store_true",
        help="also check teaching quality (the rules below); exit 1 past a bank-wide limit",
    )
    parser.add_argument(
        "--database",
        metavar="URL",
        help=(
            "with --lint: also warn on each question whose label its answers contradict "
            f"(at {_min_answers()} answers or more), from the database at URL"
        ),
    )
    parser.set_defaults(handler=run_validate)


def _min_answers() -> int:
    from bot.engine.analytics import MIN_ANSWERS

    return MIN_ANSWERS


def lint_help() -> str:
    """Return the --lint rules and their thresholds, from the limits the linter uses."""
    from bot.bank.lint import Limits

    limits = Limits()
    stem, full = limits.stem_similarity_percent, limits.full_similarity_percent
    few, new = limits.why_not_min_words, limits.why_not_min_new_words
    low, high = limits.sorted_extreme_min_percent, limits.sorted_extreme_max_percent
    alpha = limits.significance_permille / 10
    return f"""\
--lint prints teaching-quality warnings as file:line: warning: ... [rule], then
one summary line. Rules:
  length-cue      the keyed choice is strictly the longest (in characters) of a
                  text-choice question: one where some choice is not a quantity
                  (a number with a short unit, e.g. "About 450 GB/s", "2:1", "80%")
  letter-balance  one letter keyed in over {limits.folder_letter_percent}% of a folder's questions
                  (folders of {limits.folder_min} or more); the bank-wide shares are in the summary
  give-away-word  a content word of the stem (stop words dropped, lower-cased,
                  plural stripped) in the keyed choice and in no distractor;
                  words in over {limits.give_away_common_percent}% of the bank's stems do not count
  all-none-above  "all of the above", "none of these", "both A and C"...
  numeric-order   quantities of one kind neither ascending nor descending
  near-duplicate  two stems sharing {stem}% or more of their words and word pairs,
                  or two full explanations sharing {full}% or more of their word triples
                  (Jaccard similarity over content words)
  why-not         a why_not under {few} words, or adding fewer than {new} words
                  (content words or numbers) to its choice's own; negations
                  such as "not" do not count
  primary-source  no reference to a spec, paper, vendor doc or the project's
                  own repository (blogs, wikis and forums are secondary)
  tag-names-key   a tag whose words are in the keyed choice and in no other
  reviewer-note   "unchecked", "our own arithmetic"... in text players read
  answer-leak     an explanation quoting the keyed choice of another question
                  of its topic ({limits.leak_min_words}+ words; a quantity only beside
                  {limits.leak_stem_words} words of its own stem)
Bank-wide limits (exit status 1 when passed):
  length cue over {limits.length_cue_percent}% of the text-choice questions; any letter keyed in
  over {limits.letter_percent}% of the questions; the first or last choice keyed in
  under {low}% or over {high}% of the sorted-number questions [sorted-key].
  Under {limits.min_sample} questions a share past its limit fails only when a binomial
  test gives chance under {alpha:g}% of reaching it. Warnings alone exit 0.
Computed questions: the first {TEMPLATE_SAMPLE} instances of each template are linted with the
  rules above, their warnings printed like the bank's and counted in one line.
See docs/writing-questions.md."""


def run_validate(args: argparse.Namespace) -> int:
    """Check the files, print each problem on stdout, and return 1 if there was any."""
    from bot.bank.loader import check_paths
    from bot.bank.tracks import check_tracks, is_track_file, track_files

    given: list[Path] = list(args.paths)
    # Track files named on their own are checked against the configured bank.
    paths = [p for p in given if not is_track_file(p)]
    if not paths:
        from bot.config import load_settings

        paths = load_settings().question_paths()
    bank, problems = check_paths(paths)
    tracks: dict[str, Track] = {}
    if bank is not None:
        tracks, track_problems = check_tracks(
            track_files([*paths, *(p for p in given if is_track_file(p))]), bank
        )
        problems = problems + track_problems
    for problem in problems:
        print(problem)
    if bank is None or problems:
        files = len({p.file for p in problems})
        print(
            f"quizbot validate: {_count(len(problems), 'problem')} in {_count(files, 'file')}",
            file=sys.stderr,
        )
        return 1
    if not len(bank):
        print("quizbot validate: no question files found", file=sys.stderr)
        return 1
    database = getattr(args, "database", None)
    if database and not getattr(args, "lint", False):
        print("quizbot validate: --database needs --lint", file=sys.stderr)
        return 2
    # The computed-question templates the bot draws from are checked like question files.
    from bot.bank.templates import TemplateError, load_templates

    try:
        templates = load_templates()
    except TemplateError as exc:
        print(exc)
        print("quizbot validate: a computed-question template is broken", file=sys.stderr)
        return 1
    if getattr(args, "lint", False):
        return run_lint(bank, paths, database, templates)
    print(summary(bank, paths, tracks))
    return 0


#: Instances of each computed-question template the lint draws and checks.
TEMPLATE_SAMPLE = 20


def template_findings(templates: Sequence[Template]) -> list[Finding]:
    """Return the lint's findings on the first ``TEMPLATE_SAMPLE`` instances of each template."""
    from bot.bandwidth import load_catalogue
    from bot.bank.lint import lint
    from bot.bank.templates import draw

    catalogue = load_catalogue()
    return [
        finding
        for template in templates
        for seed in range(TEMPLATE_SAMPLE)
        for finding in lint([draw(template, seed, catalogue).question]).findings
    ]


def run_lint(
    bank: QuestionBank,
    paths: Sequence[Path],
    database: str | None = None,
    templates: Sequence[Template] = (),
) -> int:
    """Print the lint's warnings, folder shares and bank-wide errors, the summary last.

    Each computed-question template's first instances are linted too: their warnings print
    like the bank's, and one line counts them.
    """
    from bot.bank.lint import lint

    labels: list[Finding] = []
    if database:
        from bot.storage import DatabaseUnusable

        try:
            labels = asyncio.run(label_findings(bank, database))
        except DatabaseUnusable as exc:
            print(f"quizbot validate: {exc}", file=sys.stderr)
            return 1
    topics = {q.id: _shown(_topic(Path(q.source), paths)) for q in bank}
    report = lint(bank.questions, topics)
    for finding in sorted([*report.findings, *labels], key=lambda f: (f.file, f.line)):
        print(finding)
    if templates:
        computed = template_findings(templates)
        for finding in computed:
            print(finding)
        print(
            f"lint: {_count(len(templates), 'computed template')}, {TEMPLATE_SAMPLE} instances "
            f"each: {_count(len(computed), 'warning')}"
        )
    for folder in report.folders:
        print(f"lint: folder {folder.scope}: {_count(folder.total, 'question')}; {folder.text()}")
    for breach in report.breaches:
        print(breach)
    line = report.summary()
    if database:
        line += f"; {len(labels)} mislabelled by their answers"
    print(line)
    return 0 if report.ok else 1


async def label_findings(bank: QuestionBank, url: str) -> list[Finding]:
    """Return a ``difficulty-label`` warning for each question its answers show mislabelled."""
    from bot.bank.lint import Finding
    from bot.engine import analytics
    from bot.storage import open_store

    store = await open_store(url, migrate=False)
    try:
        aggregates = await store.question_aggregates()
    finally:
        await store.close()
    out = []
    for r in analytics.reports(bank.questions, aggregates):
        if r.measured is None or r.measured is r.label or r.share_correct is None:
            continue
        q = bank.by_id(r.question_id)
        out.append(
            Finding(
                q.source,
                q.line_of("difficulty", "id"),
                "difficulty-label",
                f"labelled {r.label.value}, but {r.share_correct:.0%} of {r.answers} answers "
                f"were right, which is {r.measured.value}: label it {r.measured.value}",
                q.id,
            )
        )
    return out


def summary(
    bank: QuestionBank, paths: Sequence[Path], tracks: Mapping[str, Track] | None = None
) -> str:
    """Return the one-line summary of a clean bank: questions, topic folders, tags, difficulty,
    and the learning tracks when there are any."""
    topics = {_topic(Path(q.source), paths) for q in bank}
    levels = Counter(q.difficulty.value for q in bank)
    line = (
        f"ok: {_count(len(bank), 'question')}, {_count(len(topics), 'topic')} (folders), "
        f"{_count(len(bank.tags()), 'tag')}; "
        f"easy {levels['easy']}, medium {levels['medium']}, hard {levels['hard']}"
    )
    if tracks:
        units = sum(len(t.units) for t in tracks.values())
        line += f"; {_count(len(tracks), 'track')} ({_count(units, 'unit')})"
    return line


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


def _shown(path: Path) -> str:
    """Return a path relative to the working directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) or "."
    except (ValueError, OSError):
        return str(path)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
