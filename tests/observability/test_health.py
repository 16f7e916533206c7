"""/healthz, /readyz and /metrics over real HTTP, on a real store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from bot.config import load_settings
from bot.engine import Place
from bot.observability.drain import Drain
from bot.observability.health import HealthServer, mount, start_health_server, start_pages_server
from bot.observability.metrics import count_answer, count_api_error, timed
from bot.storage import SqlStore, make_engine

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
async def server(store: SqlStore) -> AsyncIterator[tuple[HealthServer, Drain]]:
    drain = Drain()
    srv = await start_health_server(store, host="127.0.0.1", port=0, drain=drain)
    try:
        yield srv, drain
    finally:
        await srv.close()


async def get(port: int, path: str) -> tuple[int, str, str]:
    timeout = aiohttp.ClientTimeout(total=10)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.get(f"http://127.0.0.1:{port}{path}") as response,
    ):
        return response.status, response.headers["Content-Type"], await response.text()


async def test_healthz_and_readyz_are_ok_with_a_reachable_database(server):
    srv, _ = server
    assert srv.port > 0
    status, ctype, body = await get(srv.port, "/healthz")
    assert (status, ctype, body) == (200, "application/json; charset=utf-8", '{"ok": true}')
    status, _, body = await get(srv.port, "/readyz")
    assert (status, body) == (200, '{"ok": true}')


async def test_readyz_is_503_while_draining_and_healthz_stays_up(server):
    srv, drain = server
    drain.begin()
    status, _, body = await get(srv.port, "/readyz")
    assert status == 503 and "draining" in body
    assert (await get(srv.port, "/healthz"))[0] == 200


async def test_readyz_is_503_when_the_database_is_gone():
    # Nothing listens on port 9: the store cannot connect, and readiness says so, quickly.
    store = SqlStore(make_engine("postgresql+asyncpg://quiz:secret@127.0.0.1:9/quizbot"))
    srv = await start_health_server(store, host="127.0.0.1", port=0)
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        status, _, body = await get(srv.port, "/readyz")
        assert status == 503
        assert "database unreachable" in body and "secret" not in body
        assert loop.time() - started < 10
        assert (await get(srv.port, "/healthz"))[0] == 200
    finally:
        await srv.close()
        await store.close()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_metrics_count_rounds_answers_latency_and_api_errors(server, store: SqlStore):
    srv, _ = server
    place = Place("discord", "G-metrics", "C1")
    before = samples((await get(srv.port, "/metrics"))[2])

    rnd = await store.create_round(place, "q1", opened_at=T0, closes_at=T0 + timedelta(minutes=5))
    assert await store.close_round(rnd.id, T0 + timedelta(minutes=5))
    assert not await store.close_round(rnd.id, T0 + timedelta(minutes=6))  # lost: not counted
    count_answer("discord", "accepted")
    count_api_error("discord", "rate_limited")
    with timed("discord", "button"):
        await asyncio.sleep(0.01)

    status, ctype, text = await get(srv.port, "/metrics")
    assert status == 200 and ctype.startswith("text/plain; version=")
    after = samples(text)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert grew("quizbot_rounds_opened_total", platform="discord") == 1
    assert grew("quizbot_rounds_closed_total", platform="discord") == 1
    assert grew("quizbot_answers_total", platform="discord", status="accepted") == 1
    assert grew("quizbot_platform_api_errors_total", platform="discord", kind="rate_limited") == 1
    assert grew("quizbot_handler_seconds_count", platform="discord", kind="button") == 1
    assert (
        grew("quizbot_handler_seconds_bucket", platform="discord", kind="button", le="0.005") == 0
    )
    assert grew("quizbot_handler_seconds_bucket", platform="discord", kind="button", le="+Inf") == 1
    assert ("quizbot_handlers_in_flight", ()) in after
    assert any(name == "process_resident_memory_bytes" for name, _ in after)


async def test_mount_adds_the_probes_beside_existing_routes(store: SqlStore):
    async def events(_request: web.Request) -> web.Response:
        return web.Response(text="events")

    app = web.Application()
    app.router.add_post("/slack/events", events)
    mount(app, store)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        assert (await get(port, "/healthz"))[0] == 200
        assert (await get(port, "/readyz"))[0] == 200
        assert "quizbot_answers" in (await get(port, "/metrics"))[2]
        timeout = aiohttp.ClientTimeout(total=10)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.post(f"http://127.0.0.1:{port}/slack/events") as response,
        ):
            assert await response.text() == "events"
    finally:
        await runner.cleanup()


async def test_readyz_waits_for_the_connection_a_process_needs(store: SqlStore):
    up = False
    srv = await start_health_server(store, host="127.0.0.1", port=0, connected=lambda: up)
    try:
        status, _, body = await get(srv.port, "/readyz")
        assert status == 503 and "not connected" in body
        up = True
        assert (await get(srv.port, "/readyz"))[0] == 200
    finally:
        await srv.close()


class HeldPing:
    """A real store whose ping waits for ``release`` first: a database that stalls."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self.release = asyncio.Event()
        self.finished = asyncio.Event()

    async def ping(self) -> None:
        await self.release.wait()
        await self.store.ping()
        self.finished.set()


async def test_a_slow_ping_is_503_and_is_left_to_finish_not_cancelled(store: SqlStore):
    held = HeldPing(store)
    app = web.Application()
    probes = mount(app, held)
    probes.ping_timeout = 0.05
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        status, _, body = await get(port, "/readyz")
        assert status == 503 and "database unreachable (TimeoutError)" in body
        # The ping given up on still runs to its end, and its connection goes back to the pool.
        held.release.set()
        await asyncio.wait_for(held.finished.wait(), 10)
        await asyncio.sleep(0)
        assert store.engine.pool.checkedout() == 0
        assert (await get(port, "/readyz"))[0] == 200
    finally:
        await runner.cleanup()


class CountingStore:
    """A store whose pings are counted."""

    def __init__(self) -> None:
        self.pings = 0

    async def ping(self) -> None:
        self.pings += 1


async def test_a_flood_of_readyz_is_not_a_flood_of_database_pings():
    store = CountingStore()
    srv = await start_health_server(store, host="127.0.0.1", port=0)
    try:
        statuses = await asyncio.gather(*(get(srv.port, "/readyz") for _ in range(50)))
        assert {s[0] for s in statuses} == {200}
        # The requests that came while the first ping was out waited for it; later ones reuse it.
        assert store.pings == 1
        assert (await get(srv.port, "/readyz"))[0] == 200 and store.pings == 1
    finally:
        await srv.close()


async def test_the_pages_server_serves_liveness_and_its_routes_but_no_probe_or_metrics():
    async def page(_request: web.Request) -> web.Response:
        return web.Response(text="a page")

    srv = await start_pages_server(
        lambda app: app.router.add_get("/dashboard/", page), host="127.0.0.1", port=0
    )
    try:
        assert (await get(srv.port, "/dashboard/"))[0] == 200
        assert (await get(srv.port, "/healthz"))[0] == 200
        assert (await get(srv.port, "/readyz"))[0] == 404
        assert (await get(srv.port, "/metrics"))[0] == 404
    finally:
        await srv.close()


def test_the_operations_port_listens_on_localhost_unless_told(monkeypatch):
    for name in ("QUIZBOT_OPS_PORT", "QUIZBOT_HEALTH_PORT", "QUIZBOT_OPS_HOST", "QUIZBOT_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QUIZBOT_OPS_PORT", "8080")
    monkeypatch.setenv("QUIZBOT_HOST", "0.0.0.0")
    settings = load_settings()
    assert (settings.health_port, settings.ops_host) == (8080, "127.0.0.1")
    monkeypatch.delenv("QUIZBOT_OPS_PORT")
    monkeypatch.setenv("QUIZBOT_HEALTH_PORT", "9090")  # the older name is still read
    assert load_settings().health_port == 9090
