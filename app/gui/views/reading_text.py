"""A finished region drawn as the text the document got (the rounds view's text panel, `TintedText`): one line a
paragraph; where the document kept the decoder's line, the line tinted by the rounds that wrote it; where it got
another reading (the recogniser's, the arbiter's mix), the document's line plain with a mark saying why (recogniser
kept, arbiter, word list, recogniser only: app.core.record.line_readings), and under it the decoder's own reading,
tinted by its rounds, so a round still points at the characters it wrote.

What must never live here: what a line's reason is (core), the live streaming (app.gui.views.live_text).
"""
from __future__ import annotations

from PySide6.QtGui import QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from app.gui.views import colors
from app.gui.views.rounds_state import RegionRounds

DECODER_LABEL = "    decoder: "


def wants_document_mode(region: RegionRounds) -> bool:
    """Whether the document's text differs from the decoder's output in a way worth saying (a line read
    otherwise, or the word list's changes): only once the region is done."""
    return region.finished and any(r.reasons or r.differs for r in region.readings)


def caption(region: RegionRounds | None, document_mode: bool) -> str:
    """The line above the text panel: whose text it is."""
    if region is None or not region.rounds:
        return "Text"
    if document_mode:
        n = sum(1 for r in region.readings if r.differs)
        return (f"The text the document got · the decoder's own reading under {n} line{'s' if n != 1 else ''} "
                "where it differs (◂ why; hover)")
    if region.finished:
        return "The text the document got (the decoder's output), tinted by round"
    return "The decoder's output as it streams, tinted by round (the document's text when the region is done)"


def render_document(edit: QPlainTextEdit, region: RegionRounds) -> tuple[list[tuple[int, int, int]],
                                                                          list[tuple[int, int, str]]]:
    """Draw `region`'s lines into the (empty) `edit` (a TintedText: its `round_pieces` tint a round); returns the tinted segments (shown start, shown end, output
    start) and the marks (shown start, end, why)."""
    dark = colors.is_dark(edit)
    fg = edit.palette().color(QPalette.ColorRole.Text)
    plain = QTextCharFormat()
    mark = QTextCharFormat()
    mark.setForeground(colors.CORRECTED)
    mark.setFontWeight(700)
    label = QTextCharFormat()
    label.setForeground(colors.faded(fg, 0.6))
    label.setFontItalic(True)
    cursor = QTextCursor(edit.document())
    cursor.beginEditBlock()
    segments: list[tuple[int, int, int]] = []
    notes: list[tuple[int, int, str]] = []
    rounds, first = region.rounds, 0

    def tinted(a: int, b: int) -> None:
        nonlocal first
        while first < len(rounds) and rounds[first].end <= a:
            first += 1
        start = cursor.position()
        i = first
        while i < len(rounds) and rounds[i].start < b:
            for piece, fmt in edit.round_pieces(rounds[i], dark, a, b):
                cursor.insertText(piece, fmt)
            i += 1
        segments.append((start, cursor.position(), a))

    for n, line in enumerate(region.readings):
        if n:
            cursor.insertText("\n", plain)
        if line.differs or line.raw_start < 0:
            cursor.insertText(line.text, plain)  # the document's line, not the decoder's
        else:
            tinted(line.raw_start, line.raw_end)
        if line.reasons:
            start = cursor.position()
            cursor.insertText("  ◂ " + " · ".join(line.reasons), mark)
            notes.append((start, cursor.position(), line.detail))
        if line.differs and line.raw_start >= 0:
            cursor.insertText("\n", plain)
            start = cursor.position()
            cursor.insertText(DECODER_LABEL, label)
            notes.append((start, cursor.position(), "The decoder's own reading of the line above, tinted by its "
                                                    "rounds; the document kept the line above: " + line.detail))
            tinted(line.raw_start, line.raw_end)
    cursor.endEditBlock()
    return segments, notes
