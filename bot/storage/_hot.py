"""Statements built once with bind parameters, for the paths every post and answer runs.

A statement built at import is compiled once per store (``SqlStore._compiled``) and run past
SQLAlchemy's connection and cursor layers on a raw driver connection (``SqlStore._hot_rows``,
``SqlStore._hot_write``): on PostgreSQL those layers cost several times the CPU of the
statement itself (docs/benchmarks.md, "Daily posts at fleet scale").
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from bot.engine.model import Place


def param(name: str, column: sa.Column[Any]) -> Any:
    """A bind parameter typed as ``column`` (its timestamps and booleans converted alike)."""
    return sa.bindparam(name, type_=column.type)


def in_place(table: sa.Table) -> sa.ColumnElement[bool]:
    """The rows of one channel, its place given by ``place_params``."""
    return sa.and_(
        table.c.platform == sa.bindparam("p_platform"),
        table.c.workspace == sa.bindparam("p_workspace"),
        table.c.channel == sa.bindparam("p_channel"),
    )


def place_params(place: Place) -> dict[str, Any]:
    """The parameters of ``in_place`` for one channel."""
    return {
        "p_platform": place.platform,
        "p_workspace": place.workspace,
        "p_channel": place.channel,
    }
