"""A TCP proxy between the store and PostgreSQL that can cut a connection at a chosen moment."""

from __future__ import annotations

import asyncio
import contextlib


class CuttingProxy:
    """Forward 127.0.0.1:port to a database; cut the next connection that sends a marker.

    ``cut_before(marker)``: the message carrying ``marker`` never reaches the server (the
    transaction did not commit). ``cut_after(marker)``: it reaches the server, whose reply is
    thrown away before the connection is cut (the commit happened; the client never hears).
    """

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, port)
        self.server: asyncio.Server | None = None
        self.port = 0
        self.marker: bytes | None = None
        self.before = True
        self.cuts = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await task
        if self.server is not None:
            await asyncio.wait_for(self.server.wait_closed(), 10)

    def cut_before(self, marker: bytes) -> None:
        self.marker, self.before = marker, True

    def cut_after(self, marker: bytes) -> None:
        self.marker, self.before = marker, False

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        cut = asyncio.Event()
        swallow = asyncio.Event()

        async def client_to_server() -> None:
            while data := await reader.read(65536):
                if self.marker is not None and self.marker in data:
                    self.marker = None
                    self.cuts += 1
                    if self.before:
                        cut.set()
                        return
                    swallow.set()
                up_writer.write(data)
                await up_writer.drain()

        async def server_to_client() -> None:
            while data := await up_reader.read(65536):
                if swallow.is_set():
                    cut.set()
                    return
                writer.write(data)
                await writer.drain()

        pumps = [asyncio.create_task(client_to_server()), asyncio.create_task(server_to_client())]
        waiter = asyncio.create_task(cut.wait())
        try:
            await asyncio.wait([*pumps, waiter], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in [*pumps, waiter]:
                t.cancel()
            for w in (writer, up_writer):
                w.transport.abort()
            self._tasks.discard(task)
