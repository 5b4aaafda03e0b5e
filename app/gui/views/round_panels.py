"""The round-by-round panels of the acceptance-rounds view (GravityOCR self-speculative decoding, DESIGN §3).

- `RoundHistory`: one compact painted row per round (accepted-length bar, reject marker); scrollable, selectable.
  Only visible rows are painted, so 10,000 rounds cost what 40 do.
- `StatsPanel`: TPF, mean accepted per round, acceptance histogram, per-position acceptance rate, draft vs verify
  time per round, tokens/s against the AR baseline when known.

Everything reads `RegionRounds` (app.gui.views.rounds_state); nothing here decodes or keeps its own copy of the run.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
    QPainter,
    QPalette,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QToolTip,
    QWidget,
)

from app.gui.views import colors
from app.gui.views.rounds_state import RegionRounds
from app.gui.views.view_frame import paint_hint


class RoundHistory(QAbstractScrollArea):
    """One row per round of the shown region; click or arrow keys select. Paints visible rows only."""

    round_clicked = Signal(int)  # index in the region's round list

    ROW_H = 16

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.region: RegionRounds | None = None
        self.selected: int | None = None
        self._rows = 0
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(150, 3 * self.ROW_H)
        self.verticalScrollBar().setSingleStep(self.ROW_H)

    def row_count(self) -> int:
        return len(self.region.rounds) if self.region else 0

    def sync(self, region: RegionRounds | None, *, follow: bool) -> None:
        self.region = region
        n = self.row_count()
        sb = self.verticalScrollBar()
        at_bottom = sb.value() >= sb.maximum() - self.ROW_H
        sb.setRange(0, max(0, n * self.ROW_H - self.viewport().height()))
        sb.setPageStep(self.viewport().height())
        if n != self._rows and (follow or at_bottom):
            sb.setValue(sb.maximum())
        self._rows = n
        self.viewport().update()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.sync(self.region, follow=False)

    def select(self, index: int | None, *, scroll: bool = True) -> None:
        self.selected = index
        if index is not None and scroll:
            top = index * self.ROW_H
            sb = self.verticalScrollBar()
            if top < sb.value() or top + self.ROW_H > sb.value() + self.viewport().height():
                sb.setValue(top - self.viewport().height() // 2)
        self.viewport().update()

    def row_at(self, y: float) -> int | None:
        i = int((y + self.verticalScrollBar().value()) // self.ROW_H)
        return i if 0 <= i < self.row_count() else None

    def viewportEvent(self, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ToolTip and self.region is not None:
            i = self.row_at(event.pos().y())
            if i is not None:
                QToolTip.showText(event.globalPos(), self.region.rounds[i].describe(), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def mousePressEvent(self, event) -> None:  # noqa: N802
        i = self.row_at(event.position().y())
        if i is not None:
            self.round_clicked.emit(i)

    def keyPressEvent(self, event) -> None:  # noqa: N802
        n = self.row_count()
        if n and event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            cur = self.selected if self.selected is not None else n
            cur = max(0, min(n - 1, cur + (1 if event.key() == Qt.Key.Key_Down else -1)))
            self.round_clicked.emit(cur)
            return
        super().keyPressEvent(event)

    def paintEvent(self, _event) -> None:  # noqa: N802
        vp = self.viewport()
        if not self.row_count():
            p = QPainter(vp)
            p.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            p.drawText(vp.rect().adjusted(8, 8, -8, -8), Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap, "Round history")
            p.end()
            return
        assert self.region is not None
        rounds = self.region.rounds
        p = QPainter(vp)
        pal = self.palette()
        fg = pal.color(QPalette.ColorRole.Text)
        fm = QFontMetrics(self.font())
        off = self.verticalScrollBar().value()
        first = max(0, off // self.ROW_H)
        last = min(len(rounds), (off + vp.height()) // self.ROW_H + 1)
        slots = max((r.slots for r in rounds[first:last]), default=1) + 1
        label_w = fm.horizontalAdvance(f"#{len(rounds)}") + 8
        tail_w = fm.horizontalAdvance("+99") + 6
        bar_x = label_w
        bar_w = max(20, vp.width() - label_w - tail_w - 4)
        unit = bar_w / slots
        faint = colors.faded(colors.DRAFT, 0.25)
        for i in range(first, last):
            rec = rounds[i]
            y = i * self.ROW_H - off
            if i == self.selected:
                p.fillRect(0, y, vp.width(), self.ROW_H, pal.color(QPalette.ColorRole.Highlight))
                text_c = pal.color(QPalette.ColorRole.HighlightedText)
            else:
                if i % 2:
                    p.fillRect(0, y, vp.width(), self.ROW_H, pal.color(QPalette.ColorRole.AlternateBase))
                text_c = fg
            p.setPen(colors.faded(text_c, 0.7))
            p.drawText(QRectF(2, y, label_w - 4, self.ROW_H), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"#{rec.round_index + 1}")
            k = min(rec.k, rec.slots)
            bh = self.ROW_H - 5
            by = y + 2.5
            # fillRect, not drawRect: the raster engine's fast path (rows are repainted every frame while live)
            if k:
                p.fillRect(QRectF(bar_x, by, unit * k, bh), colors.ACCEPTED)
            extra = rec.accepted - k
            if extra > 0:
                p.fillRect(QRectF(bar_x + unit * k, by, unit * extra, bh), colors.BONUS if rec.full_accept else colors.CORRECTED)
            if not rec.full_accept:  # reject marker where the first draft failed, then the drafts it threw away
                mx = bar_x + unit * (k + max(extra, 0))
                p.fillRect(QRectF(mx, by - 1, 2.5, bh + 2), colors.REJECTED)
                p.fillRect(QRectF(mx + 2.5, by, unit * max(0, rec.slots - k - 1), bh), faint)
            p.setPen(text_c)
            p.drawText(QRectF(vp.width() - tail_w, y, tail_w - 2, self.ROW_H), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"+{rec.accepted}")
        p.end()


class StatsPanel(QWidget):
    """Numbers and three small charts for the shown region."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.region: RegionRounds | None = None
        self.baseline_tps: float | None = None
        self.setMinimumSize(240, 120)

    def sizeHint(self) -> QSize:
        return QSize(400, 170)

    def sync(self, region: RegionRounds | None, baseline_tps: float | None) -> None:
        self.region, self.baseline_tps = region, baseline_tps
        self.update()

    def summary(self) -> str:
        reg = self.region
        if reg is None or not reg.rounds:
            return ""
        parts = [
            f"TPF {reg.tpf:.2f}",
            f"mean accepted {reg.mean_accepted:.2f}/round",
            f"{len(reg.rounds):,} rounds",
            f"{reg.tokens:,} tokens",
        ]
        tps = reg.tokens_per_s
        if tps:
            s = f"{tps:,.0f} tok/s"
            if self.baseline_tps:
                s += f" (AR {self.baseline_tps:,.0f} tok/s, ×{tps / self.baseline_tps:.2f})"
            parts.append(s)
        return " · ".join(parts)

    def paintEvent(self, _event) -> None:  # noqa: N802
        reg = self.region
        if reg is None or not reg.rounds:
            paint_hint(self, "Statistics: TPF, acceptance histogram, per-position acceptance, draft vs verify time.")
            return
        p = QPainter(self)
        pal = self.palette()
        fg = pal.color(QPalette.ColorRole.WindowText)
        fm = QFontMetrics(self.font())
        p.setPen(fg)
        head = QRectF(6, 2, self.width() - 12, 2 * fm.height() + 2)
        used = p.boundingRect(head, Qt.TextFlag.TextWordWrap, self.summary())
        p.drawText(head, Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap, self.summary())
        top = min(used.height(), head.height()) + 8
        h = self.height() - top - 4
        w = (self.width() - 12 - 2 * 10) / 3
        boxes = [QRectF(6 + i * (w + 10), top, w, h) for i in range(3)]
        # 1. accepted tokens per round
        slots = max(len(reg.pos_total), 1) + 1
        hist = [reg.histogram.get(i, 0) for i in range(1, slots + 1)]
        self._bars(p, boxes[0], "accepted/round", hist, colors.ACCEPTED, f"1…{slots}")
        # 2. acceptance rate by draft position (a0, d1..dB)
        self._bars(p, boxes[1], "by position", reg.position_rates(), colors.BONUS, f"a0…d{slots - 2}", vmax=1.0)
        # 3. draft vs verify ms, last rounds
        self._latency(p, boxes[2], reg)
        p.end()

    def _frame(self, p: QPainter, box: QRectF, title: str, foot: str) -> QRectF:
        fm = QFontMetrics(self.font())
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        p.setPen(colors.faded(fg, 0.8))
        p.drawText(QRectF(box.left(), box.top(), box.width(), fm.height()), Qt.AlignmentFlag.AlignLeft, fm.elidedText(title, Qt.TextElideMode.ElideRight, int(box.width())))
        p.setPen(colors.faded(fg, 0.55))
        p.drawText(QRectF(box.left(), box.bottom() - fm.height(), box.width(), fm.height()), Qt.AlignmentFlag.AlignLeft, fm.elidedText(foot, Qt.TextElideMode.ElideRight, int(box.width())))
        inner = QRectF(box.left(), box.top() + fm.height() + 2, box.width(), box.height() - 2 * fm.height() - 4)
        p.fillRect(QRectF(inner.left(), inner.bottom(), inner.width(), 1), colors.faded(fg, 0.25))  # fillRect: cheap
        return inner

    def _bars(self, p: QPainter, box: QRectF, title: str, values, color: QColor, foot: str, vmax: float | None = None) -> None:
        inner = self._frame(p, box, title, foot)
        if not values:
            return
        top = vmax or max(max(values), 1e-9)
        bw = inner.width() / len(values)
        for i, v in enumerate(values):
            bh = inner.height() * (v / top if top else 0)
            p.fillRect(QRectF(inner.left() + i * bw + 0.5, inner.bottom() - bh, max(1.0, bw - 1), bh), color)

    def _latency(self, p: QPainter, box: QRectF, reg: RegionRounds) -> None:
        recent = reg.rounds[-80:]
        avg_d = reg.draft_ms / len(reg.rounds)
        avg_v = reg.verify_ms / len(reg.rounds)
        inner = self._frame(p, box, "draft | verify ms", f"{avg_d:.1f} | {avg_v:.1f} ms")
        top = max((r.draft_ms + r.verify_ms for r in recent), default=1.0) or 1.0
        bw = inner.width() / max(len(recent), 1)
        for i, r in enumerate(recent):
            x = inner.left() + i * bw
            hd = inner.height() * r.draft_ms / top
            hv = inner.height() * r.verify_ms / top
            p.fillRect(QRectF(x, inner.bottom() - hd, max(1.0, bw - 0.5), hd), colors.DRAFT)
            p.fillRect(QRectF(x, inner.bottom() - hd - hv, max(1.0, bw - 0.5), hv), colors.WINDOW)


