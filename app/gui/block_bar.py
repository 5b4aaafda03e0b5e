"""The strip above the editor that describes the block under the cursor: its id, label and task, whether it was
edited, where its text came from (the text layer or OCR), its character error rate against the page's text layer
(a badge), and a Diff button that shows the difference between the decoded text and the text layer on demand.
Also the conflict prompt line: "re-run gave new text for this edited block — use it?" without a modal dialog."""
from __future__ import annotations

import difflib
import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QTextBrowser, QVBoxLayout, QWidget

from app.core.pipeline.quality import region_confidence, region_outcome
from app.core.pipeline.text_source import text_source
from app.core.document.regions import DECODED_TASKS
from app.core.review.document import Block
from app.gui.text_diff import side_by_side
from app.gui.theme import icon


def cer_color(cer: float) -> str:
    return "#1f9d55" if cer <= 0.02 else "#b7950b" if cer <= 0.10 else "#c0392b"


def diff_spans(before: str, after: str) -> str:
    """`before` → `after` as HTML: what went struck on red, what came on green, the rest as it is."""
    out = []
    sm = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op == "equal":
            out.append(html.escape(before[a0:a1]))
            continue
        if a1 > a0:
            out.append(f'<span style="background:#f5b7b1; text-decoration: line-through;">{html.escape(before[a0:a1])}</span>')
        if b1 > b0:
            out.append(f'<span style="background:#abebc6;">{html.escape(after[b0:b1])}</span>')
    return "".join(out).replace("\n", "<br>")


def diff_html(ocr: str, reference: str) -> str:
    """The text layer beside the decoded text, word by word (app.gui.text_diff)."""
    return side_by_side(reference, ocr, "Text layer", "Decoded")


class BlockBar(QWidget):
    diff_toggled = Signal(bool)
    use_ocr_requested = Signal(str)
    keep_edit_requested = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 3, 6, 3)
        row = QHBoxLayout()
        outer.addLayout(row)
        self.title = QLabel("No block")
        self.title.setObjectName("block_title")
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.badge = QLabel()
        self.badge.setObjectName("cer_badge")
        self.badge.setToolTip("Character error rate of the decoded text against the PDF's own text layer")
        self.diff_button = QPushButton(icon("diff"), "Diff")
        self.diff_button.setCheckable(True)
        self.diff_button.setToolTip("Show the decoded text against the page's text layer")
        self.diff_button.toggled.connect(self._toggle_diff)
        row.addWidget(self.title, 1)
        row.addWidget(self.badge)
        row.addWidget(self.diff_button)
        self.conflict = QWidget()
        crow = QHBoxLayout(self.conflict)
        crow.setContentsMargins(0, 2, 0, 0)
        self.conflict_label = QLabel()
        self.conflict_label.setWordWrap(True)
        self.conflict_label.setTextFormat(Qt.TextFormat.RichText)
        self.use_ocr = QPushButton("Use new OCR")
        self.keep_edit = QPushButton("Keep my edit")
        self.compare = QPushButton("Compare")
        self.compare.setCheckable(True)
        self.compare.setToolTip("The reading your edit was made over beside the new one, word by word")
        self.compare.toggled.connect(lambda _on: self._toggle_diff(self.diff_button.isChecked()))
        crow.addWidget(self.conflict_label, 1)
        crow.addWidget(self.compare)
        crow.addWidget(self.use_ocr)
        crow.addWidget(self.keep_edit)
        self.use_ocr.clicked.connect(lambda: self.use_ocr_requested.emit(self.block_id))
        self.keep_edit.clicked.connect(lambda: self.keep_edit_requested.emit(self.block_id))
        outer.addWidget(self.conflict)
        self.diff = QTextBrowser()
        self.diff.setMinimumHeight(120)
        self.diff.setMaximumHeight(360)
        self.diff.setVisible(False)
        outer.addWidget(self.diff)
        self.block_id = ""
        self._block: Block | None = None
        self.show_block(None)

    def show_block(self, block: Block | None) -> None:
        self._block = block
        self.block_id = block.id if block else ""
        if block is None:
            self.title.setText("No block under the cursor")
            self.badge.setVisible(False)
            self.diff_button.setEnabled(False)
            self.conflict.setVisible(False)
            self.diff.setVisible(False)
            return
        r = block.region
        bits = [f"<b>{html.escape(r.id)}</b>", html.escape(r.label), html.escape(r.task), f"page {r.page + 1}"]
        if block.status not in ("done", "skipped"):
            bits.append(html.escape(block.status))
        source = text_source(r)
        if source is not None:  # where the text came from: the PDF's own text layer or OCR
            bits.append("from the text layer" if source == "text-layer" else "OCR")
        if block.status in ("done", "failed", "cancelled") and r.task in DECODED_TASKS:
            outcome, conf = region_outcome(r), region_confidence(r)
            if outcome != "ok":
                bits.append(f"<b>{html.escape(outcome)}</b>")
            bits.append(f"confidence {conf['mean']:.0%}" if conf else "confidence: none reported")
        if block.reviewed:
            bits.append("reviewed ✓")
        if block.edited:
            bits.append("<i>edited</i>")
        self.title.setText(" · ".join(bits))
        has_ref = bool(block.reference) or block.cer is not None
        self.badge.setVisible(block.cer is not None)
        if block.cer is not None:
            # CER counts insertions too, so garbage output can score thousands of percent: say "> 100%" then
            self.badge.setText(f"CER {block.cer * 100:.1f}%" if block.cer <= 1 else "CER > 100%")
            self.badge.setToolTip(f"character error rate against the PDF's own text: {block.cer * 100:.1f}% "
                                  "(edits needed per character of the text layer)")
            self.badge.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.badge.setStyleSheet(f"background: {cer_color(block.cer)}; color: white; border-radius: 8px; padding: 1px 8px;")
            self.badge.setFixedWidth(self.badge.fontMetrics().horizontalAdvance(self.badge.text()) + 22)
        self.diff_button.setEnabled(has_ref)
        self.conflict.setVisible(block.pending_ocr is not None)
        if block.pending_ocr is not None:  # what the new reading changed, against the one the edit was made over
            change = diff_spans(block.previous_ocr, block.pending_ocr)
            self.conflict_label.setText(f"OCR read this edited block differently: <span style='font-family:monospace'>"
                                        f"{change}</span>")
            self.conflict_label.setToolTip("Struck: only in the reading your edit was made over; green: only in the "
                                           "new reading. Your edit is kept until you choose.")
        self._toggle_diff(self.diff_button.isChecked())

    def _toggle_diff(self, on: bool) -> None:
        block = self._block
        conflict = bool(block is not None and block.pending_ocr is not None and self.compare.isChecked())
        show = conflict or bool(on and block is not None and (block.reference or block.cer is not None))
        self.diff.setVisible(show)
        if conflict:
            self.diff.setHtml(side_by_side(block.previous_ocr, block.pending_ocr, "Reading your edit was made over",
                                           "New reading"))
        elif show:
            text = block.markdown if block.edited else (block.raw_text or block.markdown)
            self.diff.setHtml(diff_html(text, block.reference))
        self.diff_toggled.emit(show)
