"""A drawn computed question as stored text, so a round's question is fixed when it is asked.

A computed question's id ``template#seed`` names a draw, but drawing the seed again gives the
same question only while the template, the ``/bandwidth`` estimator and its catalogue are
unchanged. The engine stores what it asked (``Store.keep_instance``) as the JSON text this
module writes, and reads it back for every later look-up of the id in that workspace
(docs/questions.md, "Computed questions").
"""

from __future__ import annotations

import json
from typing import Any

from bot.engine.model import ChartSpec, Choice, Difficulty, PlanSpec, Question, Reference

# The layout of the stored text; a reader refuses any other.
FORMAT = 1


class InstanceFormatError(ValueError):
    """Stored instance text that this version cannot read."""


def dump(q: Question) -> str:
    """Return a question as compact JSON text: everything a player or a report is shown."""
    data: dict[str, Any] = {
        "format": FORMAT,
        "id": q.id,
        "text": q.text,
        "choices": [[c.key, c.text] for c in q.choices],
        "answer": q.answer,
        "short": q.short,
        "full": q.full,
        "why_not": {k: q.why_not[k] for k in sorted(q.why_not)},
        "tags": list(q.tags),
        "difficulty": q.difficulty.value,
        "references": [[r.title, r.url] for r in q.references],
        "image": q.image,
        "chart": _chart(q.chart) if q.chart is not None else None,
        "source": q.source,
        "line": q.line,
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _chart(chart: ChartSpec) -> dict[str, Any]:
    plan = chart.plan
    return {
        "size": chart.size,
        "op": chart.op,
        "nodes": chart.nodes,
        "gpus": chart.gpus,
        "over": list(chart.over),
        "plan": None
        if plan is None
        else {
            "model": plan.model,
            "gpus": plan.gpus,
            "tp": plan.tp,
            "pp": plan.pp,
            "cp": plan.cp,
            "zero": plan.zero,
            "seq": plan.seq,
            "batch": plan.batch,
            "gpu": plan.gpu,
        },
    }


def load(text: str) -> Question:
    """Return the question stored as ``text`` (InstanceFormatError if it is not one)."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InstanceFormatError("not a stored instance of this format")
        chart = data["chart"]
        plan = chart["plan"] if chart is not None else None
        return Question(
            id=str(data["id"]),
            text=str(data["text"]),
            choices=tuple(Choice(str(k), str(t)) for k, t in data["choices"]),
            answer=str(data["answer"]),
            short=str(data["short"]),
            full=str(data["full"]),
            why_not={str(k): str(v) for k, v in data["why_not"].items()},
            tags=tuple(str(t) for t in data["tags"]),
            difficulty=Difficulty(data["difficulty"]),
            references=tuple(Reference(str(t), str(u)) for t, u in data["references"]),
            image=data["image"],
            chart=None
            if chart is None
            else ChartSpec(
                size=str(chart["size"]),
                op=str(chart["op"]),
                nodes=int(chart["nodes"]),
                gpus=int(chart["gpus"]),
                over=tuple(str(o) for o in chart["over"]),
                plan=None if plan is None else PlanSpec(**plan),
            ),
            source=str(data["source"]),
            line=int(data["line"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, InstanceFormatError):
            raise
        raise InstanceFormatError(f"unreadable stored instance: {exc}") from None
