"""Two small pieces of the window's face: the message banner (missing weights, a damaged file: visible, never
modal) and the hint shown in place of the page while nothing is open."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton


class Banner(QFrame):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(text="✕")
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        layout.addWidget(self.label, 1)
        layout.addWidget(close)
        self.hide()

    def show_message(self, text: str) -> None:
        self.label.setText(text)
        self.show()

    @property
    def text(self) -> str:
        return "" if self.isHidden() else self.label.text()


def empty_hint() -> QLabel:
    hint = QLabel("Drop PDFs or images here\n\nor use File → Open (Ctrl+O)")
    hint.setObjectName("empty_hint")
    hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return hint
