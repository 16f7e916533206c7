"""One table of /bandwidth's options: chat, the command line and Discord refuse alike.

For every option with a limit or choices, a value just past it is refused by the chat grammar
and by ``quizbot bandwidth`` with the same reason (the flag's words for the chat word's), and
Discord's typed option carries the same bounds and choices.
"""

from __future__ import annotations

import pytest

from bot.bandwidth import (
    ENV_VAR,
    ESTIMATE,
    PLAN,
    PLAN_USAGE,
    USAGE,
    BandwidthError,
    Kind,
    Opt,
    answer,
    parse_plan,
    parse_request,
)
from bot.chat.grammar import BANDWIDTH, BadInput, read_options
from bot.chat.grammar import Kind as FieldKind
from bot.cli import build_parser
from bot.cli.bandwidth import CLI_FLAGS, _request, cli_syntax


@pytest.fixture(autouse=True)
def _bundled_catalogue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def past(opt: Opt) -> list[str]:
    """Return values just past an option's limits or outside its choices, as typed."""
    match opt.kind:
        case Kind.COUNT:
            assert opt.low is not None and opt.high is not None
            return [str(int(opt.low) - 1), str(int(opt.high) + 1)]
        case Kind.SECONDS:
            assert opt.high is not None
            return [str(opt.low or 0), str(int(opt.high) + 1)]
        case Kind.NUMBER:
            assert opt.low is not None and opt.high is not None
            return [f"{opt.low * 0.9:g}", f"{opt.high * 1.01:g}"]
        case Kind.CHOICE:
            return ["bogus"]
        case Kind.KEY:
            assert opt.high is not None
            return ["x" * (int(opt.high) + 1), "no_key!"]
        case Kind.KEYS:
            return ["no_key!,ib-hdr"]
    return []


def cli_problems(*argv: str) -> tuple[str, ...]:
    """Return what ``quizbot bandwidth ARGV`` refuses, one problem each (none: it passed)."""
    args = build_parser().parse_args(["bandwidth", *argv])
    try:
        args.handler(args)
    except BandwidthError as exc:
        return exc.problems
    return ()


def chat_problems(text: str) -> tuple[str, ...]:
    """Return what ``/bandwidth TEXT`` refuses in chat, in the command line's words."""
    try:
        answer(text)
    except BandwidthError as exc:
        return tuple(cli_syntax(problem) for problem in exc.problems)
    return ()


def refused_alike(chat: tuple[str, ...], cli: tuple[str, ...]) -> None:
    # The command line tells every unknown interconnect at once; chat stops at the first.
    assert chat, "chat took it"
    assert cli[0] == chat[0]
    assert set(chat) <= set(cli)


# An estimate's op is a bare word in chat (any other word is the size's), so its choices are
# checked on the command line and in Discord only.
ESTIMATE_CASES = [(opt, value) for opt in ESTIMATE if opt.name != "op" for value in past(opt)]
PLAN_CASES = [(opt, value) for opt in PLAN for value in past(opt)]


@pytest.mark.parametrize(
    ("opt", "value"), ESTIMATE_CASES, ids=[f"{o.key}={v[:12]}" for o, v in ESTIMATE_CASES]
)
def test_an_estimate_past_an_option_limit_is_refused_alike(opt: Opt, value: str) -> None:
    chat = chat_problems(f"1GB allreduce {opt.key}={value}")
    refused_alike(chat, cli_problems("1GB", "allreduce", f"{opt.cli}={value}"))


@pytest.mark.parametrize(
    ("opt", "value"), PLAN_CASES, ids=[f"{o.key}={v[:12]}" for o, v in PLAN_CASES]
)
def test_a_plan_past_an_option_limit_is_refused_alike(opt: Opt, value: str) -> None:
    gpus = "" if opt.name == "gpus" else "gpus=8"
    chat = chat_problems(f"plan llama3-70b {gpus} {opt.key}={value}")
    cli_gpus = [] if opt.name == "gpus" else ["--gpus=8"]
    refused_alike(chat, cli_problems("plan", "llama3-70b", *cli_gpus, f"{opt.cli}={value}"))


@pytest.mark.parametrize("opt", [o for o in ESTIMATE if o.kind is Kind.COUNT], ids=lambda o: o.name)
def test_an_estimate_at_an_option_limit_is_taken_alike(opt: Opt) -> None:
    assert opt.low is not None and opt.high is not None
    for value in (int(opt.low), int(opt.high)):
        assert getattr(parse_request(f"1GB {opt.key}={value}"), opt.name) == value
        args = build_parser().parse_args(["bandwidth", "1GB", f"{opt.cli}={value}"])
        assert getattr(_request(args), opt.name) == value


def test_the_operations_are_the_same_choices_everywhere() -> None:
    op = ESTIMATE["op"]
    for name in op.choices:
        assert parse_request(f"1GB {name} nodes=2").op == name
        args = build_parser().parse_args(["bandwidth", "1GB", f"--op={name}"])
        assert _request(args).op == name
    assert cli_problems("1GB", "--op=bogus")[0].startswith("Unknown operation 'bogus'")
    typed = next(o for o in BANDWIDTH.verbs[0].options if o.name == "op")
    assert typed.choices == op.choices


def test_a_switch_is_the_bare_word_in_chat_and_the_flag_on_the_command_line() -> None:
    for form in (ESTIMATE, PLAN):
        for opt in form.of(Kind.SWITCH):
            assert opt.hint == f"[{opt.key}]" and opt.cli == "--" + opt.key
    assert parse_request("1GB allreduce nodes=2 gpus=8 sharp over=ib-hdr").sharp is True
    assert parse_plan("plan llama3-70b gpus=64 tp-overlap fp8").tp_overlap is True


@pytest.mark.parametrize("opt", [o for o in ESTIMATE], ids=lambda o: o.name)
def test_discord_types_each_estimate_option_with_the_table_s_limits_and_choices(
    opt: Opt,
) -> None:
    (verb,) = BANDWIDTH.verbs
    typed = next(o for o in verb.options if o.name == opt.name)
    assert (typed.low, typed.high) == (opt.low, opt.high)
    assert typed.choices == tuple(c for c in opt.choices if c != "auto")
    assert typed.help == opt.help and len(typed.help) <= 100
    if opt.kind is Kind.COUNT:
        assert typed.kind is FieldKind.INTEGER
        assert opt.high is not None
        with pytest.raises(BadInput, match=f"between {opt.low:g} and {opt.high:g}"):
            read_options(BANDWIDTH, "", {"size": "1GB", opt.name: int(opt.high) + 1})
    if opt.kind is Kind.CHOICE:
        assert typed.kind is FieldKind.CHOICE


def test_every_option_is_in_its_usage_its_flags_and_its_chat_words() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    bandwidth = sub.choices["bandwidth"]  # type: ignore[index]
    flags = {flag for action in bandwidth._actions for flag in action.option_strings}
    for form, usage in ((ESTIMATE, USAGE), (PLAN, PLAN_USAGE)):
        for opt in form:
            assert opt.cli in flags, opt.cli
            assert all(CLI_FLAGS[word] == opt.cli for word in opt.words), opt.name
            spelled = opt.key if opt.kind is Kind.SWITCH or not opt.keyed else f"{opt.key}="
            assert spelled in usage, f"{spelled} is not in the usage"
            if opt.listed:
                assert opt.usage in usage
