"""The Markdown editor: one document made of blocks, each line tagged with the id of the region it came from.

The id lives in the block format of every line (a QTextFormat user property), so it follows the text as the
person types: Enter copies the format to the new line, merging lines keeps the first one's id. That is what makes
per-block edits and the cursor ↔ region link cheap. Separator lines between blocks carry no id.

Signals: `block_edited(id, markdown)` after a person changes a block (debounced; `flush_edits()` forces it),
`cursor_block_changed(id)` when the cursor enters another block ("" for none).
"""
from __future__ import annotations

import re

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QSyntaxHighlighter,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

REGION_PROPERTY = QTextFormat.Property.UserProperty + 17
SPAN_PROPERTY = QTextFormat.Property.UserProperty + 18  # marks the extra selections that are highlighted spans


def _fmt(color: str, *, bold: bool = False, italic: bool = False, mono: bool = False) -> QTextCharFormat:
    f = QTextCharFormat()
    f.setForeground(QColor(color))
    if bold:
        f.setFontWeight(QFont.Weight.Bold)
    if italic:
        f.setFontItalic(True)
    return f


class MarkdownHighlighter(QSyntaxHighlighter):
    """Headings, emphasis, code, math ($…$, $$ blocks) and HTML tags (tables)."""

    RULES = [
        (re.compile(r"^#{1,6} .*$"), _fmt("#2f7de1", bold=True)),
        (re.compile(r"\*\*[^*]+\*\*|__[^_]+__"), _fmt("#c0392b", bold=True)),
        (re.compile(r"(?<![*\w])\*[^*\s][^*]*\*(?!\*)"), _fmt("#c0392b", italic=True)),
        (re.compile(r"`[^`]+`"), _fmt("#7f8c8d")),
        (re.compile(r"</?[a-zA-Z][^>]*>"), _fmt("#1f9d55")),
        (re.compile(r"\$[^$\n]+\$"), _fmt("#9b51e0")),
        (re.compile(r"^\s*([-*+]|\d+\.) "), _fmt("#e07b00", bold=True)),
        (re.compile(r"^> .*$"), _fmt("#7f8c8d", italic=True)),
    ]
    MATH = _fmt("#9b51e0")

    def highlightBlock(self, text: str) -> None:
        in_math = self.previousBlockState() == 1
        if text.strip() == "$$":
            self.setFormat(0, len(text), self.MATH)
            self.setCurrentBlockState(0 if in_math else 1)
            return
        if in_math:
            self.setFormat(0, len(text), self.MATH)
            self.setCurrentBlockState(1)
            return
        self.setCurrentBlockState(0)
        for pattern, fmt in self.RULES:
            for m in pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), fmt)


class MarkdownEditor(QPlainTextEdit):
    block_edited = Signal(str, str)
    cursor_block_changed = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("editor")
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setPlaceholderText("Decoded Markdown appears here, block by block.")
        self.highlighter = MarkdownHighlighter(self.document())
        self._updating = 0
        self._dirty: set[str] = set()
        self._current_id = ""
        self._hover_id = ""
        self._spans: list[tuple[str, int, int]] = []  # highlighted characters: (block id, start, end) in its text
        self._edit_timer = QTimer(self, singleShot=True, interval=400)
        self._edit_timer.timeout.connect(self.flush_edits)
        self.document().contentsChange.connect(self._contents_changed)
        self.cursorPositionChanged.connect(self.sync_current_block)

    # --- content from the session ---------------------------------------------------------------------------

    def set_blocks(self, blocks: list[tuple[str, str]]) -> None:
        """Replace everything with `blocks` = [(region id, markdown)] in reading order."""
        self.flush_edits()
        self._updating += 1
        self.document().setUndoRedoEnabled(False)  # the run's text is no typing step: Ctrl+Z never undoes it
        try:
            self.document().clear()
            cursor = QTextCursor(self.document())
            cursor.beginEditBlock()
            for i, (rid, markdown) in enumerate(blocks):
                if i:
                    cursor.insertBlock(self._format(""))
                    cursor.insertBlock(self._format(rid))
                else:
                    cursor.setBlockFormat(self._format(rid))
                self._insert_lines(cursor, rid, markdown)
            cursor.endEditBlock()
        finally:
            self._updating -= 1
            self.document().setUndoRedoEnabled(True)
        self._current_id = ""
        self._refresh_selections()

    def update_block(self, rid: str, markdown: str) -> bool:
        """Replace one block's lines (streaming and finished OCR); keeps the person's cursor. Returns False when
        the block is not in the editor."""
        first, last = self._block_range(rid)
        if first is None:
            return False
        if self.block_text(rid) == markdown:
            return True
        self._updating += 1
        self.document().setUndoRedoEnabled(False)  # the run's text is no typing step: Ctrl+Z never undoes it
        try:
            cursor = QTextCursor(self.document())
            cursor.setPosition(first.position())
            cursor.setPosition(last.position() + last.length() - 1, QTextCursor.MoveMode.KeepAnchor)
            cursor.beginEditBlock()
            cursor.removeSelectedText()
            cursor.setBlockFormat(self._format(rid))
            self._insert_lines(cursor, rid, markdown)
            cursor.endEditBlock()
        finally:
            self._updating -= 1
            self.document().setUndoRedoEnabled(True)
        self._refresh_selections()
        return True

    def append_block(self, rid: str, markdown: str) -> None:
        self._updating += 1
        self.document().setUndoRedoEnabled(False)  # the run's text is no typing step: Ctrl+Z never undoes it
        try:
            cursor = QTextCursor(self.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            if not self.document().isEmpty():
                cursor.insertBlock(self._format(""))
                cursor.insertBlock(self._format(rid))
            else:
                cursor.setBlockFormat(self._format(rid))
            self._insert_lines(cursor, rid, markdown)
        finally:
            self._updating -= 1
            self.document().setUndoRedoEnabled(True)

    def _insert_lines(self, cursor: QTextCursor, rid: str, markdown: str) -> None:
        for j, line in enumerate(markdown.split("\n")):
            if j:
                cursor.insertBlock(self._format(rid))
            cursor.insertText(line)

    @staticmethod
    def _format(rid: str) -> QTextBlockFormat:
        fmt = QTextBlockFormat()
        fmt.setProperty(REGION_PROPERTY, rid)
        return fmt

    # --- reading blocks -----------------------------------------------------------------------------------------

    @staticmethod
    def line_id(block) -> str:
        value = block.blockFormat().property(REGION_PROPERTY)
        return value if isinstance(value, str) else ""

    def _block_range(self, rid: str):
        first = last = None
        block = self.document().firstBlock()
        while block.isValid():
            if self.line_id(block) == rid:
                first = first or block
                last = block
            elif first is not None:
                break
            block = block.next()
        return first, last

    def block_ids(self) -> list[str]:
        ids: list[str] = []
        block = self.document().firstBlock()
        while block.isValid():
            rid = self.line_id(block)
            if rid and (not ids or ids[-1] != rid):
                ids.append(rid)
            block = block.next()
        return ids

    def block_text(self, rid: str) -> str | None:
        lines = []
        block = self.document().firstBlock()
        while block.isValid():
            if self.line_id(block) == rid:
                lines.append(block.text())
            block = block.next()
        return "\n".join(lines) if lines else None

    def block_start(self, rid: str) -> int:
        first, _ = self._block_range(rid)
        return first.position() if first is not None else -1

    def current_block_id(self) -> str:
        return self.line_id(self.textCursor().block())

    # --- navigation and highlights ------------------------------------------------------------------------------

    def goto_block(self, rid: str) -> bool:
        pos = self.block_start(rid)
        if pos < 0:
            return False
        cursor = self.textCursor()
        cursor.setPosition(pos)
        self.setTextCursor(cursor)
        self.centerCursor()
        return True

    def highlight_span(self, rid: str, start: int, end: int) -> None:
        """Mark characters [start, end) of block `rid`'s text (a decoding round) and bring them into view."""
        self._spans = [(rid, start, end)] if end > start else []
        self._refresh_selections()
        pos = self.block_start(rid)
        if pos >= 0 and self._spans:
            cursor = QTextCursor(self.document())
            cursor.setPosition(min(pos + end, self.document().characterCount() - 1))
            rect = self.cursorRect(cursor)
            if not self.viewport().rect().contains(rect.center()):
                self.setTextCursor(cursor)
                self.centerCursor()

    def highlight_spans(self, spans: list[tuple[str, int, int]]) -> None:
        """Mark several blocks' characters at once (the R-SWA window, which may hold the end of one block and the
        start of the next). The view scrolls to the last span unless the person is typing here; the text cursor
        never moves (this follows a live run, many times a second)."""
        spans = [(rid, a, b) for rid, a, b in spans if b > a]
        if spans == self._spans:
            return
        self._spans = spans
        self._refresh_selections()
        if not spans or self.hasFocus():
            return
        rid, _, end = spans[-1]
        pos = self.block_start(rid)
        if pos < 0:
            return
        self._scroll_to(pos + end)

    def _scroll_to(self, position: int) -> bool:
        """Bring character `position` into view (centred) without moving the text cursor."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(max(0, min(position, self.document().characterCount() - 1)))
        rect = self.cursorRect(cursor)
        if self.viewport().rect().contains(rect.center()):
            return False
        # blocks far below the fold are not laid out yet, so their rectangles cannot be trusted: let Qt centre a
        # cursor there (it lays out what it needs), then put the person's cursor back without scrolling again
        saved, sb, hb = self.textCursor(), self.verticalScrollBar(), self.horizontalScrollBar()
        self.blockSignals(True)
        try:
            self.setTextCursor(cursor)
            self.centerCursor()
            top, left = sb.value(), hb.value()
            self.setTextCursor(saved)
            sb.setValue(top)
            hb.setValue(left)
        finally:
            self.blockSignals(False)
        return True

    def reveal_block(self, rid: str) -> bool:
        """Follow a live run: scroll so the end of block `rid` (where its text is streaming) is in view. Never
        while the person works here (focus), and the text cursor never moves. Returns whether it scrolled."""
        if self.hasFocus():
            return False
        _, last = self._block_range(rid)
        if last is None:
            return False
        return self._scroll_to(last.position() + max(0, last.length() - 1))

    @property
    def highlighted(self) -> list[str]:
        """The highlighted characters, span by span (tests; what the person sees marked)."""
        out = []
        for sel in self.extraSelections():
            if sel.format.property(SPAN_PROPERTY):
                out.append(sel.cursor.selectedText().replace("\u2029", "\n"))
        return out

    def set_hovered_block(self, rid: str) -> None:
        """The pointer is over this block's region on the page: tint it faintly ("" clears)."""
        if rid != self._hover_id:
            self._hover_id = rid
            self._refresh_selections()

    def _tint_block(self, rid: str, alpha: int, selections: list) -> None:
        tint = QColor(self.palette().highlight().color())
        tint.setAlpha(alpha)
        block = self.document().firstBlock()
        while block.isValid():
            if self.line_id(block) == rid:
                sel = QTextEdit.ExtraSelection()
                sel.format.setBackground(tint)
                sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                sel.cursor = QTextCursor(block)
                selections.append(sel)
            block = block.next()

    def _refresh_selections(self) -> None:
        selections: list = []
        if self._hover_id and self._hover_id != self._current_id:
            self._tint_block(self._hover_id, 14, selections)
        if self._current_id:
            self._tint_block(self._current_id, 28, selections)
        for srid, start, end in self._spans:
            pos = self.block_start(srid)
            if pos >= 0:
                size = self.document().characterCount() - 1
                sel = QTextEdit.ExtraSelection()
                sel.format.setBackground(QColor(255, 200, 0, 110))
                sel.format.setProperty(SPAN_PROPERTY, True)
                sel.cursor = QTextCursor(self.document())
                sel.cursor.setPosition(min(pos + start, size))
                sel.cursor.setPosition(min(pos + end, size), QTextCursor.MoveMode.KeepAnchor)
                selections.append(sel)
        self.setExtraSelections(selections)

    def sync_current_block(self) -> None:
        """The block under the cursor becomes the current one (highlighted; `cursor_block_changed` when it
        changed): run on every cursor move, and by whoever moved the cursor with the signals blocked."""
        rid = self.current_block_id()
        if rid != self._current_id:
            self._current_id = rid
            self._refresh_selections()
            self.cursor_block_changed.emit(rid)

    # --- edits by the person -------------------------------------------------------------------------------------

    def _contents_changed(self, position: int, removed: int, added: int) -> None:
        if self._updating:
            return
        doc = self.document()
        block = doc.findBlock(position)
        end = position + added
        while block.isValid() and block.position() <= end:
            rid = self.line_id(block)
            if not rid and block.text().strip():
                rid = self._adopt(block)
            if rid:
                self._dirty.add(rid)
            block = block.next()
        if self._dirty:
            self._edit_timer.start()

    def _adopt(self, block) -> str:
        """Text typed on a separator line joins the block above (or below, at the very top)."""
        neighbour = block.previous()
        while neighbour.isValid() and not self.line_id(neighbour):
            neighbour = neighbour.previous()
        if not neighbour.isValid():
            neighbour = block.next()
            while neighbour.isValid() and not self.line_id(neighbour):
                neighbour = neighbour.next()
        rid = self.line_id(neighbour) if neighbour.isValid() else ""
        if rid:
            # Tagged on the next turn of the loop (not inside the document's own change signal). What waits
            # is a cursor, which the document keeps up to date as text moves and nulls when it dies; a
            # QTextBlock is a bare pointer into the document that dangles once it is replaced or deleted.
            # The editor is the timer's context: a deleted editor tags nothing.
            QTimer.singleShot(0, self, lambda c=QTextCursor(block), r=rid: self._tag(c, r))
        return rid

    def _tag(self, cursor: QTextCursor, rid: str) -> None:
        if cursor.isNull() or self.line_id(cursor.block()):  # the document died, or the line has its id
            return
        self._updating += 1
        try:
            cursor.setBlockFormat(self._format(rid))
        finally:
            self._updating -= 1

    @property
    def pending_edits(self) -> set[str]:
        """Blocks typed in whose edits have not been reported yet."""
        return set(self._dirty)

    def flush_edits(self) -> None:
        self._edit_timer.stop()
        dirty, self._dirty = self._dirty, set()
        for rid in sorted(dirty):
            text = self.block_text(rid)
            if text is not None:
                self.block_edited.emit(rid, text)
