"""Hypothesis strategies for what people (or attackers) type after ``/quiz`` and ``/bandwidth``.

Random text alone rarely gets past the first word, so these also join words the parsers know
(verbs, options, numbers, times, zones, mentions, sizes, interconnect keys) with junk: the
parsers' deeper branches see near-misses as well as noise.
"""

from __future__ import annotations

from hypothesis import strategies as st

NOISE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12
) | st.sampled_from(
    ["`", "``", "```", "<@", ">", "|", "*", "_", "~", "&amp;", "\u200b", "\u202e", "%", "\\", "\n"]
)
NUMBERS = st.integers(min_value=-(10**20), max_value=10**20).map(str) | st.sampled_from(
    ["0", "1", "10080", "10081", "1e9", "NaN", "inf", "-0", "0x10", "١٢", "½", "007"]
)

QUIZ_WORDS = st.sampled_from(
    [
        "next", "NEXT", "close", "leaderboard", "top", "stats", "settings", "schedule", "review",
        "help", "?", "week", "month", "all", "changes", "on", "off", "minutes", "daily",
        "weekdays", "digest", "UTC", "Europe/Paris", "America/New_York", "Mars/Olympus",
        "../../etc/passwd", "09:30", "23:59", "24:00", "9:5", "12:60", "<@U123>", "<@W9|ada>",
        "<@u1>", "<!channel>", "networking", "storage", "ÄÖÜ", "drop table rounds;",
    ]
)  # fmt: skip
BANDWIDTH_WORDS = st.sampled_from(
    [
        "140GB", "1.5", "TiB", "400Gb", "70B", "params", "bf16", "fp8", "grads", "adam",
        "transfer", "allreduce", "allgather", "alltoall", "nodes=", "gpus=", "nics=", "step=",
        "over=", "over=ib-ndr,1gbe", "over=,", "nodes=0", "nodes=-1", "gpus=1e9", "step=0",
        "ib-hdr", "wifi6", "nvlink5", "=", "==", "1e400GB", "0B", "-5GB",
    ]
)  # fmt: skip


def _joined(words: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(words | NUMBERS | NOISE, min_size=1, max_size=8).map(" ".join)


quiz_text = st.text(max_size=80) | _joined(QUIZ_WORDS)
bandwidth_text = st.text(max_size=80) | _joined(BANDWIDTH_WORDS)
