"""The document queue, as a dock: each open document with its state (queued with its place, running with its
blocks read so far, done, failed, cancelled), the queue's overall progress, and buttons to move a waiting document
earlier or later or take it out of the queue. It redraws from the run controller's state a few times a second
(app.core.review.document_queue holds the rules); it never starts or stops runs itself.

What must never live here: run state (app.core.review.runs), decoding.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.review import document_queue

REFRESH_MS = 250


class DocumentQueueView(QWidget):
    def __init__(self, runs, parent=None) -> None:
        super().__init__(parent)
        self.runs = runs
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.list = QListWidget()
        self.list.setObjectName("queue_list")
        self.overall = QProgressBar()
        self.overall.setFormat("%v of %m documents")
        buttons = QHBoxLayout()
        self.up = QPushButton("Earlier")
        self.down = QPushButton("Later")
        self.remove = QPushButton("Remove from queue")
        for b in (self.up, self.down, self.remove):
            buttons.addWidget(b)
        self.up.clicked.connect(lambda: self._edit(lambda p: document_queue.move(self.runs, p, -1)))
        self.down.clicked.connect(lambda: self._edit(lambda p: document_queue.move(self.runs, p, +1)))
        self.remove.clicked.connect(lambda: self._edit(lambda p: document_queue.remove(self.runs, p)))
        self.list.currentItemChanged.connect(lambda *_: self._enable())
        layout.addWidget(self.list)
        layout.addWidget(self.overall)
        layout.addLayout(buttons)
        self.rows: list[document_queue.DocumentQueueRow] = []
        self.dock: QDockWidget | None = None  # shown once by itself, the first time two documents are in the queue
        self._offered = False
        self._timer = QTimer(self, interval=REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        self.refresh()

    @staticmethod
    def text(row: document_queue.DocumentQueueRow) -> str:
        if row.state == "queued":
            return f"{row.position}. {row.name} — queued"
        if row.state == "running":
            of = f" ({row.read} of {row.to_read} blocks)" if row.to_read else ""
            return f"▶ {row.name} — running{of}"
        return f"{row.name} — {row.state}"

    def refresh(self) -> None:
        rows = document_queue.queue_rows(self.runs)
        if rows != self.rows:
            chosen = self.selected()
            self.rows = rows
            self.list.clear()
            for row in rows:
                item = QListWidgetItem(self.text(row))
                item.setData(Qt.ItemDataRole.UserRole, row.path)
                self.list.addItem(item)
                if row.path == chosen:
                    self.list.setCurrentItem(item)
        if self.dock is not None and not self._offered and len(rows) >= 2:
            self._offered = True  # once: a person who closes it keeps it closed (View → Queue brings it back)
            self.dock.show()
        finished, total = document_queue.overall(rows)
        self.overall.setRange(0, max(1, total))
        self.overall.setValue(finished)
        self._enable()

    def selected(self) -> str:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else ""

    def _enable(self) -> None:
        waiting = self.selected() in self.runs.queue
        for b in (self.up, self.down, self.remove):
            b.setEnabled(waiting)

    def _edit(self, change) -> None:
        path = self.selected()
        if path and change(path):
            self.refresh()


def install_document_queue_view(window) -> DocumentQueueView:
    """The queue as a dock at the window's right (listed in View), hidden until two documents are queued: it takes
    no height from the decoding views (their statistics must fit at 1280×800)."""
    view = DocumentQueueView(window.runs, window)
    dock = QDockWidget("Queue", window)
    dock.setObjectName("queue_dock")
    dock.setWidget(view)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    dock.hide()
    view.dock = dock
    window.actions.menus["&View"].addAction(dock.toggleViewAction())
    window.queue_dock = dock
    return view
