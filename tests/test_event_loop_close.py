"""The app's qasync loop closed for good (app.gui.application.close_event_loop). qasync keeps a Qt timer registered
for every `call_later` until it fires, cancelled or not (`asyncio.wait_for`'s timeout), on a timer object freed
only with the loop, by the garbage collector, on whatever thread it happens to run. Freed on a worker thread, Qt
cannot stop its timers and the next one reaches a deleted object: the segmentation fault seen in CI inside
pytest-qt's event processing, minutes after the window test that ran the loop (seeds 1742475519, 1384788648).

Run in a child process (a segfault would take the test run with it), with the real Qt, qasync and collector."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import asyncio, gc, sys, threading, time
    from PySide6.QtWidgets import QApplication
    from app.gui.application import close_event_loop, install_event_loop

    app = QApplication([])
    for _ in range(3):
        loop = install_event_loop(app)

        async def request():  # a request with a timeout, answered at once: the timeout's timer stays registered
            await asyncio.wait_for(asyncio.sleep(0.05), 1.0)

        loop.run_until_complete(request())
        if sys.argv[1] == "app":
            close_event_loop(loop)
        else:
            loop.close()
        asyncio.set_event_loop(None)
        cycle = [loop]
        cycle.append(cycle)  # as a window's references hold it: only the collector frees it
        del loop, cycle
        gc.disable()
        worker = threading.Thread(target=gc.collect)  # the collector runs on a worker thread, as it may anywhere
        worker.start()
        worker.join()
        gc.enable()
    end = time.time() + 1.5  # the timeouts come due
    while time.time() < end:
        app.processEvents()
        time.sleep(0.01)
    print("alive")
""")


def _run(how: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, how], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1], env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})


def test_a_closed_loops_timers_die_on_the_gui_thread_and_fire_on_nothing():
    done = _run("app")
    assert done.returncode == 0 and "alive" in done.stdout, done.stderr[-2000:]
    assert "Timers cannot be stopped from another thread" not in done.stderr


def test_the_plain_close_leaves_them_to_the_collector_on_any_thread():
    """What close_event_loop is for: without it the same run dies (or at least Qt says it could not stop them)."""
    done = _run("plain")
    assert done.returncode != 0 or "Timers cannot be stopped from another thread" in done.stderr
