"""The neutral forms: pages, drafts, the report form's checks and a refusal's words."""

from __future__ import annotations

from bot.chat.buttons import AddPage, Report
from bot.chat.forms import (
    ADD_FIELDS,
    Drafts,
    add_form,
    add_pages,
    page_of,
    refused,
    report_errors,
    report_form,
)
from bot.engine.model import Place

PLACE = Place("discord", "1", "2")


def test_the_question_form_in_pages_of_a_platforms_size() -> None:
    assert add_pages(None) == [ADD_FIELDS]
    assert add_pages(len(ADD_FIELDS)) == [ADD_FIELDS]
    pages = add_pages(5)
    assert [len(p) for p in pages] == [5, 5, 4]
    assert [f for p in pages for f in p] == list(ADD_FIELDS)
    assert (page_of("question", 5), page_of("answer", 5), page_of("difficulty", 5)) == (1, 2, 3)
    last = add_form(PLACE, 5, page=3)
    assert (last.button, last.page, last.pages, last.submit) == (AddPage(3), 3, 3, "Save")
    assert add_form(PLACE, 5).submit == "Next" and add_form(PLACE, None).submit == "Save"


def test_a_draft_is_kept_per_person_and_workspace_until_dropped_or_expired() -> None:
    drafts = Drafts(size=2)
    drafts.keep(PLACE, "u1", {"question": "Why?"})
    assert drafts.get(PLACE, "u1") == {"question": "Why?"}
    assert drafts.get(PLACE, "u2") is None
    assert drafts.get(Place("discord", "9", "2"), "u1") is None
    drafts.keep(PLACE, "u2", {})
    drafts.keep(PLACE, "u3", {})
    assert drafts.get(PLACE, "u1") is None  # the oldest went past the size
    drafts.drop(PLACE, "u2")
    assert drafts.get(PLACE, "u2") is None
    gone = Drafts(seconds=-1.0)
    gone.keep(PLACE, "u1", {"question": "Why?"})
    assert gone.get(PLACE, "u1") is None


def test_a_report_form_is_checked_as_flag_reads_it() -> None:
    assert report_errors({"reason": "Wrong", "note": "  the key   is B "}) == {}
    assert set(report_errors({"reason": "bad"})) == {"reason"}
    assert "300 characters" in report_errors({"reason": "typo", "note": "x" * 301})["note"]
    form = report_form(PLACE, "q-1")
    assert form.button == Report("q-1") and [f.name for f in form.fields] == ["reason", "note"]


def test_a_refusal_names_each_field_by_its_label_with_a_button_to_fix_it() -> None:
    form = add_form(PLACE, 5, page=2, errors={"B": "Too long.", "short": "Required."})
    told = refused(form)
    assert "Choice B: Too long." in told.text.plain()
    assert "Short explanation: Required." in told.text.plain()
    assert [o.button for o in told.offers] == [AddPage(2)]
