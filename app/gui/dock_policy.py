"""When the Decoding dock is shown: only while it has something to show. A live run of an engine that reports no
rounds and no R-SWA window (classic OCR, the autoregressive engines) hides it, so the page and the editor get the
room; one that does (GravityOCR and the built-in model self-speculative, Unlimited-OCR) shows it again, at the size
it had (Qt keeps a hidden dock's size; the window state keeps it between sessions). The dock's toggle sits on the
toolbar; once the person uses it, their choice holds and runs no longer move the dock.

What must never live here: the views themselves (app.gui.views), run state.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDockWidget, QToolBar

from app.core.engines import ENGINES
from app.core.record.events import RunStarted

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.worker import DecodeClient


class DecodingDockPolicy(QObject):
    def __init__(self, dock: QDockWidget, toolbar: QToolBar, decoder: DecodeClient,
                 parent: QObject | None = None) -> None:
        """`dock`: the Decoding dock it shows and hides; its toggle goes on `toolbar`; `decoder`'s live events
        say which engine runs."""
        super().__init__(parent)
        self.dock = dock
        self.chosen_by_person = False
        toggle = dock.toggleViewAction()
        toggle.setText("Decoding views")
        toggle.setToolTip("Show or hide the decoding views (rounds, R-SWA window, replay)")
        toggle.triggered.connect(self._person_chose)
        toolbar.addAction(toggle)
        decoder.events.connect(self.live_events)

    def _person_chose(self, _checked: bool = False) -> None:
        self.chosen_by_person = True

    def live_events(self, events: list) -> None:
        for event in events:
            if isinstance(event, RunStarted):
                self.engine_started(event.engine)

    def engine_started(self, engine: str) -> None:
        spec = ENGINES.get(engine)
        if self.chosen_by_person or spec is None:
            return
        self.dock.setVisible(bool(spec.shows))
