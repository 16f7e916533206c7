"""The bank linter's rules, each on a crafted file that triggers it and a near miss that does not.

Every file in ``tests/bank/lint/`` marks the lines a warning must point at with a trailing
``# lint: RULE`` comment; a file without a marker must lint clean. Bank-wide rules (letter
balance, the thresholds) are driven by questions built here.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from bot.bank import lint as L
from bot.bank.bank import QuestionBank
from bot.bank.loader import load_bank
from bot.engine.model import Choice, Question, Reference

FIXTURES = Path(__file__).resolve().parent / "lint"
MARKER = re.compile(r"#\s*lint:\s*([a-z-]+)\s*$")
FILES = sorted(FIXTURES.glob("*.yaml"))


def markers(path: Path) -> set[tuple[int, str]]:
    """Return (line, rule) for each ``# lint: rule`` comment in the file."""
    found = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        m = MARKER.search(line)
        if m:
            found.add((number, m.group(1)))
    return found


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_crafted_file_warns_exactly_at_its_markers(path: Path) -> None:
    bank = load_bank([path])
    report = L.lint(bank.questions)
    got = {(f.line, f.rule) for f in report.findings}
    assert got == markers(path), "\n".join(str(f) for f in report.findings)
    assert all(f.file == str(path) for f in report.findings)


@pytest.mark.parametrize(
    "rule", [r for r in L.RULES if r != "letter-balance" and r not in L.BANK_RULES]
)
def test_every_rule_has_a_triggering_file_and_a_near_miss(rule: str) -> None:
    mine = [p for p in FILES if p.stem.startswith(rule)]
    triggers = [p for p in mine if any(r == rule for _, r in markers(p))]
    misses = [p for p in mine if not markers(p)]
    assert triggers, f"no crafted file triggers {rule}"
    assert misses, f"no near-miss file for {rule}"


def test_the_clean_file_has_no_marker_and_every_marker_names_a_rule() -> None:
    assert markers(FIXTURES / "clean.yaml") == set()
    named = {rule for p in FILES for _, rule in markers(p)}
    assert named <= set(L.RULES)


def test_finding_prints_file_line_warning_and_rule() -> None:
    finding = L.Finding("q/a.yaml", 7, "length-cue", "the keyed choice B is the longest")
    assert str(finding) == "q/a.yaml:7: warning: the keyed choice B is the longest [length-cue]"


# ---------------------------------------------------------------- building questions


def make(
    qid: str,
    answer: str = "A",
    choices: tuple[str, ...] = ("Alpha one", "Bravo two", "Charlie 3", "Delta four"),
    text: str | None = None,
    full: str | None = None,
    source: str = "bank/01-topic/q.yaml",
) -> Question:
    """Return a question whose stem, explanation and choices share no words with others'."""
    letters = "ABCDE"[: len(choices)]
    why_not = {
        k: f"{qid} wrong {k}: explains {qid}x{k} and {qid}y{k} and {qid}z{k} at length"
        for k in letters
        if k != answer
    }
    return Question(
        id=qid,
        text=text or f"Which {qid}a {qid}b {qid}c {qid}d is it?",
        choices=tuple(Choice(k, t) for k, t in zip(letters, choices, strict=True)),
        answer=answer,
        short="short",
        full=full or f"{qid}e {qid}f {qid}g {qid}h {qid}i {qid}j.",
        why_not=why_not,
        references=(Reference("paper", "https://arxiv.org/abs/2006.15704"),),
        source=source,
        line=1,
        lines={"answer": 10, **{f"choices.{k}": 4 + i for i, k in enumerate(letters)}},
    )


def ids(n: int) -> list[str]:
    """Return n ids made only of letters, so they never share a word with each other."""
    out = []
    for i in range(n):
        word = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            word = chr(ord("a") + r) + word
        out.append("q" + word)
    return out


# ---------------------------------------------------------------- letter balance


@pytest.mark.parametrize(
    ("answers", "warned"),
    [
        ("AAAB", "A"),  # 75% of a folder of four: over 50%
        ("AAABB", "A"),  # 60%
        ("AABC", None),  # exactly 50% is not over
        ("AAA", None),  # a folder of three is too small to judge
        ("ABCD", None),
    ],
)
def test_folder_letter_balance(answers: str, warned: str | None) -> None:
    questions = [make(qid, a) for qid, a in zip(ids(len(answers)), answers, strict=True)]
    report = L.lint(questions)
    found = [f for f in report.findings if f.rule == "letter-balance"]
    if warned is None:
        assert found == []
    else:
        assert len(found) == 1
        first = next(q for q in questions if q.answer == warned)
        assert (found[0].question_id, found[0].line) == (first.id, 10)
        assert f"keys {warned} in {answers.count(warned)} of {len(answers)}" in found[0].message
    (folder,) = report.folders
    assert folder.scope == "01-topic"
    assert folder.total == len(answers)


def test_folders_are_judged_apart() -> None:
    one = [make(q, "A", source="bank/01-a/q.yaml") for q in ids(4)]
    two = [make(q, a, source="bank/02-b/q.yaml") for q, a in zip(ids(8)[4:], "ABCD", strict=True)]
    report = L.lint(one + two)
    found = [f for f in report.findings if f.rule == "letter-balance"]
    assert [f.message.split()[1] for f in found] == ["01-a"]
    assert [(s.scope, s.total) for s in report.folders] == [("01-a", 4), ("02-b", 4)]
    assert report.topics == 2


def test_topics_given_by_the_caller_decide_the_folders() -> None:
    questions = [make(q, "A") for q in ids(4)]
    topics = {q.id: ("x" if i % 2 else "y") for i, q in enumerate(questions)}
    report = L.lint(questions, topics)
    assert sorted(s.scope for s in report.folders) == ["x", "y"]
    assert not [f for f in report.findings if f.rule == "letter-balance"]


# ---------------------------------------------------------------- bank-wide thresholds

LONG_KEY = ("Alpha one, the longest", "Bravo two", "Charlie 3", "Delta four")


def bank(n: int, cued: int, answers: str | None = None) -> list[Question]:
    """Return n text-choice questions, the first ``cued`` keyed on their longest choice."""
    out = []
    letters = answers or ("ABCD" * n)[:n]
    for i, (qid, letter) in enumerate(zip(ids(n), letters, strict=True)):
        texts = list(LONG_KEY if i < cued else ("Alpha one", "Bravo two", "Charlie 3", "Delta 4"))
        if i < cued:
            # Move the long text to the keyed letter.
            at = "ABCD".index(letter)
            texts[0], texts[at] = texts[at], texts[0]
        out.append(make(qid, letter, tuple(texts)))
    return out


@pytest.mark.parametrize(
    ("n", "cued", "fails"),
    [
        (20, 6, False),  # 30.0%: at the limit, not over it
        (20, 7, True),  # 35%
        (10, 3, False),  # 30% of ten: at the limit
        (10, 5, False),  # 50% of ten: over, but chance reaches 5 of 10 at 1/4 about 8% of the time
        (10, 7, True),  # 70% of ten: chance reaches it 0.35% of the time
        (19, 19, True),  # under the sample size, but 19 of 19 is no accident
        (5, 2, False),  # 40% of five: chance does that a third of the time
        (40, 12, False),
        (40, 13, True),  # 32.5%
    ],
)
def test_length_cue_share_limit_is_exact_at_the_boundary(n: int, cued: int, fails: bool) -> None:
    report = L.lint(bank(n, cued))
    assert report.text_choice == n
    assert report.length_cued == cued
    assert [b.rule for b in report.breaches] == (["length-cue"] if fails else [])
    assert report.ok is not fails


@pytest.mark.parametrize(
    ("answers", "fails"),
    [
        ("A" * 7 + "B" * 5 + "C" * 4 + "D" * 4, False),  # A 35%: at the limit
        ("A" * 8 + "B" * 4 + "C" * 4 + "D" * 4, True),  # A 40%
        ("A" * 4 + "B" * 4 + "C" * 4 + "D" * 8, True),
        ("A" * 9 + "B" * 10, True),  # 19 questions: B 53%, p = 0.003 by the binomial test
        ("A" * 3 + "B" * 2 + "C" * 2 + "D" * 3, False),  # 10 questions, A 30%
        ("AABCD", False),  # 40% of five: p = 0.37
    ],
)
def test_letter_share_limit_is_exact_at_the_boundary(answers: str, fails: bool) -> None:
    report = L.lint(bank(len(answers), 0, answers))
    assert [b.rule for b in report.breaches] == (["letter-balance"] if fails else [])


def test_summary_line_reports_counts_shares_and_limits() -> None:
    report = L.lint(bank(20, 7))
    assert report.summary() == (
        "lint: 20 questions in 1 topic; length cue 35% of 20 text-choice (limit 30%); "
        "letters A 25% B 25% C 25% D 25% (limit 35%); extremes keyed 0% of 0 sorted-number "
        "(band 35-65%, binomial test); 7 warnings; 1 limit passed"
    )
    small = L.lint(bank(3, 0))
    assert small.summary() == (
        "lint: 3 questions in 1 topic; length cue 0% of 3 text-choice "
        "(limit 30%, binomial test); letters A 33% B 33% C 33% D 0% "
        "(limit 35%, binomial test); extremes keyed 0% of 0 sorted-number "
        "(band 35-65%, binomial test); 0 warnings"
    )


def test_limits_can_be_set() -> None:
    strict = L.Limits(length_cue_percent=10, min_sample=5)
    assert [b.rule for b in L.lint(bank(10, 2), limits=strict).breaches] == ["length-cue"]
    assert L.lint(bank(10, 1), limits=strict).ok


def test_five_questions_always_keyed_a_and_longest_fail() -> None:
    # 5 of 5 by chance at 1/4 each: p = 0.25**5, about 0.001.
    report = L.lint(bank(5, 5, "AAAAA"))
    assert sorted(b.rule for b in report.breaches) == ["length-cue", "letter-balance"]
    assert "chance reaches it less than 1%" in report.breaches[0].message
    assert L.lint(bank(5, 1, "ABCDA")).ok


def test_binomial_tail() -> None:
    assert L.binomial_tail([0.25] * 5, 5) == pytest.approx(0.25**5)
    assert L.binomial_tail([0.25] * 5, 0) == pytest.approx(1.0)
    assert L.binomial_tail([0.5] * 2, 1) == pytest.approx(0.75)
    assert L.binomial_tail([0.5, 0.0], 2) == 0.0
    assert L.binomial_tail([0.5], 3) == 0.0


# ---------------------------------------------------------------- sorted-number key position

SORTED = ("100 Gb/s", "200 Gb/s", "400 Gb/s", "800 Gb/s")


def sorted_bank(answers: str) -> list[Question]:
    """Return sorted-number questions keyed at these letters."""
    return [make(qid, a, SORTED) for qid, a in zip(ids(len(answers)), answers, strict=True)]


@pytest.mark.parametrize(
    ("answers", "fails"),
    [
        ("BC" * 10, True),  # middles only: extremes 0 of 20
        ("BCBCBCBCBCBCBCADADAD", True),  # extremes 6 of 20: 30%, under the band
        ("BCBCBCBCBCBCBADADADA", False),  # 7 of 20: 35%, the bottom of the band
        ("ABCD" * 5, False),  # 50%
        ("ADADADADADADADBCBCBC", True),  # 14 of 20: 70%, over the top
        ("ADADADADADADADBCBCBC"[:13] + "BCBCBCB", False),  # 13 of 20: 65%
        ("BCB", False),  # three middles: chance does that 1 time in 8
        ("BCBCBCB", True),  # seven middles: p = 0.5**7, under 1%
    ],
)
def test_sorted_number_extremes_band(answers: str, fails: bool) -> None:
    report = L.lint(sorted_bank(answers))
    assert report.sorted_number == len(answers)
    assert report.sorted_extreme == sum(a in "AD" for a in answers)
    rules = [b.rule for b in report.breaches if b.rule == "sorted-key"]
    assert rules == (["sorted-key"] if fails else [])


def test_only_sorted_quantities_count_as_sorted_number() -> None:
    assert L.is_sorted_number(make("qa", "B", SORTED))
    assert L.is_sorted_number(make("qb", "B", tuple(reversed(SORTED))))
    assert not L.is_sorted_number(make("qc", "B", ("200 Gb/s", "100 Gb/s", "400 Gb/s", "1 ms")))
    assert not L.is_sorted_number(make("qd", "B"))
    assert not L.is_sorted_number(make("qe", "B", ("1 ms", "2 ms")))
    assert L.keyed_extreme(make("qf", "D", SORTED))
    assert not L.keyed_extreme(make("qg", "C", SORTED))


def test_sorted_key_breach_message() -> None:
    (breach,) = [b for b in L.lint(sorted_bank("BC" * 10)).breaches if b.rule == "sorted-key"]
    assert str(breach) == (
        "lint: error: the first or last choice is keyed in 0 of 20 sorted-number questions "
        "(0.0%), too seldom for the 35-65% band: players learn to pick the middle (or the ends) "
        "[sorted-key]"
    )


# ---------------------------------------------------------------- the newer per-question rules


@pytest.mark.parametrize(
    ("tags", "flagged"),
    [
        (("all-reduce",), ["all-reduce"]),
        (("All_Reduce",), ["All_Reduce"]),
        (("reduce",), []),  # in the key and in a distractor
        (("collectives", "ddp"), []),
        (("2020",), []),  # a bare number names nothing
    ],
)
def test_tag_names_key(tags: tuple[str, ...], flagged: list[str]) -> None:
    q = replace(
        make("qa", "B", ("Broadcast", "All-reduce", "Reduce-scatter", "2020 scatter")), tags=tags
    )
    found = L.tag_names_key(q)
    assert [f.message.split("'")[1] for f in found] == flagged


@pytest.mark.parametrize(
    ("tags", "flagged"),
    [
        (("recomputation",), ["recomputation"]),  # "recomputed" in the key only
        (("activation",), []),  # "activations" in every choice
        (("compute",), []),  # too far from "recomputed" to be its form
        (("bus",), []),  # short words are compared whole
    ],
)
def test_tag_names_key_in_any_form_of_its_words(tags: tuple[str, ...], flagged: list[str]) -> None:
    choices = (
        "Host memory, as activations are offloaded",
        "Time, as activations are recomputed",
        "Bandwidth, as activations are sharded on a bus",
    )
    q = replace(make("qr", "B", choices), tags=tags)
    found = L.tag_names_key(q)
    assert [f.message.split("'")[1] for f in found] == flagged


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("recomputation", "recomputed", True),
        ("networking", "network", True),
        ("infiniband", "infiniband", True),
        ("compute", "recomputed", False),
        ("rail", "rails", False),  # under five letters: whole words only
        ("congestion", "congested", True),
        ("storage", "store", False),
    ],
)
def test_same_word(a: str, b: str, same: bool) -> None:
    assert L.same_word(a, b) is same


# The expert review behind the rule: on the open card these tags named the answer. Each is
# gone from its question; where the tag is a form of the keyed choice's words the rule catches
# it coming back, and the others name the answer's idea, not its words, and stay out by review.
REVIEWED_TAGS = {
    "multinode-interconnect": ("infiniband", True),
    "activation-checkpointing-trade": ("recomputation", True),
    "ib-port-stuck-initializing": ("subnet-manager", True),
    "ib-xmitwait-without-errors": ("congestion", True),
    "diurnal-throughput-dip": ("dvfs", True),
    "out-of-band-bmc-network": ("bmc", True),
    "rail-optimized-fabric": ("rails", False),
    "checkpoint-copy-incast-100gbe": ("incast", False),
    "hw-slowdown-straggler-node": ("thermal-throttling", False),
    "ecmp-elephant-flows": ("ecmp", False),
}


@pytest.fixture(scope="module")
def shipped() -> QuestionBank:
    return load_bank([Path(__file__).resolve().parents[2] / "questions"])


@pytest.mark.parametrize(("qid", "review"), sorted(REVIEWED_TAGS.items()))
def test_the_reviewed_give_away_tags_stay_out_of_the_bank(
    shipped: QuestionBank, qid: str, review: tuple[str, bool]
) -> None:
    tag, by_text = review
    q = shipped.by_id(qid)
    assert tag not in q.tags
    assert not L.tag_names_key(q)
    found = L.tag_names_key(replace(q, tags=(*q.tags, tag)))
    assert [f.message.split("'")[1] for f in found] == ([tag] if by_text else [])


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("A figure (unchecked) from the talk.", "unchecked"),
        ("By our own arithmetic, 12 GB.", "our own arithmetic"),
        ("Not yet verified against the spec.", "Not yet verified"),
        ("Citation needed.", "Citation needed"),
        ("NCCL checked the topology at init.", None),
        ("The unchecked-exception idea is Java's.", "unchecked"),
        ("Our own measurements show 12 GB.", None),
    ],
)
def test_reviewer_notes(text: str, flagged: str | None) -> None:
    q = replace(make("qa"), full=text)
    found = L.reviewer_notes(q)
    if flagged is None:
        assert found == []
    else:
        (f,) = found
        assert f"'{flagged}'" in f.message
        assert f.rule == "reviewer-note"


def test_reviewer_notes_cover_every_text_players_read() -> None:
    q = replace(
        make("qa"),
        text="Which (unverified) figure?",
        why_not={"B": "unchecked"},
        references=(Reference("Spec, unchecked", "https://arxiv.org/abs/1"),),
    )
    where = [f.message.split(" says")[0] for f in L.reviewer_notes(q)]
    assert where == ["the stem", "why_not B", "reference 1's title"]


def test_answer_leak_only_within_a_topic_and_only_whole_keys() -> None:
    keyed = make("qa", "A", ("Rings of eight GPUs", "Trees", "Meshes", "Stars"))
    quoting = make("qb", full="NCCL builds rings of eight GPUs here.")
    partial = make("qc", full="NCCL builds rings of GPUs here.")
    found = L.answer_leaks([keyed, quoting, partial], {"qa": "t", "qb": "t", "qc": "t"}, L.Limits())
    assert [f.question_id for f in found] == ["qb"]
    assert "'Rings of eight GPUs', the keyed answer of 'qa'" in found[0].message
    apart = {"qa": "t", "qb": "u", "qc": "t"}
    assert L.answer_leaks([keyed, quoting, partial], apart, L.Limits()) == []
    short = make("qd", "A", ("Rings", "Trees", "Meshes", "Stars"))
    mention = make("qe", full="NCCL builds rings here.")
    assert L.answer_leaks([short, mention], {"qd": "t", "qe": "t"}, L.Limits()) == []


# ---------------------------------------------------------------- the pieces


@pytest.mark.parametrize(
    ("text", "value", "dimension"),
    [
        ("400 Gb/s", 400e9, "bits/s"),
        ("50 GB/s", 400e9, "bits/s"),
        ("About 1.1 TB", 8.8e12, "bits"),
        ("16 bytes", 128, "bits"),
        ("2 GiB", 2 * 2**30 * 8, "bits"),
        ("About 3 seconds", 3, "time"),
        ("About every 31 minutes", 31 * 60, "time"),
        ("About every minute", 60, "time"),
        ("About once every 1,000 days", 1000 * 86400, "time"),
        ("500 ms", 0.5, "time"),
        ("4.2 s", 4.2, "time"),
        ("2:1", 2, "ratio"),
        ("1:2", 0.5, "ratio"),
        ("80%", 80, "%"),
        ("2,048", 2048, ""),
        ("About 9 times", 9, "times"),
        ("~120 GB", 960e9, "bits"),
        ("Under 2 μs", 2e-6, "time"),
    ],
)
def test_quantity_reads_numbers_with_short_units(text: str, value: float, dimension: str) -> None:
    q = L.quantity(text)
    assert q is not None
    assert q.value == pytest.approx(value)
    assert q.dimension == dimension


@pytest.mark.parametrize(
    "text",
    [
        "InfiniBand",
        "0%: the micro-batches fill it completely",
        "About 30 minutes, plus the time to restart",
        "2(p-1)/p × N, just under 2N however many ranks",
        "busbw = algbw × p",
        "NCCL_DEBUG=INFO",
        "Overlapping compute",
        "None, since the checkpoint holds everything",
        "12 links x 25 GB/s each, through NVSwitch chips",
    ],
)
def test_quantity_leaves_text_as_text(text: str) -> None:
    assert L.quantity(text) is None


def test_text_choice_means_some_choice_is_not_a_quantity() -> None:
    assert not L.is_text_choice(make("qa", choices=("100 Gb/s", "200 Gb/s", "400 Gb/s")))
    assert L.is_text_choice(make("qb", choices=("75%", "20%", "0%: no bubble at all")))


def test_length_cue_is_not_counted_among_quantities() -> None:
    numbers = make("qa", "A", ("About 1,000 days", "2 days", "12 hours"))
    assert L.length_cue(numbers) is None
    assert not L.is_text_choice(numbers)


@pytest.mark.parametrize(
    ("word", "normal"),
    [
        ("GPUs", "gpu"),
        ("NICs", "nic"),
        ("buffers", "buffer"),
        ("switches", "switch"),
        ("caches", "cache"),
        ("policies", "policy"),
        ("processes", "process"),
        ("bus", "bus"),
        ("status", "status"),
        ("host's", "host"),
        ("All-Reduces", "all-reduce"),
        ("Gradients", "gradient"),
    ],
)
def test_normalise_strips_plurals_and_case(word: str, normal: str) -> None:
    assert L.normalise(word) == normal


def test_content_words_drop_stop_words_and_bare_numbers() -> None:
    assert L.content_words("Which of the 8 GPUs does NOT send its gradients?") == [
        "gpu",
        "send",
        "gradient",
    ]


def test_bank_wide_common_words_are_not_give_aways() -> None:
    # "fabric" is in every stem: the bank's vocabulary, not a cue.
    questions = [
        make(
            qid,
            "A",
            ("Fabric alpha", "Bravo two xy", "Charlie 3 xy", "Delta four x"),
            text=f"Which fabric {qid}a {qid}b is it?",
        )
        for qid in ids(5)
    ]
    assert not [f for f in L.lint(questions).findings if f.rule == "give-away-word"]
    alone = L.lint(questions[:1]).findings
    assert [f.rule for f in alone] == ["give-away-word"]


@pytest.mark.parametrize(
    ("choice", "flagged"),
    [
        ("All of the above", True),
        ("None of the above", True),
        ("all the above", True),
        ("None of these", True),
        ("Both of the above", True),
        ("Any of the other choices", True),
        ("Both A and C", True),
        ("A and B", True),
        ("All ranks above rank 0", False),
        ("None; each GPU works alone", False),
        ("All-gather, then broadcast", False),
        ("Neither switch drops packets", False),
    ],
)
def test_all_or_none_of_the_above_variants(choice: str, flagged: bool) -> None:
    q = make("qa", "B", ("Alpha one", "Bravo two", choice))
    assert bool(L.all_none_of_the_above(q)) is flagged


@pytest.mark.parametrize(
    ("choices", "flagged_at"),
    [
        (("1 GB", "10 GB", "100 GB", "1 TB"), None),
        (("1 TB", "100 GB", "10 GB", "1 GB"), None),
        (("10 seconds", "100 seconds", "17 minutes", "1 second"), "D"),
        (("900 GB/s", "112.5 GB/s", "50 GB/s", "450 GB/s"), "D"),
        (("2:1", "1:1", "1:2", "4:1"), "D"),
        (("200 Gb/s", "100 Gb/s", "400 Gb/s"), "C"),
        (("2 GB", "1 GB", "3 hours"), None),  # two kinds of quantity: not comparable
        (("3", "1"), None),  # two choices are always in order
    ],
)
def test_numeric_order(choices: tuple[str, ...], flagged_at: str | None) -> None:
    q = make("qa", "A", choices)
    found = L.numeric_order(q)
    if flagged_at is None:
        assert found is None
    else:
        assert found is not None
        assert found.line == q.line_of(f"choices.{flagged_at}")


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://arxiv.org/abs/2407.21783", "primary"),
        ("https://doi.org/10.1145/1402958.1402967", "primary"),
        ("https://www.usenix.org/conference/fast21/presentation/mohan", "primary"),
        ("https://ieeexplore.ieee.org/document/7830486", "primary"),
        ("https://www.ieee802.org/3/", "primary"),
        ("https://pcisig.com/specifications", "primary"),
        ("https://www.infinibandta.org/ibta-specification/", "primary"),
        ("https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html", "primary"),
        ("https://www.nvidia.com/en-us/data-center/nvlink/", "primary"),
        ("https://pytorch.org/docs/stable/notes/ddp.html", "primary"),
        ("https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md", "primary"),
        ("https://github.com/NVIDIA/nccl/issues/934", "primary"),
        ("https://developer.nvidia.com/blog/nvidia-hopper-architecture-in-depth/", "secondary"),
        ("https://pytorch.org/blog/ddp-tips/", "secondary"),
        ("https://en.wikipedia.org/wiki/InfiniBand", "secondary"),
        ("https://medium.com/@someone/nccl", "secondary"),
        ("https://stackoverflow.com/questions/1", "secondary"),
        ("https://blog.example.com/post", "secondary"),
        ("https://www.amd.com/blogs/mi300", "secondary"),
        ("https://www.vertiv.com/en-us/about/articles/blog-posts/pue/", "secondary"),
        ("https://www.vertiv.com/en-us/products/liquid-cooling/", "primary"),
        ("https://www.iso.org/standard/63451.html", "primary"),
        ("https://example.com/page", "unknown"),
        ("https://github.com/someone/notes", "unknown"),
        ("https://pytorch.org/get-started/", "unknown"),
    ],
)
def test_classify_source(url: str, kind: str) -> None:
    assert L.classify_source(url) == kind


def test_similarities_find_only_the_alike_pair() -> None:
    texts = [
        "gradient buckets overlap the backward pass on every replica",
        "gradient buckets overlap the backward pass on every worker",
        "optimizer states shard across data parallel ranks in stage one",
    ]
    found = L.similarities(texts, (1, 2), 50)
    assert [(i, j) for i, j, _ in found] == [(0, 1)]
    # Six words and five pairs each; one word and the last pair differ: 9 shared of 13.
    assert found[0][2] == pytest.approx(9 / 13)


def test_near_duplicates_report_the_later_question_once() -> None:
    one = make("qa", text="How many lanes does an NDR port bundle for its 400 Gb/s rate?")
    two = make("qb", text="How many lanes does an HDR port bundle for its 200 Gb/s rate?")
    three = make("qc")
    found = L.near_duplicates([one, two, three], L.Limits())
    assert [(f.question_id, f.rule) for f in found] == [("qb", "near-duplicate")]
    assert "'qa'" in found[0].message


def test_why_not_that_negates_or_is_short() -> None:
    q = make("qa", "A", ("Alpha", "RoCE needs a lossless fabric", "Charlie"))
    base = dict(q.why_not)
    cases = {
        "RoCE does not need a lossless fabric.": True,
        "Wrong: RoCE doesn't need lossless fabric.": True,
        "No.": True,
        "RoCE v2 recovers with go-back-N; PFC only makes drops rare.": False,
    }
    for text, flagged in cases.items():
        changed = replace(q, why_not={**base, "B": text})
        found = [f for f in L.why_not_checks(changed, L.Limits()) if "why_not B" in f.message]
        assert bool(found) is flagged, text


@pytest.mark.parametrize(("percent", "found"), [(40, True), (41, False)])
def test_similarity_limit_is_inclusive_at_the_boundary(percent: int, found: bool) -> None:
    # Words only: 4 shared of 10 distinct is exactly 40%.
    texts = [
        "alpha bravo charlie delta echo foxtrot golf",
        "alpha bravo charlie delta hotel india juliet",
    ]
    assert bool(L.similarities(texts, (1,), percent)) is found


# ---------------------------------------------------------------- the docs page

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-questions.md"


def test_docs_page_has_a_section_per_rule_and_every_limit_with_its_value() -> None:
    from dataclasses import fields

    text = DOC.read_text()
    for rule in L.RULES:
        assert f"### `{rule}`" in text, rule
    limits = L.Limits()
    for f in fields(limits):
        assert f"| `{f.name}` | {getattr(limits, f.name)} |" in text, f.name


def test_docs_page_lists_every_source_pattern() -> None:
    text = DOC.read_text()
    primary, secondary = text.split("\nSecondary:\n", 1)
    for pattern, kind in L.PRIMARY_SOURCES:
        assert re.search(rf"`{re.escape(pattern)}`[^\n]*\| {kind} \|", primary), pattern
    for pattern, kind in L.SECONDARY_SOURCES:
        assert re.search(rf"`{re.escape(pattern)}`[^\n]*\| {kind} \|", secondary), pattern


def test_loader_records_the_line_of_every_key() -> None:
    (q,) = load_bank([FIXTURES / "clean.yaml"]).questions
    text = (FIXTURES / "clean.yaml").read_text().splitlines()
    for key, starts in [
        ("id", "id:"),
        ("question", "question:"),
        ("choices.B", "  B: All-reduce"),
        ("answer", "answer:"),
        ("explanation.full", "  full:"),
        ("explanation.why_not.D", "    D:"),
        ("references", "references:"),
        ("references.0", "  - title:"),
    ]:
        assert text[q.line_of(key) - 1].startswith(starts), key
    assert q.line_of("nothing-here") == q.line == 2
    assert q.line_of("nothing-here", "answer") == q.lines["answer"]
