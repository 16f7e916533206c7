"""The planner's data: GPUs (gpus.yaml) and model presets with published shapes (models.yaml)."""

from __future__ import annotations

import difflib
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from bot.bandwidth import _words as say
from bot.bandwidth._compute import ComputeModel
from bot.bandwidth._errors import BandwidthError

_T = TypeVar("_T")
GPU_FILE = "gpus.yaml"
MODEL_FILE = "models.yaml"


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU: its dense peaks, its memory and the NVLink that joins it to its neighbours."""

    key: str
    name: str
    bf16_tflops: float
    fp8_tflops: float | None
    memory_gb: float
    nvlink: str
    nvlink_domain: int
    sources: tuple[tuple[str, str], ...] = ()
    hbm_tbps: float = 3.35

    @property
    def hbm_bytes_per_s(self) -> float:
        """Return the HBM bandwidth in bytes per second."""
        return self.hbm_tbps * 1e12

    @property
    def fp8_flops(self) -> float | None:
        """Return the dense FP8 peak in FLOP/s (None without FP8)."""
        return None if self.fp8_tflops is None else self.fp8_tflops * 1e12

    @property
    def bf16_flops(self) -> float:
        """Return the dense BF16 peak in FLOP/s."""
        return self.bf16_tflops * 1e12

    def source(self, what: str) -> str | None:
        """Return where ``compute``, ``memory`` or ``nvlink`` comes from."""
        return dict(self.sources).get(what)


@dataclass(frozen=True, slots=True)
class Model:
    """A decoder-only transformer's shape; the parameter count follows from it."""

    key: str
    name: str
    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    glu: bool = True
    tied: bool = False
    seq: int = 4096
    batch_tokens: int = 4 * 2**20
    source: str = ""
    experts: int = 1  # feed-forward experts a layer (1: a dense model)
    top_k: int = 1  # experts each token is routed to

    @property
    def mlp_params(self) -> int:
        """Return one feed-forward block's weights (one expert's in a mixture of experts)."""
        return (3 if self.glu else 2) * self.hidden * self.ffn

    @property
    def expert_params(self) -> int:
        """Return every layer's expert weights beyond the first (0 for a dense model)."""
        return self.layers * (self.experts - 1) * self.mlp_params if self.experts > 1 else 0

    @property
    def active_layer_params(self) -> int:
        """Return the weights of one layer a token passes through (top-k experts, router)."""
        if self.experts <= 1:
            return self.layer_params
        # layer_params already holds the router; swap all the experts for the top-k.
        return self.layer_params - (self.experts - self.top_k) * self.mlp_params

    @property
    def kv_hidden(self) -> int:
        """Return the width of the keys (and of the values): kv_heads x head size."""
        return self.hidden * self.kv_heads // self.heads

    @property
    def gemm_widths(self) -> tuple[int, int]:
        """Return the widths a token brings to one layer's GEMMs: (inputs, output gradients).

        The inputs of the QKV, output, up and down projections (h, h, h, ffn), and the
        gradients of their outputs that the backward pass feeds back (h + 2 kv, h, ffn, or 2 ffn
        with a gated unit, h); a token's top-k experts each take their own.
        """
        h, k = self.hidden, self.top_k if self.experts > 1 else 1
        up = (2 if self.glu else 1) * self.ffn
        return 3 * h + k * self.ffn, 2 * h + 2 * self.kv_hidden + k * (up + h)

    @property
    def layer_params(self) -> int:
        """Return the weights of one layer: attention (Q, K, V, O) plus the feed-forward."""
        h = self.hidden
        attention = 2 * h * h + 2 * h * self.kv_hidden
        mlp = self.experts * self.mlp_params
        router = h * self.experts if self.experts > 1 else 0
        return attention + mlp + router + 2 * h  # and two norms

    @property
    def embedding_params(self) -> int:
        """Return the input embedding's weights (the output layer's too when tied)."""
        return self.vocab * self.hidden

    @property
    def output_params(self) -> int:
        """Return the output layer's own weights (0 when it shares the embedding's)."""
        return 0 if self.tied else self.vocab * self.hidden

    @property
    def params(self) -> int:
        """Return every weight: the layers, the embedding and an untied output layer."""
        return self.layers * self.layer_params + self.embedding_params + self.output_params

    @property
    def matmul_params(self) -> int:
        """Return the weights that take part in matrix multiplications for every token.

        The input embedding is a table lookup; the output layer multiplies the last hidden
        state by the vocabulary matrix whether it is tied or not.
        """
        return self.layers * self.active_layer_params + self.vocab * self.hidden


@dataclass(frozen=True)
class Hardware:
    """The GPU catalogue and the model presets."""

    gpus: tuple[Gpu, ...]
    models: tuple[Model, ...]
    default_gpu: str
    compute_efficiency: float
    compute_efficiency_source: str
    compute: ComputeModel | None = None

    def gpu(self, key: str) -> Gpu:
        """Return the GPU called ``key`` or raise BandwidthError naming close matches."""
        return _find(key, {g.key: g for g in self.gpus}, say.WHAT_GPU)

    def model(self, key: str) -> Model:
        """Return the model preset called ``key`` or raise BandwidthError naming close ones."""
        return _find(key, {m.key: m for m in self.models}, say.WHAT_MODEL)


def _find(key: str, index: Mapping[str, _T], what: str) -> _T:
    wanted = key.strip().lower()
    if wanted in index:
        return index[wanted]
    close = difflib.get_close_matches(wanted, index, n=3, cutoff=0.5)
    hint = say.DID_YOU_MEAN.format(near=" or ".join(close)) if close else ""
    known = ", ".join(index)
    raise BandwidthError(say.UNKNOWN_NAMED.format(what=what, key=key, hint=hint, known=known))


@functools.cache
def load_hardware() -> Hardware:
    """Return the bundled GPU catalogue and model presets (read once)."""
    here = Path(__file__).parent
    gpus = _read(here / GPU_FILE)
    models = _read(here / MODEL_FILE)
    try:
        gpu_list = tuple(_gpu(raw) for raw in gpus["gpus"])
        model_list = tuple(_model(raw) for raw in models["models"])
        efficiency = float(gpus["compute_efficiency"])
        raw = gpus["compute_model"]
        compute = ComputeModel(
            gemm_efficiency=float(raw["gemm_efficiency"]),
            gemm_half_tokens=float(raw["gemm_half_tokens"]),
            attention_efficiency=float(raw["attention_efficiency"]),
            elementwise_bytes=float(raw["elementwise_bytes"]),
            fp8_gemm_efficiency=float(raw["fp8_gemm_efficiency"]),
            source=" ".join(str(raw["source"]).split()),
        )
        hardware = Hardware(
            gpu_list,
            model_list,
            str(gpus["default"]),
            efficiency,
            " ".join(str(gpus["compute_efficiency_source"]).split()),
            compute,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BandwidthError(say.PLANNER_DATA_BROKEN.format(error=exc)) from None
    hardware.gpu(hardware.default_gpu)
    if not 0 < efficiency <= 1:
        raise BandwidthError(say.EFFICIENCY_OUT_OF_RANGE)
    return hardware


def _read(path: Path) -> Any:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(path.read_text(encoding="utf-8"), Loader=loader)


def _gpu(raw: Mapping[str, Any]) -> Gpu:
    fp8 = raw["fp8_tflops"]
    sources = tuple((str(k), " ".join(str(v).split())) for k, v in raw["sources"].items())
    gpu = Gpu(
        key=str(raw["key"]),
        name=str(raw["name"]),
        bf16_tflops=float(raw["bf16_tflops"]),
        fp8_tflops=None if fp8 is None else float(fp8),
        memory_gb=float(raw["memory_gb"]),
        nvlink=str(raw["nvlink"]),
        nvlink_domain=int(raw["nvlink_domain"]),
        sources=sources,
        hbm_tbps=float(raw["hbm_tbps"]),
    )
    if not (math.isfinite(gpu.bf16_tflops) and gpu.bf16_tflops > 0 and gpu.memory_gb > 0):
        raise ValueError(f"{gpu.key}: peaks and memory must be positive")
    return gpu


def _model(raw: Mapping[str, Any]) -> Model:
    return Model(
        key=str(raw["key"]),
        name=str(raw["name"]),
        layers=int(raw["layers"]),
        hidden=int(raw["hidden"]),
        ffn=int(raw["ffn"]),
        heads=int(raw["heads"]),
        kv_heads=int(raw["kv_heads"]),
        vocab=int(raw["vocab"]),
        glu=bool(raw["glu"]),
        tied=bool(raw["tied"]),
        seq=int(raw["seq"]),
        batch_tokens=int(raw["batch_tokens"]),
        source=" ".join(str(raw["source"]).split()),
        experts=int(raw.get("experts", 1)),
        top_k=int(raw.get("top_k", 1)),
    )
