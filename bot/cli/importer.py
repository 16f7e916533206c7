"""``quizbot import opentdb FILE.json``: turn an Open Trivia DB response into question files."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.errors import UserError
from bot.platforms import CHATS

# Outside the bundled bank: imported questions have no why_not until someone writes them.
DEFAULT_OUT = Path("imported-questions")


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``import`` subcommand and its ``opentdb`` source."""
    parser = subparsers.add_parser(
        "import",
        help="turn questions from another source into question files",
        description="Turn questions from another source into question files of the bank.",
    )
    sources = parser.add_subparsers(dest="source", metavar="SOURCE", required=True)
    opentdb = sources.add_parser(
        "opentdb",
        help="an Open Trivia DB API response (HTML, url3986 or base64 encoding)",
        description=(
            "Write one question file per usable entry of an Open Trivia DB API response. "
            "Entries that cannot become a question are reported on stderr with the reason. "
            "Exit status: 0 when the output folder now holds at least one of the questions, "
            "1 when nothing could be imported, 2 when the file cannot be read."
        ),
    )
    opentdb.add_argument("file", metavar="FILE.json", type=Path, help="the saved API response")
    opentdb.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"folder to write the question files to (default {DEFAULT_OUT})",
    )
    opentdb.add_argument(
        "--workspace",
        metavar="W",
        help=(
            "store the questions in this workspace's bank in the database instead of writing "
            "files (checked as `quizbot questions import` checks them)"
        ),
    )
    opentdb.add_argument(
        "--platform",
        choices=CHATS,
        default="slack",
        help="the platform of --workspace (default slack)",
    )
    opentdb.add_argument("--author", default="cli", help="who imported them (with --workspace)")
    opentdb.add_argument(
        "--allow-warnings",
        action="store_true",
        help="with --workspace: store questions the lint rules warn about (imports lack why_not)",
    )
    opentdb.add_argument(
        "--dry-run", action="store_true", help="with --workspace: check, store nothing"
    )
    opentdb.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="T",
        help="tag every imported question with T (repeatable)",
    )
    opentdb.set_defaults(handler=run_opentdb)


def run_opentdb(args: argparse.Namespace) -> int:
    """Convert the response in ``args.file`` and write the question files to ``args.out``."""
    from bot.bank.opentdb import alike_stems, check_tags, convert

    source: Path = args.file
    if args.workspace is not None and args.out is not None:
        raise UserError("--out and --workspace: choose files or a workspace's bank, not both")
    out: Path = args.out or DEFAULT_OUT
    tags = check_tags(args.tag)
    try:
        response = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UserError(f"{source}: not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise UserError(f"{source}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    except RecursionError:
        raise UserError(f"{source}: nested too deeply to be an Open Trivia DB response") from None
    try:
        conversion = convert(response, tags)
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from exc
    except RecursionError:
        raise UserError(f"{source}: nested too deeply to be an Open Trivia DB response") from None

    for skip in conversion.skipped:
        where = f"result {skip.index}: " if skip.index else ""
        print(f"{source}: {where}skipped: {skip.reason}", file=sys.stderr)

    if args.workspace is not None:
        return _into_workspace(args, conversion.questions)

    written = unchanged = refused = 0
    if conversion.questions:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{out}: cannot create the folder: {exc.strerror or exc}") from exc
    for question in conversion.questions:
        path = out / question.filename
        text = question.to_yaml()
        try:
            # "x" never replaces a file, even one that appears between a check and the write.
            with path.open("x", encoding="utf-8") as handle:
                handle.write(text)
            written += 1
            continue
        except FileExistsError:
            problem = "exists with different content; not overwritten"
        except OSError as exc:
            problem = f"cannot be written: {exc.strerror or exc}"
        if _same_text(path, text):
            unchanged += 1
            continue
        refused += 1
        print(f"{source}: skipped {question.id}: {path} {problem}", file=sys.stderr)
    for alike in alike_stems(conversion.questions):
        print(
            f"{source}: note: {alike.later.id} asks nearly what {alike.first.id} asks (stems"
            f" {alike.similarity:.0%} alike); both written: keep one before adding them to a bank",
            file=sys.stderr,
        )
    skipped = len(conversion.skipped) + refused
    print(
        f"imported {written} question(s) into {out} ({unchanged} already there, "
        f"{skipped} skipped; encoding {conversion.encoding})"
    )
    return 0 if written + unchanged else 1


def _into_workspace(args: argparse.Namespace, imported: Sequence[Any]) -> int:
    """Check the converted questions as a workspace import, and store them if all pass."""
    import asyncio

    from bot.bank.loader import check_text
    from bot.cli.questions import EXIT_REFUSED, save_checked
    from bot.config import load_settings
    from bot.runtime import open_runtime

    if not imported:
        print(f"{args.file}: nothing to import", file=sys.stderr)
        return EXIT_REFUSED
    questions, problems = [], []
    seen: dict[str, str] = {}
    for item in imported:
        found, wrong = check_text(item.to_yaml(), f"{args.file}: {item.id}", seen)
        questions += found
        problems += wrong

    async def main() -> int:
        async with open_runtime(load_settings()) as rt:
            current = await rt.engine.bank_for(args.platform, args.workspace)
            return await save_checked(
                rt,
                args.platform,
                args.workspace,
                questions,
                problems,
                current,
                new_only=False,
                author=args.author,
                allow_warnings=args.allow_warnings,
                dry_run=args.dry_run,
            )

    return asyncio.run(main())


def _same_text(path: Path, text: str) -> bool:
    """Return whether ``path`` is a file that already holds exactly ``text``."""
    try:
        return path.is_file() and path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False
