"""Prometheus metrics of a running bot: answers, rounds, handler latency, platform and DB errors.

Every process exports its own counters; Prometheus adds them up across replicas. Only
prometheus-client is imported here, so any layer may count without pulling in a web server.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
)
from prometheus_client.core import GaugeMetricFamily

# Our own registry, so tests and embedders see only quizbot's series (plus the process ones).
REGISTRY = CollectorRegistry(auto_describe=True)
for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)

# Slack must be acknowledged within 3 s and Discord answered within 3 s: the buckets resolve
# that range finely and keep a few above it to show how late the late ones were.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)

ANSWERS = Counter(
    "quizbot_answers",
    "Answers the database saw, by platform and outcome (accepted, changed, already, closed).",
    ["platform", "status"],
    registry=REGISTRY,
)
ROUNDS_OPENED = Counter(
    "quizbot_rounds_opened", "Rounds opened, by platform.", ["platform"], registry=REGISTRY
)
ROUNDS_CLOSED = Counter(
    "quizbot_rounds_closed",
    "Rounds closed by this process (each round is closed by exactly one), by platform.",
    ["platform"],
    registry=REGISTRY,
)
HANDLER_SECONDS = Histogram(
    "quizbot_handler_seconds",
    "Time to handle one platform request or interaction, by platform and kind.",
    ["platform", "kind"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
IN_FLIGHT = Gauge(
    "quizbot_handlers_in_flight",
    "Handlers running now (a draining process waits for this to reach zero).",
    registry=REGISTRY,
)
API_ERRORS = Counter(
    "quizbot_platform_api_errors",
    "Failed calls to a platform's API, by platform and kind (rate_limited, server, client, ...).",
    ["platform", "kind"],
    registry=REGISTRY,
)
DB_RETRIES = Counter(
    "quizbot_db_retries",
    "Store operations tried again after a lost database connection, by operation.",
    ["operation"],
    registry=REGISTRY,
)

LOOP_PASSES = Counter(
    "quizbot_loop_passes",
    "Passes finished by the round timers and the daily scheduler, by loop (timers, scheduler);"
    " a loop that stops counting has stalled.",
    ["loop"],
    registry=REGISTRY,
)

TASKS_HELP = "Asyncio tasks alive in the event loop that serves /metrics (a leak shows as growth)."


class TaskCollector:
    """Count the asyncio tasks of the running event loop each time the metrics are read."""

    def describe(self) -> list[Any]:
        """Name the one gauge this collector reports."""
        return [GaugeMetricFamily("quizbot_asyncio_tasks", TASKS_HELP)]

    def collect(self) -> Iterator[Any]:
        """Yield the number of tasks, when read from inside an event loop."""
        try:
            tasks = asyncio.all_tasks()
        except RuntimeError:
            return  # read outside any event loop: there is nothing to count
        yield GaugeMetricFamily("quizbot_asyncio_tasks", TASKS_HELP, value=len(tasks))


REGISTRY.register(TaskCollector())


# Every answer and every handler counts in one of a few labelled series: each is looked up once
# (labels() takes a lock and builds a key on every call, on a path taken for every click).
@functools.cache
def _answers(platform: str, status: str) -> Any:
    return ANSWERS.labels(platform=platform, status=status)


@functools.cache
def handler_seconds(platform: str, kind: str) -> Any:
    """Return the handler histogram's series for one platform and kind of request."""
    return HANDLER_SECONDS.labels(platform=platform, kind=kind)


def count_answer(platform: str, status: str) -> None:
    """Count one answer the store handled."""
    _answers(platform, status).inc()


def count_round_opened(platform: str) -> None:
    """Count one round opened."""
    ROUNDS_OPENED.labels(platform=platform).inc()


def count_round_closed(platform: str) -> None:
    """Count one round this process closed."""
    ROUNDS_CLOSED.labels(platform=platform).inc()


@functools.cache
def _loop_passes(loop: str) -> Any:
    return LOOP_PASSES.labels(loop=loop)


# Called with the loop's name after each pass is counted: empty unless something (a test
# waiting for passes rather than for a time) listens.
LOOP_PASS_LISTENERS: list[Callable[[str], None]] = []


def count_loop_pass(loop: str) -> None:
    """Count one pass of a background loop ("timers" or "scheduler"), failed or not."""
    _loop_passes(loop).inc()
    for listener in LOOP_PASS_LISTENERS:
        listener(loop)


def count_api_error(platform: str, kind: str) -> None:
    """Count one failed platform API call."""
    API_ERRORS.labels(platform=platform, kind=kind).inc()


def count_db_retry(operation: str) -> None:
    """Count one store operation tried again."""
    DB_RETRIES.labels(operation=operation).inc()


def http_error_kind(status: int) -> str:
    """Name the kind of a failed platform HTTP call from its status code."""
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status >= 500:
        return "server"
    return "client"


@contextmanager
def timed(platform: str, kind: str) -> Iterator[None]:
    """Observe the time the block takes in the handler histogram."""
    start = time.perf_counter()
    try:
        yield
    finally:
        handler_seconds(platform, kind).observe(time.perf_counter() - start)
