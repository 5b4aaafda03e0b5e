"""The acceptance-rounds view (GravityOCR self-speculative decoding, DESIGN §3).

- `RoundStrip`: the current round's B+1 candidate cells (a0, d1..dB) appear together (one draft forward), a verify
  sweep turns matching cells green left to right, the first mismatch turns red with the verifier's token under it,
  trailing drafts fade; a full accept shows the bonus token in blue.
- `RoundHistory`: one compact painted row per round (accepted-length bar, reject marker); scrollable, selectable.
  Only visible rows are painted, so 10,000 rounds cost what 40 do.
- `TintedText`: the region's decoded text, each character tinted by the round that confirmed it, a wavy red
  underline on the verifier's correction where a draft was rejected; click a character to select its round.
- `StatsPanel`: TPF, mean accepted per round, acceptance histogram, per-position acceptance rate, draft vs verify
  time per round, tokens/s against the AR baseline when known.

Everything reads `RoundsModel` (app.gui.views.models); nothing here decodes or keeps its own copy of the run.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPalette,
    QPen,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QTextEdit,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.gui.views import colors
from app.gui.views.models import RegionRounds, RoundRecord, RoundsModel, engine_hint, visible_whitespace

# animation timeline at ×1, in seconds (slowed playback stretches it)
APPEAR_S = 0.12
SWEEP_CELL_S = 0.025
RESOLVE_S = 0.18

EMPTY_HINT = (
    "No draft/verify rounds yet.\nThe self-speculative engines (GravityOCR, the built-in model) show each round "
    "here as it happens;\nopen a trace file to replay a recorded run."
)


def _paint_hint(widget: QWidget, text: str) -> None:
    p = QPainter(widget)
    p.setPen(widget.palette().color(QPalette.ColorRole.PlaceholderText))
    p.drawText(widget.rect().adjusted(12, 8, -12, -8), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, text)
    p.end()


class RoundStrip(QWidget):
    """One round's cells, animated. `show_round(rec)` starts the animation; `tick()` advances it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.record: RoundRecord | None = None
        self._pending: RoundRecord | None = None
        self._painted = False  # has the current round been on screen at least once?
        self.skipped = 0  # rounds that arrived while another was animating and were not animated
        self._t0 = 0.0
        self.slow = 1.0  # 2..20 when playback is slowed
        self.setMinimumHeight(84)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(600, 84)

    def show_round(self, rec: RoundRecord | None, *, animate: bool = True) -> None:
        """Show a round now (a selection, a region switch); `animate=False` shows it resolved."""
        self.record = rec
        self._pending = None
        self.skipped = 0
        self._t0 = time.monotonic() if animate else -1e9
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
        if rec is None:
            _paint_hint(self, "The current round's draft cells appear here.")
            return
        t = (time.monotonic() - self._t0) / max(self.slow, 1e-6)
        n = rec.slots
        k = rec.k
        appear = min(1.0, t / APPEAR_S) if APPEAR_S else 1.0
        swept = int((t - APPEAR_S) / SWEEP_CELL_S) if t > APPEAR_S else -1  # cells verified so far
        sweep_end = APPEAR_S + SWEEP_CELL_S * min(k + 1, n)
        resolve = max(0.0, min(1.0, (t - sweep_end) / RESOLVE_S)) if t > sweep_end else 0.0

        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        fg = pal.color(QPalette.ColorRole.WindowText)
        font = QFont(self.font())
        fm = QFontMetrics(font)
        header = (
            f"{rec.region_id} · round {rec.round_index + 1} · accepted {min(k, n)}/{n} drafts"
            f" · +{rec.accepted} token{'s' if rec.accepted != 1 else ''}"
            f" · draft {rec.draft_ms:.1f} ms · verify {rec.verify_ms:.1f} ms · cache {rec.cache_len}"
        )
        small = QFont(font)
        small.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        sfm = QFontMetrics(small)
        legend = (("accepted", colors.ACCEPTED), ("rejected", colors.REJECTED), ("verifier's token", colors.CORRECTED), ("bonus", colors.BONUS), ("draft", colors.DRAFT))
        legend_w = sum(13 + sfm.horizontalAdvance(name) + 12 for name, _ in legend)
        show_legend = self.width() - 16 - legend_w > fm.horizontalAdvance(header) * 0.6
        header_w = self.width() - 16 - (legend_w if show_legend else 0)
        p.setPen(fg)
        p.drawText(QRectF(8, 2, header_w, fm.height() + 2), Qt.AlignmentFlag.AlignLeft, fm.elidedText(header, Qt.TextElideMode.ElideRight, int(header_w)))
        if show_legend:
            p.setFont(small)
            lx = self.width() - 8.0 - legend_w + 12
            for name, c in legend:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(c)
                p.drawRect(QRectF(lx, 2 + (fm.height() - 9) / 2, 9, 9))
                p.setPen(colors.faded(fg, 0.8))
                p.drawText(QPointF(lx + 13, 2 + (fm.height() + sfm.ascent()) / 2 - 1), name)
                lx += 13 + sfm.horizontalAdvance(name) + 12

        cells = n + 1
        gap = 3.0
        cw = max(14.0, min(72.0, (self.width() - 16 - gap * (cells - 1)) / cells))
        ch = 34.0
        y = fm.height() + 8
        for i in range(cells):
            x = 8 + i * (cw + gap)
            r = QRectF(x, y, cw, ch)
            is_extra = i == n
            if is_extra:  # correction (in the mismatch cell) or bonus: only the bonus gets its own cell
                if not rec.full_accept or resolve <= 0:
                    continue
                color = colors.BONUS
                label = rec.bonus_text()
                alpha = resolve
            else:
                label = rec.candidate_texts[i] if i < len(rec.candidate_texts) else f"#{rec.candidates[i]}"
                alpha = appear
                if swept >= i and i < k:
                    color = colors.ACCEPTED
                elif swept >= i and i == k:
                    color = colors.REJECTED
                elif i > k and resolve > 0:
                    color = colors.DRAFT
                    alpha = appear * (1.0 - 0.75 * resolve)
                else:
                    color = colors.DRAFT
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(colors.faded(color, alpha))
            p.drawRoundedRect(r, 4, 4)
            p.setPen(colors.faded(colors.text_on(color), max(alpha, 0.35)))
            p.setFont(font)
            shown = fm.elidedText(visible_whitespace(label), Qt.TextElideMode.ElideRight, int(cw - 4))
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, shown)
            if not is_extra and i == k and swept >= k:
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
                p.drawText(vr, Qt.AlignmentFlag.AlignCenter, sfm.elidedText(visible_whitespace(vt), Qt.TextElideMode.ElideRight, int(cw)))
            if i == 0:
                p.setFont(small)
                p.setPen(colors.faded(fg, 0.6))
                p.drawText(QRectF(x, y + ch + 2, cw, sfm.height() + 4), Qt.AlignmentFlag.AlignCenter, "a0" if rec.k != 0 else "")
        p.end()


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


class TintedText(QPlainTextEdit):
    """The shown region's text, each character tinted by the round that confirmed it."""

    round_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setPlaceholderText("The decoded text appears here, tinted by the round that confirmed each character.")
        self.region: RegionRounds | None = None
        self._applied = 0
        self._chars = 0

    def clear_text(self) -> None:
        self.region = None
        self._applied = 0
        self._chars = 0
        self.setExtraSelections([])
        self.clear()

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
        sb = self.verticalScrollBar()
        at_bottom = sb.value() >= sb.maximum() - 4
        for rec in region.rounds[self._applied :]:
            if not rec.text:
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
                cursor.insertText(fix, mark)
        cursor.endEditBlock()
        self._applied = len(region.rounds)
        if at_bottom:
            sb.setValue(sb.maximum())

    def highlight(self, start: int, end: int) -> None:
        if end <= start:
            self.setExtraSelections([])
            return
        sel = QTextEdit.ExtraSelection()
        cur = QTextCursor(self.document())
        cur.setPosition(min(start, self.document().characterCount() - 1))
        cur.setPosition(min(end, self.document().characterCount() - 1), QTextCursor.MoveMode.KeepAnchor)
        sel.cursor = cur
        fmt = QTextCharFormat()
        fmt.setBackground(self.palette().color(QPalette.ColorRole.Highlight))
        fmt.setForeground(self.palette().color(QPalette.ColorRole.HighlightedText))
        fmt.setProperty(QTextFormat.Property.FullWidthSelection, False)
        sel.format = fmt
        self.setExtraSelections([sel])
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
            _paint_hint(self, "Statistics: TPF, acceptance histogram, per-position acceptance, draft vs verify time.")
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


class RoundsView(QWidget):
    """The rounds tab: region chooser, strip, history, tinted text and statistics, all from one RoundsModel."""

    round_selected = Signal(str, int, int)  # region id, char start, char end

    def __init__(self, model: RoundsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.shown_region: str | None = None
        self.selected: int | None = None
        self._synced_version = -1
        self.region_box = QComboBox()
        self.region_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.region_box.setToolTip("Region whose rounds are shown")
        self.follow_box = QCheckBox("Follow live")
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Show the newest round of the region being decoded")
        self.hint = QLabel(EMPTY_HINT)
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.strip = RoundStrip()
        self.history = RoundHistory()
        self.text = TintedText()
        self.stats = StatsPanel()

        top = QHBoxLayout()
        top.addWidget(QLabel("Region"))
        top.addWidget(self.region_box)
        top.addStretch(1)
        top.addWidget(self.follow_box)
        body = QSplitter(Qt.Orientation.Horizontal)  # side by side: the dock is usually wide and short
        body.addWidget(self.history)
        body.addWidget(self.text)
        body.addWidget(self.stats)
        body.setStretchFactor(1, 1)
        body.setSizes([220, 560, 400])
        body.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.hint)
        lay.addWidget(self.strip)
        lay.addWidget(body, 1)

        self.region_box.activated.connect(self._region_chosen)
        self.follow_box.toggled.connect(self._follow_toggled)
        self.history.round_clicked.connect(self.select_round)
        self.text.round_clicked.connect(self.select_round)
        self._set_empty(True)

    # state ------------------------------------------------------------------------------------------------------
    @property
    def following(self) -> bool:
        return self.follow_box.isChecked()

    def region(self) -> RegionRounds | None:
        return self.model.regions.get(self.shown_region) if self.shown_region else None

    def _set_empty(self, empty: bool) -> None:
        if empty:
            text = engine_hint(self.model.engine, "rounds") or EMPTY_HINT
            if self.hint.text() != text:
                self.hint.setText(text)
        self.hint.setVisible(empty)
        self.strip.setVisible(not empty)

    def reset(self) -> None:
        self.shown_region = None
        self.selected = None
        self._synced_version = -1
        self.region_box.clear()
        self.strip.show_round(None)
        self.history.select(None)
        self.history.sync(None, follow=True)
        self.text.clear_text()
        self.stats.sync(None, None)
        self._set_empty(True)

    def on_round(self, rec: RoundRecord) -> None:
        """A new round arrived (called at feed time, before the frame flush)."""
        if self.following and (self.shown_region in (None, rec.region_id)):
            self.shown_region = rec.region_id
            self.selected = None
            self.strip.offer_round(rec)

    def refresh(self) -> None:
        """Bring the widgets up to the model (once per frame at most)."""
        if self._synced_version == self.model.version:
            return
        self._synced_version = self.model.version
        if self.following and self.model.current and self.model.current != self.shown_region:
            self.shown_region = self.model.current
            self.selected = None
            reg = self.region()
            self.strip.show_round(reg.rounds[-1] if reg and reg.rounds else None, animate=False)
        ids = [rid for rid, reg in self.model.regions.items() if reg.rounds]
        if [self.region_box.itemData(i) for i in range(self.region_box.count())] != ids:
            self.region_box.blockSignals(True)
            self.region_box.clear()
            for rid in ids:
                self.region_box.addItem(rid, rid)
            self.region_box.blockSignals(False)
        if self.shown_region is not None:
            i = self.region_box.findData(self.shown_region)
            if i >= 0 and i != self.region_box.currentIndex():
                self.region_box.setCurrentIndex(i)
        reg = self.region()
        self._set_empty(reg is None or not reg.rounds)
        self.history.sync(reg, follow=self.following)
        self.text.sync(reg)
        self.stats.sync(reg, self.model.baseline_tps)

    def show_region(self, region_id: str) -> None:
        """Show one region's rounds; a region other than the one being decoded stops following the live run."""
        if region_id != self.model.current and self.following:
            self.follow_box.blockSignals(True)
            self.follow_box.setChecked(False)
            self.follow_box.blockSignals(False)
        self.shown_region = region_id
        self.selected = None
        self.history.select(None)
        self._synced_version = -1
        self.refresh()
        reg = self.region()
        self.strip.show_round(reg.rounds[-1] if reg and reg.rounds else None, animate=False)

    def select_round(self, index: int) -> None:
        """Select round `index` of the shown region: strip, history row, text span; emits round_selected."""
        reg = self.region()
        if reg is None or not (0 <= index < len(reg.rounds)):
            return
        self.refresh()
        rec = reg.rounds[index]
        self.selected = index
        if index < len(reg.rounds) - 1 and self.following:
            self.follow_box.blockSignals(True)
            self.follow_box.setChecked(False)  # looking at the past: stop jumping to new rounds
            self.follow_box.blockSignals(False)
        self.strip.show_round(rec)
        self.history.select(index)
        self.text.sync(reg)
        self.text.highlight(rec.start, rec.end)
        self.round_selected.emit(rec.region_id, rec.start, rec.end)

    def _region_chosen(self, i: int) -> None:
        rid = self.region_box.itemData(i)
        if rid and rid != self.shown_region:
            self.show_region(rid)

    def _follow_toggled(self, on: bool) -> None:
        if on:
            self.selected = None
            self.history.select(None)
            self.text.setExtraSelections([])
            if self.model.current:
                self.show_region(self.model.current)

    def tick(self) -> bool:
        return self.strip.tick()
