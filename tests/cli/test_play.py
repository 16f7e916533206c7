"""``quizbot play`` run as a subprocess, the way a user runs it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import bank_env, run_play

BANK = """\
questions:
  - id: fastest-link
    question: Which link is fastest?
    choices: {A: InfiniBand NDR, B: 1 GbE, C: Wi-Fi 6}
    answer: A
    explanation:
      short: NDR is 400 Gb/s per port.
      full: NDR InfiniBand runs 400 Gb/s per port, far beyond the others.
      why_not: {B: One gigabit per second is 400 times slower., C: A shared wireless medium.}
    tags: [net]
    difficulty: easy
    references: [{title: InfiniBand Trade Association, url: "https://www.infinibandta.org/"}]
    chart: {size: "7B grads bf16", op: allreduce, nodes: 16, over: [ib-hdr, 1gbe]}
  - id: bf16-bytes
    question: How many bytes does one bf16 value take?
    choices: {A: "1", B: "2", C: "4"}
    answer: B
    explanation:
      short: Sixteen bits are two bytes.
      full: bfloat16 keeps float32's 8-bit exponent and 7 bits of mantissa in 16 bits.
      why_not: {A: That is fp8 or int8., C: That is fp32.}
    tags: [memory]
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return bank_env(tmp_path, BANK)


def play(env: dict[str, str], stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_play(env, stdin, *args)


def test_piped_session_with_a_bad_answer_then_quit(env: dict[str, str]):
    result = play(env, "x\nA\nq\n", "--tag", "net", "--count", "3")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Which link is fastest?" in out
    assert "A) InfiniBand NDR" in out
    assert "'x' is not a choice: type one of A, B, C" in out
    assert "Practice 1: a new question" in out
    assert "Right! You chose A) InfiniBand NDR." in out
    assert "NDR is 400 Gb/s per port." in out
    assert "Full explanation" in out
    assert "B) 1 GbE: One gigabit per second is 400 times slower." in out
    assert "https://www.infinibandta.org/" in out
    # One question has the tag: the session says so, and how it went.
    assert "That is every question there is to practise for now." in out
    assert "Practice done: 1 of 1 right." in out
    # The question's chart is printed as the /bandwidth table.
    assert "allreduce of 7B grads bf16 = 14 GB" in out
    assert "InfiniBand HDR 200G" in out
    assert "Traceback" not in result.stderr
    assert result.stderr == ""


def test_wrong_answer_names_the_right_one(env: dict[str, str]):
    result = play(env, "a\n", "--tag", "memory", "--count", "1")
    assert result.returncode == 0
    out = result.stdout
    assert "Not this time. You chose A) 1; the answer is B) 2." in out
    assert "Why not A: That is fp8 or int8." in out  # the chosen choice's own why_not
    assert "Practice done: 0 of 1 right." in out


def test_end_of_input_ends_with_the_score_so_far(env: dict[str, str]):
    result = play(env, "", "--count", "2")
    assert result.returncode == 0
    assert result.stdout.rstrip().endswith("Practice stopped.")
    partway = play(env, "b\n", "--count", "2")
    assert partway.stdout.rstrip().endswith("Practice stopped: 1 of 1 right.")
    # The next session still works: it starts afresh.
    again = play(env, "a\n", "--tag", "net", "--count", "1")
    assert "Right! You chose A) InfiniBand NDR." in again.stdout


def test_every_line_fits_80_columns(env: dict[str, str]):
    result = play(env, "A\nB\n", "--count", "2")
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


@pytest.mark.parametrize("args", [["--count", "0"], ["--count", "x"], ["--bogus"]])
def test_bad_arguments_are_usage_errors(env: dict[str, str], args: list[str]):
    result = play(env, "", *args)
    assert result.returncode == 2
    assert "usage:" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_tag_is_one_clear_line_and_status_2(env: dict[str, str]):
    result = play(env, "", "--tag", "nope")
    assert result.returncode == 2
    # The terminal shows no markup: the tag is quoted, not wrapped in backticks.
    # computed asks a question drawn from a template, wherever a tag goes (docs/questions.md).
    assert (
        result.stderr
        == "quizbot: No question has the tag 'nope'. The tags: computed, memory, net.\n"
    )
    near = play(env, "", "--tag", "mem")
    assert near.returncode == 2
    assert near.stderr == "quizbot: No question has the tag 'mem'; did you mean 'memory'?\n"


def test_a_tag_matches_in_any_case(env: dict[str, str]):
    result = play(env, "B\n", "--tag", "MEMORY", "--count", "1")
    assert result.returncode == 0, result.stderr
    assert "How many bytes does one bf16 value take?" in result.stdout


def test_ctrl_c_exits_cleanly_with_the_score(env: dict[str, str]):
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "play", "--count", "3"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        seen = ""
        while "Your answer" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.read(1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "Practice stopped." in out
    assert "Traceback" not in err
    assert proc.returncode == 0


def test_a_fresh_session_on_the_bundled_bank_practises_a_new_question(tmp_path: Path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("QUIZBOT_QUESTIONS", "QUIZBOT_DATABASE_URL")
    }
    result = subprocess.run(
        [sys.executable, "-m", "bot", "play", "--count", "1"],
        input="A\n",
        env=env,
        cwd=tmp_path,  # the default database, quizbot.db, lands here
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Practice 1: a new question" in out
    assert "Right! You chose A)" in out or "Not this time. You chose A)" in out
    assert "Practice done:" in out and "of 1 right." in out
    assert (tmp_path / "quizbot.db").exists()


def test_a_typed_command_is_answered_as_in_chat_and_the_question_asked_again(
    env: dict[str, str],
):
    typed = "/quiz me\n/quiz next\n/bandwidth 1GB allreduce nodes=2\n/nope\nq\n"
    result = play(env, typed, "--tag", "net", "--count", "1")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # /quiz me's page, as chat words it.
    assert "Your quiz" in out and "0 points, 0 of 0 right." in out
    # No channel to post a card in: refused, and nothing opened.
    assert "I can't post in this channel yet: run quizbot slack, discord or teams" in " ".join(
        out.split()
    )
    # A table keeps its lines whole.
    assert any(
        line.startswith("   ib-ndr") and line.endswith("ring/Simple") for line in out.splitlines()
    )
    # Anything else is no choice; the question is asked again until q.
    assert "'/nope' is not a choice" in out
    assert out.count("Your answer (A-C, q to quit):") == 5
    assert out.rstrip().endswith("Practice stopped.")
