"""A real TCP relay in front of a server that holds each HTTP request it forwards for a set time: a slow network
link, so a test about requests overlapping does not hang on how busy the machine happens to be."""
from __future__ import annotations

import asyncio
import threading


class SlowLink:
    """127.0.0.1:<port> relays to 127.0.0.1:<target>; a client chunk that starts a POST waits `delay` seconds
    before it goes on. Everything else (GETs, the server's streamed answers) passes at once."""

    def __init__(self, target_port: int, delay: float) -> None:
        self.target_port, self.delay = target_port, delay
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="slow-link", daemon=True)
        self._thread.start()
        self._started.wait(10)
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._relay, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._started.set()
        self._loop.run_forever()

    async def _relay(self, reader, writer) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return

        async def pipe(src, dst, slow: bool) -> None:
            try:
                while chunk := await src.read(65536):
                    if slow and chunk.startswith(b"POST "):
                        await asyncio.sleep(self.delay)
                    dst.write(chunk)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer, True), pipe(up_reader, writer, False))

    def close(self) -> None:
        def stop() -> None:
            self._server.close()
            self._loop.stop()

        self._loop.call_soon_threadsafe(stop)
        self._thread.join(10)
