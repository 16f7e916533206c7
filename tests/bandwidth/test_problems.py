"""Every problem of a request told at once, and the command line told in its own words."""

from __future__ import annotations

import re

import pytest

from bot.bandwidth import ENV_VAR, BandwidthError, parse_plan
from bot.cli import build_parser, main
from bot.cli.bandwidth import CLI_FLAGS, cli_syntax


@pytest.fixture(autouse=True)
def _bundled_catalogue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def quizbot(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["bandwidth", *args])
    out, err = capsys.readouterr()
    return status, out, err


def build_parser_flags() -> set[str]:
    """Return every option ``quizbot bandwidth`` accepts."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    bandwidth = sub.choices["bandwidth"]  # type: ignore[index]
    return {flag for action in bandwidth._actions for flag in action.option_strings}


# A word of the chat grammar: gpus=, zero=3, over=ib-hdr (a quoted echo of the input aside).
CHAT_WORD = re.compile(r"(?<!['\w-])[a-z][a-z-]*=")


# ----- the chat grammar: every problem in one reply -----


def test_a_plan_tells_every_problem_of_its_words_at_once() -> None:
    with pytest.raises(BandwidthError) as caught:
        parse_plan("plan nonsense gpus=0 tp=0 zero=7 gpu=h900 micro=x")
    problems = caught.value.problems
    assert len(problems) == 6, problems
    told = caught.value.message
    assert told.startswith("6 problems:\n- ")
    for part in (
        "gpus= must be between 1",
        "tp= must be between 1",
        "zero= must be 0, 1, 2 or 3",
        "micro= must be a whole number",
        "Unknown model 'nonsense'",
        "Unknown GPU 'h900'",
    ):
        assert part in told


def test_one_problem_is_told_as_it_was() -> None:
    with pytest.raises(BandwidthError) as caught:
        parse_plan("plan llama3-70b gpus=0")
    assert caught.value.message == "gpus= must be between 1 and 1,000,000; got 0."
    assert caught.value.problems == (caught.value.message,)


def test_the_layout_problems_come_with_an_unknown_network() -> None:
    from bot.bandwidth import load_catalogue, plan

    request = parse_plan("plan llama3-70b gpus=16 tp=3 pp=200 over=ib-ndx")
    with pytest.raises(BandwidthError) as caught:
        plan(request, load_catalogue(extra=None))
    told = caught.value.message
    for part in (
        "Unknown interconnect 'ib-ndx'",
        "pp=200 is more than the 16 GPUs",
        "tp=3 must divide the 64 heads",
        "pp=200 is more than the model's 80 layers",
    ):
        assert part in told


# ----- the command line -----


def test_the_review_case_tells_the_gpus_and_the_model_together(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = quizbot(capsys, "plan", "nonsense", "--gpus", "0")
    assert status == 2 and out == ""
    assert err.startswith("quizbot: 2 problems:\n")
    assert "- --gpus must be between 1 and 1,000,000; got 0." in err
    assert "- Unknown model 'nonsense'." in err
    assert "gpus=" not in err


def test_every_flag_of_an_estimate_is_checked_before_anything_is_told(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, _, err = quizbot(
        capsys, "1GB", "--op", "allreduce", "--nodes", "0", "--gpus", "0", "--over", "ib-hrd,foo"
    )
    assert status == 2
    for part in (
        "--nodes must be between 1",
        "--gpus must be between 1",
        "Unknown interconnect 'ib-hrd'. Did you mean ib-hdr",
        "Unknown interconnect 'foo'",
    ):
        assert part in err
    assert err.startswith("quizbot: 4 problems:")


@pytest.mark.parametrize(
    "args",
    [
        ["plan", "nonsense", "--gpus", "0"],
        ["plan", "llama3-70b", "--gpus", "0", "--tp", "0", "--zero", "7", "--micro-batch", "0"],
        ["plan", "llama3-70b", "--gpus", "16", "--tp", "3", "--gpus-per-node", "100"],
        ["plan", "llama3-70b", "--gpus", "128", "--kv-heads", "x", "--top-k", "0"],
        ["plan", "llama3-70b", "--gpus", "128", "--interleave", "2", "--seq", "1001", "--cp", "2"],
        ["plan", "70B", "--gpus", "8", "--layers", "80"],
        ["plan", "--gpus", "8"],
        ["plan", "llama3-70b", "--gpus", "128", "--global-batch", "3"],
        ["plan", "llama3-70b", "--gpus", "128", "--efficiency", "2"],
        ["1GB", "--op", "allreduce", "--nodes", "1"],
        ["1GB", "--op", "allreduce", "--step", "x", "--nics", "0"],
        ["1GB", "--op", "allreduce", "--nodes", "2", "--algo", "nvls"],
    ],
)
def test_command_line_messages_name_flags_not_chat_words(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    status, _, err = quizbot(capsys, *args)
    assert status == 2, err
    assert not CHAT_WORD.search(err), err
    for flag in re.findall(r"--[a-z][a-z-]*", err):
        assert flag in build_parser_flags(), (flag, err)


def test_a_plan_that_does_not_fit_advises_in_flags(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = quizbot(capsys, "plan", "llama3-70b", "--gpus", "8")
    assert status == 0
    warning = " ".join(out.split("Warning: Does not fit")[1].split("Warning:")[0].split())
    assert "raise --tp or --pp, use --zero 3, or add --recompute." in warning
    assert "zero=3" not in out
    assert "(add --sharp)" in " ".join(out.split())


def test_cli_syntax_turns_each_chat_word_into_its_flag() -> None:
    assert cli_syntax("use zero=3, or add recompute.") == "use --zero 3, or add --recompute."
    assert cli_syntax("gpus= must be between 1 and 8.") == "--gpus must be between 1 and 8."
    assert cli_syntax("try over=ib-hdr,1gbe.") == "try --over ib-hdr,1gbe."
    assert cli_syntax("raise batch= or lower micro=.") == (
        "raise --global-batch or lower --micro-batch."
    )
    assert cli_syntax("raise tp or pp") == "raise --tp or --pp"
    assert cli_syntax("Unknown option 'foo='.") == "Unknown option 'foo='."
    assert cli_syntax("such as plan llama3-70b gpus=128.") == (
        "such as quizbot bandwidth plan llama3-70b --gpus 128."
    )
    assert set(CLI_FLAGS.values()) <= build_parser_flags()
