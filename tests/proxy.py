"""``TcpProxy``: a TCP proxy on a free loopback port, in a thread (the scale tests' backend URL; a sibling origin)."""

from __future__ import annotations

import asyncio
import threading

from tests.unit.agents import free_port

__all__ = ["TcpProxy"]


class TcpProxy:
    """A TCP proxy on a free loopback port to ``host:target``, in a thread (a second URL for one server)."""

    def __init__(self, target: int, host: str = "127.0.0.1") -> None:
        self.target, self.host, self.port = target, host, free_port()
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"proxy-{self.port}")

    def __enter__(self) -> TcpProxy:
        self._thread.start()
        assert self._started.wait(10), "the proxy did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port))
        self._started.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            tasks = asyncio.all_tasks(self._loop)
            for task in tasks:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()
