"""One id for every button the bot shows, the same on every platform, read back by the core.

A platform puts the id on the button as it is (Discord's ``custom_id``, Slack's ``action_id``)
and hands a press back as a ``Press`` event; the core reads it here and routes it. A new button
is one entry here and the flow it runs.

- a card's choice: ``quiz:{round_id}:{key}``
- a review question's choice: ``review:{question_id}:{key}`` (question ids: ``[a-z0-9-]``, and
  a computed question's ``template#seed``)
- a learning track question's choice, asked privately: ``track:{question_id}:{key}``
- a button that runs a ``/quiz`` verb: ``quiz:start-review``, ``quiz:dashboard``
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The shortest limit of the platforms (Discord's custom_id); every id fits it.
ID_MAX = 100
# The button's own name -> the /quiz verb it runs.
VERBS = {"start-review": "review", "dashboard": "dashboard"}
PATTERN = re.compile(
    r"quiz:(?P<round_id>[0-9]{1,20}):(?P<key>[A-E])"
    r"|review:(?P<question_id>[a-z0-9][a-z0-9-]*(?:#[1-9][0-9]{0,8}|#0)?):(?P<review_key>[A-E])"
    r"|track:(?P<track_question>[a-z0-9][a-z0-9-]*(?:#[1-9][0-9]{0,8}|#0)?):(?P<track_key>[A-E])"
    r"|quiz:(?P<verb>" + "|".join(map(re.escape, VERBS)) + ")"
)


@dataclass(frozen=True, slots=True)
class Choice:
    """A choice on a question card."""

    round_id: int
    key: str


@dataclass(frozen=True, slots=True)
class ReviewChoice:
    """A choice on a private review question."""

    question_id: str
    key: str


@dataclass(frozen=True, slots=True)
class TrackChoice:
    """A choice on a learning track's question, asked privately."""

    question_id: str
    key: str


@dataclass(frozen=True, slots=True)
class RunVerb:
    """A button that runs a ``/quiz`` verb with no options (its name is a key of ``VERBS``)."""

    name: str

    @property
    def verb(self) -> str:
        """Return the /quiz verb the button runs."""
        return VERBS[self.name]


Button = Choice | ReviewChoice | TrackChoice | RunVerb
START_REVIEW = RunVerb("start-review")
DASHBOARD = RunVerb("dashboard")


def button_id(button: Button) -> str:
    """Return the id a platform puts on the button (ValueError if it would not read back)."""
    match button:
        case Choice(round_id, key):
            value = f"quiz:{round_id}:{key}"
        case ReviewChoice(question_id, key):
            value = f"review:{question_id}:{key}"
        case TrackChoice(question_id, key):
            value = f"track:{question_id}:{key}"
        case RunVerb(name):
            value = f"quiz:{name}"
    if len(value) > ID_MAX or read_button(value) != button:
        raise ValueError(f"bad button id {value!r}")
    return value


def read_button(value: str) -> Button | None:
    """Return the button an id names; None for any id the bot did not make."""
    m = PATTERN.fullmatch(value) if len(value) <= ID_MAX else None
    if m is None:
        return None
    if m["round_id"] is not None:
        return Choice(int(m["round_id"]), m["key"])
    if m["question_id"] is not None:
        return ReviewChoice(m["question_id"], m["review_key"])
    if m["track_question"] is not None:
        return TrackChoice(m["track_question"], m["track_key"])
    return RunVerb(m["verb"])
