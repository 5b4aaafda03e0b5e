"""Region editing on the page, the mouse side: the selected region shows handles; dragging inside it moves it,
dragging a handle or an edge resizes it, and in draw mode (D) a drag on the page draws a new region. While a
gesture lasts only a dashed outline moves; when the button is released the page view says what the person did
(`box_edited(id, box_pt)`, `region_drawn(page, box_pt)`) and the window turns it into an undoable edit
(app.gui.review_flow, app.core.review.region_edits).

What must never live here: changing regions (core does), undo, the session.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem

HANDLE_PX = 7.0  # a handle's size and an edge's grab distance on screen, whatever the zoom
_CURSORS = {"move": Qt.CursorShape.SizeAllCursor, "l": Qt.CursorShape.SizeHorCursor,
            "r": Qt.CursorShape.SizeHorCursor, "t": Qt.CursorShape.SizeVerCursor, "b": Qt.CursorShape.SizeVerCursor,
            "tl": Qt.CursorShape.SizeFDiagCursor, "br": Qt.CursorShape.SizeFDiagCursor,
            "tr": Qt.CursorShape.SizeBDiagCursor, "bl": Qt.CursorShape.SizeBDiagCursor}


def grip_at(rect: QRectF, pos: QPointF, tolerance: float) -> str:
    """Which part of `rect` a point grabs: a corner ("tl", "tr", "bl", "br"), an edge ("l", "r", "t", "b"),
    the inside ("move"), or "" (outside)."""
    if not rect.adjusted(-tolerance, -tolerance, tolerance, tolerance).contains(pos):
        return ""
    near = lambda a, b: abs(a - b) <= tolerance  # noqa: E731
    v = "t" if near(pos.y(), rect.top()) else "b" if near(pos.y(), rect.bottom()) else ""
    h = "l" if near(pos.x(), rect.left()) else "r" if near(pos.x(), rect.right()) else ""
    return (v + h) or ("move" if rect.contains(pos) else "")


def dragged(rect: QRectF, grip: str, delta: QPointF) -> QRectF:
    """`rect` after dragging `grip` by `delta` (scene units), normalised (a handle dragged past its opposite edge
    flips the box instead of inverting it)."""
    x0, y0, x1, y1 = rect.left(), rect.top(), rect.right(), rect.bottom()
    if grip == "move":
        return rect.translated(delta)
    if "l" in grip:
        x0 += delta.x()
    if "r" in grip:
        x1 += delta.x()
    if "t" in grip:
        y0 += delta.y()
    if "b" in grip:
        y1 += delta.y()
    return QRectF(QPointF(min(x0, x1), min(y0, y1)), QPointF(max(x0, x1), max(y0, y1)))


def box_of(rect: QRectF) -> tuple[float, float, float, float]:
    return (rect.left(), rect.top(), rect.right(), rect.bottom())


class RegionGestures:
    """The page view's mouse, while it edits regions. `press/move/release` return True when they handled the event
    (the view then skips its own panning and clicking)."""

    def __init__(self, view) -> None:
        self.view = view
        self.draw_mode = False
        self._grip = ""
        self._region_id = ""
        self._start = QPointF()
        self._rect = QRectF()
        self._outline = QGraphicsRectItem()
        pen = QPen(QColor("#d81b60"), 1.5, Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        self._outline.setPen(pen)
        self._outline.setZValue(50)
        self._outline.setVisible(False)
        view.scene().addItem(self._outline)

    @property
    def active(self) -> bool:
        return bool(self._grip)

    def _tolerance(self) -> float:
        return HANDLE_PX / max(1e-6, self.view.scale_factor)

    def grip_under(self, scene_pos: QPointF) -> tuple[str, str]:
        """(region id, grip) of the selected region under the point; ("", "") when none."""
        rid = self.view.selected_id
        item = self.view.region_items.get(rid)
        if item is None:
            return "", ""
        grip = grip_at(item.rect(), scene_pos, self._tolerance())
        return (rid, grip) if grip else ("", "")

    def press(self, event) -> bool:
        if event.button() != Qt.MouseButton.LeftButton or self.view.page < 0:
            return False
        pos = self.view.mapToScene(event.position().toPoint())
        if self.draw_mode:
            self._begin("draw", "", pos, QRectF(pos, pos))
            return True
        rid, grip = self.grip_under(pos)
        if not grip:
            return False
        self._begin(grip, rid, pos, self.view.region_items[rid].rect())
        return True

    def _begin(self, grip: str, rid: str, pos: QPointF, rect: QRectF) -> None:
        self._grip, self._region_id, self._start, self._rect = grip, rid, pos, rect
        self._outline.setRect(rect)
        self._outline.setVisible(True)

    def move(self, event) -> bool:
        pos = self.view.mapToScene(event.position().toPoint())
        if not self._grip:
            _rid, grip = self.grip_under(pos)
            cursor = Qt.CursorShape.CrossCursor if self.draw_mode else _CURSORS.get(grip)
            if cursor is not None:
                self.view.viewport().setCursor(cursor)
            else:
                self.view.viewport().unsetCursor()
            return False
        if self._grip == "draw":
            self._outline.setRect(QRectF(self._start, pos).normalized())
        else:
            self._outline.setRect(dragged(self._rect, self._grip, pos - self._start))
        return True

    def release(self, event) -> bool:
        if not self._grip:
            return False
        grip, rid, self._grip = self._grip, self._region_id, ""
        rect = self._outline.rect()
        self._outline.setVisible(False)
        moved = (self.view.mapToScene(event.position().toPoint()) - self._start).manhattanLength()
        if moved * self.view.scale_factor < 3:  # a click, not a drag: select what is under it
            rid_under = self.view.region_at(event.position().toPoint())
            if rid_under:
                self.view.region_clicked.emit(rid_under)
            return True
        if grip == "draw":
            self.view.region_drawn.emit(self.view.page, box_of(rect))
        else:
            self.view.box_edited.emit(rid, box_of(rect))
        return True
