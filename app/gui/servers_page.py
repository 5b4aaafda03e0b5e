"""Preferences → Servers: the remote engine's settings (server URLs, the served model's name, the model family's
prompts, requests in flight per server, the NAME of the environment variable holding the API key — never the key)
are rows of the preferences form generated from its spec (app.core.engines, app.gui.settings: group "Servers");
this module adds their "Test connection" button.

The test runs off the GUI thread (a network check can take seconds) and reports back through a timer.
What must never live here: HTTP code (app.core.engines.remote), other preferences.
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

POLL_MS = 100


def server_urls(text: str) -> list[str]:
    return [u for u in text.replace(",", " ").split() if u]


class ConnectionTest(QWidget):
    """A "Test connection" button and its verdict, reading the (not yet saved) values of the dialog's editors."""

    def __init__(self, dialog) -> None:
        super().__init__(dialog)
        self.dialog = dialog
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.button = QPushButton("Test connection")
        self.result = QLabel()
        self.result.setWordWrap(True)
        layout.addWidget(self.button)
        layout.addWidget(self.result, 1)
        self.button.clicked.connect(self.start)
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._future: Future | None = None
        self._timer = QTimer(self, interval=POLL_MS)
        self._timer.timeout.connect(self._poll)
        self.ok: bool | None = None

    def start(self) -> None:
        from app.core.engines.remote import check_connection

        values = self.dialog.values()
        urls = server_urls(values["remote_servers"])
        if not urls:
            self._show(False, "Give at least one server URL, e.g. http://gpu1:30000/v1")
            return
        self.button.setEnabled(False)
        self.result.setText("Testing…")
        self._future = self._pool.submit(check_connection, urls, values["remote_model"],
                                         values["remote_api_key_env"])
        self._timer.start()

    def _poll(self) -> None:
        if self._future is None or not self._future.done():
            return
        self._timer.stop()
        ok, message = self._future.result()
        self._future = None
        self.button.setEnabled(True)
        self._show(ok, message)

    def _show(self, ok: bool, message: str) -> None:
        self.ok = ok
        self.result.setText(("✓ " if ok else "✗ ") + message)


def add_connection_test(dialog, form) -> ConnectionTest:
    """Put the test under the remote engine's rows of the preferences form."""
    from app.core.engines import ENGINES
    from app.gui.settings import OPTIONS

    test = ConnectionTest(dialog)
    group = ENGINES["remote"].options_group
    ours = {id(w) for key, w in dialog.editors.items() if OPTIONS[key].group == group}
    rows = [i for i in range(form.rowCount()) if form.itemAt(i, form.ItemRole.FieldRole) is not None
            and id(form.itemAt(i, form.ItemRole.FieldRole).widget()) in ours]
    form.insertRow(rows[-1] + 1 if rows else form.rowCount(), "", test)
    dialog.connection_test = test
    return test
