"""The compute model: how long a GPU takes for one micro-batch of a layout, from GEMM shapes.

A micro-batch's work on one GPU is three parts, timed separately and added:

- the matrix multiplications (6 x the stage's share of the weights x its tokens, a third more
  with full recomputation) at the dense peak (BF16, or FP8 with ``fp8``) times a GEMM
  efficiency that falls with short GEMMs: ``gemm_efficiency x T / (T + gemm_half_tokens)``,
  T the tokens a micro-batch feeds each GEMM (micro-batch x sequence / cp);
- the attention products (12 x layers x width x sequence a token, PaLM's count) at the BF16
  peak times ``attention_efficiency`` (they stay BF16 under FP8);
- the element-wise work (norms, activations, residuals, dropout, softmax bookkeeping), bound by
  memory bandwidth: ``elementwise_bytes`` bytes a token a layer per unit of the GPU's width
  share (hidden / tp), at the GPU's HBM bandwidth. This is what makes narrow models slower
  than their FLOPs say.

With FP8 each GEMM's activation input and output gradient is first cast to FP8 with a
transposed copy for the weight-gradient GEMM (Transformer Engine's ``te.Linear``,
transformer_engine/pytorch/module/linear.py: ``fp8_cast_transpose_fused`` on the input, "FP8
input for forward, FP8 input transpose for backward wgrad", and the same on the output
gradient): ``FP8_CAST_BYTES`` a element (read 2 bytes of BF16, write 1 of FP8 and 1 of its
transpose), at the HBM bandwidth. Fused kernels (a norm or an activation writing FP8 itself, as
Transformer Engine's LayerNormLinear and LayerNormMLP do) save part of it; this counts every
GEMM's casts, as a model built of ``te.Linear`` layers runs them.

The constants are fitted on the calibration runs named in gpus.yaml and checked on the
held-out runs of the validation set (docs/bandwidth-validation.md).
"""

from __future__ import annotations

from dataclasses import dataclass

# Bytes of HBM traffic to cast one BF16 element to FP8 with its transpose (2 read, 1 + 1 written).
FP8_CAST_BYTES = 4


@dataclass(frozen=True, slots=True)
class ComputeModel:
    """The fitted constants of the compute model and where they come from."""

    gemm_efficiency: float
    gemm_half_tokens: float
    attention_efficiency: float
    elementwise_bytes: float
    fp8_gemm_efficiency: float
    source: str = ""


@dataclass(frozen=True, slots=True)
class ComputeTime:
    """One micro-batch on one GPU, in seconds, by part."""

    gemm: float
    attention: float
    elementwise: float

    @property
    def seconds(self) -> float:
        """Return the three parts together."""
        return self.gemm + self.attention + self.elementwise


def microbatch_time(
    cm: ComputeModel,
    *,
    layers: int,
    matmul_params_per_layer: float,
    output_params: float,
    hidden: int,
    seq: int,
    tokens: float,
    tp: int,
    recompute: bool,
    bf16_flops: float,
    fp8_flops: float | None,
    hbm_bytes_per_s: float,
    fp8: bool,
    gemm_widths: tuple[float, float] = (0.0, 0.0),
) -> ComputeTime:
    """Return one micro-batch's compute on one GPU for ``layers`` layers of a stage.

    ``tokens`` is micro-batch x sequence / cp (what each GEMM sees); ``output_params`` the
    output layer's weights when this stage holds it (0 otherwise); ``gemm_widths`` the widths a
    token brings to a layer's GEMM inputs and output gradients (``Model.gemm_widths``), cast to
    FP8 under ``fp8``.
    """
    redo = 4 / 3 if recompute else 1.0
    gemm_flops = 6 * (layers * matmul_params_per_layer * redo + output_params) * tokens / tp
    attention_flops = 12 * layers * hidden * seq * tokens / tp * redo
    shape = tokens / (tokens + cm.gemm_half_tokens)
    if fp8 and fp8_flops is not None:
        gemm_rate = fp8_flops * cm.fp8_gemm_efficiency * shape
    else:
        gemm_rate = bf16_flops * cm.gemm_efficiency * shape
    attention_rate = bf16_flops * cm.attention_efficiency
    elementwise = cm.elementwise_bytes * layers * tokens * hidden / tp * redo / hbm_bytes_per_s
    if fp8 and fp8_flops is not None:
        inputs, gradients = gemm_widths
        cast = FP8_CAST_BYTES * layers * tokens * (inputs * redo + gradients) / tp
        elementwise += cast / hbm_bytes_per_s
    return ComputeTime(gemm_flops / gemm_rate, attention_flops / attention_rate, elementwise)
