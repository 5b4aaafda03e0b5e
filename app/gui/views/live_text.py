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
    """The shown region's text, each character tinted by the round that confirmed it. While the region decodes it
    is the decoder's output; once it is done and its engine said per line what the document kept
    (app.core.record.line_readings), it is the text the document got, the decoder's own reading under each line
    where the two differ, marked with why (app.gui.views.reading_text)."""

    round_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("The decoded text appears here, tinted by the round that confirmed each character.", parent)
        self.region: RegionRounds | None = None
        self._applied = 0
        self.by_probability = False  # tint by the verifier's probability of each character's token instead
        self.document_mode = False  # showing the document's lines (else the decoder's output as it streamed)
        self.segments: list[tuple[int, int, int]] = []  # document mode: (shown start, shown end, output start)
        self.notes: list[tuple[int, int, str]] = []  # document mode: (shown start, end, why) of each line's mark

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
        self.document_mode = False
        self.segments, self.notes = [], []
        super().clear_text()

    def sync(self, region: RegionRounds | None) -> None:
        """Append the rounds not shown yet (batched: one edit block per frame); a finished region whose lines
        differ from the decoder's is drawn once more as the document's text."""
        from app.gui.views.reading_text import render_document, wants_document_mode

        if region is not self.region:
            self.clear_text()
            self.region = region
        if region is None:
            return
        if not self.document_mode and wants_document_mode(region):
            at_bottom = self.at_bottom()
            super().clear_text()
            self.segments, self.notes = render_document(self, region)
            self.document_mode = True
            self._applied = len(region.rounds)
            self.keep_bottom(at_bottom)
            return
        if self.document_mode or self._applied >= len(region.rounds):
            return
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        at_bottom = self.at_bottom()
        dark = colors.is_dark(self)
        for rec in region.rounds[self._applied :]:
            for piece, fmt in self.round_pieces(rec, dark):
                cursor.insertText(piece, fmt)
        cursor.endEditBlock()
        self._applied = len(region.rounds)
        self.keep_bottom(at_bottom)

    def round_pieces(self, rec, dark: bool, lo: int | None = None, hi: int | None = None
                     ) -> list[tuple[str, QTextCharFormat]]:
        """The round's characters in [lo, hi) of the decoder's output, each run with its format: tinted by round
        (the verifier's correction red and underlined) or by probability."""
        lo = rec.start if lo is None else max(lo, rec.start)
        hi = rec.end if hi is None else min(hi, rec.end)
        if hi <= lo or not rec.text:
            return []
        runs: list[tuple[int, int, QTextCharFormat]] = []
        spans = rec.char_probs() if self.by_probability else []
        if spans:
            pos = rec.start
            for a, b, p in spans:
                if a > pos:
                    runs.append((pos, a, QTextCharFormat()))
                fmt = QTextCharFormat()
                fmt.setBackground(colors.prob_tint(p, dark))
                fmt.setToolTip(f"p = {p:.3f}")
                runs.append((a, b, fmt))
                pos = b
            if pos < rec.end:
                runs.append((pos, rec.end, QTextCharFormat()))
        else:
            fmt = QTextCharFormat()
            fmt.setBackground(colors.round_tint(rec.index, dark))
            fix = ""
            if rec.slot_state(rec.k) == "rejected" and rec.k < len(rec.verified_texts):
                fix = rec.verified_texts[rec.k]
                if not fix or not rec.text.endswith(fix) or len(fix) >= len(rec.text) + 1:
                    fix = ""
            runs.append((rec.start, rec.end - len(fix), fmt))
            if fix:
                mark = QTextCharFormat(fmt)
                mark.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
                mark.setUnderlineColor(colors.REJECTED)
                mark.setForeground(colors.REJECTED)  # where a draft was rejected: red and bold, not only a faint wave
                mark.setFontWeight(700)
                runs.append((rec.end - len(fix), rec.end, mark))
        out = []
        for a, b, fmt in runs:
            a, b = max(a, lo), min(b, hi)
            if b > a:
                out.append((rec.text[a - rec.start: b - rec.start], fmt))
        return out

    # positions: the decoder's output <-> what is shown -------------------------------------------------------------
    def shown_position(self, output_pos: int) -> int:
        """Where character `output_pos` of the decoder's output is shown (-1: not shown)."""
        if not self.document_mode:
            return output_pos
        for a, b, raw in self.segments:
            if raw <= output_pos < raw + (b - a) or (output_pos == raw + (b - a) and b > a):
                return a + output_pos - raw
        return -1

    def output_position(self, shown_pos: int) -> int:
        """The decoder's output character shown at `shown_pos` (-1: a document line or a mark, not decoded)."""
        if not self.document_mode:
            return shown_pos
        for a, b, raw in self.segments:
            if a <= shown_pos < b:
                return raw + shown_pos - a
        return -1

    def note_at(self, shown_pos: int) -> str:
        return next((why for a, b, why in self.notes if a <= shown_pos < b), "")

    def highlight(self, start: int, end: int) -> None:
        """Mark [start, end) of the decoder's output (a round) where it is shown."""
        a, b = self.shown_position(start), self.shown_position(end)
        if end <= start or a < 0 or b <= a:
            self.setExtraSelections([])
            return
        fmt = QTextCharFormat()
        fmt.setBackground(self.palette().color(QPalette.ColorRole.Highlight))
        fmt.setForeground(self.palette().color(QPalette.ColorRole.HighlightedText))
        fmt.setProperty(QTextFormat.Property.FullWidthSelection, False)
        self.setExtraSelections([self.selection(a, b, fmt)])
        shown = QTextCursor(self.document())
        shown.setPosition(min(a, self.document().characterCount() - 1))
        self.setTextCursor(shown)
        self.ensureCursorVisible()

    def viewportEvent(self, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ToolTip and self.region is not None:
            pos = self.cursorForPosition(event.pos()).position()
            why = self.note_at(pos)
            rec = self.region.round_at(self.output_position(pos)) if not why else None
            if why or rec is not None:
                QToolTip.showText(event.globalPos(), why or rec.describe(), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        super().mouseReleaseEvent(event)
        if self.region is None or self.textCursor().hasSelection():
            return
        pos = self.output_position(self.cursorForPosition(event.position().toPoint()).position())
        rec = self.region.round_at(pos) if pos >= 0 else None
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
