"""Shared by the window tests: waiting for the real window's run to end. (The window itself comes from the
`open_window` fixture in conftest.py, which also closes and deletes it with its test.) No widgets of its own,
no fixtures."""
from __future__ import annotations


def wait_window_run(qtbot, w, timeout_ms: int = 90_000) -> None:
    """Until the window's run has ended, then one frame: the widgets show what the session holds."""
    qtbot.waitUntil(lambda: not w.decoder.running, timeout=timeout_ms)
    qtbot.wait(50)
    w.redraw()
