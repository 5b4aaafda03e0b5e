"""app.core.base.aio: which asyncio loop a request's coroutine runs on (the app's qasync host loop when one is installed,
else asyncio.run in the calling thread)."""
from __future__ import annotations


def test_a_host_loop_runs_the_coroutines_handed_to_it_from_another_thread():
    import asyncio
    import threading

    from app.core.base import aio

    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def host():
        asyncio.set_event_loop(loop)
        aio.set_host_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    thread = threading.Thread(target=host, daemon=True)
    thread.start()
    ready.wait(5)
    try:
        async def where():
            await asyncio.sleep(0)
            return threading.get_ident()

        assert aio.run_async(where) == thread.ident  # on the host loop's thread, not this one
    finally:
        aio.set_host_loop(None)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
    assert aio.run_async(where) == threading.get_ident()  # no host: asyncio.run here
