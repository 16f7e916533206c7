"""Learning-track files: the shipped tracks load, and each broken file is refused at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bank import BankError, QuestionBank, load_bank
from bot.bank.tracks import check_tracks, load_tracks, track_files
from bot.engine.model import Choice, Question

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = REPO / "questions"


def _q(qid: str, *tags: str) -> Question:
    return Question(
        id=qid,
        text=f"About {qid}?",
        choices=(Choice("A", "yes"), Choice("B", "no")),
        answer="A",
        short="Because.",
        full="Because, at length.",
        tags=tags,
    )


BANK = QuestionBank(
    [_q("ring-bytes", "ring"), _q("tree-latency", "ring"), _q("sharp"), _q("nvlink", "links")]
    + [_q(f"many-{i}", "crowded") for i in range(11)]
)


def _check(tmp_path: Path, text: str, name: str = "my-track") -> tuple[dict, list[str]]:
    folder = tmp_path / "tracks"
    folder.mkdir(exist_ok=True)
    file = folder / f"{name}.yaml"
    file.write_text(text, encoding="utf-8")
    tracks, problems = check_tracks([file], BANK)
    return tracks, [f"{Path(p.file).name}:{p.line}: {p.message}" for p in problems]


def test_the_shipped_tracks_load_against_the_shipped_bank() -> None:
    bank = load_bank([QUESTIONS])
    tracks = load_tracks([QUESTIONS], bank)
    assert {"collectives-in-ten-days", "from-one-node-to-a-thousand"} <= set(tracks)
    for track in tracks.values():
        assert track.title and track.units
        for unit in track.units:
            assert unit.questions and unit.intro
            for qid in unit.questions:
                bank.by_id(qid)  # KeyError if the file named a question the bank lacks
        assert len(set(track.questions)) == len(track.questions)


def test_a_good_track_reads_with_units_in_order(tmp_path: Path) -> None:
    tracks, problems = _check(
        tmp_path,
        "title: Rings\nsummary: About rings.\nunits:\n"
        "  - title: First\n    intro: Start here.\n    questions: [ring-bytes, sharp]\n"
        "  - tag: links\n",
    )
    assert problems == []
    track = tracks["my-track"]
    assert track.title == "Rings" and track.summary == "About rings."
    assert [u.questions for u in track.units] == [("ring-bytes", "sharp"), ("nvlink",)]
    assert track.units[0].intro == "Start here." and track.units[1].tag == "links"
    assert track.questions == ("ring-bytes", "sharp", "nvlink")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("units:\n  - tag: ring\n", "my-track.yaml:1: title: missing"),
        ("title: T\n", "my-track.yaml:1: units: missing"),
        ("title: T\nunits: []\n", "my-track.yaml:2: units: a list of at least one unit"),
        (
            "title: T\nunits:\n  - questions: [ring-bytez]\n",
            "my-track.yaml:3: units[1].questions[1]: no question with id 'ring-bytez' "
            "(did you mean 'ring-bytes'?)",
        ),
        (
            "title: T\nunits:\n  - tag: rings\n",
            "my-track.yaml:3: units[1].tag: no question has the tag 'rings' (did you mean 'ring'?)",
        ),
        (
            "title: T\nunits:\n  - tag: crowded\n",
            "my-track.yaml:3: units[1].tag: the tag 'crowded' has 11 questions, at most 10",
        ),
        (
            "title: T\nunits:\n  - questions: [sharp]\n    tag: ring\n",
            "my-track.yaml:3: units[1]: give either questions (a list of ids) or tag, not both",
        ),
        (
            "title: T\nunits:\n  - intro: hello\n",
            "my-track.yaml:3: units[1]: give either questions",
        ),
        (
            "title: T\nunits:\n  - questions: [sharp]\n    intor: hello\n",
            "my-track.yaml:4: units[1].intor: unknown key (did you mean 'intro'?)",
        ),
        (
            "titel: T\nunits:\n  - tag: ring\n",
            "my-track.yaml:1: titel: unknown key (did you mean 'title'?)",
        ),
        (
            "title: T\nunits:\n  - questions: [sharp]\n  - questions: [nvlink, sharp]\n",
            "my-track.yaml:4: units[2]: question 'sharp' is already in units[1]",
        ),
        (
            "title: T\nunits:\n  - questions: [sharp, sharp]\n",
            "my-track.yaml:3: units[1].questions[2]: 'sharp' is listed twice",
        ),
        ("title: yes\nunits:\n  - tag: ring\n", "my-track.yaml:1: title: must be text"),
        (
            "title: T\nunits:\n  - questions: [sharp]\n    intro: " + "x" * 301 + "\n",
            "my-track.yaml:4: units[1].intro: 301 characters, at most 300",
        ),
        ("title: T\nunits:\n  - sharp\n", "my-track.yaml:3: units[1]: a unit is a mapping"),
        ("title: [T\n", "my-track.yaml:2: not valid YAML"),
        ("- a\n- b\n", "my-track.yaml:1: a track is a mapping with title and units"),
    ],
)
def test_a_broken_track_is_refused_with_its_file_line_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    tracks, problems = _check(tmp_path, text)
    assert tracks == {}
    assert any(p.startswith(expected) for p in problems), problems


def test_a_bad_file_name_is_refused(tmp_path: Path) -> None:
    _, problems = _check(tmp_path, "title: T\nunits:\n  - tag: ring\n", name="My_Track")
    assert problems == [
        "My_Track.yaml:1: the file name 'My_Track' is the track's name: use a-z, 0-9 and -"
    ]


def test_load_tracks_raises_every_problem_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "tracks"
    folder.mkdir()
    (folder / "a.yaml").write_text("title: A\nunits:\n  - questions: [nope]\n", encoding="utf-8")
    (folder / "b.yaml").write_text("units:\n  - tag: ring\n", encoding="utf-8")
    assert [f.name for f in track_files([tmp_path])] == ["a.yaml", "b.yaml"]
    with pytest.raises(BankError) as caught:
        load_tracks([tmp_path], BANK)
    assert len(caught.value.problems) == 2


def test_the_question_loader_leaves_the_tracks_folder_alone(tmp_path: Path) -> None:
    topic = tmp_path / "01-topic"
    topic.mkdir()
    (topic / "q.yaml").write_text(
        "id: only-one\nquestion: Which?\nchoices:\n  A: this\n  B: that\nanswer: A\n"
        "explanation:\n  short: Because.\n  full: Because, at length.\n",
        encoding="utf-8",
    )
    (tmp_path / "tracks").mkdir()
    (tmp_path / "tracks" / "t.yaml").write_text(
        "title: T\nunits:\n  - questions: [only-one]\n", encoding="utf-8"
    )
    bank = load_bank([tmp_path])
    assert [q.id for q in bank] == ["only-one"]
    assert list(load_tracks([tmp_path], bank)) == ["t"]
