"""The message catalogue: every sentence in one file, without markup, and every one in use."""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from bot import messages as M

BOT = Path(__file__).resolve().parents[2] / "bot"
SENTENCES = {name: value for name, value in vars(M).items() if name.isupper()}


@pytest.mark.parametrize("name", sorted(SENTENCES))
def test_a_sentence_carries_no_markup(name: str) -> None:
    sentence = SENTENCES[name]
    assert isinstance(sentence, str) and sentence.strip()
    for mark in ("`", "*", "<@", "<!", "**", "__"):
        assert mark not in sentence, f"{name} writes markup; use a span instead"
    # Every blank is a plain name (or a number format): the renderers fill the rest.
    for _, field, spec, conversion in string.Formatter().parse(sentence):
        assert field is None or field.isidentifier(), (name, field)
        assert conversion is None, name
        assert not spec or spec.endswith(("f", "g")), (name, spec)


def test_every_sentence_is_used() -> None:
    code = "\n".join(p.read_text() for p in BOT.rglob("*.py") if p.name != "messages.py")
    unused = sorted(name for name in SENTENCES if f"M.{name}" not in code)
    assert not unused, f"sentences nobody says: {unused}"
