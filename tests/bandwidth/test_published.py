"""The estimator and the planner against published measurements, each within its own tolerance.

The figures, their sources and setups are in ``published.py`` (the validation set); each one
held to a bound here carries a tolerance (|predicted / measured - 1| at most that, 20%
at most for the collectives, 25% for whole training steps). A case marked ``calibrates`` is
where a catalogue number comes from, so it checks the arithmetic rather than the model; the
others are predictions.

Metrics follow the tools that published them:
- iperf / iperf3 report goodput in bits per second (10^6 or 10^9);
- perftest (ib_write_bw, ib_read_bw, ib_send_bw) reports MB/sec as MiB/s, or Gb/sec with 10^9;
- nccl-tests report algbw = bytes / time and busbw = algbw x 2(n-1)/n for all-reduce
  (doc/PERFORMANCE.md);
- CUDA bandwidthTest reports MB/s in units of 1.024e6 bytes; nvbandwidth reports GB/s (10^9).
"""

from __future__ import annotations

import pytest

from bot.bandwidth import ENV_VAR, estimate, load_catalogue, load_hardware, parse_request
from tests.bandwidth.published import FIGURES, GROUPS, MEASUREMENTS, RUNS, WITHIN, error

MAX_TOLERANCE = 0.20
MAX_PLAN_TOLERANCE = 0.30


@pytest.fixture(autouse=True)
def _bundled_catalogue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


@pytest.mark.parametrize("name", [n for n, f in MEASUREMENTS.items() if f.tolerance is not None])
def test_estimate_matches_the_published_measurement(name: str) -> None:
    case = MEASUREMENTS[name]
    assert case.tolerance is not None and case.tolerance <= MAX_TOLERANCE
    predicted, algorithm = case.predict()
    error = predicted / case.measured - 1
    assert abs(error) <= case.tolerance, (
        f"{name}: predicted {predicted:,.1f} {case.unit}, measured {case.measured:,.1f}"
        f" ({error:+.1%}, tolerance {case.tolerance:.0%})"
    )
    if case.algorithm is not None:
        assert algorithm == case.algorithm


def test_the_required_kinds_of_measurement_are_all_here() -> None:
    predictions = [c for c in MEASUREMENTS.values() if not c.calibrates]
    assert len(predictions) >= 16
    covered = set().union(*(c.kinds for c in predictions))
    for kind in ("TCP sockets", "NVLS", "2-node tree", "multi-node ring", "RDMA", "NVLink"):
        assert kind in covered, kind


def test_tcp_sockets_stay_far_below_rdma_at_the_same_rate() -> None:
    # The lesson of NVIDIA/nccl#450: 400G over NCCL's sockets is not level with NDR.
    request = parse_request("70B params bf16 allreduce nodes=16 gpus=8 over=ib-ndr,400gbe")
    result = estimate(request, load_catalogue())
    ndr, tcp = (next(r for r in result.results if r.key == k) for k in ("ib-ndr", "400gbe"))
    assert tcp.seconds > 2 * ndr.seconds
    assert tcp.transport == "socket" and ndr.transport == "rdma"


@pytest.mark.parametrize("name", [n for n, f in RUNS.items() if f.tolerance is not None])
def test_planner_matches_the_published_throughput(name: str) -> None:
    run = RUNS[name]
    assert run.tolerance is not None and run.tolerance <= MAX_PLAN_TOLERANCE
    predicted, _ = run.predict()
    error = predicted / run.measured - 1
    assert abs(error) <= run.tolerance, (
        f"{name}: predicted {predicted:,.1f} {run.unit}, published {run.measured:,.1f}"
        f" ({error:+.1%}, tolerance {run.tolerance:.0%})"
    )


def test_the_compute_model_is_calibrated_on_named_runs_and_predicts_the_others() -> None:
    calibrated = [name for name, run in RUNS.items() if run.calibrates]
    assert "Llama 3 405B, 8,192 GPUs" in calibrated
    assert len(RUNS) - len(calibrated) >= 3 * len(calibrated)
    assert "Llama 3 405B" in load_hardware().compute_efficiency_source
    compute = load_hardware().compute
    assert compute is not None
    for named in ("MPT 760M", "1B (2K)", "7B (2K)", "30B (2K", "3B (2K) in FP8", "GPT-3 175B"):
        assert named in compute.source
    assert len(calibrated) == 7


def test_most_held_out_training_steps_are_within_20_percent() -> None:
    # The aim: 90%. 20 of 24 (83%) before the Llama 3 virtual stages and the FP8 casts; 44 of
    # 48 (92%) with them and the rest of the MPT tables' 8-GPU rows.
    held_out = [run for run in RUNS.values() if not run.calibrates]
    within = [run for run in held_out if abs(error(run)) <= WITHIN]
    assert len(within) / len(held_out) >= 0.90


def test_the_validation_set_has_sixty_sourced_figures_with_calibration_marked() -> None:
    assert len(FIGURES) >= 60
    for name, figure in FIGURES.items():
        assert "github.com" in figure.source or "arXiv" in figure.source or "." in figure.source
        assert len(figure.source) > 40, name
    held_out = [f for f in FIGURES.values() if not f.calibrates]
    assert len(held_out) >= 3 * (len(FIGURES) - len(held_out))
    assert {f.group() for f in FIGURES.values()} == set(GROUPS)


def test_every_figure_can_be_predicted() -> None:
    for name, figure in FIGURES.items():
        predicted, _ = figure.predict()
        assert predicted > 0, name


def test_the_uncertainty_bands_are_the_held_out_spread() -> None:
    import math

    from bot.bandwidth._bands import BANDS, rounded_band

    for group in GROUPS:
        errors = [error(f) for f in FIGURES.values() if not f.calibrates and f.group() == group]
        rms = math.sqrt(sum(e * e for e in errors) / len(errors))
        assert BANDS[group] == rounded_band(rms), (group, rms)


def test_nine_in_ten_collectives_from_1_mib_are_within_20_percent() -> None:
    # The aim of the validation set; 19 of 22 (86%) before NCCL's tree corrections and the NVLS
    # bus bandwidth held across domain sizes.
    from tests.bandwidth.published import MIB

    sized = [
        f
        for f in MEASUREMENTS.values()
        if f.group() in ("mid", "large") and parse_request(f.request).bytes >= MIB
    ]
    within = [f for f in sized if abs(error(f)) <= WITHIN]
    assert len(sized) == 22
    assert len(within) / len(sized) >= 0.90


def test_eight_byte_latencies_are_within_30_percent() -> None:
    # The aim: every 8-byte figure within 30%. The RTX 4090 box run by one thread (nccl-tests
    # -g 8) was -51% until that thread's launches were priced (launch=single); the same box with
    # and without peer-to-peer (38.82 and 38.83 us) shows the transport was not the cause. The TCP
    # broadcast was -31.0% until its source's NCCL_PROTO=Simple could be asked for (proto=simple).
    latency = {n: f for n, f in MEASUREMENTS.items() if f.group() == "latency"}
    assert len(latency) == 7
    missed = {n for n, f in latency.items() if abs(error(f)) > 0.30}
    assert missed == set()
