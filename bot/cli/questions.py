"""``quizbot questions``: a workspace's own questions in the database (docs/questions.md).

``export`` and ``import`` move them as YAML or CSV; ``add`` writes new ones from a file or from
prompts; ``hide`` and ``unhide`` keep a question of the files out of one workspace's rounds;
``list`` shows what a workspace has; ``proposals`` lists the questions written in chat that wait
for an admin, and ``approve`` and ``reject`` decide one (the terminal's operator is an admin).
Whatever is submitted passes the loader's rules, the chat markup check and the lint rules first,
and nothing is saved unless all of it passes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bot.errors import UserError
from bot.platforms import CHATS as PLATFORMS

DEFAULT_AUTHOR = "cli"
EXIT_REFUSED = 1


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``questions`` subcommand and its actions."""
    parser = subparsers.add_parser(
        "questions",
        help="a workspace's own questions: export, import, add, hide, list, proposals",
        description=(
            "Manage the questions a workspace (or Discord server) keeps in the database, laid "
            "over the files' bank: a change is in the next round of every replica, no restart "
            "(docs/questions.md, 'Workspace banks')."
        ),
    )
    actions = parser.add_subparsers(dest="questions_action", metavar="ACTION", required=True)

    export = actions.add_parser(
        "export",
        help="print (or write) the workspace's own questions as YAML or CSV",
        description=(
            "Write the latest revision of each of the workspace's own questions, in the YAML "
            "question format or as CSV with the documented header. Importing the file gives "
            "the same questions back."
        ),
    )
    _workspace(export)
    export.add_argument("--format", choices=("yaml", "csv"), default="yaml", help="default yaml")
    export.add_argument("--out", type=Path, help="write to this file (default: standard output)")
    export.set_defaults(handler=run_export)

    imp = actions.add_parser(
        "import",
        help="store the questions of a YAML or CSV file in the workspace's bank",
        description=(
            "Check every question of FILE (.yaml, .yml or .csv) and store a new revision of "
            "each that changed; a question with the id of a file's question replaces it in "
            "this workspace. Nothing is stored unless every question passes."
        ),
    )
    imp.add_argument("file", metavar="FILE", type=Path, help="a .yaml, .yml or .csv file")
    _workspace(imp)
    _submitting(imp)
    imp.set_defaults(handler=run_import)

    add = actions.add_parser(
        "add",
        help="add new questions, from a file or answering prompts",
        description=(
            "Add questions the workspace's bank does not have yet (an id it has is refused: "
            "import to make a new revision). Without --from, quizbot asks for each field."
        ),
    )
    _workspace(add)
    add.add_argument("--from", dest="source", type=Path, metavar="FILE", help="a .yaml or .csv")
    _submitting(add)
    add.set_defaults(handler=run_add)

    for name, hidden in (("hide", True), ("unhide", False)):
        act = actions.add_parser(
            name,
            help=(
                "keep questions out of the workspace's rounds"
                if hidden
                else "let hidden questions back into the workspace's rounds"
            ),
            description=(
                "Hide questions (of the files, or the workspace's own) in one workspace: no "
                "round, practice or review asks them there."
                if hidden
                else "Let questions hidden in a workspace back into its rounds."
            ),
        )
        act.add_argument("ids", metavar="ID", nargs="+", help="question ids")
        _workspace(act)
        act.add_argument("--author", default=DEFAULT_AUTHOR, help="who did it (recorded)")
        act.set_defaults(handler=run_hide if hidden else run_unhide)

    show = actions.add_parser(
        "list",
        help="the workspace's own questions with their revisions, and the hidden ones",
        description="List the workspace's own questions, their latest revisions, and hidden ids.",
    )
    _workspace(show)
    show.set_defaults(handler=run_list)

    listing = actions.add_parser(
        "proposals",
        help="the questions written in chat that wait for an admin's review",
        description=(
            "List the workspace's proposals, the oldest first: those waiting (the default), or "
            "every one with --all. Each shows its number, question id, author and the question."
        ),
    )
    _workspace(listing)
    listing.add_argument(
        "--all", action="store_true", help="the decided ones too, with their decisions"
    )
    listing.set_defaults(handler=run_proposals)

    approve = actions.add_parser(
        "approve",
        help="approve a proposal: its question goes live in the next round",
        description=(
            "Approve a waiting proposal: its question is stored as the question's next revision, "
            "live in the next round on every replica, and its author is told in chat."
        ),
    )
    approve.add_argument("proposal", metavar="ID", type=int, help="the proposal's number")
    approve.add_argument(
        "--author", default=DEFAULT_AUTHOR, help="who approves it (recorded; default cli)"
    )
    approve.set_defaults(handler=run_approve)

    reject = actions.add_parser(
        "reject",
        help="reject a proposal, with a reason its author is told",
        description="Reject a waiting proposal; its author is told in chat, with the reason.",
    )
    reject.add_argument("proposal", metavar="ID", type=int, help="the proposal's number")
    reject.add_argument("--reason", help="why, told to its author (500 characters at most)")
    reject.add_argument(
        "--author", default=DEFAULT_AUTHOR, help="who rejects it (recorded; default cli)"
    )
    reject.set_defaults(handler=run_reject)


def _workspace(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace", metavar="W", required=True, help="the Slack workspace or Discord server id"
    )
    parser.add_argument(
        "--platform", choices=PLATFORMS, default="slack", help="its platform (default slack)"
    )


def _submitting(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--author", default=DEFAULT_AUTHOR, help=f"who wrote it (default {DEFAULT_AUTHOR})"
    )
    parser.add_argument(
        "--allow-warnings",
        action="store_true",
        help="store questions the lint rules warn about (the warnings are still printed)",
    )
    parser.add_argument("--dry-run", action="store_true", help="check and report, store nothing")


# ---------------------------------------------------------------- the actions


def run_export(args: argparse.Namespace) -> int:
    """Print or write the workspace's own questions."""
    from bot.bank.exchange import ExportError, Format, export

    async def action(rt: Any) -> int:
        own = await _own_questions(rt, args.platform, args.workspace)
        if not own:
            print(f"{args.platform} {args.workspace} has no questions of its own", file=sys.stderr)
            return EXIT_REFUSED
        try:
            text = export(own, Format(args.format))
        except ExportError as exc:
            raise UserError(str(exc)) from None
        if args.out is None:
            sys.stdout.write(text)
        else:
            try:
                args.out.write_text(text, encoding="utf-8", newline="")
            except OSError as exc:
                raise UserError(f"{args.out}: cannot write: {exc.strerror or exc}") from exc
            print(f"exported {len(own)} question(s) to {args.out}", file=sys.stderr)
        return 0

    return _run(action)


def run_import(args: argparse.Namespace) -> int:
    """Check a file and store its questions as new revisions."""
    text, fmt = _read(args.file)
    return _run(_submit(args, lambda: _parse(text, str(args.file), fmt), new_only=False))


def run_add(args: argparse.Namespace) -> int:
    """Add new questions from a file, or from answers to prompts."""
    if args.source is not None:
        text, fmt = _read(args.source)
        name = str(args.source)
    else:
        from bot.bank.exchange import Format
        from bot.bank.workspace import dump

        text, fmt, name = dump(_prompted()), Format.YAML, "the answers"
    return _run(_submit(args, lambda: _parse(text, name, fmt), new_only=True))


def run_hide(args: argparse.Namespace) -> int:
    """Hide questions in a workspace."""
    return _run(_hiding(args, True))


def run_unhide(args: argparse.Namespace) -> int:
    """Let hidden questions back into a workspace's rounds."""
    return _run(_hiding(args, False))


def run_list(args: argparse.Namespace) -> int:
    """List a workspace's own questions and hidden ids."""

    async def action(rt: Any) -> int:
        layer = await rt.store.bank_layer(args.platform, args.workspace)
        where = f"{args.platform} {args.workspace}"
        if not layer.questions and not layer.hidden:
            print(f"{where}: no questions of its own, none hidden")
            return 0
        for stored in layer.questions:
            replaces = " (replaces the file's question)" if stored.question_id in rt.bank else ""
            print(
                f"{stored.question_id}  revision {stored.revision}  by {stored.author}  "
                f"{stored.created_at:%Y-%m-%d %H:%M} UTC{replaces}"
            )
        for qid in sorted(layer.hidden):
            print(f"{qid}  hidden")
        print(f"{where}: {len(layer.questions)} own question(s), {len(layer.hidden)} hidden")
        return 0

    return _run(action)


def run_proposals(args: argparse.Namespace) -> int:
    """List a workspace's proposals."""
    from bot.engine.model import ProposalStatus

    async def action(rt: Any) -> int:
        status = None if args.all else ProposalStatus.PENDING
        found = await rt.engine.proposals(args.platform, args.workspace, status)
        where = f"{args.platform} {args.workspace}"
        if not found:
            print(f"{where}: no proposals" + ("" if args.all else " waiting"))
            return 0
        for p in found:
            decided = ""
            if p.status is not ProposalStatus.PENDING and p.decided_at is not None:
                decided = f"  {p.status.value} by {p.decided_by} {p.decided_at:%Y-%m-%d %H:%M} UTC"
                if p.revision is not None:
                    decided += f" (revision {p.revision}{', edited' if p.edited else ''})"
                if p.reason:
                    decided += f": {p.reason}"
            print(
                f"proposal {p.id}  {p.question_id}  by {p.author}  "
                f"{p.created_at:%Y-%m-%d %H:%M} UTC  {p.status.value}{decided}"
            )
            if p.status is ProposalStatus.PENDING:
                print("  " + p.body.rstrip("\n").replace("\n", "\n  "))
        print(f"{where}: {len(found)} proposal(s)")
        return 0

    return _run(action)


def run_approve(args: argparse.Namespace) -> int:
    """Approve a proposal: its question goes live."""

    async def action(rt: Any) -> int:
        published = await rt.engine.approve(args.proposal, args.author)
        print(
            f"proposal {args.proposal}: {published.question_id} is live as revision "
            f"{published.revision}; its author is told in chat"
        )
        return 0

    return _run(action)


def run_reject(args: argparse.Namespace) -> int:
    """Reject a proposal, with a reason or none."""

    async def action(rt: Any) -> int:
        rejected = await rt.engine.reject(args.proposal, args.author, args.reason)
        why = f" ({rejected.reason})" if rejected.reason else ""
        print(
            f"proposal {rejected.id}: {rejected.question_id} rejected{why}; "
            "its author is told in chat"
        )
        return 0

    return _run(action)


# ---------------------------------------------------------------- helpers


def _run(action: Callable[[Any], Any]) -> int:
    from bot.config import load_settings
    from bot.runtime import open_runtime

    async def main() -> int:
        async with open_runtime(load_settings()) as rt:
            status: int = await action(rt)
            return status

    return asyncio.run(main())


async def _own_questions(rt: Any, platform: str, workspace: str) -> list[Any]:
    bank = await rt.engine.bank_for(platform, workspace)
    return [q for q in bank if q.revision is not None]


def _read(path: Path) -> tuple[str, Any]:
    from bot.bank.exchange import format_of

    fmt = format_of(path.name)
    if fmt is None:
        raise UserError(f"{path}: the file must end in .yaml, .yml or .csv")
    try:
        return path.read_text(encoding="utf-8-sig"), fmt
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None


def _parse(text: str, name: str, fmt: Any) -> tuple[list[Any], list[Any]]:
    from bot.bank.exchange import parse

    return parse(text, name, fmt)


def _submit(
    args: argparse.Namespace,
    read: Callable[[], tuple[Sequence[Any], Sequence[Any]]],
    *,
    new_only: bool,
) -> Callable[[Any], Any]:
    async def action(rt: Any) -> int:
        questions, problems = read()
        current = await rt.engine.bank_for(args.platform, args.workspace)
        return await save_checked(
            rt,
            args.platform,
            args.workspace,
            questions,
            problems,
            current,
            new_only=new_only,
            author=args.author,
            allow_warnings=args.allow_warnings,
            dry_run=args.dry_run,
        )

    return action


async def save_checked(
    rt: Any,
    platform: str,
    workspace: str,
    questions: Sequence[Any],
    problems: Sequence[Any],
    current: Any,
    *,
    new_only: bool,
    author: str,
    allow_warnings: bool,
    dry_run: bool,
) -> int:
    """Check questions for a workspace, print what is wrong, and store them if all pass."""
    from bot.bank.workspace import check_parsed, question_yaml
    from bot.engine.ports import utc_now

    checked = check_parsed(questions, problems, current, new_only=new_only)
    for p in checked.problems:
        print(p, file=sys.stderr)
    for w in checked.warnings:
        print(w, file=sys.stderr)
    where = f"{platform} {workspace}"
    if checked.refused(allow_warnings=allow_warnings):
        why = (
            f"{len(checked.problems)} problem(s)"
            if checked.problems
            else f"{len(checked.warnings)} lint warning(s) (--allow-warnings stores them anyway)"
        )
        print(f"nothing stored in {where}: {why}", file=sys.stderr)
        return EXIT_REFUSED
    if dry_run:
        print(f"{len(checked.questions)} question(s) pass; nothing stored (--dry-run)")
        return 0
    bodies = [(q.id, question_yaml(q)) for q in checked.questions]
    written = await rt.store.save_revisions(
        platform, workspace, bodies, author=author, at=utc_now()
    )
    for qid, revision in written:
        reporters = await rt.store.resolved_flags(platform, workspace, qid, revision)
        resolves = f" (resolves the reports of {len(reporters)} player(s))" if reporters else ""
        print(f"{qid}: revision {revision}{resolves}")
    unchanged = len(bodies) - len(written)
    print(
        f"stored {len(written)} revision(s) in {where} ({unchanged} unchanged); "
        "the next round on every replica asks from them"
    )
    return 0


async def _hiding_ids(
    rt: Any, platform: str, workspace: str, ids: Sequence[str], hide: bool, author: str
) -> int:
    """Hide or show questions the workspace knows; refuse (changing nothing) an unknown id."""
    from bot.engine.ports import utc_now

    layer = await rt.store.bank_layer(platform, workspace)
    known = {q.id for q in rt.bank} | {s.question_id for s in layer.questions}
    unknown = [qid for qid in ids if qid not in known]
    if unknown:
        print(
            f"nothing changed: no question {', '.join(unknown)} in {platform} {workspace}",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    changed = await rt.store.set_hidden(
        platform, workspace, list(ids), hide, by=author, at=utc_now()
    )
    state = "hidden" if hide else "shown again"
    for qid in dict.fromkeys(ids):
        print(f"{qid}: {state}" if qid in changed else f"{qid}: already {state}")
    return 0


def _hiding(args: argparse.Namespace, hide: bool) -> Callable[[Any], Any]:
    async def action(rt: Any) -> int:
        return await _hiding_ids(rt, args.platform, args.workspace, args.ids, hide, args.author)

    return action


# ---------------------------------------------------------------- prompts


def _no_check(_value: str) -> str | None:
    return None


def _ask(
    prompt: str, *, required: bool = True, check: Callable[[str], str | None] = _no_check
) -> str:
    while True:
        try:
            value = input(prompt)
        except EOFError:
            raise UserError("the answers ended before the question was complete") from None
        value = value.strip()
        if not value and required:
            print("  this field is required", file=sys.stderr)
            continue
        problem = check(value) if value else None
        if problem is None:
            return value
        print(f"  {problem}", file=sys.stderr)


def _prompted() -> dict[str, Any]:
    """Ask for each field of the question form (the chat form's fields, labels and limits);
    return the question as the format's mapping, with the why-nots asked after the full
    explanation."""
    from bot.bank.form import QUESTION_FIELDS, cleaned, data_of

    print("A new question; the format is in docs/questions.md. Leave optional fields empty.")
    values: dict[str, str] = {}
    why_not: dict[str, str] = {}
    for f in QUESTION_FIELDS:
        if f.path.startswith("choices.") and not f.required and not values.get(_before(f.name)):
            values[f.name] = ""  # no more choices after an empty one
            continue
        hint = f" [{f.hint}]" if f.hint else ""
        values[f.name] = _ask(f"{f.label}{hint}: ", required=f.required, check=_checker(f))
        if f.name == "full":
            answer = values["answer"].upper()
            for key in (k for k in "ABCDE" if values.get(k) and k != answer):
                text = _ask(f"Why not {key} (optional): ", required=False)
                if text:
                    why_not[key] = text
    data = data_of(cleaned(values))
    if why_not:
        data["explanation"]["why_not"] = why_not
    return data


def _checker(f: Any) -> Callable[[str], str | None]:
    """Return the check of one field's answer, as the chat form checks it."""
    from bot.bank.form import cleaned, field_error

    def check(value: str) -> str | None:
        return field_error(f, cleaned({f.name: value})[f.name])

    return check


def _before(key: str) -> str:
    return "ABCDE"[max("ABCDE".index(key) - 1, 0)]
