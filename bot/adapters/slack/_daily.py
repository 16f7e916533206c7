"""Private review on Slack: an ephemeral question with its own buttons, graded on click."""

from __future__ import annotations

import re

from slack_bolt.async_app import AsyncRespond
from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import render
from bot.adapters.slack._publisher import PLATFORM
from bot.engine import QuizEngine
from bot.engine.model import Place, Question
from bot.engine.review import ReviewOutcome, ReviewQueue
from bot.errors import UserError

# Review buttons have their own action ids, so a click never reaches the round answer handler.
REVIEW_ACTION_PREFIX = "quiz_review_"
REVIEW_ACTION = re.compile(re.escape(REVIEW_ACTION_PREFIX) + "[A-E]")
REVIEW_BLOCK = "quiz_review_choices"


def review_value(question_id: str, key: str) -> str:
    """Return a review button's value: the question and the choice it answers."""
    return f"{question_id}:{key}"


def parse_review_value(value: str) -> tuple[str, str]:
    """Return (question id, choice key) from a review button's value."""
    question_id, _, key = value.rpartition(":")
    if not question_id or key not in ("A", "B", "C", "D", "E"):
        raise UserError("That button is not from a review question.")
    return question_id, key


def review_message(question: Question, queue: ReviewQueue) -> render.Message:
    """Render a missed question for its private re-ask, with one button per choice."""
    body = render.escape(question.text)
    labels = [render.choice_label(c) for c in question.choices]
    if any(label.endswith("…") for label in labels):
        body += "\n" + "\n".join(f"*{c.key}* · {render.escape(c.text)}" for c in question.choices)
    buttons = [
        ButtonElement(
            text=PlainTextObject(text=label, emoji=False),
            action_id=f"{REVIEW_ACTION_PREFIX}{c.key}",
            value=review_value(question.id, c.key),
        )
        for c, label in zip(question.choices, labels, strict=True)
    ]
    waiting = queue.due - 1
    more = f" · {waiting} more due after this one" if waiting > 0 else ""
    blocks: list[Block] = [
        HeaderBlock(text="Review: a question you missed"),
        SectionBlock(text=MarkdownTextObject(text=body[: render.SECTION_TEXT_MAX])),
        ActionsBlock(block_id=REVIEW_BLOCK, elements=buttons),
        ContextBlock(
            elements=[
                MarkdownTextObject(
                    text=f"Only you see this; review answers do not change scores{more}."
                )
            ]
        ),
    ]
    # to_dict() runs slack_sdk's Block Kit validators.
    return render.Message(
        text=f"Review: {render.escape(question.text)}"[: render.SECTION_TEXT_MAX],
        blocks=tuple(b.to_dict() for b in blocks),
    )


def nothing_due_text(queue: ReviewQueue) -> str:
    """Return the reply to ``/quiz review`` when no question is due."""
    if queue.next_due is not None:
        when = render.slack_date(queue.next_due, "{date_short_pretty} at {time}")
        return f"Nothing to review right now; your next review is due {when}."
    return "No missed questions to review. The ones you get wrong come back here, spaced out."


def review_feedback(outcome: ReviewOutcome) -> str:
    """Return the private reply to a review answer."""
    mine = f"*{render.escape(render.choice_label(outcome.choice))}*"
    if outcome.correct:
        lines = [f":white_check_mark: *Right!* You chose {mine}."]
    else:
        answer = render.escape(render.choice_label(outcome.answer))
        lines = [f":x: *Not this time.* You chose {mine}; the answer is *{answer}*."]
    lines.append(render.escape(outcome.short))
    if outcome.done:
        lines.append("Right twice in a row: this question is done.")
    elif outcome.due_at is not None:
        when = render.slack_date(outcome.due_at, "{date_short_pretty} at {time}")
        lines.append(
            f"It comes back {when}."
            if outcome.counted
            else f"You have answered this one for now; it comes back {when}."
        )
    return "\n".join(lines)


async def send_review(
    engine: QuizEngine, client: AsyncWebClient, place: Place, user: str
) -> str | None:
    """Post the caller's most overdue missed question privately; else return what to say."""
    question = await engine.next_review(PLATFORM, place.workspace, user)
    queue = await engine.review_queue(PLATFORM, place.workspace, user)
    if question is None:
        return nothing_due_text(queue)
    message = review_message(question, queue)
    await client.chat_postEphemeral(channel=place.channel, user=user, **message.as_kwargs())
    return None


async def answer_review(
    engine: QuizEngine, workspace: str, user: str, value: str, respond: AsyncRespond
) -> None:
    """Grade a review click and replace the private question with the feedback."""
    question_id, key = parse_review_value(value)
    outcome = await engine.answer_review(PLATFORM, workspace, user, question_id, key)
    await respond(text=review_feedback(outcome), response_type="ephemeral", replace_original=True)
