"""``quizbot report questions`` and ``quizbot report mastery``: how each question fares with real
players, and how much of each topic each person would recall now."""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bot.platforms import CHATS, TERMINAL

if TYPE_CHECKING:
    from bot.engine.analytics import QuestionReport
    from bot.engine.learning import PersonMastery
    from bot.engine.names import Names

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
        choices=(*CHATS, TERMINAL),
        help="only this platform (default: every one)",
    )
    questions.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    questions.add_argument(
        "--asked", action="store_true", help="leave out the questions nobody has answered yet"
    )
    questions.set_defaults(handler=run_questions)
    mastery = reports.add_parser(
        "mastery",
        help="per person and topic: how much of the topic they would recall now",
        description=(
            "Mastery per person and topic of the bank (its folders) in one workspace or server: "
            "the mean FSRS recall probability over the topic's questions, a question never "
            "answered counting 0, and the team's mean over the people shown (docs/learning.md)."
        ),
    )
    mastery.add_argument(
        "--workspace", metavar="W", required=True, help="the Slack workspace or Discord server id"
    )
    mastery.add_argument(
        "--platform",
        choices=(*CHATS, TERMINAL),
        default="slack",
        help="the platform of that workspace (default: slack)",
    )
    mastery.add_argument("--user", metavar="U", help="only this person")
    mastery.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    mastery.set_defaults(handler=run_mastery)


def run_questions(args: argparse.Namespace) -> int:
    """Print the question report; exit 0."""
    items = asyncio.run(_collect(args.platform, args.workspace))
    if args.asked:
        items = [r for r in items if r.answers]
    items.sort(key=lambda r: (not r.flagged, -r.answers))
    print(render(items, args.format), end="")
    return 0


def run_mastery(args: argparse.Namespace) -> int:
    """Print the mastery report; exit 0."""
    people, names = asyncio.run(_mastery(args.platform, args.workspace, args.user))
    print(render_mastery(people, args.format, names), end="")
    return 0


async def _mastery(
    platform: str, workspace: str, user: str | None
) -> tuple[list[PersonMastery], Names]:
    from bot.config import load_settings
    from bot.engine.names import Names
    from bot.runtime import open_runtime

    async with open_runtime(load_settings()) as rt:
        people = await rt.engine.mastery(platform, workspace, user)
        return people, Names(workspace, await rt.store.display_names(platform, workspace))


def render_mastery(people: Sequence[PersonMastery], fmt: str, names: Names | None = None) -> str:
    """Return the mastery report as a table (people by topics), CSV (one row per person and
    topic) or JSON; people by name where one is known (the id stays in CSV and JSON)."""
    from bot.engine.learning import team_mastery
    from bot.engine.names import Names

    names = names or Names("", {})
    team = team_mastery(people)
    if fmt == "json":
        doc = {
            "people": [
                {
                    "user": p.user,
                    "name": names.person(p.user),
                    "topics": [
                        {
                            "topic": t.topic,
                            "questions": t.questions,
                            "seen": t.seen,
                            "mastery": round(t.mastery, 4),
                        }
                        for t in p.topics
                    ],
                }
                for p in people
            ],
            "team": [
                {
                    "topic": t.topic,
                    "questions": t.questions,
                    "people": t.people,
                    "learners": t.learners,
                    "mastery": round(t.mastery, 4),
                }
                for t in team
            ],
        }
        return json.dumps(doc, indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["user", "name", "topic", "questions", "seen", "mastery"])
        for p in people:
            for t in p.topics:
                row = [p.user, names.person(p.user), t.topic, t.questions, t.seen]
                writer.writerow([*row, f"{t.mastery:.4f}"])
        return out.getvalue()
    if not people:
        return "Nobody has answered a question here yet.\n"
    topics = [t.topic for t in people[0].topics]
    header = ["person", *topics]
    rows = [[names.person(p.user), *(f"{t.mastery:.0%}" for t in p.topics)] for p in people]
    rows.append(["team", *(f"{t.mastery:.0%}" for t in team)])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append(f"{len(people)} people, {len(topics)} topics; mastery = mean recall now")
    return "\n".join(lines) + "\n"


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
