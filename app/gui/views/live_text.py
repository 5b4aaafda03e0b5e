"""The decoded text beside each decoding view, appended as it streams: `TintedText` (each character tinted by the
self-speculative round that confirmed it, a wavy red underline on the verifier's correction where a draft was
rejected; click a character to select its round) and `WindowText` (the part inside the R-SWA window highlighted,
blocked n-grams underlined), on one read-only base that keeps the view at the bottom while it is there.

What must never live here: decoding, the views' state (rounds_state, window_state).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QPalette, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from app.gui.views import colors
from app.gui.views.rounds_state import RegionRounds
from app.gui.views.window_state import WindowStream


class LiveText(QPlainTextEdit):
    """Read-only text that grows at its end."""

    def __init__(self, placeholder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setPlaceholderText(placeholder)

    def clear_text(self) -> None:
        self.setExtraSelections([])
        self.clear()

    def at_bottom(self) -> bool:
        sb = self.verticalScrollBar()
        return sb.value() >= sb.maximum() - 4

    def keep_bottom(self, was_at_bottom: bool) -> None:
        """After appending: follow the end if the person was there (never pull them away from what they read)."""
        if was_at_bottom:
            self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    def selection(self, start: int, end: int, fmt: QTextCharFormat) -> QTextEdit.ExtraSelection:
        last = max(0, self.document().characterCount() - 1)
        sel = QTextEdit.ExtraSelection()
        cur = QTextCursor(self.document())
        cur.setPosition(min(start, last))
        cur.setPosition(min(end, last), QTextCursor.MoveMode.KeepAnchor)
        sel.cursor = cur
        sel.format = fmt
        return sel


class TintedText(LiveText):
    """The shown region's text, each character tinted by the round that confirmed it."""

    round_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("The decoded text appears here, tinted by the round that confirmed each character.", parent)
        self.region: RegionRounds | None = None
        self._applied = 0
        self.by_probability = False  # tint by the verifier's probability of each character's token instead

    def set_by_probability(self, on: bool) -> None:
        """Tint by probability (red where the verifier was unsure) or by round; redraws the text."""
        if on != self.by_probability:
            self.by_probability = on
            region = self.region
            self.clear_text()
            self.sync(region)

    def clear_text(self) -> None:
        self.region = None
        self._applied = 0
        super().clear_text()

    def sync(self, region: RegionRounds | None) -> None:
        """Append the rounds not shown yet (batched: one edit block per frame)."""
        if region is not self.region:
            self.clear_text()
            self.region = region
        if region is None or self._applied >= len(region.rounds):
            return
        dark = colors.is_dark(self)
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        at_bottom = self.at_bottom()
        for rec in region.rounds[self._applied :]:
            if not rec.text:
                continue
            spans = rec.char_probs() if self.by_probability else []
            if spans:
                self._insert_by_probability(cursor, rec, spans, dark)
                continue
            fmt = QTextCharFormat()
            fmt.setBackground(colors.round_tint(rec.index, dark))
            fix = ""
            if not rec.full_accept and rec.k < len(rec.verified_texts):
                fix = rec.verified_texts[rec.k]
                if not fix or not rec.text.endswith(fix) or len(fix) >= len(rec.text) + 1:
                    fix = ""
            head = rec.text[: len(rec.text) - len(fix)] if fix else rec.text
            if head:
                cursor.insertText(head, fmt)
            if fix:
                mark = QTextCharFormat(fmt)
                mark.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
                mark.setUnderlineColor(colors.REJECTED)
                mark.setForeground(colors.REJECTED)  # where a draft was rejected: red and bold, not only a faint wave
                mark.setFontWeight(700)
                cursor.insertText(fix, mark)
        cursor.endEditBlock()
        self._applied = len(region.rounds)
        self.keep_bottom(at_bottom)

    @staticmethod
    def _insert_by_probability(cursor: QTextCursor, rec, spans: list[tuple[int, int, float]], dark: bool) -> None:
        pos = rec.start
        for a, b, p in spans:
            if a > pos:
                cursor.insertText(rec.text[pos - rec.start: a - rec.start], QTextCharFormat())
            fmt = QTextCharFormat()
            fmt.setBackground(colors.prob_tint(p, dark))
            fmt.setToolTip(f"p = {p:.3f}")
            cursor.insertText(rec.text[a - rec.start: b - rec.start], fmt)
            pos = b
        if pos < rec.end:
            cursor.insertText(rec.text[pos - rec.start:], QTextCharFormat())

    def highlight(self, start: int, end: int) -> None:
        if end <= start:
            self.setExtraSelections([])
            return
        fmt = QTextCharFormat()
        fmt.setBackground(self.palette().color(QPalette.ColorRole.Highlight))
        fmt.setForeground(self.palette().color(QPalette.ColorRole.HighlightedText))
        fmt.setProperty(QTextFormat.Property.FullWidthSelection, False)
        self.setExtraSelections([self.selection(start, end, fmt)])
        shown = QTextCursor(self.document())
        shown.setPosition(min(start, self.document().characterCount() - 1))
        self.setTextCursor(shown)
        self.ensureCursorVisible()

    def viewportEvent(self, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ToolTip and self.region is not None:
            rec = self.region.round_at(self.cursorForPosition(event.pos()).position())
            if rec is not None:
                QToolTip.showText(event.globalPos(), rec.describe(), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        super().mouseReleaseEvent(event)
        if self.region is None or self.textCursor().hasSelection():
            return
        pos = self.cursorForPosition(event.position().toPoint()).position()
        rec = self.region.round_at(pos)
        if rec is not None:
            self.round_clicked.emit(rec.index)


class WindowText(LiveText):
    """The document text; the span inside the window highlighted, blocked n-grams marked in red."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("The decoded text appears here; the part inside the R-SWA window is highlighted.", parent)
        self.stream: WindowStream | None = None
        self._chars = 0

    def clear_text(self) -> None:
        self.stream = None
        self._chars = 0
        super().clear_text()

    def sync(self, stream: WindowStream | None) -> None:
        if stream is not self.stream:
            self.clear_text()
            self.stream = stream
        if stream is None:
            return
        text = stream.text
        at_bottom = self.at_bottom()
        if len(text) > self._chars:
            cur = QTextCursor(self.document())
            cur.movePosition(QTextCursor.MoveOperation.End)
            cur.insertText(text[self._chars :], QTextCharFormat())
            self._chars = len(text)
        self._highlight(stream)
        self.keep_bottom(at_bottom)

    def _highlight(self, s: WindowStream) -> None:
        sels = []
        a, b = s.window_chars()
        win = QTextCharFormat()
        win.setBackground(colors.faded(colors.WINDOW, 0.28))
        if b > a:
            sels.append(self.selection(a, b, win))
        ban_fmt = QTextCharFormat()
        ban_fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        ban_fmt.setUnderlineColor(colors.BAN)
        for ban in s.bans[-50:]:
            sa, _ = s.span_chars(ban.ngram_start, ban.ngram_start + 1)
            _, sb_ = s.span_chars(ban.step, ban.step + 1)
            if sb_ > sa:
                sels.append(self.selection(sa, sb_, ban_fmt))
        self.setExtraSelections(sels)
