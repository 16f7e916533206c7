"""``quizbot report questions``: how each question fares with real players, and which to rewrite."""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.engine.analytics import QuestionReport

FORMATS = ("table", "csv", "json")


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``report`` subcommand and its ``questions`` report."""
    parser = subparsers.add_parser(
        "report",
        help="answer analytics: per-question difficulty, discrimination and flags",
        description="Reports computed from the answers in QUIZBOT_DATABASE_URL.",
    )
    reports = parser.add_subparsers(dest="report", metavar="REPORT", required=True)
    questions = reports.add_parser(
        "questions",
        help="per question: asked, answers, %% right, choice shares, median time, "
        "discrimination, flags",
        description=(
            "One row per question of the bank (QUIZBOT_QUESTIONS): rounds asked, answers, share "
            "right, each choice's share, median answer time, discrimination (the point-biserial "
            "correlation between being right on this question and the answerer's rate on all "
            "the others, over answerers with at least 5 answers) and the flags: a label the "
            "answers disagree with, discrimination under 0.1, a distractor nobody picks "
            "(flags need 20 answers). Flagged questions come first."
        ),
    )
    questions.add_argument(
        "--workspace",
        metavar="W",
        help="only this Slack workspace or Discord server id (default: every one)",
    )
    questions.add_argument(
        "--platform",
        choices=("slack", "discord", "console"),
        help="only this platform (default: every one)",
    )
    questions.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    questions.add_argument(
        "--asked", action="store_true", help="leave out the questions nobody has answered yet"
    )
    questions.set_defaults(handler=run_questions)


def run_questions(args: argparse.Namespace) -> int:
    """Print the question report; exit 0."""
    items = asyncio.run(_collect(args.platform, args.workspace))
    if args.asked:
        items = [r for r in items if r.answers]
    items.sort(key=lambda r: (not r.flagged, -r.answers))
    print(render(items, args.format), end="")
    return 0


async def _collect(platform: str | None, workspace: str | None) -> list[QuestionReport]:
    from bot.config import load_settings
    from bot.runtime import open_runtime

    async with open_runtime(load_settings()) as rt:
        return await rt.engine.question_report(platform, workspace)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _row(r: QuestionReport) -> dict[str, Any]:
    return {
        "id": r.question_id,
        "label": r.label.value,
        "measured": r.measured.value if r.measured else None,
        "rounds": r.rounds,
        "answers": r.answers,
        "correct": r.correct,
        "share_correct": r.share_correct,
        "choice_shares": dict(r.choice_shares),
        "median_seconds": r.median_seconds,
        "discrimination": r.discrimination,
        "flags": [{"flag": f.flag.value, "reason": f.reason} for f in r.flags],
    }


def render(items: Sequence[QuestionReport], fmt: str) -> str:
    """Return the report as a text table, CSV or JSON."""
    if fmt == "json":
        return json.dumps({"questions": [_row(r) for r in items]}, indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(
            [
                "id",
                "label",
                "measured",
                "rounds",
                "answers",
                "share_correct",
                "choice_shares",
                "median_seconds",
                "discrimination",
                "flags",
            ]
        )
        for r in items:
            writer.writerow(
                [
                    r.question_id,
                    r.label.value,
                    r.measured.value if r.measured else "",
                    r.rounds,
                    r.answers,
                    "" if r.share_correct is None else f"{r.share_correct:.4f}",
                    " ".join(f"{k}={v:.4f}" for k, v in r.choice_shares),
                    "" if r.median_seconds is None else f"{r.median_seconds:.1f}",
                    "" if r.discrimination is None else f"{r.discrimination:.3f}",
                    "; ".join(f.reason for f in r.flags),
                ]
            )
        return out.getvalue()
    header = ("question", "label", "asked", "answers", "right", "A/B/C/D/E", "median", "disc.")
    rows = [
        (
            r.question_id,
            r.label.value
            if not r.measured or r.measured is r.label
            else f"{r.label.value}>{r.measured.value}",
            str(r.rounds),
            str(r.answers),
            _pct(r.share_correct),
            " ".join(f"{v:.0%}" for _, v in r.choice_shares) if r.answers else "-",
            "-" if r.median_seconds is None else f"{r.median_seconds:.1f}s",
            "-" if r.discrimination is None else f"{r.discrimination:.2f}",
        )
        for r in items
    ]
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    for r, row in zip(items, rows, strict=True):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        lines.extend(f"    ! {f.reason}" for f in r.flags)
    flagged = sum(1 for r in items if r.flagged)
    asked = sum(1 for r in items if r.answers)
    lines.append(f"{len(items)} questions, {asked} answered, {flagged} flagged")
    return "\n".join(lines) + "\n"
