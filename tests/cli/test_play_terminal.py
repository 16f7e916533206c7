"""``quizbot play`` at a real terminal (a pseudo-terminal): colour, verdict first, more on ``m``."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import bank_env
from tests.cli.test_play import BANK

ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
# A foreground colour among the codes (NO_COLOR still allows bold and dim).
COLOUR = re.compile(r"\x1b\[(?:[0-9]+;)*(?:3[0-8]|9[0-7])(?:;[0-9]+)*m")
FULL = "NDR InfiniBand runs 400 Gb/s per port, far beyond the others."


class Terminal:
    """``quizbot play`` on a pseudo-terminal: type lines, read what it shows."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "play", *args],
            stdin=slave,
            stdout=slave,
            stderr=subprocess.PIPE,
            env={**env, "COLUMNS": "100", "TERM": "xterm-256color"},
        )
        os.close(slave)
        self.seen = ""

    def until(self, text: str, within: float = 30) -> str:
        """Read until ``text`` has been shown (colour codes aside); return what came."""
        deadline = time.monotonic() + within
        start = len(self.seen)
        while text not in ESCAPE.sub("", self.seen[start:]):
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never came; shown:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"{text!r} never came; the process ended:\n{self.seen}"
                self.seen += chunk.decode(errors="replace")
        return self.seen[start:]

    def type(self, line: str) -> None:
        """Type ``line`` and Enter."""
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        """Wait for the process to end (bounded); return its exit status."""
        try:
            status = self.proc.wait(timeout=30)
            assert self.proc.stderr is not None
            assert self.proc.stderr.read() == b""
            return status
        finally:
            self.stop()

    def stop(self) -> None:
        """End the process if it still runs, and let go of the terminal and the pipe."""
        if self.proc.returncode is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            self.proc.stderr.close()
        if self.master >= 0:
            os.close(self.master)
            self.master = -1


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = bank_env(tmp_path, BANK)
    environment.pop("NO_COLOR", None)
    return environment


def test_the_verdict_comes_first_in_colour_and_the_rest_on_request(env: dict[str, str]):
    term = Terminal(env, "--tag", "net", "--count", "1")
    try:
        card = term.until("Your answer (A-C, q to quit):")
        assert "Practice 1: a new question" in ESCAPE.sub("", card)
        term.type("A")
        verdict = term.until("m: the full explanation")
        plain = ESCAPE.sub("", verdict)
        # The verdict, in green, then the short explanation; nothing more yet.
        assert "\x1b[1;32mRight! You chose A) InfiniBand NDR." in verdict
        assert COLOUR.search(verdict)
        assert plain.index("Right!") < plain.index("NDR is 400 Gb/s per port.")
        # The last answer says the score, as in chat.
        assert plain.index("NDR is 400 Gb/s per port.") < plain.index("Practice done: 1 of 1")
        assert FULL not in plain
        term.type("m")
        more = ESCAPE.sub("", term.until("Enter: done"))
        assert FULL in more
        assert "B) 1 GbE: One gigabit per second is 400 times slower." in more
        term.type("")
        assert term.close() == 0
        assert "Practice stopped" not in ESCAPE.sub("", term.seen)
    finally:
        term.stop()


def test_enter_skips_the_full_explanation(env: dict[str, str]):
    term = Terminal(env, "--count", "2")
    try:
        term.until("Your answer")
        term.type("A")
        term.until("Enter: next ·")
        term.type("")
        # Words as the terminal wraps them, one space between.
        second = " ".join(ESCAPE.sub("", term.until("Your answer")).split())
        assert "Practice 2: a new question" in second
        assert "Full explanation" not in second
        # Every question says how many are left after it.
        assert "The last one of this session." in second
        term.type("q")
        assert term.close() == 0
    finally:
        term.stop()


def test_no_color_keeps_the_terminal_plain(env: dict[str, str]):
    term = Terminal({**env, "NO_COLOR": "1"}, "--tag", "net", "--count", "1")
    try:
        term.until("Your answer")
        term.type("A")
        verdict = term.until("m: the full explanation")
        assert "Right! You chose A) InfiniBand NDR." in verdict
        assert not COLOUR.search(verdict)
        term.type("q")
        assert term.close() == 0
    finally:
        term.stop()


def test_piped_output_has_no_colour_and_the_whole_explanation(env: dict[str, str]):
    result = subprocess.run(
        [sys.executable, "-m", "bot", "play", "--tag", "net", "--count", "1"],
        input="A\n",
        env={**env, "TERM": "xterm-256color"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert not ESCAPE.search(result.stdout)
    assert FULL in result.stdout
    # Paragraphs of the full explanation are set apart by a blank line.
    assert "Right! You chose A) InfiniBand NDR." in result.stdout


def test_i_was_sure_re_rates_the_answer_and_says_so(env: dict[str, str]):
    term = Terminal(env, "--tag", "memory", "--count", "1")
    try:
        term.until("Your answer")
        term.type("A")  # wrong: bf16 is two bytes
        term.until("g: I guessed")
        term.type("s")
        told = ESCAPE.sub("", term.until("g: I guessed"))
        # A confidently wrong answer is told so plainly.
        assert "You were sure, and it was wrong" in told
        term.type("g")
        again = ESCAPE.sub("", term.until("g: I guessed"))
        assert "You have said how sure you were of that answer already." in again
        term.type("")
        assert term.close() == 0
        assert "Practice done: 0 of 1 right." in ESCAPE.sub("", term.seen)
    finally:
        term.stop()
