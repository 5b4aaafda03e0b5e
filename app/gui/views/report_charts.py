"""Small charts painted with QPainter for the decoding report pane: horizontal bars of draft acceptance (by region
kind, token class, position in the block), the document strip (one cell per page, coloured by its TPF) and the
sweep's lines (a value against the block size). Colours follow app.core.record.acceptance_figures.

What must never live here: statistics (core), layout of the pane (decoding_report.py).
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.core.record.acceptance import Tally
from app.core.record.acceptance_figures import rate_colour, tpf_colour

ROW = 18


class BarChart(QWidget):
    """`rows` as bars of their acceptance rate, the rate and count (and TPF when `with_tpf`) written beside."""

    def __init__(self, title: str, with_tpf: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title, self.with_tpf = title, with_tpf
        self.rows: list[Tally] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_rows(self, rows: Sequence[Tally]) -> None:
        self.rows = list(rows)
        self.setFixedHeight(self.sizeHint().height())
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(360, 24 + ROW * max(1, len(self.rows)))

    def bar_colours(self) -> list[QColor]:
        return [QColor(*rate_colour(t.rate)) for t in self.rows]

    def paintEvent(self, _event) -> None:  # noqa: N802
        p = QPainter(self)
        pal = self.palette()
        p.setPen(pal.windowText().color())
        p.drawText(QRectF(4, 2, self.width(), 18), Qt.AlignmentFlag.AlignLeft, self.title)
        if not self.rows:
            p.drawText(QRectF(90, 22, self.width(), ROW), Qt.AlignmentFlag.AlignLeft, "no drafts judged")
            return
        x0, x1 = 90.0, max(120.0, self.width() - 170.0)
        for i, (t, colour) in enumerate(zip(self.rows, self.bar_colours())):
            y = 22 + i * ROW
            p.setPen(pal.windowText().color())
            p.drawText(QRectF(4, y, x0 - 8, ROW - 2), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       t.name)
            p.setPen(QPen(QColor(160, 160, 160)))
            p.drawRect(QRectF(x0, y + 2, x1 - x0, ROW - 6))
            p.fillRect(QRectF(x0, y + 2, (x1 - x0) * t.rate, ROW - 6), colour)
            p.setPen(pal.windowText().color())
            note = f"{t.rate:.0%} of {t.judged}" + (f"  TPF {t.tpf:.2f}" if self.with_tpf else "")
            p.drawText(QRectF(x1 + 6, y, 170, ROW - 2), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       note)


class PageStrip(QWidget):
    """One cell per page, coloured by the page's TPF; its tooltip names each page's figure."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pages: list[tuple[int, float]] = []  # (page, TPF)
        self.block_size = 16
        self.setFixedHeight(30)

    def set_pages(self, pages: list[tuple[int, float]], block_size: int) -> None:
        self.pages, self.block_size = pages, block_size or 16
        self.setToolTip("\n".join(f"page {p + 1}: TPF {t:.2f}" for p, t in pages))
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802
        p = QPainter(self)
        cell = 44.0
        for i, (page, tpf) in enumerate(self.pages):
            rect = QRectF(2 + i * cell, 2, cell - 3, 26)
            p.fillRect(rect, QColor(*tpf_colour(tpf, self.block_size)) if tpf else QColor(220, 220, 220))
            p.setPen(QColor("black"))
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, f"p{page + 1} {tpf:.1f}")


class LineChart(QWidget):
    """Values against the block size (x on a log₂ scale): one series per name, each with its own vertical scale
    (TPF, forwards and time have different units; each is written at its points)."""

    COLOURS = (QColor(21, 101, 192), QColor(46, 125, 50), QColor(198, 40, 40))

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.xs: list[int] = []
        self.series: list[tuple[str, list[float]]] = []
        self.setMinimumHeight(150)

    def set_series(self, xs: list[int], series: list[tuple[str, list[float]]]) -> None:
        self.xs, self.series = xs, series
        self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802
        import math

        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        if not self.xs:
            p.setPen(pal.windowText().color())
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no sweep yet")
            return
        left, right, top, bottom = 40.0, self.width() - 20.0, 20.0, self.height() - 24.0
        lx = [math.log2(max(1, x)) for x in self.xs]
        span = (max(lx) - min(lx)) or 1.0
        px = [left + (right - left) * (v - min(lx)) / span for v in lx]
        p.setPen(pal.windowText().color())
        for x, b in zip(px, self.xs):
            p.drawText(QRectF(x - 15, bottom + 4, 30, 16), Qt.AlignmentFlag.AlignCenter, f"B={b}")
        for j, (name, ys) in enumerate(self.series):
            colour = self.COLOURS[j % len(self.COLOURS)]
            hi = max(ys) or 1.0
            pts = [QPointF(x, bottom - (bottom - top) * (y / hi)) for x, y in zip(px, ys)]
            p.setPen(QPen(colour, 2))
            for a, b in zip(pts, pts[1:]):
                p.drawLine(a, b)
            for pt, y in zip(pts, ys):
                p.drawEllipse(pt, 3, 3)
                p.drawText(QRectF(pt.x() - 30, pt.y() - 16, 60, 14), Qt.AlignmentFlag.AlignCenter, f"{y:.3g}")
            p.drawText(QRectF(left + j * 140, 2, 140, 16), Qt.AlignmentFlag.AlignLeft, f"— {name}")
