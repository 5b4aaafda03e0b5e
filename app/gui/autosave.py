"""When the window saves its journal: soon after something worth keeping changed, never later than
`autosave_seconds` after the first such change (later changes do not reset the clock, so a stream of tokens
cannot postpone the save forever).

Widgets and helpers that change the work are given this object's `touch`, not the window.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer


class Autosave(QObject):
    def __init__(self, seconds: Callable[[], float], save: Callable[[], object], parent: QObject | None = None):
        super().__init__(parent)
        self._seconds = seconds
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(save)

    def touch(self) -> None:
        """Something worth keeping changed: save within the set time (a save already due stays due)."""
        if not self._timer.isActive():
            self._timer.start(int(self._seconds() * 1000))

    def stop(self) -> None:
        """A save is being made now: nothing is due any more."""
        self._timer.stop()

    @property
    def due(self) -> bool:
        return self._timer.isActive()
