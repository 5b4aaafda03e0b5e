"""What both decoding views are built on: a chooser of what to show (a region's rounds, a run's window), a hint
that explains an empty view, a headline widget (the round strip, the token ribbon) and panels side by side below
(the dock is usually wide and short), and the hint painted by a panel with nothing to draw yet.

What must never live here: a view's own state or drawing (rounds_view, window_view).
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.gui.views.view_text import engine_hint


def paint_hint(widget: QWidget, text: str) -> None:
    """A panel's placeholder, in the palette's placeholder colour (call from its paintEvent)."""
    p = QPainter(widget)
    p.setPen(widget.palette().color(QPalette.ColorRole.PlaceholderText))
    p.drawText(widget.rect().adjusted(12, 8, -12, -8), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, text)
    p.end()


class ViewFrame(QWidget):
    def __init__(self, *, chooser_title: str, chooser_tip: str, empty_hint: str, shows: str, headline: QWidget,
                 panels: list[QWidget], sizes: list[int], stretch: int, extra: QWidget | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.empty_hint, self.shows = empty_hint, shows
        self.note = ""  # why the shown document has nothing to show (overrides the hints)
        self.document_label = QLabel()  # which document the chooser's regions belong to
        self.document_label.setObjectName("view_document")
        self.document_label.setVisible(False)
        self.chooser = QComboBox()
        self.chooser.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.chooser.setToolTip(chooser_tip)
        self.hint = QLabel(empty_hint)
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.headline = headline
        top = QHBoxLayout()
        top.addWidget(self.document_label)
        top.addWidget(QLabel(chooser_title))
        top.addWidget(self.chooser)
        top.addStretch(1)
        if extra is not None:
            top.addWidget(extra)
        body = QSplitter(Qt.Orientation.Horizontal)
        for panel in panels:
            body.addWidget(panel)
        body.setStretchFactor(stretch, 1)
        body.setSizes(sizes)
        body.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.hint)
        lay.addWidget(headline)
        lay.addWidget(body, 1)

    def set_choices(self, ids: list[str], shown: str | None) -> None:
        """The chooser lists `ids` (rebuilt only when they changed) with `shown` selected; emits nothing."""
        self.chooser.blockSignals(True)
        if [self.chooser.itemData(i) for i in range(self.chooser.count())] != ids:
            self.chooser.clear()
            for item in ids:
                self.chooser.addItem(item, item)
        i = self.chooser.findData(shown) if shown is not None else -1
        if i >= 0 and i != self.chooser.currentIndex():
            self.chooser.setCurrentIndex(i)
        self.chooser.blockSignals(False)

    def set_document(self, name: str, path: str, note: str = "") -> None:
        """Name the document whose regions (or generations) the chooser lists; `note` says why it shows nothing."""
        self.document_label.setText(f"<b>{name}</b> ›" if name else "")
        self.document_label.setToolTip(path)
        self.document_label.setVisible(bool(name))
        self.note = note

    def set_empty(self, empty: bool, engine: str) -> None:
        """Show the hint (why nothing is shown, for this run's engine) instead of the headline."""
        if empty:
            text = self.note or engine_hint(engine, self.shows) or self.empty_hint
            if self.hint.text() != text:
                self.hint.setText(text)
        self.hint.setVisible(empty)
        self.headline.setVisible(not empty)
