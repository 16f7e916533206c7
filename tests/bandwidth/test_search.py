"""The layout search: only layouts that fit, fastest first per fabric, in chat and the terminal."""

from __future__ import annotations

import json

from bot.bandwidth import answer, load_catalogue, parse_plan
from bot.bandwidth._hardware import load_hardware
from bot.bandwidth._search import layouts, render_search, search, search_to_json
from tests.bandwidth.test_cli import run


def test_every_layout_divides_the_gpus_heads_and_layers() -> None:
    request = parse_plan("llama3-70b gpus=256 search")
    found = layouts(request, load_hardware())
    assert len(found) > 20
    for layout in found:
        tp, pp, cp = layout.tp or 1, layout.pp, layout.cp
        assert 256 % (tp * pp * cp) == 0
        assert 64 % tp == 0 and 80 % pp == 0
        assert layout.interleave == 1 or 80 % (pp * layout.interleave) == 0


def test_the_best_layouts_fit_and_come_fastest_first_per_fabric() -> None:
    result = search(parse_plan("llama3-70b gpus=256 search over=ib-ndr,100gbe"), load_catalogue())
    assert result.fitting <= result.tried
    keys = [key for key, _, _ in result.fabrics]
    assert set(keys) == {"ib-ndr", "100gbe"}
    for _, _, found in result.fabrics:
        steps = [c.step_seconds for c in found]
        assert steps == sorted(steps) and 1 <= len(steps) <= 5
        assert all(c.plan.memory.fits for c in found)
    text = render_search(result)
    assert "+/- 15%" in text and "(GB)" in text
    data = search_to_json(result)
    assert data["fabrics"][0]["layouts"][0]["step_seconds"] > 0  # type: ignore[index]


def test_given_sizes_stay_fixed() -> None:
    found = layouts(parse_plan("llama3-70b gpus=256 tp=8 search"), load_hardware())
    assert {layout.tp for layout in found} == {8}


def test_chat_search_answers_with_the_table_and_the_best_plan() -> None:
    reply = answer("/bandwidth plan llama3-8b gpus=64 search over=ib-ndr")
    assert reply.kind == "plan"
    assert reply.title.startswith("Layout search")
    assert "ib-ndr: InfiniBand NDR 400G" in reply.table


def test_the_cli_searches() -> None:
    done = run("plan", "llama3-8b", "--gpus", "64", "--search", "--over", "ib-ndr", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["fabrics"][0]["key"] == "ib-ndr"
