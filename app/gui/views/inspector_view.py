"""The reject inspector of the acceptance-rounds view: why a draft was rejected (or accepted) at one slot of a round.

- `InspectorBars`: two ranked bar charts side by side, the drafter's top-k (the mask row that guessed the slot) and
  the verifier's (the causal row that checked it), token texts and probabilities, the drafted token marked in both;
  each chart's entropy, the margin and the round's context (the text committed before it) above.
- `ClosestCalls`: the shown region's rejections sorted by margin (closest calls first); activating one jumps to
  its round and opens it in the inspector.

Reads `RoundRecord`/`RegionRounds` (app.gui.views.rounds_state) and the events' `SlotInspection`; nothing here
decodes.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from app.core.record.events import SlotInspection
from app.gui.views import colors
from app.gui.views.rounds_state import RegionRounds, RoundRecord
from app.gui.views.view_frame import paint_hint
from app.gui.views.view_text import visible_whitespace

HINT = ("Click a cell of the round above (a red one: a rejected draft) to see what the drafter and the verifier "
        "believed there: their top 5 tokens, how sure each was, and how close the call was.")


def slot_name(position: int, block: int) -> str:
    return "a0 (the exact AR token)" if position == 0 else f"draft {position} of {block}"


class InspectorBars(QWidget):
    """One slot of one round: context, verdict, margin, and the two ranked distributions."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.region: RegionRounds | None = None
        self.record: RoundRecord | None = None
        self.position: int | None = None

    TOP = 5  # the ranked rows each chart shows (the events' top 5)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        """Room for the four lines above the charts, a chart's title and its five rows, each a line high: at the
        dock's default height no row is lost (the dock scrolls instead)."""
        fh = self.fontMetrics().height()
        return QSize(300, 4 + 4 * (fh + 1) + 4 + fh + 4 + self.TOP * (fh + 2) + 4)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(520, max(220, self.minimumSizeHint().height()))

    def show_slot(self, region: RegionRounds | None, rec: RoundRecord | None, position: int | None) -> None:
        self.region, self.record, self.position = region, rec, position
        self.update()

    def clear(self) -> None:
        self.show_slot(None, None, None)

    @property
    def slot(self) -> SlotInspection | None:
        return self.record.slot(self.position) if self.record is not None and self.position is not None else None

    def lines(self) -> list[str]:
        """The text lines above the charts (tests read them): where, verdict, margin, context."""
        rec, pos = self.record, self.position
        if rec is None or pos is None:
            return []
        drafted = rec.candidate_texts[pos] if pos < len(rec.candidate_texts) else f"#{rec.candidates[pos]}"
        verified = rec.verified_texts[pos] if pos < len(rec.verified_texts) else ""
        if rec.slot_state(pos) == "unused":
            verdict = (f"unused: the decode ended at slot {rec.cut - 1} (the stop token), so draft "
                       f"{visible_whitespace(drafted)!r} was never output nor counted")
        elif pos < rec.k:
            verdict = f"accepted: draft {visible_whitespace(drafted)!r} = verifier"
        elif pos == rec.k:
            verdict = f"REJECTED: draft {visible_whitespace(drafted)!r} ≠ verifier {visible_whitespace(verified)!r}"
        else:
            verdict = f"discarded (after the rejection at slot {rec.k}): draft {visible_whitespace(drafted)!r}"
        head = (f"{rec.region_id} · round {rec.round_index + 1} · slot {pos}: {slot_name(pos, rec.block_size)} · "
                f"output token {rec.token_start + pos}")
        out = [head, verdict]
        slot = self.slot
        if slot is not None:
            out.append(f"margin {slot.margin:.3f} (verifier's top-1 {slot.verify_probs[0]:.3f} − its p(draft) "
                       f"{slot.verify_p_drafted:.3f}) · drafter's p(draft) {slot.draft_p_drafted:.3f}")
        elif pos < len(rec.probs) and pos <= rec.k:
            out.append(f"the verifier gave the committed token p = {rec.probs[pos]:.3f}; the full distributions "
                       f"here were not recorded (the engine's inspector records the rejected slot; every slot with "
                       f"InspectOptions(all_slots=True), as the A/B decode does)")
        else:
            out.append("no inspector data for this round (a trace recorded without it, or a remote server)")
        if self.region is not None:  # what the model had written: before the round, then the round's slots before
            ctx = self.region.context_before(rec, 50)
            inside = "".join(rec.candidate_texts[:pos])
            out.append(f"context: …{visible_whitespace(ctx)}" + (f"⟨{visible_whitespace(inside)}⟩" if inside else "")
                       + "▮")
        return out

    def paintEvent(self, _event) -> None:  # noqa: N802
        rec, pos = self.record, self.position
        if rec is None or pos is None:
            paint_hint(self, HINT)
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        font = QFont(self.font())
        fm = QFontMetrics(font)
        y = 4.0
        for i, line in enumerate(self.lines()):
            p.setPen(colors.REJECTED if i == 1 and pos == rec.k and not rec.full_accept else fg)
            p.drawText(QRectF(6, y, self.width() - 12, fm.height()), Qt.AlignmentFlag.AlignLeft,
                       fm.elidedText(line, Qt.TextElideMode.ElideRight, self.width() - 12))
            y += fm.height() + 1
        slot = self.slot
        if slot is None:
            p.end()
            return
        y += 4
        w = (self.width() - 18) / 2
        mark = colors.ACCEPTED if slot.accepted else colors.REJECTED
        paint_ranked(self, p, QRectF(6, y, w, self.height() - y - 4),
                     f"drafter (mask row) · entropy {slot.draft_entropy:.2f} bits", slot.draft_top,
                     slot.draft_probs, slot.draft_texts, slot.drafted, mark)
        paint_ranked(self, p, QRectF(12 + w, y, w, self.height() - y - 4),
                     f"verifier (causal row) · entropy {slot.verify_entropy:.2f} bits", slot.verify_top,
                     slot.verify_probs, slot.verify_texts, slot.drafted, mark)
        p.end()


def paint_ranked(widget: QWidget, p: QPainter, box: QRectF, title: str, ids: list[int], probs: list[float],
                 texts: list[str], marked: int | None, mark_color: QColor) -> None:
    """A ranked bar chart of one distribution's top tokens (text, bar, percentage); the token `marked` (e.g. the
    drafted one) in `mark_color`, the top-1 otherwise in the verifier's colour."""
    fg = widget.palette().color(QPalette.ColorRole.WindowText)
    fm = QFontMetrics(widget.font())
    p.setPen(fg)
    p.drawText(QRectF(box.left(), box.top(), box.width(), fm.height()), Qt.AlignmentFlag.AlignLeft,
               fm.elidedText(title, Qt.TextElideMode.ElideRight, int(box.width())))
    rows = max(1, len(ids))
    row_h = min(fm.height() + 6, (box.height() - fm.height() - 4) / rows)
    label_w = min(box.width() * 0.35, max((fm.horizontalAdvance(visible_whitespace(t)) for t in texts),
                                          default=20) + 8)
    num_w = fm.horizontalAdvance("100.0%") + 6
    bar_w = max(10.0, box.width() - label_w - num_w)
    top = box.top() + fm.height() + 4
    for i, (tid, prob) in enumerate(zip(ids, probs)):
        r = QRectF(box.left(), top + i * row_h, box.width(), row_h - 2)
        text = texts[i] if i < len(texts) else f"#{tid}"
        color = mark_color if tid == marked else (colors.CORRECTED if i == 0 else colors.DRAFT)
        p.setPen(fg)
        p.drawText(QRectF(r.left(), r.top(), label_w - 4, r.height()),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                   fm.elidedText(visible_whitespace(text), Qt.TextElideMode.ElideRight, int(label_w - 4)))
        p.fillRect(QRectF(r.left() + label_w, r.top() + 2, max(1.0, bar_w * prob), r.height() - 4), color)
        p.drawText(QRectF(r.left() + label_w + bar_w, r.top(), num_w, r.height()),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"{100 * prob:.1f}%")


class ClosestCalls(QListWidget):
    """The shown region's rejections, closest calls (smallest margin) first; activating one emits its round."""

    call_chosen = Signal(int, int)  # round index in the region, slot

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.region: RegionRounds | None = None
        self._count = -1
        self.setToolTip("Rejected drafts sorted by margin (the verifier's top-1 probability minus its probability "
                        "of the drafted token): the closest calls first. Click one to open it in the inspector.")
        self.itemClicked.connect(self._chosen)
        self.itemActivated.connect(self._chosen)

    def sync(self, region: RegionRounds | None) -> None:
        n = len(region.rounds) if region is not None else 0
        if region is self.region and n == self._count:
            return
        self.region, self._count = region, n
        self.clear()
        if region is None:
            return
        for rec, slot in region.rejections():
            item = QListWidgetItem(
                f"margin {slot.margin:.3f} · round {rec.round_index + 1} · slot {slot.position}: "
                f"{visible_whitespace(slot.drafted_text)!r} → {visible_whitespace(slot.verify_texts[0] if slot.verify_texts else '')!r}"
                f" · …{visible_whitespace(region.context_before(rec, 24))}")
            item.setData(Qt.ItemDataRole.UserRole, (rec.index, slot.position))
            self.addItem(item)

    def _chosen(self, item: QListWidgetItem) -> None:
        index, position = item.data(Qt.ItemDataRole.UserRole)
        self.call_chosen.emit(int(index), int(position))
