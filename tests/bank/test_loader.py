"""The question-bank loader: one broken file per rule, good files, the shipped bank, fuzzing."""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.bank import BankError, Problem, QuestionBank, check_paths, load_bank
from bot.engine.model import ChartSpec, Choice, Difficulty, Question, Reference
from bot.errors import ConfigError, QuizbotError

REPO = Path(__file__).resolve().parents[2]
BROKEN = Path(os.path.relpath(Path(__file__).resolve().parent / "broken"))
QUESTIONS = REPO / "questions"
SCHEMA = json.loads((QUESTIONS / "schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

# file, line, a fragment of the message, and whether questions/schema.json rejects the file too
# (None: the file is not YAML that a schema can see; False: only the loader can tell).
BROKEN_FILES = [
    ("answer-boolean.yaml", 9, "answer: yes was read as a boolean; quote it", True),
    ("answer-not-a-choice.yaml", 9, "answer 'E' is not one of the choice keys A, B, C, D", True),
    ("bad-difficulty.yaml", 20, "difficulty 'expert' must be one of easy, medium, hard", True),
    ("bad-id.yaml", 2, "id 'Bad_Id' must be lowercase letters, digits and hyphens", True),
    ("bad-indentation.yaml", 6, "invalid YAML", None),
    ("bad-tag.yaml", 21, "tag 'Deep Learning' must be lowercase", True),
    ("chart-bad-op.yaml", 23, "chart.op 'reduce' must be one of transfer, allreduce", True),
    ("chart-gpus-text.yaml", 23, "chart.gpus must be a whole number, found the text '8'", True),
    ("chart-nodes-zero.yaml", 23, "chart.nodes must be at least 1, found 0", True),
    ("chart-not-mapping.yaml", 21, "chart must be a mapping", True),
    ("chart-over-string.yaml", 23, "chart.over must be a list of interconnect keys", True),
    ("chart-size-number.yaml", 22, "chart.size: 140 was read as a number", True),
    ("chart-unknown-key.yaml", 24, "unknown key 'nodez' in chart; did you mean 'nodes'?", True),
    ("choice-boolean-off.yaml", 8, 'choice D: off was read as a boolean; quote it: "off"', True),
    ("choice-boolean.yaml", 8, 'choice D: yes was read as a boolean; quote it: "yes"', True),
    ("choice-empty.yaml", 7, "choice C is empty", True),
    ("choice-key-lowercase.yaml", 6, "choice key 'b' must be an uppercase letter: B", True),
    ("choice-null.yaml", 7, "choice C: null was read as null", True),
    ("choice-number.yaml", 6, "choice B: 100 was read as a number; quote it", True),
    ("choice-too-long.yaml", 7, "choice C is 79 characters; at most 75", True),
    ("choices-gap.yaml", 7, "choice C is missing", True),
    ("choices-list.yaml", 5, "choices must be a mapping of letters to text", True),
    ("choices-out-of-order.yaml", 6, "choice C is out of order: expected B here", False),
    ("comments-only.yaml", 1, "file is empty", True),
    ("duplicate-key.yaml", 21, "duplicate key 'difficulty' (first at line 20)", False),
    ("empty.yaml", 1, "file is empty", True),
    ("explanation-text.yaml", 10, "explanation must be a mapping with `short:` and `full:`", True),
    (
        "image-absolute.yaml",
        21,
        "image '/tmp/fabric.png' must be a path relative to the file",
        True,
    ),
    ("image-http.yaml", 21, "must be an https URL or a path relative to the file", True),
    ("image-missing.yaml", 21, "image 'img/fabric.png' not found", False),
    ("invalid-yaml.yaml", 5, "invalid YAML: while parsing a flow sequence started at line 4", None),
    ("merge-key.yaml", 21, "YAML merge keys (<<) are not supported", False),
    ("missing-answer.yaml", 2, "missing required field 'answer'", True),
    ("missing-short.yaml", 10, "missing required field 'explanation.short'", True),
    ("multi-document.yaml", 22, "more than one YAML document", None),
    ("not-utf8.yaml", 3, "not UTF-8 text", None),
    ("one-choice.yaml", 5, "needs at least 2 choices, found 1", True),
    ("question-empty.yaml", 3, "question is empty", True),
    ("questions-empty.yaml", 2, "`questions:` is an empty list", True),
    ("questions-entry-text.yaml", 22, "entry 2 under `questions:` must be a question", True),
    ("questions-extra-key.yaml", 2, "unexpected key 'difficulty' beside `questions:`", True),
    ("questions-not-list.yaml", 3, "`questions:` must be a list of questions", True),
    ("questions-one-bad.yaml", 22, "missing required field 'answer'", True),
    ("reference-missing-url.yaml", 22, "a reference is missing 'url'", True),
    ("references-not-list.yaml", 22, "references must be a list of {title, url}", True),
    ("short-too-long.yaml", 11, "explanation.short is 323 characters; at most 300", True),
    ("sixth-choice.yaml", 10, "too many choices (6): at most 5", True),
    ("tags-not-list.yaml", 19, "tags must be a list", True),
    (
        "top-level-list.yaml",
        2,
        "the top level is a list; put the questions under a `questions:`",
        True,
    ),
    ("top-level-text.yaml", 2, "the top level must be a question", True),
    ("unknown-key.yaml", 19, "unknown key 'tgas'; did you mean 'tags'?", True),
    ("why-not-answer.yaml", 16, "explanation.why_not has 'A', which is the answer", True),
    ("why-not-unknown-choice.yaml", 19, "explanation.why_not has 'E', which is not a choice", True),
]
DUPLICATE_FIRST = BROKEN / "duplicate-ids" / "first.yaml"
DUPLICATE_SECOND = BROKEN / "duplicate-ids" / "second.yaml"


BROKEN_IDS = [row[0] for row in BROKEN_FILES]
BROKEN_ARGS = ("name", "line", "fragment", "schema_rejects")


@pytest.mark.parametrize(
    ("name", "line", "fragment", "schema_rejects"), BROKEN_FILES, ids=BROKEN_IDS
)
def test_broken_file_reports_its_problem_at_its_line(
    name: str, line: int, fragment: str, schema_rejects: bool | None
) -> None:
    path = BROKEN / name
    with pytest.raises(BankError) as caught:
        load_bank([path])
    assert len(caught.value.problems) == 1, str(caught.value)
    problem = caught.value.problems[0]
    assert problem.file == str(path)
    assert problem.line == line, str(problem)
    assert fragment in problem.message
    assert str(problem) == f"{path}:{line}: {problem.message}"
    assert str(caught.value) == str(problem)


@pytest.mark.parametrize(
    ("name", "line", "fragment", "schema_rejects"), BROKEN_FILES, ids=BROKEN_IDS
)
def test_schema_rejects_what_it_can_see(
    name: str, line: int, fragment: str, schema_rejects: bool | None
) -> None:
    try:
        data = yaml.safe_load((BROKEN / name).read_bytes())
    except yaml.YAMLError:
        assert schema_rejects is None, f"{name} does not parse as YAML"
        return
    assert schema_rejects is not None, f"{name} parses as YAML"
    assert VALIDATOR.is_valid(data) is not schema_rejects


def test_every_broken_fixture_is_in_the_table() -> None:
    on_disk = {p.name for p in BROKEN.glob("*.y*ml")}
    assert on_disk == {row[0] for row in BROKEN_FILES}


def test_duplicate_ids_across_files_name_both_places() -> None:
    bank, problems = check_paths([BROKEN / "duplicate-ids"])
    assert bank is None
    assert problems == [
        Problem(
            str(DUPLICATE_SECOND),
            2,
            f"duplicate id 'same-id' (first defined at {DUPLICATE_FIRST}:2)",
        )
    ]
    assert load_bank([DUPLICATE_FIRST]).by_id("same-id").source == str(DUPLICATE_FIRST)


def test_broken_folder_reports_every_problem_at_once() -> None:
    with pytest.raises(BankError) as caught:
        load_bank([BROKEN])
    found = [(p.file, p.line) for p in caught.value.problems]
    expected = sorted(
        [(str(BROKEN / name), line) for name, line, _, _ in BROKEN_FILES]
        + [(str(DUPLICATE_SECOND), 2)],
        key=lambda fl: Path(fl[0]).relative_to(BROKEN).parts,
    )
    assert found == expected
    assert len(str(caught.value).splitlines()) == len(expected)


def test_problems_in_one_file_come_in_line_order(tmp_path: Path) -> None:
    path = tmp_path / "many.yaml"
    path.write_text(
        "id: Many\n"
        "question: ''\n"
        "choices: {A: 'yes', B: no}\n"
        "answer: F\n"
        "explanation: {short: ok, full: ok, why_not: {A: x}}\n"
        "tags: [Bad]\n"
        "colour: red\n"
    )
    _, problems = check_paths([path])
    assert [p.line for p in problems] == [1, 2, 3, 4, 6, 7]
    assert [p.message.split(" ")[0] for p in problems] == [
        "id",
        "question",
        "choice",
        "answer",
        "tag",
        "unknown",
    ]


# ---------------------------------------------------------------- good files


def question(qid: str, **changes: Any) -> dict[str, Any]:
    """Return a valid question as plain data, with some fields replaced."""
    data: dict[str, Any] = {
        "id": qid,
        "question": "In a ring all-reduce of S bytes over N ranks, how much does each rank send?",
        "choices": {
            "A": "S / N",
            "B": "2 (N - 1) / N × S",
            "C": "N × S",
            "D": "S × log2(N)",
        },
        "answer": "B",
        "explanation": {
            "short": "A reduce-scatter and an all-gather each move (N - 1) / N of the buffer.",
            "full": "The ring splits the buffer into N chunks. In N - 1 reduce-scatter steps and "
            "N - 1 all-gather steps each rank sends one chunk, S / N bytes, per step.",
            "why_not": {
                "A": "That is a single chunk; the ring passes N - 1 of them in each phase.",
                "C": "That would be a naive gather to one rank followed by a broadcast.",
                "D": "That is the step count of tree or recursive-doubling schemes.",
            },
        },
        "tags": ["collectives", "allreduce"],
        "difficulty": "hard",
    }
    data.update(changes)
    return data


def write_yaml(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


GOOD_LIST = """\
# Three questions in one file.
questions:
  - id: ring-allreduce-bytes
    question: In a ring all-reduce of S bytes over N ranks, how much does each rank send?
    choices:
      A: S / N
      B: 2 (N - 1) / N × S
      C: N × S
    answer: B
    explanation:
      short: Reduce-scatter and all-gather each move (N - 1) / N of the buffer per rank.
      full: |
        The buffer is cut into N chunks.
        Each of the 2 (N - 1) steps sends one chunk of S / N bytes.
      why_not:
        A: One chunk only; each phase passes N - 1 chunks.
        C: That is gathering everything on one rank and broadcasting it back.
    tags: [collectives, allreduce]
    difficulty: hard
    chart: {size: 140GB, op: allreduce, nodes: 8, gpus: 8, over: [ib-ndr, 400gbe]}
  - id: nvlink-inside-node
    question: Which link carries GPU-to-GPU traffic inside an 8-GPU HGX server?
    choices:
      A: NVLink through NVSwitch
      B: "yes"
    answer: A
    explanation:
      short: NVSwitch connects every GPU of the board with NVLink.
      full: NVLink gives each GPU far more bandwidth to its peers than PCIe does.
    tags: [nvlink]
    difficulty: easy
    references:
      - title: NVLink and NVSwitch
        url: https://www.nvidia.com/en-us/data-center/nvlink/
    image: img/hgx.png
  - id: kernel-bypass
    question: What lets an RDMA NIC move data without the remote CPU?
    choices:
      A: Kernel bypass and direct memory access
      B: A faster TCP congestion window
      C: Jumbo frames
      D: 'on'
      E: 'off'
    answer: A
    explanation:
      short: The NIC reads and writes registered memory itself.
      full: Verbs post work requests straight to the NIC; no system call per message.
    image: https://example.org/rdma.png
"""


def test_good_multi_question_file(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "hgx.png").write_bytes(b"\x89PNG")
    path = tmp_path / "three.yaml"
    path.write_text(GOOD_LIST, encoding="utf-8")
    bank = load_bank([path])
    assert [q.id for q in bank] == ["ring-allreduce-bytes", "nvlink-inside-node", "kernel-bypass"]
    ring, nvlink, bypass = bank.questions
    assert ring == Question(
        id="ring-allreduce-bytes",
        text="In a ring all-reduce of S bytes over N ranks, how much does each rank send?",
        choices=(Choice("A", "S / N"), Choice("B", "2 (N - 1) / N × S"), Choice("C", "N × S")),
        answer="B",
        short="Reduce-scatter and all-gather each move (N - 1) / N of the buffer per rank.",
        full="The buffer is cut into N chunks.\n"
        "Each of the 2 (N - 1) steps sends one chunk of S / N bytes.",
        why_not={
            "A": "One chunk only; each phase passes N - 1 chunks.",
            "C": "That is gathering everything on one rank and broadcasting it back.",
        },
        tags=("collectives", "allreduce"),
        difficulty=Difficulty.HARD,
        chart=ChartSpec(size="140GB", op="allreduce", nodes=8, gpus=8, over=("ib-ndr", "400gbe")),
        source=str(path),
        line=3,
    )
    assert nvlink.choice("B").text == "yes"
    assert nvlink.difficulty is Difficulty.EASY
    assert nvlink.references == (
        Reference("NVLink and NVSwitch", "https://www.nvidia.com/en-us/data-center/nvlink/"),
    )
    assert nvlink.image == str(tmp_path / "img" / "hgx.png")
    assert nvlink.line == 21
    assert bypass.keys == ("A", "B", "C", "D", "E")
    assert (bypass.choice("D").text, bypass.choice("E").text) == ("on", "off")
    assert bypass.difficulty is Difficulty.MEDIUM
    assert bypass.image == "https://example.org/rdma.png"
    assert bypass.why_not == {}
    assert bypass.chart is None


def test_one_question_per_file_and_chart_defaults(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "q.yml", question("one", chart={"size": "70B params bf16"}))
    bank = load_bank([path])
    assert len(bank) == 1
    assert bank.by_id("one").chart == ChartSpec(size="70B params bf16")
    assert bank.by_id("one").line == 1


def test_folders_load_recursively_in_path_order(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    for rel in [
        "10-storage/01-nvme.yaml",
        "02-collectives/02-tree.yml",
        "02-collectives/01-ring.yaml",
        "01-networking/01-ib.yaml",
        "01-networking/deeper/00-roce.yaml",
        ".drafts/unfinished.yaml",
    ]:
        write_yaml(root / rel, question(Path(rel).stem.split("-")[-1]))
    (root / "notes.txt").write_text("not a question file")
    extra = write_yaml(tmp_path / "elsewhere" / "solo.yaml", question("solo"))
    # A file named twice (directly and inside its folder) loads once.
    bank = load_bank([root, extra, root / "01-networking" / "01-ib.yaml"])
    assert [q.id for q in bank] == ["ib", "roce", "ring", "tree", "nvme", "solo"]
    assert bank.by_id("ib").source == str(root / "01-networking" / "01-ib.yaml")


def test_paths_in_problems_are_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_yaml(tmp_path / "topic" / "bad.yaml", question("Bad"))
    monkeypatch.chdir(tmp_path)
    _, problems = check_paths([Path("topic")])
    assert [str(p) for p in problems] == [
        "topic/bad.yaml:1: id 'Bad' must be lowercase letters, digits and hyphens, "
        "starting with a letter or digit"
    ]


def test_missing_path_and_folder_without_question_files(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _, problems = check_paths([tmp_path / "nope", tmp_path / "empty"])
    assert problems == [
        Problem(str(tmp_path / "nope"), 1, "no such file or folder"),
        Problem(str(tmp_path / "empty"), 1, "no question files (*.yaml, *.yml) in this folder"),
    ]


def test_unreadable_file_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_yaml(tmp_path / "locked.yaml", question("locked"))

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refuse)
    _, problems = check_paths([path])
    assert problems == [Problem(str(path), 1, "cannot read the file: Permission denied")]


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"tags": ["rdma", "rdma"]}, "duplicate tag 'rdma'"),
        ({"tags": [2024]}, "tag: 2024 was read as a number"),
        ({"id": 42}, "id: 42 was read as a number"),
        ({"question": ["a", "list"]}, "question must be text, found a list"),
        (
            {"choices": {"A": "x", "B": "y", "C": "z", "D": "w", "E": "v", "F": "u"}},
            "too many choices (6)",
        ),
        ({"answer": "a"}, "answer 'a' is not one of the choice keys A, B, C, D"),
        ({"references": [{"title": "t", "url": "ftp://x.org/f"}]}, "must start with http"),
        ({"references": [{"title": "t", "url": "https://x.org", "year": 2020}]}, "'year'"),
        ({"references": ["https://x.org"]}, "a reference must be a mapping"),
        ({"image": "C:/pictures/x.png"}, "must be an https URL or a path relative"),
        ({"image": "~/x.png"}, "must be a path relative to the file, not absolute"),
        ({"chart": {"op": "allreduce"}}, "missing required field 'chart.size'"),
        ({"chart": {"size": "1GB", "nodes": True}}, "chart.nodes: true was read as a boolean"),
        ({"chart": {"size": "1GB", "gpus": 1.5}}, "chart.gpus must be a whole number"),
        ({"chart": {"size": "1GB", "over": ["ib-ndr", 400]}}, "chart.over entry: 400 was read"),
        ({"short": "misplaced"}, "did you mean 'explanation.short'?"),
        ({"difficulty": None}, "difficulty: null was read as null"),
    ],
)
def test_more_rules(tmp_path: Path, changes: dict[str, Any], fragment: str) -> None:
    path = write_yaml(tmp_path / "q.yaml", question("rules", **changes))
    _, problems = check_paths([path])
    assert problems, "the file should not pass"
    assert any(fragment in p.message for p in problems), problems


def test_text_that_yaml_reads_as_other_types_needs_quotes(tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    text = yaml.safe_dump(question("types"), sort_keys=False, allow_unicode=True)
    text = text.replace("C: N × S", "C: 2024-01-01").replace("D: S × log2(N)", "D: ~")
    path.write_text(text, encoding="utf-8")
    _, problems = check_paths([path])
    messages = [p.message for p in problems]
    assert messages == [
        'choice C: 2024-01-01 was read as a date; quote it: "2024-01-01"',
        "choice D is empty",
    ]


def test_several_bad_entries_in_a_list_are_each_reported(tmp_path: Path) -> None:
    entries = [
        question("first", answer="E"),
        question("second"),
        question("third", tags=["Not Ok"]),
    ]
    path = write_yaml(tmp_path / "list.yaml", {"questions": entries})
    lines = path.read_text().splitlines()
    _, problems = check_paths([path])
    assert [(p.line, p.message.split(" ")[0]) for p in problems] == [
        (lines.index("  answer: E") + 1, "answer"),
        (lines.index("  - Not Ok") + 1, "tag"),
    ]


def test_chart_size_is_checked_by_the_bandwidth_parser_when_present(tmp_path: Path) -> None:
    try:
        from bot.bandwidth import parse_size
    except ImportError:
        pytest.skip("bot.bandwidth.parse_size is not available; the loader skips this check")
    with pytest.raises(Exception):  # noqa: B017, PT011 - any failure of the parser will do
        parse_size("fourteen bananas")
    path = write_yaml(tmp_path / "q.yaml", question("size", chart={"size": "fourteen bananas"}))
    _, problems = check_paths([path])
    assert len(problems) == 1
    assert "chart.size 'fourteen bananas' does not parse" in problems[0].message


# ---------------------------------------------------------------- the bank object


def test_question_bank_api(tmp_path: Path) -> None:
    path = write_yaml(
        tmp_path / "list.yaml",
        {
            "questions": [
                question("a", tags=["rdma", "networking"]),
                question("b", tags=["collectives"]),
                question("c", tags=["networking"]),
            ]
        },
    )
    bank = load_bank([path])
    assert isinstance(bank, QuestionBank)
    assert len(bank) == 3
    assert [q.id for q in bank] == ["a", "b", "c"]
    assert bank.by_id("b").id == "b"
    with pytest.raises(KeyError):
        bank.by_id("zzz")
    assert "a" in bank
    assert "zzz" not in bank
    assert bank.tags() == ("collectives", "networking", "rdma")
    assert [q.id for q in bank.filter("networking")] == ["a", "c"]
    assert bank.filter(None) == bank.questions
    assert bank.filter("unknown") == ()
    with pytest.raises(AttributeError):
        bank._questions = ()
    with pytest.raises(AttributeError):
        bank.extra = 1


def test_question_bank_refuses_duplicate_ids() -> None:
    one = Question("same", "q?", (Choice("A", "a"), Choice("B", "b")), "A", "s", "f", source="x")
    with pytest.raises(BankError) as caught:
        QuestionBank([one, one])
    assert "duplicate id 'same'" in str(caught.value)


def test_bank_error_lists_every_problem() -> None:
    error = BankError([Problem("a.yaml", 3, "one"), Problem("b.yaml", 1, "two")])
    assert isinstance(error, QuizbotError)
    assert isinstance(error, ConfigError)
    assert str(error) == "a.yaml:3: one\nb.yaml:1: two"
    assert len(error.problems) == 2


# ---------------------------------------------------------------- the shipped bank


def test_every_shipped_question_file_passes_the_loader_and_the_schema() -> None:
    files = sorted(
        p
        for p in QUESTIONS.rglob("*")
        if p.suffix in (".yaml", ".yml") and p.relative_to(QUESTIONS).parts[0] != "tracks"
    )
    if not files:
        pytest.skip("questions/ holds no question files yet")
    failures = [str(p) for p in check_paths([QUESTIONS])[1]]
    for path in files:
        try:
            data = yaml.safe_load(path.read_bytes())
        except yaml.YAMLError as exc:
            failures.append(f"{path}: schema check: not YAML: {exc}")
            continue
        for error in VALIDATOR.iter_errors(data):
            where = "/".join(str(part) for part in error.absolute_path) or "(top)"
            failures.append(f"{path}: schema: {where}: {error.message}")
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------- fuzzing

TOKENS = [
    *("id", "question", "choices", "answer", "explanation", "short", "full", "why_not"),
    *("tags", "difficulty", "references", "image", "chart", "size", "nodes", "over"),
    *("questions", "A", "B", "E", "F", "yes", "no", "on", "off", "~", "null", "0b_", "0x_"),
    *(":", ": ", "- ", "-", "\n", "\n  ", "\n    ", "  ", "\t", "[", "]", "{", "}", ","),
    *("'", '"', "&a ", "*a", "!!str ", "!!int ", "!!binary ", "!!set ", "!foo ", "? "),
    *("---\n", "...\n", "# c", "|", ">-", "<<: ", "2024-01-01", "1_000", "9" * 5000),
    *("%YAML 1.1\n", "\x85", "\u2028", "\ufeff", "\x07", "\\", "\\x", "é", "img.png"),
]

yaml_like = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), max_size=40).map(
    "".join
)


@pytest.fixture(scope="module")
def fuzz_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="quizbot-fuzz-") as name:
        yield Path(name)


def _check_never_crashes(path: Path, data: bytes) -> QuestionBank | None:
    path.write_bytes(data)
    bank, problems = check_paths([path])
    if problems:
        with pytest.raises(BankError) as caught:
            load_bank([path])
        assert list(caught.value.problems) == problems
    else:
        assert len(load_bank([path])) == len(bank or ())
    text = data.decode("utf-8", errors="replace")
    last_line = len(text.splitlines()) + 1
    for problem in problems:
        assert problem.file == str(path)
        assert 1 <= problem.line <= last_line, problem
        assert problem.message
    assert (bank is None) == bool(problems)
    return bank


FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(text=st.one_of(st.text(), yaml_like))
def test_random_text_only_ever_raises_bank_error(fuzz_dir: Path, text: str) -> None:
    _check_never_crashes(fuzz_dir / "text.yaml", text.encode("utf-8", errors="surrogatepass"))


@FUZZ
@given(data=st.binary(max_size=200))
def test_random_bytes_only_ever_raise_bank_error(fuzz_dir: Path, data: bytes) -> None:
    _check_never_crashes(fuzz_dir / "bytes.yaml", data)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=10**6),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            *("A", "B", "E", "yes", "easy", "hard", "allreduce", "140GB", "ib-ndr", "tag-1"),
            *("https://example.org/a.png", "img.png", "/abs.png", "", " ", "Mixed Case", "x" * 80),
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["A", "B", "C", "F", "title", "url", "size"]), inner)
    ),
    max_leaves=12,
)
# Each field that a mutation may touch, with values that are valid (or nearly) for it, so that
# a good share of the drawn documents load and can be compared with the schema.
PLAUSIBLE: dict[tuple[str, ...], list[Any]] = {
    ("id",): ["q-1", "0-x", "a"],
    ("question",): ["Why?", " padded ", "x" * 500],
    ("choices",): [{"A": "a", "B": "b"}, dict(zip("ABCDE", "abcde", strict=True))],
    ("choices", "A"): ["x" * 75, "yes", " A "],
    ("choices", "C"): ["x" * 75, "C text"],
    ("choices", "E"): ["E text"],
    ("choices", "F"): ["F text"],
    ("answer",): ["A", "C", "D"],
    ("explanation",): [{"short": "s", "full": "f"}],
    ("explanation", "short"): ["s" * 300, "s" * 301],
    ("explanation", "full"): ["Full.\nSecond line.\n"],
    ("explanation", "why_not"): [{}, {"C": "no"}, {"D": "no", "A": "no"}],
    ("explanation", "why_not", "A"): ["A is wrong"],
    ("explanation", "why_not", "E"): ["E is wrong"],
    ("explanation", "extra"): ["x"],
    ("tags",): [[], ["a-b", "c"], ["networking"]],
    ("difficulty",): ["easy", "medium", "hard"],
    ("references",): [[], [{"title": "t", "url": "http://example.org"}]],
    ("image",): ["https://example.org/x.png", "http://example.org/x.png"],
    ("chart",): [{"size": "400Gb"}, {"size": "13B adam", "op": "broadcast"}],
    ("chart", "size"): ["140GB", "70B params bf16", "1.5 TiB"],
    ("chart", "op"): ["transfer", "allgather", "reducescatter", "broadcast", "alltoall"],
    ("chart", "nodes"): [1, 64],
    ("chart", "gpus"): [1, 8],
    ("chart", "over"): [[], ["nvlink4", "ib-xdr"]],
    ("chart", "colour"): ["red"],
    ("colour",): ["red"],
}
FIELD_PATHS = sorted(PLAUSIBLE)


@st.composite
def mutated_documents(draw: st.DrawFn) -> Any:
    """Draw a valid question with a few fields replaced or removed, alone or in a list."""
    base = question(
        "fuzz",
        references=[{"title": "NCCL", "url": "https://github.com/NVIDIA/nccl"}],
        chart={"size": "14GB", "op": "allreduce", "nodes": 4, "gpus": 8, "over": ["ib-ndr"]},
    )
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        path = draw(st.sampled_from(FIELD_PATHS))
        target = doc
        for part in path[:-1]:
            target = target.get(part) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            continue
        if draw(st.booleans()):
            target.pop(path[-1], None)
        else:
            target[path[-1]] = draw(st.sampled_from(PLAUSIBLE[path]) | values)
    if draw(st.booleans()):
        return {"questions": [question("fuzz-2"), doc, question("fuzz-3")]}
    return doc


@FUZZ
@given(doc=values)
def test_random_documents_only_ever_raise_bank_error(fuzz_dir: Path, doc: Any) -> None:
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    assert _check_never_crashes(fuzz_dir / "any.yaml", text.encode("utf-8")) is None


@FUZZ
@given(doc=mutated_documents())
def test_random_structures_only_ever_raise_bank_error(fuzz_dir: Path, doc: Any) -> None:
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    bank = _check_never_crashes(fuzz_dir / "doc.yaml", text.encode("utf-8"))
    if bank is not None:
        # Whatever the loader accepts, the published schema accepts too.
        assert VALIDATOR.is_valid(yaml.safe_load(text)), text
        entries = doc.get("questions", [doc])
        assert [q.id for q in bank] == [e["id"] for e in entries]
        for q, entry in zip(bank, entries, strict=True):
            assert q.answer == entry["answer"]
            assert [c.key for c in q.choices] == list(entry["choices"])


def test_a_full_explanation_past_a_thread_reply_is_refused(tmp_path: Path) -> None:
    # The review: past about 140,000 characters the thread reply needed over 50 Slack blocks and
    # the reveal's explanation never posted.
    entry = {
        "id": "too-long",
        "question": "Which?",
        "choices": {"A": "This", "B": "That"},
        "answer": "A",
        "explanation": {"short": "Because.", "full": "x" * 6001},
    }
    (tmp_path / "q.yaml").write_text(yaml.safe_dump(entry), encoding="utf-8")
    with pytest.raises(BankError) as refused:
        load_bank([tmp_path])
    assert "explanation.full is 6001 characters; at most 6000" in str(refused.value)
