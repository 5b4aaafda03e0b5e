"""The acceptance map on the page: with the toggle on (View → Acceptance map, or the page view's own "TPF map"
button), each region a model decoded is filled with the colour of its TPF (red: no gain over AR, green: the best its
block size allows; the scale of app.core.record.acceptance_figures), its TPF and mean accepted length written in it
and, on hover, its tokens, forwards and rounds; a legend sits in the page view's corner. It works the same on a live
run and on a replayed trace: the figures are each region's decoding statistics, the ones the JSON export writes.

What must never live here: computing statistics (core), the page's own region frames (app.gui.region_items).
"""
from __future__ import annotations

from PySide6.QtCore import QObject, QRectF, Qt, QTimer
from PySide6.QtGui import QAction, QColor, QFont, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QToolButton, QWidget
from shiboken6 import isValid

from app.core.record.acceptance_figures import tpf_colour, tpf_top


def decoded_figures(stats: dict) -> dict | None:
    """A region's map figures from its statistics, or None when no model decoded it by forwards."""
    if not stats or not stats.get("forwards") or "tpf" not in stats:
        return None
    return {"tpf": float(stats["tpf"]), "mean_accepted": float(stats.get("mean_accepted", 0.0)),
            "tokens": int(stats.get("tokens", 0)), "forwards": int(stats["forwards"]),
            "rounds": int(stats.get("rounds", 0)), "block_size": int(stats.get("block_size", 0))}


class AcceptanceFill(QGraphicsRectItem):
    """One region's fill, a child of its frame (it moves with it); it takes no clicks."""

    def __init__(self, parent: QGraphicsItem, figures: dict) -> None:
        super().__init__(parent.rect(), parent)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.update_figures(figures)

    def update_figures(self, figures: dict) -> None:
        self.figures = figures
        self.colour = QColor(*tpf_colour(figures["tpf"], figures["block_size"]))
        f = figures
        self.setToolTip(f"TPF {f['tpf']:.2f} (tokens per forward)\nmean accepted {f['mean_accepted']:.2f} per round"
                        f"\n{f['tokens']} tokens, {f['forwards']} forwards, {f['rounds']} rounds, B={f['block_size']}")
        self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:
        fill = QColor(self.colour)
        fill.setAlpha(110)
        painter.fillRect(self.rect(), fill)
        font = QFont()
        font.setPointSizeF(max(4.0, min(8.0, self.rect().height() * 0.45)))
        painter.setFont(font)
        painter.setPen(QPen(QColor("black")))
        f = self.figures
        painter.drawText(self.rect().adjusted(2, 0, -2, 0), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop,
                         f"TPF {f['tpf']:.2f} · k {f['mean_accepted']:.1f}")


class MapLegend(QWidget):
    """The colour scale, in the page view's lower left corner."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("acceptance_legend")
        self.block_size = 16
        self.resize(230, 38)

    def paintEvent(self, _event) -> None:  # noqa: N802
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(255, 255, 255, 230))
        bar = QRectF(6, 4, self.width() - 12, 12)
        grad = QLinearGradient(bar.topLeft(), bar.topRight())
        top = tpf_top(self.block_size)
        for i in range(11):
            grad.setColorAt(i / 10, QColor(*tpf_colour(1.0 + (top - 1.0) * i / 10, self.block_size)))
        p.fillRect(bar, grad)
        p.setPen(QColor("black"))
        p.drawText(QRectF(6, 18, self.width() - 12, 16), Qt.AlignmentFlag.AlignLeft, "TPF 1")
        p.drawText(QRectF(6, 18, self.width() - 12, 16), Qt.AlignmentFlag.AlignHCenter, f"B={self.block_size}")
        p.drawText(QRectF(6, 18, self.width() - 12, 16), Qt.AlignmentFlag.AlignRight, f"{top:.0f}")


class AcceptanceMap(QObject):
    """The toggle, the fills and the legend over one page view (`page_view.region_items`, `regions_shown`)."""

    def __init__(self, page_view, parent: QObject | None = None) -> None:
        super().__init__(parent or page_view)
        self.view = page_view
        self.fills: dict[str, AcceptanceFill] = {}
        self.action = QAction("Acceptance &map (TPF per region)", self)
        self.action.setObjectName("acceptance_map")
        self.action.setCheckable(True)
        self.action.toggled.connect(self.set_shown)
        self.button = QToolButton(page_view)
        self.button.setObjectName("acceptance_map_button")
        self.button.setDefaultAction(self.action)
        self.action.setIconText("TPF map")
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.legend = MapLegend(page_view)
        self.legend.hide()
        self._timer = QTimer(self, interval=400)  # a live run's regions finish one by one
        self._timer.timeout.connect(self.refresh)
        page_view.regions_shown.connect(self.refresh)
        page_view.installEventFilter(self)
        self._place()

    @property
    def shown(self) -> bool:
        return self.action.isChecked()

    def set_shown(self, on: bool) -> None:
        self.legend.setVisible(on)
        self._timer.start() if on else self._timer.stop()
        self.refresh()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if obj is self.view and event.type() == event.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        self.button.adjustSize()
        self.button.move(self.view.width() - self.button.width() - 22, 6)
        self.legend.move(8, self.view.height() - self.legend.height() - 22)
        self.button.raise_()
        self.legend.raise_()

    def refresh(self) -> None:
        """Fills for the regions shown now, from their statistics as they stand."""
        live = {rid: item for rid, item in self.view.region_items.items()}
        for rid in list(self.fills):
            fill = self.fills[rid]
            if not isValid(fill):  # its frame went with the page's last set of regions, and took it along
                del self.fills[rid]
                continue
            if rid not in live or fill.parentItem() is not live[rid] or not self.shown:
                if fill.scene() is not None:
                    fill.scene().removeItem(fill)
                del self.fills[rid]
        if not self.shown:
            return
        blocks = []
        for rid, item in live.items():
            figures = decoded_figures(item.region.extra.get("stats") or {})
            if figures is None:
                continue
            blocks.append(figures["block_size"])
            if rid in self.fills:
                if self.fills[rid].figures != figures:
                    self.fills[rid].update_figures(figures)
                self.fills[rid].setRect(item.rect())
            else:
                self.fills[rid] = AcceptanceFill(item, figures)
        self.legend.block_size = max(blocks, default=self.legend.block_size)
        self.legend.update()
