"""One id for every button the bot shows, the same on every platform, read back by the core.

A platform puts the id on the button as it is (Discord's ``custom_id``, Slack's ``action_id``)
and hands a press back as a ``Press`` event; the core reads it here and routes it. A new button
is one entry here and the flow it runs.

- a card's choice: ``quiz:{round_id}:{key}``
- a review question's choice: ``review:{question_id}:{key}`` (question ids: ``[a-z0-9-]``, and
  a computed question's ``template#seed``)
- a learning track question's choice, asked privately: ``track:{question_id}:{key}``
- a practice question's choice: ``practice:{question_id}:{key}``
- a practice session's next question, or its end: ``practice:next``, ``practice:stop``
- how sure one was of one's latest answer to a question: ``confidence:{question_id}:sure``,
  ``confidence:{question_id}:guessed``
- a button that runs a ``/quiz`` verb: ``quiz:start-review``, ``quiz:dashboard``,
  ``quiz:practice`` (a new practice session)
- the question form of ``/quiz add``, one page of it: ``add:{page}`` (from 1), both the id the
  form is sent back with and the button that opens that page (where a platform's form holds
  fewer fields than the question has: Discord's "Continue" and "Fix it")
- "Report a problem" with a question: ``report:{question_id}``, the button under an answer's
  feedback and a reveal, and the id its small form is sent back with
- an admin's decision on a proposed question: ``proposal:{proposal_id}:approve``,
  ``proposal:{proposal_id}:edit``, ``proposal:{proposal_id}:reject``
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot import messages as M

# The shortest limit of the platforms (Discord's custom_id); every id fits it.
ID_MAX = 100
# The button's own name -> the /quiz verb it runs.
VERBS = {"start-review": "review", "dashboard": "dashboard", "practice": "practice"}
STEPS = ("next", "stop")
DECISIONS = ("approve", "edit", "reject")
# A question id: a bank question's, or a computed question's ``template#seed``.
QUESTION_ID = r"[a-z0-9][a-z0-9-]*(?:#[1-9][0-9]{0,8}|#0)?"
PATTERN = re.compile(
    r"quiz:(?P<round_id>[0-9]{1,20}):(?P<key>[A-E])"
    r"|review:(?P<question_id>" + QUESTION_ID + "):(?P<review_key>[A-E])"
    r"|track:(?P<track_question>" + QUESTION_ID + "):(?P<track_key>[A-E])"
    r"|practice:(?P<practice_id>" + QUESTION_ID + "):(?P<practice_key>[A-E])"
    r"|practice:(?P<step>" + "|".join(STEPS) + ")"
    r"|confidence:(?P<rated_id>" + QUESTION_ID + "):(?P<confidence>sure|guessed)"
    r"|quiz:(?P<verb>" + "|".join(map(re.escape, VERBS)) + ")"
    r"|add:(?P<page>[1-9])"
    r"|report:(?P<reported>" + QUESTION_ID + ")"
    r"|proposal:(?P<proposal_id>[1-9][0-9]{0,9}):(?P<decision>" + "|".join(DECISIONS) + ")"
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
class PracticeChoice:
    """A choice on a practice question."""

    question_id: str
    key: str


@dataclass(frozen=True, slots=True)
class PracticeStep:
    """A practice session's "Next" or "Stop" (a value of ``STEPS``)."""

    step: str


@dataclass(frozen=True, slots=True)
class ConfidenceChoice:
    """How sure one was of one's latest answer to a question ("sure" or "guessed")."""

    question_id: str
    confidence: str


@dataclass(frozen=True, slots=True)
class RunVerb:
    """A button that runs a ``/quiz`` verb with no options (its name is a key of ``VERBS``)."""

    name: str

    @property
    def verb(self) -> str:
        """Return the /quiz verb the button runs."""
        return VERBS[self.name]


@dataclass(frozen=True, slots=True)
class AddPage:
    """A page of the question form (``/quiz add``): sent back, or to be opened."""

    page: int


@dataclass(frozen=True, slots=True)
class Report:
    """Report a problem with a question: the button, and its form sent back."""

    question_id: str


@dataclass(frozen=True, slots=True)
class Decide:
    """An admin's button on a proposed question: approve, edit or reject (``DECISIONS``)."""

    proposal_id: int
    decision: str


Button = (
    Choice
    | ReviewChoice
    | TrackChoice
    | PracticeChoice
    | PracticeStep
    | ConfidenceChoice
    | RunVerb
    | AddPage
    | Report
    | Decide
)
START_REVIEW = RunVerb("start-review")
DASHBOARD = RunVerb("dashboard")
PRACTICE = RunVerb("practice")
PRACTICE_NEXT = PracticeStep("next")
PRACTICE_STOP = PracticeStep("stop")


def button_id(button: Button) -> str:
    """Return the id a platform puts on the button (ValueError if it would not read back)."""
    match button:
        case Choice(round_id, key):
            value = f"quiz:{round_id}:{key}"
        case ReviewChoice(question_id, key):
            value = f"review:{question_id}:{key}"
        case TrackChoice(question_id, key):
            value = f"track:{question_id}:{key}"
        case PracticeChoice(question_id, key):
            value = f"practice:{question_id}:{key}"
        case PracticeStep(step):
            value = f"practice:{step}"
        case ConfidenceChoice(question_id, confidence):
            value = f"confidence:{question_id}:{confidence}"
        case RunVerb(name):
            value = f"quiz:{name}"
        case AddPage(page):
            value = f"add:{page}"
        case Report(question_id):
            value = f"report:{question_id}"
        case Decide(proposal_id, decision):
            value = f"proposal:{proposal_id}:{decision}"
    if len(value) > ID_MAX or read_button(value) != button:
        raise ValueError(f"bad button id {value!r}")
    return value


def fits(button: Button) -> bool:
    """Return whether a button's id reads back within every platform's limit (a question id
    can be too long for one: such a question goes without the button)."""
    try:
        button_id(button)
    except ValueError:
        return False
    return True


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
    if m["practice_id"] is not None:
        return PracticeChoice(m["practice_id"], m["practice_key"])
    if m["step"] is not None:
        return PracticeStep(m["step"])
    if m["rated_id"] is not None:
        return ConfidenceChoice(m["rated_id"], m["confidence"])
    if m["page"] is not None:
        return AddPage(int(m["page"]))
    if m["reported"] is not None:
        return Report(m["reported"])
    if m["proposal_id"] is not None:
        return Decide(int(m["proposal_id"]), m["decision"])
    return RunVerb(m["verb"])


def of_round(value: str, round_id: int) -> bool:
    """Return whether an id is one of a round's card's choices (a card found again by them)."""
    button = read_button(value)
    return isinstance(button, Choice) and button.round_id == round_id


def refusal_of(value: str) -> str:
    """Return the catalogue's refusal for a press of an id the bot cannot read (a review
    question's button, cut or altered, is named as one)."""
    return M.NOT_A_REVIEW_BUTTON if value.startswith("review:") else M.NOT_A_BUTTON
