"""``quizbot bandwidth`` run as a user would: a separate process, its output and exit status."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.bandwidth import QUIZ_CHOICES

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _quizbot() -> list[str]:
    script = shutil.which("quizbot", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "bot"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "QUIZBOT_INTERCONNECTS"}
    environment.update(env or {})
    environment["MPLBACKEND"] = "Agg"
    return subprocess.run(
        [*_quizbot(), "bandwidth", *args],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO,
        env=environment,
        check=False,
    )


def test_text_table() -> None:
    done = run("140GB", "--op", "allreduce", "--nodes", "4", "--gpus", "8")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("allreduce of 140 GB (140,000,000,000 bytes), 4 nodes x 8 GPUs")
    assert all(len(line) <= 100 for line in lines)
    for key in QUIZ_CHOICES:
        assert f"\n{key} " in done.stdout
    # The quiz legend belongs to chat, where the quiz is played; the command line leaves it out.
    assert "quiz" not in done.stdout
    assert "Assumes:" in done.stdout
    assert done.stderr == ""


def test_chat_words_work_on_the_command_line() -> None:
    done = run("70B", "params", "bf16", "allreduce", "nodes=2", "gpus=8", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["bytes"], data["op"], data["nodes"], data["gpus_per_node"]) == (
        140 * 10**9,
        "allreduce",
        2,
        8,
    )


def test_json_output() -> None:
    done = run("1 GiB", "--op", "alltoall", "--nodes", "8", "--step", "250ms", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) == {"bytes", "op", "nodes", "gpus_per_node", "results"}
    assert data["bytes"] == 2**30
    seconds = [r["seconds"] for r in data["results"]]
    assert seconds == sorted(seconds)
    assert all(
        set(r)
        == {
            "key",
            "name",
            "seconds",
            "effective_GBps",
            "algbw_GBps",
            "busbw_GBps",
            "latency_s",
            "bandwidth_s",
            "algorithm",
            "protocol",
            "channels",
            "uncertainty",
            "efficiency",
        }
        for r in data["results"]
    )


def test_chart_file(tmp_path: Path) -> None:
    chart = tmp_path / "allreduce.png"
    done = run(
        "13B", "adam", "--op", "allreduce", "--gpus", "8", "--step", "0.5", "--chart", str(chart)
    )
    assert done.returncode == 0, done.stderr
    assert f"chart written to {chart}" in done.stdout
    png = chart.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) > 10_000


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["lots"], "Cannot read 'lots' as a size. Try 140GB, 400Gb or 70B params bf16."),
        (["--", "-5GB"], "more than zero"),
        (["nan", "GB"], "finite"),
        (["2", "EB"], "more than an exabyte"),
        ([], "Give a size"),
        (["1GB", "--op", "gossip"], "Unknown operation 'gossip'"),
        (["1GB", "--op", "allreduce", "--nodes", "0"], "between 1 and"),
        (["1GB", "--op", "allreduce", "--gpus", "x"], "--gpus must be a whole number"),
        (["1GB", "--over", "ib-hrd"], "Did you mean ib-hdr"),
        (["1GB", "--chart", "out.svg"], "ending in .png"),
        (["1GB", "--chart", "/nonexistent-dir/x.png"], "Cannot write the chart"),
        (["1GB", "--catalogue", "/nonexistent.yaml"], "Cannot read the interconnect file"),
        (["1GB", "--op", "allreduce", "--nodes", "1", "--gpus", "8", "--over", "1gbe"], "not 1gbe"),
        (["1GB", "--tp", "8"], "--tp is for the planner"),
        (["plan", "llama3-70b"], "Say how many GPUs in all, such as --gpus 128"),
        (["plan", "llama3-70b", "--gpus", "100"], "not a whole number of nodes of 8"),
        (["plan", "llama3-70b", "--gpus", "128", "--op", "allreduce"], "--op is for estimates"),
        (["plan", "llama4", "--gpus", "8"], "Unknown model 'llama4'"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_no_traceback(args: list[str], says: str) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert done.stderr.startswith("quizbot: ")
    assert says in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_user_catalogue_from_flag_and_environment(tmp_path: Path) -> None:
    links = tmp_path / "links.yaml"
    links.write_text(
        "interconnects:\n"
        "  - {key: lab-ib, name: Lab IB, family: infiniband, purpose: scale-out,"
        " rate_gbps: 100, efficiency: 0.97, latency_us: 1, rdma: true}\n",
        encoding="utf-8",
    )
    by_flag = run("1GB", "--catalogue", str(links), "--over", "lab-ib,1gbe")
    assert by_flag.returncode == 0, by_flag.stderr
    assert "Lab IB" in by_flag.stdout
    by_env = run("1GB", "--over", "lab-ib", env={"QUIZBOT_INTERCONNECTS": str(links)})
    assert by_env.returncode == 0, by_env.stderr
    links.write_text("interconnects:\n  - key: 1gbe\n    efficiency: 2\n", encoding="utf-8")
    bad = run("1GB", "--catalogue", str(links))
    assert bad.returncode == 2
    assert "efficiency must be a number above 0 and at most 1, got 2" in bad.stderr


def test_inside_one_box() -> None:
    done = run("1GB", "--op", "allreduce", "--nodes", "1", "--gpus", "8", "--over", "nvlink4")
    assert done.returncode == 0, done.stderr
    assert "1 node x 8 GPUs" in done.stdout and "nvls" in done.stdout


def test_plan_table_json_and_chart(tmp_path: Path) -> None:
    words = ("plan", "llama3-70b", "--gpus", "128", "--tp", "8", "--pp", "2")
    table = run(*words, "--over", "1gbe,100gbe,roce-400,ib-ndr")
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith("Llama 3 70B (70.6B params) on 128 x H100")
    assert "idle" in table.stdout and "Memory per GPU" in table.stdout
    assert all(len(line) <= 100 for line in table.stdout.splitlines())
    done = run(*words, "--json")
    data = json.loads(done.stdout)
    assert set(data) == {"model", "layout", "tokens_per_step", "results"}
    assert data["layout"] == {
        "tp": 8,
        "pp": 2,
        "cp": 1,
        "dp": 8,
        "zero": 1,
        "interleave": 1,
        "micro_batch": 1,
        "fp8": False,
        "sharp": False,
        "ep": 1,
    }
    chart = tmp_path / "step.png"
    drawn = run(*words, "--chart", str(chart))
    assert drawn.returncode == 0, drawn.stderr
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    chat_words = run("plan", "llama3-70b", "gpus=128", "tp=8", "pp=2", "--json")
    assert json.loads(chat_words.stdout)["layout"] == data["layout"]


def test_write_docs_regenerates_the_tables(tmp_path: Path) -> None:
    docs = tmp_path / "bandwidth.md"
    docs.write_text("x\n<!-- generated: gpus -->\nold\n<!-- end: gpus -->\n", encoding="utf-8")
    done = run("--write-docs", str(docs))
    assert done.returncode == 0, done.stderr
    assert "| `h100` | H100 SXM5 80GB | 989.4 |" in docs.read_text(encoding="utf-8")


def test_help_is_full_of_examples() -> None:
    done = run("--help")
    assert done.returncode == 0
    examples = [
        line for line in done.stdout.splitlines() if line.strip().startswith("quizbot bandwidth")
    ]
    assert len(examples) >= 6
    for word in ("--op", "--nodes", "--gpus", "--nics", "--step", "--over", "--json", "--chart"):
        assert word in done.stdout


def test_list_shows_every_source() -> None:
    done = run("--list")
    assert done.returncode == 0
    assert done.stdout.count("rate source:") == 30
    assert done.stdout.count("latency source:") == 30


@pytest.mark.parametrize(
    ("size", "told"),
    [
        ("-5GB", "A size must be more than zero"),
        ("-1", "A size must be more than zero"),
        ("1e-30GB", "A size must be at least one byte"),
        ("0.5B", "A size must be at least one byte"),
    ],
)
def test_a_negative_or_tiny_size_gets_the_bandwidth_message(size: str, told: str) -> None:
    done = run(size)
    assert done.returncode == 2
    assert done.stderr.startswith(f"quizbot: {told}"), done.stderr
    assert "unrecognized arguments" not in done.stderr
    assert done.stdout == ""


def test_one_byte_is_one_byte() -> None:
    done = run("1B")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("transfer of 1 B (1 byte), one link")


def test_a_misspelt_operation_gets_a_suggestion() -> None:
    done = run("1GB", "--op", "allreduse")
    assert done.returncode == 2
    assert "Did you mean allreduce?" in done.stderr


def test_proto_forces_nccls_protocol() -> None:
    done = run("8B", "--op", "broadcast", "--over", "100gbe", "--proto", "simple", "--json")
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)["results"]
    assert result["latency_s"] == pytest.approx(42.0e-6)
    refused = run("8B", "--proto", "ll")
    assert refused.returncode != 0 and "not priced by protocol" in refused.stderr
