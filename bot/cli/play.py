"""``quizbot play``: a practice session in the terminal, the one ``/quiz practice`` runs in chat."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.engine.model import Question


def register(sub: Any) -> None:
    """Add the ``play`` subcommand."""
    p = sub.add_parser(
        "play",
        help="practise in the terminal: due questions first, then new ones at your level",
        description=(
            "A practice session in the terminal, the same as /quiz practice in chat, on the same "
            "engine and database: your due questions first, then new ones picked at your level; "
            "a due question you miss comes back until you get it right (docs/learning.md). "
            "Type a letter to answer (a or A), q to quit; a chat command such as /quiz me is "
            "answered as in chat. Works with piped input too: "
            "printf 'A\\nq\\n' | quizbot play"
        ),
    )
    p.add_argument("--topic", help="only one topic: a folder of the bank, such as collectives")
    p.add_argument("--tag", help="only questions with this tag (see `quizbot validate`)")
    p.add_argument(
        "--count", type=_positive, default=5, help="how many questions (default 5, at most 50)"
    )
    p.add_argument("--user", default=None, help="whose cards and level (default: login name)")
    p.add_argument(
        "--review",
        action="store_true",
        help="re-ask the questions you answered that are due again (each spaced by how well you "
        "know it, docs/learning.md); scores do not change",
    )
    p.set_defaults(handler=run)


def _positive(text: str) -> int:
    from bot.engine.practice import MAX_COUNT

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_COUNT}")
    return value


def run(args: argparse.Namespace) -> int:
    """Run the session; exit 0 when it ends by quit, end of input or Ctrl-C."""
    import asyncio

    try:
        return asyncio.run(_play(args))
    except KeyboardInterrupt:
        # The session has printed the score so far: Ctrl-C is a way to stop, not a failure.
        return 0


async def _play(args: argparse.Namespace) -> int:
    from bot.adapters.console.app import play_session, review_session
    from bot.config import load_settings
    from bot.engine import COMPUTED
    from bot.runtime import open_runtime

    user = args.user or _login()
    if args.review and (args.tag or args.topic):
        print(
            "quizbot play: --review asks the questions that are due, whatever their tag or topic",
            file=sys.stderr,
        )
        return 2
    async with open_runtime(load_settings()) as rt:
        if args.tag:
            # ``computed``: questions computed from the bundled templates.
            computed = (COMPUTED,) if rt.bank.templates else ()
            _require_tag((*computed, *rt.bank.tags()), args.tag)
        if args.topic:
            _require_topic(tuple(dict.fromkeys(rt.engine.topics().values())), args.topic)
        if args.review:
            await review_session(rt.engine, user=user, count=args.count)
        else:
            await play_session(
                rt.engine,
                user=user,
                tag=args.tag,
                topic=args.topic,
                count=args.count,
                chart_table=_chart_table,
            )
    return 0


def _require_tag(tags: tuple[str, ...], tag: str) -> None:
    """Refuse a tag no question has (any case matches), suggesting the nearest ones."""
    import difflib

    from bot import messages as M
    from bot.errors import UserError
    from bot.text import Code, say

    folded = {t.casefold(): t for t in tags}
    if tag.casefold() in folded:
        return
    near = difflib.get_close_matches(tag.casefold(), list(folded), n=1, cutoff=0.6)
    if near:
        raise UserError(say(M.PLAY_UNKNOWN_TAG, tag=Code(tag), suggestion=Code(folded[near[0]])))
    raise UserError(say(M.PLAY_UNKNOWN_TAG_LIST, tag=Code(tag), tags=", ".join(tags)))


def _require_topic(topics: tuple[str, ...], topic: str) -> None:
    """Refuse a topic the bank has no folder for, listing the topics."""
    from bot import messages as M
    from bot.engine.practice import find_topic
    from bot.errors import UserError
    from bot.text import Code, say

    if find_topic(topic, topics) is None:
        raise UserError(say(M.PRACTICE_NO_TOPIC, topic=Code(topic), topics=", ".join(topics)))


def _chart_table(question: Question) -> str | None:
    """Return the bandwidth table a question's chart asks for (None if it cannot be computed)."""
    from bot.bandwidth import BandwidthError, render_table
    from bot.engine.charts import chart_estimate

    if question.chart is None:
        return None
    try:
        return render_table(chart_estimate(question.chart), width=78, keys=False)
    except BandwidthError:
        return None


def _login() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "player"
