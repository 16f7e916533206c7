"""Hostile question files through ``quizbot validate``: problems as ``file:line: message``, always.

The loader itself is fuzzed in tests/bank/test_loader.py (random text, bytes, documents and
mutated structures). Here the whole command runs on what a careless or malicious contributor might
commit: YAML bombs, deep nesting, Python tags, huge and binary files, and byte-level mutations of
the shipped question files. Each must end in exit status 0 or 1 with every problem on one line
naming the file and a line inside it, nothing on stderr but the summary, and no traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cli import main
from tests.chat.observe import logging_restored


@pytest.fixture(autouse=True)
def _logging_put_back() -> Iterator[None]:
    """Undo the logging set-up of ``quizbot`` runs made in this process."""
    with logging_restored():
        yield


ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "questions").rglob("*.yaml"))
SUMMARY = re.compile(r"^ok: \d+ questions?, ")

VALID = """id: hostile-{n}
question: Which is fastest?
choices: {{A: InfiniBand, B: Wi-Fi}}
answer: A
explanation: {{short: RDMA., full: Kernel bypass.}}
"""
LAUGHS = "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 10)}]\n" for a, b in zip("abcdefg", "bcdefgh", strict=True)
)
HOSTILE: dict[str, bytes] = {
    "billion-laughs": (
        'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n' + LAUGHS + VALID.format(n=1)
    ).encode()
    + b"tags: *h\n",
    "deep-flow-nesting": b"id: deep\nquestion: " + b"[" * 20000 + b"]" * 20000 + b"\n",
    "deep-block-nesting": b"id: deep\nchoices:\n"
    + b"".join(b"  " * i + b"k:\n" for i in range(3000)),
    "python-object-tag": b'!!python/object/apply:os.system ["echo hacked"]\n',
    "python-tag-in-a-field": VALID.format(n=2).replace("Wi-Fi", "!!python/name:os.system").encode(),
    "binary-tag": VALID.format(n=3).replace("Wi-Fi", "!!binary aGVsbG8=").encode(),
    "merge-keys": b"base: &b {question: q}\n<<: *b\n" + VALID.format(n=4).encode(),
    "duplicate-keys": VALID.format(n=5).encode() + b"answer: B\n",
    "nul-and-bad-utf8": b"id: a\x00b\nquestion: \xff\xfe\n",
    "utf16": VALID.format(n=6).encode("utf-16"),
    "five-megabytes": VALID.format(n=7).replace("Which", "W" + "h" * 5_000_000).encode(),
    "one-long-line": b"id: " + b"x" * 1_000_000 + b"\n",
    "many-documents": b"---\n".join([VALID.format(n=8).encode()] * 50),
    "empty": b"",
    "only-a-comment": b"# nothing here\n",
}


def validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    """Run ``quizbot validate PATH`` in this process; return status, stdout lines, stderr."""
    status = main(["validate", str(path)])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


def check_report(path: Path, data: bytes, status: int, lines: list[str], err: str) -> None:
    """Check that the command said what it found the way it promises, and nothing else."""
    assert "Traceback" not in err and "Traceback" not in "\n".join(lines)
    last_line = len(data.decode("utf-8", errors="replace").splitlines()) + 1
    if status == 0:
        assert len(lines) == 1 and SUMMARY.match(lines[0]), lines
        return
    assert status == 1, (status, lines, err)
    assert lines, "a failed validation printed no problem"
    for line in lines:
        match = re.fullmatch(re.escape(str(path)) + r":(\d+): (.+)", line)
        assert match, line
        assert 1 <= int(match.group(1)) <= last_line, line
    assert err.startswith("quizbot validate: ") and err.count("\n") == 1, err


# A file built to make the loader work without end (an alias bomb) must not hang it: the
# test's own timeout is the bound, a failure rather than a measurement.
@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_question_files_are_reported_not_crashed_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(HOSTILE[name])
    status, lines, err = validate(path, capsys)
    check_report(path, HOSTILE[name], status, lines, err)


@st.composite
def mutated_shipped_file(draw: st.DrawFn) -> bytes:
    """Draw a shipped question file with a few bytes replaced, inserted, deleted or cut off."""
    data = bytearray(draw(st.sampled_from(SHIPPED)).read_bytes())
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        at = draw(st.integers(min_value=0, max_value=max(0, len(data) - 1)))
        action = draw(st.sampled_from(["replace", "insert", "delete", "truncate"]))
        junk = draw(st.binary(min_size=1, max_size=4) | st.sampled_from([b":", b"\n", b"  ", b"&"]))
        if action == "replace":
            data[at : at + len(junk)] = junk
        elif action == "insert":
            data[at:at] = junk
        elif action == "delete":
            del data[at : at + len(junk)]
        else:
            del data[at:]
    return bytes(data)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=mutated_shipped_file())
def test_mutated_shipped_files_are_reported_not_crashed_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes
) -> None:
    path = tmp_path / "mutated.yaml"
    path.write_bytes(data)
    status, lines, err = validate(path, capsys)
    check_report(path, data, status, lines, err)
