"""Reading-order mode on the page (O, or the toolbar's toggle): arrows run from each region to the next one read;
click regions one after another to make that the order (the clicked ones first, the rest after, as they were; the
whole sequence is one undo step), or drag a region's badge onto another region to read it just before that one.
C orders the page by columns, T top to bottom; [ and ] read the selected region one place earlier or later. Every
change is a `LayoutEdit` of app.core.review.reading_order on the window's one undo stack, so the editor, the
Markdown, the JSON and the exports follow at once and a re-run keeps the order.

What must never live here: changing the order itself (core's OrderEditor does), the session.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QLineF, QObject, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsLineItem

from app.core.review.reading_order import OrderEditor
from app.gui.review_flow import LayoutEditCommand

ARROW_COLOR = "#e65100"
ORDER_COMMAND_ID = 0x0D3E  # QUndoCommand.id(): clicks of one sequence merge into one undo step
DRAG_PX = 5  # a press that moves less than this (screen pixels) is a click


class OrderArrows(QGraphicsItem):
    """Arrows from each region's centre to the next region's, in reading order (scene units: points)."""

    def __init__(self) -> None:
        super().__init__()
        self.setZValue(40)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.centres: list[QPointF] = []
        self._bounds = QRectF()

    def set_centres(self, centres: list[QPointF]) -> None:
        self.prepareGeometryChange()
        self.centres = centres
        xs, ys = [p.x() for p in centres], [p.y() for p in centres]
        self._bounds = QRectF(min(xs, default=0) - 12, min(ys, default=0) - 12,
                              max(xs, default=0) - min(xs, default=0) + 24, max(ys, default=0) - min(ys, default=0) + 24)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self._bounds

    def paint(self, painter: QPainter, option, widget=None) -> None:
        pen = QPen(QColor(ARROW_COLOR), 2.0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(QColor(ARROW_COLOR))
        head = 7.0 / max(1e-6, painter.worldTransform().m11())
        for a, b in zip(self.centres, self.centres[1:]):
            line = QLineF(a, b)
            if line.length() < 1:
                continue
            path = QPainterPath(a)  # a slight curve, so arrows between stacked regions stay apart
            mid = line.center()
            normal = QPointF(-line.dy(), line.dx()) / line.length() * min(18.0, line.length() * 0.12)
            path.quadTo(mid + normal, b)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
            angle = math.atan2(b.y() - (mid + normal).y(), b.x() - (mid + normal).x())
            tip = QPolygonF([b, b - QPointF(math.cos(angle - 0.45), math.sin(angle - 0.45)) * head,
                             b - QPointF(math.cos(angle + 0.45), math.sin(angle + 0.45)) * head])
            painter.setBrush(QColor(ARROW_COLOR))
            painter.drawPolygon(tip)


class OrderCommand(LayoutEditCommand):
    """A reading-order change; the clicks of one sequence merge into one undo step."""

    def __init__(self, flow, work, edit, sequence: int = 0) -> None:
        super().__init__(flow, work, edit)
        self.sequence = sequence  # 0: not part of a click sequence

    def id(self) -> int:  # noqa: A003
        return ORDER_COMMAND_ID

    def mergeWith(self, other) -> bool:  # noqa: N802
        if not (isinstance(other, OrderCommand) and self.sequence and other.sequence == self.sequence
                and other.work is self.work and other.edit.page == self.edit.page):
            return False
        self.edit.after, self.edit.selected = other.edit.after, other.edit.selected
        return True


class OrderMode(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.on = False
        self.clicked: list[str] = []  # the click sequence so far
        self._sequence = 0  # which click sequence (its clicks are one undo step)
        self._press: tuple[str, QPointF] | None = None
        self.arrows = OrderArrows()
        self.arrows.setVisible(False)
        view = window.page_view
        view.scene().addItem(self.arrows)
        self._drag_line = QGraphicsLineItem()
        pen = QPen(QColor(ARROW_COLOR), 2.0, Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        self._drag_line.setPen(pen)
        self._drag_line.setZValue(60)
        self._drag_line.setVisible(False)
        view.scene().addItem(self._drag_line)
        view.order_mode = self
        view.regions_shown.connect(self.refresh)

    # --- the mode --------------------------------------------------------------------------------------------

    def set_mode(self, on: bool) -> None:
        self.on = bool(on)
        self._new_sequence()
        action = getattr(self.window.actions, "order_mode", None) if hasattr(self.window, "actions") else None
        if action is not None and action.isChecked() != self.on:
            action.setChecked(self.on)
        if self.on and getattr(self.window.actions, "draw_region", None) is not None:
            self.window.actions.draw_region.setChecked(False)
        self.refresh()
        if self.on:
            self.window.statusBar().showMessage("Reading order: click regions in the order to read them, or drag a "
                                                "badge onto another region (C: by columns, T: top to bottom)", 6000)

    def _new_sequence(self) -> None:
        self.clicked = []
        self._sequence += 1

    def refresh(self) -> None:
        """The arrows follow the page's regions as they are shown now."""
        view = self.window.page_view
        self.arrows.setVisible(self.on and view.page >= 0)
        if not self.on:
            return
        items = sorted(view.region_items.values(), key=lambda it: (it.region.order, it.region_id))
        self.arrows.set_centres([it.rect().center() for it in items if it.region.task != "skipped"])

    # --- edits -----------------------------------------------------------------------------------------------

    def _push(self, edit, sequence: int = 0) -> bool:
        flow, work = self.window.flow, self.window.work
        if edit is None or work is None:
            return False
        flow.undo_stack.push(OrderCommand(flow, work, edit, sequence))
        flow.layout_changed(work, edit.page, edit.selected)
        self.window.statusBar().showMessage(edit.description, 3000)
        return True

    def _page(self) -> int:
        return self.window.page_view.page

    def by_columns(self) -> None:
        if self.window.work is not None and self._page() >= 0:
            self._new_sequence()
            self._push(OrderEditor(self.window.work).by_columns(self._page()))

    def top_to_bottom(self) -> None:
        if self.window.work is not None and self._page() >= 0:
            self._new_sequence()
            self._push(OrderEditor(self.window.work).top_to_bottom(self._page()))

    def move_before(self, region_id: str, target_id: str) -> bool:
        work = self.window.work
        if work is None or region_id not in work.blocks:
            return False
        self._new_sequence()
        return self._push(OrderEditor(work).move_before(region_id, target_id))

    def click(self, region_id: str) -> None:
        """One more region of the click sequence: it is read after those clicked before it."""
        work = self.window.work
        if work is None or region_id not in work.blocks:
            return
        if region_id in self.clicked:
            self.window.statusBar().showMessage(f"{region_id} is already number {self.clicked.index(region_id) + 1}",
                                                3000)
            return
        self.clicked.append(region_id)
        edit = OrderEditor(work).set_sequence(work.blocks[region_id].region.page, self.clicked)
        if not self._push(edit, self._sequence):
            self.window.select_region(region_id)
        self.window.statusBar().showMessage(
            f"Reading order: {len(self.clicked)} clicked, {region_id} reads as number {len(self.clicked)} "
            "(O ends the sequence; Ctrl+Z undoes it whole)", 6000)

    def _step(self, step: int) -> None:
        work, rid = self.window.work, self.window.flow.selected_id()
        if work is not None and rid in work.blocks:
            self._new_sequence()
            self._push(OrderEditor(work).move_by(rid, step))

    def earlier(self) -> None:
        self._step(-1)

    def later(self) -> None:
        self._step(1)

    # --- the mouse (the page view asks this first while the mode is on) ------------------------------------------

    def press(self, event) -> bool:
        view = self.window.page_view
        if not self.on or event.button() != Qt.MouseButton.LeftButton:
            return False
        rid = view.region_at(event.position().toPoint())
        if not rid:
            return False  # empty page: pan as usual
        self._press = (rid, event.position())
        return True

    def move(self, event) -> bool:
        if self._press is None:
            return False
        rid, start = self._press
        view = self.window.page_view
        if (event.position() - start).manhattanLength() >= DRAG_PX:
            item = view.region_items.get(rid)
            if item is not None:
                self._drag_line.setLine(QLineF(item.rect().topLeft(), view.mapToScene(event.position().toPoint())))
                self._drag_line.setVisible(True)
        return True

    def release(self, event) -> bool:
        if self._press is None:
            return False
        rid, start = self._press
        self._press = None
        self._drag_line.setVisible(False)
        if (event.position() - start).manhattanLength() < DRAG_PX:
            self.click(rid)
            return True
        target = self.window.page_view.region_at(event.position().toPoint())
        if target and target != rid:
            self.move_before(rid, target)
        return True


ORDER_KEYS = ("order_mode", "order_columns", "order_top_down", "read_earlier", "read_later", "edit_table")


def scope_order_keys(actions, page_view) -> None:
    """The order keys (and G, the table grid editor) are one-key shortcuts of the page only (typing C in the editor
    stays typing)."""
    for name in ORDER_KEYS:
        action = getattr(actions, name)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        page_view.addAction(action)
