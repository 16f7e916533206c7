"""How fast ``quizbot validate --lint`` is: the rules beside loading the bank they read.

Figures, each against a baseline measured in the same run:

- ``lint()`` over the shipped bank, beside ``load_bank()`` of the same files (the schema check
  every ``validate`` pays anyway);
- ``lint()`` over the bank copied 2, 4 and 8 times (ids and words made distinct), beside the bank
  itself, to show how the cost grows with the bank;
- the near-duplicate rule through its shingle index, beside comparing every pair of stems and
  full explanations with difflib's SequenceMatcher (the obvious way, quadratic in the bank).

    .venv/bin/python benchmarks/lint.py [--min-time S]
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.bank import lint as rules  # noqa: E402
from bot.bank.lint import (  # noqa: E402
    STOP_WORDS,
    Limits,
    content_words,
    lint,
    near_duplicates,
)
from bot.bank.loader import load_bank  # noqa: E402
from bot.engine.model import Question  # noqa: E402

QUESTIONS = ROOT / "questions"


def per_call(fn: Callable[[], object], min_time: float) -> float:
    """Return the median wall seconds of one call, over at least five calls and ``min_time``.

    The word caches are emptied before each call: a ``quizbot validate --lint`` run starts cold.
    """
    fn()
    samples: list[float] = []
    deadline = time.perf_counter() + min_time
    while time.perf_counter() < deadline or len(samples) < 5:
        rules._tokens.cache_clear()
        rules.normalise.cache_clear()
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def copies(questions: Sequence[Question], n: int) -> list[Question]:
    """Return the bank n times over, each copy's content words prefixed so no two copies match.

    Stop words and numbers are left alone, so each copy reads like the bank to the rules.
    """

    def mark(text: str, tag: str) -> str:
        return re.sub(
            r"[A-Za-z][A-Za-z'-]*",
            lambda m: m.group(0) if m.group(0).lower() in STOP_WORDS else tag + m.group(0),
            text,
        )

    out = []
    for k in range(n):
        tag = "q" + chr(ord("a") + k)
        for q in questions:
            out.append(
                replace(q, id=f"{q.id}-{tag}", text=mark(q.text, tag), full=mark(q.full, tag))
            )
    return out


def difflib_pairs(questions: Sequence[Question]) -> int:
    """Compare every pair of stems and of full explanations with SequenceMatcher."""
    found = 0
    for texts in ([q.text for q in questions], [q.full for q in questions]):
        tokens = [content_words(t) for t in texts]
        for a, b in itertools.combinations(tokens, 2):
            if difflib.SequenceMatcher(None, a, b).ratio() >= 0.5:
                found += 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds per figure")
    args = parser.parse_args()
    bank = load_bank([QUESTIONS]).questions
    n = len(bank)

    load_s = per_call(lambda: load_bank([QUESTIONS]), args.min_time)
    lint_s = per_call(lambda: lint(bank), args.min_time)
    print(f"shipped bank: {n} questions")
    print(f"  load_bank (schema check)  {load_s * 1e3:8.1f} ms")
    print(f"  lint                      {lint_s * 1e3:8.1f} ms   {lint_s / load_s:5.2f}x load_bank")

    print("lint on larger banks (copies with distinct words)")
    for k in (2, 4, 8):
        bigger = copies(bank, k)
        big_s = per_call(lambda bigger=bigger: lint(bigger), args.min_time)
        print(
            f"  {len(bigger):5d} questions  {big_s * 1e3:8.1f} ms   {big_s / lint_s:5.2f}x the bank"
            f" ({k}x the questions)"
        )

    limits = Limits()
    for label, questions in (("shipped bank", list(bank)), ("bank x4", copies(bank, 4))):
        index_s = per_call(lambda q=questions: near_duplicates(q, limits), args.min_time)
        pairs_s = per_call(lambda q=questions: difflib_pairs(q), args.min_time)
        print(
            f"near-duplicates, {label} ({len(questions)}): shingle index {index_s * 1e3:7.1f} ms,"
            f" difflib over every pair {pairs_s * 1e3:8.1f} ms   {pairs_s / index_s:6.1f}x slower"
        )


if __name__ == "__main__":
    main()
