"""Two small pieces of the window's face: the message banner (missing weights, a damaged file: visible, never
modal) and the hint shown in place of the page while nothing is open."""
from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton


class Banner(QFrame):
    """A message with up to a few action buttons; a long message shows its first sentence and a Details button."""

    HEADLINE_CHARS = 160  # longer messages fold behind "Details"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.layout_ = QHBoxLayout(self)
        self.layout_.setContentsMargins(10, 4, 4, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.layout_.addWidget(self.label, 1)
        self.buttons: list[QToolButton] = []
        self.details_button = QToolButton(text="Details")
        self.details_button.setCheckable(True)
        self.details_button.toggled.connect(self._show_details)
        self.details_button.hide()
        self.layout_.addWidget(self.details_button)
        close = QToolButton(text="✕")
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        self.layout_.addWidget(close)
        self._headline = self._full = ""
        self.hide()

    def show_message(self, text: str, action: tuple[str, Callable[[], None]] | None = None,
                     actions: Sequence[tuple[str, Callable[[], None]]] = ()) -> None:
        """Show `text` with buttons: `action` / `actions` = (button text, what it does), e.g. ("Use classic", …)."""
        for button in self.buttons:
            self.layout_.removeWidget(button)
            button.deleteLater()
        self.buttons = []
        for title, slot in ([action] if action else []) + list(actions):
            button = QToolButton(text=title)
            button.clicked.connect(lambda _c=False, f=slot: f())
            self.layout_.insertWidget(self.layout_.count() - 2, button)
            self.buttons.append(button)
        self._full = text
        self._headline = headline(text, self.HEADLINE_CHARS)
        folded = self._headline != text
        self.details_button.setVisible(folded)
        self.details_button.setChecked(False)
        self._show_details(False)
        self.show()

    def _show_details(self, on: bool) -> None:
        self.label.setText(self._full if on else self._headline)

    @property
    def text(self) -> str:
        """The whole message (folded or not)."""
        return "" if self.isHidden() else self._full

    @property
    def action(self) -> QToolButton | None:
        """The first action button (None without one)."""
        return self.buttons[0] if self.buttons else None

    @property
    def action_titles(self) -> list[str]:
        return [b.text() for b in self.buttons]


def headline(text: str, limit: int) -> str:
    """The message's first sentence (or line), when the whole is longer than `limit` characters."""
    if len(text) <= limit and "\n" not in text:
        return text
    first = text.split("\n", 1)[0]
    for stop in (". ", "; "):
        if stop in first[:limit]:
            first = first[: first.index(stop, 0, limit) + 1]
            break
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def empty_hint() -> QLabel:
    hint = QLabel("Drop PDFs or images here\n\nor use File → Open (Ctrl+O)")
    hint.setObjectName("empty_hint")
    hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return hint
