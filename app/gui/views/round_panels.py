"""The round-by-round panels of the acceptance-rounds view (GravityOCR self-speculative decoding: docs/architecture.md,
The self-speculative round).

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
        self.ROW_H = max(self.ROW_H, self.fontMetrics().height() + 2)  # a row holds its text at any font size
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
        # whole rows only: the viewport's height is a multiple of the row height, so no row is shown cut in half
        frame = self.height() - 2 * self.frameWidth()
        spare = frame % self.ROW_H
        if self.viewportMargins().bottom() != spare:
            self.setViewportMargins(0, 0, 0, spare)
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
            k = rec.used  # slots after a stop token are not accepted
            bh = self.ROW_H - 5
            by = y + 2.5
            # fillRect, not drawRect: the raster engine's fast path (rows are repainted every frame while live)
            if k:
                p.fillRect(QRectF(bar_x, by, unit * k, bh), colors.ACCEPTED)
            extra = rec.accepted - k
            if extra > 0:
                p.fillRect(QRectF(bar_x + unit * k, by, unit * extra, bh), colors.BONUS if rec.full_accept else colors.CORRECTED)
            if rec.cut is not None:  # the decode ended inside the round: the slots after it, unused
                p.fillRect(QRectF(bar_x + unit * rec.cut, by, unit * max(0, rec.slots - rec.cut), bh), faint)
            elif not rec.full_accept:  # reject marker where the first draft failed, then the drafts it threw away
                mx = bar_x + unit * (k + max(extra, 0))
                p.fillRect(QRectF(mx + 4, by, unit * max(0, rec.slots - k - 1), bh), faint)
                p.fillRect(QRectF(mx, by - 2, 4, bh + 4), colors.REJECTED)  # the reject: a bar taller than the row
            p.setPen(text_c)
            p.drawText(QRectF(vp.width() - tail_w, y, tail_w - 2, self.ROW_H), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"+{rec.accepted}")
        p.end()


STATS_TIP = (
    "<b>TPF</b> (tokens per forward): response tokens ÷ (draft + verify forwards); prefill and the vision encoder "
    "are not counted. Autoregressive decoding has TPF 1.<br><b>Mean accepted</b>: tokens one round commits on "
    "average (1 … B+2: the accepted drafts, plus the verifier's token or the bonus).<br><b>a0</b>: the first candidate "
    "of a round, the exact autoregressive prediction of the last confirmed token (always accepted); <b>draft 1…B</b>: "
    "the masked guesses after it.")


class StatsPanel(QWidget):
    """The shown region's figures and three charts with axes, counts and legends: rounds by tokens accepted,
    acceptance by draft position (a0, draft 1…B), and draft against verify time."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.region: RegionRounds | None = None
        self.baseline_tps: float | None = None
        self.setMinimumSize(300, 116)
        self.setToolTip(STATS_TIP)

    def sizeHint(self) -> QSize:
        return QSize(460, 170)

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

    def charts(self) -> list[tuple[str, list[str], list[float]]]:
        """(title, x labels, values) of the three charts, as drawn (tests read them)."""
        reg = self.region
        if reg is None or not reg.rounds:
            return []
        slots = max(len(reg.pos_total), 1)  # a0 + B drafts
        hist = [float(reg.histogram.get(i, 0)) for i in range(1, slots + 2)]
        recent = reg.rounds[-80:]
        return [
            ("rounds by tokens accepted", [str(i) for i in range(1, slots + 2)], hist),
            ("% accepted by position", ["a0"] + [str(i) for i in range(1, slots)],
             [100.0 * r for r in reg.position_rates()]),
            (f"ms per round (last {len(recent)})", [], [r.draft_ms + r.verify_ms for r in recent]),
        ]

    def paintEvent(self, _event) -> None:  # noqa: N802
        reg = self.region
        if reg is None or not reg.rounds:
            paint_hint(self, "Statistics: TPF, rounds by tokens accepted, acceptance by draft position, draft vs "
                             "verify time (hover for definitions).")
            return
        p = QPainter(self)
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        fm = QFontMetrics(self.font())
        p.setPen(fg)
        head = QRectF(6, 2, self.width() - 12, fm.height() + 2)
        p.drawText(head, Qt.AlignmentFlag.AlignLeft, fm.elidedText(self.summary(), Qt.TextElideMode.ElideRight,
                                                                  int(head.width())))
        top = head.bottom() + 4
        h = self.height() - top - 2
        w = (self.width() - 12 - 2 * 12) / 3
        boxes = [QRectF(6 + i * (w + 12), top, w, h) for i in range(3)]
        (t1, x1, v1), (t2, x2, v2), (t3, _x3, _v3) = self.charts()
        self._bars(p, boxes[0], t1, x1, v1, colors.ACCEPTED, "rounds")
        self._bars(p, boxes[1], t2, x2, v2, colors.ACCEPTED, "%", vmax=100.0)
        self._latency(p, boxes[2], t3, reg)
        p.end()

    def _frame(self, p: QPainter, box: QRectF, title: str, y_max: str, x_labels: list[str],
               foot: str = "") -> QRectF:
        """Title, y axis with its top value, x axis with tick labels (thinned to fit); returns the plot area."""
        fm = QFontMetrics(self.font())
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        p.setPen(colors.faded(fg, 0.85))
        p.drawText(QRectF(box.left(), box.top(), box.width(), fm.height()), Qt.AlignmentFlag.AlignLeft,
                   fm.elidedText(title, Qt.TextElideMode.ElideRight, int(box.width())))
        axis_w = fm.horizontalAdvance(y_max) + 4
        rows_below = 1 + (1 if foot else 0)
        plot = QRectF(box.left() + axis_w, box.top() + fm.height() + 3, box.width() - axis_w,
                      box.height() - (rows_below + 1) * fm.height() - 5)
        axis = colors.faded(fg, 0.45)
        p.fillRect(QRectF(plot.left(), plot.bottom(), plot.width(), 1), axis)  # x axis
        p.fillRect(QRectF(plot.left() - 1, plot.top(), 1, plot.height()), axis)  # y axis
        p.setPen(colors.faded(fg, 0.65))
        p.drawText(QRectF(box.left(), plot.top() - fm.height() / 2, axis_w - 3, fm.height()),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, y_max)
        p.drawText(QRectF(box.left(), plot.bottom() - fm.height() / 2, axis_w - 3, fm.height()),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, "0")
        if x_labels:
            bw = plot.width() / len(x_labels)
            widest = max(fm.horizontalAdvance(t) for t in x_labels) + 4
            step = max(1, int(widest // max(bw, 1e-6)) + (1 if widest > bw else 0))
            for i, label in enumerate(x_labels):
                if i % step and i != len(x_labels) - 1:
                    continue
                p.drawText(QRectF(plot.left() + i * bw - 10, plot.bottom() + 1, bw + 20, fm.height()),
                           Qt.AlignmentFlag.AlignHCenter, label)
        if foot:
            p.drawText(QRectF(box.left(), box.bottom() - fm.height(), box.width(), fm.height()),
                       Qt.AlignmentFlag.AlignLeft, fm.elidedText(foot, Qt.TextElideMode.ElideRight, int(box.width())))
        return plot

    def _bars(self, p: QPainter, box: QRectF, title: str, labels: list[str], values: list[float], color: QColor,
              unit: str, vmax: float | None = None, foot: str = "") -> None:
        top = vmax or max(max(values, default=0.0), 1.0)
        plot = self._frame(p, box, title, f"{top:,.0f}", labels, foot)
        if not values:
            return
        fm = QFontMetrics(self.font())
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        bw = plot.width() / len(values)
        for i, v in enumerate(values):
            bh = plot.height() * (v / top if top else 0)
            bar = QRectF(plot.left() + i * bw + 0.5, plot.bottom() - bh, max(1.0, bw - 1), bh)
            p.fillRect(bar, color)
            count = f"{v:.0f}"
            if v and fm.horizontalAdvance(count) + 2 <= bw and bh + fm.height() <= plot.height():
                p.setPen(colors.faded(fg, 0.8))  # the count above its bar, where it fits
                p.drawText(QRectF(bar.left() - 2, bar.top() - fm.height(), bar.width() + 4, fm.height()),
                           Qt.AlignmentFlag.AlignHCenter, count)

    def _latency(self, p: QPainter, box: QRectF, title: str, reg: RegionRounds) -> None:
        recent = reg.rounds[-80:]
        avg_d = reg.draft_ms / len(reg.rounds)
        avg_v = reg.verify_ms / len(reg.rounds)
        top = max((r.draft_ms + r.verify_ms for r in recent), default=1.0) or 1.0
        fm = QFontMetrics(self.font())
        plot = self._frame(p, box, title, f"{top:.0f}", [], foot=" ")  # the foot row holds the legend
        bw = plot.width() / max(len(recent), 1)
        for i, r in enumerate(recent):
            x = plot.left() + i * bw
            hd = plot.height() * r.draft_ms / top
            hv = plot.height() * r.verify_ms / top
            p.fillRect(QRectF(x, plot.bottom() - hd, max(1.0, bw - 0.5), hd), colors.DRAFT)
            p.fillRect(QRectF(x, plot.bottom() - hd - hv, max(1.0, bw - 0.5), hv), colors.VERIFY)
        # legend with the means, under the plot
        y = box.bottom() - fm.height()
        x = box.left()
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        for name, color, value in (("draft", colors.DRAFT, avg_d), ("verify", colors.VERIFY, avg_v)):
            p.fillRect(QRectF(x, y + fm.height() / 2 - 4, 8, 8), color)
            text = f"{name} {value:.1f}"
            p.setPen(colors.faded(fg, 0.75))
            p.drawText(QRectF(x + 11, y, fm.horizontalAdvance(text) + 4, fm.height()), Qt.AlignmentFlag.AlignLeft, text)
            x += 11 + fm.horizontalAdvance(text) + 12
