"""The left column: the list of open documents and the current document's page thumbnails (rendered lazily, only
those scrolled into view). Nothing in it hides behind a horizontal scroll bar: a document's name and status wrap
onto a second line, the list is as tall as its rows (half the column at most), and the column is never narrower
than a thumbnail with its check box."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QIcon, QImage, QPixmap
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QListView, QListWidget, QListWidgetItem, QSplitter,
                               QVBoxLayout, QWidget)

from app.core.review.document import TO_REVIEW
from app.gui.theme import icon

THUMB_WIDTH = 110
THUMB_DPI = 20.0


class DocumentList(QListWidget):
    document_selected = Signal(int)
    close_requested = Signal(int)
    rows_changed = Signal()  # a row was added, removed or its text changed (the column fits the list to them)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("documents")
        self.setWordWrap(True)  # "carbon-copy.jpg · 1 to review" on two lines rather than behind a scroll bar
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.currentRowChanged.connect(self._row_changed)
        self._quiet = False
        self.review_only = False

    def set_review_only(self, on: bool) -> None:
        """Show only the documents with blocks that need review (the "Needs review" filter)."""
        self.review_only = bool(on)
        for row in range(self.count()):
            self._apply_filter(row)

    def _apply_filter(self, row: int) -> None:
        item = self.item(row)
        if item is not None:
            item.setHidden(self.review_only and f" {TO_REVIEW} " not in item.text() and row != self.currentRow())

    def set_documents(self, names: list[tuple[str, str]], current: int) -> None:
        """names = [(title, tooltip)]."""
        self._quiet = True
        self.clear()
        for title, tip in names:
            item = QListWidgetItem(icon("document"), title)
            item.setToolTip(tip)
            self.addItem(item)
        self.setCurrentRow(current)
        self._quiet = False
        self.rows_changed.emit()

    def content_height(self) -> int:
        """The height that shows every row whole (at the list's present width)."""
        rows = sum(self.visualItemRect(self.item(r)).height() or self.sizeHintForRow(r) for r in range(self.count())
                   if not self.item(r).isHidden())
        return rows + 2 * self.frameWidth() + 2

    def set_status(self, row: int, status: str) -> None:
        item = self.item(row)
        if item is not None:
            base = item.text().split("  ·  ")[0]
            item.setText(f"{base}  ·  {status}" if status else base)
            self._apply_filter(row)
            self.rows_changed.emit()

    def _row_changed(self, row: int) -> None:
        if not self._quiet and row >= 0:
            self.document_selected.emit(row)

    def resizeEvent(self, event) -> None:  # noqa: N802 - a new width wraps the rows anew
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.rows_changed.emit()

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Delete and self.currentRow() >= 0:
            self.close_requested.emit(self.currentRow())
            return
        super().keyPressEvent(event)


class ThumbnailStrip(QListWidget):
    """One item per page. `thumbnail_requested(page, dpi)` asks for images of visible items only."""

    page_selected = Signal(int)
    thumbnail_requested = Signal(int, float)
    pages_set = Signal()  # a document's pages were listed (app.gui.page_range checks the pages to read)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("thumbnails")
        self.setViewMode(QListView.ViewMode.IconMode)
        self.setFlow(QListView.Flow.TopToBottom)
        self.setWrapping(False)
        self.setMovement(QListView.Movement.Static)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setIconSize(QSize(THUMB_WIDTH, int(THUMB_WIDTH * 1.42)))
        self.setSpacing(6)
        self._requested: set[int] = set()
        self._quiet = False
        self.currentRowChanged.connect(self._row_changed)
        self._lazy = QTimer(self, singleShot=True, interval=60)
        self._lazy.timeout.connect(self._request_visible)
        self.verticalScrollBar().valueChanged.connect(lambda _v: self._lazy.start())

    def set_pages(self, sizes: list[tuple[float, float]]) -> None:
        self._quiet = True
        self.clear()
        self._requested.clear()
        for i, (w, h) in enumerate(sizes):
            ph = QPixmap(THUMB_WIDTH, max(1, int(THUMB_WIDTH * h / max(w, 1))))
            ph.fill(QColor("#ffffff"))
            item = QListWidgetItem(QIcon(ph), str(i + 1))
            item.setTextAlignment(Qt.AlignmentFlag.AlignHCenter)
            self.addItem(item)
        self._quiet = False
        self._lazy.start()
        self.pages_set.emit()

    def set_thumbnail(self, page: int, image: QImage) -> None:
        item = self.item(page)
        if item is not None and not image.isNull():
            pix = QPixmap.fromImage(image).scaledToWidth(THUMB_WIDTH, Qt.TransformationMode.SmoothTransformation)
            item.setIcon(QIcon(pix))

    def set_current_page(self, page: int) -> None:
        self._quiet = True
        self.setCurrentRow(page)
        self._quiet = False

    def _row_changed(self, row: int) -> None:
        if not self._quiet and row >= 0:
            self.page_selected.emit(row)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._lazy.start()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._lazy.start()

    def _request_visible(self) -> None:
        rect = self.viewport().rect()
        for row in range(self.count()):
            if row in self._requested:
                continue
            if self.visualItemRect(self.item(row)).intersects(rect):
                self._requested.add(row)
                self.thumbnail_requested.emit(row, THUMB_DPI)


def make_side_panel(documents: DocumentList, thumbnails: ThumbnailStrip) -> QSplitter:
    top = QWidget()
    lay = QVBoxLayout(top)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(2)
    review_only = QCheckBox("Needs review")
    review_only.setObjectName("needs_review_filter")
    review_only.setToolTip("Show only documents with blocks to review (low confidence, high CER, truncated, "
                           "errors); N on the page goes to the next such block")
    review_only.toggled.connect(documents.set_review_only)
    lay.addWidget(review_only)
    lay.addWidget(documents, 1)
    split = QSplitter(Qt.Orientation.Vertical)
    split.addWidget(top)
    split.addWidget(thumbnails)
    split.setSizes([140, 600])
    split.setChildrenCollapsible(False)
    # a thumbnail, its check box and the scroll bar side by side
    split.setMinimumWidth(THUMB_WIDTH + 40 + thumbnails.verticalScrollBar().sizeHint().width())

    def fit() -> None:  # the list as tall as its rows, the thumbnails get the rest
        total = sum(split.sizes())
        if total <= 0:
            return
        want = review_only.sizeHint().height() + lay.spacing() + documents.content_height()
        top_h = max(60, min(want, total // 2))
        if abs(split.sizes()[0] - top_h) > 1:
            split.setSizes([top_h, total - top_h])

    documents.rows_changed.connect(lambda: QTimer.singleShot(0, split, fit))  # not after `split` is deleted
    split.fit_documents = fit
    return split
