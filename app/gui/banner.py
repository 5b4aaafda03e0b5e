"""Two small pieces of the window's face: the message banner (missing weights, a damaged file: visible, never
modal) and the hint shown in place of the page while nothing is open."""
from __future__ import annotations

from typing import Callable

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
        self.action = QToolButton()
        self.action.hide()
        self._action = None
        self.action.clicked.connect(lambda: self._action and self._action())
        close = QToolButton(text="✕")
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action)
        layout.addWidget(close)
        self.hide()

    def show_message(self, text: str, action: tuple[str, Callable[[], None]] | None = None) -> None:
        """Show `text`; `action` = (button text, what it does), e.g. ("Show file", open the folder)."""
        self.label.setText(text)
        self._action = action[1] if action else None
        self.action.setText(action[0] if action else "")
        self.action.setVisible(action is not None)
        self.show()

    @property
    def text(self) -> str:
        return "" if self.isHidden() else self.label.text()


def empty_hint() -> QLabel:
    hint = QLabel("Drop PDFs or images here\n\nor use File → Open (Ctrl+O)")
    hint.setObjectName("empty_hint")
    hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return hint
