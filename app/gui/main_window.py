"""The main window: documents on the left, the page in the middle, Markdown on the right."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListWidget, QMainWindow, QPlainTextEdit, QSplitter


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("Scriptorium")
        self.resize(1400, 900)
        self.setAcceptDrops(True)
        self.documents = QListWidget()
        self.page_view = QLabel("Drop PDFs or images here")
        self.page_view.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.editor = QPlainTextEdit()
        splitter = QSplitter()
        for w in (self.documents, self.page_view, self.editor):
            splitter.addWidget(w)
        splitter.setSizes([200, 700, 500])
        self.setCentralWidget(splitter)
        self.statusBar().showMessage("Ready")

    def open_files(self, paths: list[str]) -> None:
        for p in paths:
            self.documents.addItem(Path(p).name)
