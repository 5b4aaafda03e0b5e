"""The page view: one page at a time, rendered lazily at the resolution the zoom needs, with region overlays.
Zoom (wheel with Ctrl, +/-), fit width / fit page, pan by dragging, keyboard paging (PageUp/PageDown/Home/End).

Signals: `region_clicked(id)`, `region_hovered(id)` ("" when none), `page_requested(index)`, `zoom_changed(scale)`;
a person's layout fixes (app.gui.region_editor): `box_edited(id, box_pt)`, `region_drawn(page, box_pt)`,
`region_menu_requested(id, scene point, global point)`.
What must never live here: decoding, file IO (pages arrive as QImages from the render service).
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QGraphicsPixmapItem, QGraphicsRectItem, QGraphicsScene, QGraphicsView

from app.core.document.regions import Region
from app.gui.region_items import RegionItem

MIN_SCALE, MAX_SCALE = 0.1, 8.0


class PageView(QGraphicsView):
    region_clicked = Signal(str)
    region_hovered = Signal(str)
    page_requested = Signal(int)
    zoom_changed = Signal(float)
    render_requested = Signal(int, float)  # page, dpi: the window asks the render service
    rerun_region_requested = Signal(str)
    box_edited = Signal(str, object)  # region id, (x0, y0, x1, y1) in points: the person moved or resized it
    region_drawn = Signal(int, object)  # page, box in points: the person drew a new region
    region_menu_requested = Signal(str, object, object)  # region id, scene point, global point
    region_activated = Signal(str)  # double-clicked: the person wants to type in its block
    regions_shown = Signal()  # the page's regions were (re)placed: overlays that follow them redraw

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("page_view")
        self.setScene(QGraphicsScene(self))
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.SmoothPixmapTransform)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.page = -1
        self.page_count = 0
        self.page_size = (595.0, 842.0)
        self.fit_mode = "width"  # width | page | none
        self.show_order = True
        self.region_items: dict[str, RegionItem] = {}
        self._paper = QGraphicsRectItem()
        self._paper.setBrush(QColor("white"))
        self._paper.setPen(Qt.PenStyle.NoPen)
        self._paper.setZValue(-2)
        self.scene().addItem(self._paper)
        self._pixmap = QGraphicsPixmapItem()
        self._pixmap.setZValue(-1)
        self._pixmap.setTransformationMode(Qt.TransformationMode.SmoothTransformation)
        self.scene().addItem(self._pixmap)
        self._image_dpi = 0.0
        self._press: QPointF | None = None
        self._hover_id = ""
        self._render_timer = QTimer(self, singleShot=True, interval=120)
        self._render_timer.timeout.connect(self._request_render)
        from app.gui.region_editor import RegionGestures

        self.gestures = RegionGestures(self)
        self.order_mode = None  # app.gui.order_mode.OrderMode: asked first about the mouse while it is on

    # --- content ----------------------------------------------------------------------------------------------

    def clear(self) -> None:
        self.set_regions([])
        self._pixmap.setPixmap(QPixmap())
        self._image_dpi = 0.0
        self.page = -1
        self.page_count = 0

    def show_page(self, page: int, size_pt: tuple[float, float], page_count: int) -> None:
        """Lay out an empty sheet of the page's size and ask for its image."""
        same = page == self.page
        self.page, self.page_count, self.page_size = page, page_count, size_pt
        w, h = size_pt
        self._paper.setRect(0, 0, w, h)
        self.scene().setSceneRect(QRectF(-20, -20, w + 40, h + 40))
        if not same:
            self._pixmap.setPixmap(QPixmap())
            self._image_dpi = 0.0
        self._apply_fit()
        self._request_render()

    def invalidate_image(self) -> None:
        """The page looks different now (turned): render it again."""
        self._image_dpi = 0.0
        self._request_render()

    def set_page_image(self, page: int, dpi: float, image: QImage) -> None:
        if page != self.page or image.isNull():
            return
        self._pixmap.setPixmap(QPixmap.fromImage(image))
        self._pixmap.setScale(72.0 / dpi)
        self._image_dpi = dpi

    def set_regions(self, regions: list[Region]) -> None:
        for item in self.region_items.values():
            self.scene().removeItem(item)
        self.region_items = {}
        for region in regions:
            item = RegionItem(region, self.show_order)
            self.scene().addItem(item)
            self.region_items[region.id] = item
        self.regions_shown.emit()

    def set_show_order(self, show: bool) -> None:
        self.show_order = show
        for item in self.region_items.values():
            item.show_order = show
            item.update()

    def set_region_state(self, region_id: str, **state) -> None:
        item = self.region_items.get(region_id)
        if item is not None:
            item.set_state(**state)

    def select_region(self, region_id: str, *, center: bool = True) -> None:
        for rid, item in self.region_items.items():
            item.set_state(selected=rid == region_id)
        item = self.region_items.get(region_id)
        if item is not None and center:
            self.ensureVisible(item.rect(), 40, 40)

    def set_live_region(self, region_id: str) -> None:
        for rid, item in self.region_items.items():
            item.set_state(live=rid == region_id)

    @property
    def selected_id(self) -> str:
        return next((rid for rid, item in self.region_items.items() if item.selected), "")

    # --- zoom and fit -----------------------------------------------------------------------------------------

    @property
    def scale_factor(self) -> float:
        return self.transform().m11()

    def set_scale(self, scale: float, fit_mode: str = "none") -> None:
        scale = max(MIN_SCALE, min(MAX_SCALE, scale))
        self.fit_mode = fit_mode
        self.resetTransform()
        self.scale(scale, scale)
        self.zoom_changed.emit(scale)
        self._render_timer.start()

    def zoom_in(self) -> None:
        self.set_scale(self.scale_factor * 1.25)

    def zoom_out(self) -> None:
        self.set_scale(self.scale_factor / 1.25)

    def fit_width(self) -> None:
        self.fit_mode = "width"
        self._apply_fit()

    def fit_page(self) -> None:
        self.fit_mode = "page"
        self._apply_fit()

    def _apply_fit(self) -> None:
        w, h = self.page_size
        view = self.viewport().size()
        if self.fit_mode == "width" and w > 0:
            self.set_scale((view.width() - 30) / w, "width")
        elif self.fit_mode == "page" and w > 0 and h > 0:
            self.set_scale(min((view.width() - 30) / w, (view.height() - 30) / h), "page")

    def wanted_dpi(self) -> float:
        dpr = self.devicePixelRatioF() or 1.0
        dpi = 72.0 * self.scale_factor * dpr
        return float(min(400, max(48, round(dpi / 24) * 24)))

    def _request_render(self) -> None:
        if self.page < 0:
            return
        dpi = self.wanted_dpi()
        if abs(dpi - self._image_dpi) > 1:
            self.render_requested.emit(self.page, dpi)

    # --- events -----------------------------------------------------------------------------------------------

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.fit_mode != "none":
            self._apply_fit()

    def wheelEvent(self, event) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            factor = 1.0015 ** event.angleDelta().y()
            self.set_scale(self.scale_factor * factor)
            return
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() and event.angleDelta().y() < 0
        at_start = bar.value() <= bar.minimum() and event.angleDelta().y() > 0
        super().wheelEvent(event)
        if at_end and self.page + 1 < self.page_count:
            self.page_requested.emit(self.page + 1)
        elif at_start and self.page > 0:
            self.page_requested.emit(self.page - 1)

    def keyPressEvent(self, event) -> None:
        key = event.key()
        targets = {
            Qt.Key.Key_PageDown: self.page + 1,
            Qt.Key.Key_PageUp: self.page - 1,
            Qt.Key.Key_Home: 0,
            Qt.Key.Key_End: self.page_count - 1,
        }
        if key in targets:
            target = targets[key]
            if 0 <= target < self.page_count and target != self.page:
                self.page_requested.emit(target)
            return
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_in()
            return
        if key == Qt.Key.Key_Minus:
            self.zoom_out()
            return
        super().keyPressEvent(event)

    def region_at(self, pos) -> str:
        for item in self.items(pos):
            if isinstance(item, RegionItem):
                return item.region_id
        return ""

    def _modes(self):
        return [m for m in (self.order_mode, self.gestures) if m is not None]

    def mousePressEvent(self, event) -> None:
        if any(m.press(event) for m in self._modes()):
            self._press = None
            return
        self._press = event.position()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if any(m.release(event) for m in self._modes()):
            return
        super().mouseReleaseEvent(event)
        press, self._press = self._press, None
        if press is not None and (event.position() - press).manhattanLength() < 5:
            rid = self.region_at(event.position().toPoint())
            if rid:
                self.region_clicked.emit(rid)

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802
        rid = self.region_at(event.position().toPoint())
        if rid and not self.gestures.draw_mode and not getattr(self.order_mode, "on", False):
            self.region_activated.emit(rid)
            return
        super().mouseDoubleClickEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if any(m.move(event) for m in self._modes()):
            return
        super().mouseMoveEvent(event)
        rid = self.region_at(event.position().toPoint())
        if rid != self._hover_id:
            self._hover_id = rid
            self.region_hovered.emit(rid)

    def contextMenuEvent(self, event) -> None:  # noqa: N802
        rid = self.region_at(event.pos())
        if not rid:
            return super().contextMenuEvent(event)
        self.region_menu_requested.emit(rid, self.mapToScene(event.pos()), event.globalPos())

    def region_center(self, region_id: str):
        """Viewport position of a region's centre (scrolled into view first), or None."""
        item = self.region_items.get(region_id)
        if item is None:
            return None
        self.ensureVisible(item.rect(), 10, 10)
        return self.mapFromScene(item.rect().center())
