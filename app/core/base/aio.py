"""Where the asyncio side of a run executes: the host loop when one is installed and running (the app's Qt-driven
asyncio loop, on the GUI thread), else a fresh `asyncio.run` on the calling thread (`convert`, benches, tests).

Network requests to OCR servers run on that loop; local model work stays in the one worker lane. A caller on the
worker lane hands its coroutine to the host loop and waits for the result there, so the lane stays the only owner
of the model and of the open document while requests run concurrently on the loop.

What must never live here: Qt (the app installs its loop with `set_host_loop`), engines, the pipeline.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
_host: asyncio.AbstractEventLoop | None = None
_host_thread: int | None = None


def set_host_loop(loop: asyncio.AbstractEventLoop | None) -> None:
    """Install (or, with None, remove) the loop that runs every run's asyncio side; call it on the loop's thread."""
    global _host, _host_thread
    _host, _host_thread = loop, (threading.get_ident() if loop is not None else None)


def host_loop() -> asyncio.AbstractEventLoop | None:
    return _host


class LoopGone(RuntimeError):
    """The host loop stopped while a run waited on it (the app is closing)."""


def run_async(make: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine `make()` to its end and return its result (or raise its exception)."""
    host = _host
    if host is not None and host.is_running() and threading.get_ident() != _host_thread:
        return wait_future(asyncio.run_coroutine_threadsafe(make(), host), host)
    return asyncio.run(make())


def wait_future(future: concurrent.futures.Future, loop: asyncio.AbstractEventLoop) -> T:
    """The result of a coroutine handed to `loop` from this thread; LoopGone when the loop stops first."""
    while True:
        try:
            return future.result(timeout=0.1)
        except concurrent.futures.TimeoutError:
            if not loop.is_running() or loop.is_closed():
                future.cancel()
                raise LoopGone("the event loop stopped while requests were in flight") from None


@contextmanager
def background_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A loop that runs coroutines while the calling thread carries on: the host loop when it runs on another
    thread (the app's), else a fresh loop on a thread of its own for the block (`convert`, benches, tests)."""
    host = _host
    if host is not None and host.is_running() and threading.get_ident() != _host_thread:
        yield host
        return
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="scriptorium-requests", daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        if not thread.is_alive():
            loop.close()
