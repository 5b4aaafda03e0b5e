"""A folder setting's editor: the path as text, and Browse… to choose it (Preferences' model folder)."""
from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLineEdit, QPushButton, QWidget


class FolderField(QWidget):
    def __init__(self, value: str, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.line = QLineEdit(value)
        self.line.setPlaceholderText("found automatically")
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self.choose)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.line, 1)
        layout.addWidget(self.browse)

    def choose(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.title, self.line.text())
        if folder:
            self.line.setText(folder)

    def text(self) -> str:
        return self.line.text()
