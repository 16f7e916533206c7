"""Forms in chat, written once: what a form asks, its pages, its drafts, and its checks.

A form is neutral content (``Form``): a title, fields with labels and limits, the values it
opens with, and an error beside each field that was refused. A platform draws it (a Slack
modal, a Discord modal, an Adaptive Card with inputs) and hands what was sent back as a
``Submit`` event with the form's id (``bot.chat.buttons``); the chat core checks it here and
answers. Three forms exist: the question form of ``/quiz add`` (its fields are
``bot.bank.form.QUESTION_FIELDS``, the terminal's prompts too), "Report a problem", and the
reason an admin rejects a proposal with.

A platform whose form holds fewer fields than the question has (Discord: five) gets the
question form in pages: what each page sent is kept here as a draft, per person, until the
last page is sent; between pages a "Continue" button opens the next.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot import messages as M
from bot.bank.form import QUESTION_FIELDS
from bot.bank.form import Field as QuestionField
from bot.chat.buttons import AddPage, Button, Decide, Report
from bot.chat.content import Feedback, Offer
from bot.chat.grammar import FLAG_NOTE_MAX, FLAG_REASONS
from bot.engine.model import Place
from bot.text import Strong, Verbatim, lines, say

# Drafts of paged forms: how many are kept, and for how long.
DRAFTS = 2000
DRAFT_SECONDS = 3600.0
REASON_LABELS = {
    "wrong": M.FLAG_REASON_LABEL_WRONG,
    "unclear": M.FLAG_REASON_LABEL_UNCLEAR,
    "outdated": M.FLAG_REASON_LABEL_OUTDATED,
    "typo": M.FLAG_REASON_LABEL_TYPO,
}


@dataclass(frozen=True, slots=True)
class FormField:
    """One field as a platform draws it."""

    name: str
    label: str
    required: bool = False
    max_chars: int | None = None
    long: bool = False
    options: tuple[tuple[str, str], ...] = ()  # (value, label): a pick list where one can be
    hint: str = ""


@dataclass(frozen=True, slots=True)
class Form:
    """A form to open, or to show again with its errors.

    ``button`` is the id it is sent back with; ``values`` what its fields hold when it opens;
    ``errors`` the refusal beside each field (by name); ``page`` and ``pages`` where a form is
    split; ``place`` where it was opened (a platform that loses the channel on the way keeps it
    with the form).
    """

    button: Button
    title: str
    submit: str
    fields: tuple[FormField, ...]
    place: Place
    values: Mapping[str, str] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)
    page: int = 1
    pages: int = 1

    def label_of(self, name: str) -> str:
        """Return the label of a field (its name if the form has none such)."""
        return next((f.label for f in self.fields if f.name == name), name)


def _drawn(f: QuestionField) -> FormField:
    options = tuple((v, v) for v in f.options)
    return FormField(f.name, f.label, f.required, f.max_chars, f.long, options, f.hint)


ADD_FIELDS = tuple(_drawn(f) for f in QUESTION_FIELDS)


def add_pages(per_page: int | None) -> list[tuple[FormField, ...]]:
    """Return the question form's fields split into pages of at most ``per_page`` (None: one)."""
    if per_page is None or per_page >= len(ADD_FIELDS):
        return [ADD_FIELDS]
    return [ADD_FIELDS[i : i + per_page] for i in range(0, len(ADD_FIELDS), per_page)]


def add_form(
    place: Place,
    per_page: int | None,
    *,
    page: int = 1,
    values: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
) -> Form:
    """Return a page of the question form, holding ``values``, showing ``errors``."""
    pages = add_pages(per_page)
    page = min(max(page, 1), len(pages))
    title = (
        say(M.ADD_FORM_PAGE_TITLE, page=page, pages=len(pages)).plain()
        if len(pages) > 1
        else M.ADD_FORM_TITLE
    )
    return Form(
        AddPage(page),
        title,
        M.ADD_FORM_SAVE if page == len(pages) else M.ADD_FORM_NEXT,
        pages[page - 1],
        place,
        dict(values or {}),
        dict(errors or {}),
        page,
        len(pages),
    )


def page_of(name: str, per_page: int | None) -> int:
    """Return the page of the question form that holds a field."""
    for n, fields in enumerate(add_pages(per_page), start=1):
        if any(f.name == name for f in fields):
            return n
    return 1


REPORT_FIELDS = (
    FormField(
        "reason",
        M.REPORT_FORM_REASON,
        required=True,
        options=tuple((r, REASON_LABELS[r]) for r in FLAG_REASONS),
    ),
    FormField(
        "note",
        M.REPORT_FORM_NOTE,
        max_chars=FLAG_NOTE_MAX,
        long=True,
        hint=M.REPORT_FORM_NOTE_HINT,
    ),
)


def report_form(place: Place, question_id: str, *, values: Mapping[str, str] | None = None) -> Form:
    """Return the "Report a problem" form for a question."""
    return Form(
        Report(question_id),
        M.REPORT_FORM_TITLE,
        M.REPORT_FORM_SEND,
        REPORT_FIELDS,
        place,
        dict(values or {}),
    )


# The longest reason a rejection keeps (bot.bank.workspace.REASON_MAX).
REJECT_REASON_MAX = 500
REJECT_FIELDS = (
    FormField(
        "reason",
        M.REJECT_FORM_REASON,
        max_chars=REJECT_REASON_MAX,
        long=True,
        hint=M.REJECT_FORM_REASON_HINT,
    ),
)


def reject_form(place: Place, proposal_id: int) -> Form:
    """Return the form an admin rejects a proposal with: the reason its author is told."""
    return Form(
        Decide(proposal_id, "reject"),
        M.REJECT_FORM_TITLE,
        M.REJECT_FORM_SEND,
        REJECT_FIELDS,
        place,
    )


LABELS = {f.name: f.label for f in (*ADD_FIELDS, *REPORT_FIELDS, *REJECT_FIELDS)}


def refused(form: Form) -> Feedback:
    """Return a refused form as a private reply: each field's label and error, and a button
    that opens the form again (where a platform cannot keep its form open with the errors)."""
    told = [say(M.FORM_REFUSED)]
    told += [
        say(M.FORM_REFUSED_LINE, field=Strong(LABELS.get(name, name)), error=Verbatim(error))
        for name, error in form.errors.items()
    ]
    return Feedback(lines(*told), offers=(Offer(form.button, M.FORM_FIX, primary=True),))


def report_errors(values: Mapping[str, str]) -> dict[str, str]:
    """Return what is wrong with a sent report form, by field (as /quiz flag reads it)."""
    errors = {}
    reason = values.get("reason", "").strip().lower()
    if reason not in FLAG_REASONS:
        errors["reason"] = say(M.FLAG_USAGE).plain()
    note = " ".join(values.get("note", "").split())
    if len(note) > FLAG_NOTE_MAX:
        errors["note"] = say(M.FLAG_NOTE_TOO_LONG, most=FLAG_NOTE_MAX).plain()
    return errors


class Drafts:
    """What each person sent of a paged form so far, kept for an hour in this process.

    A person's interactions in one server reach one process (a Discord server is served by
    one gateway shard), so a draft kept here is found by the next page.
    """

    def __init__(self, size: int = DRAFTS, seconds: float = DRAFT_SECONDS) -> None:
        self.size = size
        self.seconds = seconds
        self._kept: OrderedDict[tuple[str, str, str], tuple[float, dict[str, str]]] = OrderedDict()

    def get(self, place: Place, user: str) -> dict[str, str] | None:
        """Return a person's draft in a workspace, or None (never begun, sent, or expired)."""
        key = (place.platform, place.workspace, user)
        found = self._kept.get(key)
        if found is None or time.monotonic() - found[0] > self.seconds:
            self._kept.pop(key, None)
            return None
        return dict(found[1])

    def keep(self, place: Place, user: str, values: Mapping[str, str]) -> None:
        """Keep a person's draft (the oldest drafts go past ``size``)."""
        key = (place.platform, place.workspace, user)
        self._kept.pop(key, None)
        self._kept[key] = (time.monotonic(), dict(values))
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)

    def drop(self, place: Place, user: str) -> None:
        """Forget a person's draft (sent)."""
        self._kept.pop((place.platform, place.workspace, user), None)


__all__ = [
    "ADD_FIELDS",
    "LABELS",
    "REPORT_FIELDS",
    "Drafts",
    "Form",
    "FormField",
    "add_form",
    "add_pages",
    "page_of",
    "refused",
    "report_errors",
    "report_form",
]
