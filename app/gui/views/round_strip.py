"""The current round of the acceptance-rounds view (GravityOCR self-speculative decoding: docs/architecture.md, The
self-speculative round).

`RoundStrip`: the current round's B+1 candidate cells (a0, d1..dB) appear together (one draft forward), a verify
sweep turns matching cells green left to right, the first mismatch turns red with the verifier's token under it,
trailing drafts fade; a full accept shows the bonus token in blue. The animation clock lives here too, and the hint
painter the other round panels share.

Reads `RoundRecord`s (app.gui.views.rounds_state); nothing here decodes or keeps its own copy of the run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import (
    QSizePolicy,
    QWidget,
)

from app.gui.views import colors
from app.gui.views.rounds_state import RoundRecord
from app.gui.views.view_frame import paint_hint
from app.gui.views.view_text import _SPECIAL_TOKEN, visible_whitespace

# animation timeline at ×1, in seconds (slowed playback stretches it)
APPEAR_S = 0.12
SWEEP_CELL_S = 0.025
RESOLVE_S = 0.18


@dataclass(frozen=True)
class _Phase:
    """Where a round's animation is: cells fading in, verified so far, the rejected tail fading out."""

    appear: float
    swept: int
    resolve: float


class RoundStrip(QWidget):
    """One round's cells, animated. `show_round(rec)` starts the animation; `tick()` advances it. Clicking a cell
    emits `slot_clicked(slot)` (the inspector opens it)."""

    slot_clicked = Signal(int)  # candidate slot of the shown round (0 = a0)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.record: RoundRecord | None = None
        self._pending: RoundRecord | None = None
        self._painted = False  # has the current round been on screen at least once?
        self.painted_phase = 0.0  # animation phase of the latest paint
        self.skipped = 0  # rounds that arrived while another was animating and were not animated
        self._t0 = 0.0
        self.slow = 1.0  # 2..20 when playback is slowed
        self.setMinimumHeight(84)
        self.setToolTip("One round: a0 is the exact autoregressive prediction of the last confirmed token (always "
                        "accepted); draft 1…B are the masked guesses, accepted left to right until the first the "
                        "verifier disagrees with (rejected, its token below), or all of them plus a bonus token. "
                        "Click a cell to inspect it.")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(600, 84)

    def show_round(self, rec: RoundRecord | None, *, animate: bool = True) -> None:
        """Show a round now (a selection, a region switch); `animate=False` shows it resolved."""
        self.record = rec
        self._pending = None
        self.skipped = 0
        self._t0 = time.monotonic() if animate else -1e9
        self.painted_phase = 0.0
        self.update()

    def offer_round(self, rec: RoundRecord) -> None:
        """A new round arrived live. Rounds often come faster than their animation: the one playing finishes,
        then the newest waiting round plays (the ones in between are in the history, not animated)."""
        if self.record is not None and self._painted and self.animating() and rec.region_id == self.record.region_id:
            if self._pending is not None:
                self.skipped += 1
            self._pending = rec
            return
        # nothing of the current round reached the screen yet (a batch: a scrub, a fast replay): replace it
        self.record = rec
        self._pending = None
        self._painted = False
        self._t0 = time.monotonic()
        self.update()

    def duration(self) -> float:
        rec = self.record
        if rec is None:
            return 0.0
        sweep = min(rec.k + 1, rec.slots)
        return (APPEAR_S + SWEEP_CELL_S * sweep + RESOLVE_S) * self.slow

    def phase(self) -> float:
        """0 when the round just arrived, 1 when its animation has finished."""
        d = self.duration()
        if d <= 0:
            return 1.0
        return max(0.0, min(1.0, (time.monotonic() - self._t0) / d))

    def animating(self) -> bool:
        return self.record is not None and self.phase() < 1.0

    def tick(self) -> bool:
        """Advance the animation (called once a frame); True while there is more to show."""
        if self.record is None:
            return False
        if self._pending is not None and not self.animating():
            self.record, self._pending = self._pending, None
            self._painted = False
            self._t0 = time.monotonic()
        self.update()
        return self.animating() or self._pending is not None

    # painting ---------------------------------------------------------------------------------------------------
    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt name)
        rec = self.record
        self._painted = True
        self.painted_phase = self.phase()  # tests: did the animation reach the screen to its end?
        if rec is None:
            paint_hint(self, "The current round's draft cells appear here.")
            return
        t = (time.monotonic() - self._t0) / max(self.slow, 1e-6)
        n, k = rec.slots, rec.k
        sweep_end = APPEAR_S + SWEEP_CELL_S * min(k + 1, n)
        phase = _Phase(appear=min(1.0, t / APPEAR_S) if APPEAR_S else 1.0,
                       swept=int((t - APPEAR_S) / SWEEP_CELL_S) if t > APPEAR_S else -1,  # cells verified so far
                       resolve=max(0.0, min(1.0, (t - sweep_end) / RESOLVE_S)) if t > sweep_end else 0.0)
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = QFont(self.font())
        small = QFont(font)
        small.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        self._paint_header(p, rec, font, small)
        for i in range(n + 1):
            self._paint_cell(p, rec, i, self.cell_rect(i), phase, font, small)
        if phase.resolve > 0:  # a dot on the cells the reject inspector recorded (click one: the inspector)
            p.setPen(QPen(colors.faded(QColor("#000000"), 0.6), 1.0))
            p.setBrush(QColor("#ffffff"))
            for slot in rec.inspected:
                r = self.cell_rect(slot.position)
                p.drawEllipse(QPointF(r.right() - 5, r.top() + 5), 2.5, 2.5)
        p.end()

    def cell_rect(self, i: int) -> QRectF:
        """Where cell `i` of the shown round is drawn (slot i; the last cell holds the bonus)."""
        cells = (self.record.slots if self.record is not None else 0) + 1
        gap = 3.0
        cw = max(14.0, min(72.0, (self.width() - 16 - gap * (cells - 1)) / cells))
        return QRectF(8 + i * (cw + gap), QFontMetrics(self.font()).height() + 8, cw, 34.0)

    def slot_at(self, x: float, y: float) -> int | None:
        """The candidate slot under a point (the cell or the verifier's token under it), or None."""
        if self.record is None:
            return None
        for i in range(self.record.slots):
            r = self.cell_rect(i)
            if r.left() <= x <= r.right() and r.top() <= y <= r.bottom() + QFontMetrics(self.font()).height() + 6:
                return i
        return None

    def mousePressEvent(self, event) -> None:  # noqa: N802
        slot = self.slot_at(event.position().x(), event.position().y())
        if slot is not None:
            self.slot_clicked.emit(slot)
            return
        super().mousePressEvent(event)

    def _paint_header(self, p: QPainter, rec: RoundRecord, font: QFont, small: QFont) -> None:
        """One line: which round, how much was accepted, the times; the colour legend at the right when it fits."""
        fm, sfm = QFontMetrics(font), QFontMetrics(small)
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        n, k = rec.slots, rec.k
        ended = f" · ended at slot {rec.cut - 1}" if rec.cut is not None else ""
        header = (
            f"{rec.region_id} · round {rec.round_index + 1} · accepted {rec.used}/{n} drafts{ended}"
            f" · +{rec.accepted} token{'s' if rec.accepted != 1 else ''}"
            f" · draft {rec.draft_ms:.1f} ms · verify {rec.verify_ms:.1f} ms · cache {rec.cache_len}"
        )
        legend = (("accepted", colors.ACCEPTED), ("rejected", colors.REJECTED), ("verifier's token", colors.CORRECTED),
                  ("bonus", colors.BONUS), ("draft", colors.DRAFT))
        legend_w = sum(13 + sfm.horizontalAdvance(name) + 12 for name, _ in legend)
        show_legend = self.width() - 16 - legend_w > fm.horizontalAdvance(header) * 0.6
        header_w = self.width() - 16 - (legend_w if show_legend else 0)
        p.setPen(fg)
        p.drawText(QRectF(8, 2, header_w, fm.height() + 2), Qt.AlignmentFlag.AlignLeft,
                   fm.elidedText(header, Qt.TextElideMode.ElideRight, int(header_w)))
        if not show_legend:
            return
        p.setFont(small)
        lx = self.width() - 8.0 - legend_w + 12
        for name, c in legend:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(c)
            p.drawRect(QRectF(lx, 2 + (fm.height() - 9) / 2, 9, 9))
            p.setPen(colors.faded(fg, 0.8))
            p.drawText(QPointF(lx + 13, 2 + (fm.height() + sfm.ascent()) / 2 - 1), name)
            lx += 13 + sfm.horizontalAdvance(name) + 12

    def _paint_cell(self, p: QPainter, rec: RoundRecord, i: int, r: QRectF, phase: "_Phase", font: QFont,
                    small: QFont) -> None:
        """Cell `i` of the round at this point of its animation: a draft, accepted, rejected (with the verifier's
        token under it), or the bonus cell after a full accept."""
        fm, sfm = QFontMetrics(font), QFontMetrics(small)
        n, k = rec.slots, rec.k
        x, y, cw, ch = r.x(), r.y(), r.width(), r.height()
        is_extra = i == n
        if is_extra:  # correction (in the mismatch cell) or bonus: only the bonus gets its own cell
            if not rec.full_accept or phase.resolve <= 0:
                return
            color, label, alpha = colors.BONUS, rec.bonus_text(), phase.resolve
        else:
            label = rec.candidate_texts[i] if i < len(rec.candidate_texts) else f"#{rec.candidates[i]}"
            state = rec.slot_state(i)
            if state == "accepted" and _SPECIAL_TOKEN.fullmatch(label or ""):
                label = "stop"  # the stop token: the decode ends here
            color, alpha = colors.DRAFT, phase.appear
            if state == "unused":  # after the stop token: never output, greyed from the start
                alpha = phase.appear * 0.25
            elif phase.swept >= i and state == "accepted":
                color = colors.ACCEPTED
            elif phase.swept >= i and state == "rejected":
                color = colors.REJECTED
            elif i > k and phase.resolve > 0:
                alpha = phase.appear * (1.0 - 0.75 * phase.resolve)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colors.faded(color, alpha))
        p.drawRoundedRect(r, 4, 4)
        p.setPen(colors.faded(colors.text_on(color), max(alpha, 0.35)))
        p.setFont(font)
        p.drawText(r, Qt.AlignmentFlag.AlignCenter,
                   fm.elidedText(visible_whitespace(label), Qt.TextElideMode.ElideRight, int(cw - 4)))
        if not is_extra and rec.slot_state(i) == "rejected" and phase.swept >= k:
            # the verifier's token under the rejected draft, struck-through draft above
            p.setPen(QPen(colors.faded(colors.text_on(color), 0.9), 1.2))
            p.drawLine(QPointF(x + 3, y + ch / 2), QPointF(x + cw - 3, y + ch / 2))
            vt = rec.verified_texts[k] if k < len(rec.verified_texts) else f"#{rec.verified[k]}"
            vr = QRectF(x - 2, y + ch + 2, cw + 4, sfm.height() + 4)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(colors.CORRECTED)
            p.drawRoundedRect(vr, 3, 3)
            p.setFont(small)
            p.setPen(colors.text_on(colors.CORRECTED))
            p.drawText(vr, Qt.AlignmentFlag.AlignCenter,
                       sfm.elidedText(visible_whitespace(vt), Qt.TextElideMode.ElideRight, int(cw)))
        if is_extra or rec.slot_state(i) != "rejected":  # its position, unless the verifier's token sits under it
            p.setFont(small)
            p.setPen(colors.faded(self.palette().color(QPalette.ColorRole.WindowText), 0.6))
            name = "unused" if not is_extra and rec.slot_state(i) == "unused" else "a0" if i == 0 else f"draft {i}"
            p.drawText(QRectF(x, y + ch + 2, cw, sfm.height() + 4), Qt.AlignmentFlag.AlignCenter,
                       sfm.elidedText(name, Qt.TextElideMode.ElideRight, int(cw)))


