"""The A/B decoding diff in the window: the same region decoded under two settings (block size, engine, dtype,
device, checkpoint; two traces, or the run shown against a trace) side by side: each side's figures (tokens, TPF,
time), the rounds of both aligned by output position with the first divergence marked, both texts with their
differences marked word by word, and at the first divergence what each side's verifier believed.

Reads `app.core.record.trace_compare.Comparison`; the texts' diff is app.gui.text_diff's. Nothing here decodes.
"""
from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (QComboBox, QFileDialog, QGridLayout, QHBoxLayout, QLabel, QPushButton, QTextBrowser,
                               QVBoxLayout, QWidget)

from app.core.record.events import Event
from app.core.record.trace_compare import Comparison, RegionDiff, RegionRun, compare
from app.core.record.line_readings import line_readings
from app.gui.views.decode_store import document_name, trace_document
from app.gui.text_diff import word_diff
from app.gui.views import colors
from app.gui.views.inspector_view import paint_ranked
from app.gui.views.view_frame import paint_hint
from app.gui.views.view_text import visible_whitespace

HINT = ("Compare two decodes of the same regions: load two traces (e.g. recorded with block size 8 and 16, fp32 and "
        "bf16, two checkpoints), or the run shown against a trace; or `python -m app diff A B` in a terminal.")


def readings_html(run: RegionRun | None) -> str:
    """Under a side's text: each line where the decoder's own reading differs from the text the document got (or
    the word list changed it), with why (app.core.record.line_readings); "" when none."""
    if run is None:
        return ""
    decoded = "".join(r.text for r in run.rounds)
    rows = [r for r in line_readings(run.stats, run.text, decoded) if r.differs or r.reasons]
    if not rows:
        return ""
    out = ["<hr><p><small>The text above is what the document got; where the decoder read a line otherwise:"
           "</small></p>"]
    for r in rows:
        why = escape(" · ".join(r.reasons))
        line = f"<p><b>{escape(r.text)}</b> <span style='color:#e8891d'>◂ {why}</span>"
        if r.differs:
            line += f"<br><i>decoder: {escape(r.decoder or '')}</i>"
        out.append(line + f"<br><small>{escape(r.detail)}</small></p>")
    return "".join(out)


class RoundLanes(QWidget):
    """Both decodes' rounds along the output (token index): one lane each, a round a segment as long as the tokens
    it committed (green: accepted drafts, orange: the verifier's token, blue: a bonus), the first divergence a red
    line across both lanes."""

    LANE_H = 22

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.diff: RegionDiff | None = None
        self.setMinimumHeight(2 * self.LANE_H + 26)

    def sizeHint(self) -> QSize:
        return QSize(600, 2 * self.LANE_H + 26)

    def show_diff(self, diff: RegionDiff | None) -> None:
        self.diff = diff
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802
        d = self.diff
        if d is None or d.a is None or d.b is None:
            paint_hint(self, "The rounds of both decodes, aligned by output position, appear here.")
            return
        p = QPainter(self)
        fm = QFontMetrics(self.font())
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        label_w = fm.horizontalAdvance("B ") + 4
        length = max(len(d.a.tokens), len(d.b.tokens), 1)
        unit = (self.width() - label_w - 8) / length
        for lane, run in enumerate((d.a, d.b)):
            y = 4 + lane * (self.LANE_H + 4)
            p.setPen(fg)
            p.drawText(QRectF(0, y, label_w, self.LANE_H), Qt.AlignmentFlag.AlignCenter, "AB"[lane])
            if not run.rounds:  # an AR decode: one step a token
                p.fillRect(QRectF(label_w, y + 4, unit * len(run.tokens), self.LANE_H - 8), colors.DRAFT)
            for rnd, start in zip(run.rounds, run.round_starts):
                x = label_w + unit * start
                n, k = len(rnd.new_tokens), min(rnd.k, len(rnd.new_tokens))
                p.fillRect(QRectF(x, y + 2, unit * k, self.LANE_H - 4), colors.ACCEPTED)
                if n > k:
                    tail = colors.BONUS if rnd.k >= len(rnd.candidates) else colors.CORRECTED
                    p.fillRect(QRectF(x + unit * k, y + 2, unit * (n - k), self.LANE_H - 4), tail)
                p.fillRect(QRectF(x, y, 1, self.LANE_H), self.palette().color(QPalette.ColorRole.Window))
        if d.divergence is not None and d.divergence.index >= 0:
            x = label_w + unit * d.divergence.index
            p.fillRect(QRectF(x - 1, 0, 2, 2 * self.LANE_H + 12), colors.REJECTED)
        axis_y = 2 * (self.LANE_H + 4) + 4
        p.setPen(colors.faded(fg, 0.7))
        p.drawText(QRectF(label_w, axis_y, self.width(), fm.height()), Qt.AlignmentFlag.AlignLeft, "output token 0")
        p.drawText(QRectF(0, axis_y, self.width() - 8, fm.height()), Qt.AlignmentFlag.AlignRight, str(length))
        p.end()


class DivergenceBars(QWidget):
    """At the first divergence: A's verifier and B's verifier, ranked, each side's own token marked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.diff: RegionDiff | None = None
        self.setMinimumHeight(120)

    def show_diff(self, diff: RegionDiff | None) -> None:
        self.diff = diff
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802
        d = self.diff.divergence if self.diff is not None else None
        if d is None or (d.a_slot is None and d.b_slot is None):
            paint_hint(self, "No divergence: both decodes wrote the same tokens." if self.diff is not None and d is None
                       else "The distributions at the first divergence appear here when the runs recorded them "
                            "(the reject inspector).")
            return
        p = QPainter(self)
        w = (self.width() - 18) / 2
        for i, (slot, tok, side) in enumerate(((d.a_slot, d.a_token, "A"), (d.b_slot, d.b_token, "B"))):
            box = QRectF(6 + i * (w + 6), 2, w, self.height() - 4)
            if slot is None:
                p.drawText(box, Qt.AlignmentFlag.AlignLeft, f"{side}: not recorded")
                continue
            paint_ranked(self, p, box, f"{side}'s verifier at token {d.index} · entropy {slot.verify_entropy:.2f} bits",
                         slot.verify_top, slot.verify_probs, slot.verify_texts, tok, colors.BONUS)
        p.end()


class ABView(QWidget):
    """Two decodes side by side; `compare(events_a, events_b)` shows them, the buttons load traces."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comparison: Comparison | None = None
        self.current_events: Callable[[], Sequence[Event]] | None = None  # () -> the run shown (DecodingViews sets it)
        self.current_document: Callable[[], str] | None = None  # () -> the document shown (DecodingViews sets it)
        self.document_label = QLabel()  # which document's regions (A's and B's, when they differ)
        self.document_label.setObjectName("ab_document")
        self.region_box = QComboBox()
        self.region_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.region_box.activated.connect(lambda _i: self._show_region())
        self.load_a, self.load_b = QPushButton("Trace A…"), QPushButton("Trace B…")
        self.use_shown = QPushButton("A = the run shown")
        self.load_a.clicked.connect(lambda: self._load("a"))
        self.load_b.clicked.connect(lambda: self._load("b"))
        self.use_shown.clicked.connect(self._shown_as_a)
        self.hint = QLabel(HINT)
        self.hint.setWordWrap(True)
        self.head_a, self.head_b = QLabel(), QLabel()
        self.verdict = QLabel()
        self.lanes, self.bars = RoundLanes(), DivergenceBars()
        self.text_a, self.text_b = QTextBrowser(), QTextBrowser()
        top = QHBoxLayout()
        top.addWidget(self.document_label)
        top.addWidget(QLabel("Region"))
        top.addWidget(self.region_box)
        top.addStretch(1)
        for b in (self.use_shown, self.load_a, self.load_b):
            top.addWidget(b)
        grid = QGridLayout()
        grid.addWidget(self.head_a, 0, 0)
        grid.addWidget(self.head_b, 0, 1)
        grid.addWidget(self.text_a, 1, 0)
        grid.addWidget(self.text_b, 1, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.hint)
        lay.addWidget(self.verdict)
        lay.addWidget(self.lanes)
        lay.addLayout(grid, 1)
        lay.addWidget(self.bars)
        self._events: dict[str, list[Event]] = {"a": [], "b": []}
        self._names = {"a": "", "b": ""}

    def compare(self, events_a: Sequence[Event], events_b: Sequence[Event], *, name_a: str = "A",
                name_b: str = "B") -> Comparison:
        self._events = {"a": list(events_a), "b": list(events_b)}
        self._names = {"a": name_a, "b": name_b}
        return self._refresh()

    def _refresh(self) -> Comparison | None:
        docs = [document_name(trace_document(self._events[side])) for side in "ab"]
        same = docs[0] == docs[1] or not all(self._events[side] for side in "ab")
        self.document_label.setText(f"<b>{docs[0] or docs[1]}</b> ›" if same else
                                    f"A <b>{docs[0] or '?'}</b> · B <b>{docs[1] or '?'}</b> ›")
        self.document_label.setToolTip("The document whose regions are compared (region ids repeat across "
                                       "documents)")
        if not (self._events["a"] and self._events["b"]):
            self.hint.setText(HINT + ("\nA: " + self._names["a"] if self._events["a"] else "")
                              + ("\nB: " + self._names["b"] if self._events["b"] else ""))
            self.hint.show()
            return None
        self.hint.hide()
        self.comparison = compare(self._events["a"], self._events["b"])
        self.region_box.clear()
        for reg in self.comparison.regions:
            self.region_box.addItem(f"{reg.region_id}{'' if reg.same_text else ' ≠'}", reg.region_id)
        first = next((i for i, r in enumerate(self.comparison.regions) if not r.same_text), 0)
        self.region_box.setCurrentIndex(first)
        self._show_region()
        return self.comparison

    def shown(self) -> RegionDiff | None:
        if self.comparison is None or self.region_box.currentIndex() < 0:
            return None
        return self.comparison.regions[self.region_box.currentIndex()]

    def show_region(self, region_id: str) -> None:
        i = self.region_box.findData(region_id)
        if i >= 0:
            self.region_box.setCurrentIndex(i)
            self._show_region()

    def _show_region(self) -> None:
        reg, comp = self.shown(), self.comparison
        self.lanes.show_diff(reg)
        self.bars.show_diff(reg)
        if reg is None or comp is None:
            return
        for side, run, label, head in (("a", reg.a, comp.label_a, self.head_a), ("b", reg.b, comp.label_b, self.head_b)):
            head.setText(f"<b>{side.upper()}</b>: {label} — " + (
                "not in this run" if run is None else
                f"{len(run.tokens)} tokens · TPF {run.tpf:.2f} · {run.decode_ms:.1f} ms · {len(run.rounds)} rounds"))
            head.setToolTip(self._names[side])
        left, right, changed = word_diff(reg.a.text if reg.a else "", reg.b.text if reg.b else "")
        self.text_a.setHtml(left + readings_html(reg.a))  # the text each document got; the decoder's beside it
        self.text_b.setHtml(right + readings_html(reg.b))
        d = reg.divergence
        if d is None:
            self.verdict.setText("Same tokens: no divergence." if reg.same_text else "Only one run decoded this region.")
        elif d.index < 0:
            self.verdict.setText(f"The texts differ from character {d.char} ({changed} word(s)); no tokens recorded.")
        else:
            show = lambda tok, text: "end of output" if tok is None else f"{visible_whitespace(text)!r}"  # noqa: E731
            self.verdict.setText(
                f"First divergence at output token {d.index}: A {show(d.a_token, d.a_text)} vs B "
                f"{show(d.b_token, d.b_text)}, after …{visible_whitespace(d.context[-30:])!r} · "
                f"{changed} word(s) differ")

    def _load(self, side: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, f"Trace {side.upper()}", "", "Traces (*.jsonl);;All files (*)")
        if path:
            self.load_trace(side, path)

    def load_trace(self, side: str, path: str | Path) -> None:
        from app.core.record.trace import TraceError, load_trace

        try:
            trace = load_trace(path)
        except TraceError as exc:
            self.hint.setText(str(exc))
            self.hint.show()
            return
        self._events[side], self._names[side] = list(trace.events), str(path)
        self._refresh()

    def _shown_as_a(self) -> None:
        if self.current_events is not None:
            self._events["a"], self._names["a"] = list(self.current_events()), "the run shown"
            self._refresh()
