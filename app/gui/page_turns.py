"""The page shown as it was read: a scan the run turned (or straightened) is drawn turned, with a note over the page
("Read turned 180°, straightened 1.5°"); rotate left / right (Ctrl+Shift+L / Ctrl+Shift+R, toolbar) turn the shown
page a quarter and read it again, laid out anew (app.core.review.page_turns keeps the person's turn for later runs).

What must never live here: finding the turn (core), rendering (the render service), run state.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel

from app.core.review.page_turns import turn_page
from app.gui.side_panel import THUMB_DPI


def turn_note(turn: int, skew: float, by_person: bool = False) -> str:
    parts = []
    if turn:
        parts.append(f"turned {turn}°" + (" (by you)" if by_person else ""))
    if skew:
        parts.append(f"straightened {abs(skew):.1f}°")
    return ("Read " + ", ".join(parts)) if parts else ""


class PageTurns(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.told: dict[tuple[str, int], tuple[int, float]] = {}  # what the render service was asked to show
        self.note = QLabel(window.page_view)
        self.note.setObjectName("page_turn_note")
        self.note.setStyleSheet("QLabel { background: #fff3e0; color: #e65100; border: 1px solid #e65100; "
                                "border-radius: 3px; padding: 2px 6px; }")
        self.note.move(8, 8)
        self.note.hide()
        window.page_view.regions_shown.connect(self.sync)

    def sync(self) -> None:
        """The shown page's turn, as its last reading says: the render service draws it so, the note says so."""
        w = self.window
        work, page = w.work, w.page_view.page
        frame = work.pages.get(page) if work is not None else None
        if work is None or page < 0:
            self.note.hide()
            return
        turn, skew = (frame.rotation, frame.skew) if frame is not None else (0, 0.0)
        key = (work.path, page)
        if self.told.get(key, (0, 0.0)) != (turn, skew):
            self.told[key] = (turn, skew)
            w.renderer.set_orientation(work.path, page, turn, skew)
            if frame is not None and frame.width_pt > 0 and page < len(work.page_sizes):
                sizes = list(work.page_sizes)
                sizes[page] = (frame.width_pt, frame.height_pt)
                work.page_sizes = sizes
                w.page_view.show_page(page, sizes[page], len(sizes))
            w.page_view.invalidate_image()
            if Path(work.path).is_file():  # the thumbnail too
                w.renderer.request(work.path, page, THUMB_DPI, "thumbnail")
        text = turn_note(turn, skew, work.person_turns.get(page) == turn and bool(turn))
        self.note.setText(text)
        self.note.adjustSize()
        self.note.setVisible(bool(text))

    def _turn(self, quarter: int) -> None:
        w = self.window
        work, page = w.work, w.page_view.page
        if work is None or page < 0:
            return
        turn = turn_page(work, page, quarter)
        w.statusBar().showMessage(f"Page {page + 1} turned to {turn}°: reading it again", 4000)
        w.autosave.touch()
        w.run_document([page])

    def rotate_left(self) -> None:
        self._turn(-1)

    def rotate_right(self) -> None:
        self._turn(1)
