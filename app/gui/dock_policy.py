"""When the Decoding dock is shown: only while it has something to show. A live run of an engine that reports no
rounds and no R-SWA window (classic OCR, the autoregressive engines) hides it, so the page and the editor get the
room; one that does (GravityOCR and the built-in model self-speculative, Unlimited-OCR) shows it again, at the size
it had (Qt keeps a hidden dock's size; the window state keeps it between sessions). The dock's toggle sits on the
toolbar; once the person uses it, their choice holds and runs no longer move the dock. On first start the dock is
as tall as its content needs (`size_decoding_dock`: the inspector's five rows, the round history's whole rows),
within a share of the window; a shorter dock scrolls its views rather than squeezing them.

What must never live here: the views themselves (app.gui.views), run state.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QScrollArea, QToolBar

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


FIRST_SHARE, MOST_SHARE = 0.4, 0.55  # the dock's first height: 2/5 of the window, more when its content needs it


def size_decoding_dock(window: QMainWindow, dock: QDockWidget, scroller: QScrollArea) -> int:
    """First start: the Decoding dock as tall as its views need without scrolling (what the scroll area holds, at
    its minimum, plus the dock's own frame and bars), at least FIRST_SHARE of the window and at most MOST_SHARE.
    The frame is measured on the laid-out dock; where it cannot be yet (hidden, or not laid out on the turn it is
    sized in), the next turn of the loop measures what the views actually got and tops the dock up by the
    shortfall. Returns the height asked for."""
    content = _content_height(scroller)
    chrome = max(0, dock.height() - scroller.viewport().height()) if dock.isVisible() else 0
    height = window.height()
    wanted = min(int(height * MOST_SHARE), max(300, int(height * FIRST_SHARE), content + chrome))
    window.resizeDocks([dock], [wanted], Qt.Orientation.Vertical)
    QTimer.singleShot(0, window, lambda: top_up(window, dock, scroller))
    return wanted


def _content_height(scroller: QScrollArea) -> int:
    content = scroller.widget().minimumSizeHint().height() if scroller.widget() is not None else 0
    return content + scroller.fontMetrics().height() + 12  # the round's header line, shown once there is a round


def top_up(window: QMainWindow, dock: QDockWidget, scroller: QScrollArea) -> None:
    """The dock grown by what its views lack of their content's height, within MOST_SHARE of the window."""
    if not dock.isVisible():
        return
    short = _content_height(scroller) - scroller.viewport().height()
    if short > 0:
        most = int(window.height() * MOST_SHARE)
        window.resizeDocks([dock], [min(most, dock.height() + short)], Qt.Orientation.Vertical)
