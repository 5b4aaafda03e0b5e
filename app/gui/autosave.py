"""When the window saves its journal: soon after something worth keeping changed, never later than
`autosave_seconds` after the first such change (later changes do not reset the clock, so a stream of tokens
cannot postpone the save forever), and never sooner than COST_FACTOR times what the last save cost: the journal
holds the whole session, so on a long document (300 pages: about 20 MB of JSON) a save every two seconds would
spend a third of the time saving; this way saving takes at most a tenth of it, however long the document.

Widgets and helpers that change the work are given this object's `touch`, not the window.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer

COST_FACTOR = 10.0  # the time between saves is at least this many times the last save's cost


class Autosave(QObject):
    def __init__(self, seconds: Callable[[], float], save: Callable[[], object], parent: QObject | None = None,
                 cost: Callable[[], float] = lambda: 0.0):
        super().__init__(parent)
        self._seconds = seconds
        self._cost = cost  # seconds the last save took (building the snapshot, writing it)
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(save)

    def touch(self) -> None:
        """Something worth keeping changed: save within the set time (a save already due stays due)."""
        if not self._timer.isActive():
            self._timer.start(int(self.delay() * 1000))

    def delay(self) -> float:
        """Seconds from a change to its save: the setting, or more when saving has become costly."""
        return max(self._seconds(), COST_FACTOR * self._cost())

    def stop(self) -> None:
        """A save is being made now: nothing is due any more."""
        self._timer.stop()

    @property
    def due(self) -> bool:
        return self._timer.isActive()
