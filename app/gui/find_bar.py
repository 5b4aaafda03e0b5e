"""Find in the document (Ctrl+F): a bar above the editor. Every hit is highlighted in the editor and the regions
that hold one are outlined on the page; Enter / Shift+Enter (or F3 / Shift+F3) go to the next / previous hit,
showing its page and selecting its region; Esc closes the bar and clears the marks. Case-insensitive, over the
text the editor shows (a person's edits included).

It is given the editor and the page it marks, and the window's `reveal`, never the window. What must never live
here: changing any text.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

if TYPE_CHECKING:  # pragma: no cover
    from app.gui.markdown_editor import MarkdownEditor
    from app.gui.page_view import PageView


class FindBar(QWidget):
    def __init__(self, editor: MarkdownEditor, page_view: PageView, reveal: Callable[..., object],
                 shortcuts_on: QWidget) -> None:
        """`reveal(block_id, leave_live=True)` shows a hit's page and selects its region; F3 / Shift+F3 work
        anywhere in `shortcuts_on` (the window)."""
        super().__init__()
        self.editor, self.page_view, self.reveal = editor, page_view, reveal
        self.setObjectName("find_bar")
        self.field = QLineEdit()
        self.field.setPlaceholderText("Find in the document")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel()
        self.count.setObjectName("find_count")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 3, 6, 3)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.count)
        for text, tip, slot in (("↑", "Previous hit (Shift+Enter)", self.previous),
                                ("↓", "Next hit (Enter)", self.next), ("✕", "Close (Esc)", self.close_bar)):
            button = QToolButton()
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            layout.addWidget(button)
        self.hits: list[tuple[str, int, int]] = []  # (block id, start, end) in reading order
        self.current = -1
        self.field.textChanged.connect(self.search)
        self.field.installEventFilter(self)
        QShortcut(QKeySequence("F3"), shortcuts_on, self.next)
        QShortcut(QKeySequence("Shift+F3"), shortcuts_on, self.previous)
        self.hide()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - the field's keys come before the window's shortcuts
        if event.type() not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return super().eventFilter(obj, event)
        keys = {Qt.Key.Key_Escape: lambda _e: self.close_bar(), Qt.Key.Key_Return: self._enter,
                Qt.Key.Key_Enter: self._enter}
        slot = keys.get(event.key())
        if slot is None:
            return super().eventFilter(obj, event)
        event.accept()
        if event.type() == QEvent.Type.KeyPress:
            slot(event)
        return True

    def _enter(self, event) -> None:
        """Enter: the next hit; Shift+Enter: the previous one."""
        self._go(-1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 1)

    def open(self) -> None:
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()
        self.search(self.field.text())

    def close_bar(self) -> None:
        self.hide()
        self.hits, self.current = [], -1
        self._mark()

    def search(self, text: str) -> None:
        editor = self.editor
        self.hits, self.current = [], -1
        needle = text.casefold()
        if needle:
            for rid in editor.block_ids():
                hay = (editor.block_text(rid) or "").casefold()
                at = hay.find(needle)
                while at >= 0:
                    self.hits.append((rid, at, at + len(needle)))
                    at = hay.find(needle, at + len(needle))
        self._mark()

    def _mark(self) -> None:
        self.editor.highlight_spans(self.hits)
        found = {rid for rid, _a, _b in self.hits}
        for rid, item in self.page_view.region_items.items():
            item.set_state(found=rid in found)
        n = len(self.hits)
        where = f"{self.current + 1} of {n}" if self.current >= 0 else f"{n} hit{'' if n == 1 else 's'}"
        self.count.setText(where if self.field.text() else "")

    def next(self) -> None:
        self._go(1)

    def previous(self) -> None:
        self._go(-1)

    def _go(self, step: int) -> None:
        if not self.hits:
            return
        self.current = (self.current + step) % len(self.hits)
        rid, start, end = self.hits[self.current]
        self.reveal(rid, leave_live=True)
        editor = self.editor
        pos = editor.block_start(rid)
        if pos >= 0:
            cursor = QTextCursor(editor.document())
            cursor.setPosition(pos + start)
            cursor.setPosition(pos + end, QTextCursor.MoveMode.KeepAnchor)
            editor.setTextCursor(cursor)
            editor.ensureCursorVisible()
        self._mark()
