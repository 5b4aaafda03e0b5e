"""The R-SWA window view (Unlimited-OCR: docs/architecture.md, The R-SWA window).

- `TokenRibbon`: two rows. The overview draws the whole sequence to scale: the pinned prefix at the left (BOS,
  each page's image tokens as a block, the prompt), then every output token, evicted ones grey, the window of
  the last W tokens as a bracket; n-gram blocks as red ticks. The close-up below shows the newest tokens as chips
  with their text, the window bracket's left edge sliding along as tokens leave.
- `MemoryPlot`: KV positions in the cache step by step: flat for R-SWA, against the line full attention would
  have grown to; the P + W bound dashed.
- `MaskPicture`: full causal vs sliding window vs R-SWA attention masks for the current step (schematic: the
  prefix and the window drawn at a few cells each, labelled with the real sizes).
- `WindowText`: the decoded text with the span inside the window highlighted and blocked n-grams marked.

Everything reads `WindowModel`; painting never walks more tokens than fit on screen.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QSizePolicy,
    QToolTip,
    QWidget,
)

from app.gui.views import colors
from app.gui.views.live_text import WindowText
from app.gui.views.view_frame import ViewFrame, paint_hint
from app.gui.views.view_text import WHITESPACE_KEY, visible_whitespace
from app.gui.views.window_state import WindowModel, WindowStream

EMPTY_HINT = (
    "No R-SWA window to show yet.\nUnlimited-OCR reads whole documents with a sliding window over its output; "
    "its tokens, window and cache appear here as they happen;\nopen a trace file to replay a recorded run."
)


def _mib(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.2f} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n / 1024:.1f} KiB"


class TokenRibbon(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stream: WindowStream | None = None
        self.setMinimumHeight(104)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(800, 104)

    def sync(self, stream: WindowStream | None) -> None:
        self.stream = stream
        self.update()

    _chips: tuple[float, float, float, float, int, int] | None = None  # x0, y, chip width, height, first, count

    def chip_at(self, x: float, y: float) -> int | None:
        """The chunk index under a point of the close-up row (as last painted)."""
        if self._chips is None:
            return None
        x0, y1, cw, ch, first, count = self._chips
        if not (y1 <= y <= y1 + ch) or x < x0:
            return None
        j = first + int((x - x0) // (cw + 2))
        return j if j < first + count else None

    def event(self, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ToolTip and self.stream is not None:
            s = self.stream
            j = self.chip_at(event.pos().x(), event.pos().y())
            if j is not None and j < s.chunks:
                a, b = s.chunk_range(j)
                where = "left the window" if s.decoded[j] <= s.attended[0] else "in the window"
                outs = f"output {a:,}" if b - a == 1 else f"outputs {a:,}–{b - 1:,}"
                bans = [bn for bn in s.bans if a <= bn.step < b]
                text = f"{outs}: {visible_whitespace(s.token_texts[j])!r} (token {s.tokens[j]}), {where}"
                text += f"\ncache {s.cache_positions[j]:,} positions; full attention {s.full_positions[j]:,}"
                text += f"\n{WHITESPACE_KEY}"
                for bn in bans[:3]:
                    text += f"\nn-gram blocked: token {bn.token} {visible_whitespace(bn.text)!r} (repeat began at output {bn.ngram_start:,})"
                QToolTip.showText(event.globalPos(), text, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)

    def paintEvent(self, _event) -> None:  # noqa: N802
        s = self.stream
        if s is None or (not s.prefix_len and not s.output_len):
            paint_hint(self, "Token ribbon: prefix pinned at the left, output streaming on the right, the window bracket sliding along.")
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        font = QFont(self.font())
        small = QFont(font)
        small.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        fm = QFontMetrics(font)
        lo, hi = s.attended
        head = (
            f"{s.region_id} · prefix {s.prefix_len:,} pinned · window W={s.window} · {s.output_len:,} output tokens · "
            f"in window {lo:,}…{max(hi - 1, lo):,} · evicted {lo:,} · blocked n-grams {len(s.bans)}"
        )
        p.setPen(fg)
        p.drawText(QRectF(8, 2, self.width() - 16, fm.height() + 2), Qt.AlignmentFlag.AlignLeft,
                   fm.elidedText(head, Qt.TextElideMode.ElideRight, self.width() - 16))
        y0 = fm.height() + 8
        self._paint_overview(p, s, y0, 18.0, small, fg)
        self._paint_closeup(p, s, y0 + 18.0 + 12, font, small, fg)
        p.end()

    def _paint_overview(self, p: QPainter, s: WindowStream, y0: float, oh: float, small: QFont, fg: QColor) -> None:
        """The prefix block then all outputs, to scale with a floor width for the prefix; the window bracketed."""
        sfm = QFontMetrics(small)
        n, (lo, hi), P, W = s.output_len, s.attended, s.prefix_len, s.window
        x0, x1 = 8.0, self.width() - 8.0
        pw = max(90.0, min((x1 - x0) * 0.35, (x1 - x0) * P / max(P + n, 1)))
        segs = s.segments or [{"kind": "prompt", "label": "prefix", "start": 0, "end": P}]
        pspan = max(P, 1)
        p.setFont(small)
        for seg in segs:
            a = x0 + pw * seg.get("start", 0) / pspan
            b = x0 + pw * seg.get("end", 0) / pspan
            r = QRectF(a, y0, max(2.0, b - a - 1), oh)
            c = colors.PREFIX.get(seg.get("kind", ""), colors.PREFIX["prompt"])
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(c)
            p.drawRect(r)
            label = seg.get("label") or seg.get("kind", "")
            if r.width() > 18:
                p.setPen(colors.text_on(c))
                p.drawText(r, Qt.AlignmentFlag.AlignCenter, sfm.elidedText(label, Qt.TextElideMode.ElideRight, int(r.width() - 2)))
        ox = x0 + pw + 4
        scale = max(10.0, x1 - ox) / max(n, W, 1)
        if not n:
            return
        p.fillRect(QRectF(ox, y0, lo * scale, oh), colors.faded(colors.EVICTED, 0.55))
        p.fillRect(QRectF(ox + lo * scale, y0, max(1.5, (n - lo) * scale), oh), colors.WINDOW)
        p.fillRect(QRectF(ox + (n - 1) * scale, y0, max(2.0, scale), oh), colors.NEWEST)
        p.setPen(QPen(colors.BAN, 1.5))
        for ban in s.bans:
            bx = ox + ban.step * scale
            p.drawLine(QPointF(bx, y0 - 3), QPointF(bx, y0 + oh + 3))
        self._bracket(p, ox + lo * scale, ox + max(hi, lo + 1) * scale, y0 - 4, y0 + oh + 4, fg)

    def _paint_closeup(self, p: QPainter, s: WindowStream, y1: float, font: QFont, small: QFont, fg: QColor) -> None:
        """The newest chunks as chips (one chip per token when the engine reports every step), the window bracketed."""
        fm, sfm = QFontMetrics(font), QFontMetrics(small)
        n, lo = s.output_len, s.attended[0]
        x0, x1 = 8.0, self.width() - 8.0
        ch = 24.0
        p.setFont(font)
        chip_w = max(28.0, min(64.0, fm.horizontalAdvance("M") * 4.5))
        m = s.chunks
        first = max(0, m - max(1, int((x1 - x0) // (chip_w + 2))))
        ban_chunks = {s.chunk_of(b.step) for b in s.bans[-200:]}
        first_in = s.chunk_of(lo) if m else 0  # first chunk with an output still in the window
        self._chips = (x0, y1, chip_w, ch, first, m - first)
        for j in range(first, m):
            r = QRectF(x0 + (j - first) * (chip_w + 2), y1, chip_w, ch)
            evicted = s.decoded[j] <= lo
            c = colors.NEWEST if j == m - 1 else colors.faded(colors.EVICTED, 0.45) if evicted else colors.WINDOW
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(c)
            p.drawRoundedRect(r, 3, 3)
            if j in ban_chunks:
                p.setPen(QPen(colors.BAN, 2))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRoundedRect(r.adjusted(1, 1, -1, -1), 3, 3)
            p.setPen(colors.faded(fg, 0.5) if evicted else colors.text_on(c))
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, fm.elidedText(visible_whitespace(s.token_texts[j]), Qt.TextElideMode.ElideRight, int(chip_w - 4)))
        if not m:
            return
        bl = x0 + (max(first_in, first) - first) * (chip_w + 2) - 1
        br = x0 + (m - first) * (chip_w + 2) - 1
        self._bracket(p, bl, br, y1 - 4, y1 + ch + 4, fg, open_left=first_in < first)
        p.setFont(small)
        p.setPen(colors.faded(fg, 0.7))
        a, _ = s.chunk_range(first)
        unit = "tokens" if s.chunks == s.output_len else "event chunks"
        p.drawText(QPointF(x0, y1 + ch + 6 + sfm.ascent()), f"newest {unit}: outputs {a:,}…{n - 1:,} (grey = left the window; red = n-gram blocked)")

    @staticmethod
    def _bracket(p: QPainter, a: float, b: float, top: float, bottom: float, fg: QColor, open_left: bool = False) -> None:
        p.setPen(QPen(fg, 1.6))
        p.setBrush(Qt.BrushStyle.NoBrush)
        if not open_left:
            p.drawLine(QPointF(a, top), QPointF(a, bottom))
            p.drawLine(QPointF(a, top), QPointF(a + 4, top))
            p.drawLine(QPointF(a, bottom), QPointF(a + 4, bottom))
        else:
            p.drawLine(QPointF(a + 6, top), QPointF(a, (top + bottom) / 2))
            p.drawLine(QPointF(a, (top + bottom) / 2), QPointF(a + 6, bottom))
        p.drawLine(QPointF(b, top), QPointF(b, bottom))
        p.drawLine(QPointF(b, top), QPointF(b - 4, top))
        p.drawLine(QPointF(b, bottom), QPointF(b - 4, bottom))


class MemoryPlot(QWidget):
    """Cache positions per step: R-SWA (flat) against full attention (growing); the P + W bound dashed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stream: WindowStream | None = None
        self.setMinimumSize(200, 110)

    def sizeHint(self) -> QSize:
        return QSize(400, 180)

    def sync(self, stream: WindowStream | None) -> None:
        self.stream = stream
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802
        s = self.stream
        if s is None or not s.output_len:
            paint_hint(self, "KV cache size over time: flat for R-SWA, against the line full attention would have grown to.")
            return
        p = QPainter(self)  # straight lines only: no antialiasing (it costs ~2 ms a line on the raster engine)
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        fm = QFontMetrics(self.font())
        n = s.output_len
        cur, full = s.cache_positions[-1], s.full_positions[-1]
        cur_b, full_b = s.cache_bytes[-1], s.full_bytes[-1]
        title = f"KV cache {cur:,} positions ({_mib(cur_b)}) · full attention {full:,} ({_mib(full_b)})"
        p.setPen(fg)
        head = QRectF(6, 2, self.width() - 12, 2 * fm.height())
        th = p.boundingRect(head, Qt.TextFlag.TextWordWrap, title).height()
        p.drawText(head, Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap, title)
        plot = QRectF(44, th + 10, self.width() - 52, self.height() - th - 16 - fm.height())
        ymax = max(max(full, s.bound, s.max_cache_positions), 1) * 1.05
        # axis-aligned lines as filled rects: the raster engine's long-line path costs milliseconds per line
        axis = colors.faded(fg, 0.3)
        p.fillRect(QRectF(plot.left(), plot.bottom(), plot.width(), 1), axis)
        p.fillRect(QRectF(plot.left(), plot.top(), 1, plot.height()), axis)
        p.setPen(colors.faded(fg, 0.7))
        p.drawText(QRectF(0, plot.top() - 2, 40, fm.height()), Qt.AlignmentFlag.AlignRight, f"{int(ymax):,}")
        p.drawText(QRectF(0, plot.bottom() - fm.height() + 2, 40, fm.height()), Qt.AlignmentFlag.AlignRight, "0")
        p.drawText(QRectF(plot.left(), plot.bottom() + 2, plot.width(), fm.height()), Qt.AlignmentFlag.AlignRight, f"step {n:,}")

        def ypos(v: float) -> float:
            return plot.bottom() - plot.height() * v / ymax

        if s.bound > 0:
            p.fillRect(QRectF(plot.left(), round(ypos(s.bound)), plot.width(), 1), colors.faded(colors.REJECTED, 0.6))
            p.setPen(colors.REJECTED)
            label = f"P + W = {s.bound:,}"
            p.drawText(QPointF(plot.right() - fm.horizontalAdvance(label) - 4, ypos(s.bound) - 4), label)
        m = s.chunks
        stride = max(1, m // max(int(plot.width()), 1))
        idx = list(range(0, m, stride))
        if idx[-1] != m - 1:
            idx.append(m - 1)
        xs = [plot.left() + plot.width() * s.decoded[i] / max(n, 1) for i in idx]
        for series, pen in ((s.full_positions, QPen(colors.FULL, 1.5, Qt.PenStyle.DashLine)), (s.cache_positions, QPen(colors.WINDOW, 2))):
            p.setPen(pen)
            p.drawPolyline(QPolygonF([QPointF(x, ypos(series[i])) for x, i in zip(xs, idx)]))
        p.end()


class MaskPicture(QWidget):
    """Which keys the current step's query may attend to, under three masks (schematic, labelled to scale)."""

    CELLS_PREFIX = 4
    CELLS_WINDOW = 5
    ROWS = 10

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stream: WindowStream | None = None
        self._grid: QPixmap | None = None
        self._grid_key: tuple | None = None
        self.setMinimumSize(200, 100)

    def sizeHint(self) -> QSize:
        return QSize(300, 150)

    def sync(self, stream: WindowStream | None) -> None:
        self.stream = stream
        self.update()

    @classmethod
    def mask(cls, kind: str, rows: int, prefix: int, window: int) -> list[list[bool]]:
        """Boolean grid, rows = the last `rows` queries (outputs), columns = prefix cells then output cells."""
        cols = prefix + rows
        grid = []
        for q in range(rows):
            qcol = prefix + q
            row = []
            for k in range(cols):
                causal = k <= qcol
                if kind == "full":
                    row.append(causal)
                elif kind == "sliding":
                    row.append(causal and qcol - k < window)
                else:  # rswa: the prefix is pinned, outputs within the window
                    row.append(causal and (k < prefix or qcol - k < window))
            grid.append(row)
        return grid

    def paintEvent(self, _event) -> None:  # noqa: N802
        s = self.stream
        if s is None or not s.prefix_len:
            paint_hint(self, "Attention masks for the current step: full causal, sliding window, R-SWA.")
            return
        p = QPainter(self)
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        fm = QFontMetrics(self.font())
        rows, pre, win = self.ROWS, self.CELLS_PREFIX, self.CELLS_WINDOW
        panels = (("full", "full causal"), ("sliding", "sliding window"), ("rswa", "R-SWA"))
        p.setPen(fg)
        head = QRectF(6, 0, self.width() - 12, 2 * fm.height())
        title = f"step {s.last_step:,} sees prefix [0, {s.prefix_len:,}) + outputs [{s.attended[0]:,}, {s.attended[1]:,})"
        top = p.boundingRect(head, Qt.TextFlag.TextWordWrap, title).height() + 6
        p.drawText(head, Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap, title)
        cols = pre + rows
        avail_w, avail_h = self.width() - 16, self.height() - top - 4
        # three panels in a row, or stacked when the space is tall: whichever gives bigger cells
        row_cell = min((avail_w - 20) / 3 / cols, (avail_h - fm.height() - 2) / rows)
        col_cell = min(avail_w / cols, (avail_h - 3 * (fm.height() + 8)) / 3 / rows)
        stacked = col_cell > row_cell
        cell = max(3.0, min(14.0, col_cell if stacked else row_cell))
        key = (self.width(), self.height(), cell, top, stacked, self.palette().cacheKey())
        if self._grid_key != key:  # the grids are schematic: drawn once per size, then blitted
            self._grid_key = key
            self._grid = QPixmap(self.size() * self.devicePixelRatioF())
            self._grid.setDevicePixelRatio(self.devicePixelRatioF())
            self._grid.fill(Qt.GlobalColor.transparent)
            g = QPainter(self._grid)
            off = colors.faded(colors.EVICTED, 0.18)
            for pi, (kind, name) in enumerate(panels):
                if stacked:
                    x0, y0 = 8.0, top + pi * (rows * cell + fm.height() + 8)
                else:
                    x0, y0 = 8 + pi * (cols * cell + 10), top
                for r, row in enumerate(self.mask(kind, rows, pre, win)):
                    for c, on in enumerate(row):
                        rect = QRectF(x0 + c * cell, y0 + r * cell, cell - 1, cell - 1)
                        if on:
                            color = colors.NEWEST if c == pre + r else (colors.PREFIX["image"] if c < pre else colors.WINDOW)
                            g.fillRect(rect, color)
                        else:
                            g.fillRect(rect, off)
                g.setPen(colors.faded(fg, 0.8))
                g.drawText(QRectF(x0, y0 + rows * cell + 2, max(cols * cell, 90), fm.height()), Qt.AlignmentFlag.AlignLeft, name)
            g.end()
        p.drawPixmap(0, 0, self._grid)
        p.end()


class WindowView(ViewFrame):
    def __init__(self, model: WindowModel, parent: QWidget | None = None) -> None:
        ribbon, memory, masks, text = TokenRibbon(), MemoryPlot(), MaskPicture(), WindowText()
        super().__init__(chooser_title="Run", chooser_tip="Generation whose window is shown (\"doc\": the whole "
                         "document read in one generation by Unlimited-OCR)", empty_hint=EMPTY_HINT,
                         shows="window", headline=ribbon, panels=[text, memory, masks], sizes=[480, 400, 300],
                         stretch=0, parent=parent)
        self.ribbon, self.memory, self.masks, self.text = ribbon, memory, masks, text
        self.model = model
        self.shown: str | None = None
        self.engine = ""  # the run's engine (set by DecodingViews), to explain an empty view
        self._synced_version = -1
        self.stream_box = self.chooser
        self.chooser.activated.connect(lambda i: self._show(self.chooser.itemData(i)))
        self.set_empty(True, "")

    def stream(self) -> WindowStream | None:
        return self.model.streams.get(self.shown) if self.shown else None

    def reset(self) -> None:
        self.shown = None
        self._synced_version = -1
        self.chooser.clear()
        self.ribbon.sync(None)
        self.memory.sync(None)
        self.masks.sync(None)
        self.text.clear_text()
        self.set_empty(True, self.engine)

    def set_model(self, model: WindowModel) -> None:
        """Show another document's window streams."""
        self.model = model
        self.reset()

    def invalidate(self) -> None:
        """The next `refresh` brings every widget up to the model, changed or not."""
        self._synced_version = -1

    def set_engine(self, engine: str) -> None:
        """The run's engine (its name explains an empty view); redraws on the next refresh when it changed."""
        if engine != self.engine:
            self.engine = engine
            self.invalidate()

    def _show(self, sid: str | None) -> None:
        if sid:
            self.shown = sid
            self._synced_version = -1
            self.refresh()

    def refresh(self) -> None:
        if self._synced_version == self.model.version:
            return
        self._synced_version = self.model.version
        if self.model.current and (self.shown is None or self.shown not in self.model.streams or self.model.current != self.shown):
            self.shown = self.model.current
        self.set_choices(list(self.model.streams), self.shown)
        s = self.stream()
        self.set_empty(s is None, self.engine)
        self.ribbon.sync(s)
        self.memory.sync(s)
        self.masks.sync(s)
        self.text.sync(s)

    def window_span(self) -> tuple[str, int, int] | None:
        s = self.stream()
        if s is None or not s.output_len:
            return None
        a, b = s.window_chars()
        return s.region_id, a, b
