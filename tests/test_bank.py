"""Quality rules for the shipped question bank, beyond what the loader enforces."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse

import pytest

from bot.bank import QuestionBank, load_bank
from bot.engine.model import Question

QUESTIONS = Path(__file__).resolve().parent.parent / "questions"
TOPIC_FOLDER = re.compile(r"\d\d-[a-z0-9-]+")
SEED_CHOICES = {"A": "InfiniBand", "B": "1 Gbps Ethernet", "C": "Fibre Channel", "D": "Wi-Fi 6"}


@pytest.fixture(scope="module")
def bank() -> QuestionBank:
    return load_bank([QUESTIONS])


def topic(question: Question) -> str:
    """Return the topic folder a question's file sits in."""
    return Path(question.source).resolve().relative_to(QUESTIONS.resolve()).parts[0]


def test_bank_has_at_least_60_questions(bank: QuestionBank) -> None:
    assert len(bank) >= 60


def test_bank_spans_at_least_8_numbered_topic_folders(bank: QuestionBank) -> None:
    topics = Counter(topic(q) for q in bank)
    assert len(topics) >= 8, topics
    assert all(TOPIC_FOLDER.fullmatch(name) for name in topics), sorted(topics)
    thin = {name: n for name, n in topics.items() if n < 4}
    assert not thin, f"topics with fewer than 4 questions: {thin}"


def test_seed_question_comes_first(bank: QuestionBank) -> None:
    seed = bank.questions[0]
    assert seed.id == "multinode-interconnect"
    assert topic(seed) == "01-interconnects"
    assert {c.key: c.text for c in seed.choices} == SEED_CHOICES
    assert seed.answer == "A"
    assert set(seed.why_not) == {"B", "C", "D"}
    # NDR's rate is the key of infiniband-ndr-rate, so the seed leaves it to that question.
    for fact in ("RDMA", "HDR", "200 Gb/s", "400 Gb/s", "microsecond", "kernel"):
        assert fact in seed.full, fact
    assert seed.chart is not None
    assert seed.chart.size == "7B grads bf16"
    assert seed.chart.op == "allreduce"
    assert seed.chart.nodes == 16
    assert seed.chart.over == ("ib-hdr", "1gbe", "fc32", "wifi6")


def test_answer_letters_are_balanced(bank: QuestionBank) -> None:
    letters = Counter(q.answer for q in bank)
    total = len(bank)
    over = {k: n for k, n in letters.items() if n / total > 0.40}
    assert not over, f"answer letters over 40%: {over} of {total}"
    rare = {k: letters[k] for k in "ABCD" if letters[k] / total < 0.15}
    assert not rare, f"answer letters under 15%: {rare} of {total}"


def test_difficulties_are_mixed(bank: QuestionBank) -> None:
    levels = Counter(q.difficulty.value for q in bank)
    total = len(bank)
    for level in ("easy", "medium", "hard"):
        assert levels[level] / total >= 0.10, (level, levels)


def test_every_wrong_choice_has_a_why_not(bank: QuestionBank) -> None:
    missing = []
    for q in bank:
        wrong = {k for k in q.keys if k != q.answer}
        if set(q.why_not) != wrong or not all(q.why_not[k].strip() for k in wrong):
            missing.append(f"{q.id}: why_not {sorted(q.why_not)}, wrong choices {sorted(wrong)}")
    assert not missing, "\n".join(missing)


def test_every_question_cites_well_formed_https_references(bank: QuestionBank) -> None:
    bad = []
    for q in bank:
        if not q.references:
            bad.append(f"{q.id}: no reference")
        for ref in q.references:
            url = urlparse(ref.url)
            host = url.hostname or ""
            if (
                url.scheme != "https"
                or "." not in url.netloc
                or not re.fullmatch(r"[a-z0-9.-]+", host)
                or any(ch.isspace() for ch in ref.url)
                or not ref.title.strip()
            ):
                bad.append(f"{q.id}: {ref.title!r} {ref.url!r}")
    assert not bad, "\n".join(bad)


def test_choices_fit_the_format_and_are_mostly_four(bank: QuestionBank) -> None:
    counts = Counter(len(q.choices) for q in bank)
    assert set(counts) <= {3, 4, 5}, counts
    assert counts[4] / len(bank) >= 0.75, counts
    for q in bank:
        texts = [c.text for c in q.choices]
        assert len(set(texts)) == len(texts), q.id
        assert all(len(t) <= 75 for t in texts), q.id


def test_question_texts_are_distinct(bank: QuestionBank) -> None:
    texts = Counter(" ".join(q.text.lower().split()) for q in bank)
    assert [t for t, n in texts.items() if n > 1] == []


def test_a_few_easy_questions_for_newcomers_in_most_topics(bank: QuestionBank) -> None:
    easy_topics = {topic(q) for q in bank if q.difficulty.value == "easy"}
    assert len(easy_topics) >= 6, sorted(easy_topics)


def test_charts_name_interconnects_the_bandwidth_catalogue_knows(bank: QuestionBank) -> None:
    from bot.bandwidth import load_catalogue
    from bot.engine.charts import chart_estimate

    catalogue = load_catalogue()
    known = set(catalogue.keys())
    charted = [q for q in bank if q.chart is not None]
    assert len(charted) >= 4
    assert any(q.chart is not None and q.chart.plan is not None for q in charted)
    for q in charted:
        assert q.chart is not None
        assert set(q.chart.over) <= known, (q.id, set(q.chart.over) - known)
        # Every chart can be priced: an estimate of its size, or its training-step plan.
        assert chart_estimate(q.chart, catalogue).results, q.id
