"""The document queue, as a dock: each open document with its state (queued with its place, running with its
blocks read so far, done, failed, cancelled), the queue's overall progress, and buttons to move a waiting document
earlier or later or take it out of the queue. It redraws from the run controller's state a few times a second
(app.core.review.document_queue holds the rules); it never starts or stops runs itself. The dock opens by itself
when two documents are in the queue, as wide as its rows need, and closes by itself once nothing runs or waits, so
the page gets the room back; a person who opens or closes it (View → Queue) decides from then on.

What must never live here: run state (app.core.review.runs), decoding.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
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
        self.dock: QDockWidget | None = None  # opened by itself while two documents are queued, closed when idle
        self.opened_by_itself = False
        self.chosen_by_person = False
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
        if self.dock is not None and not self.chosen_by_person:
            self._follow(rows)
        finished, total = document_queue.overall(rows)
        self.overall.setRange(0, max(1, total))
        self.overall.setValue(finished)
        self._enable()

    def _follow(self, rows: list[document_queue.DocumentQueueRow]) -> None:
        busy = [r for r in rows if r.state in ("queued", "running")]
        if len(busy) >= 2 and not self.dock.isVisible() and not self.opened_by_itself:
            self.opened_by_itself = True
            self.dock.show()
            self.fit_width()
        elif not busy and self.opened_by_itself:
            self.opened_by_itself = False  # the queue ran dry: the page gets the room back
            self.dock.hide()

    def content_width(self) -> int:
        """The width the rows and buttons need (the dock's frame aside), a third of the window at most."""
        fm = self.list.fontMetrics()
        rows = max((fm.horizontalAdvance(self.list.item(i).text()) for i in range(self.list.count())), default=0)
        buttons = sum(b.sizeHint().width() for b in (self.up, self.down, self.remove)) + 16
        window = self.window().width() if self.window() is not None else 1440
        return min(max(rows + 40, buttons, 200), window // 3)

    def fit_width(self) -> None:
        main = self.dock.parentWidget() if self.dock is not None else None
        if isinstance(main, QMainWindow):
            main.resizeDocks([self.dock], [self.content_width()], Qt.Orientation.Horizontal)

    def person_chose(self, _checked: bool = False) -> None:
        self.chosen_by_person = True

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


def install_document_queue_view(window: QMainWindow, runs, view_menu: QMenu) -> DocumentQueueView:
    """The queue of `runs` as a dock at the window's right (listed in `view_menu`), hidden until two documents are
    queued and again once none runs or waits: it takes no height from the decoding views (their statistics must fit
    at 1280×800) and no width from the page when there is nothing to show. The dock is the view's `dock`."""
    view = DocumentQueueView(runs, window)
    dock = QDockWidget("Queue", window)
    dock.setObjectName("queue_dock")
    dock.setWidget(view)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    dock.hide()
    view.dock = dock
    dock.toggleViewAction().triggered.connect(view.person_chose)
    view_menu.addAction(dock.toggleViewAction())
    return view
