"""The tables docs/bandwidth.md shows, generated from the data files and the options table so
they cannot drift."""

from __future__ import annotations

import re

from bot.bandwidth._catalogue import Catalogue
from bot.bandwidth._hardware import Hardware
from bot.bandwidth._options import ESTIMATE, PLAN, flag_synopsis, options_markdown, synopsis

# A generated block sits between these two lines in the docs: <!-- generated: NAME --> ...
# <!-- end: NAME -->. ``quizbot bandwidth --write-docs FILE`` rewrites every block.
_BLOCK_RE = re.compile(
    r"(<!-- generated: (?P<name>[a-z]+) -->\n)(?P<body>.*?)(<!-- end: (?P=name) -->)", re.DOTALL
)


def catalogue_markdown(catalogue: Catalogue) -> str:
    """Return the interconnect catalogue as a Markdown table."""
    lines = [
        "| key | name | Gb/s per direction | efficiency | collective efficiency | transport"
        " | payload GB/s | latency µs | NVLS | SHARP | purpose |",
        "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- | --- | --- |",
    ]
    for ic in catalogue:
        coll = "" if ic.collective_efficiency is None else f"{ic.collective_efficiency:g}"
        nvls = "" if ic.nvls_efficiency is None else f"{ic.nvls_efficiency:g}"
        lines.append(
            f"| `{ic.key}` | {ic.name} | {ic.rate_gbps:g} | {ic.efficiency:g} | {coll or 'same'}"
            f" | {ic.transport} | {ic.payload_bytes_per_s / 1e9:.3g} | {ic.latency_us:g}"
            f" | {nvls} | {'yes' if ic.sharp else ''} | {ic.purpose} |"
        )
    return "\n".join(lines) + "\n"


def gpu_markdown(hardware: Hardware) -> str:
    """Return the GPU catalogue as a Markdown table."""
    lines = [
        "| key | name | dense BF16 TFLOP/s | dense FP8 TFLOP/s | memory GB | NVLink | GPUs per"
        " NVLink domain |",
        "| --- | --- | ---: | ---: | ---: | --- | ---: |",
    ]
    for g in hardware.gpus:
        fp8 = "none" if g.fp8_tflops is None else f"{g.fp8_tflops:g}"
        lines.append(
            f"| `{g.key}` | {g.name} | {g.bf16_tflops:g} | {fp8} | {g.memory_gb:g} |"
            f" `{g.nvlink}` | {g.nvlink_domain} |"
        )
    return "\n".join(lines) + "\n"


def model_markdown(hardware: Hardware) -> str:
    """Return the model presets as a Markdown table, with the parameters their shapes give."""
    lines = [
        "| key | name | params | layers | hidden | ffn | heads | kv heads | vocab | seq |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for m in hardware.models:
        lines.append(
            f"| `{m.key}` | {m.name} | {m.params / 1e9:.1f}B | {m.layers} | {m.hidden:,} |"
            f" {m.ffn:,} | {m.heads} | {m.kv_heads} | {m.vocab:,} | {m.seq:,} |"
        )
    return "\n".join(lines) + "\n"


def generated_blocks(catalogue: Catalogue, hardware: Hardware) -> dict[str, str]:
    """Return every generated block's text by name."""
    return {
        "catalogue": catalogue_markdown(catalogue),
        "gpus": gpu_markdown(hardware),
        "models": model_markdown(hardware),
        "options": options_markdown(ESTIMATE),
        "planoptions": options_markdown(PLAN),
        "usage": usage_markdown(),
    }


def usage_markdown() -> str:
    """Return both forms' usage lines, chat's and the terminal's, as a text block."""
    chat = "\n".join(
        (synopsis("/bandwidth SIZE", ESTIMATE), synopsis("/bandwidth plan MODEL", PLAN))
    )
    return f"```text\n{chat}\n\nusage: {flag_synopsis()}\n```\n"


def update_docs(text: str, catalogue: Catalogue, hardware: Hardware) -> str:
    """Return ``text`` with every generated block replaced by freshly generated tables."""
    blocks = generated_blocks(catalogue, hardware)

    def fill(match: re.Match[str]) -> str:
        body = blocks.get(match["name"], match["body"])
        return f"{match.group(1)}{body}{match.group(4)}"

    return _BLOCK_RE.sub(fill, text)


def docs_blocks(text: str) -> dict[str, str]:
    """Return the generated blocks found in ``text`` by name, as they stand."""
    return {m["name"]: m["body"] for m in _BLOCK_RE.finditer(text)}
