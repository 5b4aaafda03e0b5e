"""Progress that tells the truth: the named phase (loading model, layout, decoding region 7/18, assembling), a bar,
tokens per second and a Cancel button, at the status bar's left. It appears only when a run lasts longer than
~0.5 s, so a quick page does not flash a bar at the person (Anki's rule). A status message that arrives while a run
is on ("Page 2 read in 3.1 s: …") is shown beside the phase (`show_note`) rather than in its place."""
from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.core.record import events as ev
from app.gui.theme import icon

PHASE_TITLES = {
    "loading_model": "Loading model",
    "rendering": "Rendering pages",
    "layout": "Finding regions",
    "decoding": "Decoding",
    "assembling": "Assembling",
}
SHOW_AFTER_MS = 500
NOTE_MS = 8000  # how long a status message stays beside the phase


class ProgressPanel(QWidget):
    cancel_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.phase = QLabel()
        self.phase.setObjectName("phase")
        self.bar = QProgressBar()
        self.bar.setFixedWidth(160)
        self.bar.setTextVisible(False)
        self.rate = QLabel()
        self.rate.setObjectName("phase")
        self.cancel_button = QPushButton(icon("cancel"), "Cancel")
        self.cancel_button.setToolTip("Stop after the current forward pass; finished regions are kept (Esc)")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.note = QLabel()
        self.note.setObjectName("run_note")
        for w in (self.phase, self.bar, self.rate, self.cancel_button, self.note):
            layout.addWidget(w)
        self._note_timer = QTimer(self, singleShot=True, interval=NOTE_MS)
        self._note_timer.timeout.connect(self.note.clear)
        self._show_timer = QTimer(self, singleShot=True, interval=SHOW_AFTER_MS)
        self._show_timer.timeout.connect(self._reveal)
        self._tokens = 0
        self._t0 = 0.0
        self.active = False
        self.phase_name = ""
        self.setVisible(False)

    def start(self, cancellable: bool = True, title: str = "Starting…") -> None:
        """A run began; a replay is not cancellable (the playback bar pauses it), so it shows no Cancel."""
        self.active = True
        self._tokens = 0
        self._t0 = time.perf_counter()
        self.phase.setText(title)
        self.bar.setRange(0, 0)
        self.rate.clear()
        self.cancel_button.setEnabled(cancellable)
        self.cancel_button.setVisible(cancellable)
        self._show_timer.start()

    def _reveal(self) -> None:
        if self.active:
            self.setVisible(True)

    def cancelling(self) -> None:
        self.phase.setText("Cancelling after this forward…")
        self.cancel_button.setEnabled(False)

    def stop(self) -> None:
        self.active = False
        self._show_timer.stop()
        self.setVisible(False)
        self.phase.clear()
        self.rate.clear()
        self.note.clear()

    def show_note(self, text: str) -> None:
        """A status message during a run, beside the phase for a few seconds."""
        self.note.setText(f"· {text}")
        self._note_timer.start()

    def feed(self, event: ev.Event) -> None:
        if isinstance(event, ev.PhaseChanged):
            self.phase_name = event.phase
            title = PHASE_TITLES.get(event.phase, event.phase.replace("_", " ").capitalize())
            if event.total:
                title += f" {event.current}/{event.total}"
                self.bar.setRange(0, event.total)
                self.bar.setValue(event.current)
            else:
                self.bar.setRange(0, 0)
            if event.detail:
                title += f" · {event.detail}"
            self.phase.setText(title)
        elif isinstance(event, ev.RoundVerified):
            self._count(len(event.new_tokens))
        elif isinstance(event, ev.TokensCommitted):
            self._count(len(event.tokens))
        elif isinstance(event, ev.WindowStepped):
            self._count(1)

    def _count(self, n: int) -> None:
        self._tokens += n
        dt = time.perf_counter() - self._t0
        if dt > 0.2:
            self.rate.setText(f"{self._tokens / dt:.1f} tok/s")

    @property
    def text(self) -> str:
        return " ".join(w.text() for w in (self.phase, self.rate) if w.text())
