"""Every sentence the bandwidth package shows a user, in one place.

Each name is a template filled with ``str.format``: its fields are named for what the
caller passes (``{text!r}``, ``{key}``). The package raises and warns with these only;
tests/test_architecture.py fails on a BandwidthError built from a string written elsewhere.
"""

from __future__ import annotations

# Several problems told at once (BandwidthError.of).
PROBLEMS = "{count} problems:\n{lines}"
PROBLEM_LINE = "- {problem}"

# How to ask: shown after a refusal, and after these when a user asks for help.
ESTIMATE_USAGE = """\
{synopsis}
  SIZE  bytes (140GB, 1.5TiB, 800MB), bits (400Gb) or parameters (70B params bf16,
        7B grads fp32, 13B adam = 16 bytes a parameter)
  op    {ops}
  nodes=N nodes ({nodes}; nodes=1 compares the links inside one box), \
gpus=G GPUs per node ({gpus}),
  nics=K NICs per node (one per GPU), step=S compute seconds per training step,
  over=k1,k2 interconnects to compare (over=all for every one), algo= force an algorithm
  (default: the one NCCL picks), proto= force NCCL's protocol (as NCCL_PROTO does),
  launch=single one host thread launches every GPU of a node in turn (nccl-tests -g),
  sharp = let InfiniBand switches reduce (CollNet)
{plan}   a whole training step per interconnect
Examples:
  /bandwidth 140GB
  /bandwidth 70B params bf16 allreduce nodes=4 gpus=8
  /bandwidth 1GB allreduce nodes=1 gpus=8 over=nvlink4,nvlink3,pcie5
  /bandwidth 13B adam allreduce nodes=16 gpus=8 step=0.5
  /bandwidth plan llama3-70b gpus=128 tp=8 pp=2"""
DEFAULT_OP = "{op} (default)"
USAGE_OR_PLAN = "   or: /bandwidth plan MODEL"
PLAN_USAGE = """\
{synopsis}
  MODEL  llama3-8b, llama3-70b, llama3-405b, gpt3-175b, bloom-176b, opt-175b, or a size
         such as 70B with layers=L hidden=H [ffn= heads= kv= vocab=]
  gpus=N GPUs in all; tp/pp/cp/dp the tensor, pipeline, context and data parallel sizes
         (dp = N / (tp x pp x cp) when not given); zero= the ZeRO stage (1)
  seq=S  tokens a sequence (the model's), batch=B sequences a step (about 4M tokens),
  micro=b sequences a micro-batch (1), gpu= a100, h100 (default), h200, b200, gb200,
  gpn=G GPUs a node (8; 72 on gb200), nics=K NICs a node (one per GPU)
  fp8    matrix multiplications in FP8 (attention and the rest stay BF16)
  sharp  InfiniBand switches reduce DP and TP traffic in the network (off unless asked)
  uneven accept pipeline stages of unequal layers when pp does not divide them
  search the fastest layouts (tp, pp, interleave, cp, dp, zero, micro) that fit, per fabric
  tp-overlap  TP collectives run under the GEMMs (Megatron-Core's overlap), not in series
  interleave=V virtual pipeline stages a GPU (1); efficiency=E one share of the BF16 peak
  experts=E top-k=K ep=N  a mixture of experts (mixtral-8x7b, mixtral-8x22b have theirs):
         E experts a layer, K a token, spread over N expert-parallel ranks
Examples:
  /bandwidth plan llama3-70b gpus=128 tp=8 pp=2
  /bandwidth plan llama3-405b gpus=1024 tp=8 pp=16 over=ib-ndr,roce-400,100gbe,1gbe
  /bandwidth plan 13B gpus=64 layers=40 hidden=5120 heads=40 zero=3
  /bandwidth plan llama3-70b gpus=256 search over=ib-ndr,roce-400"""
HOW_TO_ESTIMATE = "How to ask for an estimate:"
HOW_TO_PLAN = "How to plan a training step:"
TOO_LONG = "That request is too long to read."

# An estimate request (_request.py).
UNKNOWN_OP = "Unknown operation {text!r}.{hint} Choose one of {ops}."
DID_YOU_MEAN = " Did you mean {near}?"
BYTES_NOT_WHOLE = "The size must be a whole number of bytes."
BYTES_OUT_OF_RANGE = "The size must be between 1 byte and 1 EB (10^18 bytes)."
NOT_AN_OVER_KEY = "{key!r} is not an interconnect key; try over=ib-hdr,1gbe."
NOT_AN_INTRA_KEY = "{key!r} is not an interconnect key; try intra=nvlink4."
COLLECTIVE_NEEDS_TWO = "A collective needs at least two GPUs; try {op} nodes=2, or nodes=1 gpus=8."
LAUNCH_ON_TRANSFER = "launch={launch} does not apply: a transfer is one copy, not a collective."
GIVE_A_SIZE = "Give a size first."
GIVE_A_SIZE_SUCH_AS = "Give a size first, such as 140GB."
UNKNOWN_OPTION = "Unknown option {key!r}. Options: {known}."
OPTION_TWICE = "{key}= is given twice."
SWITCH_TWICE = "{key} is given twice."
ONE_OP = "Give one operation, not {op} and {word}."
PROTO_NOT_PRICED = "proto={proto} does not apply: {op} is not priced by protocol."
PROTO_SIMPLE_ONLY = "proto={proto} does not apply: algo={algo} runs only Simple."
ALGO_RUNS_ONLY_AS = "{op} runs only as {allowed}"
ALGO_ONE_WAY = "{op} has one way"
ALGO_DOES_NOT_APPLY = "algo={algo} does not apply: {what}."
ALGO_BETWEEN_NODES = "algo={algo} runs between nodes; with nodes=1 use algo=ring or algo=nvls."
ALGO_HIER_NEEDS = "algo=hier needs several nodes of several GPUs, like nodes=4 gpus=8."
ALGO_NVLS_NEEDS = "algo=nvls reduces inside an NVSwitch box: give gpus=8 or so."

# Option values (_options.py).
CHOICE_ONE_OF = "{key}= must be one of {choices}; got {word!r}."
SWITCH_ON_OFF = "{key} must be on or off."
SWITCH_ON_OFF_GOT = "{key}= must be on or off; got {text!r}."
COUNT_WHOLE_GOT = "{key}= must be a whole number, such as {key}=4; got {text!r}."
NUMBER_GOT = "{key}= must be a number such as 0.5; got {text!r}."
STEP_GOT = "step= must be a time such as step=0.5 or step=350ms; got {text!r}."
OVER_NEEDS_KEYS = "over= needs interconnect keys, such as over=ib-hdr,1gbe."
COUNT_WHOLE = "{key}= must be a whole number, such as {such}."
COUNT_ONE_OF = "{key}= must be {allowed}; got {value!r}."
COUNT_LAST_OF = "{allowed} or {high}"
COUNT_BETWEEN = "{key}= must be between {low:,} and {high:,}; got {value:,}."
SECONDS_NUMBER = "{key}= must be a number of seconds, such as {key}=0.5."
SECONDS_BETWEEN = "{key}= must be more than {low:,g} and at most {high:,.0f} seconds."
NUMBER = "{key}= must be a number such as 0.5."
NUMBER_BETWEEN = "{key}= must be between {low:g} and {high:g}."

# Sizes (_sizes.py); {examples} is the sizes to try.
SIZE_EXAMPLES = "140GB, 400Gb or 70B params bf16"
SIZE_NOT_TEXT = "A size must be text such as {examples}."
SIZE_TOO_LONG = "That size is too long to read. Try {examples}."
SIZE_MISSING = "Give a size, for example {examples}."
SIZE_NOT_FINITE = "A size must be a finite number, such as {examples}."
SIZE_NOT_POSITIVE = "A size must be more than zero, such as {examples}."
SIZE_UNDER_A_BYTE = "A size must be at least one byte, such as {examples}."
SIZE_IS_A_RATE = "{token!r} is a rate, not a size. Give an amount of data, such as {examples}."
ONE_DTYPE = "Give one data type, not {dtype} and {word}."
ONE_ROLE = "Give one role, not {role} and {found}."
PARAMS_UNREADABLE = (
    "Cannot read {word!r} in {text!r}. After a parameter count write a data"
    " type (fp32, bf16, fp16, fp8, int4) and a role"
    " (params, grads or adam), for example 70B params bf16, 7B grads fp32, 13B adam."
)
ADAM_HAS_DTYPE = (
    "adam already means 16 bytes a parameter (bf16 weights and gradients, an fp32"
    " master copy and two fp32 moments); leave out the data type, e.g. 13B adam."
)
SIZE_UNREADABLE = "Cannot read {shown!r} as a size. Try {examples}."
SIZE_TOO_BIG = "That is more than an exabyte (10^18 bytes); nothing trains on that. Try {examples}."

# A training plan's model and layout (_plan.py).
TOP_K_OVER_EXPERTS = "top-k={top_k} is more than the {experts} experts."
CUSTOM_NEEDS_SHAPE = "A model of your own needs both layers= and hidden=."
HIDDEN_NOT_HEADS = "hidden={hidden} is not a multiple of heads={heads}."
HEADS_NOT_KV = "heads={heads} is not a multiple of kv={kv}."
SHAPE_NOT_SIZE = (
    "layers={layers} hidden={hidden} make {billions:.3g}B parameters,"
    " not {model}; check the shape (ffn= defaults to 4 x hidden)."
)
GPN_OVER_DOMAIN = (
    "gpn={gpn}: a {gpu} node (its NVLink domain) holds at most"
    " {domain} GPUs; more GPUs a node would need a bigger NVLink product."
)
NICS_OVER_MAX = (
    "nics={nics} is more NICs than any GPU server carries (at most {most}, as on AWS P5)."
)
GPUS_NOT_NODES = "gpus={gpus} is not a whole number of nodes of {gpn} GPUs."
SPLIT_OVER_GPUS = "{name}={value} is more than the {gpus} GPUs."
TP_NOT_HEADS = "tp={tp} must divide the {heads} heads and {kv} key/value heads."
PP_OVER_LAYERS = "pp={pp} is more than the model's {layers} layers."
INTERLEAVE_OVER_LAYERS = "pp x interleave is more than the model's layers."
INTERLEAVE_NEEDS_PP = "interleave= splits pipeline stages; it needs pp=2 or more."
SEQ_NOT_CP = "seq={seq} does not split into cp={cp} equal parts."
GPUS_NOT_SPLIT = "gpus={gpus} does not split into tp={tp} x pp={pp} x cp={cp} x a whole dp."
EP_NOT_EXPERTS = "ep={ep} must divide the {experts} experts{dense}."
EP_DENSE = " (a dense model has 1: give experts=E)"
EP_NOT_DP = "ep={ep} spreads experts over data-parallel ranks: it must divide dp x cp = {dp_cp}."
DP_NOT_GPUS = (
    "tp x pp x cp x dp must be gpus: {tp} x {pp} x {cp} x {dp} is"
    " {product}, not {gpus} (leave dp= out to fill it in)."
)
BATCH_NOT_MICRO = "batch={batch} must be a multiple of dp x micro = {dp} x {micro} = {per_step}."
OVER_INSIDE_NODE = (
    "over= compares networks between nodes; {inside} joins GPUs inside one."
    " The {gpu}'s own {nvlink} is used inside every node."
)

# A plan's warnings, shown under its table.
WARNING_LINE = "Warning: {warning}"
WARN_DOES_NOT_FIT = (
    "Does not fit: each GPU needs {need:,.0f} GB, the {gpu} has"
    " {have:g} GB; raise tp or pp, use zero=3, or add recompute."
)
WARN_TP_SPANS_NODES = "tp={tp} spans nodes: its all-reduces cross the network on every layer."
WARN_ONE_NODE = (
    "All GPUs are in one node: no network is used, so every interconnect gives this"
    " same step (shown once)."
)
WARN_UNEVEN_STAGES = (
    "pp={pp} does not divide the {layers} layers: stages of {most} and"
    " fewer layers, the fullest one setting the pace (say uneven to state the split)."
)
WARN_BUBBLE = (
    "Only {microbatches} micro-batches for {pp} stages: most of the step"
    " is pipeline bubble; raise batch= or lower micro=."
)

# A plan request (_plan_request.py).
NAME_A_MODEL = "Name a model, such as llama3-70b, or a size such as 70B."
MODEL_NAME_CHARACTERS = (
    "A model name is letters, digits, dots, dashes and underscores, such as llama3-70b or 70B."
)
NOT_A_GPU_KEY = "{key!r} is not a GPU key; try gpu=h100."
NOT_A_MODEL = "{text!r} is neither a model preset nor a size such as 70B."
GIVE_A_MODEL_AND_GPUS = "Give a model and gpus=, such as plan llama3-70b gpus=128."
NAME_A_MODEL_FIRST = "Name a model first, such as plan llama3-70b gpus=128."
SAY_HOW_MANY_GPUS = "Say how many GPUs in all, such as gpus=128."

# The hardware of an estimate (_estimate.py).
NICS_OVER_MAX_NODE = (
    "nics={nics} is more NICs than any GPU server carries (at most"
    " {most}, as on AWS P5); give the NICs of one node."
)
INTRA_IS_A_NETWORK = (
    "intra={key} is a network between nodes; GPUs inside a node talk over NVLink"
    " or PCIe (intra=nvlink4, nvlink5, pcie5)."
)
OVER_INSIDE_DOMAIN = (
    "{keys} joins GPUs inside one NVLink or PCIe domain, not nodes."
    " For a rack-scale NVLink domain (GB200 NVL72) ask nodes=1 gpus=72"
    " over=nvlink5; between nodes compare networks (over=ib-ndr,roce-400)."
)
GPUS_OVER_DOMAIN = (
    "gpus={gpus} in one {name} domain: the largest product joins {most} ({source}); use more nodes."
)
DOMAIN_SOURCE = "catalogue"
NETWORK_INSIDE_BOX = (
    "With nodes=1 the GPUs of one box talk over NVLink or PCIe, not {keys}."
    " Compare links inside the box with over=nvlink4,nvlink3,pcie5, or networks with"
    " nodes=2 or more."
)
NVLS_NEEDS_SWITCH = (
    "algo=nvls needs an NVSwitch box that reduces in the switch (nvlink4 or nvlink5);"
    " {where} has none."
)

# The interconnect catalogue and a user's file of its own (_catalogue.py).
UNKNOWN_INTERCONNECT = "Unknown interconnect {key!r}.{hint} Known: {known}."
CANNOT_READ_FILE = "Cannot read the interconnect file {path}: {reason}."
YAML_LINE = " line {line}"
YAML_PROBLEM = "{where}:{line}: {problem}."
NOT_YAML = "not valid YAML"
CATALOGUE_NOT_MAPPING = (
    "{where}: expected a mapping with an 'interconnects:' list (see docs/bandwidth.md)."
)
CATALOGUE_PROBLEMS = "Problems in the interconnect catalogue:\n  {shown}{more}"
CATALOGUE_MORE = "\n  ... and {more} more"
CATALOGUE_ENTRY_AT = "{where}: interconnects[{index}]"
CATALOGUE_KEY_AT = "{at} ({key})"
CATALOGUE_USER_SOURCE = "user file {where}"
UNKNOWN_TOP_KEY = "{where}: unknown top-level key {top!r}"
INTERCONNECTS_NOT_LIST = "{where}: 'interconnects' must be a list of entries"
QUIZ_CHOICE_MISSING = "{where}: the quiz choice {key!r} is missing"
ENTRY_NOT_MAPPING = "{at}: each entry must be a mapping with a key and its fields"
ENTRY_BAD_KEY = (
    "{at}: 'key' must be lower-case letters, digits and dashes (at most 32), got {key!r}"
)
ENTRY_KEY_ALL = "{at}: 'all' is reserved (over=all compares every interconnect)"
ENTRY_KEY_TWICE = "{at}: the key appears twice in this file"
FIELD_DID_YOU_MEAN = " (did you mean {near!r}?)"
UNKNOWN_FIELD = "{at}: unknown field {name!r}{hint}"
NEW_ENTRY_NEEDS = "{at}: a new interconnect needs {missing}"
FIELD_ABOVE = "above"
FIELD_AT_LEAST = "at least"
FIELD_NUMBER = "{at}: {name} must be a number {side} {low:g} and at most {high:g}, got {value!r}"
FIELD_WHOLE = "{at}: {name} must be a whole number from 1 to 100,000, got {value!r}"
FIELD_BOOL = "{at}: {name} must be true or false, got {value!r}"
FIELD_TRANSPORT = "{at}: transport must be one of {choices}, got {value!r}"
FIELD_PURPOSE = "{at}: purpose must be one of {choices}, got {value!r}"
FIELD_FAMILY = "{at}: family must be a short lower-case word, got {value!r}"
FIELD_TEXT = "{at}: {name} must be text of 1 to {limit} characters, got {value!r}"
FIELD_SOURCES = "{at}: sources must be text, or a mapping of {fields} to text"
DEFAULT_NOT_LIST = "{where}: default_comparison must be a list of interconnect keys"
DEFAULT_UNKNOWN = "{where}: default_comparison names unknown interconnect {key!r}"

# GPUs and model presets (_hardware.py).
UNKNOWN_NAMED = "Unknown {what} {key!r}.{hint} Known: {known}."
WHAT_GPU = "GPU"
WHAT_MODEL = "model"
PLANNER_DATA_BROKEN = "The bundled planner data is broken: {error!r}."
EFFICIENCY_OUT_OF_RANGE = "The bundled compute_efficiency must be above 0 and at most 1."

# Searching layouts and sweeping sizes (_search.py, _sweep.py).
NO_LAYOUT_FITS = "No layout fits in memory; add GPUs or use a GPU with more memory."
NO_LAYOUT_SPLITS = "No layout of {model} splits {gpus:,} GPUs: try a multiple of 8 GPUs."
SWEEP_NEEDS_COLLECTIVE = (
    "A sweep is for collectives, like nccl-tests: give --op allreduce (or allgather,"
    " reducescatter, broadcast, alltoall)."
)
