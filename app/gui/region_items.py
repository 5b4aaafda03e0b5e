"""Region overlays drawn on the page: a frame coloured by task, the reading-order number, hover, selection and the
live mark of the region being decoded. Scene units are PDF points, so boxes need no rescaling when zooming; the
order badge (`OrderBadge`) is the one part drawn in screen pixels, so its text stays readable (BADGE_PX) at any
zoom."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem

from app.core.pipeline.quality import region_confidence, region_outcome, review_reasons
from app.core.document.regions import Region
from app.gui.theme import FOUND_COLOR, LIVE_COLOR, REVIEW_COLOR, task_color

OUTCOME_MARKS = {"truncated": " …", "repetition-blocked": " ↻", "garbled": " ?", "error": " !", "cancelled": " ×"}
BADGE_PX = 11  # the badge's text height in screen pixels, whatever the zoom
_WIDEST_BADGE = "999✎✓ … 100%"


def region_rect_pt(region: Region) -> QRectF:
    x1, y1, x2, y2 = region.box_pt
    if x2 <= x1 or y2 <= y1:  # no point box: scale the pixel box
        s = 72.0 / (region.dpi or 72.0)
        x1, y1, x2, y2 = (v * s for v in region.box)
    return QRectF(x1, y1, x2 - x1, y2 - y1)


class RegionItem(QGraphicsRectItem):
    def __init__(self, region: Region, show_order: bool = True) -> None:
        super().__init__(region_rect_pt(region))
        self.region = region
        self.badge = OrderBadge(self)
        self.show_order = show_order
        self.hovered = False
        self.selected = False
        self.live = False
        self.edited = False
        self.status = "pending"
        self.reviewed = False
        self.found = False  # holds a hit of the find bar
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setZValue(10)
        self.setToolTip(self.describe())

    @property
    def region_id(self) -> str:
        return self.region.id

    @property
    def show_order(self) -> bool:
        return self.badge.isVisible()

    @show_order.setter
    def show_order(self, show: bool) -> None:
        self.badge.setVisible(bool(show))

    def set_state(self, **state) -> None:
        changed = False
        for key, value in state.items():
            if getattr(self, key) != value:
                setattr(self, key, value)
                changed = True
        if changed:
            self.setZValue(30 if self.live else 20 if self.selected else 10)
            self.update()
            self.badge.update()

    def boundingRect(self) -> QRectF:  # room for the order badge and thick pens
        return self.rect().adjusted(-14, -14, 4, 4)

    def describe(self) -> str:
        """The tooltip: what the region is, how its last reading went, why it needs review, what to do."""
        r = self.region
        lines = [f"{r.label} ({r.task}) · {r.id}"]
        if self.status in ("done", "failed", "cancelled"):
            conf = region_confidence(r)
            lines.append(f"{region_outcome(r)} · confidence "
                         + (f"{conf['mean']:.0%} mean, {conf['min']:.0%} min" if conf else "none reported"))
            reasons = review_reasons(r)
            if reasons:
                lines.append(("reviewed; was: " if self.reviewed else "needs review: ") + ", ".join(reasons))
        lines.append("drag it or its edges to fix it · R reads it again · right-click for more")
        return "\n".join(lines)

    def hoverEnterEvent(self, event) -> None:
        self.setToolTip(self.describe())
        self.set_state(hovered=True)
        super().hoverEnterEvent(event)

    def hoverLeaveEvent(self, event) -> None:
        self.set_state(hovered=False)
        super().hoverLeaveEvent(event)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        color = QColor(LIVE_COLOR) if self.live or self.status == "failed" else task_color(self.region.task)
        if self.status == "pending" and not self.live and self.region.task in ("text", "table", "formula"):
            color.setAlpha(110)  # not read yet
        rect = self.rect()
        fill = QColor(color)
        fill.setAlpha(70 if self.selected else 40 if (self.hovered or self.live) else 12)
        if self.status in ("done", "failed", "cancelled") and not self.reviewed and review_reasons(self.region):
            painter.fillRect(rect, QBrush(QColor(REVIEW_COLOR), Qt.BrushStyle.BDiagPattern))  # look at me: hatched
        painter.setBrush(QBrush(fill))
        pen = QPen(color, 2.2 if (self.selected or self.live) else 1.0)
        pen.setCosmetic(True)
        if self.live:
            pen.setStyle(Qt.PenStyle.DashLine)
        elif self.region.task in ("skipped", "picture") or self.status == "cancelled":
            pen.setStyle(Qt.PenStyle.DotLine)
        painter.setPen(pen)
        painter.drawRect(rect)
        if self.found:
            found = QPen(QColor(FOUND_COLOR), 3.0)
            found.setCosmetic(True)
            painter.setPen(found)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(rect.adjusted(-2, -2, 2, 2))
        if self.selected:
            self._paint_handles(painter, rect, color)

    def _paint_handles(self, painter: QPainter, rect: QRectF, color: QColor) -> None:
        """Corner and edge handles of the selected region, the same size on screen at any zoom."""
        size = 6.0 / max(1e-6, painter.worldTransform().m11())
        painter.setPen(QPen(color, 0))
        painter.setBrush(QColor("white"))
        xs, ys = (rect.left(), rect.center().x(), rect.right()), (rect.top(), rect.center().y(), rect.bottom())
        for x in xs:
            for y in ys:
                if x != xs[1] or y != ys[1]:
                    painter.drawRect(QRectF(x - size / 2, y - size / 2, size, size))

    def badge_text(self) -> str:
        """The order number, then what a glance should tell: edited ✎, reviewed ✓, an outcome other than ok
        (… truncated, ↻ repetition-blocked, ? garbled, ! error, × cancelled) and the model's mean confidence when it gave one."""
        label = str(self.region.order + 1) + ("✎" if self.edited else "") + ("✓" if self.reviewed else "")
        if self.status in ("done", "failed", "cancelled"):
            label += OUTCOME_MARKS.get(region_outcome(self.region), "")
            conf = region_confidence(self.region)
            if conf is not None:
                label += f" {conf['mean']:.0%}"
        return label

    def frame_color(self) -> QColor:
        return QColor(LIVE_COLOR) if self.live or self.status == "failed" else task_color(self.region.task)


def badge_font() -> QFont:
    font = QFont()
    font.setPixelSize(BADGE_PX)
    font.setBold(True)
    return font


class OrderBadge(QGraphicsItem):
    """The reading-order badge at its region's top-left corner, in screen pixels (ItemIgnoresTransformations): to
    the left of the region, or just inside it where the page leaves no room on the left."""

    def __init__(self, region_item: RegionItem) -> None:
        super().__init__(region_item)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # a click goes to the region beneath
        self.setAcceptHoverEvents(False)
        self.font = badge_font()
        fm = QFontMetricsF(self.font)
        self.height = fm.height() + 2
        self._widest = fm.horizontalAdvance(_WIDEST_BADGE) + 8
        self.setPos(region_item.rect().topLeft())

    def boundingRect(self) -> QRectF:  # noqa: N802 - both places it may sit, for the widest label
        return QRectF(-self._widest - 1, 0, 2 * self._widest + 2, self.height)

    def label_rect(self) -> QRectF:
        """Where the badge is drawn, in its own (screen pixel) coordinates."""
        item = self.parentItem()
        width = QFontMetricsF(self.font).horizontalAdvance(item.badge_text()) + 8
        views = self.scene().views() if self.scene() is not None else []
        scale = views[0].transform().m11() if views else 1.0
        room = item.rect().left() * scale  # screen pixels left of the region, on the page
        return QRectF(-width - 1 if room >= width + 1 else 1, 0, width, self.height)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        item = self.parentItem()
        badge = self.label_rect()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(item.frame_color())
        painter.drawRoundedRect(badge, 3, 3)
        painter.setFont(self.font)
        painter.setPen(QColor("white"))
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, item.badge_text())


def is_region_item(item: QGraphicsItem | None) -> bool:
    return isinstance(item, RegionItem)
