"""docs/bandwidth.md: its tables are generated from the data files and must match them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bandwidth import ENV_VAR, load_catalogue, load_hardware
from bot.bandwidth._docs import docs_blocks, generated_blocks, update_docs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "bandwidth.md"
FIX = "quizbot bandwidth --write-docs docs/bandwidth.md"


@pytest.fixture(autouse=True)
def _bundled_catalogue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def test_the_docs_tables_match_the_data_files() -> None:
    found = docs_blocks(DOCS.read_text(encoding="utf-8"))
    wanted = generated_blocks(load_catalogue(), load_hardware())
    assert set(found) == set(wanted), f"generated blocks missing from {DOCS}"
    for name, text in wanted.items():
        assert found[name] == text, f"the {name} table in {DOCS} is stale; run {FIX}"


def test_a_changed_entry_makes_the_check_fail() -> None:
    text = DOCS.read_text(encoding="utf-8")
    stale = text.replace("| `1gbe` | Ethernet 1G (TCP) | 1 |", "| `1gbe` | Ethernet 1G (TCP) | 2 |")
    assert stale != text
    assert (
        docs_blocks(stale)["catalogue"]
        != generated_blocks(load_catalogue(), load_hardware())["catalogue"]
    )
    assert update_docs(stale, load_catalogue(), load_hardware()) == text


def test_every_catalogue_key_is_a_row() -> None:
    table = generated_blocks(load_catalogue(), load_hardware())["catalogue"]
    for ic in load_catalogue():
        assert f"| `{ic.key}` |" in table
