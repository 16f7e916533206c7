"""The training-step planner: how long a step of a model and layout takes on each network.

A step is priced from first principles (docs/bandwidth.md, "The planner"): the FLOPs at the
GPU's dense BF16 peak times one calibrated efficiency, and for every parallel dimension the
bytes it moves timed with the collective models NCCL's algorithms follow (``_models``):

- tensor parallel (TP): 4 all-reduces of the activations a layer per micro-batch (6 with full
  recomputation), on the critical path;
- context parallel (CP): ring exchanges of the keys and values, hidden behind the attention
  they feed as far as it lasts;
- pipeline parallel (PP): point-to-point sends of the activations and their gradients at every
  stage boundary, and the bubble (p-1)/(m+p-1) of the one-forward-one-backward schedule;
- data parallel (DP): the gradient all-reduce (ZeRO 0-2, once a step, overlapped with the last
  micro-batch's backward pass) or ZeRO-3's all-gathers and reduce-scatters every micro-batch
  (overlapped with the compute).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from bot.bandwidth import _words as say
from bot.bandwidth._catalogue import MAX_NICS_PER_NODE, QUIZ_CHOICES, Catalogue, Interconnect
from bot.bandwidth._compute import ComputeModel, microbatch_time
from bot.bandwidth._errors import BandwidthError, Problems
from bot.bandwidth._estimate import gpu_link, hardware_kinds, host_link_bytes_per_s, nvls_link
from bot.bandwidth._hardware import Gpu, Hardware, Model, load_hardware
from bot.bandwidth._models import Cluster, Link, collective, transfer
from bot.bandwidth._plan_request import PlanRequest, parse_params

BYTES = 2  # bf16 activations, weights and gradients
OPTIMIZER_BYTES = 12  # fp32 master weights and two Adam moments (ZeRO paper's K = 12)
ACTIVATION_BYTES_PER_TOKEN_WIDTH = 34  # Korthikanti et al. 2022, per layer, with sequence par.
DEFAULT_BATCH_TOKENS = 4 * 2**20
TP_CALLS = 4  # all-reduces a layer per micro-batch: 2 forward, 2 backward (Megatron-LM)
TP_CALLS_RECOMPUTE = 6  # the recomputed forward pass repeats its 2
DDP_BUCKET_BYTES = 25 * 10**6  # PyTorch DDP's default gradient bucket (bucket_cap_mb=25)
# Adam's step per parameter: reads the fp32 master weight, both moments and the gradient, and
# writes the master weight, both moments and the bf16 weight: 4 x 3 + 4 + 4 x 3 + 2 bytes.
ADAM_STEP_BYTES = 30
# With uneven stages the embedding and the output layer may each take the place of a layer in
# the pipeline's split: Llama 3 "reduce[s] one Transformer layer each from the first and the last
# stages", so that "the first model chunk on the first stage has only the embedding, and the
# last model chunk on the last stage has only output projection and loss calculation"
# (arXiv:2407.21783, section 3.3.2); Megatron-Core's account_for_embedding_in_pipeline_split and
# account_for_loss_in_pipeline_split do the same. pp x interleave may then reach layers + 2.
EMBEDDING_CHUNKS = 2


@dataclass(frozen=True, slots=True)
class Layout:
    """The resolved parallel layout of a plan."""

    gpus: int
    gpus_per_node: int
    nodes: int
    tp: int
    pp: int
    cp: int
    dp: int
    zero: int
    seq: int
    global_batch: int
    micro_batch: int
    microbatches: int
    interleave: int
    recompute: bool
    nics: int
    efficiency: float
    fp8: bool = False
    compute: ComputeModel | None = None
    sharp: bool = False
    uneven: bool = False
    tp_overlap: bool = False
    ep: int = 1  # None: every FLOP at ``efficiency`` of the BF16 peak

    @property
    def tokens_per_step(self) -> int:
        """Return the tokens one step trains on: global batch x sequence length."""
        return self.global_batch * self.seq

    @property
    def grad_group(self) -> int:
        """Return the ranks that hold the same weights and reduce gradients: dp x cp."""
        return self.dp * self.cp


@dataclass(frozen=True, slots=True)
class Volumes:
    """Bytes each GPU sends in one step, per parallel dimension (the closed forms)."""

    tp: float
    pp: float
    cp: float
    dp: float


@dataclass(frozen=True, slots=True)
class Memory:
    """What one GPU holds, in bytes, and whether it fits."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    capacity: float

    @property
    def total(self) -> float:
        """Return everything together."""
        return self.weights + self.gradients + self.optimizer + self.activations

    @property
    def fits(self) -> bool:
        """Return whether it fits the GPU's memory."""
        return self.total <= self.capacity


@dataclass(frozen=True, slots=True)
class CommSeconds:
    """Seconds of communication a step, per parallel dimension (before any overlap)."""

    tp: float
    pp: float
    cp: float
    dp: float
    ep: float = 0.0


@dataclass(frozen=True, slots=True)
class PlanResult:
    """One interconnect's training step."""

    key: str
    name: str
    family: str
    quiz_choice: bool
    step_seconds: float
    compute_seconds: float
    comm_seconds: CommSeconds
    exposed_comm_seconds: float
    tp_exposed_seconds: float
    cp_exposed_seconds: float
    pp_exposed_seconds: float
    bubble_seconds: float
    dp_exposed_seconds: float
    tflops_per_gpu: float
    mfu: float
    tokens_per_second: float
    idle_share: float
    slowdown: float = 1.0


@dataclass(frozen=True, slots=True)
class Plan:
    """A model and layout priced on every compared interconnect, fastest first."""

    request: PlanRequest
    model: Model
    gpu: Gpu
    layout: Layout
    results: tuple[PlanResult, ...]
    volumes: Volumes
    memory: Memory
    model_flops_per_step: float
    assumptions: str
    warnings: tuple[str, ...] = ()

    @property
    def fastest(self) -> PlanResult:
        """Return the quickest result."""
        return self.results[0]


def resolve_model(request: PlanRequest, hardware: Hardware) -> Model:
    """Return the preset or given shape, with the request's experts and top-k if any."""
    model = _base_model(request, hardware)
    experts = request.experts or model.experts
    top_k = request.top_k or (model.top_k if request.experts is None else min(2, experts))
    if top_k > experts:
        raise BandwidthError(say.TOP_K_OVER_EXPERTS.format(top_k=top_k, experts=experts))
    if (experts, top_k) != (model.experts, model.top_k):
        model = replace(model, experts=experts, top_k=top_k)
    return model


def _base_model(request: PlanRequest, hardware: Hardware) -> Model:
    if not request.custom_shape():
        return hardware.model(request.model)
    if request.layers is None or request.hidden is None:
        raise BandwidthError(say.CUSTOM_NEEDS_SHAPE)
    hidden = request.hidden
    heads = request.heads or max(1, hidden // 128)
    model = Model(
        key="custom",
        name=request.model.upper() if request.model[-1:].isalpha() else request.model,
        layers=request.layers,
        hidden=hidden,
        ffn=request.ffn or 4 * hidden,
        heads=heads,
        kv_heads=request.kv_heads or heads,
        vocab=request.vocab or 50_257,
        glu=False,
        tied=True,
        seq=request.seq or 4096,
        batch_tokens=DEFAULT_BATCH_TOKENS,
        source="given on the command line",
    )
    if hidden % heads:
        raise BandwidthError(say.HIDDEN_NOT_HEADS.format(hidden=hidden, heads=heads))
    if heads % model.kv_heads:
        raise BandwidthError(say.HEADS_NOT_KV.format(heads=heads, kv=model.kv_heads))
    try:
        stated: float | None = parse_params(request.model)
    except BandwidthError:
        stated = None
    if stated is not None and not 0.5 <= model.params / stated <= 2:
        raise BandwidthError(
            say.SHAPE_NOT_SIZE.format(
                layers=model.layers, hidden=hidden, billions=model.params / 1e9, model=request.model
            )
        )
    return model


def resolve_layout(request: PlanRequest, model: Model, gpu: Gpu, hardware: Hardware) -> Layout:
    """Return the full layout: defaults filled in, every divisibility rule checked."""
    gpus = request.gpus
    gpn = request.gpus_per_node or min(gpu.nvlink_domain, gpus)
    pp, cp = request.pp, request.cp
    tp = request.tp or _default_tp(request, model, gpu, gpn)
    # The checks on the sizes given one by one are independent: all their problems are told.
    problems = Problems()
    if gpn > gpu.nvlink_domain:
        problems.found.append(
            say.GPN_OVER_DOMAIN.format(gpn=gpn, gpu=gpu.name, domain=gpu.nvlink_domain)
        )
    if request.nics is not None and request.nics > MAX_NICS_PER_NODE:
        problems.found.append(say.NICS_OVER_MAX.format(nics=request.nics, most=MAX_NICS_PER_NODE))
    if gpus % gpn:
        problems.found.append(say.GPUS_NOT_NODES.format(gpus=gpus, gpn=gpn))
    for name, value in (("tp", tp), ("pp", pp), ("cp", cp)):
        if value > gpus:
            problems.found.append(say.SPLIT_OVER_GPUS.format(name=name, value=value, gpus=gpus))
    if model.heads % tp or model.kv_heads % tp:
        problems.found.append(say.TP_NOT_HEADS.format(tp=tp, heads=model.heads, kv=model.kv_heads))
    if pp > model.layers:
        problems.found.append(say.PP_OVER_LAYERS.format(pp=pp, layers=model.layers))
    elif pp * request.interleave > model.layers + (EMBEDDING_CHUNKS if request.uneven else 0):
        problems.found.append(say.INTERLEAVE_OVER_LAYERS)
    if request.interleave > 1 and pp == 1:
        problems.found.append(say.INTERLEAVE_NEEDS_PP)
    seq = request.seq or model.seq
    if seq % cp:
        problems.found.append(say.SEQ_NOT_CP.format(seq=seq, cp=cp))
    if max(tp, pp, cp) <= gpus and gpus % (tp * pp * cp):
        problems.found.append(say.GPUS_NOT_SPLIT.format(gpus=gpus, tp=tp, pp=pp, cp=cp))
    problems.raise_any()
    dp = gpus // (tp * pp * cp)
    if request.ep > 1:
        if model.experts % request.ep:
            dense = say.EP_DENSE if model.experts == 1 else ""
            raise BandwidthError(
                say.EP_NOT_EXPERTS.format(ep=request.ep, experts=model.experts, dense=dense)
            )
        if (dp * cp) % request.ep:
            raise BandwidthError(say.EP_NOT_DP.format(ep=request.ep, dp_cp=dp * cp))
    if request.dp is not None and request.dp != dp:
        product = tp * pp * cp * request.dp
        raise BandwidthError(
            say.DP_NOT_GPUS.format(tp=tp, pp=pp, cp=cp, dp=request.dp, product=product, gpus=gpus)
        )
    b = request.micro_batch
    per_step = dp * b
    if request.global_batch is None:
        microbatches = max(1, round(model.batch_tokens / seq / per_step))
        global_batch = microbatches * per_step
    else:
        global_batch = request.global_batch
        if global_batch % per_step:
            raise BandwidthError(
                say.BATCH_NOT_MICRO.format(batch=global_batch, dp=dp, micro=b, per_step=per_step)
            )
        microbatches = global_batch // per_step
    return Layout(
        gpus=gpus,
        gpus_per_node=gpn,
        nodes=gpus // gpn,
        tp=tp,
        pp=pp,
        cp=cp,
        dp=dp,
        zero=request.zero,
        seq=seq,
        global_batch=global_batch,
        micro_batch=b,
        microbatches=microbatches,
        interleave=request.interleave,
        recompute=request.recompute,
        nics=request.nics or gpn,
        efficiency=request.efficiency or hardware.compute_efficiency,
        fp8=request.fp8,
        sharp=request.sharp,
        uneven=request.uneven,
        tp_overlap=request.tp_overlap,
        ep=request.ep,
        compute=None if request.efficiency is not None else hardware.compute,
    )


def _default_tp(request: PlanRequest, model: Model, gpu: Gpu, gpn: int) -> int:
    """Return the smallest tensor-parallel size inside a node whose layout fits in memory."""
    options = [
        t
        for t in (1, 2, 4, 8)
        if t <= gpn
        and model.heads % t == 0
        and model.kv_heads % t == 0
        and request.gpus % (t * request.pp * request.cp) == 0
    ]
    if not options:
        return 1
    for t in options:
        dp = request.gpus // (t * request.pp * request.cp)
        probe = _memory(
            model,
            gpu,
            t,
            request.pp,
            request.cp,
            dp,
            request.zero,
            request.seq or model.seq,
            request.micro_batch,
            request.recompute,
            1,
        )
        if probe.fits:
            return t
    return options[-1]


def plan(request: PlanRequest, catalogue: Catalogue, hardware: Hardware | None = None) -> Plan:
    """Return the step time of ``request`` on every compared interconnect, fastest first."""
    hw = hardware or load_hardware()
    # The GPU, the model and the networks are independent: every one that is wrong is told.
    problems = Problems()
    found_gpu: Gpu | None = None
    found_model: Model | None = None
    with problems.check():
        found_gpu = hw.gpu(request.gpu or hw.default_gpu)
    with problems.check():
        found_model = resolve_model(request, hw)
    links: list[Interconnect] = []
    keys = request.over or catalogue.default_comparison
    if "all" in keys:
        keys = tuple(ic.key for ic in catalogue if not ic.intra_node)
    for key in keys:
        with problems.check():
            links.append(catalogue.get(key))
    found_layout: Layout | None = None
    if found_gpu is not None and found_model is not None:
        with problems.check():
            found_layout = resolve_layout(request, found_model, found_gpu, hw)
    problems.raise_any()
    assert found_gpu is not None and found_model is not None and found_layout is not None
    gpu, model, layout = found_gpu, found_model, found_layout
    if layout.compute is not None:
        # The share of the BF16 peak the compute model reaches on this layout, for the record.
        seconds, _ = compute_seconds(model, gpu, layout)
        stage_layers = math.ceil(model.layers / layout.pp)
        imbalance = stage_layers * layout.pp / model.layers
        executed = hardware_flops(model, layout) / layout.gpus * imbalance / layout.microbatches
        layout = replace(layout, efficiency=executed / seconds / gpu.bf16_flops)
    intra = catalogue.get(gpu.nvlink)
    inside = [ic.key for ic in links if ic.intra_node]
    if inside:
        raise BandwidthError(
            say.OVER_INSIDE_NODE.format(inside=", ".join(inside), gpu=gpu.name, nvlink=gpu.nvlink)
        )
    flops = model_flops(model, layout)
    priced = [_price(model, gpu, layout, ic, intra, flops) for ic in links]
    # Equal steps (the network hidden behind compute) list the faster link first, as a reader
    # would rank them, not the keys in alphabetical order.
    rate = {ic.key: ic.payload_bytes_per_s for ic in links}
    priced.sort(key=lambda r: (r.step_seconds, -rate[r.key], r.key))
    best = priced[0].step_seconds
    results = tuple(_with_slowdown(r, best) for r in priced)
    memory = _memory(
        model,
        gpu,
        layout.tp,
        layout.pp,
        layout.cp,
        layout.dp,
        layout.zero,
        layout.seq,
        layout.micro_batch,
        layout.recompute,
        layout.microbatches,
        layout.ep,
    )
    warnings = _warnings(model, gpu, layout, memory)
    text = plan_assumptions(model, gpu, layout, intra)
    return Plan(
        request,
        model,
        gpu,
        layout,
        results,
        volumes(model, layout),
        memory,
        flops,
        text,
        warnings,
    )


def _with_slowdown(result: PlanResult, best: float) -> PlanResult:
    return replace(result, slowdown=result.step_seconds / best)


def model_flops(model: Model, layout: Layout) -> float:
    """Return a step's model FLOPs: 6 x matmul params x tokens plus the attention term.

    The attention term is 12 x layers x hidden x seq per token (forward and backward of the
    two attention products over the whole sequence, as PaLM's MFU counts it); activation
    recomputation is not counted, so MFU compares layouts on the same work.
    """
    tokens = layout.tokens_per_step
    per_token = 6 * model.matmul_params + 12 * model.layers * model.hidden * layout.seq
    return float(per_token) * tokens


def hardware_flops(model: Model, layout: Layout) -> float:
    """Return the FLOPs the GPUs execute a step: model FLOPs plus the recomputed forward."""
    flops = model_flops(model, layout)
    if layout.recompute:
        # Recomputing every layer's forward pass adds a third of the layers' work.
        layers = (
            model.layers * model.active_layer_params * 6
            + 12 * model.layers * model.hidden * layout.seq
        )
        flops += layers / 3 * layout.tokens_per_step
    return flops


def volumes(model: Model, layout: Layout) -> Volumes:
    """Return the bytes each GPU sends a step, per dimension, from the closed forms.

    TP: 8·b·s·h·(t-1)/t elements a layer per micro-batch (Narayanan et al., SC'21, section
    3.3: 4 ring all-reduces of b·s·h), over the stage's layers and the micro-batches.
    PP: b·s·h/t elements a micro-batch each way across a stage boundary (scatter/gather).
    CP: the keys and values of a rank's chunk, sent to the next rank c-1 times forward and,
    with their gradients, twice as much backward.
    DP: 2Ψ(g-1)/g elements for an all-reduce of Ψ gradients (ZeRO 0-2), 3Ψ(g-1)/g with ZeRO-3
    (Rajbhandari et al., SC'20, section 7), Ψ the GPU's share of the weights.
    """
    m, b, t, p, c = layout.microbatches, layout.micro_batch, layout.tp, layout.pp, layout.cp
    s_local = layout.seq // c
    h = model.hidden
    stage_layers = math.ceil(model.layers / p)
    calls = TP_CALLS_RECOMPUTE if layout.recompute else TP_CALLS
    tp = calls * 2 * (t - 1) / t * b * s_local * h * BYTES * stage_layers * m if t > 1 else 0.0
    pp = 2 * layout.interleave * b * s_local * h / t * BYTES * m if p > 1 else 0.0
    kv = 2 * b * s_local * model.kv_hidden / t * BYTES
    cp = 3 * (c - 1) * kv * stage_layers * m if c > 1 else 0.0
    g = layout.grad_group
    shard = model.params / (t * p)
    if g == 1:
        dp = 0.0
    elif layout.zero == 3:
        dp = 3 * shard * (g - 1) / g * BYTES * m
    else:
        dp = 2 * shard * (g - 1) / g * BYTES
    return Volumes(tp=tp, pp=pp, cp=cp, dp=dp)


def gpu_params(model: Model, tp: int, pp: int, ep: int = 1) -> float:
    """Return the weights one GPU holds: its tp x pp share, experts also split ep ways."""
    experts = model.expert_params + (model.layers * model.mlp_params if model.experts > 1 else 0)
    dense = model.params - experts
    return dense / (tp * pp) + experts / (tp * pp * ep)


def _memory(
    model: Model,
    gpu: Gpu,
    tp: int,
    pp: int,
    cp: int,
    dp: int,
    zero: int,
    seq: int,
    micro: int,
    recompute: bool,
    microbatches: int,
    ep: int = 1,
) -> Memory:
    """Return one GPU's memory: ZeRO's 2Ψ + 2Ψ + 12Ψ split by stage, plus the activations."""
    shard = gpu_params(model, tp, pp, ep) if ep > 1 else model.params / (tp * pp)
    g = dp * cp
    weights = BYTES * shard / (g if zero >= 3 else 1)
    gradients = BYTES * shard / (g if zero >= 2 else 1)
    optimizer = OPTIMIZER_BYTES * shard / (g if zero >= 1 else 1)
    tokens = micro * seq / cp
    per_layer = (2 if recompute else ACTIVATION_BYTES_PER_TOKEN_WIDTH) * tokens * model.hidden / tp
    # The first stage of a 1F1B pipeline holds up to p micro-batches in flight.
    in_flight = min(microbatches, pp)
    activations = per_layer * math.ceil(model.layers / pp) * in_flight
    return Memory(weights, gradients, optimizer, activations, gpu.memory_gb * 1e9)


@dataclass(frozen=True, slots=True)
class _Groups:
    tp: Cluster | None
    cp: Link | None
    pp: Link | None
    dp: Cluster | None


def _group(
    size: int,
    stride: int,
    layout: Layout,
    node_bw: float,
    ic: Interconnect,
    intra: Interconnect,
    sharp: bool,
) -> Cluster | None:
    """Return where a group of ``size`` ranks, ``stride`` apart, runs its collectives."""
    if size == 1:
        return None
    gpn = layout.gpus_per_node
    inner = gpu_link(intra)
    nvls = nvls_link(intra)
    if stride * size <= gpn:
        return Cluster(1, size, None, inner, nvls, **hardware_kinds(intra, None))  # type: ignore[arg-type]
    per_node = max(1, gpn // stride)
    nodes = size // per_node
    # Every GPU of a node belongs to one group of this kind; the node's NICs are shared by the
    # gpn / per_node groups that cross it.
    share = Link(node_bw * per_node / gpn, ic.latency_s)
    kinds = hardware_kinds(intra, ic, intra.key)
    if per_node == 1:
        return Cluster(nodes, 1, share, None, None, sharp, **kinds)  # type: ignore[arg-type]
    return Cluster(nodes, per_node, share, inner, nvls, sharp, **kinds)  # type: ignore[arg-type]


def _p2p_link(
    size: int, stride: int, layout: Layout, node_bw: float, ic: Interconnect, intra: Interconnect
) -> Link:
    """Return the link a group's point-to-point sends use: NVLink inside a node, else a NIC."""
    if stride * size <= layout.gpus_per_node:
        return gpu_link(intra)
    # Each GPU sends through its share of the node's NICs.
    return Link(node_bw / layout.gpus_per_node, ic.latency_s)


def _node_bandwidth(layout: Layout, ic: Interconnect, nvlink: str = "nvlink4") -> float:
    one = ic.collective_bytes_per_s
    if ic.shared_medium:
        return one / (2 * layout.nodes)
    return min(one * layout.nics, layout.gpus_per_node * host_link_bytes_per_s(nvlink))


def _price(
    model: Model, gpu: Gpu, layout: Layout, ic: Interconnect, intra: Interconnect, flops: float
) -> PlanResult:
    t, p, c, d = layout.tp, layout.pp, layout.cp, layout.dp
    m, b, v = layout.microbatches, layout.micro_batch, layout.interleave
    h = model.hidden
    s_local = layout.seq // c
    stage_layers = math.ceil(model.layers / p)
    node_bw = _node_bandwidth(layout, ic, gpu.nvlink)
    sharp = layout.sharp and ic.sharp

    # Compute: one micro-batch of the slowest (fullest) stage.
    compute_mb, attention_rate = compute_seconds(model, gpu, layout)

    # Tensor parallel: all-reduces of the activations, on the critical path.
    tp_mb = 0.0
    tp_cluster = _group(t, 1, layout, node_bw, ic, intra, sharp)
    if tp_cluster is not None:
        calls = TP_CALLS_RECOMPUTE if layout.recompute else TP_CALLS
        one = collective("allreduce", BYTES * b * s_local * h, tp_cluster).seconds
        tp_mb = calls * stage_layers * one
    tp_exposed_mb = tp_mb
    if layout.tp_overlap:
        # Megatron-Core's TP communication overlap: the collectives run under the GEMMs they
        # feed, so only what the compute cannot cover is exposed.
        tp_exposed_mb = max(0.0, tp_mb - compute_mb)

    # Context parallel: K/V ring exchanges, hidden behind the attention they feed.
    cp_mb = cp_exposed_mb = 0.0
    if c > 1:
        link = _p2p_link(c, t, layout, node_bw, ic, intra)
        kv = 2 * b * s_local * model.kv_hidden / t * BYTES
        per_layer = 3 * (c - 1) * transfer(kv, link).seconds
        attention = 12 * b * s_local * layout.seq * h / t / attention_rate
        cp_mb = per_layer * stage_layers
        cp_exposed_mb = max(0.0, per_layer - attention) * stage_layers

    # Pipeline parallel: activations forward, gradients back, at every boundary.
    p2p_mb = 0.0
    if p > 1:
        link = _p2p_link(p, t * c * d, layout, node_bw, ic, intra)
        message = BYTES * b * s_local * h / t
        p2p_mb = 2 * v * transfer(message, link).seconds

    # Expert parallel: each MoE layer sends every token's hidden state to its top-k experts
    # and back (dispatch and combine), forward and backward: 4 all-to-alls a layer among the ep
    # ranks, on the critical path (the estimator prices each one).
    ep_mb = 0.0
    if layout.ep > 1 and model.experts > 1:
        ep_cluster = _group(layout.ep, t, layout, node_bw, ic, intra, False)
        if ep_cluster is not None:
            tokens = b * s_local / t
            one = collective("alltoall", tokens * model.top_k * h * BYTES, ep_cluster).seconds
            ep_mb = 4 * stage_layers * one * (1.5 if layout.recompute else 1.0)

    slot = compute_mb + tp_exposed_mb + cp_exposed_mb + p2p_mb + ep_mb
    bubble = (p - 1) / v * slot
    pipeline = m * slot + bubble

    # Data parallel: gradients over the dp x cp ranks that share the weights.
    dp_total = dp_exposed = 0.0
    g = layout.grad_group
    dp_cluster = _group(g, t, layout, node_bw, ic, intra, sharp)
    if dp_cluster is not None:
        grads = BYTES * gpu_params(model, t, p, layout.ep)
        if layout.zero == 3:
            gather = collective("allgather", grads, dp_cluster).seconds
            scatter = collective("reducescatter", grads, dp_cluster).seconds
            dp_total = m * (2 * gather + scatter)
            # Prefetching hides the all-gathers and reduce-scatters behind the compute, except
            # the first layer's all-gather (the prologue) and the last layer's reduce-scatter
            # (the epilogue), which nothing runs beside.
            layer = grads / model.layers
            prologue = collective("allgather", layer, dp_cluster).seconds
            epilogue = collective("reducescatter", layer, dp_cluster).seconds
            dp_exposed = prologue + epilogue + max(0.0, dp_total - m * compute_mb)
        else:
            dp_total = collective("allreduce", grads, dp_cluster).seconds
            backward = (0.75 if layout.recompute else 2 / 3) * compute_mb
            # Buckets are all-reduced as the backward pass fills them; the last bucket only
            # starts when the backward pass ends.
            last = collective("allreduce", min(grads, DDP_BUCKET_BYTES), dp_cluster).seconds
            dp_exposed = max(last, dp_total - backward)

    # The optimizer step: Adam reads and writes its state once, bound by HBM bandwidth.
    shard = gpu_params(model, t, p, layout.ep) / (g if layout.zero >= 1 else 1)
    optimizer_s = ADAM_STEP_BYTES * shard / gpu.hbm_bytes_per_s
    dp_exposed += optimizer_s

    step = pipeline + dp_exposed
    compute = m * compute_mb
    exposed = m * (tp_exposed_mb + cp_exposed_mb + p2p_mb + ep_mb) + dp_exposed
    tflops = flops / layout.gpus / step / 1e12
    return PlanResult(
        key=ic.key,
        name=ic.name,
        family=ic.family,
        quiz_choice=ic.key in QUIZ_CHOICES,
        step_seconds=step,
        compute_seconds=compute,
        comm_seconds=CommSeconds(
            tp=m * tp_mb, pp=m * p2p_mb, cp=m * cp_mb, dp=dp_total, ep=m * ep_mb
        ),
        exposed_comm_seconds=exposed,
        tp_exposed_seconds=m * tp_exposed_mb,
        cp_exposed_seconds=m * cp_exposed_mb,
        pp_exposed_seconds=m * p2p_mb,
        bubble_seconds=bubble,
        dp_exposed_seconds=dp_exposed,
        tflops_per_gpu=tflops,
        mfu=tflops / gpu.bf16_tflops,
        tokens_per_second=layout.tokens_per_step / step,
        idle_share=max(0.0, 1 - compute / step),
    )


def compute_seconds(model: Model, gpu: Gpu, layout: Layout) -> tuple[float, float]:
    """Return one micro-batch's compute seconds on the fullest stage, and the attention rate."""
    stage_layers = math.ceil(model.layers / layout.pp)
    cm = layout.compute
    if cm is None:
        imbalance = stage_layers * layout.pp / model.layers
        per_gpu = hardware_flops(model, layout) / layout.gpus * imbalance
        rate = gpu.bf16_flops * layout.efficiency
        return per_gpu / layout.microbatches / rate, rate
    tokens = layout.micro_batch * layout.seq / layout.cp
    # The last stage holds the output layer (the first the embedding lookup, no GEMM).
    output = model.vocab * model.hidden if layout.pp == 1 else 0.0
    if layout.pp > 1:
        last = model.layers - (layout.pp - 1) * stage_layers
        extra = max(
            0, (model.vocab * model.hidden) / model.active_layer_params - (stage_layers - last)
        )
        layers_equiv = stage_layers + extra
    else:
        layers_equiv = float(stage_layers)
    time = microbatch_time(
        cm,
        layers=math.ceil(layers_equiv) if layout.pp > 1 else stage_layers,
        matmul_params_per_layer=model.active_layer_params,
        output_params=output,
        hidden=model.hidden,
        seq=layout.seq,
        tokens=tokens,
        tp=layout.tp,
        recompute=layout.recompute,
        bf16_flops=gpu.bf16_flops,
        fp8_flops=gpu.fp8_flops,
        hbm_bytes_per_s=gpu.hbm_bytes_per_s,
        fp8=layout.fp8,
        gemm_widths=model.gemm_widths,
    )
    return time.seconds, gpu.bf16_flops * cm.attention_efficiency


def _warnings(model: Model, gpu: Gpu, layout: Layout, memory: Memory) -> tuple[str, ...]:
    found: list[str] = []
    if not memory.fits:
        found.append(
            say.WARN_DOES_NOT_FIT.format(need=memory.total / 1e9, gpu=gpu.name, have=gpu.memory_gb)
        )
    if layout.tp > layout.gpus_per_node:
        found.append(say.WARN_TP_SPANS_NODES.format(tp=layout.tp))
    if layout.nodes == 1:
        found.append(say.WARN_ONE_NODE)
    if model.layers % layout.pp and not layout.uneven:
        most = math.ceil(model.layers / layout.pp)
        found.append(say.WARN_UNEVEN_STAGES.format(pp=layout.pp, layers=model.layers, most=most))
    if layout.pp > 1 and layout.microbatches < layout.pp:
        found.append(say.WARN_BUBBLE.format(microbatches=layout.microbatches, pp=layout.pp))
    return tuple(found)


def plan_assumptions(model: Model, gpu: Gpu, layout: Layout, intra: Interconnect) -> str:
    """Return the line that states what the plan assumes."""
    peak = f"{gpu.bf16_tflops:g} TFLOP/s BF16 peak"
    if layout.compute is None:
        compute = f"compute at {layout.efficiency:.0%} of the {peak} (efficiency= given)"
    else:
        precision = "FP8" if layout.fp8 and gpu.fp8_tflops else "BF16"
        compute = (
            f"{precision} GEMMs by shape, attention in BF16, element-wise work at"
            f" {gpu.hbm_tbps:g} TB/s: {layout.efficiency:.0%} of the {peak}"
        )
    parts = [
        compute,
        f"{intra.key} in each node of {layout.gpus_per_node}, {layout.nics} NICs a node,"
        " NCCL's picks",
        "TP under the GEMMs (tp-overlap)" if layout.tp_overlap else "TP in series (no tp-overlap)",
        "PP sends in series, CP behind attention, DP buckets behind the backward pass but the"
        " last 25 MB (ZeRO-3: all but the first all-gather and the last reduce-scatter), the"
        " Adam step at HBM speed",
        "SHARP where the network has it (asked)" if layout.sharp else "no SHARP (add sharp)",
        "1F1B bubble (p-1)/(m+p-1)"
        + (f" with {layout.interleave} virtual stages" if layout.interleave > 1 else ""),
        "bf16 with fp32 Adam",
        "MFU = 6 x params x tokens plus attention, no recompute, of the BF16 peak",
    ]
    return "Assumes: " + "; ".join(parts) + "."
